"""Benchmark ``conformance validate`` against a bare ``json.loads`` of the same history files.

Usage::

    python tools/bench_validate.py [--size-mb 500] [--dir DIR] [--jobs 1 2] [--passes 3]
                                   [--seed 20261129] [--keep] [--json OUT]

Generates a corpus of session directories of fast-agent history files (SPEC H1) of about
``--size-mb`` megabytes (10^6 bytes) in a temporary directory (or ``--dir``), then measures,
each in a fresh child process so that peak memory is its own:

1. ``json_loads``: read every file and ``json.loads`` it, on one core (the baseline);
2. ``validate_jobsN``: the ``conformance validate`` command (``--format json`` to /dev/null,
   no progress bar) with ``--jobs N``, for each N of ``--jobs``.

For each it prints wall time (median of ``--passes``), throughput in MB/s (of the median pass,
and of the best pass, the one a shared machine disturbed least) and files/s, the CPU time of the
measured work (user and system, the process's and its workers'; interpreter start-up and
imports excluded), and peak resident memory (``ru_maxrss``) of the measuring process and of its
worker processes, and the machine's load average before and after; then the headline ratios,
each the median and range of the ratios taken within one round: ``validate_vs_json_loads``
(wall-time throughput of one-core validation over json.loads; goal >= 1.0),
``validate_vs_json_loads_cpu`` (the same in CPU time: per core, what other processes on a shared
machine take from the wall time does not count) and ``jobs_scaling`` (wall-time throughput with
the largest N over one job; goal close to N). The corpus is deleted
afterwards unless ``--keep`` (or ``--dir``, which is kept). ``--json OUT`` writes every figure.

The corpus, from one ``random.Random(seed)``: session directories (0700) each with
``session.json``, ``history_<agent>.json`` and sometimes ``history_<agent>_previous.json`` and
``compacted_<n>.json`` (0600), history files of about 1-5 MB: user turns, assistant messages
with 1-3 replay envelopes made by ``canonicalize_completed_reasoning_output_item`` from
completed output items (ciphertext and summaries shaped as ``tools/corpus.py`` makes them),
the display channel (the items' display text, SPEC ST3, as fast-agent writes it from their
summaries), tool calls and results, and cache-state records. About 1 block in 60 is a legacy
record, a raw SDK snapshot or a broken envelope, 1 display channel in 100 disagrees with its
items, 1 file in 40 is left 0644, and 1 file in 100 is not JSON, so that every path of the
validator is exercised.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Final

TOOLS_DIR: Final = Path(__file__).resolve().parent
sys.path.insert(0, str(TOOLS_DIR))

import corpus  # noqa: E402  (tools/corpus.py: text and ciphertext shapes)
from benchharness import Rounds, Trial, format_rounds, run_rounds  # noqa: E402
from reasoning_replay import (  # noqa: E402
    ReasoningReplayItem,
    canonicalize_completed_reasoning_output_item,
)
from reasoning_replay.atomic_files import replace_file  # noqa: E402
from reasoning_replay.record.display import display_text  # noqa: E402

DEFAULT_SEED: Final = 20261129
REPLAY_CHANNEL: Final = "openai-reasoning-encrypted"
CACHE_CHANNEL: Final = "fast-agent-responses-cache-state"
EFFORTS: Final = ("low", "medium", "high", "xhigh")


# --- corpus ----------------------------------------------------------------------------------


class HistoryGenerator:
    """Messages of realistic fast-agent histories, from one seeded generator."""

    def __init__(self, seed: int) -> None:
        self.gen = corpus._Generator(seed)
        self.rng = self.gen.rng
        self.key = self.rng.randbytes(16).hex()

    def text_block(self, bounds: tuple[int, int]) -> dict[str, Any]:
        return {"type": "text", "text": self.gen.text(bounds, False)}

    def envelope_text(self) -> tuple[str, ReasoningReplayItem | None]:
        """A replay block's text, and the item it holds when it is resumable."""
        rng = self.rng
        item = self.gen.item(rng.randrange(20) == 0)
        output_item = {**item, "status": "completed", "content": item.get("content")}
        captured = canonicalize_completed_reasoning_output_item(
            output_item, source="response.output_item.done"
        )
        assert captured.envelope_text is not None and captured.item is not None
        roll = rng.random()
        if roll < 0.006:
            legacy = {
                "type": "reasoning",
                "encrypted_content": item["encrypted_content"],
                "id": item["id"],
            }
            return json.dumps(legacy), None
        if roll < 0.012:
            return json.dumps({**item, "status": None, "content": None}), None
        if roll < 0.017:
            return captured.envelope_text.replace('"version":1', '"version":2', 1), None
        return captured.envelope_text, captured.item

    def display_blocks(self, items: list[ReasoningReplayItem | None]) -> list[dict[str, Any]]:
        """The display channel: a text block per item with its display text (SPEC ST3), or
        other text."""
        texts = [display_text(item) for item in items if item is not None]
        shown = [{"type": "text", "text": text} for text in texts if text is not None]
        if not shown or self.rng.random() < 0.01:
            return [self.text_block((100, 800))]
        return shown

    def assistant(self) -> dict[str, Any]:
        rng = self.rng
        read = [self.envelope_text() for _ in range(rng.choice((1, 1, 1, 2, 2, 3)))]
        message: dict[str, Any] = {
            "role": "assistant",
            "content": [self.text_block((200, 3000))],
            "channels": {
                REPLAY_CHANNEL: [{"type": "text", "text": text} for text, _ in read],
                "reasoning": self.display_blocks([item for _, item in read]),
                CACHE_CHANNEL: [
                    {
                        "type": "text",
                        "text": json.dumps(
                            {"model": "gpt-6-astra", "key": self.key, "effort": rng.choice(EFFORTS)}
                        ),
                    }
                ],
            },
            "stop_reason": "endTurn",
            "timestamp": "2026-11-29T10:00:00Z",
        }
        if rng.random() < 0.4:
            call_id = "call_" + rng.randbytes(8).hex()
            message["tool_calls"] = {
                call_id: {
                    "method": "tools/call",
                    "params": {"name": "read_file", "arguments": {"path": "src/main.py"}},
                }
            }
            message["stop_reason"] = "toolUse"
        return message

    def user(self) -> dict[str, Any]:
        return {"role": "user", "content": [self.text_block((20, 600))], "is_template": False}

    def history(self, target_bytes: int) -> bytes:
        messages: list[dict[str, Any]] = []
        size = 0
        while size < target_bytes:
            for message in (self.user(), self.assistant()):
                messages.append(message)
                size += len(json.dumps(message, ensure_ascii=False))
        return json.dumps({"messages": messages}, ensure_ascii=False, indent=2).encode("utf-8")


def _write(path: Path, data: bytes, mode: int) -> None:
    # Whole or not at all: --dir keeps the corpus and a later run reuses it, so a killed
    # generation must not leave a cut file the generator did not mean (SPEC H5).
    replace_file(path, data, mode=mode)


def generate_corpus(root: Path, size_bytes: int, seed: int) -> tuple[int, int]:
    """Session directories under ``root`` totalling about ``size_bytes``; (files, bytes)."""
    histories = HistoryGenerator(seed)
    rng = histories.rng
    files = total = 0
    session = 0
    while total < size_bytes:
        directory = root / f"2611{session:06d}-{rng.randbytes(3).hex()}"
        directory.mkdir(mode=0o700)
        session += 1
        _write(directory / "session.json", json.dumps({"id": directory.name}).encode(), 0o600)
        names = ["history_dev.json"]
        if rng.random() < 0.4:
            names.append("history_dev_previous.json")
        names += [f"compacted_{n}.json" for n in range(rng.choice((0, 0, 1, 2)))]
        for name in names:
            if rng.random() < 0.01:
                data = b'{"messages": [{"role": "user", "content": [' + b"x" * 1000
            else:
                data = histories.history(rng.randint(1_000_000, 5_000_000))
            _write(directory / name, data, 0o644 if rng.random() < 0.025 else 0o600)
            files += 1
            total += len(data)
    return files, total


def history_paths(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.json") if p.name != "session.json")


# --- measurements (in child processes) ---------------------------------------------------------


def _peak_rss_mb() -> float:
    """This process's peak resident memory. Linux keeps ``ru_maxrss`` across ``execve``, so a
    child would report its parent's peak; ``VmHWM`` belongs to the new process image."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux


def _cpu_seconds() -> float:
    """User and system time of this process and of its reaped children (the pool's workers)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _rusage(cpu_start: float) -> dict[str, float]:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)  # the pool's workers, if any
    return {
        "cpu_s": _cpu_seconds() - cpu_start,
        "maxrss_self_mb": _peak_rss_mb(),
        "maxrss_workers_mb": children.ru_maxrss / 1024,
    }


def measure_json_loads(root: Path) -> dict[str, float]:
    paths = history_paths(root)
    cpu_start = _cpu_seconds()
    start = time.perf_counter()
    for path in paths:
        with contextlib.suppress(ValueError):  # the few broken files cost their parse too
            json.loads(path.read_bytes())
    return {"wall_s": time.perf_counter() - start, **_rusage(cpu_start)}


def measure_validate(root: Path, jobs: int) -> dict[str, float]:
    from reasoning_replay.cli.main import main  # noqa: PLC0415 - only in the child

    # A regular file: validate refuses to write its report to a device such as /dev/null.
    with tempfile.TemporaryDirectory(prefix="bench-validate-report-") as scratch:
        report = Path(scratch) / "report.json"
        argv = ["validate", str(root), "--format", "json", "--output", str(report)]
        cpu_start = _cpu_seconds()
        start = time.perf_counter()
        status = main([*argv, "--no-progress", "--jobs", str(jobs)])
        wall = time.perf_counter() - start
        if not report.is_file() or report.stat().st_size == 0:  # a refused run is no figure
            raise SystemExit(f"validate wrote no report (exit status {status})")
    return {"wall_s": wall, "exit_status": status, **_rusage(cpu_start)}


def run_child(method: str, root: Path, jobs: int) -> dict[str, float]:
    command = [sys.executable, __file__, "--child", method, "--dir", str(root), "--jobs", str(jobs)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def measure_methods(
    root: Path, methods: Sequence[tuple[str, int]], passes: int
) -> tuple[dict[str, list[dict[str, float]]], Rounds]:
    """Every method's child runs, in interleaved rounds: drift on a shared machine hits every
    method alike."""
    runs: dict[str, list[dict[str, float]]] = {name: [] for name, _ in methods}

    def trial(name: str, jobs: int) -> Trial:
        def run() -> float:  # the child's own clock: its start-up is not timed
            result = run_child(name, root, jobs)
            runs[name].append(result)
            return result["wall_s"]

        return run

    return runs, run_rounds({name: trial(name, jobs) for name, jobs in methods}, passes)


# --- report ------------------------------------------------------------------------------------


def summarize(name: str, runs: Sequence[dict[str, float]], files: int, size: int) -> dict[str, Any]:
    wall = statistics.median(r["wall_s"] for r in runs)
    best = min(r["wall_s"] for r in runs)  # on a shared machine, the pass least disturbed
    return {
        "method": name,
        "passes": [round(r["wall_s"], 3) for r in runs],
        "wall_s": round(wall, 3),
        "mb_per_s": round(size / 1e6 / wall, 1),
        "best_mb_per_s": round(size / 1e6 / best, 1),
        "files_per_s": round(files / wall, 1),
        "cpu_s": round(statistics.median(r["cpu_s"] for r in runs), 3),
        "cpu_passes": [round(r["cpu_s"], 3) for r in runs],
        "maxrss_self_mb": round(max(r["maxrss_self_mb"] for r in runs), 1),
        "maxrss_workers_mb": round(max(r["maxrss_workers_mb"] for r in runs), 1),
    }


def _iter_lines(rows: Sequence[dict[str, Any]]) -> Iterator[str]:
    yield (
        f"{'method':<16}{'wall s':>9}{'MB/s':>9}{'best':>9}{'files/s':>9}{'cpu s':>9}"
        f"{'RSS MB':>9}{'workers':>9}"
    )
    for r in rows:
        yield (
            f"{r['method']:<16}{r['wall_s']:>9.2f}{r['mb_per_s']:>9.1f}"
            f"{r['best_mb_per_s']:>9.1f}{r['files_per_s']:>9.1f}"
            f"{r['cpu_s']:>9.1f}{r['maxrss_self_mb']:>9.0f}{r['maxrss_workers_mb']:>9.0f}"
        )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--size-mb", type=float, default=500.0, help="corpus size (default 500)")
    parser.add_argument("--dir", type=Path, help="corpus directory (kept; reused if not empty)")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2], help="job counts")
    parser.add_argument("--passes", type=int, default=3, help="timed passes per method")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--keep", action="store_true", help="keep a temporary corpus")
    parser.add_argument("--json", type=Path, metavar="OUT", help="write every figure as JSON")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def report(
    args: argparse.Namespace,
    argv: Sequence[str],
    corpus_size: tuple[int, int, int],
    methods: Sequence[tuple[str, int]],
    measured: tuple[dict[str, list[dict[str, float]]], Rounds],
) -> None:
    """Print the figures of every method, and the ratios in wall and CPU time; ``--json`` too."""
    files, size, largest = corpus_size
    runs, rounds = measured
    statuses = {int(r["exit_status"]) for n, rs in runs.items() if n != "json_loads" for r in rs}
    rows = [summarize(name, runs[name], files, size) for name, _ in methods]
    names = {r["method"] for r in rows}
    one = "validate_jobs1" in names
    most_name = f"validate_jobs{max(args.jobs)}"
    # Each ratio's median and range over the rounds, each taken within one round.
    ratio_pairs = {"validate_vs_json_loads": ("json_loads", "validate_jobs1")} if one else {}
    if one and most_name != "validate_jobs1":
        ratio_pairs["jobs_scaling"] = ("validate_jobs1", most_name)
    # The same rounds in CPU time: each method's measured work, without start-up.
    cpu_rounds = Rounds(
        {name: tuple(r["cpu_s"] for r in runs[name]) for name, _ in methods}, rounds.machine
    )
    cpu_pairs = {"validate_vs_json_loads_cpu": ("json_loads", "validate_jobs1")} if one else {}
    medians = {name: round(rounds.ratio(a, b).median, 2) for name, (a, b) in ratio_pairs.items()}
    medians.update(
        {name: round(cpu_rounds.ratio(a, b).median, 2) for name, (a, b) in cpu_pairs.items()}
    )
    ratios: dict[str, float | int | None] = {
        name: medians.get(name)
        for name in ("validate_vs_json_loads", "jobs_scaling", "validate_vs_json_loads_cpu")
    }
    ratios["jobs"] = max(args.jobs)
    for line in _iter_lines(rows):
        print(line)
    print("wall time:")
    for line in format_rounds(rounds, ratio_pairs, unit="s"):
        print(line)
    print("CPU time of the measured work:")
    for line in format_rounds(cpu_rounds, cpu_pairs, unit="s"):
        print(line)
    print(
        f"validate (1 job) vs json.loads: {ratios['validate_vs_json_loads']}x wall, "
        f"{ratios['validate_vs_json_loads_cpu']}x CPU (goal >= 1.0); "
        f"{ratios['jobs']} jobs vs 1: {ratios['jobs_scaling']}x (medians of the rounds); "
        f"validator exit statuses {sorted(statuses)}"
    )
    if args.json is not None:
        load_before, load_after = rounds.machine.load_start, rounds.machine.load_end
        document = {
            "corpus": {
                "files": files,
                "bytes": size,
                "largest_file_bytes": largest,
                "seed": args.seed,
            },
            "machine": {
                "python": platform.python_version(),
                "platform": platform.platform(),
                "cpus": os.cpu_count(),
                "load_average_before": [round(x, 2) for x in load_before],
                "load_average_after": [round(x, 2) for x in load_after],
            },
            "methods": rows,
            "ratios": ratios,
            "tool": "tools/bench_validate.py",
            "argv": list(argv),
            "harness": rounds.to_json(ratio_pairs),
            "cpu_harness": cpu_rounds.to_json(cpu_pairs),
        }
        replace_file(args.json, (json.dumps(document, indent=2) + "\n").encode("utf-8"))


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child:
        jobs = args.jobs[0]
        if args.child == "json_loads":
            result = measure_json_loads(args.dir)
        else:
            result = measure_validate(args.dir, jobs)
        print(json.dumps(result))
        return 0

    root = args.dir if args.dir is not None else Path(tempfile.mkdtemp(prefix="bench-validate-"))
    temporary = args.dir is None
    try:
        root.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        if any(root.iterdir()):
            print(f"reusing the corpus in {root}", file=sys.stderr)
        else:
            generate_corpus(root, int(args.size_mb * 1e6), args.seed)
        generated_s = time.perf_counter() - start
        paths = history_paths(root)
        size = sum(p.stat().st_size for p in paths)
        for path in paths:  # warm the page cache: every method then reads from memory
            path.read_bytes()
        print(
            f"corpus: {len(paths)} history files, {size / 1e6:.0f} MB in {root} "
            f"({generated_s:.0f} s to make)",
            file=sys.stderr,
        )
        methods = [("json_loads", 1)] + [(f"validate_jobs{j}", j) for j in args.jobs]
        measured = measure_methods(root, methods, args.passes)
        shown_argv = list(argv) if argv is not None else sys.argv[1:]
        largest = max((p.stat().st_size for p in paths), default=0)
        report(args, shown_argv, (len(paths), size, largest), methods, measured)
    finally:
        if temporary and not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
