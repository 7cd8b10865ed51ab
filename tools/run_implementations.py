"""Run every known implementation against its expectations, then regenerate every results page.

    python tools/run_implementations.py [NAME ...]
    python tools/run_implementations.py --list

For each known implementation (``tools/known_implementations.py``: the reference, the JavaScript
and Rust implementations, fast-agent, every framework with an ``environment.json``) whose
environment exists, or for those named, ``conformance run`` with its adapter and its
expectations file writes its JSON report to ``conformance/implementations/reports/NAME.json``.
Then the README's Known implementations table (``tools/implementations_table.py``) and every
results document (``tools/results_page.py``: ``docs/implementations.md`` and ``.html``, the
implementations' README sections, the form counts of ``conformance/README.md``) are regenerated
from the reports. So a maintainer never types a count.

An implementation whose environment is missing is not run (its report stays as it is), and the
tool names the command that makes it. A run writes its report to a temporary file, which
replaces the report only when the run completed: exit 0 (every case as its expectations say)
or 1 (unexpected results: the report shows them); a run that could not start (exit 2) leaves
the old report in place.

Exit status: 0 every run as expected; 1 a run with unexpected results, one that could not start,
or a page that could not be written; 2 a usage error (an unknown name).
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import implementations_table
import results_page
from known_implementations import REPO, Known, known
from reasoning_replay.atomic_files import replace_file

REPORTS: Final = REPO / "conformance" / "implementations" / "reports"
RUN_TIMEOUT_S: Final = 1800  # a hang guard for one whole run, not a measurement
AS_EXPECTED: Final = 0
UNEXPECTED: Final = 1


@dataclass(frozen=True, slots=True)
class RunResult:
    key: str
    status: int  # conformance run's exit status; -1: not run
    seconds: float
    summary: str  # its verdict line, or why it did not run


def run_command(entry: Known, report: Path) -> list[str]:
    """The ``conformance run`` command line that writes ``entry``'s report to ``report``."""
    command = [sys.executable, "-m", "reasoning_replay.cli.main", "run"]
    if entry.adapter:
        command += ["--impl", shlex.join(entry.adapter)]
    if entry.expectations is not None:
        command += ["--expectations", entry.expectations]
    return [*command, "--report", f"json:{report}", "-q", "--no-progress"]


def run_one(entry: Known, reports: Path = REPORTS) -> RunResult:
    """Run one implementation; its report replaces ``reports/KEY.json`` when the run completed."""
    if not entry.is_ready():
        return RunResult(entry.key, -1, 0.0, f"not run: no {entry.ready}; make it: {entry.prepare}")
    with tempfile.TemporaryDirectory(prefix="run-implementations-") as scratch:
        report = Path(scratch) / f"{entry.key}.json"
        started = time.perf_counter()
        done = subprocess.run(
            run_command(entry, report),
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            check=False,
        )
        seconds = time.perf_counter() - started
        lines = (done.stdout + done.stderr).strip().splitlines()
        summary = lines[-1] if lines else f"exit {done.returncode}"
        if done.returncode in (AS_EXPECTED, UNEXPECTED) and report.is_file():
            replace_file(reports / f"{entry.key}.json", report.read_bytes())
        else:
            summary = f"{summary} (its report in {reports} is left as it was)"
    return RunResult(entry.key, done.returncode, seconds, summary)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python tools/run_implementations.py",
        description=__doc__.splitlines()[0] if __doc__ else None,
    )
    parser.add_argument("names", nargs="*", metavar="NAME", help="only these implementations")
    parser.add_argument("--list", action="store_true", help="list them and whether each can run")
    args = parser.parse_args(argv)
    entries = known()
    keys = [entry.key for entry in entries]
    unknown = [name for name in args.names if name not in keys]
    if unknown:
        print(
            f"run_implementations: unknown {', '.join(unknown)} (known: {', '.join(keys)})",
            file=sys.stderr,
        )
        return 2
    if args.list:
        for entry in entries:
            state = "ready" if entry.is_ready() else f"missing: {entry.prepare}"
            print(f"{entry.key:18} {state}")
        return 0
    chosen = [entry for entry in entries if not args.names or entry.key in args.names]
    results = []
    for entry in chosen:
        result = run_one(entry)
        results.append(result)
        took = "" if result.status < 0 else f" ({result.seconds:.1f} s)"
        print(f"{entry.key}: {result.summary}{took}", flush=True)
    table = implementations_table.main(["--write"])
    pages = results_page.main(["--write"])
    failed = [r.key for r in results if r.status > AS_EXPECTED]
    if failed:
        print(f"run_implementations: not as expected: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed or table or pages else 0


if __name__ == "__main__":
    sys.exit(main())
