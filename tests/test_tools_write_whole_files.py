"""Every file a tool in ``tools/`` writes for its user (a ``--json`` or ``--report`` output, a
generated corpus, a rewritten SPEC.md, vector or expectations file) is replaced whole or not at
all through ``reasoning_replay.atomic_files``, as the CLI's writers are (SPEC H5): a killed run
leaves the old file or none, never a cut one, and no temporary file.

The check reads the tools' source: a call to ``write_text``, ``write_bytes`` or an ``open`` in a
writing mode is allowed only in the functions listed below, each with why its file is not an
output (it is scratch space that dies with the run, or not a file at all).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

TOOLS = Path(__file__).resolve().parent.parent / "tools"

# (tool, function) -> why a direct write is right there
SCRATCH_WRITERS = {
    ("bench_distributed.py", "trial"): "opens os.devnull, a sink for the CLI's output",
    ("bench_runner_memory.py", "measure"): "a suite and an adapter in a TemporaryDirectory",
    ("install_implementation.py", "fill_wheelhouse"): (
        "the completion marker, inside a download directory renamed into place whole"
    ),
    ("release.py", "scratch_venv"): "a .pth file inside the scratch virtual environment",
    ("release.py", "check_npm"): "a package.json and a test in the scratch npm project",
    ("release.py", "check_schemas"): "a record to validate in the scratch directory",
    ("spec_examples.py", "run_command"): "the example session in a TemporaryDirectory",
}
WRITING_MODES = set("wax+")


def _direct_writes(path: Path) -> Iterator[tuple[int, str]]:
    """(line, enclosing function) of every direct write in ``path``'s source."""
    scopes = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef)
    for scope in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(scope, scopes):
            name = getattr(scope, "name", "<module>")
            for node in _own_nodes(scope):
                if isinstance(node, ast.Call) and _writes(node):
                    yield node.lineno, name


def _own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``scope`` outside the functions defined in it."""
    for child in ast.iter_child_nodes(scope):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        yield child
        yield from _own_nodes(child)


def _writes(call: ast.Call) -> bool:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name in {"write_text", "write_bytes"}:
        return True
    if name != "open":
        return False
    modes = [*call.args, *(k.value for k in call.keywords if k.arg == "mode")]
    return any(
        isinstance(m, ast.Constant) and isinstance(m.value, str) and set(m.value) & WRITING_MODES
        for m in modes
    )


def _every_direct_write() -> Iterator[tuple[str, int, str]]:
    for path in sorted(TOOLS.rglob("*.py")):
        for line, function in _direct_writes(path):
            yield path.relative_to(TOOLS).as_posix(), line, function


def test_tools_write_their_outputs_whole_or_not_at_all() -> None:
    outputs = [
        f"tools/{tool}:{line} in {function}"
        for tool, line, function in _every_direct_write()
        if (tool, function) not in SCRATCH_WRITERS
    ]
    assert outputs == [], "write these with reasoning_replay.atomic_files.replace_file"


def test_every_scratch_writer_listed_still_writes_directly() -> None:
    found = {(tool, function) for tool, _, function in _every_direct_write()}
    assert sorted(set(SCRATCH_WRITERS) - found) == []


def test_the_check_sees_each_kind_of_direct_write(tmp_path: Path) -> None:
    source = tmp_path / "tool.py"
    source.write_text(
        "def a(p):\n    p.write_text('x')\n"
        "def b(p):\n    p.write_bytes(b'x')\n"
        "def c(p):\n    with open(p, 'wb') as f:\n        pass\n"
        "def d(p):\n    with p.open(mode='a') as f:\n        pass\n"
        "def e(p):\n    with p.open('r') as f:\n        pass\n"
        "p.write_text('at import')\n",
        encoding="utf-8",
    )
    assert sorted(_direct_writes(source)) == [
        (2, "a"),
        (4, "b"),
        (6, "c"),
        (9, "d"),
        (14, "<module>"),
    ]
