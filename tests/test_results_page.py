"""tools/results_page.py, results_html.py and rule_families.py: the results pages are computed from
the run reports' cases and their rules, carry no secret of a report, and are checked for staleness.

The last tests compare the committed pages (docs/implementations.md and .html, the
implementations' README sections, conformance/README.md's form counts) with what the committed
reports and the suite give.
"""

from __future__ import annotations

import base64
import copy
import importlib
import json
import re
import secrets
import shutil
import sys
from html.parser import HTMLParser
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from reasoning_replay.history.scan import scan_text
from reasoning_replay.suite import schemas

REPO = Path(__file__).resolve().parents[1]
TOOLS = REPO / "tools"
REPORTS = REPO / "conformance" / "implementations" / "reports"
if str(TOOLS) not in sys.path:
    sys.path.insert(0, str(TOOLS))
families: ModuleType = importlib.import_module("rule_families")
page: ModuleType = importlib.import_module("results_page")
html_page: ModuleType = importlib.import_module("results_html")

SPEC_ANCHORS = frozenset(re.findall(r'<a id="([^"]+)"></a>', (REPO / "SPEC.md").read_text()))
# A ciphertext as OpenAI returns one (Fernet: "gAAAAAB" and URL-safe base64), and reasoning text.
CANARY = "gAAAAAB" + base64.urlsafe_b64encode(secrets.token_bytes(96)).decode()
SUMMARY = f"canary summary {secrets.token_hex(6)}"
# A value no shape gives away: only the case that holds it can say it is a secret.
PLAIN_SECRET = f"opaque-{secrets.token_hex(8)}"


def judged(outcome: str, unexpected: bool = False) -> dict[str, Any]:
    return {"outcome": outcome, "unexpected": unexpected}


def case(
    id: str,
    spec: str,
    outcome: str = "pass",
    *,
    operation: str = "replay",
    level: str = "MUST",
    unexpected: bool = False,
    diagnostics: str | None = None,
    detail: dict[str, Any] | None = None,
    expectation: dict[str, Any] | None = None,
) -> dict[str, Any]:
    found: dict[str, Any] = {
        "id": id,
        "operation": operation,
        "spec": spec,
        "level": level,
        "outcome": diagnostics or outcome,
        "unexpected": unexpected,
        "profiles": {
            "verdict": judged(outcome, unexpected),
            "diagnostics": judged(diagnostics or outcome, unexpected),
        },
        "duration_s": 0.01,
    }
    if detail is not None:
        found["detail"] = detail
    if expectation is not None:
        found["expectation"] = expectation
        for profile in found["profiles"].values():
            profile["expectation"] = expectation["id"]
    return found


def report(
    cases: list[dict[str, Any]],
    *,
    name: str = "agent",
    operations: tuple[str, ...] = ("replay", "dedupe", "plan"),
    entries: list[dict[str, Any]] | None = None,
    defaults: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    totals: dict[str, int] = {}
    for c in cases:
        totals[c["outcome"]] = totals.get(c["outcome"], 0) + 1
    profile = {"passed": True, "totals": totals, "unexpected": 0, "failing": 0, "levels": {}}
    doc: dict[str, Any] = {
        "report_format": 2,
        "runner": {"name": "reasoning-replay-conformance", "version": "0.1.0"},
        "suite": {"version": "0.1.0", "sha256": "ab" * 32, "cases": len(cases)},
        "protocol": 1,
        "mode": "persistent",
        "command": ["./adapter"],
        "implementation": {
            "name": name,
            "version": "1.0.0",
            "language": "python",
            "operations": list(operations),
        },
        "started": "2026-12-01T01:02:03Z",
        "duration_s": 1.0,
        "restarts": 0,
        "totals": totals,
        "unexpected": 0,
        "profile": "diagnostics",
        "profiles": {"verdict": profile, "diagnostics": profile},
        "cases": cases,
        "stale_expectations": [],
    }
    if entries is not None:
        doc["expectations"] = {"file": "x/expectations.yaml", "entries": entries}
    if defaults is not None:
        doc["defaults"] = defaults
    return doc


def counted(doc: dict[str, Any], key: str = "agent") -> Any:
    return families.counted(key, f"conformance/implementations/{key}/", doc)


# ---------------------------------------------------------------------------------------------
# Families and counts


def test_every_family_rule_is_a_spec_anchor_in_exactly_one_family() -> None:
    rules = [rule for family in families.FAMILIES for rule in family.rules]
    assert len(rules) == len(set(rules))
    assert set(rules) <= SPEC_ANCHORS
    assert families.family_of("P4").key == "issuer"
    assert families.family_of("F8").key == families.family_of("E1").key == "other"


def test_counts_are_of_applicable_must_cases_of_declared_operations() -> None:
    doc = report(
        [
            case("replay/a", "P2"),
            case("replay/b", "P1", "xfail"),
            case("replay/c", "P2", "fail", unexpected=True),
            case("replay/d", "P2", "skipped"),
            case("replay/e", "P2", "not_applicable"),
            case("replay/f", "P2", level="SHOULD"),
            case("read/g", "P1", "skipped", operation="read"),  # not declared
            case("dedupe/h", "D3", "pass", operation="dedupe", diagnostics="xfail"),
        ]
    )
    run = counted(doc)
    order = run.profiles["verdict"].of(families.FAMILIES[0])
    assert order == families.Tally(applicable=4, passed=1, skipped=1, xfail=1, unexpected=1)
    dedupe_verdict = run.profiles["verdict"].of(families.FAMILIES[1])
    dedupe_diagnostics = run.profiles["diagnostics"].of(families.FAMILIES[1])
    assert (dedupe_verdict.passed, dedupe_diagnostics.passed) == (1, 0)
    assert run.profiles["verdict"].total.applicable == 5


def test_the_families_of_each_committed_report_add_up_to_its_must_cases() -> None:
    for path in sorted(REPORTS.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        run = counted(doc, path.stem)
        for tally in run.profiles.values():
            parts = [tally.of(family) for family in families.COLUMNS]
            assert sum(p.applicable for p in parts) == tally.total.applicable, path.name
            assert sum(p.passed for p in parts) == tally.total.passed, path.name
    reference = json.loads((REPORTS / "reference.json").read_text(encoding="utf-8"))
    must = [c for c in reference["cases"] if c["level"] == "MUST"]
    assert sum(families.suite_counts(reference["cases"]).values()) == len(must)


# ---------------------------------------------------------------------------------------------
# The Markdown page


def test_a_row_has_passed_over_applicable_per_family_and_the_unexpected_count() -> None:
    doc = report(
        [
            case("replay/a", "P2"),
            case("replay/b", "P4", "xfail"),
            case("replay/c", "P4", "fail", unexpected=True),
            case("dedupe/d", "D2", operation="dedupe"),
        ]
    )
    lines = page.profile_table([counted(doc)], "verdict")
    assert lines[0].startswith("| implementation | language | version | order/P1 | dedupe D1–D5 |")
    assert lines[2] == (
        "| [agent](implementations.html#agent) | python | 1.0.0 | 1 / 1 | 1 / 1 | 0 / 2 | — | — "
        "| — | — | — | — | 2 / 4 | 1 |"
    )


def test_the_defaults_probe_shows_what_is_sent_and_what_is_not() -> None:
    probe = {
        "case": "defaults/p5/x",
        "model": "m",
        "target_provider": "openai",
        "answer": "output",
        "include": ["reasoning.encrypted_content"],
        "key_form": "absent",
    }
    doc = report([], operations=("defaults",), defaults=[probe])
    assert page.probe_table([counted(doc)])[2] == (
        '| agent | openai (m) | output | — | `["reasoning.encrypted_content"]` | — | absent |'
    )
    silent = report([], operations=("replay",))
    assert "not probed" in page.probe_table([counted(silent)])[2]


def test_a_readme_needs_exactly_one_pair_of_markers() -> None:
    text = "a\n<!-- results:start -->\nold\n<!-- results:end -->\nb\n"
    assert page.replace_section(text, "results", "new\n") == text.replace("old\n", "new\n")
    for broken in ("a\n", text + text, "<!-- results:end -->\n<!-- results:start -->\n"):
        with pytest.raises(page.StaleOrBroken, match="exactly one"):
            page.replace_section(broken, "results", "new\n")


# ---------------------------------------------------------------------------------------------
# The HTML report


def canary_report() -> dict[str, Any]:
    """A report whose every text holds the canary: in the request and the reply, as compared
    values, in free text (a message, stderr, a reason), in the handshake and the probe."""
    item = {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": SUMMARY}],
        "encrypted_content": CANARY,
    }
    other = {**item, "id": "rs_2", "encrypted_content": PLAIN_SECRET}
    request = {"cmd": "run", "seq": 1, "id": "replay/x", "input": {"history": [item, other]}}
    response = {"seq": 1, "output": {"input": [item, other]}}
    entry = {
        "id": "replay/x",
        "state": "xfail",
        "reason": f"SPEC P2/D2: sends {CANARY} twice (agent/core.py::build_input)",
    }
    detail = {
        "message": f"output differs at /input/1/encrypted_content: {CANARY} vs {PLAIN_SECRET}",
        "underlying": "fail",
        "pointer": "/input/1/encrypted_content",
        "expected": PLAIN_SECRET,
        "actual": CANARY,
        "request": json.dumps(request),
        "response": json.dumps(response),
        "stderr": f"Traceback: value={CANARY!r}",
    }
    compared = {**detail, "pointer": "/input/1", "expected": other, "actual": item}
    probe = {
        "case": "defaults/p5/x",
        "model": "m",
        "target_provider": "openai",
        "answer": "output",
        "reasoning": {"encrypted_content": CANARY},
        "key_form": "absent",
    }
    doc = report(
        [
            case("replay/x", "P2", "xfail", detail=detail, expectation=entry),
            case("replay/y", "P2", "fail", unexpected=True, detail=compared),
            case("defaults/p5/x", "P5", operation="defaults"),
        ],
        name=f"agent {CANARY}",
        operations=("replay", "defaults"),
        entries=[entry],
        defaults=[probe],
    )
    doc["command"] = ["./adapter", f"--key={CANARY}"]
    return doc


def render(doc: dict[str, Any]) -> tuple[str, str]:
    run = counted(doc)
    suite = families.suite_counts(doc["cases"])
    outside = families.rules_outside(doc["cases"])
    html = html_page.page([run], {"agent": None}, suite, outside, SPEC_ANCHORS)
    return html, page.markdown_page([run], suite, outside)


def test_the_canary_report_is_a_valid_report() -> None:
    assert schemas.errors(schemas.REPORT, canary_report()) == ()


def test_no_secret_of_a_report_reaches_either_page() -> None:
    doc = canary_report()
    html, markdown = render(doc)
    assert CANARY in json.dumps(doc) and PLAIN_SECRET in json.dumps(doc)
    for text in (html, markdown):
        assert CANARY not in text
        assert PLAIN_SECRET not in text
        assert SUMMARY not in text
        assert scan_text(text) == ()
    # What the page shows instead: the ciphertext's size and digest, the item's view.
    assert '"encrypted_content_sha256":' in html and "[redacted encrypted_content bytes=" in html
    assert "replay/x" in html and "agent/core.py::build_input" in html


def test_the_page_is_one_file_without_script_or_network() -> None:
    html, _ = render(canary_report())
    assert html.startswith("<!DOCTYPE html>")
    for banned in ("<script", "src=", "://", "@import", "url("):
        assert banned not in html


def test_a_reason_links_its_rules_to_spec_and_shows_its_source_function() -> None:
    html, _ = render(canary_report())
    row = html[html.index('id="agent--case--replay_x"') :]
    row = row[: row.index("</tr>")]
    assert '<a href="../SPEC.md#P2">P2</a>/<a href="../SPEC.md#D2">D2</a>' in row
    assert "<td><code>agent/core.py::build_input</code></td>" in row
    assert 'class="xfail">xfail</td>' in row


class _Balance(HTMLParser):
    VOID = frozenset(("meta", "br", "link", "hr", "img", "input"))

    def __init__(self) -> None:
        super().__init__()
        self.open: list[str] = []
        self.errors: list[str] = []
        self.ids: set[str] = set()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids.add(str(found["id"]))
        if found.get("href"):
            self.hrefs.append(str(found["href"]))
        if tag not in self.VOID:
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.open or self.open[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.open[-1:] or 'nothing'}")
        else:
            self.open.pop()


def parsed(html: str) -> _Balance:
    checker = _Balance()
    checker.feed(html)
    checker.close()
    return checker


def test_the_committed_html_is_well_formed_and_every_link_resolves() -> None:
    html = (REPO / "docs" / "implementations.html").read_text(encoding="utf-8")
    checker = parsed(html)
    assert checker.errors == [] and checker.open == []
    for href in checker.hrefs:
        if href.startswith("#"):
            assert href[1:] in checker.ids, href
        elif href.startswith("../SPEC.md#"):
            assert href.removeprefix("../SPEC.md#") in SPEC_ANCHORS, href
        else:
            target = (REPO / "docs" / href.split("#")[0]).resolve()
            assert target.exists(), href


def test_the_committed_html_holds_each_framework_failure_with_rule_and_source() -> None:
    html = (REPO / "docs" / "implementations.html").read_text(encoding="utf-8")
    row = html[html.index('id="langchain-openai--case--dedupe_exact-pair"') :]
    row = row[: row.index("</tr>")]
    assert '<a href="../SPEC.md#D2">D2</a>' in row
    assert (
        "<code>langchain_openai/chat_models/base.py::_construct_responses_api_input</code>" in row
    )


# ---------------------------------------------------------------------------------------------
# The committed documents


def test_every_generated_document_is_in_sync_with_the_committed_reports(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert page.main(["--check"]) == 0, capsys.readouterr().err


def test_a_changed_report_makes_the_check_name_the_stale_pages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reports = tmp_path / "reports"
    shutil.copytree(REPORTS, reports)
    doc = json.loads((reports / "reference.json").read_text(encoding="utf-8"))
    changed = copy.deepcopy(doc)
    first = next(c for c in changed["cases"] if c["spec"] == "D2")
    first["profiles"]["verdict"]["outcome"] = "skipped"
    (reports / "reference.json").write_text(json.dumps(changed), encoding="utf-8")
    assert page.main(["--check", "--reports", str(reports)]) == 1
    err = capsys.readouterr().err
    assert "docs/implementations.md is stale" in err
    assert "docs/implementations.html is stale" in err


def test_readme_links_the_results_page() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "(docs/implementations.md)" in readme and "(docs/implementations.html)" in readme
