"""Benchmark the reader's C accelerators built on the full C API against the same sources built
on the limited API (one abi3 build for every CPython >= 3.11), and against no accelerator at all
(the pure-Python wheel).

Usage::

    python tools/bench_abi3.py [--count 20000] [--rounds 7] [--json OUT]

It compiles ``_canonical`` and ``_strict`` twice with ``hatch_build.compile_extensions`` (once
with ``Py_LIMITED_API``), lays out three copies of the package in a scratch directory (``full``,
``abi3``, ``none``: the same Python modules, with the full-API modules, the abi3 ones, or none),
and starts one worker process per copy. Each worker generates the same corpus (``tools/corpus.py``,
``--count`` records, fixed seed) and, asked by the parent, times one pass of
``parse_reasoning_replay_envelope`` over one workload on its own ``perf_counter``:

- ``str``: every line as ``str``, rebuilt from its bytes before the pass (untimed), so that no
  UTF-8 form cached in a ``str`` by an earlier pass helps the limited-API build, which reads a
  ``str`` through its UTF-8 form;
- ``ascii``: the ASCII-only lines as ``str`` (rebuilt alike), whose UTF-8 form is the ``str``'s
  own storage;
- ``bytes``: every line as ``bytes``.

The passes are interleaved (``tools/benchharness.py``: every workload of every build, then again),
and the ratios ``abi3 / full`` and ``none / full`` are taken within each round. A worker first
checks that it imported its copy's modules, and the workers' verdicts must agree on every line
(exit 1 otherwise).
"""

from __future__ import annotations

import argparse
import gc
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Final, TextIO

TOOLS: Final = Path(__file__).resolve().parent
REPO: Final = TOOLS.parent
PACKAGE: Final = REPO / "reference_impl" / "reasoning_replay"
BUILDS: Final = ("full", "abi3", "none")
WORKLOADS: Final = ("str", "ascii", "bytes")
SEED: Final = 20251129
ACCELERATORS: Final = ("_canonical", "_strict")


# ---------------------------------------------------------------------------------------------
# The worker: one copy of the package, one corpus, a pass per request


def worker(build: str, count: int, requests: TextIO, replies: TextIO) -> int:
    sys.path.insert(0, str(TOOLS))
    import corpus  # noqa: PLC0415 - the worker's own import path
    from reasoning_replay import parse_reasoning_replay_envelope  # noqa: PLC0415

    package = sys.modules["reasoning_replay"]
    if not str(package.__file__).startswith(str(Path.cwd()) + "/"):
        raise SystemExit(f"{build}: imported {package.__file__}, not the copy in {Path.cwd()}")
    modules = [sys.modules.get(f"reasoning_replay.{name}") for name in ACCELERATORS]
    files = [str(getattr(m, "__file__", "")) for m in modules if m is not None]
    expected = {"full": ".cpython-", "abi3": ".abi3.", "none": None}[build]
    if (expected is None and files) or (expected is not None and len(files) != 2):
        raise SystemExit(f"{build}: the accelerators loaded are {files}")
    if expected is not None and not all(expected in f for f in files):
        raise SystemExit(f"{build}: the accelerators loaded are {files}")

    lines, _ = corpus.generate(count, SEED)
    encoded = [line.encode("utf-8") for line in lines]
    ascii_encoded = [line for line in encoded if line.isascii()]
    verdicts = [parse_reasoning_replay_envelope(line).code for line in lines]
    replies.write(json.dumps({"verdicts": verdicts, "ascii": len(ascii_encoded)}) + "\n")
    replies.flush()
    for request in requests:
        workload = request.strip()
        data: list[str] | list[bytes]
        if workload == "bytes":
            data = encoded
        else:
            data = [b.decode("utf-8") for b in (encoded if workload == "str" else ascii_encoded)]
        gc.collect()
        started = time.perf_counter()
        for line in data:
            parse_reasoning_replay_envelope(line)
        replies.write(f"{time.perf_counter() - started}\n")
        replies.flush()
    return 0


# ---------------------------------------------------------------------------------------------
# The parent: builds, copies, workers, rounds


def lay_out(scratch: Path) -> dict[str, Path]:
    """The three copies of the package under ``scratch``; returns each one's import root."""
    sys.path.insert(0, str(REPO))
    import hatch_build  # noqa: PLC0415 - the build hook of this checkout

    roots = {}
    for build in BUILDS:
        root = scratch / build / "site"
        shutil.copytree(
            PACKAGE,
            root / "reasoning_replay",
            ignore=shutil.ignore_patterns("*.so", "*.c", "*.h", "__pycache__"),
        )
        if build != "none":
            built = hatch_build.compile_extensions(
                REPO,
                scratch / build / "lib",
                scratch / build / "temp",
                limited_api=build == "abi3",
            )
            for path in built:
                shutil.copy2(path, root / "reasoning_replay" / path.name)
        roots[build] = root
    return roots


class Worker:
    def __init__(self, build: str, root: Path, count: int) -> None:
        self.build = build
        self.process = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--worker", build, f"--count={count}"],
            cwd=root,
            env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        first = self._reply()
        self.ready = json.loads(first)

    def _reply(self) -> str:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"the {self.build} worker ended (exit {self.process.wait()})")
        return line

    def trial(self, workload: str) -> float:
        assert self.process.stdin is not None
        self.process.stdin.write(workload + "\n")
        self.process.stdin.flush()
        return float(self._reply())

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=60)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=20_000, help="corpus records (20000)")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (7)")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON to this file")
    parser.add_argument("--worker", choices=BUILDS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker is not None:
        return worker(args.worker, args.count, sys.stdin, sys.stdout)

    sys.path.insert(0, str(TOOLS))
    from benchharness import format_rounds, run_rounds  # noqa: PLC0415

    with tempfile.TemporaryDirectory(prefix="reasoning-replay-abi3-") as tmp:
        roots = lay_out(Path(tmp))
        workers = {build: Worker(build, roots[build], args.count) for build in BUILDS}
        try:
            verdicts = {build: w.ready["verdicts"] for build, w in workers.items()}
            if len({json.dumps(v) for v in verdicts.values()}) != 1:
                print("the builds' verdicts differ", file=sys.stderr)
                return 1
            methods = {
                f"{build}_{workload}": (lambda w=w, k=workload: w.trial(k))
                for workload in WORKLOADS
                for build, w in workers.items()
            }
            rounds = run_rounds(methods, args.rounds)
        finally:
            for w in workers.values():
                w.close()
    ratios = {
        f"{build}_over_full_{workload}": (f"{build}_{workload}", f"full_{workload}")
        for workload in WORKLOADS
        for build in ("abi3", "none")
    }
    ascii_lines = workers["full"].ready["ascii"]
    print(f"{args.count} records ({ascii_lines} ASCII-only), one pass per trial")
    print("\n".join(format_rounds(rounds, ratios)))
    if args.json is not None:
        document = {"records": args.count, "ascii_records": ascii_lines}
        document |= rounds.to_json(ratios)
        # imported here: the workers run this file to import their own copy of the package
        from reasoning_replay.atomic_files import replace_file  # noqa: PLC0415

        replace_file(args.json, (json.dumps(document, indent=2) + "\n").encode("utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
