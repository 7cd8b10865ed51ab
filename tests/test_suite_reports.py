"""Reports: the JSON report validates against its schema, JUnit parses with junitparser, TAP
parses with tap.py, and the terminal report shows what a failing case needs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from fakes.fake_dispatch import fake_dispatch
from fakes.suite_fixture import case, write_suite
from junitparser import Error, Failure, JUnitXml, Skipped
from reasoning_replay.suite import schemas
from reasoning_replay.suite.expectations import Entry, Expectations, State, load_expectations
from reasoning_replay.suite.forms import HistoryFormat
from reasoning_replay.suite.inprocess import InProcessImplementation
from reasoning_replay.suite.reports import (
    Repro,
    json_report,
    junit_xml,
    markdown_text,
    tap_text,
    terminal_text,
    write_report,
)
from reasoning_replay.suite.runner import RunResult, run_cases
from reasoning_replay.suite.vectors import load_bundle, load_vector_dirs
from tap.parser import Parser

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def mixed_run(tmp_path: Path) -> RunResult:
    conf = write_suite(
        tmp_path,
        {
            "a.yaml": [
                case("r/pass"),
                case("r/fail", value="wrong"),
                case("r/wrong-code", reject="swap", expect_code="bad_value"),
                case("r/error", value="raise"),
                case("r/skip", operation="plan"),
                case("r/xfail", value="wrong"),
                case("r/xpass"),
                case("r/ctrl", value="\x00\x1b<&>#"),
            ]
        },
    )
    suite = load_vector_dirs([conf / "vectors"])
    exp = Expectations.of(
        [Entry("r/xfail", State.XFAIL, "known"), Entry("r/xpass", State.XFAIL, "was broken")]
    )
    impl = InProcessImplementation(fake_dispatch, ("echo",))
    return run_cases(impl, suite, suite.cases, expectations=exp)


def test_json_report_validates_against_its_schema(mixed_run: RunResult) -> None:
    doc = json.loads(json.dumps(json_report(mixed_run)))
    assert schemas.errors(schemas.REPORT, doc) == ()
    assert doc["totals"]["xfail"] == 1 and doc["totals"]["xpass"] == 1
    fail = next(c for c in doc["cases"] if c["id"] == "r/fail")
    assert fail["detail"]["pointer"] == "/value"
    assert (fail["detail"]["expected"], fail["detail"]["actual"]) == ("wrong", "WRONG")
    assert fail["detail"]["request"].startswith('{"cmd":"run"')


def test_json_report_records_the_expectations_file_and_every_entry(tmp_path: Path) -> None:
    conf = write_suite(tmp_path, {"a.yaml": [case("r/pass"), case("r/xfail", value="wrong")]})
    suite = load_vector_dirs([conf / "vectors"])
    exp_file = tmp_path / "expectations.yaml"
    exp_file.write_text(
        "implementation: echo\n"
        "entries:\n"
        "  - {id: r/xfail, state: xfail, reason: breaks X1}\n"
        "  - {id: r/gone, state: skip, reason: renamed}\n"
    )
    exp = load_expectations(exp_file)
    assert isinstance(exp, Expectations)
    impl = InProcessImplementation(fake_dispatch, ("echo",))
    doc = json.loads(json.dumps(json_report(run_cases(impl, suite, suite.cases, expectations=exp))))
    assert schemas.errors(schemas.REPORT, doc) == ()
    assert doc["expectations"] == {
        "file": str(exp_file),
        "implementation": "echo",
        "entries": [
            {"id": "r/xfail", "state": "xfail", "reason": "breaks X1"},
            {"id": "r/gone", "state": "skip", "reason": "renamed"},
        ],
    }


def test_json_report_has_expectations_only_when_the_run_had_some(
    mixed_run: RunResult, tmp_path: Path
) -> None:
    conf = write_suite(tmp_path, {"a.yaml": [case("r/pass")]})
    suite = load_vector_dirs([conf / "vectors"])
    run = run_cases(InProcessImplementation(fake_dispatch, ("echo",)), suite, suite.cases)
    assert "expectations" not in json_report(run)
    assert json_report(mixed_run)["expectations"]["entries"][0]["id"] == "r/xfail"


def test_junit_parses_with_failures_errors_and_skips(mixed_run: RunResult, tmp_path: Path) -> None:
    path = tmp_path / "r.xml"
    path.write_text(junit_xml(mixed_run))
    xml = JUnitXml.fromfile(str(path))
    kinds: dict[str, str] = {}
    for suite in xml:
        for tc in suite:
            res = tc.result
            kinds[tc.name] = type(res[0]).__name__ if res else "pass"
    assert kinds["r/pass"] == "pass" and kinds["r/ctrl"] == "pass"
    assert kinds["r/fail"] == Failure.__name__ and kinds["r/xpass"] == Failure.__name__
    assert kinds["r/error"] == Error.__name__
    assert kinds["r/skip"] == Skipped.__name__ and kinds["r/xfail"] == Skipped.__name__


def test_tap_parses_with_directives_and_yaml_blocks(mixed_run: RunResult) -> None:
    text = tap_text(mixed_run)
    assert text.startswith("TAP version 14\n")
    tests = [ln for ln in Parser().parse_text(text) if ln.category == "test"]
    by_name = {t.description.removeprefix("- "): t for t in tests}
    assert len(tests) == 2 * len(mixed_run.results)
    assert by_name["r/pass [diagnostics]"].ok and not by_name["r/fail [diagnostics]"].ok
    assert by_name["r/skip [diagnostics]"].skip and by_name["r/xfail [diagnostics]"].todo
    # the verdict profile ignores which code a reject has
    assert by_name["r/wrong-code [verdict]"].ok and not by_name["r/wrong-code [diagnostics]"].ok
    # every diagnostics block is valid YAML
    blocks = text.split("  ---\n")[1:]
    for block in blocks:
        body = block.split("  ...\n")[0]
        assert isinstance(yaml.safe_load(body), dict)


def test_markdown_has_summary_table_and_failures(mixed_run: RunResult) -> None:
    md = markdown_text(mixed_run, Repro(impl="./adapter"))
    assert "| `echo` |" in md and "Unexpected results" in md
    assert "conformance run --impl ./adapter -k r/fail" in md


def test_terminal_report_shows_pointer_request_and_repro(mixed_run: RunResult) -> None:
    text = terminal_text(mixed_run, Repro(impl="node adapter.js"))
    assert "FAIL r/fail  [X1, MUST]" in text
    assert "at /value:" in text and 'expected: "wrong"' in text and 'actual:   "WRONG"' in text
    assert 'request:  {"cmd":"run","seq":2,"id":"r/fail"' in text
    assert "rerun:    conformance run --impl 'node adapter.js' -k r/fail" in text
    assert "by hand:  conformance request r/fail | node adapter.js" in text
    assert "unexpected results by cause" in text
    assert text.rstrip().splitlines()[-1].startswith("FAILED:")
    assert "nearly everything failed" not in text


def test_triage_says_misconfigured_when_nearly_everything_fails(tmp_path: Path) -> None:
    conf = write_suite(tmp_path, {"a.yaml": [case(f"m/{i}", value="raise") for i in range(5)]})
    suite = load_vector_dirs([conf / "vectors"])
    run = run_cases(InProcessImplementation(fake_dispatch, ("echo",)), suite, suite.cases)
    text = terminal_text(run, Repro())
    assert "nearly everything failed" in text and "adapter is likely misconfigured" in text
    assert "5 x echo adapter_error" in text


def test_write_report_creates_the_file(mixed_run: RunResult, tmp_path: Path) -> None:
    out = tmp_path / "sub" / "r.md"
    write_report("markdown", out, mixed_run, Repro())
    assert out.read_text().startswith("## reasoning-replay conformance")


@pytest.fixture
def items_form_run() -> RunResult:
    """The reference judged as an implementation that reads only the items form, on a few
    cases: storage ones (not applicable), a skipped one, a neutral replay and a defaults probe."""
    suite = load_bundle(REPO / "conformance" / "vectors.bundle.json")
    wanted = {"read": 1, "validate": 1, "replay": 1, "defaults": 2, "dedupe": 1}
    picked = []
    for c in suite.cases:
        if wanted.get(c.operation, 0) and ("form:neutral" in c.tags or c.operation != "replay"):
            picked.append(c)
            wanted[c.operation] -= 1
    exp = Expectations.of([Entry(picked[0].id, State.SKIP, "not today")])  # the dedupe case
    return run_cases(
        InProcessImplementation(),
        suite,
        picked,
        expectations=exp,
        judged_as=HistoryFormat.ITEMS,
    )


def test_every_report_format_shows_not_applicable_apart_from_skipped(
    items_form_run: RunResult, tmp_path: Path
) -> None:
    doc = json.loads(json.dumps(json_report(items_form_run)))
    assert schemas.errors(schemas.REPORT, doc) == ()
    assert (doc["totals"]["not_applicable"], doc["totals"]["skipped"]) == (2, 1)
    assert doc["profiles"]["diagnostics"]["forms"]["storage"]["not_applicable"] == 2
    storage = [c for c in doc["cases"] if c["form"] == "storage"]
    assert {c["outcome"] for c in storage} == {"not_applicable"}
    replay = next(c for c in doc["cases"] if c["operation"] == "replay")
    assert replay["history_format"] == "items" and replay["outcome"] == "pass"

    path = tmp_path / "r.xml"
    path.write_text(junit_xml(items_form_run))
    skipped = [
        tc.result[0].message
        for suite in JUnitXml.fromfile(str(path))
        for tc in suite
        if tc.result and isinstance(tc.result[0], Skipped)
    ]
    assert sum(m.startswith("not_applicable: ") for m in skipped) == 2 * 2  # two profiles
    assert sum(m.startswith("skipped by expectation") for m in skipped) == 2

    tap = tap_text(items_form_run)
    assert tap.count("# SKIP not_applicable: ") == 4
    assert sum("# SKIP skipped by expectation" in ln for ln in tap.splitlines()) == 2
    assert len([ln for ln in Parser().parse_text(tap) if ln.category == "test"]) == 2 * 6

    md = markdown_text(items_form_run)
    assert "| operation | pass | skipped | not_applicable | total |" in md
    assert "storage 0 passed of 0 applicable (2 not applicable)" in md

    text = terminal_text(items_form_run, Repro())
    assert "not_applicable" in text and "2 not_applicable" in text.splitlines()[-1]


def test_every_report_format_shows_provenance_and_the_defaults_probe(
    items_form_run: RunResult, tmp_path: Path
) -> None:
    probes = [probe for _, probe in items_form_run.probes]
    assert [p.key_form for p in probes] == ["32-hex", "32-hex"]

    doc = json_report(items_form_run)
    assert doc["provenance"] == "message" and doc["history_formats"] == ["items"]
    assert [d["key_form"] for d in doc["defaults"]] == ["32-hex", "32-hex"]
    assert doc["defaults"][0]["store"] is False
    assert doc["defaults"][0]["include"] == ["reasoning.encrypted_content"]

    path = tmp_path / "r.xml"
    path.write_text(junit_xml(items_form_run))
    props = {p.name: p.value for suite in JUnitXml.fromfile(str(path)) for p in suite.properties()}
    assert props["provenance"] == "message"
    assert props["history_formats"] == "items"
    defaults = [v for k, v in props.items() if k.startswith("defaults.")]
    assert defaults and all("store false" in v and "key 32-hex" in v for v in defaults)

    for text in (tap_text(items_form_run), terminal_text(items_form_run, Repro())):
        assert "provenance: message" in text
        assert "history formats judged in: items (--history-format items)" in text
        assert text.count('store false, include ["reasoning.encrypted_content"], key 32-hex') == 2

    md = markdown_text(items_form_run)
    assert "provenance: message" in md and "### Defaults, as probed" in md
    assert md.count('| false | ["reasoning.encrypted_content"] | 32-hex | absent |') == 2
