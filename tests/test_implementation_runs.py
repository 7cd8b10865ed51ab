"""Every known implementation runs against its expectations, and its committed report is that run.

One test per implementation of ``tools/known_implementations.py`` (the reference, JavaScript,
Rust, fast-agent and every framework with an ``environment.json``): ``conformance run`` with its
adapter and expectations file, exactly as ``tools/run_implementations.py`` runs it, must exit 0,
and every case must have the outcome the committed report (the source of the results pages)
records, on the same suite. A framework is judged on at least 150 applicable ``replay``,
``dedupe`` and ``plan`` cases (issue 23).

Without an implementation's environment its test skips, naming the command that makes it; in CI
(``CI`` set) that skip is a failure (tests/conftest.py): ``.ci/run`` installs every one.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
TOOLS = REPO / "tools"
if str(TOOLS) not in sys.path:
    sys.path.insert(0, str(TOOLS))
known_implementations: ModuleType = importlib.import_module("known_implementations")
run_implementations: ModuleType = importlib.import_module("run_implementations")

KNOWN = known_implementations.known()
JUDGED = ("replay", "dedupe", "plan")
GUARD_SECONDS = 900  # a hang guard, not a measurement


def outcomes(report: dict[str, Any]) -> dict[str, dict[str, str]]:
    return {
        case["id"]: {profile: judged["outcome"] for profile, judged in case["profiles"].items()}
        for case in report["cases"]
    }


def test_every_implementation_with_a_report_is_known() -> None:
    reports = {path.stem for path in (REPO / "conformance/implementations/reports").glob("*.json")}
    assert reports <= {entry.key for entry in KNOWN}
    assert {"reference", "javascript", "rust", "fast-agent"} <= reports


@pytest.mark.parametrize("entry", KNOWN, ids=[entry.key for entry in KNOWN])
def test_run_is_as_expected_and_the_committed_report_is_that_run(
    entry: Any, tmp_path: Path
) -> None:
    if not entry.is_ready():
        pytest.skip(f"{entry.key} is not installed: {entry.prepare}")
    path = tmp_path / f"{entry.key}.json"
    done = subprocess.run(
        run_implementations.run_command(entry, path),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=GUARD_SECONDS,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    fresh = json.loads(path.read_text(encoding="utf-8"))
    committed = json.loads((REPO / entry.report).read_text(encoding="utf-8"))
    stale = f"{entry.report} is stale: python tools/run_implementations.py {entry.key}"
    assert fresh["suite"]["sha256"] == committed["suite"]["sha256"], stale
    assert fresh["implementation"] == committed["implementation"], stale
    recorded = outcomes(committed)
    changed = {
        case: (recorded.get(case), now)
        for case, now in outcomes(fresh).items()
        if recorded.get(case) != now
    }
    assert not changed, f"{stale}; outcomes changed: {dict(list(changed.items())[:5])}"
    if entry.framework:
        applicable = [
            case
            for case in fresh["cases"]
            if case["operation"] in JUDGED and case["outcome"] not in ("not_applicable", "skipped")
        ]
        assert len(applicable) >= 150, "issue 23: judged on at least 150 applicable cases"
