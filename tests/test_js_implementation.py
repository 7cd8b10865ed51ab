"""The JavaScript implementation's own tests (``node --test``) run with the rest of the suite, so
its declarations, helpers and adapter cannot drift unnoticed: README's test command covers them."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

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
