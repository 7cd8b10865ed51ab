"""Levels and profiles (SPEC.md#levels, SPEC.md#profiles): only MUST cases decide a run, and each
reply is judged both on its verdict and on its exact diagnostics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fakes.fake_dispatch import fake_dispatch
from fakes.suite_fixture import case, write_suite
from reasoning_replay.cli.main import main
from reasoning_replay.suite import inprocess, schemas
from reasoning_replay.suite.expectations import Entry, Expectations, Judged, State, updated
from reasoning_replay.suite.inprocess import InProcessImplementation
from reasoning_replay.suite.outcomes import Outcome
from reasoning_replay.suite.profiles import Profile, judge_in, verdict_view
from reasoning_replay.suite.protocol import OutputReply, RejectReply
from reasoning_replay.suite.reports import (
    Repro,
    json_report,
    junit_xml,
    markdown_text,
    terminal_text,
)
from reasoning_replay.suite.runner import RunResult, run_cases
from reasoning_replay.suite.vectors import Expect, Suite, load_vector_dirs


@pytest.fixture(autouse=True)
def fake_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inprocess, "reference_dispatch", lambda: (fake_dispatch, ("echo",)))


def suite_of(tmp_path: Path, *cases: dict[str, Any]) -> Suite:
    suite = load_vector_dirs([write_suite(tmp_path, {"a.yaml": list(cases)}) / "vectors"])
    assert suite.problems == ()
    return suite


def run(suite: Suite, **kwargs: Any) -> RunResult:
    return run_cases(
        InProcessImplementation(fake_dispatch, ("echo",)), suite, suite.cases, **kwargs
    )


def by_profile(result: RunResult) -> dict[str, dict[str, Outcome]]:
    return {
        str(view.profile): {r.case.id: r.outcome for r in view.results} for view in result.profiles
    }


# ---------------------------------------------------------------------------------------------
# Levels


def test_a_failing_may_case_is_reported_but_does_not_fail_the_run(tmp_path: Path) -> None:
    suite = suite_of(tmp_path, case("c/ok"), case("c/may", value="wrong", level="MAY"))
    result = run(suite)
    assert result.ok
    assert [r.case.id for r in result.not_met] == ["c/may"] and result.failing == ()
    text = terminal_text(result, Repro())
    assert "SHOULD and MAY cases not met (1; they decide nothing):" in text
    assert "c/may [X1, MAY]: fail" in text
    assert text.rstrip().splitlines()[-1].startswith("PASSED:")


def test_strict_levels_makes_should_and_may_cases_decide(tmp_path: Path) -> None:
    suite = suite_of(tmp_path, case("c/should", value="wrong", level="SHOULD"))
    assert run(suite).ok
    assert not run(suite, strict_levels=True).ok


def test_cli_exit_status_follows_must_cases_unless_strict_levels(tmp_path: Path) -> None:
    conf = write_suite(tmp_path, {"a.yaml": [case("c/ok"), case("c/may", value="x", level="MAY")]})
    vectors = str(conf / "vectors")
    # the fake echoes, so make the MAY case fail: its expectation differs from the echo
    doc = (conf / "vectors" / "a.yaml").read_text().replace("value: x\n", "value: y\n", 1)
    (conf / "vectors" / "a.yaml").write_text(doc)
    assert main(["run", "--vectors", vectors, "-q"]) == 0
    assert main(["run", "--vectors", vectors, "-q", "--strict-levels"]) == 1


def test_junit_marks_a_not_deciding_failure_as_skipped(tmp_path: Path) -> None:
    suite = suite_of(tmp_path, case("c/may", value="wrong", level="MAY"))
    xml = junit_xml(run(suite))
    assert "<failure" not in xml and "MAY case, not deciding conformance" in xml


# ---------------------------------------------------------------------------------------------
# Profiles


def test_verdict_profile_accepts_a_reject_of_any_code_and_diagnostics_does_not(
    tmp_path: Path,
) -> None:
    suite = suite_of(tmp_path, case("c/code", reject="swap", expect_code="bad_value"))
    result = run(suite)
    assert by_profile(result) == {
        "verdict": {"c/code": Outcome.PASS},
        "diagnostics": {"c/code": Outcome.WRONG_CODE},
    }
    assert not result.ok
    assert run(suite, profiles=(Profile.VERDICT,)).ok


def test_verdict_profile_never_accepts_an_output_for_a_reject_or_the_reverse(
    tmp_path: Path,
) -> None:
    suite = suite_of(
        tmp_path,
        case("c/missed", reject="accept", expect_code="bad_value"),
        case("c/false", value="refuse"),
    )
    verdict = by_profile(run(suite))["verdict"]
    assert verdict == {"c/missed": Outcome.MISSED_REJECTION, "c/false": Outcome.FALSE_REJECTION}


@pytest.mark.parametrize(
    ("operation", "member"),
    [("replay", "diagnostics"), ("plan", "diagnostics"), ("validate", "findings")],
)
def test_verdict_profile_leaves_out_the_members_that_carry_diagnostics(
    operation: str, member: str
) -> None:
    expected = {"input": [1], member: [{"code": "a", "message_index": 0}]}
    reply = OutputReply({"input": [1], member: []})
    expect = Expect(output=expected)
    assert judge_in(Profile.VERDICT, operation, expect, reply).outcome is Outcome.PASS
    assert judge_in(Profile.DIAGNOSTICS, operation, expect, reply).outcome is Outcome.FAIL
    wrong_input = OutputReply({"input": [2], member: expected[member]})
    assert judge_in(Profile.VERDICT, operation, expect, wrong_input).outcome is Outcome.FAIL


def test_verdict_profile_compares_validates_count_of_blocks_that_would_not_replay() -> None:
    # provider_mismatch counts blocks another provider issued: what the user's next request
    # loses, a verdict; findings are diagnostics only
    expected = {
        "findings": [],
        "counts": {"resumable": 2, "legacy": 0, "redacted": 0, "malformed": 0},
        "replays_as_stored": False,
        "provider_mismatch": 2,
    }
    expect = Expect(output=expected)
    uncounted = OutputReply({**expected, "provider_mismatch": 0})
    other_findings = OutputReply({**expected, "findings": [{"code": "x", "severity": "note"}]})

    assert judge_in(Profile.VERDICT, "validate", expect, uncounted).outcome is Outcome.FAIL
    assert judge_in(Profile.VERDICT, "validate", expect, other_findings).outcome is Outcome.PASS
    assert verdict_view("validate", expected) == {
        k: v for k, v in expected.items() if k != "findings"
    }


def test_verdict_profile_compares_scan_findings_without_their_code() -> None:
    output = {"findings": [{"line": 1, "code": "replay_material_exposed", "sha256_prefix": "ab"}]}
    assert verdict_view("scan", output) == {"findings": [{"line": 1, "sha256_prefix": "ab"}]}
    moved = OutputReply({"findings": [{"line": 2, "code": "x", "sha256_prefix": "ab"}]})
    verdict = judge_in(Profile.VERDICT, "scan", Expect(output=output), moved)
    assert verdict.outcome is Outcome.FAIL


def test_read_output_is_compared_whole_in_the_verdict_profile() -> None:
    expect = Expect(output={"item": {"id": "a"}})
    assert judge_in(
        Profile.VERDICT, "read", expect, OutputReply({"item": {"id": "b"}})
    ).outcome is (Outcome.FAIL)
    assert judge_in(Profile.VERDICT, "read", Expect(code="x"), RejectReply("y")).outcome is (
        Outcome.PASS
    )


def test_an_entry_scoped_to_diagnostics_does_not_xpass_in_the_verdict_profile(
    tmp_path: Path,
) -> None:
    suite = suite_of(tmp_path, case("c/code", reject="swap", expect_code="bad_value"))
    unscoped = Expectations.of([Entry("c/code", State.XFAIL, "no codes")])
    assert by_profile(run(suite, expectations=unscoped))["verdict"]["c/code"] is Outcome.XPASS
    scoped = Expectations.of(
        [Entry("c/code", State.XFAIL, "no codes", profile=Profile.DIAGNOSTICS)]
    )
    result = run(suite, expectations=scoped)
    assert result.ok
    assert by_profile(result) == {
        "verdict": {"c/code": Outcome.PASS},
        "diagnostics": {"c/code": Outcome.XFAIL},
    }


def test_update_expectations_narrows_an_entry_to_the_profile_where_it_still_fails(
    tmp_path: Path,
) -> None:
    suite = suite_of(
        tmp_path,
        case("c/code", reject="swap", expect_code="bad_value"),
        case("c/new-code", reject="swap", expect_code="bad_value"),
        case("c/new-fail", value="wrong"),
    )
    exp = Expectations.of([Entry("c/code", State.XFAIL, "no codes")])
    result = run(suite, expectations=exp)
    judged = [
        Judged(r.case, r.verdict, r.entry, view.profile)
        for view in result.profiles
        for r in view.results
    ]
    new = {e.id: e.profile for e in updated(exp, suite.cases, judged).entries}
    assert new == {
        "c/code": Profile.DIAGNOSTICS,
        "c/new-code": Profile.DIAGNOSTICS,
        "c/new-fail": None,
    }


def test_update_expectations_in_one_profile_keeps_an_entry_for_the_other(tmp_path: Path) -> None:
    suite = suite_of(tmp_path, case("c/code", reject="swap", expect_code="bad_value"))
    exp = Expectations.of([Entry("c/code", State.XFAIL, "no codes")])
    result = run(suite, expectations=exp, profiles=(Profile.VERDICT,))
    judged = [Judged(r.case, r.verdict, r.entry, Profile.VERDICT) for r in result.results]
    new = updated(exp, suite.cases, judged).entries
    assert [(e.id, e.profile) for e in new] == [("c/code", Profile.DIAGNOSTICS)]


def test_every_report_shows_each_profile(tmp_path: Path) -> None:
    suite = suite_of(tmp_path, case("c/ok"), case("c/code", reject="swap", expect_code="bad"))
    result = run(suite)
    doc = json.loads(json.dumps(json_report(result)))
    assert schemas.errors(schemas.REPORT, doc) == ()
    assert doc["profile"] == "diagnostics"
    assert {p: (v["passed"], v["totals"]["pass"]) for p, v in doc["profiles"].items()} == {
        "verdict": (True, 2),
        "diagnostics": (False, 1),
    }
    code = next(c for c in doc["cases"] if c["id"] == "c/code")
    assert code["profiles"]["verdict"]["outcome"] == "pass"
    assert code["profiles"]["diagnostics"]["outcome"] == "wrong_code"
    md = markdown_text(result)
    assert "### Profile `verdict`: verdict: 2 passed, 0 unexpected" in md
    assert "### Profile `diagnostics`: diagnostics: 1 passed, 1 unexpected" in md
    assert 'name="echo [verdict]"' in junit_xml(result)
    last = terminal_text(result, Repro()).rstrip().splitlines()[-1]
    assert last.startswith("FAILED: verdict: 2 passed, 0 unexpected; diagnostics: 1 passed")


def test_cli_profile_option_runs_one_profile(tmp_path: Path, capsys: Any) -> None:
    conf = write_suite(tmp_path, {"a.yaml": [case("c/code", reject="swap", expect_code="bad")]})
    vectors = str(conf / "vectors")
    assert main(["run", "--vectors", vectors, "-q", "--profile", "verdict"]) == 0
    assert capsys.readouterr().out.startswith("PASSED: verdict: 1 passed, 0 unexpected (")
    assert main(["run", "--vectors", vectors, "-q", "--profile", "diagnostics"]) == 1
