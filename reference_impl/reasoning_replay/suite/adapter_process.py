"""Adapter programs (PROTOCOL.md) as child processes: the persistent and the one-shot modes.

Hostile or broken adapters are the normal case here, so every wait has a deadline, stdout lines
are capped, stderr is drained on every wait (a flood cannot deadlock the pipes) and only its tail
is kept. A crash or hang costs one case: the process is killed, restarted lazily, the handshake
is replayed, and the run continues.

I/O is single-threaded over non-blocking pipes with ``select.poll`` (POSIX): no per-case thread
hand-offs, which keeps a fast persistent adapter above thousands of cases per second.

Adapters are started by a supervisor process (:mod:`reasoning_replay.suite.supervisor`, one
per adapter command), which reaps whatever an adapter starts, even what leaves its process group
or is orphaned on purpose: stop, restart, timeout and the end of the run end the adapter and
everything below it (SIGTERM, then SIGKILL after a grace period), and so does the runner's own
death, SIGKILL included. The adapter's own exit (reported by the supervisor), not the end of its
stdout, is what makes a crash (a child it left behind may hold the pipe open).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import time
from collections import Counter, deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from . import protocol
from .implementation import Exchange
from .protocol import Crash, Failure, ImplementationInfo, ProtocolViolation, ReplyTooLong, Timeout
from .retained import KEEP
from .supervised import SupervisedProcess, SupervisorLink
from .vectors import Case

DEFAULT_TIMEOUT: Final = 5.0
DEFAULT_START_TIMEOUT: Final = 20.0
MAX_LINE: Final = 16 * 1024 * 1024
STDERR_KEEP: Final = 64 * 1024
_CHUNK: Final = 1 << 20
_CASE_STDERR: Final = 16 * 1024
_EXIT_GRACE: Final = 1.0
# consecutive failed restarts after which a persistent adapter is given up on
MAX_FAILED_RESTARTS: Final = 3
# requests in flight to a persistent adapter (see PersistentAdapter.run_batch)
DEFAULT_WINDOW: Final = 32


class StderrTail:
    """The last ``keep`` bytes of a stream, and how many bytes it has seen in total."""

    __slots__ = ("_buf", "_keep", "total")

    def __init__(self, keep: int = STDERR_KEEP) -> None:
        self._buf = bytearray()
        self._keep = keep
        self.total = 0

    def append(self, data: bytes) -> None:
        self.total += len(data)
        self._buf += data
        if len(self._buf) > 2 * self._keep:  # trim in batches: amortised O(1) per byte
            del self._buf[: len(self._buf) - self._keep]

    def since(self, mark: int) -> str:
        """Text logged since ``total`` was ``mark`` (as much of it as is kept)."""
        n = min(self.total - mark, self._keep, len(self._buf))
        if n <= 0:
            return ""
        text = bytes(self._buf[-n:]).decode("utf-8", "replace")
        return text if n == self.total - mark else "[...]\n" + text

    def text(self) -> str:
        return self.since(0)


@dataclass(frozen=True, slots=True)
class _Line:
    data: bytes


class ChildProcess:
    """One running adapter process with non-blocking pipes."""

    def __init__(
        self,
        supervisor: SupervisorLink,
        argv: Sequence[str],
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
    ) -> None:
        if not hasattr(select, "poll"):  # pragma: no cover - Windows
            raise OSError("external adapters need select.poll (POSIX); use WSL on Windows")
        self.proc: SupervisedProcess = supervisor.start_adapter(
            list(argv), dict(env) if env is not None else None, cwd
        )
        self._in: int | None = self.proc.stdin
        self._out = self.proc.stdout
        self._err: int | None = self.proc.stderr
        self._out_open = True
        for fd in (self._in, self._out, self._err):
            os.set_blocking(fd, False)
        self._poll = select.poll()
        self._poll.register(self._out, select.POLLIN)
        self._poll.register(self._err, select.POLLIN)
        # Readable when the supervisor reports the adapter's exit (or is gone): waits wake then.
        self._exit_fd: int | None = supervisor.fileno()
        self._poll.register(self._exit_fd, select.POLLIN)
        self._buf = bytearray()  # stdout bytes not yet taken as lines
        self._send = bytearray()  # stdin bytes not yet written
        self._eof = False
        self.stderr = StderrTail()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def queue(self, data: bytes) -> None:
        """Append bytes to send; they are written while waiting for lines (never blocking)."""
        self._send += data

    def exchange(
        self, request: bytes, deadline: float, *, close_stdin: bool = False
    ) -> _Line | Failure:
        """Write ``request`` and read one line, both before ``deadline`` (time.monotonic)."""
        self.queue(request)
        return self.next_line(deadline, close_stdin=close_stdin)

    def next_line(self, deadline: float, *, close_stdin: bool = False) -> _Line | Failure:
        """The next stdout line, writing queued input meanwhile; a failure at the deadline."""
        while True:
            self._flush_some()
            if close_stdin and not self._send:
                self._close_stdin()
            found = self._take_line()
            if found is not None:
                return found
            if self._eof:
                return self._eof_failure()
            if self.proc.poll() is not None:
                # It exited: what it wrote is in the pipe now; after that, nothing will come
                # from it, even if a child of its holds stdout open.
                self._read_available()
                found = self._take_line()
                return found if found is not None else self._exit_failure()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return Timeout(0.0)  # the caller knows the configured timeout
            fd_in = self._in if self._send else None
            if fd_in is not None:
                self._poll.register(fd_in, select.POLLOUT)
            try:
                events = self._poll.poll(self._wait_ms(remaining))
            finally:
                if fd_in is not None:
                    with contextlib.suppress(KeyError, ValueError):
                        self._poll.unregister(fd_in)
            for fd, _ in events:
                if fd == self._out:
                    self._read_stdout()
                elif fd == self._err:
                    self._read_stderr()

    def _wait_ms(self, remaining: float) -> int:
        return max(1, int(remaining * 1000))

    def _read_available(self) -> None:
        """Read what stdout holds right now, up to one line over the limit (never blocking)."""
        while not self._eof and len(self._buf) <= MAX_LINE:
            before = len(self._buf)
            self._read_stdout()
            if len(self._buf) == before:
                return

    def _flush_some(self) -> None:
        if not self._send or self._in is None:
            return
        try:
            n = os.write(self._in, self._send)
            del self._send[:n]
        except BlockingIOError:
            pass
        except OSError:  # it stopped reading (exited?): its stdout will tell why
            self._send.clear()
            self._close_stdin()

    def _take_line(self) -> _Line | ReplyTooLong | None:
        # Past the limit the line is not read on: the buffer never holds more than the limit
        # plus one read, however long the line is.
        nl = self._buf.find(b"\n", 0, MAX_LINE + 1)
        if nl < 0:
            if len(self._buf) > MAX_LINE:
                return ReplyTooLong(MAX_LINE, bytes(self._buf[:KEEP]))
            if self._eof and self._buf:  # a last line without its newline
                data = bytes(self._buf)
                self._buf.clear()
                return _Line(data)
            return None
        data = bytes(self._buf[:nl])
        del self._buf[: nl + 1]
        return _Line(data[:-1] if data.endswith(b"\r") else data)

    def _read_stdout(self) -> None:
        try:
            chunk = os.read(self._out, _CHUNK)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self._eof = True
            with contextlib.suppress(KeyError, ValueError):
                self._poll.unregister(self._out)
        else:
            self._buf += chunk

    def _read_stderr(self) -> None:
        if self._err is None:
            return
        try:
            chunk = os.read(self._err, _CHUNK)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if chunk:
            self.stderr.append(chunk)
        else:
            with contextlib.suppress(KeyError, ValueError):
                self._poll.unregister(self._err)
            os.close(self._err)
            self._err = None

    def _drain_stderr(self) -> None:
        """Read what is left in the stderr pipe of an exited process (non-blocking)."""
        for _ in range(64):  # bounded: a grandchild could keep the pipe open and busy
            if self._err is None:
                return
            before = self.stderr.total
            self._read_stderr()
            if self.stderr.total == before:
                return

    def _eof_failure(self) -> Crash:
        rc = self.wait(_EXIT_GRACE)
        if rc is None:
            self.kill()
            return Crash("the adapter closed stdout but kept running; it was killed")
        return Crash(describe_exit(rc), rc)

    def _exit_failure(self) -> Crash:
        rc = self.wait(0.0)
        assert rc is not None  # only called once it has exited
        return Crash(describe_exit(rc), rc)

    def drain_until_exit(self, deadline: float, cap: int = MAX_LINE) -> tuple[bytes, int | None]:
        """Read the rest of stdout (at most ``cap`` bytes kept) until EOF or the deadline; then
        the exit status (``None`` when it is still running at the deadline)."""
        while not self._eof and (remaining := deadline - time.monotonic()) > 0:
            if self.proc.poll() is not None:  # a child of its may keep stdout open: not waited for
                self._read_available()
                break
            for fd, _ in self._poll.poll(self._wait_ms(remaining)):
                if fd == self._out:
                    self._read_stdout()
                    if len(self._buf) > cap:
                        del self._buf[cap:]
                elif fd == self._err:
                    self._read_stderr()
        del self._buf[cap:]
        rest = bytes(self._buf)
        self._buf.clear()
        return rest, self.wait(max(0.0, deadline - time.monotonic()))

    def _close_stdin(self) -> None:
        if self._in is not None:
            with contextlib.suppress(OSError):
                os.close(self._in)
            self._in = None

    def send(self, data: bytes) -> None:
        """Best-effort write (used for ``stop``)."""
        if self._in is None:
            return
        with contextlib.suppress(OSError):
            os.write(self._in, data)

    def wait(self, timeout: float) -> int | None:
        """The exit status, draining stderr meanwhile so a chatty child can finish."""
        deadline = time.monotonic() + timeout
        while True:
            rc = self.proc.poll()
            if rc is not None:
                self._drain_stderr()  # what it said last is usually why it exited
                return rc
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            # The supervisor's socket is in the set: its report of the exit wakes this wait.
            for fd, _ in self._poll.poll(self._wait_ms(remaining)):
                if fd == self._err:
                    self._read_stderr()
                elif fd == self._out:
                    self._read_stdout()
                    if len(self._buf) > MAX_LINE:
                        self._buf.clear()

    def kill(self) -> None:
        """End the adapter and everything it started (the supervisor's grace period applies),
        then close the pipes."""
        self.proc.end()
        self._drain_stderr()
        self.close_pipes()

    def close_pipes(self) -> None:
        self._close_stdin()
        if self._out_open:
            self._out_open = False
            with contextlib.suppress(KeyError, ValueError):
                self._poll.unregister(self._out)
            with contextlib.suppress(OSError):
                os.close(self._out)
        if self._err is not None:
            with contextlib.suppress(KeyError, ValueError):
                self._poll.unregister(self._err)
            with contextlib.suppress(OSError):
                os.close(self._err)
            self._err = None
        if self._exit_fd is not None:
            with contextlib.suppress(KeyError, ValueError):
                self._poll.unregister(self._exit_fd)
            self._exit_fd = None  # the supervisor's socket: the link closes it


def describe_exit(rc: int) -> str:
    if rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = f"signal {-rc}"
        return f"the adapter was killed by {name}"
    return f"the adapter exited with status {rc}"


def _with_stderr(failure: Failure, stderr: str) -> Failure:
    """Crash messages get the last stderr line: usually the exception that killed it."""
    if isinstance(failure, Crash):
        last = next((ln for ln in reversed(stderr.splitlines()) if ln.strip()), "")
        if last:
            message = f"{failure.message}; last stderr line: {last.strip()[:300]}"
            return Crash(message, failure.returncode)
    return failure


class _AdapterCommand:
    """What both adapter modes share: the command line, how to start it and how long to wait."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        timeout: float = DEFAULT_TIMEOUT,
        start_timeout: float = DEFAULT_START_TIMEOUT,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
    ) -> None:
        self._argv = tuple(argv)
        self._timeout = timeout
        self._start_timeout = start_timeout
        self._env = env
        self._cwd = cwd
        self._last_stderr = ""
        self._supervisor = SupervisorLink(_EXIT_GRACE)
        self.info: ImplementationInfo | None = None

    @property
    def command(self) -> tuple[str, ...]:
        return self._argv

    def _spawn(self) -> ChildProcess | Crash:
        try:
            return ChildProcess(self._supervisor, self._argv, self._env, self._cwd)
        except OSError as exc:
            return Crash(f"cannot start {self._argv[0]!r}: {exc}")


class PersistentAdapter(_AdapterCommand):
    """One long-lived adapter process speaking the JSON-lines protocol."""

    mode: Final = "persistent"

    def __init__(
        self,
        argv: Sequence[str],
        *,
        timeout: float = DEFAULT_TIMEOUT,
        start_timeout: float = DEFAULT_START_TIMEOUT,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        window: int = DEFAULT_WINDOW,
    ) -> None:
        super().__init__(argv, timeout=timeout, start_timeout=start_timeout, env=env, cwd=cwd)
        self._child: ChildProcess | None = None
        self._failed_restarts = 0
        self._starts = 0
        self._causes: Counter[str] = Counter()
        self._pending_cause = "unknown"  # why the current process was discarded
        self.window = window

    @property
    def restarts(self) -> int:
        return max(0, self._starts - 1)

    @property
    def restart_causes(self) -> Mapping[str, int]:
        return dict(self._causes)

    def stderr_tail(self) -> str:
        return self._child.stderr.text() if self._child is not None else self._last_stderr

    def start(self) -> ImplementationInfo | Failure:
        """Spawn the process and perform the handshake."""
        self._starts += 1
        child = self._spawn()
        if isinstance(child, Crash):
            self._failed_restarts += 1  # a program that cannot be started counts as a failure
            self._pending_cause = f"a start failed ({child.message})"
            return child
        self._child = child
        got = child.exchange(protocol.START_LINE, time.monotonic() + self._start_timeout)
        if isinstance(got, _Line):
            parsed = protocol.parse_start_response(got.data)
            if isinstance(parsed, ImplementationInfo):
                self.info = parsed
                self._failed_restarts = 0
                return parsed
            failure: Failure = ProtocolViolation(f"handshake: {parsed.message}", parsed.desync)
        elif isinstance(got, Timeout):
            failure = Timeout(self._start_timeout)
        else:
            failure = got
        self._discard(f"its handshake failed ({_message(failure)})")
        self._failed_restarts += 1
        return _with_stderr(failure, self._last_stderr)

    def run(self, seq: int, case: Case) -> Exchange:
        return next(iter(self.run_batch([(seq, case)])))

    def run_batch(self, items: Iterable[tuple[int, Case]]) -> Iterator[Exchange]:
        """Exchanges for the items, in order. Up to ``window`` requests are in flight: waiting
        for each reply before sending the next would cap throughput at the pipe's round-trip
        rate. Adapters answer in order, so the oldest unanswered request is the one being
        handled: a crash or hang is blamed on it alone, and the requests sent after it are sent
        again to the restarted process."""
        todo: deque[tuple[int, Case, bytes]] = deque(
            (seq, case, protocol.run_request_line(seq, case)) for seq, case in items
        )
        sent = 0  # todo[:sent] have been queued to the current process
        while todo:
            seq, _, request = todo[0]
            if self._child is None:
                sent = 0
                lost = self._restart()
                if lost is not None:
                    todo.popleft()
                    yield Exchange(lost, request, stderr=self._last_stderr or None)
                    continue
            child = self._child
            assert child is not None
            while sent < len(todo) and sent < self.window:
                child.queue(todo[sent][2])
                sent += 1
            mark = child.stderr.total
            t0 = time.monotonic()
            got = child.next_line(t0 + self._timeout)
            duration = time.monotonic() - t0
            todo.popleft()
            sent -= 1
            yield self._exchange(child, got, seq=seq, request=request, mark=mark, duration=duration)

    def _restart(self) -> Failure | None:
        """Start a process for the next request; the failure to blame on it if that fails."""
        if self._failed_restarts >= MAX_FAILED_RESTARTS:
            return Crash(
                f"the adapter could not be restarted; gave up after {MAX_FAILED_RESTARTS} attempts"
            )
        if self._starts:  # the first start is no restart
            self._causes[self._pending_cause] += 1
        started = self.start()
        if isinstance(started, ImplementationInfo):
            return None
        return Crash(f"restarting the adapter failed: {_message(started)}")

    def _exchange(
        self,
        child: ChildProcess,
        got: _Line | Failure,
        *,
        seq: int,
        request: bytes,
        mark: int,
        duration: float,
    ) -> Exchange:
        if isinstance(got, _Line):
            reply = protocol.parse_run_response(got.data, seq)
            if not isinstance(reply, ProtocolViolation):
                return Exchange(reply, request, got.data, duration_s=duration)
            stderr = child.stderr.since(mark)
            if reply.desync:
                self._discard("a line that broke the protocol's line stream (not JSON, wrong seq)")
            return Exchange(reply, request, got.data, stderr or None, duration)
        lost: Failure = Timeout(self._timeout) if isinstance(got, Timeout) else got
        self._discard(restart_cause(lost))
        # The whole recent tail, not just what arrived while this case was the oldest: with
        # requests in flight, the adapter may have logged its last words a moment earlier.
        stderr = self._last_stderr[-_CASE_STDERR:]
        head = got.head if isinstance(got, ReplyTooLong) else None
        return Exchange(_with_stderr(lost, stderr), request, head, stderr or None, duration)

    def _discard(self, cause: str) -> None:
        """Kill the current process; the next run() starts a fresh one, for ``cause``."""
        self._pending_cause = cause
        if self._child is not None:
            self._child.kill()
            self._last_stderr = self._child.stderr.text()
            self._child = None

    def close(self) -> None:
        child = self._child
        if child is not None:
            child.send(protocol.STOP_LINE)
            child._close_stdin()
            child.wait(_EXIT_GRACE)
            child.kill()  # whatever it left running, or itself if it did not exit
            self._last_stderr = child.stderr.text()
            self._child = None
        self._supervisor.close()  # the supervisor exits; its next start() makes another


def _message(failure: Failure) -> str:
    if isinstance(failure, Timeout):
        return f"no handshake reply within {failure.seconds:g} s"
    return failure.message


def restart_cause(failure: Failure) -> str:
    """Why a failure made the runner restart the adapter, as a restart's cause is reported:
    the kind of failure and its general reason, never one case's details (so causes group)."""
    if isinstance(failure, Timeout):
        return f"a timeout (no reply within {failure.seconds:g} s)"
    if isinstance(failure, Crash):
        return f"a crash ({failure.message})"
    if isinstance(failure, ReplyTooLong):
        return f"a reply over {failure.limit} bytes"
    return "a line that broke the protocol's line stream (not JSON, wrong seq)"


class OneShotAdapter(_AdapterCommand):
    """One process per request: the request line on stdin, then EOF; one line back; exit 0."""

    mode: Final = "oneshot"

    @property
    def restarts(self) -> int:
        return 0  # every case has its own process by design

    @property
    def restart_causes(self) -> Mapping[str, int]:
        return {}

    def stderr_tail(self) -> str:
        return self._last_stderr

    def start(self) -> ImplementationInfo | Failure:
        got, _, _ = self._once(protocol.START_LINE, self._start_timeout)
        if isinstance(got, _Line):
            parsed = protocol.parse_start_response(got.data)
            if isinstance(parsed, ImplementationInfo):
                self.info = parsed
            return parsed
        return got

    def run(self, seq: int, case: Case) -> Exchange:
        request = protocol.run_request_line(seq, case)
        t0 = time.monotonic()
        got, stderr, _ = self._once(request, self._timeout)
        duration = time.monotonic() - t0
        if isinstance(got, _Line):
            reply = protocol.parse_run_response(got.data, seq)
            return Exchange(reply, request, got.data, stderr or None, duration)
        head = got.head if isinstance(got, ReplyTooLong) else None
        return Exchange(got, request, head, stderr or None, duration)

    def run_batch(self, items: Iterable[tuple[int, Case]]) -> Iterator[Exchange]:
        for seq, case in items:
            yield self.run(seq, case)

    def _once(self, request: bytes, timeout: float) -> tuple[_Line | Failure, str, int | None]:
        child = self._spawn()
        if isinstance(child, Crash):
            return child, "", None
        deadline = time.monotonic() + timeout
        try:
            got = child.exchange(request, deadline, close_stdin=True)
            if isinstance(got, Timeout):
                child.kill()
                return Timeout(timeout), child.stderr.text(), None
            if not isinstance(got, _Line):
                child.kill()
                stderr = child.stderr.text()
                return _with_stderr(got, stderr), stderr, None
            rest, rc = child.drain_until_exit(deadline)
            stderr = child.stderr.text()
            if rc is None:
                child.kill()
                return Timeout(timeout), stderr, None
            if rc != 0:
                return _with_stderr(Crash(describe_exit(rc), rc), stderr), stderr, rc
            if rest.strip():
                return (
                    ProtocolViolation(
                        "a one-shot adapter must write exactly one line; "
                        f"it wrote more: {rest[:200]!r}"
                    ),
                    stderr,
                    rc,
                )
            return got, stderr, rc
        finally:
            child.kill()
            self._last_stderr = child.stderr.text()

    def close(self) -> None:
        self._supervisor.close()
