"""``tools/sdk_matrix.py`` without building environments: versions, JUnit counts, the verdict
of a row and the tables. ``python tools/sdk_matrix.py`` itself runs ``tests/sdk`` per SDK."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

TOOLS_DIR = Path(__file__).resolve().parent.parent / "tools"


@pytest.fixture(scope="module")
def matrix() -> ModuleType:
    if str(TOOLS_DIR) not in sys.path:
        sys.path.insert(0, str(TOOLS_DIR))
    return importlib.import_module("sdk_matrix")


def test_versions_are_deduplicated_and_ordered_by_release_number(matrix: ModuleType) -> None:
    chosen = matrix.chosen_versions(["3.10.0", "2.53.0", "3.9.1", "3.10.0"], "3.57.0")
    assert chosen == ["2.53.0", "3.9.1", "3.10.0", "3.57.0"]
    assert matrix.chosen_versions(["3.57.0"], "3.57.0") == ["3.57.0"]


def test_newest_release_is_read_from_pip_index_output(matrix: ModuleType) -> None:
    output = "openai (3.57.0)\nAvailable versions: 3.57.0, 3.56.0, 2.53.0\n"
    assert matrix.newest_in_pip_index("WARNING: experimental\n" + output) == "3.57.0"
    with pytest.raises(RuntimeError):
        matrix.newest_in_pip_index("ERROR: No matching distribution found for openai")


def test_junit_counts_take_errors_as_failures(matrix: ModuleType, tmp_path: Path) -> None:
    report = tmp_path / "junit.xml"
    report.write_text(
        '<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" '
        'errors="1" failures="2" skipped="3" tests="10" time="1.0"></testsuite></testsuites>'
    )
    assert matrix.junit_counts(report) == matrix.Counts(passed=4, failed=3, skipped=3)


def outcome(matrix: ModuleType, **changes: object) -> Any:
    fields: dict[str, object] = {
        "requested": "3.5.0",
        "installed": "3.5.0",
        "http": "httpx2 2.16.2",
        "websockets": "15.0.1",
        "counts": matrix.Counts(50, 0, 1),
        "setup_seconds": 30.0,
        "test_seconds": 5.0,
    }
    return matrix.Outcome(**{**fields, **changes})


@pytest.mark.parametrize(
    ("changes", "ok"),
    [
        ({}, True),
        ({"installed": "3.6.0"}, False),  # pip resolved another release than asked for
        ({"counts": None}, False),  # no report: pytest did not run
        ({"problem": "pytest exit 4"}, False),
    ],
)
def test_a_row_is_ok_only_for_the_requested_release_with_passes_and_no_failure(
    matrix: ModuleType, changes: dict[str, object], ok: bool
) -> None:
    assert outcome(matrix, **changes).ok is ok
    for counts, expected in (((0, 0, 51), False), ((49, 1, 1), False)):
        failing = outcome(matrix, counts=matrix.Counts(*counts))
        assert failing.ok is expected


def test_markdown_table_has_a_row_per_version(matrix: ModuleType) -> None:
    rows = [outcome(matrix), outcome(matrix, installed="-", requested="9.9.9", counts=None)]
    lines = matrix.markdown_table(rows).splitlines()
    assert len(lines) == 4 and lines[0].startswith("| openai | HTTP library |")
    assert lines[2] == "| 3.5.0 | httpx2 2.16.2 | 15.0.1 | 50 | 0 | 1 | 30.0 | 5.0 | ok |"
    assert lines[3].startswith("| 9.9.9 |") and lines[3].endswith("| FAILED |")


def test_markdown_replaces_only_the_generated_block(matrix: ModuleType, tmp_path: Path) -> None:
    document = tmp_path / "sdk-matrix.md"
    matrix.write_markdown(document, "first table\n")
    assert document.read_text() == f"{matrix.BEGIN}\nfirst table\n{matrix.END}\n"
    document.write_text("# Title\n\n" + document.read_text() + "\nWhat is asserted.\n")
    matrix.write_markdown(document, "second table\n")
    assert document.read_text() == (
        f"# Title\n\n{matrix.BEGIN}\nsecond table\n{matrix.END}\n\nWhat is asserted.\n"
    )
