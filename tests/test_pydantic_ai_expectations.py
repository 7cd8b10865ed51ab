"""pydantic-ai as a known implementation: its expectations file and its adapter.

Its run against these expectations is tests/test_implementation_runs.py's (with the other
implementations').
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

from reasoning_replay.suite.expectations import Expectations, load_expectations
from reasoning_replay.suite.vectors import load_suite

REPO = Path(__file__).resolve().parents[1]
HERE = REPO / "conformance" / "implementations" / "pydantic-ai"
EXPECTATIONS = HERE / "expectations.yaml"
ADAPTER = HERE / "adapter.py"

ANCHOR = re.compile(r'<a id="([^"]+)"></a>')
# A reason opens with the rules it breaks: "SPEC P2: ..." or "SPEC P2/F2: ...".
CITATION = re.compile(r"^SPEC ([A-Za-z0-9-]+(?:/[A-Za-z0-9-]+)*): \S")
RULE_NAME = re.compile(r"(?<![\w.+-])(?:ST|[ECPDRTFKHS])\d+(?:-[a-z]+)?(?![\w.])")
# Every xfail names pydantic-ai's source function: a module path and a function after "::".
SOURCE = re.compile(r"\w+(?:/\w+)*\.py::\w+")


def expectations() -> Expectations:
    loaded = load_expectations(EXPECTATIONS)
    assert isinstance(loaded, Expectations), f"{EXPECTATIONS} is invalid: {loaded}"
    return loaded


def test_every_entry_cites_existing_spec_rules_and_a_source_function() -> None:
    anchors = set(ANCHOR.findall((REPO / "SPEC.md").read_text(encoding="utf-8")))
    loaded = expectations()
    assert loaded.entries
    for entry in loaded.entries:
        cited = CITATION.match(entry.reason)
        assert cited, f"{entry.id}: the reason does not open with 'SPEC <rule>: ': {entry.reason!r}"
        named = set(cited.group(1).split("/")) | set(RULE_NAME.findall(entry.reason))
        assert named <= anchors, f"{entry.id}: no such SPEC anchor {sorted(named - anchors)}"
        if entry.profile is None or entry.profile.value != "diagnostics":
            assert SOURCE.search(entry.reason) or "raises before sending" in entry.reason, (
                f"{entry.id}: the reason names no pydantic-ai function"
            )


def test_every_entry_names_a_case_of_the_suite_once() -> None:
    suite = load_suite([REPO / "conformance" / "vectors"])
    ids = {name for case in suite.cases for name in case.names}
    seen: set[str] = set()
    for entry in expectations().entries:
        assert entry.id not in seen, f"{entry.id} is listed twice"
        seen.add(entry.id)
        assert entry.id in ids, f"{entry.id} is not a case id or alias of the suite"
        assert entry.state.value == "xfail", f"{entry.id}: only known failures are recorded"


def test_trailing_placement_shows_as_f2_and_f4_failures() -> None:
    """pydantic-ai appends an effort change at the end of a step's request (SPEC F2, F4)."""
    reasons = {entry.id: entry.reason for entry in expectations().entries}
    after_user = reasons["plan/trailing-placement/stored-update-after-user-message"]
    on_tool_step = reasons["plan/trailing-placement/change-during-tool-loop-not-appended"]
    assert "F2" in after_user.split(":")[0]
    assert "_record_model_settings_changes" in after_user
    assert "F4" in on_tool_step.split(":")[0]


def test_adapter_is_independent_of_the_reference() -> None:
    """The adapter runs in pydantic-ai's own environment and measures pydantic-ai alone."""
    tree = ast.parse(ADAPTER.read_text(encoding="utf-8"))
    imported = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert not [m for m in imported if m.split(".")[0] == "reasoning_replay"]
    assert "pydantic_ai.models.openai" in imported


def test_environment_pins_the_measured_version() -> None:
    environment = json.loads((HERE / "environment.json").read_text(encoding="utf-8"))
    assert environment["version"] == "2.68.0"
    requirements = (HERE / environment["requirements"]).read_text(encoding="utf-8").splitlines()
    pins = [line for line in requirements if line and not line.startswith("#")]
    assert "pydantic-ai-slim==2.68.0" in pins
    assert all("==" in line for line in pins), "every requirement is pinned exactly"


def test_pydantic_ai_files_are_ruff_clean() -> None:
    paths = [str(HERE), "tools/pydantic_ai_reasons.py", str(Path(__file__).relative_to(REPO))]
    for command in (["check", *paths], ["format", "--check", *paths]):
        result = subprocess.run(
            [sys.executable, "-m", "ruff", *command],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, result.stdout + result.stderr
