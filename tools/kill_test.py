"""Kill test of atomic history writes (SPEC H5): SIGKILL a writer at random moments.

Usage::

    python tools/kill_test.py [--trials 200] [--size-kb 512] [--seed N] [--max-delay-ms MS]
                              [--writer atomic|in-place] [--quiet]

Three history files (SPEC H1: a JSON object with a ``messages`` array) of about ``--size-kb``
KiB are generated from ``random.Random(seed)``: different complete documents A, B and C, each
with its label and the SHA-256 of its ``messages`` embedded. The target starts as A, written
with ``write_private_atomic`` into a session directory made by ``make_session_directory``.

Each trial starts a child Python process that rewrites the target with
``write_private_atomic`` in a loop, cycling through the versions from the one after the
target's (A → B → C → A …), and prints a line after each write returns. Once the child says it
is ready, the parent sleeps a random delay (uniform in ``[0, --max-delay-ms]``; by default four
times the duration of one write, measured first, so the kill lands at any point of a few write
cycles), sends SIGKILL, and checks:

- the target exists, has mode 0600, and is byte-for-byte one complete version, which parses
  as JSON and whose embedded checksum matches;
- it is the version the child's progress allows: with ``k`` writes reported, either the
  content before the write in flight (**old**) or the one that write was writing (**new**: the
  child died after the rename but before reporting it); anything else, including the third
  complete version (a write lost or reordered), is **corrupt**;
- every other entry of the directory is a temporary file of the target
  (``persistence.temporary_files_for``), private, and matching no history file name of SPEC H1
  (``history_*.json``, ``compacted_*.json``, ``session.json``), so no loader can mistake it
  for the target. Such leftovers are counted and removed, as a cleaner would.

It prints one line per trial and a summary such as
``200 trials: 200 intact (old: N, new: M), 0 corrupt; leftover temp files: K``, and exits 1 on
any corrupt trial, wrong mode, stray file or child failure. Each trial takes the child's
start-up (about 0.2 s) plus the delay.

``--writer in-place`` is the negative control: the child truncates and rewrites the target in
place, 4 KiB per ``write`` with a 0.5 ms pause between writes (a slow naive tool, so that most
kills land mid-write); the test must then report corrupt trials.

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

from reasoning_replay.history.persistence import (
    is_private_file,
    make_session_directory,
    temporary_files_for,
    write_private_atomic,
)

TARGET_NAME: Final = "history_agent.json"
HISTORY_NAME_PATTERNS: Final = ("history_*.json", "compacted_*.json", "session.json")  # SPEC H1
READY: Final = "ready"
READY_TIMEOUT_S: Final = 10.0
MAX_AUTO_DELAY_S: Final = 0.6  # keeps a trial within about a second with the child's start-up
TEXT_CHUNK: Final = 4096
IN_PLACE_PAUSE_S: Final = 0.0005


class Writer(StrEnum):
    ATOMIC = "atomic"  # write_private_atomic, the subject
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
    leftover_temp_files: int
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems

    def line(self) -> str:
        mode = "missing" if self.mode is None else f"{self.mode:04o}"
        text = (
            f"trial {self.index:4d}: delay {self.delay_ms:7.2f} ms, writes completed "
            f"{self.writes_completed:3d}, target {self.outcome.value:7s} mode {mode}, "
            f"leftover temp {self.leftover_temp_files}"
        )
        return text + "".join(f"; PROBLEM: {p}" for p in self.problems)


@dataclass(frozen=True, slots=True)
class Summary:
    trials: tuple[Trial, ...]
    size_bytes: tuple[int, ...]
    write_ms: float
    max_delay_ms: float

    def count(self, outcome: Outcome) -> int:
        return sum(1 for t in self.trials if t.outcome is outcome)

    @property
    def leftover_temp_files(self) -> int:
        return sum(t.leftover_temp_files for t in self.trials)

    @property
    def ok(self) -> bool:
        return all(t.ok for t in self.trials)

    def line(self) -> str:
        old, new = self.count(Outcome.OLD), self.count(Outcome.NEW)
        failed = sum(1 for t in self.trials if not t.ok)
        text = (
            f"{len(self.trials)} trials: {old + new} intact (old: {old}, new: {new}), "
            f"{self.count(Outcome.CORRUPT)} corrupt; "
            f"leftover temp files: {self.leftover_temp_files}"
        )
        return text if failed == 0 else f"{text}; FAILED trials: {failed}"


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


def _child(writer: Writer, target: Path, paths: Sequence[Path]) -> None:
    versions = tuple(path.read_bytes() for path in paths)
    write = write_private_atomic if writer is Writer.ATOMIC else _write_in_place
    print(READY, flush=True)
    written = 0
    while True:
        write(target, versions[written % len(versions)])
        written += 1
        print(written, flush=True)


def _measure_write_s(directory: Path, data: bytes, runs: int = 5) -> float:
    scratch = directory / "calibration.json"
    start = time.perf_counter()
    for _ in range(runs):
        write_private_atomic(scratch, data)
    elapsed = (time.perf_counter() - start) / runs
    scratch.unlink()
    return elapsed


def _wait_ready(process: subprocess.Popen[bytes]) -> tuple[bool, bytes]:
    """Whether the child said it is ready, and what it printed after that line.

    Raw reads from the descriptor, never a buffered ``readline``: a buffer could swallow the
    child's first progress lines, which ``communicate`` (reading the descriptor) would then
    miss, undercounting completed writes.
    """
    assert process.stdout is not None
    fd = process.stdout.fileno()
    received = b""
    deadline = time.monotonic() + READY_TIMEOUT_S
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while b"\n" not in received:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not selector.select(remaining):
                return False, received
            chunk = os.read(fd, 4096)
            if not chunk:
                return False, received
            received += chunk
    first, _, rest = received.partition(b"\n")
    return first.strip() == READY.encode(), rest


def _check_directory(target: Path) -> tuple[int, list[str]]:
    """Count and remove the target's temporary files; report anything else unexpected."""
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
        entry.unlink()
    return len(temporaries), problems


def _trial(
    index: int,
    target: Path,
    paths: Sequence[Path],
    versions: Sequence[bytes],
    *,
    max_delay_s: float,
    rng: random.Random,
    writer: Writer,
) -> Trial:
    count = len(versions)
    start = versions.index(target.read_bytes())
    # The child writes start+1, start+2, ... (cyclically): after k writes the target holds
    # versions[(start + k) % count].
    order = [(start + j) % count for j in range(1, count + 1)]
    command = [sys.executable, str(Path(__file__).resolve()), "--child", writer.value, str(target)]
    command += [str(paths[j]) for j in order]
    problems: list[str] = []
    delay_s = rng.uniform(0.0, max_delay_s)
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0
    ) as process:
        ready, progress = _wait_ready(process)
        if ready:
            time.sleep(delay_s)
            if process.poll() is not None:
                problems.append(f"child exited by itself with status {process.returncode}")
        else:
            problems.append("child did not become ready")
        process.send_signal(signal.SIGKILL)
        stdout, stderr_bytes = process.communicate()
    if process.returncode != -signal.SIGKILL and not problems:
        problems.append(f"child ended with status {process.returncode}")
    stderr = stderr_bytes.decode(errors="replace")
    if stderr.strip():
        problems.append("child stderr: " + stderr.strip().splitlines()[-1])
    completed = len((progress + stdout).split())

    leftovers, directory_problems = _check_directory(target)
    problems += directory_problems
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
    return Trial(index, delay_s * 1000, completed, outcome, mode, leftovers, tuple(problems))


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
        for index in range(1, trials + 1):
            trial = _trial(
                index, target, paths, versions, max_delay_s=max_delay_s, rng=rng, writer=writer
            )
            results.append(trial)
            report(trial.line())
            if trial.outcome is Outcome.CORRUPT:
                write_private_atomic(target, versions[0])  # a known start for the next trial
        return Summary(
            tuple(results),
            tuple(len(v) for v in versions),
            write_s * 1000,
            max_delay_s * 1000,
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["--child"]:
        _child(Writer(arguments[1]), Path(arguments[2]), [Path(a) for a in arguments[3:]])
        return 0  # not reached: the child runs until it is killed
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
        help="in-place: the negative control, a non-atomic writer the test must catch",
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
