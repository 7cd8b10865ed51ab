"""Benchmark ``conformance validate`` on a Dask cluster: 1 worker against 2, and 10 TB extrapolated.

Usage::

    python tools/bench_distributed.py [--size-mb 300] [--dir DIR] [--rounds 5] [--seed 20261129]
                                      [--keep] [--json OUT]

Generates (or reuses, with ``--dir``) a store of session directories of history files of
realistic size, 1-5 MB each, made as ``tools/bench_validate.py`` makes them (ciphertexts and
summaries shaped by ``tools/corpus.py``), then starts two local clusters, of one and of two
worker processes (one thread each), and times the whole run (walk, tasks, results in order, the
JSON report) on each in interleaved rounds: ``workers1``, ``workers2``, one after the other in
every round, so load on the shared machine hits both alike. The clusters start before the first
round (their start-up is printed, not timed), and the command's process is the client, as
``conformance validate --scheduler`` is.

Printed, and written with ``--json``: each method's seconds and MB/s (median and range), the
scaling ``workers1 / workers2`` (time ratio within each round: 2.0 is perfect), the workers' and
the client's CPU seconds per run and the bytes validated per CPU second of each, the client's and
the workers' peak resident memory beside the largest file, the load average before and after, and
the time to validate 10 TB (10^13 bytes) extrapolated from the measured throughput per worker
(the median rounds of each cluster), on one worker and on 100; and the same at a whole core per
worker (bytes per worker CPU second), what an unloaded machine would give.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

TOOLS_DIR: Final = Path(__file__).resolve().parent
sys.path.insert(0, str(TOOLS_DIR))

from bench_validate import DEFAULT_SEED, generate_corpus, history_paths  # noqa: E402
from benchharness import Trial, format_rounds, run_rounds  # noqa: E402
from reasoning_replay.atomic_files import replace_file  # noqa: E402

TEN_TB: Final = 10**13


def _peak_rss_mb() -> float:
    """This process's peak resident memory (``VmHWM``), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _cpu_s() -> float:
    times = os.times()
    return times.user + times.system


def cluster(workers: int) -> tuple[Any, Any]:
    """A local cluster of ``workers`` one-thread worker processes, and its client."""
    import distributed  # noqa: PLC0415

    # Dask's distributed is unannotated: its cluster and client are Any, from here on
    dask: Any = distributed
    local = dask.LocalCluster(
        n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0"
    )
    return local, dask.Client(local, set_as_default=False)


def validate_trial(
    root: Path, client: Any, cpu: dict[str, list[float]], statuses: set[int]
) -> Trial:
    """One whole run on ``client``'s cluster, its report written and thrown away; records the
    workers' CPU seconds, this process's (the client, and here the scheduler too) and the exit
    status."""
    from reasoning_replay.history.distributed import DaskEngine  # noqa: PLC0415
    from reasoning_replay.history.report_formats import JsonWriter  # noqa: PLC0415
    from reasoning_replay.history.validate_run import run_validate  # noqa: PLC0415

    def workers_cpu() -> float:
        seconds: dict[str, float] = client.run(_cpu_s)  # each worker's address -> its _cpu_s()
        return sum(seconds.values())

    def trial() -> float:
        before, client_before = workers_cpu(), _cpu_s()
        with Path(os.devnull).open("w", encoding="utf-8") as sink:
            started = time.perf_counter()
            totals = run_validate([str(root)], writer=JsonWriter(sink), engine=DaskEngine(client))
            elapsed = time.perf_counter() - started
        cpu["client"].append(_cpu_s() - client_before)
        cpu["workers"].append(workers_cpu() - before)
        statuses.add(totals.exit_status)
        return elapsed

    return trial


def extrapolate(bytes_per_s_per_worker: float) -> dict[str, float]:
    """Hours to validate 10 TB at a throughput per worker, on 1 and on 100 workers."""
    one = TEN_TB / bytes_per_s_per_worker / 3600
    return {"hours_1_worker": round(one, 2), "hours_100_workers": round(one / 100, 3)}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--size-mb", type=float, default=300.0, help="store size (default 300)")
    parser.add_argument("--dir", type=Path, help="store directory (kept; reused if not empty)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--keep", action="store_true", help="keep a temporary store")
    parser.add_argument("--json", type=Path, metavar="OUT", help="write every figure as JSON")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    root = args.dir if args.dir is not None else Path(tempfile.mkdtemp(prefix="bench-dask-"))
    temporary = args.dir is None
    clusters: list[tuple[Any, Any]] = []
    try:
        root.mkdir(parents=True, exist_ok=True)
        if not any(root.iterdir()):
            generate_corpus(root, int(args.size_mb * 1e6), args.seed)
        paths = history_paths(root)
        sizes = [p.stat().st_size for p in paths]
        size, largest = sum(sizes), max(sizes)
        for path in paths:  # warm the page cache: both clusters then read from memory
            path.read_bytes()
        print(f"store: {len(paths)} history files, {size / 1e6:.0f} MB, largest "
              f"{largest / 1e6:.1f} MB, in {root}", file=sys.stderr)  # fmt: skip

        cpu: dict[str, dict[str, list[float]]] = {
            name: {"client": [], "workers": []} for name in ("workers1", "workers2")
        }
        statuses: set[int] = set()
        methods: dict[str, Trial] = {}
        startup: dict[str, float] = {}
        for name, workers in (("workers1", 1), ("workers2", 2)):
            started = time.perf_counter()
            clusters.append(cluster(workers))
            startup[name] = round(time.perf_counter() - started, 2)
            methods[name] = validate_trial(root, clusters[-1][1], cpu[name], statuses)
        progress: Callable[[str], None] = lambda line: print(line, file=sys.stderr)  # noqa: E731
        rounds = run_rounds(methods, args.rounds, progress=progress)
        ratio_pairs = {"scaling_2_vs_1": ("workers1", "workers2")}
        scaling = rounds.ratio("workers1", "workers2")

        rows: dict[str, Any] = {}
        for name, workers in (("workers1", 1), ("workers2", 2)):
            spread = rounds.spread(name)
            per_worker = size / spread.median / workers
            worker_cpu = statistics.median(cpu[name]["workers"])
            client_cpu = statistics.median(cpu[name]["client"])
            rows[name] = {
                "workers": workers,
                "startup_s": startup[name],
                "seconds": spread.to_json(),
                "mb_per_s": {
                    "median": round(size / 1e6 / spread.median, 1),
                    "min": round(size / 1e6 / spread.max, 1),
                    "max": round(size / 1e6 / spread.min, 1),
                },
                "mb_per_s_per_worker": round(per_worker / 1e6, 1),
                "worker_cpu_s": round(worker_cpu, 2),
                "client_cpu_s": round(client_cpu, 2),
                "mb_per_worker_cpu_s": round(size / 1e6 / worker_cpu, 1),
                "mb_per_client_cpu_s": round(size / 1e6 / client_cpu, 1),
                "ten_tb": extrapolate(per_worker),
                "ten_tb_unloaded": extrapolate(size / worker_cpu),
            }
        peak_workers = max(max(client.run(_peak_rss_mb).values()) for _, client in clusters)
        memory = {
            "client_peak_rss_mb": round(_peak_rss_mb(), 1),
            "worker_peak_rss_mb": round(peak_workers, 1),
            "largest_file_mb": round(largest / 1e6, 1),
            "store_mb": round(size / 1e6, 1),
        }

        for line in format_rounds(rounds, ratio_pairs, unit="s"):
            print(line)
        for name, row in rows.items():
            mbps = row["mb_per_s"]
            print(
                f"{name}: {mbps['median']} ({mbps['min']}–{mbps['max']}) MB/s, "
                f"{row['mb_per_s_per_worker']} MB/s per worker, {row['mb_per_worker_cpu_s']} MB "
                f"per worker CPU second, {row['mb_per_client_cpu_s']} MB per client CPU second; "
                f"start-up {row['startup_s']} s; 10 TB: {row['ten_tb']['hours_1_worker']} h on 1 "
                f"worker, {row['ten_tb']['hours_100_workers']} h on 100 (at a whole core each: "
                f"{row['ten_tb_unloaded']['hours_1_worker']} h, "
                f"{row['ten_tb_unloaded']['hours_100_workers']} h)"
            )
        print(
            f"2 workers vs 1: {scaling.format('.2f', '×')} (goal >= 1.8); memory: client "
            f"{memory['client_peak_rss_mb']} MB, a worker {memory['worker_peak_rss_mb']} MB at "
            f"most, largest file {memory['largest_file_mb']} MB, store {memory['store_mb']} MB; "
            f"exit statuses {sorted(statuses)}"
        )
        if args.json is not None:
            document = {
                "tool": "tools/bench_distributed.py",
                "argv": list(argv) if argv is not None else sys.argv[1:],
                "store": {
                    "files": len(paths),
                    "bytes": size,
                    "largest": largest,
                    "seed": args.seed,
                },
                "methods": rows,
                "scaling_2_vs_1": {**scaling.to_json(), "goal": 1.8},
                "memory": memory,
                "harness": rounds.to_json(ratio_pairs),
            }
            replace_file(args.json, (json.dumps(document, indent=2) + "\n").encode("utf-8"))
    finally:
        for local, client in reversed(clusters):
            client.close()
            local.close()
        if temporary and not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
