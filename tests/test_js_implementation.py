"""The JavaScript implementation's own tests (``node --test``) run with the rest of the suite, so
its declarations, helpers and adapter cannot drift unnoticed: README's test command covers them."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from reasoning_replay.suite.profiles import OUTPUT_MEMBERS

JS_PACKAGE = Path(__file__).resolve().parents[1] / "conformance" / "adapters" / "js"
GUARD_SECONDS = 600  # a hang guard, not a measurement


def test_the_javascript_implementations_own_tests_pass() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is missing: the JavaScript implementation needs Node >= 20 (see README)")
    completed = subprocess.run(
        [node, "--test", "test/"],
        cwd=JS_PACKAGE,
        capture_output=True,
        text=True,
        check=False,
        timeout=GUARD_SECONDS,
    )
    failing = [line for line in completed.stdout.splitlines() if line.startswith("not ok")]
    assert completed.returncode == 0, "\n".join(failing) or completed.stdout[-4000:]


def test_the_node_test_helpers_verdict_table_is_the_references() -> None:
    """SPEC CL2's table, held twice: node-test.js's VERDICT_PROFILE and suite/profiles.py."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is missing: the JavaScript implementation needs Node >= 20 (see README)")
    script = (
        "import('./lib/node-test.js').then((m) => "
        "process.stdout.write(JSON.stringify(m.VERDICT_PROFILE)))"
    )
    completed = subprocess.run(
        [node, "-e", script],
        cwd=JS_PACKAGE,
        capture_output=True,
        text=True,
        check=True,
        timeout=GUARD_SECONDS,
    )
    table = json.loads(completed.stdout)

    expected_left_out = {op: sorted(m.left_out) for op, m in OUTPUT_MEMBERS.items() if m.left_out}
    expected_coded = {
        op: m.coded_findings for op, m in OUTPUT_MEMBERS.items() if m.coded_findings is not None
    }
    assert {op: sorted(names) for op, names in table["leftOut"].items()} == expected_left_out
    assert table["codedFindings"] == expected_coded
