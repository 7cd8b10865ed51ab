"""openai-agents as a known implementation: its expectations file, its adapter and its facts.

The facts need the environment made by ``python tools/install_implementation.py openai-agents``
(``.implementations/openai-agents/``); without it that test is skipped (a failure in CI,
tests/conftest.py). Its run against these expectations is tests/test_implementation_runs.py's.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from reasoning_replay.suite.expectations import Expectations, load_expectations
from reasoning_replay.suite.vectors import load_suite

REPO = Path(__file__).resolve().parents[1]
HERE = REPO / "conformance" / "implementations" / "openai-agents"
EXPECTATIONS = HERE / "expectations.yaml"
ADAPTER = HERE / "adapter.py"
FACTS = HERE / "facts.py"
ENV = REPO / ".implementations" / "openai-agents"
ENV_PYTHON = ENV / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
INSTALLED = pytest.mark.skipif(
    not ENV_PYTHON.exists(),
    reason="openai-agents is not installed: python tools/install_implementation.py openai-agents",
)

ANCHOR = re.compile(r'<a id="([^"]+)"></a>')
# A reason opens with the rules it breaks: "SPEC D3: ..." or "SPEC P4/D5: ...".
CITATION = re.compile(r"^SPEC ([A-Za-z0-9-]+(?:/[A-Za-z0-9-]+)*): \S")
RULE_NAME = re.compile(r"(?<![\w.+-])(?:ST|CL|[ECPDRTFKHSU])\d+(?:-[a-z]+)?(?![\w.])")
# Every xfail of the verdict profile names openai-agents' source: a module and a function.
SOURCE = re.compile(r"\w+(?:/\w+)*\.py::\w+")


def expectations() -> Expectations:
    loaded = load_expectations(EXPECTATIONS)
    assert isinstance(loaded, Expectations), f"{EXPECTATIONS} is invalid: {loaded}"
    return loaded


def reasons() -> dict[str, str]:
    return {entry.id: entry.reason for entry in expectations().entries}


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
            assert SOURCE.search(entry.reason), f"{entry.id}: the reason names no function"
        assert "the output differs" not in entry.reason, f"{entry.id}: no class explains it"


def test_every_entry_names_a_case_of_the_suite_once() -> None:
    suite = load_suite([REPO / "conformance" / "vectors"])
    ids = {name for case in suite.cases for name in case.names}
    seen: set[str] = set()
    for entry in expectations().entries:
        assert entry.id not in seen, f"{entry.id} is listed twice"
        seen.add(entry.id)
        assert entry.id in ids, f"{entry.id} is not a case id or alias of the suite"
        assert entry.state.value == "xfail", f"{entry.id}: only known failures are recorded"


@pytest.mark.parametrize(
    ("case", "rule", "where"),
    [
        # the same id with a new ciphertext replaces the earlier item (latest value, first place)
        ("replay/dedupe/conflict-kept", "D3", "deduplicate_input_items_preferring_latest"),
        ("replay/xai/reused-ids-sse", "D3", "deduplicate_input_items_preferring_latest"),
        ("dedupe/conflict", "D3", "_dedupe_key"),
        ("dedupe/providers-never-conflict", "D5", "_dedupe_key"),
        # no issuer for a Responses-route provider: another provider's ciphertext is replayed
        ("replay/issuer/other-issuer-dropped", "P4", "_remove_openai_responses_api_incompatible"),
        ("replay/issuer/codex-is-not-openai", "P4", "_output_item_to_input_item"),
        # store and include unset by default
        ("defaults/p5/update-capable-model-openai", "P5", "_build_response_create_kwargs"),
        ("defaults/p5/xai", "P5", "_build_response_create_kwargs"),
        # effort is request-level only: no configuration_update
        ("plan/baseline/update-before-new-turn", "F2", "ModelSettings.reasoning"),
    ],
)
def test_the_measured_deviations_show_with_their_rule_and_function(
    case: str, rule: str, where: str
) -> None:
    reason = reasons()[case]
    assert rule in reason.split(":")[0].removeprefix("SPEC ").split("/"), reason
    assert where in reason, reason


def test_environment_pins_the_measured_version() -> None:
    environment = json.loads((HERE / "environment.json").read_text(encoding="utf-8"))
    assert environment["version"] == "0.24.0"
    requirements = (HERE / environment["requirements"]).read_text(encoding="utf-8").splitlines()
    pins = [line for line in requirements if line and not line.startswith("#")]
    assert "openai-agents==0.24.0" in pins
    assert all("==" in line for line in pins), "every requirement is pinned exactly"


def test_openai_agents_files_are_ruff_clean() -> None:
    paths = [str(HERE), "tools/openai_agents_reasons.py", str(Path(__file__).relative_to(REPO))]
    for command in (["check", *paths], ["format", "--check", *paths]):
        result = subprocess.run(
            [sys.executable, "-m", "ruff", *command],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, result.stdout + result.stderr


def test_the_committed_run_announces_the_items_form_and_no_provenance() -> None:
    """Its run against these expectations is tests/test_implementation_runs.py's."""
    report = REPO / "conformance" / "implementations" / "reports" / "openai-agents.json"
    document = json.loads(report.read_text(encoding="utf-8"))
    assert document["implementation"]["history_formats"] == ["items"]
    assert document["implementation"]["provenance"] == "none"


@INSTALLED
def test_facts_the_vectors_cannot_show() -> None:
    """README.md "Facts measured": no issuer is recorded for a Responses-route provider; a
    foreign item with the native item's id takes its place and is then dropped; the generated
    key is not K1's (and none for xAI)."""
    done = subprocess.run(
        [str(ENV_PYTHON), str(FACTS)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    facts: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert facts["version"] == "0.24.0"
    assert "provider_data" not in facts["issuer_recorded"]
    assert facts["issuer_recorded"]["encrypted_content"] == "gAAAA-native"
    assert facts["foreign_collision"] == [], "the native item is lost"
    keys = facts["keys"]
    assert re.fullmatch(r"agents-sdk:run:[0-9a-f]{32}", keys["no_session"])
    first, second = keys["session"]
    assert first == second
    assert re.fullmatch(r"agents-sdk:session:[0-9a-f]{32}", first)
    assert keys["xai"] is None
