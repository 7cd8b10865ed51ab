"""README's performance table, rendered from the benchmarks' ``--json`` figures.

Usage::

    python tools/perf_table.py --run [NAME ...]          # measure again, then write README.md
    python tools/perf_table.py [FIGURES.json ...] [--readme README.md] [--check]

Each ``FIGURES.json`` is what one of ``tools/bench_reader.py``, ``bench_suite.py``,
``bench_planner.py``, ``bench_validate.py`` or ``bench_vs_fast_agent.py`` wrote with ``--json``
(every one times its methods with ``tools/benchharness.py``); without any, the figures of
README's table, ``docs/perf/<NAME>.json`` for each NAME of :data:`BENCHES`. Every figure in the
table is a median with its range over the interleaved rounds, and every row names the command
that reproduces it (the tool and the arguments it ran with); the load average the rounds ran
under is quoted under the table. Counts of cases come from the figures, which took them from the
suite as it ran: never typed. The table goes between ``<!-- performance:start -->`` and
``<!-- performance:end -->`` in ``--readme`` (default: print it; README.md with ``--run`` and
``--check``);
``--check`` exits 1 when the README's table differs from the rendered one, or when the suite's
figures were measured on another number of cases than the suite has now, instead of writing it.

``--run`` is the one command that regenerates the table: it runs each bench of :data:`BENCHES`
(or those named) with the arguments listed there, one after the other, replaces
``docs/perf/<NAME>.json`` with its figures, and writes README.md. ``--recheck`` runs them the same
way into a scratch directory instead and lists every figure (a median with its range, in the
bench's figures) whose new median falls outside the range README states: a figure that does not
hold on a re-run is to be restated (``--run``); exit 1 if there is one.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from reasoning_replay.atomic_files import replace_file
from reasoning_replay.suite.vectors import load_vector_dirs

REPO: Final = Path(__file__).resolve().parents[1]
FIGURES_DIR: Final = REPO / "docs" / "perf"
VECTORS: Final = REPO / "conformance" / "vectors"
BENCHES: Final[Mapping[str, tuple[str, ...]]] = {
    "bench_reader": ("tools/bench_reader.py", "--count", "50000", "--passes", "7"),
    "bench_suite": ("tools/bench_suite.py", "--repeat", "7"),
    "bench_planner": (
        "tools/bench_planner.py", "--messages", "1000", "--scales", "1,10,100", "--runs", "15"
    ),
    "bench_validate": ("tools/bench_validate.py", "--size-mb", "500", "--passes", "7"),
}  # fmt: skip
"""README's benches, by the name of their figures file, with the arguments they run with."""
SUITE_SUBJECT: Final = "reference in-process"  # bench_suite.py's run of the whole suite

START: Final = "<!-- performance:start -->"
END: Final = "<!-- performance:end -->"
HEADER: Final = (
    "| what | figure: median (range) over interleaved rounds | reproduce |",
    "| --- | --- | --- |",
)

Row = tuple[str, str]  # (what, figure)
Figures = Mapping[str, Any]


class FiguresError(Exception):
    """A figures file that no renderer knows, or that lacks what its renderer needs."""


def spread(values: Mapping[str, Any], spec: str, unit: str = "") -> str:
    """``median (min–max)`` of a harness spread, or the one value when they agree."""
    low, mid, high = (format(values[k], spec) for k in ("min", "median", "max"))
    return f"{mid}{unit}" if low == high else f"{mid}{unit} ({low}–{high}{unit})"


def scaled(values: Mapping[str, Any], factor: float) -> dict[str, float]:
    return {k: float(values[k]) * factor for k in ("min", "median", "max")}


def _of(values: Sequence[float]) -> dict[str, float]:
    ordered = sorted(values)
    middle = len(ordered) // 2
    median = ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
    return {"min": ordered[0], "median": median, "max": ordered[-1]}


_PEERS: Final = {
    "msgspec": "msgspec's typed decode",
    "orjson_rs": "`orjson` + `jsonschema-rs`",
}


def reader_rows(figures: Figures) -> Iterator[Row]:
    corpus, spreads = figures["corpus"], figures["ratio_spreads"]
    reader = figures["methods"]["reader_str"]
    per_record = _of([t / reader["records"] * 1e6 for t in reader["pass_seconds"]])
    what = (
        f"strict reader, {corpus['records']:,} envelopes of"
        f" ~{corpus['mean_bytes_per_record'] / 1e3:.1f} KB (str input)"
    )
    yield what, f"{spread(per_record, '.2f')} µs/record"
    for key, label in (
        ("reader_vs_json_loads", "× the throughput of `json.loads` on the same lines"),
        ("reader_vs_jsonschema", "× faster per record than `json.loads` + `jsonschema`"),
    ):
        if spreads.get(key) is not None:
            yield what, f"{spread(spreads[key], '.2f')}{label}"
    # The reader against its peers, on the same records laid out as each writer lays them out.
    for ratio in figures.get("peer_ratios", {}).values():
        layout, peer = ratio["layout"], ratio["peer"]
        reader_row = figures["methods"][ratio["denominator"]]
        per_record = _of([t / reader_row["records"] * 1e6 for t in reader_row["pass_seconds"]])
        yield (
            f"strict reader (bytes) against its peers, {layout} layout",
            f"reader {spread(per_record, '.2f')} µs/record; {spread(ratio, '.2f')}× as fast as"
            f" {_PEERS.get(peer, peer)}",
        )


def suite_rows(figures: Figures) -> Iterator[Row]:
    for name, row in figures["figures"].items():
        rate = row["cases_per_s"]
        counted = f"{row['ran']:,} cases run" + (
            f" ({row['skipped']:,} skipped, not counted)" if row["skipped"] else ""
        )
        if rate is not None:
            yield f"conformance suite, {name}", f"{spread(rate, ',.0f')} cases/s; {counted}"
        yield f"conformance suite, {name}", f"run {spread(row['run_s'], '.3f')} s"


def planner_rows(figures: Figures) -> Iterator[Row]:
    for m in figures["measurements"]:
        values = {"min": m["min_seconds"], "median": m["median_seconds"], "max": m["max_seconds"]}
        yield (
            f"effort planner, {m['messages']:,}-message history",
            f"{spread(scaled(values, 1e3), '.1f')} ms",
        )
    for r in figures["ratios"]:
        values = {"min": r["time_ratio_min"], "median": r["time_ratio"], "max": r["time_ratio_max"]}
        yield (
            f"effort planner, t({r['to']:,}) / t({r['from']:,}) messages",
            f"{spread(values, '.2f')} (size ×{r['size_ratio']:g}, Python calls"
            f" ×{r['calls_ratio']:.3f})",
        )


def validate_rows(figures: Figures) -> Iterator[Row]:
    corpus, harness = figures["corpus"], figures["harness"]
    what = f"`conformance validate`, {corpus['bytes'] / 1e6:,.0f} MB of histories"
    for name, seconds in harness["seconds"].items():
        rate = {k: corpus["bytes"] / 1e6 / seconds[k] for k in ("min", "median", "max")}
        # a higher time is a lower rate: the range's ends swap
        rate = {"min": rate["max"], "median": rate["median"], "max": rate["min"]}
        yield what, f"{name}: {spread(rate, ',.0f')} MB/s"
    labels = {
        "validate_vs_json_loads": "× the throughput of `json.loads` (1 job, wall time)",
        "jobs_scaling": "× with more jobs",
        "validate_vs_json_loads_cpu": "× `json.loads` per core (1 job, CPU time)",
    }
    ratios = {**harness["ratios"], **figures.get("cpu_harness", {}).get("ratios", {})}
    for name, ratio in ratios.items():
        yield what, f"{spread(ratio, '.2f')}{labels.get(name, ' ' + name)}"
    methods = {row["method"]: row for row in figures.get("methods", [])}
    largest = corpus.get("largest_file_bytes")
    if "validate_jobs1" in methods and largest is not None:
        yield (
            what,
            f"peak memory {methods['validate_jobs1']['maxrss_self_mb']:,.0f} MB with 1 job"
            f" (largest file {largest / 1e6:,.1f} MB)",
        )


def fast_agent_rows(figures: Figures) -> Iterator[Row]:
    for name, ratio in figures["harness"]["ratios"].items():
        yield (
            f"beside fast-agent, {figures['messages']:,}-message history: {name.split()[0]}",
            f"fast-agent takes {spread(ratio, '.2f')}× the reference's time",
        )


RENDERERS: Final[Mapping[str, Callable[[Figures], Iterator[Row]]]] = {
    "tools/bench_reader.py": reader_rows,
    "tools/bench_suite.py": suite_rows,
    "tools/bench_planner.py": planner_rows,
    "tools/bench_validate.py": validate_rows,
    "tools/bench_vs_fast_agent.py": fast_agent_rows,
}


def _load(figures: Figures) -> str:
    machine = figures.get("harness", {}).get("machine")
    if machine is None:
        return "load not recorded"
    start = "/".join(f"{v:.1f}" for v in machine["load_average_start"])
    end = "/".join(f"{v:.1f}" for v in machine["load_average_end"])
    return f"{machine['cpus']} CPUs, load {start} → {end}"


def _arguments(argv: Sequence[str]) -> list[str]:
    """The bench's arguments as a reader reruns them: where it wrote its figures is theirs."""
    shown: list[str] = []
    for index, argument in enumerate(argv):
        if index > 0 and argv[index - 1] == "--json":
            shown.append("OUT.json")
        elif argument.startswith("--json="):
            shown.append("--json=OUT.json")
        else:
            shown.append(argument)
    return shown


def render(documents: Sequence[Figures]) -> list[str]:
    """The table's lines, then a line per figures file with the load it ran under."""
    lines = list(HEADER)
    notes = []
    for figures in documents:
        tool = figures.get("tool")
        if not isinstance(tool, str) or tool not in RENDERERS:
            raise FiguresError(f"no renderer for figures of {tool!r}")
        renderer = RENDERERS[tool]
        command = shlex.join(["python", tool, *_arguments(figures.get("argv", []))])
        try:
            rows = list(renderer(figures))
        except (KeyError, TypeError, ZeroDivisionError) as error:
            raise FiguresError(f"figures of {tool} lack {error}") from error
        grouped: dict[str, list[str]] = {}  # one row per thing measured, its figures in order
        for what, figure in rows:
            grouped.setdefault(what, []).append(figure)
        lines.extend(
            f"| {what} | {'; '.join(found)} | `{command}` |" for what, found in grouped.items()
        )
        notes.append(f"`{tool}`: {figures['harness']['rounds']} rounds, {_load(figures)}")
    return [*lines, "", "Machine load while measuring (1/5/15-minute averages, start → end): "
            + "; ".join(notes) + "."]  # fmt: skip


def suite_cases_now() -> int:
    """The number of cases the suite has in this checkout."""
    return len(load_vector_dirs([VECTORS]).cases)


def stale_counts(documents: Sequence[Figures], cases_now: int) -> list[str]:
    """Why a figures document's case counts are not the suite's now: one line each."""
    stale = []
    for figures in documents:
        if figures.get("tool") != "tools/bench_suite.py":
            continue
        measured = figures["figures"].get(SUITE_SUBJECT, {}).get("cases")
        if measured != cases_now:
            stale.append(
                f"the suite has {cases_now:,} cases; its figures were measured on"
                f" {measured if not isinstance(measured, int) else format(measured, ',')}:"
                " run `python tools/perf_table.py --run bench_suite`"
            )
    return stale


def measure(name: str) -> bytes:
    """The figures of one run of the bench :data:`BENCHES` names ``name``."""
    tool, *arguments = BENCHES[name]
    with tempfile.TemporaryDirectory(prefix="perf-table-") as scratch:
        out = Path(scratch) / f"{name}.json"
        command = [sys.executable, str(REPO / tool), *arguments, "--json", str(out)]
        print(f"perf_table: {shlex.join(['python', tool, *arguments])}", file=sys.stderr)
        subprocess.run(command, cwd=REPO / "tools", check=True)
        return out.read_bytes()


def run_benches(names: Sequence[str]) -> None:
    """Run each named bench of :data:`BENCHES` and put its figures in ``docs/perf``."""
    for name in names:
        replace_file(FIGURES_DIR / f"{name}.json", measure(name))


def _spreads(value: Any, where: str = "") -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every median with its range in a figures document, by where it is."""
    if isinstance(value, Mapping):
        if {"min", "median", "max"} <= value.keys():
            yield where, value
        for key, member in value.items():
            yield from _spreads(member, f"{where}/{key}")
    elif isinstance(value, list):
        for index, element in enumerate(value):
            yield from _spreads(element, f"{where}/{index}")


def outside_ranges(stated: Figures, rerun: Figures) -> list[str]:
    """Each figure of ``rerun`` whose median is outside the range ``stated`` gives for it."""
    ranges = dict(_spreads(stated))
    outside = []
    for where, spread_now in _spreads(rerun):
        then = ranges.get(where)
        if then is None or not all(
            isinstance(then[k], int | float) for k in ("min", "median", "max")
        ):
            continue
        if not then["min"] <= spread_now["median"] <= then["max"]:
            outside.append(
                f"{where}: median {spread_now['median']:.4g} outside"
                f" {then['min']:.4g}–{then['max']:.4g} (stated median {then['median']:.4g})"
            )
    return outside


def recheck(names: Sequence[str]) -> int:
    """Run the benches again and list the figures that do not hold; 1 if one does not."""
    status = 0
    for name in names:
        stated = json.loads((FIGURES_DIR / f"{name}.json").read_text(encoding="utf-8"))
        rerun = json.loads(measure(name))
        outside = outside_ranges(stated, rerun)
        load = _load(rerun)
        print(f"{name}: {len(outside)} figures outside the stated range on a re-run ({load})")
        for line in outside:
            print(f"  {line}")
        status |= bool(outside)
    return status


def splice(readme: str, table: Sequence[str]) -> str:
    """``readme`` with the lines between the markers replaced by ``table``."""
    head, found, rest = readme.partition(START + "\n")
    _, found_end, tail = rest.partition(END)
    if not found or not found_end:
        raise FiguresError(f"README has no {START} … {END} section")
    return head + START + "\n" + "\n".join(table) + "\n" + END + tail


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "figures", nargs="*", help="a bench's --json output (default: README's, in docs/perf)"
    )
    parser.add_argument("--readme", type=Path, help="write the table into this README")
    parser.add_argument("--check", action="store_true", help="only compare with --readme")
    parser.add_argument(
        "--run", action="store_true", help="run the benches named (default: all), then write"
    )
    parser.add_argument(
        "--recheck", action="store_true", help="run them again; list figures that do not hold"
    )
    args = parser.parse_args(argv)
    if args.run or args.recheck:
        unknown = sorted(set(args.figures) - set(BENCHES))
        if unknown:
            parser.error(f"no bench {', '.join(unknown)}; one of {', '.join(BENCHES)}")
        if args.recheck:
            return recheck(args.figures or list(BENCHES))
        run_benches(args.figures or list(BENCHES))
        args.figures, args.readme = [], args.readme or REPO / "README.md"
    if args.check and args.readme is None:
        args.readme = REPO / "README.md"
    paths = [Path(p) for p in args.figures] or [FIGURES_DIR / f"{n}.json" for n in BENCHES]
    try:
        documents = [json.loads(path.read_text(encoding="utf-8")) for path in paths]
        table = render(documents)
        if args.readme is None:
            print("\n".join(table))
            return 0
        before = args.readme.read_text(encoding="utf-8")
        after = splice(before, table)
    except (OSError, ValueError, FiguresError) as error:
        print(f"perf_table: {error}", file=sys.stderr)
        return 2
    if args.check:
        problems = stale_counts(documents, suite_cases_now())
        if before != after:
            problems.append(f"{args.readme}: the performance table is not the rendered one")
        for problem in problems:
            print(f"perf_table: {problem}", file=sys.stderr)
        return 1 if problems else 0
    replace_file(args.readme, after.encode("utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
