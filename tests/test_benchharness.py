"""``tools/benchharness.py`` (the benches' one timing loop) and ``tools/perf_table.py`` (README's
performance table from their figures).

Nothing here is timed or asserts a speed: the harness's trials are fakes returning set seconds,
and the table's checks are of its shape and sources, never of a number.
"""

from __future__ import annotations

import importlib
import json
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

TOOLS_DIR = Path(__file__).resolve().parent.parent / "tools"


def _import_tool(name: str) -> ModuleType:
    if str(TOOLS_DIR) not in sys.path:
        sys.path.insert(0, str(TOOLS_DIR))
    return importlib.import_module(name)


@pytest.fixture(scope="module")
def harness() -> ModuleType:
    return _import_tool("benchharness")


def test_harness_interleaves_methods_round_by_round(harness: ModuleType) -> None:
    order: list[str] = []

    def trial(name: str, seconds: list[float]) -> Any:
        def run() -> float:
            order.append(name)
            return seconds[sum(n == name for n in order) - 1]

        return run

    rounds = harness.run_rounds(
        {"a": trial("a", [1.0, 2.0, 4.0]), "b": trial("b", [2.0, 2.0, 2.0])}, 3
    )
    assert order == ["a", "b", "a", "b", "a", "b"]
    assert rounds.times == {"a": (1.0, 2.0, 4.0), "b": (2.0, 2.0, 2.0)}
    assert rounds.spread("a") == harness.Spread(1.0, 2.0, 4.0)
    # each ratio is taken within a round, then summarised
    assert rounds.per_round_ratios("b", "a") == (2.0, 1.0, 0.5)
    assert rounds.ratio("b", "a") == harness.Spread(0.5, 1.0, 2.0)
    assert rounds.machine.cpus >= 1 and len(rounds.machine.load_start) == 3


def test_harness_report_and_json_carry_every_method_ratio_and_the_load(harness: ModuleType) -> None:
    rounds = harness.run_rounds({"a": lambda: 0.001, "b": lambda: 0.003}, 2)
    lines = harness.format_rounds(rounds, {"b/a": ("b", "a")})
    assert lines[0].startswith("2 interleaved rounds") and "load average" in lines[0]
    assert [line.split()[0] for line in lines[2:]] == ["a", "b", "b/a"]
    document = json.loads(json.dumps(rounds.to_json({"b/a": ("b", "a")})))
    assert document["rounds"] == 2
    assert set(document["seconds"]) == {"a", "b"}
    assert set(document["seconds"]["a"]) == {"min", "median", "max"}
    assert document["ratios"]["b/a"]["rounds"] == [3.0, 3.0]
    assert {"load_average_start", "load_average_end", "cpus"} <= set(document["machine"])


def test_harness_refuses_zero_rounds(harness: ModuleType) -> None:
    with pytest.raises(ValueError, match="rounds"):
        harness.run_rounds({"a": lambda: 0.0}, 0)


@pytest.fixture(scope="module")
def perf_table() -> ModuleType:
    return _import_tool("perf_table")


def _planner_figures(tmp_path: Path) -> dict[str, Any]:
    planner = _import_tool("bench_planner")
    out = tmp_path / "planner.json"
    argv = ["--messages", "30", "--runs", "2", "--scales", "1,2", "--json", str(out)]
    assert planner.main(argv) == 0
    figures: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return figures


def test_perf_table_quotes_median_and_range_and_the_command(
    perf_table: ModuleType, tmp_path: Path
) -> None:
    figures = _planner_figures(tmp_path)
    table = perf_table.render([figures])
    assert table[:2] == list(perf_table.HEADER)
    rows = [line for line in table[2:] if line.startswith("| ")]
    assert len(rows) == 3  # two sizes, one ratio
    for row in rows:
        what, figure, command = (cell.strip() for cell in row.strip("|").split(" | "))
        assert what.startswith("effort planner")
        assert re.search(r"\d \(\d[^)]*–\d[^)]*\)|^\S+ ms$|^\S+ \(size", figure), figure
        assert command == (
            "`python tools/bench_planner.py --messages 30 --runs 2 --scales 1,2 --json OUT.json`"
        )
    assert "2 rounds" in table[-1] and "load" in table[-1]


def test_perf_table_writes_between_the_markers_and_checks(
    perf_table: ModuleType, tmp_path: Path
) -> None:
    figures_path = tmp_path / "planner.json"
    figures_path.write_text(json.dumps(_planner_figures(tmp_path)), encoding="utf-8")
    readme = tmp_path / "README.md"
    readme.write_text(
        f"# x\n\n{perf_table.START}\nold\n{perf_table.END}\n\nafter\n", encoding="utf-8"
    )
    argv = [str(figures_path), "--readme", str(readme)]
    assert perf_table.main([*argv, "--check"]) == 1
    assert perf_table.main(argv) == 0
    text = readme.read_text(encoding="utf-8")
    assert "old" not in text and text.endswith(f"{perf_table.END}\n\nafter\n")
    assert perf_table.main([*argv, "--check"]) == 0
    (tmp_path / "other.json").write_text('{"tool": "tools/unknown.py"}', encoding="utf-8")
    assert perf_table.main([str(tmp_path / "other.json")]) == 2


def test_readme_performance_table_has_the_rendered_shape_and_sources() -> None:
    perf_table = _import_tool("perf_table")
    readme = (TOOLS_DIR.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split(perf_table.START + "\n", 1)[1].split(perf_table.END, 1)[0]
    lines = section.splitlines()
    assert lines[:2] == list(perf_table.HEADER)
    rows = [line for line in lines[2:] if line.startswith("| ")]
    assert rows
    for row in rows:
        cells = [cell.strip() for cell in row.strip("|").split(" | ")]
        assert len(cells) == 3, row
        tool = re.fullmatch(r"`python (tools/\w+\.py)( [^`]*)?`", cells[2])
        assert tool is not None and tool.group(1) in perf_table.RENDERERS, row
        assert (TOOLS_DIR.parent / tool.group(1)).is_file()
    assert any(line.startswith("Machine load while measuring") for line in lines)


def test_readme_performance_figures_are_current() -> None:
    """README's table is the rendering of the figures in docs/perf, and the suite's figures were
    measured on the suite as it is now: a case added since fails here until the figures are
    measured again (``python tools/perf_table.py --run bench_suite``), so no count goes stale."""
    perf_table = _import_tool("perf_table")
    assert perf_table.main(["--check"]) == 0


def test_a_stale_suite_count_is_named() -> None:
    perf_table = _import_tool("perf_table")
    figures = {"tool": "tools/bench_suite.py", "figures": {perf_table.SUITE_SUBJECT: {"cases": 3}}}
    assert perf_table.stale_counts([figures], 3) == []
    [problem] = perf_table.stale_counts([figures], 1_249)
    assert "1,249 cases" in problem and "measured on 3" in problem
    assert perf_table.suite_cases_now() > 1_000


def test_a_rerun_median_outside_the_stated_range_is_listed() -> None:
    perf_table = _import_tool("perf_table")
    stated = {"harness": {"ratios": {"a": {"min": 1.0, "median": 1.2, "max": 1.5}}}}
    holds = {"harness": {"ratios": {"a": {"min": 0.2, "median": 1.4, "max": 9.0}}}}
    moved = {"harness": {"ratios": {"a": {"min": 1.6, "median": 1.7, "max": 1.8}}}}
    assert perf_table.outside_ranges(stated, holds) == []
    [line] = perf_table.outside_ranges(stated, moved)
    assert line.startswith("/harness/ratios/a: median 1.7 outside 1–1.5")
