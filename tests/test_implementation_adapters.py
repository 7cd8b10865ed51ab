"""Every known implementation's adapter measures the implementation alone: no Python file under
``conformance/implementations/`` imports ``reasoning_replay`` (FRAMEWORKS: an adapter calls the
framework's own code and is never helped by the reference)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
IMPLEMENTATIONS = REPO / "conformance" / "implementations"
SOURCES = sorted(IMPLEMENTATIONS.glob("*/*.py"))


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    return names | {
        node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
    }


def test_every_implementation_has_an_adapter() -> None:
    directories = [p for p in IMPLEMENTATIONS.iterdir() if p.is_dir() and p.name != "reports"]
    assert directories
    for directory in directories:
        assert any(directory.glob("adapter.*")), f"{directory.name} has no adapter"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(IMPLEMENTATIONS)))
def test_no_adapter_imports_the_reference(path: Path) -> None:
    imported = imported_modules(path)
    assert not [m for m in imported if m.split(".")[0] == "reasoning_replay"], path
