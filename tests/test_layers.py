"""The package's layers (ARCHITECTURE.md): no import circle, each part imports only parts below it,
and every module of the reference and of tools/ stays small enough to summarise in a sentence.

The import graph is computed from the sources with ``ast``: every ``import`` and ``from ...
import`` anywhere in a module counts, inside functions and under ``TYPE_CHECKING`` too (an import
deferred to a function is still a dependency, and a circle through one is still a circle).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Final

REPO: Final = Path(__file__).resolve().parents[1]
SOURCE_ROOT: Final = REPO / "reference_impl"
PACKAGE: Final = "reasoning_replay"
MAX_LINES: Final = 400  # BRIEF: one concept per module, ~400 lines at most

# The layers, lowest first: a module may import modules of its own layer and of layers below it.
# A module's layer is its part (the folder under the package), else its own name (the modules
# common to all parts, at the top of the package).
LAYERS: Final[tuple[frozenset[str], ...]] = (
    # the foundation every part stands on
    frozenset(
        {
            "diagnostics",
            "_accelerators",
            "_canonical",
            "_strict",
            "_history",
            "file_kinds",
            "atomic_files",
            "resources",
            "versions",
            "schemas",
        }
    ),
    frozenset({"record"}),  # SPEC Part I
    frozenset({"ordering"}),  # SPEC Part II
    frozenset({"history"}),  # SPEC Part III
    frozenset({"operations"}),  # every operation of the vectors, over the three parts
    frozenset({"suite"}),  # the conformance machinery
    frozenset({"adapter", "__init__"}),  # the reference as an adapter; the public API
    frozenset({"cli"}),  # the command line
)

# Within a part: what must stay below what, directly or through any other module.
BELOW: Final[tuple[tuple[str, str], ...]] = (
    # file safety below redaction and scanning
    ("history.safe_files", "history.text_redaction"),
    ("history.safe_files", "history.scan"),
    ("history.safe_files", "history.validation"),
    # the validation of one file below the walks, the walks below the run
    ("history.validation", "history.walk"),
    ("history.file_results", "history.store_walk"),
    ("history.store_walk", "history.walk"),
    ("history.walk", "history.validate_run"),
    ("history.store_walk", "history.validate_run"),
    # forms below the items form, the items form below applicability
    ("suite.forms", "suite.items_form"),
    ("suite.items_form", "suite.applicability"),
)

# Imports that run up the layers, each with its reason. Keep this short: an entry is a debt.
UPWARD_IMPORTS: Final[Mapping[tuple[str, str], str]] = {
    ("record.history", "ordering.cache_state"): (
        "a message keeps the cache-state channel of SPEC Part II (ARCHITECTURE.md)"
    ),
    ("history.report_formats", "suite"): "the reports name the runner's version (runner_version)",
    ("history.report_formats", "suite.specdoc"): "SARIF's rules are read from SPEC.md",
    ("history.distributed", "suite"): "a Dask task's result carries the worker's runner_version",
}

# Modules over MAX_LINES, each with its reason. The coordinator trims this list as the splits of
# issue 30 land; a module may leave it, never join it without a reason a reviewer accepts.
LONG_MODULES: Final[Mapping[str, str]] = {
    "reference_impl/reasoning_replay/suite/reports.py": "being split (issue 30)",
    "reference_impl/reasoning_replay/suite/adapter_process.py": "being split (issue 30)",
    "reference_impl/reasoning_replay/history/scan.py": "being split (issue 30)",
    "reference_impl/reasoning_replay/history/report_formats.py": "being split (issue 30)",
    "reference_impl/reasoning_replay/suite/runner.py": "being split (issue 30)",
    "tools/suite_adequacy.py": "being split (issue 30)",
    "tools/fuzz.py": "being split (issue 30)",
    "tools/bench_reader.py": "being split (issue 30)",
    "tools/release.py": "being split (issue 30)",
    "tools/payload_corpus.py": "being split (issue 30)",
    "tools/kill_test.py": "being split (issue 30)",
    "tools/results_html.py": "being split (issue 30)",
    "tools/langchain_vercel_reasons.py": "being split (issue 30)",
    "tools/implementations_table.py": "being split (issue 30)",
    "tools/results_page.py": "being split (issue 30)",
    "tools/openai_agents_reasons.py": "being split (issue 30)",
    "tools/bench_validate.py": "being split (issue 30)",
    "tools/corpus.py": "being split (issue 30)",
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(SOURCE_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def _modules() -> Mapping[str, Path]:
    """Every module of the package by its dotted name: Python sources, and the compiled
    accelerators by their stubs."""
    sources = sorted((SOURCE_ROOT / PACKAGE).rglob("*.py"))
    stubs = sorted((SOURCE_ROOT / PACKAGE).rglob("*.pyi"))
    return {_module_name(path): path for path in [*stubs, *sources]}


def _imported_names(module: str, path: Path) -> Iterator[str]:
    """Every name ``module`` imports, absolute, anywhere in its source."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            yield from (f"{source}.{alias.name}" for alias in node.names)


@cache
def import_graph() -> Mapping[str, frozenset[str]]:
    """Each module of the package and the modules of the package it imports."""
    modules = _modules()
    graph: dict[str, frozenset[str]] = {}
    for module, path in modules.items():
        targets = set()
        for name in _imported_names(module, path):
            # ``from pkg import name``: the module ``pkg.name`` when there is one, else ``pkg``
            target = name
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != module:
                targets.add(target)
        graph[module] = frozenset(targets)
    return graph


def import_circles(graph: Mapping[str, frozenset[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm,
    iterative), each sorted, in name order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    circles: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))
    return sorted(circles)


def _short(module: str) -> str:
    return module.removeprefix(PACKAGE).removeprefix(".") or "__init__"


def layer_of(module: str) -> int:
    name = _short(module)
    part = name.split(".")[0]
    for rank, members in enumerate(LAYERS):
        if part in members:
            return rank
    raise AssertionError(f"{module} is in no layer: add it to LAYERS in {__file__}")


def _reaches(graph: Mapping[str, frozenset[str]], start: str, goal: str) -> list[str] | None:
    """A path of imports from ``start`` to ``goal``, or None."""
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        node = frontier.pop()
        for child in sorted(graph[node]):
            if child in came_from or child == start:
                continue
            came_from[child] = node
            if child == goal:
                path = [goal]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return path[::-1]
            frontier.append(child)
    return None


def _lines(path: Path) -> int:
    with path.open("rb") as handle:
        return sum(1 for _ in handle)


def test_the_import_graph_sees_function_level_and_relative_imports() -> None:
    graph = import_graph()
    # a relative import of a sibling module, and one from a package's __init__
    assert "reasoning_replay.history.jsonspans" in graph["reasoning_replay.history.scan"]
    assert "reasoning_replay.suite.cases" in graph["reasoning_replay.suite"]  # in a function
    # an import under TYPE_CHECKING and again in a function
    assert "reasoning_replay.history.store_walk" in graph["reasoning_replay.history.walk"]


def test_the_circle_finder_names_each_circle() -> None:
    graph = {
        "a": frozenset({"b"}),
        "b": frozenset({"c"}),
        "c": frozenset({"a"}),
        "d": frozenset({"e"}),
        "e": frozenset({"d", "f"}),
        "f": frozenset(),
    }
    assert import_circles(graph) == [["a", "b", "c"], ["d", "e"]]
    assert import_circles({"a": frozenset({"b"}), "b": frozenset()}) == []


def test_the_package_has_no_import_circle() -> None:
    circles = import_circles(import_graph())
    named = [" -> ".join(map(_short, circle)) for circle in circles]
    assert not circles, f"{len(circles)} import circle(s): " + "; ".join(named)


def test_each_part_imports_only_parts_below_it() -> None:
    upward = []
    for module, targets in import_graph().items():
        for target in sorted(targets):
            if layer_of(target) <= layer_of(module):
                continue
            pair = (_short(module), _short(target))
            if pair not in UPWARD_IMPORTS:
                upward.append(f"{pair[0]} imports {pair[1]}")
    assert not upward, "imports that run up the layers (ARCHITECTURE.md): " + "; ".join(upward)


def test_every_upward_import_exception_is_still_needed() -> None:
    graph = import_graph()
    stale = [
        f"{a} -> {b}"
        for a, b in UPWARD_IMPORTS
        if f"{PACKAGE}.{b}" not in graph.get(f"{PACKAGE}.{a}", frozenset())
    ]
    assert not stale, "remove from UPWARD_IMPORTS: " + ", ".join(stale)


def test_lower_modules_of_a_part_do_not_reach_the_upper_ones() -> None:
    graph = import_graph()
    wrong = []
    for lower, upper in BELOW:
        assert f"{PACKAGE}.{lower}" in graph and f"{PACKAGE}.{upper}" in graph, (lower, upper)
        path = _reaches(graph, f"{PACKAGE}.{lower}", f"{PACKAGE}.{upper}")
        if path is not None:
            wrong.append(" -> ".join(map(_short, path)))
    assert not wrong, "a lower module reaches an upper one: " + "; ".join(wrong)


def _checked_modules() -> list[Path]:
    return sorted([*(SOURCE_ROOT / PACKAGE).rglob("*.py"), *(REPO / "tools").rglob("*.py")])


def test_every_module_of_the_reference_and_tools_is_at_most_400_lines() -> None:
    too_long = [
        f"{path.relative_to(REPO)} ({_lines(path)} lines)"
        for path in _checked_modules()
        if _lines(path) > MAX_LINES and path.relative_to(REPO).as_posix() not in LONG_MODULES
    ]
    assert not too_long, "over 400 lines, not in LONG_MODULES: " + ", ".join(too_long)


def test_every_long_module_exception_is_still_long() -> None:
    stale = [
        name
        for name in LONG_MODULES
        if not (REPO / name).is_file() or _lines(REPO / name) <= MAX_LINES
    ]
    assert not stale, "remove from LONG_MODULES (gone or now short): " + ", ".join(stale)
