"""The code-quality gates run as tests, so the README's one test command enforces them too."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)


def test_ruff_finds_nothing() -> None:
    if shutil.which("ruff") is None and not (Path(sys.executable).parent / "ruff").exists():
        pytest.fail("ruff is not installed: install the lint extras (README's test command)")
    result = _run(sys.executable, "-m", "ruff", "check", "reference_impl", "tests", "tools")
    assert result.returncode == 0, result.stdout + result.stderr


def test_reference_is_mypy_strict_clean() -> None:
    result = _run(sys.executable, "-m", "mypy", "--strict", "reference_impl/reasoning_replay")
    assert result.returncode == 0, result.stdout + result.stderr


def test_tools_are_mypy_strict_clean() -> None:
    # The tools import each other and the reference through sys.path; mypy finds both, and
    # pyproject's [tool.mypy] lets fast-agent's modules be missing (bench_vs_fast_agent.py runs
    # in fast-agent's own environment).
    result = _run(sys.executable, "-m", "mypy", "--strict", "tools")
    assert result.returncode == 0, result.stdout + result.stderr
