"""Kill test of atomic history writes (SPEC H5): SIGKILL a writer at random moments.

Usage::

    python tools/kill_test.py [--trials 200] [--size-kb 512] [--seed N] [--max-delay-ms MS]
                              [--writer atomic|atomic-named|in-place] [--quiet]

Three history files (SPEC H1: a JSON object with a ``messages`` array) of about ``--size-kb``
KiB are generated from ``random.Random(seed)``: different complete documents A, B and C, each
with its label and the SHA-256 of its ``messages`` embedded. The target starts as A, written
with ``write_private_atomic`` into a session directory made by ``make_session_directory``.

One helper process (started once, so that a trial costs no interpreter start-up) forks a writer
for each trial. The writer rewrites the target with ``write_private_atomic`` in a loop, cycling
through the versions from the one after the target's (A → B → C → A …), and prints a line after
each write returns. Once the writer says it is ready, the parent sleeps a random delay (uniform
in ``[0, --max-delay-ms]``; by default four times the duration of one write, measured first, so
the kill lands at any point of a few write cycles), has the helper send it SIGKILL, and checks:

- the target exists, has mode 0600, and is byte-for-byte one complete version, which parses
  as JSON and whose embedded checksum matches;
- it is the version the writer's progress allows: with ``k`` writes reported, either the
  content before the write in flight (**old**) or the one that write was writing (**new**: the
  writer died after the rename but before reporting it); anything else, including the third
  complete version (a write lost or reordered), is **corrupt**;
- every other entry of the directory is a temporary file of the target
  (``atomic_files.temporary_files_for``), private, and matching no history file name of SPEC H1
  (``history_*.json``, ``compacted_*.json``, ``session.json``), so no loader can mistake it
  for the target. They are counted (**left by a killed writer**) and left where they are: the
  next write of the target must remove them (SPEC H5: no temporary file outlives its writer),
  which the next trial checks once its writer has completed a write, and a last write after
  the trials checks for the last one (**after the next write**, which must be 0).

It prints one line per trial and a summary such as
``200 trials: 200 intact (old: N, new: M), 0 corrupt; temp files left by a killed writer: K,
after the next write: 0``, and exits 1 on any corrupt trial, wrong mode, stray file, temporary
file not removed by the next write, or writer failure.

``--writer atomic`` is the subject: on Linux its temporary file has no name until it is
complete (``O_TMPFILE``), so a kill leaves one only between its link and its rename.
``--writer atomic-named`` is the same writer made to take the path of systems without
``O_TMPFILE`` (a named temporary file from the start): most kills then leave one, and the next
write must remove every one. ``--writer in-place`` is the negative control: the writer truncates
and rewrites the target in place, 4 KiB per ``write`` with a 0.5 ms pause between writes (a slow
naive tool, so that most kills land mid-write); the test must then report corrupt trials.

A SIGKILL tests atomicity against a crashed process: the page cache survives it. What the
fsyncs add against power loss cannot be observed from a test like this one.
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import os
import random
import selectors
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Final

from reasoning_replay import atomic_files
from reasoning_replay.atomic_files import temporary_files_for
from reasoning_replay.history.persistence import (
    is_private_file,
    make_session_directory,
    write_private_atomic,
)

TARGET_NAME: Final = "history_agent.json"
HISTORY_NAME_PATTERNS: Final = ("history_*.json", "compacted_*.json", "session.json")  # SPEC H1
READY: Final = "ready"
KILLED: Final = "killed"
LINE_TIMEOUT_S: Final = 10.0
MAX_AUTO_DELAY_S: Final = 0.6
TEXT_CHUNK: Final = 4096
IN_PLACE_PAUSE_S: Final = 0.0005


class Writer(StrEnum):
    ATOMIC = "atomic"  # write_private_atomic, the subject
    ATOMIC_NAMED = "atomic-named"  # the same, as where O_TMPFILE is missing: named temp files
    IN_PLACE = "in-place"  # the negative control: shows the test can see a torn write


class Outcome(StrEnum):
    OLD = "old"
    NEW = "new"
    CORRUPT = "corrupt"


@dataclass(frozen=True, slots=True)
class Trial:
    """What one trial saw after the kill."""

    index: int
    delay_ms: float
    writes_completed: int
    outcome: Outcome
    mode: int | None
    left_by_kill: int  # temporary files the killed writer left
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems

    def line(self) -> str:
        mode = "missing" if self.mode is None else f"{self.mode:04o}"
        text = (
            f"trial {self.index:4d}: delay {self.delay_ms:7.2f} ms, writes completed "
            f"{self.writes_completed:3d}, target {self.outcome.value:7s} mode {mode}, "
            f"temp files left {self.left_by_kill}"
        )
        return text + "".join(f"; PROBLEM: {p}" for p in self.problems)


@dataclass(frozen=True, slots=True)
class Summary:
    trials: tuple[Trial, ...]
    size_bytes: tuple[int, ...]
    write_ms: float
    max_delay_ms: float
    left_after_next_write: int  # temporary files still there after one more write
    problems: tuple[str, ...] = ()  # the helper's own failures

    def count(self, outcome: Outcome) -> int:
        return sum(1 for t in self.trials if t.outcome is outcome)

    @property
    def left_by_kills(self) -> int:
        return sum(t.left_by_kill for t in self.trials)

    @property
    def ok(self) -> bool:
        return (
            all(t.ok for t in self.trials) and self.left_after_next_write == 0 and not self.problems
        )

    def line(self) -> str:
        old, new = self.count(Outcome.OLD), self.count(Outcome.NEW)
        failed = sum(1 for t in self.trials if not t.ok)
        text = (
            f"{len(self.trials)} trials: {old + new} intact (old: {old}, new: {new}), "
            f"{self.count(Outcome.CORRUPT)} corrupt; temp files left by a killed writer: "
            f"{self.left_by_kills}, after the next write: {self.left_after_next_write}"
        )
        if failed or self.problems:
            text += f"; FAILED trials: {failed}" + "".join(f"; {p}" for p in self.problems)
        return text


def _checksum(messages: object) -> str:
    canonical = json.dumps(messages, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def make_version(label: str, size_bytes: int, rng: random.Random) -> bytes:
    """A history file (SPEC H1) of at least ``size_bytes`` with its label and checksum inside."""
    messages: list[dict[str, Any]] = []
    total = 0
    while total < size_bytes:
        role = "user" if len(messages) % 2 == 0 else "assistant"
        text = rng.randbytes(TEXT_CHUNK // 2).hex()
        messages.append({"role": role, "content": [{"type": "text", "text": text}]})
        total += TEXT_CHUNK + 60
    document = {"messages": messages, "kill_test": {"label": label, "sha256": _checksum(messages)}}
    return json.dumps(document, indent=1).encode()


def intact_label(data: bytes) -> str | None:
    """The label of a complete, self-consistent version, or None for anything else."""
    try:
        document = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(document, dict) or not isinstance(document.get("messages"), list):
        return None
    marker = document.get("kill_test")
    if not isinstance(marker, dict) or marker.get("sha256") != _checksum(document["messages"]):
        return None
    label = marker.get("label")
    return label if isinstance(label, str) else None


def _write_in_place(target: Path, data: bytes) -> None:
    fd = os.open(target, os.O_WRONLY | os.O_TRUNC)
    try:
        for offset in range(0, len(data), TEXT_CHUNK):
            os.write(fd, data[offset : offset + TEXT_CHUNK])
            time.sleep(IN_PLACE_PAUSE_S)
        os.fsync(fd)
    finally:
        os.close(fd)


def _no_unnamed_file(directory: Path, mode: int) -> int | None:
    return None  # as on a system or filesystem without O_TMPFILE


# --- the helper process: forks one writer per trial -------------------------------------------


def _say(line: str) -> None:
    os.write(1, (line + "\n").encode())  # unbuffered: nothing is held back when a writer dies


def _writer(write: Callable[[Path, bytes], None], target: Path, cycle: Sequence[bytes]) -> None:
    """A forked writer: rewrite ``target`` with each of ``cycle`` in turn until killed."""
    try:
        _say(READY)
        written = 0
        while True:
            write(target, cycle[written % len(cycle)])
            written += 1
            _say(str(written))
    except BaseException as error:  # reported, then the writer waits to be killed
        _say(f"error {error!r}")
    while True:  # only the helper ends a writer: its pid stays ours until it is reaped
        time.sleep(3600)


def _helper(writer: Writer, target: Path, paths: Sequence[Path]) -> int:
    """Commands on stdin: ``go I J K`` forks a writer of versions I, J, K (indexes of
    ``paths``); ``kill`` SIGKILLs it, reaps it and answers ``killed STATUS``."""
    versions = tuple(path.read_bytes() for path in paths)
    if writer is Writer.ATOMIC_NAMED:
        atomic_files._create_unnamed = _no_unnamed_file
    write = _write_in_place if writer is Writer.IN_PLACE else write_private_atomic
    child: int | None = None
    _say(READY)
    for line in sys.stdin.buffer:
        command, *arguments = line.decode().split()
        if command == "go" and child is None:
            cycle = [versions[int(a)] for a in arguments]
            child = os.fork()
            if child == 0:
                _writer(write, target, cycle)
        elif command == "kill" and child is not None:
            os.kill(child, signal.SIGKILL)
            _, status = os.waitpid(child, 0)
            child = None
            _say(f"{KILLED} {os.waitstatus_to_exitcode(status)}")
    return 0


class _Helper:
    """The parent's end of the helper process: commands in, lines out, each with a deadline."""

    def __init__(self, writer: Writer, target: Path, paths: Sequence[Path]) -> None:
        command = [sys.executable, str(Path(__file__).resolve()), "--helper", writer.value]
        command += [str(target), *map(str, paths)]
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        assert self.process.stdout is not None and self.process.stdin is not None
        self._stdin = self.process.stdin
        self._fd = self.process.stdout.fileno()
        self._buffer = b""
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._fd, selectors.EVENT_READ)

    def send(self, line: str) -> None:
        self._stdin.write((line + "\n").encode())
        self._stdin.flush()

    def line(self) -> str | None:
        """The next line, or None at end of output or after ``LINE_TIMEOUT_S``.

        Raw reads from the descriptor, never a buffered ``readline`` that could hold back lines.
        """
        deadline = time.monotonic() + LINE_TIMEOUT_S
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self._selector.select(remaining):
                return None
            chunk = os.read(self._fd, 65536)
            if not chunk:
                return None
            self._buffer += chunk
        first, _, self._buffer = self._buffer.partition(b"\n")
        return first.decode(errors="replace").strip()

    def close(self) -> str:
        """End the helper (its stdin closed); what it wrote on stderr."""
        self._selector.close()
        try:
            _, stderr = self.process.communicate(input=None, timeout=LINE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, stderr = self.process.communicate()
        return stderr.decode(errors="replace").strip()


# --- the parent -------------------------------------------------------------------------------


def _measure_write_s(directory: Path, data: bytes, runs: int = 5) -> float:
    scratch = directory / "calibration.json"
    start = time.perf_counter()
    for _ in range(runs):
        write_private_atomic(scratch, data)
    elapsed = (time.perf_counter() - start) / runs
    scratch.unlink()
    return elapsed


def _check_directory(target: Path) -> tuple[set[Path], list[str]]:
    """The target's temporary files, left where they are; anything else unexpected."""
    problems: list[str] = []
    temporaries = set(temporary_files_for(target))
    for entry in sorted(target.parent.iterdir()):
        if entry == target:
            continue
        if entry not in temporaries:
            problems.append(f"stray entry {entry.name}")
            continue
        if any(fnmatch.fnmatchcase(entry.name, p) for p in HISTORY_NAME_PATTERNS):
            problems.append(f"temporary file {entry.name} looks like a history file")
        mode = entry.lstat().st_mode
        if not stat.S_ISREG(mode) or not is_private_file(mode):
            problems.append(f"temporary file {entry.name} has mode {stat.S_IMODE(mode):04o}")
    return temporaries, problems


def _kill_one(helper: _Helper, order: Sequence[int], delay_s: float) -> tuple[int, list[str]]:
    """Fork a writer of ``order``, kill it after ``delay_s``: the writes it reported."""
    problems: list[str] = []
    helper.send("go " + " ".join(map(str, order)))
    line = helper.line()
    if line != READY:
        problems.append(f"writer not ready: {line!r}")
    time.sleep(delay_s)
    helper.send("kill")
    completed = 0
    while (line := helper.line()) is not None and not line.startswith(KILLED):
        if line.isdigit():
            completed += 1
        else:
            problems.append(f"writer said {line!r}")
    status = None if line is None else line.removeprefix(KILLED).strip()
    if status != str(-signal.SIGKILL):
        problems.append(f"writer ended with status {status}")
    return completed, problems


def _trial(
    index: int,
    target: Path,
    versions: Sequence[bytes],
    helper: _Helper,
    *,
    max_delay_s: float,
    rng: random.Random,
) -> Trial:
    count = len(versions)
    start = versions.index(target.read_bytes())
    # The writer writes start+1, start+2, ... (cyclically): after k writes the target holds
    # versions[(start + k) % count].
    order = [(start + j) % count for j in range(1, count + 1)]
    delay_s = rng.uniform(0.0, max_delay_s)
    before = set(temporary_files_for(target))
    completed, problems = _kill_one(helper, order, delay_s)

    after, directory_problems = _check_directory(target)
    problems += directory_problems
    if completed >= 1:  # a write completed, so its sweep ran: no earlier leftover remains
        problems += [f"{p.name} not removed by the next write" for p in sorted(before & after)]
    try:
        data = target.read_bytes()
        mode: int | None = stat.S_IMODE(target.lstat().st_mode)
    except FileNotFoundError:
        data, mode = b"", None
    if mode != 0o600:
        problems.append("target missing" if mode is None else f"target mode {mode:04o}")

    if data == versions[(start + completed) % count] and intact_label(data) is not None:
        outcome = Outcome.OLD
    elif data == versions[(start + completed + 1) % count] and intact_label(data) is not None:
        # Only the write in flight may have landed unreported.
        outcome = Outcome.NEW
    else:
        outcome = Outcome.CORRUPT
        label = intact_label(data)
        problems.append(
            f"target is {len(data)} bytes, "
            + ("not a complete version" if label is None else f"version {label} out of order")
        )
    return Trial(
        index, delay_s * 1000, completed, outcome, mode, len(after - before), tuple(problems)
    )


def run_kill_test(
    trials: int,
    size_kb: int,
    seed: int,
    *,
    max_delay_ms: float | None = None,
    writer: Writer = Writer.ATOMIC,
    workdir: Path | None = None,
    report: Callable[[str], None] = print,
) -> Summary:
    """Run the kill test in a fresh directory under ``workdir`` (default: the system's temp)."""
    rng = random.Random(seed)
    root = Path(tempfile.mkdtemp(prefix="kill_test_", dir=workdir))
    try:
        session = root / "sessions" / "session-1"
        make_session_directory(session)
        labels = ("A", "B", "C")
        versions = tuple(make_version(label, size_kb * 1024, rng) for label in labels)
        assert tuple(intact_label(v) for v in versions) == labels
        store = root / "versions"
        store.mkdir(mode=0o700)
        paths = tuple(store / f"{label}.json" for label in labels)
        for path, data in zip(paths, versions, strict=True):
            write_private_atomic(path, data)

        write_s = _measure_write_s(store, versions[0])
        max_delay_s = (
            min(MAX_AUTO_DELAY_S, 4 * write_s) if max_delay_ms is None else max_delay_ms / 1000
        )
        report(
            f"versions: {', '.join(str(len(v)) for v in versions)} bytes; one write "
            f"{write_s * 1000:.2f} ms; kill delay uniform in [0, {max_delay_s * 1000:.2f}] ms"
        )

        target = session / TARGET_NAME
        write_private_atomic(target, versions[0])
        results: list[Trial] = []
        helper = _Helper(writer, target, paths)
        problems: list[str] = []
        try:
            if helper.line() != READY:
                problems.append("the helper did not start")
            else:
                for index in range(1, trials + 1):
                    trial = _trial(
                        index, target, versions, helper, max_delay_s=max_delay_s, rng=rng
                    )
                    results.append(trial)
                    report(trial.line())
                    if trial.outcome is Outcome.CORRUPT:
                        write_private_atomic(target, versions[0])  # a known start
        finally:
            stderr = helper.close()
        if stderr:
            problems.append("helper stderr: " + stderr.splitlines()[-1])
        if target.exists():
            write_private_atomic(target, target.read_bytes())  # the write after the last kill
        return Summary(
            tuple(results),
            tuple(len(v) for v in versions),
            write_s * 1000,
            max_delay_s * 1000,
            len(temporary_files_for(target)),
            tuple(problems),
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["--helper"]:
        return _helper(Writer(arguments[1]), Path(arguments[2]), [Path(a) for a in arguments[3:]])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--size-kb", type=int, default=512)
    parser.add_argument("--seed", type=int, default=20251129)
    parser.add_argument(
        "--max-delay-ms", type=float, default=None, help="default: 4 × one write's duration"
    )
    parser.add_argument(
        "--writer",
        type=Writer,
        choices=list(Writer),
        default=Writer.ATOMIC,
        help="atomic-named: named temporary files, as without O_TMPFILE; "
        "in-place: the negative control, a non-atomic writer the test must catch",
    )
    parser.add_argument("--quiet", action="store_true", help="print only the summary")
    options = parser.parse_args(arguments)
    if options.trials < 1 or options.size_kb < 1:
        parser.error("--trials and --size-kb must be at least 1")
    started = time.perf_counter()

    def report(line: str) -> None:
        if not options.quiet:
            print(line, flush=True)

    summary = run_kill_test(
        options.trials,
        options.size_kb,
        options.seed,
        max_delay_ms=options.max_delay_ms,
        writer=options.writer,
        report=report,
    )
    elapsed = time.perf_counter() - started
    print(f"{summary.line()} ({elapsed:.1f} s)")
    return 0 if summary.ok else 1


if __name__ == "__main__":
    sys.exit(main())
