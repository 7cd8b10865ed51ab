"""langchain-openai and the Vercel AI SDK as known implementations: expectations and adapters.

Their runs against these expectations are tests/test_implementation_runs.py's (with the other
implementations'). ``tools/framework_reasons.py`` writes both expectations files from a run.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from reasoning_replay.suite.expectations import Expectations, load_expectations
from reasoning_replay.suite.vectors import load_suite

REPO = Path(__file__).resolve().parents[1]
IMPLEMENTATIONS = REPO / "conformance" / "implementations"

ANCHOR = re.compile(r'<a id="([^"]+)"></a>')
# A reason opens with the rules it breaks: "SPEC P2: ..." or "SPEC P2/F2: ...".
CITATION = re.compile(r"^SPEC ([A-Za-z0-9-]+(?:/[A-Za-z0-9-]+)*): \S")
RULE_NAME = re.compile(r"(?<![\w.+-])(?:ST|[ECPDRTFKHS])\d+(?:-[a-z]+)?(?![\w.])")


@dataclass(frozen=True)
class Framework:
    """One framework served by tools/framework_reasons.py, and how to run its adapter."""

    name: str
    version: str
    #: the framework's source function, as every xfail names it: ``path/file.ext::function``
    source: re.Pattern[str]
    adapter: str


LANGCHAIN = Framework(
    name="langchain-openai",
    version="1.7.4",
    source=re.compile(r"langchain_openai/[\w/]+\.py::\w+"),
    adapter="adapter.py",
)
VERCEL = Framework(
    name="vercel-ai",
    version="7.0.173",
    source=re.compile(r"@ai-sdk/openai/src/[\w/-]+\.ts::\w+"),
    adapter="adapter.mjs",
)
FRAMEWORKS = [LANGCHAIN, VERCEL]
IDS = [framework.name for framework in FRAMEWORKS]


def expectations(framework: Framework) -> Expectations:
    path = IMPLEMENTATIONS / framework.name / "expectations.yaml"
    loaded = load_expectations(path)
    assert isinstance(loaded, Expectations), f"{path} is invalid: {loaded}"
    return loaded


def reasons(framework: Framework) -> dict[str, str]:
    return {entry.id: entry.reason for entry in expectations(framework).entries}


@pytest.mark.parametrize("framework", FRAMEWORKS, ids=IDS)
def test_every_entry_cites_existing_spec_rules_and_a_source_function(
    framework: Framework,
) -> None:
    anchors = set(ANCHOR.findall((REPO / "SPEC.md").read_text(encoding="utf-8")))
    loaded = expectations(framework)
    assert loaded.entries
    for entry in loaded.entries:
        cited = CITATION.match(entry.reason)
        assert cited, f"{entry.id}: the reason does not open with 'SPEC <rule>: ': {entry.reason!r}"
        named = set(cited.group(1).split("/")) | set(RULE_NAME.findall(entry.reason))
        assert named <= anchors, f"{entry.id}: no such SPEC anchor {sorted(named - anchors)}"
        assert framework.source.search(entry.reason), f"{entry.id}: names no source function"
        assert "differs at" not in entry.reason, f"{entry.id}: a difference no class explains"


@pytest.mark.parametrize("framework", FRAMEWORKS, ids=IDS)
def test_every_entry_names_a_case_of_the_suite_once(framework: Framework) -> None:
    suite = load_suite([REPO / "conformance" / "vectors"])
    ids = {name for case in suite.cases for name in case.names}
    seen: set[str] = set()
    for entry in expectations(framework).entries:
        assert entry.id not in seen, f"{entry.id} is listed twice"
        seen.add(entry.id)
        assert entry.id in ids, f"{entry.id} is not a case id or alias of the suite"
        assert entry.state.value == "xfail", f"{entry.id}: only known failures are recorded"


def test_langchain_openai_deviations_show_as_failures() -> None:
    """No dedupe, no issuer check, `store`/`include` left to the user (issue 23)."""
    found = reasons(LANGCHAIN)
    assert found["dedupe/exact-pair"].startswith("SPEC D2:")
    assert "_construct_responses_api_input" in found["dedupe/exact-pair"]
    assert "P4" in found["replay/issuer/other-issuer-dropped"].split(":")[0]
    assert found["defaults/p5/xai"].startswith("SPEC P5:")


def test_vercel_ai_deviations_show_as_failures() -> None:
    """Of the SDK's public replay bugs, those present at 4.0.118: function-call ids dropped on
    replay, items re-sent alongside previous_response_id; and no dedupe, no issuer check."""
    found = reasons(VERCEL)
    assert (
        "function call is sent without its `id`"
        in found["replay/order/reasoning-before-tool-calls"]
    )
    assert found["plan/transport/ws-continuation-request-2"].split(":")[0].endswith("F9")
    assert "re-sends the history's items" in found["plan/transport/ws-continuation-request-2"]
    assert found["dedupe/exact-pair"].startswith("SPEC D2:")
    assert "P4" in found["replay/issuer/other-issuer-dropped"].split(":")[0]


def test_every_adapter_is_independent_of_the_reference() -> None:
    """Every implementation's adapter measures its implementation alone: none imports the
    reference (``reasoning_replay``, or the project's JavaScript implementation)."""
    python_import = re.compile(r"^\s*(?:from|import)\s+reasoning_replay\b", re.MULTILINE)
    js_import = re.compile(
        r"""(?:from|import\(|require\()\s*["'][^"']*(?:reasoning-replay|adapters/js)"""
    )
    adapters = sorted(IMPLEMENTATIONS.glob("*/adapter.*"))
    assert {path.parent.name for path in adapters} >= {"fast-agent", *IDS}
    for path in adapters:
        text = path.read_text(encoding="utf-8")
        assert not python_import.search(text), f"{path} imports reasoning_replay"
        assert not js_import.search(text), f"{path} imports the project's JS implementation"


@pytest.mark.parametrize("framework", FRAMEWORKS, ids=IDS)
def test_environment_pins_the_measured_version(framework: Framework) -> None:
    here = IMPLEMENTATIONS / framework.name
    environment = json.loads((here / "environment.json").read_text(encoding="utf-8"))
    assert environment["version"] == framework.version
    if environment["kind"] == "python":
        lines = (here / environment["requirements"]).read_text(encoding="utf-8").splitlines()
        pins = [line for line in lines if line and not line.startswith("#")]
        assert f"{framework.name}=={framework.version}" in pins
        assert all("==" in line for line in pins), "every requirement is pinned exactly"
    else:
        package = json.loads((here / "package.json").read_text(encoding="utf-8"))
        lock = json.loads((here / "package-lock.json").read_text(encoding="utf-8"))
        assert package["dependencies"] == {"ai": "7.0.173", "@ai-sdk/openai": "4.0.118"}
        for name, version in package["dependencies"].items():
            assert lock["packages"][f"node_modules/{name}"]["version"] == version


def test_framework_files_are_ruff_clean() -> None:
    paths = [
        str(IMPLEMENTATIONS / "langchain-openai"),
        "tools/framework_reasons.py",
        str(Path(__file__).relative_to(REPO)),
    ]
    for command in (["check", *paths], ["format", "--check", *paths]):
        result = subprocess.run(
            [sys.executable, "-m", "ruff", *command],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, result.stdout + result.stderr
