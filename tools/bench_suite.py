"""Measure how fast the conformance suite runs: in-process, through the protocol, and one-shot.

    python tools/bench_suite.py [--repeat 3] [--oneshot-operation telemetry] [--json OUT]

Figures (each the best of ``--repeat`` runs, from the runner's own JSON report, so process
start-up and vector loading are excluded unless stated):

- the reference in-process on the whole bundled suite (goal: under 1 s of wall time);
- the reference adapter program and the JavaScript implementation through the persistent
  protocol, in cases per second (goal for JavaScript: at least 5,000 cases/s);
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
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
JS_ADAPTER = REPO / "conformance" / "adapters" / "js" / "bin" / "adapter.js"


def _run(arguments: list[str]) -> tuple[dict[str, Any], float]:
    """One ``conformance run``: its JSON report and the command's wall time."""
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "report.json"
        command = [
            sys.executable,
            "-m",
            "reasoning_replay.suite.cli",
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


def _best(arguments: list[str], repeat: int) -> dict[str, Any]:
    runs = [_run(arguments) for _ in range(repeat)]
    report, _ = min(runs, key=lambda run: float(run[0]["duration_s"]))
    cases = len(report["cases"])
    duration = float(report["duration_s"])
    # The run's duration includes starting the implementation and the handshake; a run of one
    # case measures those, so the rate is of the cases alone.
    startup = min(float(_run([*arguments, "-k", ONE_CASE])[0]["duration_s"]) for _ in range(repeat))
    steady = duration - startup
    return {
        "cases": cases,
        "run_s": round(duration, 4),
        "startup_s": round(startup, 4),
        "cases_per_s": round((cases - 1) / steady) if steady > 0 else None,
        "command_wall_s": round(min(w for _, w in runs), 3),
        "all_passed": all(c["outcome"] == "pass" for c in report["cases"]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--oneshot-operation", default="telemetry")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)

    node = shutil.which("node")
    figures: dict[str, Any] = {
        "reference in-process": _best([], args.repeat),
        "reference adapter (persistent protocol)": _best(
            ["--impl", f"{sys.executable} -m reasoning_replay.adapter"], args.repeat
        ),
    }
    if node is not None:
        js = f"{node} {JS_ADAPTER}"
        figures["javascript (persistent protocol)"] = _best(["--impl", js], args.repeat)
        figures[f"javascript one-shot ({args.oneshot_operation} cases)"] = _best(
            ["--oneshot", "--operation", args.oneshot_operation, "--impl", f"{js} --oneshot"], 1
        )
    else:
        print("node not found: JavaScript figures skipped", file=sys.stderr)

    width = max(len(name) for name in figures)
    print(f"{'run':{width}}  cases   run s  start s   cases/s  command wall s  all passed")
    for name, row in figures.items():
        print(
            f"{name:{width}}  {row['cases']:5}  {row['run_s']:6.3f}  {row['startup_s']:7.3f}  "
            f"{row['cases_per_s']!s:>8}  {row['command_wall_s']:14.3f}  {row['all_passed']}"
        )
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
