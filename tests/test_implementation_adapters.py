"""Every known implementation's adapter measures the implementation alone: no Python file under
``conformance/implementations/`` imports ``reasoning_replay`` (FRAMEWORKS: an adapter calls the
framework's own code and is never helped by the reference), the modules the Python adapters
share (``_protocol_loop.py``, ``_dedupe_by_replay.py``) included."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import imported_modules

REPO = Path(__file__).resolve().parents[1]
IMPLEMENTATIONS = REPO / "conformance" / "implementations"
SOURCES = sorted([*IMPLEMENTATIONS.glob("*.py"), *IMPLEMENTATIONS.glob("*/*.py")])


def test_every_implementation_has_an_adapter() -> None:
    # reports/ holds the runs; __pycache__/ is the shared modules' bytecode
    directories = [
        p
        for p in IMPLEMENTATIONS.iterdir()
        if p.is_dir() and p.name not in ("reports", "__pycache__")
    ]
    assert directories
    for directory in directories:
        assert any(directory.glob("adapter.*")), f"{directory.name} has no adapter"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(IMPLEMENTATIONS)))
def test_no_adapter_imports_the_reference(path: Path) -> None:
    imported = imported_modules(path)
    assert not [m for m in imported if m.split(".")[0] == "reasoning_replay"], path


def test_the_modules_the_adapters_share_are_among_the_sources_checked() -> None:
    shared = {IMPLEMENTATIONS / "_protocol_loop.py", IMPLEMENTATIONS / "_dedupe_by_replay.py"}
    assert shared <= set(SOURCES)
