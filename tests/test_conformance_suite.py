"""The bundled suite end to end: it lints clean, and every implementation we ship passes it all.

These are the acceptance runs of the suite itself: the reference in-process and as an adapter
program, the independent JavaScript implementation through the protocol, and the schema's
agreement with every schema-visible read vector under three validators.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from reasoning_replay.cli.main import main as conformance

REPO = Path(__file__).resolve().parents[1]
JS_ADAPTER = REPO / "conformance" / "adapters" / "js" / "bin" / "adapter.js"


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.fail("Node >= 20 is required for the JavaScript implementation (see README)")
    return node


def test_suite_lints_clean_and_bundle_is_fresh(capsys: pytest.CaptureFixture[str]) -> None:
    assert conformance(["check"]) == 0, capsys.readouterr().out


def test_reference_passes_every_vector_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    assert conformance(["run", "--no-progress"]) == 0, capsys.readouterr().out


def test_reference_adapter_program_passes_every_vector(capsys: pytest.CaptureFixture[str]) -> None:
    command = f"{sys.executable} -m reasoning_replay.adapter"
    assert conformance(["run", "--no-progress", "--impl", command]) == 0, capsys.readouterr().out


def test_javascript_implementation_passes_every_vector(capsys: pytest.CaptureFixture[str]) -> None:
    command = f"{_node()} {JS_ADAPTER}"
    assert conformance(["run", "--no-progress", "--impl", command]) == 0, capsys.readouterr().out


def _items_form_run(command: str, capsys: pytest.CaptureFixture[str]) -> str:
    """A run judging ``command`` as an implementation that reads only the items form (SPEC CL4):
    it exits 0, and its summary line is returned."""
    argv = ["run", "--no-progress", "--impl", command, "--history-format", "items"]
    status = conformance(argv)
    out = capsys.readouterr().out
    assert status == 0, out
    return out.rstrip().splitlines()[-1]


def test_reference_adapter_program_passes_every_neutral_case_in_the_items_form(
    capsys: pytest.CaptureFixture[str],
) -> None:
    summary = _items_form_run(f"{sys.executable} -m reasoning_replay.adapter", capsys)
    assert "not_applicable" in summary and "skipped" not in summary


def test_javascript_implementation_passes_every_neutral_case_in_the_items_form(
    capsys: pytest.CaptureFixture[str],
) -> None:
    summary = _items_form_run(f"{_node()} {JS_ADAPTER}", capsys)
    assert "not_applicable" in summary


def test_javascript_oneshot_mode_passes_a_sample(capsys: pytest.CaptureFixture[str]) -> None:
    command = f"{_node()} {JS_ADAPTER} --oneshot"
    result = conformance(
        ["run", "--no-progress", "--oneshot", "--operation", "telemetry", "--impl", command]
    )
    assert result == 0, capsys.readouterr().out


def test_envelope_schema_agrees_with_read_vectors_under_three_validators() -> None:
    if not (JS_ADAPTER.parents[1] / "node_modules" / "ajv").is_dir():
        pytest.fail("Ajv is missing: run `npm ci --prefix conformance/adapters/js` (see README)")
    result = subprocess.run(
        [sys.executable, str(REPO / "tools" / "schema_agreement.py")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 disagree" in result.stdout
