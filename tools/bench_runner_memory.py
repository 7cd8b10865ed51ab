"""Measure the runner's peak memory when an adapter sends large reply lines.

    python tools/bench_runner_memory.py [--cases 123] [--reply-mib 15] [--failing 3] [--json OUT]

An adapter (written to a temporary directory) answers every case of a temporary ``echo`` suite
with a valid reply padded with spaces to ``--reply-mib`` MiB; the last ``--failing`` cases get a
wrong value, so their lines are kept for the reports. ``conformance run`` runs in a child process
that prints its own peak resident set size (``ru_maxrss``) at the end; the adapter is not
counted. A runner that kept every reply line would need about cases x reply size.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import yaml
from reasoning_replay.atomic_files import replace_file

ADAPTER = textwrap.dedent(
    """
    import json, sys
    pad = int(sys.argv[1])
    for line in sys.stdin:
        req = json.loads(line)
        if req["cmd"] == "stop":
            break
        if req["cmd"] == "start":
            info = {"name": "big", "version": "1", "language": "python", "operations": ["echo"]}
            sys.stdout.write(json.dumps({"protocol": 1, "implementation": info}) + "\\n")
        else:
            value = "wrong" if "fail" in req["id"] else req["input"]["value"]
            text = json.dumps({"seq": req["seq"], "output": {"value": value}})
            sys.stdout.write(text[:-1] + " " * pad + "}\\n")
        sys.stdout.flush()
    """
)

RUNNER = textwrap.dedent(
    """
    import resource, sys
    from reasoning_replay.cli.main import main
    code = main(sys.argv[1:])
    sys.stderr.write(f"maxrss_kib {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}\\n")
    sys.exit(code)
    """
)


def _case(case_id: str) -> dict[str, object]:
    return {
        "id": case_id,
        "description": "a large reply",
        "spec": "X1",
        "operation": "echo",
        "level": "MUST",
        "tags": [],
        "input": {"value": 1},
        "expect": {"output": {"value": 1}},
    }


def measure(cases: int, reply_mib: float, failing: int) -> dict[str, float | int]:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        vectors = root / "conformance" / "vectors"
        vectors.mkdir(parents=True)
        ids = [f"big/pass-{i}" for i in range(cases - failing)]
        ids += [f"big/fail-{i}" for i in range(failing)]
        doc = {"description": "large replies", "cases": [_case(i) for i in ids]}
        (vectors / "big.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
        adapter = root / "adapter.py"
        adapter.write_text(ADAPTER, encoding="utf-8")
        pad = int(reply_mib * 1024 * 1024)
        impl = f"{sys.executable} {adapter} {pad}"
        argv = [sys.executable, "-c", RUNNER, "run", "--vectors", str(vectors), "--impl", impl]
        argv += ["--timeout", "60", "--no-progress", "-q"]
        t0 = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - t0
    rss = [ln for ln in done.stderr.splitlines() if ln.startswith("maxrss_kib ")]
    if not rss:
        raise SystemExit(f"the run failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    return {
        "cases": cases,
        "failing": failing,
        "reply_mib": reply_mib,
        "exit": done.returncode,
        "peak_rss_mib": round(int(rss[0].split()[1]) / 1024, 1),
        "wall_s": round(wall, 2),
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=int, default=123)
    p.add_argument("--reply-mib", type=float, default=15.0)
    p.add_argument("--failing", type=int, default=3)
    p.add_argument("--json", type=Path, metavar="OUT")
    args = p.parse_args()
    result = measure(args.cases, args.reply_mib, min(args.failing, args.cases))
    print(json.dumps(result))
    if args.json is not None:
        replace_file(args.json, (json.dumps(result, indent=2) + "\n").encode("utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
