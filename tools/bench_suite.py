"""Measure how fast the conformance suite runs: in-process, through the protocol, and one-shot.

    python tools/bench_suite.py [--repeat 3] [--oneshot-operation telemetry] [--json OUT]

Figures (``--repeat`` interleaved rounds of every run, by ``tools/benchharness.py``; each the
median and range over the rounds, from the runner's own JSON report, so process start-up and
vector loading are excluded unless stated; cases per second count only the cases the
implementation ran, not those it skipped):

- the reference in-process on the whole bundled suite (goal: under 1 s of wall time);
- the reference adapter program and the JavaScript implementation through the persistent
  protocol, in cases per second, start-up excluded by subtracting a one-case run of the same
  round (goal for JavaScript: at least 5,000 cases/s);
- the JavaScript implementation in one-shot mode (one process per case) on one operation's cases;
- the wall time of a whole ``conformance run`` command, start-up included.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchharness import Rounds, Spread, Trial, run_rounds
from reasoning_replay.atomic_files import replace_file

REPO = Path(__file__).resolve().parents[1]
JS_ADAPTER = REPO / "conformance" / "adapters" / "js" / "bin" / "adapter.js"


def _run(arguments: list[str]) -> tuple[dict[str, Any], float]:
    """One ``conformance run``: its JSON report and the command's wall time."""
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "report.json"
        command = [
            sys.executable,
            "-m",
            "reasoning_replay.cli.main",
            "run",
            "--no-progress",
            "-q",
            "--report",
            f"json:{report}",
            *arguments,
        ]
        started = time.perf_counter()
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - started
        if result.returncode != 0:
            raise SystemExit(f"{' '.join(command)} failed:\n{result.stdout}{result.stderr}")
        return json.loads(report.read_text(encoding="utf-8")), wall


ONE_CASE = "telemetry/counters/empty"  # any single small case: start-up plus one round trip


def _ran(report: dict[str, Any]) -> int:
    """The cases the implementation actually ran: a skipped case costs no round trip."""
    return sum(case["outcome"] != "skipped" for case in report["cases"])


@dataclass
class Subject:
    """One implementation's runs: the whole suite and a one-case run (its start-up)."""

    arguments: list[str]
    reports: list[dict[str, Any]] = field(default_factory=list)
    walls: list[float] = field(default_factory=list)

    def run_trial(self) -> float:
        report, wall = _run(self.arguments)
        self.reports.append(report)
        self.walls.append(wall)
        return float(report["duration_s"])

    def startup_trial(self) -> float:
        return float(_run([*self.arguments, "-k", ONE_CASE])[0]["duration_s"])


def _figures(name: str, subject: Subject, rounds: Rounds, *, startup: bool) -> dict[str, Any]:
    report = subject.reports[-1]
    ran = _ran(report)
    # The run's duration includes starting the implementation and the handshake; a run of one
    # case measures those, so the rate is of the cases alone, per round.
    rates = (
        [
            (ran - 1) / (run - start)
            for run, start in zip(
                rounds.times[f"{name} run"], rounds.times[f"{name} start-up"], strict=True
            )
            if run > start
        ]
        if startup
        else [ran / run for run in rounds.times[f"{name} run"] if run > 0]
    )
    run_s = rounds.spread(f"{name} run")
    return {
        "cases": len(report["cases"]),
        "ran": ran,
        "skipped": len(report["cases"]) - ran,
        "run_s": run_s.to_json(),
        "startup_s": rounds.spread(f"{name} start-up").to_json() if startup else None,
        "cases_per_s": Spread.of(rates).to_json() if rates else None,
        "command_wall_s": Spread.of(subject.walls).to_json(),
        "all_passed": all(c["outcome"] == "pass" for c in report["cases"]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="interleaved rounds")
    parser.add_argument("--oneshot-operation", default="telemetry")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)

    node = shutil.which("node")
    subjects = {
        "reference in-process": Subject([]),
        "reference adapter (persistent protocol)": Subject(
            ["--impl", f"{sys.executable} -m reasoning_replay.adapter"]
        ),
    }
    oneshot: dict[str, Subject] = {}
    if node is not None:
        js = f"{node} {JS_ADAPTER}"
        subjects["javascript (persistent protocol)"] = Subject(["--impl", js])
        oneshot[f"javascript one-shot ({args.oneshot_operation} cases)"] = Subject(
            ["--oneshot", "--operation", args.oneshot_operation, "--impl", f"{js} --oneshot"]
        )
    else:
        print("node not found: JavaScript figures skipped", file=sys.stderr)

    trials: dict[str, Trial] = {}
    for name, subject in subjects.items():
        trials[f"{name} run"] = subject.run_trial
        trials[f"{name} start-up"] = subject.startup_trial
    rounds = run_rounds(trials, args.repeat)
    figures = {name: _figures(name, s, rounds, startup=True) for name, s in subjects.items()}
    if oneshot:  # one process per case: slow, so one round, and no start-up to subtract
        once = run_rounds({f"{name} run": s.run_trial for name, s in oneshot.items()}, 1)
        figures.update({n: _figures(n, s, once, startup=False) for n, s in oneshot.items()})

    width = max(len(name) for name in figures)
    print(
        f"{'run':{width}}  cases    ran  run s (median, min–max)    cases/s (median, min–max)"
        "  all passed"
    )
    for name, row in figures.items():
        rate = row["cases_per_s"]
        rate_text = "n/a" if rate is None else _spread_text(rate, ".0f")
        run_text = _spread_text(row["run_s"], ".3f")
        print(
            f"{name:{width}}  {row['cases']:5}  {row['ran']:5}  {run_text:24}"
            f"  {rate_text:27}  {row['all_passed']}"
        )
    print(rounds.machine.describe())
    if args.json is not None:
        document = {
            "tool": "tools/bench_suite.py",
            "argv": list(argv) if argv is not None else sys.argv[1:],
            "figures": figures,
            "harness": rounds.to_json(),
        }
        replace_file(args.json, (json.dumps(document, indent=2) + "\n").encode("utf-8"))
    return 0


def _spread_text(spread: dict[str, float], spec: str) -> str:
    return Spread(spread["min"], spread["median"], spread["max"]).format(spec)


if __name__ == "__main__":
    sys.exit(main())
