"""fast-agent and the agent frameworks as known implementations: their expectations files, their
adapters, their pinned environments.

Their runs against these expectations are tests/test_implementation_runs.py's (with the other
implementations'). ``tools/framework_reasons.py`` writes every framework's expectations file from
a run; fast-agent's is written by hand. openai-agents' facts need the environment made by
``python tools/install_implementation.py openai-agents`` (``.implementations/openai-agents/``);
without it that test is skipped (a failure in CI, tests/conftest.py).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import pytest
from reasoning_replay.suite.expectations import Expectations, load_expectations
from reasoning_replay.suite.vectors import load_suite
from support import imported_modules

REPO = Path(__file__).resolve().parents[1]
IMPLEMENTATIONS = REPO / "conformance" / "implementations"

ANCHOR = re.compile(r'<a id="([^"]+)"></a>')
# A reason opens with the rules it breaks: "SPEC D3: ..." or "SPEC E4-total/P2: ...".
CITATION = re.compile(r"^SPEC ([A-Za-z0-9-]+(?:/[A-Za-z0-9-]+)*): \S")
# Any rule-like name elsewhere in a reason ("; and F11: ...", "(D2)") must be an anchor too.
RULE_NAME = re.compile(r"(?<![\w.+-])(?:ST|CL|[ECPDRTFKHSU])\d+(?:-[a-z]+)?(?![\w.])")
# A Python source function as a reason names it: a module path and a function after "::".
PYTHON_SOURCE = re.compile(r"\w+(?:/\w+)*\.py::\w+")


@dataclass(frozen=True)
class Framework:
    """One implementation judged against an expectations file of its own, and what its entries
    and its adapter must show."""

    name: str
    adapter: str
    #: a module of the implementation the (Python) adapter imports: it calls the package's own code
    calls: str | None
    #: the version ``environment.json`` pins and the requirement line that pins it; fast-agent's
    #: environment is tools/install_fast_agent.py's
    version: str | None = None
    requirement: str | None = None
    #: the implementation's source function, as every xfail of the verdict profile names it
    source: re.Pattern[str] | None = None
    #: the diagnostics profile's entries name it too
    source_in_diagnostics: bool = False
    #: a reason that names no function instead: the implementation raised before sending
    source_exempt: str | None = None
    #: what a reason the reasons tool could not explain holds
    unexplained: str | None = None
    #: entries may name cases by glob (a hand-written file)
    globs: bool = False


FAST_AGENT = Framework(
    name="fast-agent",
    adapter="adapter.py",
    calls="fast_agent.llm.provider.openai.responses_cache",
    globs=True,
)
LANGCHAIN = Framework(
    name="langchain-openai",
    adapter="adapter.py",
    calls="langchain_openai",
    version="1.7.4",
    requirement="langchain-openai==1.7.4",
    source=re.compile(r"langchain_openai/[\w/]+\.py::\w+"),
    source_in_diagnostics=True,
    unexplained="differs at",
)
OPENAI_AGENTS = Framework(
    name="openai-agents",
    adapter="adapter.py",
    calls="agents.run_internal.items",
    version="0.24.0",
    requirement="openai-agents==0.24.0",
    source=PYTHON_SOURCE,
    unexplained="the output differs",
)
PYDANTIC_AI = Framework(
    name="pydantic-ai",
    adapter="adapter.py",
    calls="pydantic_ai.models.openai",
    version="2.68.0",
    requirement="pydantic-ai-slim==2.68.0",
    source=PYTHON_SOURCE,
    source_exempt="raises before sending",
    unexplained="differs at",
)
VERCEL = Framework(
    name="vercel-ai",
    adapter="adapter.mjs",
    calls=None,
    version="7.0.173",
    source=re.compile(r"@ai-sdk/openai/src/[\w/-]+\.ts::\w+"),
    source_in_diagnostics=True,
    unexplained="differs at",
)
FRAMEWORKS = [FAST_AGENT, LANGCHAIN, OPENAI_AGENTS, PYDANTIC_AI, VERCEL]
IDS = [framework.name for framework in FRAMEWORKS]
PINNED = [framework for framework in FRAMEWORKS if framework.version is not None]
PYTHON_ADAPTERS = [framework for framework in FRAMEWORKS if framework.calls is not None]

OPENAI_AGENTS_ENV = REPO / ".implementations" / "openai-agents"
OPENAI_AGENTS_PYTHON = OPENAI_AGENTS_ENV / (
    "Scripts/python.exe" if sys.platform == "win32" else "bin/python"
)
OPENAI_AGENTS_INSTALLED = pytest.mark.skipif(
    not OPENAI_AGENTS_PYTHON.exists(),
    reason="openai-agents is not installed: python tools/install_implementation.py openai-agents",
)


def spec_anchors() -> set[str]:
    return set(ANCHOR.findall((REPO / "SPEC.md").read_text(encoding="utf-8")))


def expectations(framework: Framework) -> Expectations:
    path = IMPLEMENTATIONS / framework.name / "expectations.yaml"
    loaded = load_expectations(path)
    assert isinstance(loaded, Expectations), f"{path} is invalid: {loaded}"
    return loaded


def reasons(framework: Framework) -> dict[str, str]:
    return {entry.id: entry.reason for entry in expectations(framework).entries}


def test_spec_anchors_are_found() -> None:
    assert {"E1", "D3", "F6", "E4-total"} <= spec_anchors()


@pytest.mark.parametrize("framework", FRAMEWORKS, ids=IDS)
def test_every_entry_cites_existing_spec_rules_and_a_source_function(
    framework: Framework,
) -> None:
    anchors = spec_anchors()
    loaded = expectations(framework)
    assert loaded.entries
    for entry in loaded.entries:
        cited = CITATION.match(entry.reason)
        assert cited, f"{entry.id}: the reason does not open with 'SPEC <rule>: ': {entry.reason!r}"
        named = set(cited.group(1).split("/")) | set(RULE_NAME.findall(entry.reason))
        assert named <= anchors, f"{entry.id}: no such SPEC anchor {sorted(named - anchors)}"
        diagnostics = entry.profile is not None and entry.profile.value == "diagnostics"
        exempt = framework.source_exempt is not None and framework.source_exempt in entry.reason
        if framework.source and (framework.source_in_diagnostics or not diagnostics):
            assert framework.source.search(entry.reason) or exempt, (
                f"{entry.id}: the reason names no {framework.name} function"
            )
        if framework.unexplained:
            assert framework.unexplained not in entry.reason, f"{entry.id}: no class explains it"


@pytest.mark.parametrize("framework", FRAMEWORKS, ids=IDS)
def test_every_entry_names_a_case_of_the_suite_once(framework: Framework) -> None:
    suite = load_suite([REPO / "conformance" / "vectors"])
    names = [name for case in suite.cases for name in case.names]
    exact = set(names)
    seen: set[str] = set()
    for entry in expectations(framework).entries:
        assert entry.id not in seen, f"{entry.id} is listed twice"
        seen.add(entry.id)
        if framework.globs and entry.is_glob:
            assert any(fnmatchcase(n, entry.id) for n in names), f"{entry.id} matches no case"
        else:
            assert entry.id in exact, f"{entry.id} is not a case id or alias of the suite"
        assert entry.state.value == "xfail", f"{entry.id}: only known failures are recorded"


@pytest.mark.parametrize("framework", PYTHON_ADAPTERS, ids=[f.name for f in PYTHON_ADAPTERS])
def test_adapter_calls_the_implementations_own_code_and_not_the_reference(
    framework: Framework,
) -> None:
    """The adapter runs in the implementation's own environment and measures it alone."""
    imported = imported_modules(IMPLEMENTATIONS / framework.name / framework.adapter)
    assert not [m for m in imported if m.split(".")[0] == "reasoning_replay"]
    assert framework.calls in imported


def test_every_adapter_is_independent_of_the_reference() -> None:
    """Every implementation's adapter measures its implementation alone: none imports the
    reference (``reasoning_replay``, or the project's JavaScript implementation)."""
    python_import = re.compile(r"^\s*(?:from|import)\s+reasoning_replay\b", re.MULTILINE)
    js_import = re.compile(
        r"""(?:from|import\(|require\()\s*["'][^"']*(?:reasoning-replay|adapters/js)"""
    )
    adapters = sorted(IMPLEMENTATIONS.glob("*/adapter.*"))
    assert {path.parent.name for path in adapters} >= set(IDS)
    shared = sorted(IMPLEMENTATIONS.glob("_*.py"))  # the modules the Python adapters share
    assert shared
    for path in [*adapters, *shared]:
        text = path.read_text(encoding="utf-8")
        assert not python_import.search(text), f"{path} imports reasoning_replay"
        assert not js_import.search(text), f"{path} imports the project's JS implementation"


@pytest.mark.parametrize("framework", PINNED, ids=[f.name for f in PINNED])
def test_environment_pins_the_measured_version(framework: Framework) -> None:
    here = IMPLEMENTATIONS / framework.name
    environment = json.loads((here / "environment.json").read_text(encoding="utf-8"))
    assert environment["version"] == framework.version
    if environment["kind"] == "python":
        lines = (here / environment["requirements"]).read_text(encoding="utf-8").splitlines()
        pins = [line for line in lines if line and not line.startswith("#")]
        assert framework.requirement in pins
        assert all("==" in line for line in pins), "every requirement is pinned exactly"
    else:
        package = json.loads((here / "package.json").read_text(encoding="utf-8"))
        lock = json.loads((here / "package-lock.json").read_text(encoding="utf-8"))
        assert package["dependencies"] == {"ai": "7.0.173", "@ai-sdk/openai": "4.0.118"}
        for name, version in package["dependencies"].items():
            assert lock["packages"][f"node_modules/{name}"]["version"] == version


def test_implementation_files_are_ruff_clean() -> None:
    """The adapters run outside this project's environment, so tests/test_quality.py's ruff run
    does not reach them: this one does, with the tools that serve them."""
    paths = [
        str(IMPLEMENTATIONS.relative_to(REPO)),
        "tools/framework_reasons.py",
        "tools/expectation_reasons.py",
        "tools/langchain_vercel_reasons.py",
        "tools/pydantic_ai_reasons.py",
        "tools/openai_agents_reasons.py",
        "tools/install_fast_agent.py",
        "tools/bench_vs_fast_agent.py",
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


# --- what each framework's run shows --------------------------------------------------------


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


def test_pydantic_ai_trailing_placement_shows_as_f2_and_f4_failures() -> None:
    """pydantic-ai appends an effort change at the end of a step's request (SPEC F2, F4)."""
    found = reasons(PYDANTIC_AI)
    after_user = found["plan/trailing-placement/stored-update-after-user-message"]
    on_tool_step = found["plan/trailing-placement/change-during-tool-loop-not-appended"]
    assert "F2" in after_user.split(":")[0]
    assert "_record_model_settings_changes" in after_user
    assert "F4" in on_tool_step.split(":")[0]


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
def test_openai_agents_measured_deviations_show_with_their_rule_and_function(
    case: str, rule: str, where: str
) -> None:
    reason = reasons(OPENAI_AGENTS)[case]
    assert rule in reason.split(":")[0].removeprefix("SPEC ").split("/"), reason
    assert where in reason, reason


def test_openai_agents_committed_run_announces_the_items_form_and_no_provenance() -> None:
    """Its run against these expectations is tests/test_implementation_runs.py's."""
    report = IMPLEMENTATIONS / "reports" / "openai-agents.json"
    document = json.loads(report.read_text(encoding="utf-8"))
    assert document["implementation"]["history_formats"] == ["items"]
    assert document["implementation"]["provenance"] == "none"


@OPENAI_AGENTS_INSTALLED
def test_openai_agents_facts_the_vectors_cannot_show() -> None:
    """openai-agents' README.md "Facts measured": no issuer is recorded for a Responses-route
    provider; a foreign item with the native item's id takes its place and is then dropped; the
    generated key is not K1's (and none for xAI)."""
    done = subprocess.run(
        [str(OPENAI_AGENTS_PYTHON), str(IMPLEMENTATIONS / "openai-agents" / "facts.py")],
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
