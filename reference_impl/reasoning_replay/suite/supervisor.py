"""The adapter supervisor: the process between the runner and its adapters.

An adapter is any program (``conformance/PROTOCOL.md``), and what it starts may leave its
process group (``setsid``), be orphaned on purpose (a double fork) or ignore SIGTERM; and a
runner that is SIGKILLed runs no cleanup at all. So the runner does not start adapters itself:
it starts this program once per adapter command (:mod:`reasoning_replay.suite.supervised`),
which starts each adapter process and ends everything that process started:

- it is a *child subreaper* (Linux ``PR_SET_CHILD_SUBREAPER``): a process orphaned anywhere
  below it becomes its child, never init's, so it can always find and reap it;
- each adapter gets ``PR_SET_PDEATHSIG`` (SIGKILL): should the supervisor itself be killed,
  the adapter dies with it;
- the runner holds the other end of a socket: when the runner dies, however it dies, the
  socket reads as closed, and the supervisor ends everything and exits.

Ending (on request, when the runner dies, or on SIGTERM, SIGINT or SIGHUP to the supervisor):
SIGTERM to every process below it (its descendants, read from /proc, and the adapter's process
group), then, after the grace period, SIGKILL to every one still there, again and again, until
it has no child left. Below a subreaper that means nothing is left.

Limits, where the system offers less: without a subreaper (not Linux), a process that left the
adapter's process group and whose parent has exited is out of reach, and without /proc only the
adapter's process group is signalled; a process in uninterruptible sleep dies only when it
wakes (it is counted and reported after a bounded wait); and a SIGKILL of the supervisor itself
ends the adapter (its parent-death signal) but not what the adapter started. Processes started
on the adapter's behalf by another service (a daemon it asks over a socket) are not below it.

This file is run by path, ``python -I -S supervisor.py SOCKET_FD GRACE_S``, so it imports
nothing but the standard library. Protocol: JSON lines on the socket. From the runner:
``{"spawn": {"argv": [...], "env": {...}, "cwd": "..."}}`` with the adapter's stdin, stdout and
stderr passed as descriptors (SCM_RIGHTS), answered ``{"started": PID}`` or ``{"failed":
{"errno": N, "message": TEXT}}``; ``{"end": true}``, answered ``{"ended": {"left": N}}`` once
nothing it started runs (N: processes that could not be ended). Unasked: ``{"exited": {"pid":
PID, "status": S}}`` when an adapter exits (S: its exit status, or minus the signal that
killed it). One adapter process runs at a time: ``end`` ends everything below the supervisor.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import select
import signal
import socket
import sys
import time
from collections.abc import Sequence
from typing import Any, Final

PR_SET_PDEATHSIG: Final = 1
PR_SET_CHILD_SUBREAPER: Final = 36
KILL_ROUNDS_S: Final = 5.0  # after the grace period: how long SIGKILLs are repeated
_PROC: Final = "/proc"
_STOP_SIGNALS: Final = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
_LINE_LIMIT: Final = 64 * 1024 * 1024  # an environment and a command line, generously
_MAX_FDS: Final = 3


def _prctl(option: int, value: int) -> bool:
    """``prctl(option, value)``; False where there is no such call (not Linux) or it fails."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def descendants(root: int) -> set[int]:
    """Every process below ``root``, from the parent links in /proc (empty without /proc)."""
    children: dict[int, list[int]] = {}
    try:
        entries = [entry.name for entry in os.scandir(_PROC) if entry.name.isdigit()]
    except OSError:
        return set()
    for name in entries:
        try:
            status = _read(f"{_PROC}/{name}/stat")
        except OSError:
            continue  # it has exited meanwhile
        # pid (comm) state ppid ...; comm may hold spaces and parentheses
        fields = status[status.rfind(b")") + 2 :].split()
        if len(fields) >= 2 and fields[0] not in (b"Z", b"X"):
            children.setdefault(int(fields[1]), []).append(int(name))
    found: set[int] = set()
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def _read(path: str) -> bytes:
    # os.open, not pathlib: this program starts once per adapter command, and pathlib's import
    # would be most of its start-up.
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return os.read(fd, 4096)
    finally:
        os.close(fd)


class Supervisor:
    """The supervisor's state: the socket to the runner, the adapter now running, the wakeups."""

    def __init__(self, channel: socket.socket, grace: float) -> None:
        self.channel = channel
        self.grace = grace
        self.adapter: int | None = None  # not yet reaped: its pid and process group are ours
        self.stopping = False
        self.subreaper = _prctl(PR_SET_CHILD_SUBREAPER, 1)
        self._received = b""
        self._fds: list[int] = []
        self._wake_read, wake_write = os.pipe()
        os.set_blocking(self._wake_read, False)
        os.set_blocking(wake_write, False)
        signal.set_wakeup_fd(wake_write)  # a signal (SIGCHLD included) wakes the poll
        signal.signal(signal.SIGCHLD, lambda signum, frame: None)
        for signum in _STOP_SIGNALS:
            signal.signal(signum, self._stop)
        self._poll = select.poll()
        self._poll.register(channel.fileno(), select.POLLIN)
        self._poll.register(self._wake_read, select.POLLIN)

    def _stop(self, signum: int, frame: object) -> None:
        self.stopping = True

    # --- the loop ------------------------------------------------------------------------------

    def serve(self) -> None:
        """Answer the runner until it closes the socket, dies, or a stop signal comes; then end
        everything that runs below this process."""
        try:
            while not self.stopping:
                self._poll.poll()
                self._drain_wakeups()
                self.reap()
                if self.stopping or not self._receive():
                    break
        except OSError:
            pass  # the socket failed: the runner is gone
        finally:
            self.end_all()

    def _drain_wakeups(self) -> None:
        with contextlib.suppress(BlockingIOError):
            while os.read(self._wake_read, 4096):
                pass

    def _receive(self) -> bool:
        """Read what the runner sent and act on every complete line; False when it is gone."""
        try:
            data, fds, _, _ = socket.recv_fds(self.channel, 1 << 16, _MAX_FDS, socket.MSG_DONTWAIT)
        except BlockingIOError:
            return True
        self._fds += fds
        if not data:
            return False
        self._received += data
        if len(self._received) > _LINE_LIMIT:
            return False  # not a runner speaking this protocol
        while b"\n" in self._received:
            line, _, self._received = self._received.partition(b"\n")
            try:
                request = json.loads(line)
            except ValueError:
                continue
            if isinstance(request, dict) and "spawn" in request:
                self._answer(self._spawn(request["spawn"]))
            elif isinstance(request, dict) and "end" in request:
                self._answer({"ended": {"left": self.end_all()}})
        return True

    def _answer(self, message: dict[str, Any]) -> None:
        self.channel.sendall(json.dumps(message).encode() + b"\n")

    def reap(self) -> bool:
        """Collect every child that has exited, reporting the adapter's exit; whether any child
        is left."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return False
            if pid == 0:
                return True
            if pid == self.adapter:
                self.adapter = None
                exited = {"pid": pid, "status": os.waitstatus_to_exitcode(status)}
                with contextlib.suppress(OSError):  # a gone runner is seen by the loop
                    self._answer({"exited": exited})

    # --- starting an adapter --------------------------------------------------------------------

    def _spawn(self, request: Any) -> dict[str, Any]:
        fds, self._fds = self._fds[:_MAX_FDS], self._fds[_MAX_FDS:]
        try:
            if len(fds) != _MAX_FDS or not isinstance(request, dict):
                return {"failed": {"errno": 0, "message": "a spawn request needs 3 descriptors"}}
            argv = [str(a) for a in request["argv"]]
            env = {str(k): str(v) for k, v in request["env"].items()}
            cwd = request.get("cwd")
            self.adapter = start(argv, env, cwd if isinstance(cwd, str) else None, fds)
            return {"started": self.adapter}
        except OSError as error:
            return {"failed": {"errno": error.errno or 0, "message": error.strerror or str(error)}}
        finally:
            for fd in fds:
                os.close(fd)

    # --- ending everything ----------------------------------------------------------------------

    def end_all(self) -> int:
        """SIGTERM to everything below this process, SIGKILL to what is left after the grace
        period, repeated until no child is left; how many processes could not be ended."""
        start_time = time.monotonic()
        self._signal_all(signal.SIGTERM)
        while self.reap():
            elapsed = time.monotonic() - start_time
            if elapsed >= self.grace + KILL_ROUNDS_S:
                return len(descendants(os.getpid())) or 1
            if elapsed >= self.grace:
                self._signal_all(signal.SIGKILL)
            with contextlib.suppress(InterruptedError):
                select.select([self._wake_read], [], [], 0.02)
            self._drain_wakeups()
        return 0

    def _signal_all(self, signum: int) -> None:
        # A pid read from /proc could be reused between the read and the kill only after its
        # process exited and was reaped, within microseconds: pids are allocated in sequence.
        targets = descendants(os.getpid())
        if self.adapter is not None:
            with contextlib.suppress(OSError):  # the adapter's group: all there is without /proc
                os.killpg(self.adapter, signum)
            targets.add(self.adapter)
        for pid in targets:
            with contextlib.suppress(OSError):
                os.kill(pid, signum)


def start(argv: Sequence[str], env: dict[str, str], cwd: str | None, fds: Sequence[int]) -> int:
    """Start one adapter with ``fds`` as its stdin, stdout and stderr; its pid.

    The child sets its parent-death signal, makes its own session (so its process group is its
    pid), gives back the signals Python ignores, keeps only the three descriptors and execs.
    An exec that fails (or a missing ``cwd``) is raised here as the OSError the child met.
    """
    parent = os.getpid()
    errors_read, errors_write = os.pipe()  # close-on-exec: empty at EOF means exec succeeded
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child runs until exec
        try:
            os.close(errors_read)
            _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            if os.getppid() != parent:  # the supervisor died before that took effect
                os._exit(1)
            os.setsid()
            signal.set_wakeup_fd(-1)
            for signum in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGCHLD, *_STOP_SIGNALS):
                signal.signal(signum, signal.SIG_DFL)
            for target, fd in enumerate(fds):
                os.dup2(fd, target)
            os.closerange(3, errors_write)
            os.closerange(errors_write + 1, os.sysconf("SC_OPEN_MAX"))
            if cwd is not None:
                os.chdir(cwd)
            os.execvpe(argv[0], list(argv), env)
        except BaseException as error:
            code = getattr(error, "errno", None) or 0
            text = getattr(error, "strerror", None) or str(error)
            with contextlib.suppress(OSError):
                os.write(errors_write, json.dumps([code, text]).encode())
        os._exit(127)
    os.close(errors_write)
    with os.fdopen(errors_read, "rb") as errors:
        report = errors.read()
    if report:
        os.waitpid(pid, 0)
        code, text = json.loads(report)
        raise OSError(code, text, argv[0])
    return pid


def main(arguments: Sequence[str]) -> int:
    channel = socket.socket(fileno=int(arguments[0]))
    channel.set_inheritable(False)
    Supervisor(channel, float(arguments[1])).serve()
    return 0


if __name__ == "__main__":  # pragma: no cover - run by the runner as a program
    sys.exit(main(sys.argv[1:]))
