"""The runner's end of the adapter supervisor (:mod:`reasoning_replay.suite.supervisor`).

An adapter command (:mod:`reasoning_replay.suite.adapter_process`) owns one
:class:`SupervisorLink`: the supervisor program is started on the first adapter process and
asked to start each one; the runner reads and writes the adapter's pipes itself, learns of its
exit from the supervisor, and asks the supervisor to end it and everything it started. Closing
the link (or the runner's death, however it dies) makes the supervisor end everything and exit.

Waits have deadlines; a supervisor that stops answering is killed, and its adapters die with it
(their parent-death signal). POSIX only, like the adapter processes.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Final

PROGRAM: Final = Path(__file__).with_name("supervisor.py")
ANSWER_TIMEOUT: Final = 20.0  # starting an adapter, or the supervisor itself
# Beyond the grace period, how long the supervisor may take to end everything: its own limit
# (supervisor.KILL_ROUNDS_S, 5 s of SIGKILLs for a process in uninterruptible sleep) and more.
_MARGIN: Final = 10.0
_CHUNK: Final = 1 << 16


class SupervisorLink:
    """One supervisor process, started when first needed and again after :meth:`close`."""

    def __init__(self, grace: float) -> None:
        self.grace = grace
        self._process: subprocess.Popen[bytes] | None = None
        self._channel: socket.socket | None = None
        self._received = b""
        self._replies: list[dict[str, Any]] = []
        self._exits: dict[int, int] = {}
        self._lost = False

    def fileno(self) -> int:
        """Readable when the supervisor has something to say (an adapter's exit) or is gone."""
        if self._channel is None:
            raise ValueError("the supervisor is not running")
        return self._channel.fileno()

    def start_adapter(
        self, argv: list[str], env: dict[str, str] | None, cwd: str | None
    ) -> SupervisedProcess:
        """Start ``argv`` under the supervisor with three new pipes; raises OSError when it
        cannot be started (the error the exec met: a missing program, a missing ``cwd``)."""
        if self._lost:
            self.close()
        if self._channel is None:
            self._start()
        assert self._channel is not None
        stdin_read, stdin_write = os.pipe()
        stdout_read, stdout_write = os.pipe()
        stderr_read, stderr_write = os.pipe()
        theirs = (stdin_read, stdout_write, stderr_write)
        ours = (stdin_write, stdout_read, stderr_read)
        # The environment and working directory of the moment, as Popen would take them.
        if cwd is None:
            with contextlib.suppress(OSError):
                cwd = str(Path.cwd())
        request = {"argv": argv, "env": dict(os.environ if env is None else env), "cwd": cwd}
        try:
            line = json.dumps({"spawn": request}).encode() + b"\n"
            sent = socket.send_fds(self._channel, [line], list(theirs))
            self._channel.sendall(line[sent:])  # the descriptors went with the first bytes
        except BaseException:
            for fd in (*theirs, *ours):
                os.close(fd)
            raise
        for fd in theirs:
            os.close(fd)
        try:
            reply = self._reply(ANSWER_TIMEOUT)
            if "started" not in reply:
                failed = reply.get("failed", {})
                code = failed.get("errno", 0) if isinstance(failed, dict) else 0
                text = failed.get("message", str(reply)) if isinstance(failed, dict) else ""
                raise OSError(code, text, argv[0] if argv else "")
            return SupervisedProcess(self, int(reply["started"]), *ours)
        except BaseException:
            for fd in ours:
                os.close(fd)
            raise

    def _start(self) -> None:
        if not sys.executable:
            raise OSError(0, "no Python interpreter to run the adapter supervisor")
        ours, theirs = socket.socketpair()
        # The link holds its end before the supervisor exists: whatever interrupts what follows
        # (a signal included), close() finds the socket and the process to end.
        self._channel = ours
        self._lost = False
        self._received = b""
        self._replies.clear()
        try:
            command = [sys.executable, "-I", "-S", str(PROGRAM), str(theirs.fileno())]
            self._process = subprocess.Popen(
                [*command, repr(self.grace)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                pass_fds=(theirs.fileno(),),
                # Its own session: a Ctrl-C or a signal to the runner's process group does not
                # reach it; it sees the runner go through the socket and ends the adapters.
                start_new_session=True,
            )
        except BaseException:
            self._channel = None
            ours.close()
            raise
        finally:
            theirs.close()

    def exit_status(self, pid: int) -> int | None:
        """The adapter's exit status once the supervisor has reported it (never blocks; each
        status is handed out once)."""
        self._pump(0.0)
        if pid in self._exits:
            return self._exits.pop(pid)
        # A lost supervisor's adapters were killed by their parent-death signal.
        return -signal.SIGKILL if self._lost else None

    def end(self, pid: int) -> None:
        """End the adapter ``pid`` and everything it started (SIGTERM, SIGKILL after the grace
        period); returns once they are gone, or kills a supervisor that does not answer."""
        if self._channel is None or self._lost:
            return
        try:
            self._channel.sendall(b'{"end": true}\n')
            self._reply(self.grace + _MARGIN, want="ended")
        except (OSError, TimeoutError):
            self._abandon()

    def close(self) -> None:
        """End every adapter and the supervisor itself (closing the socket says so)."""
        channel, self._channel = self._channel, None
        process, self._process = self._process, None
        if channel is not None:
            channel.close()
        if process is not None:
            try:
                process.wait(timeout=self.grace + _MARGIN)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self._exits.clear()
        self._lost = False

    def _abandon(self) -> None:
        """A supervisor that stopped answering: kill it (its adapters die with it)."""
        self._lost = True
        if self._process is not None:
            with contextlib.suppress(OSError):
                self._process.kill()

    def _reply(self, timeout: float, want: str | None = None) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            while self._replies:
                reply = self._replies.pop(0)
                if want is None or want in reply:
                    return reply
            if self._lost:
                raise OSError(0, "the adapter supervisor ended unexpectedly")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("the adapter supervisor did not answer")
            self._pump(remaining)

    def _pump(self, timeout: float) -> None:
        """Read what the supervisor sent (waiting up to ``timeout`` for something)."""
        if self._channel is None or self._lost:
            return
        if timeout > 0 and not select.select([self._channel], [], [], timeout)[0]:
            return
        try:
            data = self._channel.recv(_CHUNK, socket.MSG_DONTWAIT)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._lost = True
            return
        self._received += data
        while b"\n" in self._received:
            line, _, self._received = self._received.partition(b"\n")
            try:
                message = json.loads(line)
            except ValueError:
                continue  # never happens with this supervisor; a torn line is skipped
            if not isinstance(message, dict):
                continue
            exited = message.get("exited")
            if isinstance(exited, dict):
                self._exits[int(exited["pid"])] = int(exited["status"])
            else:
                self._replies.append(message)


class SupervisedProcess:
    """One adapter process: its pid, the runner's ends of its pipes, and its exit status."""

    def __init__(
        self, link: SupervisorLink, pid: int, stdin: int, stdout: int, stderr: int
    ) -> None:
        self.link = link
        self.pid = pid
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr
        self.returncode: int | None = None

    def poll(self) -> int | None:
        """Its exit status (minus the signal that killed it), None while it runs."""
        if self.returncode is None:
            self.returncode = self.link.exit_status(self.pid)
        return self.returncode

    def end(self) -> None:
        """End it and everything it started; returns once they are gone."""
        self.link.end(self.pid)  # also when it has exited: what it started may still run
        if self.poll() is None:  # the supervisor reports an exit before answering an end
            self.returncode = -signal.SIGKILL
