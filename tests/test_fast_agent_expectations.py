"""fast-agent as a known implementation: its expectations file and its adapter.

Its run against these expectations is tests/test_implementation_runs.py's (with the other
implementations').
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from fnmatch import fnmatchcase
from pathlib import Path

from reasoning_replay.suite.expectations import Expectations, load_expectations
from reasoning_replay.suite.vectors import load_suite

REPO = Path(__file__).resolve().parents[1]
HERE = REPO / "conformance" / "implementations" / "fast-agent"
EXPECTATIONS = HERE / "expectations.yaml"
ADAPTER = HERE / "adapter.py"

ANCHOR = re.compile(r'<a id="([^"]+)"></a>')
# A reason opens with the rules it breaks: "SPEC D3: ..." or "SPEC E4-total/P2: ...".
CITATION = re.compile(r"^SPEC ([A-Za-z0-9-]+(?:/[A-Za-z0-9-]+)*): \S")
# Any rule-like name elsewhere in a reason ("; and F11: ...", "(D2)") must be an anchor too.
RULE_NAME = re.compile(r"(?<![\w.+-])(?:ST|[ECPDRTFKHS])\d+(?:-[a-z]+)?(?![\w.])")


def spec_anchors() -> set[str]:
    return set(ANCHOR.findall((REPO / "SPEC.md").read_text(encoding="utf-8")))


def expectations() -> Expectations:
    loaded = load_expectations(EXPECTATIONS)
    assert isinstance(loaded, Expectations), f"{EXPECTATIONS} is invalid: {loaded}"
    return loaded


def test_every_entry_cites_existing_spec_rules() -> None:
    anchors = spec_anchors()
    assert {"E1", "D3", "F6", "E4-total"} <= anchors  # the parse finds SPEC.md's anchors
    loaded = expectations()
    assert loaded.entries
    for entry in loaded.entries:
        cited = CITATION.match(entry.reason)
        assert cited, f"{entry.id}: the reason does not open with 'SPEC <rule>: ': {entry.reason!r}"
        named = set(cited.group(1).split("/")) | set(RULE_NAME.findall(entry.reason))
        assert named <= anchors, f"{entry.id}: no such SPEC anchor {sorted(named - anchors)}"


def test_every_entry_names_cases_of_the_suite() -> None:
    suite = load_suite([REPO / "conformance" / "vectors"])
    names = [name for case in suite.cases for name in case.names]
    exact = set(names)
    seen: set[str] = set()
    for entry in expectations().entries:
        assert entry.id not in seen, f"{entry.id} is listed twice"
        seen.add(entry.id)
        if entry.is_glob:
            assert any(fnmatchcase(n, entry.id) for n in names), f"{entry.id} matches no case"
        else:
            assert entry.id in exact, f"{entry.id} is not a case id or alias of the suite"
        assert entry.state.value == "xfail", f"{entry.id}: only known failures are recorded"


def test_adapter_is_independent_of_the_reference() -> None:
    """The adapter runs in fast-agent's own environment and measures fast-agent alone."""
    tree = ast.parse(ADAPTER.read_text(encoding="utf-8"))
    imported = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert not [m for m in imported if m.split(".")[0] == "reasoning_replay"]
    assert "fast_agent.llm.provider.openai.responses_cache" in imported


def test_fast_agent_files_are_ruff_clean() -> None:
    paths = [str(HERE), "tools/install_fast_agent.py", "tools/bench_vs_fast_agent.py"]
    for command in (["check", *paths], ["format", "--check", *paths]):
        result = subprocess.run(
            [sys.executable, "-m", "ruff", *command],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, result.stdout + result.stderr
