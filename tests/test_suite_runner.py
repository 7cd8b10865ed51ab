"""The runner's outcomes, in-process (a fake dispatch stands in for the reference)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fakes.fake_dispatch import Result, fake_dispatch
from fakes.suite_fixture import case, write_suite
from reasoning_replay.suite import inprocess
from reasoning_replay.suite.compare import ABSENT
from reasoning_replay.suite.expectations import Entry, Expectations, State
from reasoning_replay.suite.inprocess import InProcessImplementation
from reasoning_replay.suite.outcomes import Outcome
from reasoning_replay.suite.retained import KEEP
from reasoning_replay.suite.runner import RunResult, run_cases
from reasoning_replay.suite.vectors import Suite, load_vector_dirs


def suite_of(tmp_path: Path, *cases: dict[str, Any]) -> Suite:
    conf = write_suite(tmp_path, {"a.yaml": list(cases)})
    suite = load_vector_dirs([conf / "vectors"])
    assert suite.problems == ()
    return suite


def run(
    suite: Suite, ops: tuple[str, ...] = ("echo",), expectations: Expectations | None = None
) -> RunResult:
    impl = InProcessImplementation(fake_dispatch, ops)
    kwargs = {"expectations": expectations} if expectations is not None else {}
    return run_cases(impl, suite, suite.cases, **kwargs)


def outcomes(result: RunResult) -> dict[str, Outcome]:
    return {r.case.id: r.outcome for r in result.results}


def test_every_in_process_outcome(tmp_path: Path) -> None:
    suite = suite_of(
        tmp_path,
        case("c/pass", value={"nested": [1, 2]}),
        case("c/reject-pass", reject="bad_value"),
        case("c/fail", value="wrong"),
        case("c/wrong-code", reject="swap", expect_code="bad_value"),
        case("c/missed", reject="accept", expect_code="bad_value"),
        case("c/false", value="refuse"),
        case("c/error", value="raise"),
        case("c/unsupported", operation="plan"),
    )
    result = run(suite)
    assert outcomes(result) == {
        "c/pass": Outcome.PASS,
        "c/reject-pass": Outcome.PASS,
        "c/fail": Outcome.FAIL,
        "c/wrong-code": Outcome.WRONG_CODE,
        "c/missed": Outcome.MISSED_REJECTION,
        "c/false": Outcome.FALSE_REJECTION,
        "c/error": Outcome.ADAPTER_ERROR,
        "c/unsupported": Outcome.SKIPPED,
    }
    assert not result.ok
    by_id = {r.case.id: r for r in result.results}
    fail = by_id["c/fail"].verdict.detail
    assert fail is not None and fail.mismatch is not None
    assert (fail.mismatch.pointer, fail.mismatch.expected, fail.mismatch.actual) == (
        "/value",
        "wrong",
        "WRONG",
    )
    wrong = by_id["c/wrong-code"].verdict.detail
    assert wrong is not None and (wrong.expected_code, wrong.actual_code) == (
        "bad_value",
        "other_code",
    )
    err = by_id["c/error"].verdict.detail
    assert err is not None and err.traceback is not None and "dispatch bug" in err.traceback


def test_a_clean_run_is_ok(tmp_path: Path) -> None:
    result = run(suite_of(tmp_path, case("c/a"), case("c/b", reject="bad_value")))
    assert result.ok and result.totals()[Outcome.PASS] == 2


def test_base64_members_reach_dispatch_undecoded(tmp_path: Path) -> None:
    c = case("c/bytes")
    c["input"] = {"text_base64": "/w=="}
    c["expect"] = {"output": {"value": "ff"}}
    assert outcomes(run(suite_of(tmp_path, c))) == {"c/bytes": Outcome.PASS}


def test_xfail_xpass_and_skip_from_expectations(tmp_path: Path) -> None:
    suite = suite_of(
        tmp_path,
        case("c/known-bad", value="wrong"),
        case("c/fixed"),
        case("c/never", value="raise"),
        case("c/flaky", value="wrong"),
    )
    exp = Expectations.of(
        [
            Entry("c/known-bad", State.XFAIL, "bug 1"),
            Entry("c/fixed", State.XFAIL, "bug 2"),
            Entry("c/never", State.SKIP, "crashes"),
            Entry("c/fl*", State.FLAKY, "sometimes"),
        ]
    )
    result = run(suite, expectations=exp)
    assert outcomes(result) == {
        "c/known-bad": Outcome.XFAIL,
        "c/fixed": Outcome.XPASS,
        "c/never": Outcome.SKIPPED,
        "c/flaky": Outcome.XFAIL,
    }
    assert [r.case.id for r in result.unexpected] == ["c/fixed"]
    assert [(s.id, s.problem) for s in result.stale] == [("c/fixed", "xpass")]


def test_reference_import_failure_is_reported_not_raised(tmp_path: Path, monkeypatch: Any) -> None:
    def broken() -> Any:
        raise ImportError("no operations module yet")

    monkeypatch.setattr(inprocess, "reference_dispatch", broken)
    suite = suite_of(tmp_path, case("c/a"))
    result = run_cases(InProcessImplementation(), suite, suite.cases)
    assert result.handshake_failure is not None
    assert "no operations module yet" in str(result.handshake_failure)
    assert outcomes(result) == {} and not result.ok


def test_large_compared_values_and_tracebacks_are_kept_cut_with_a_marker(tmp_path: Path) -> None:
    big = "v" * (1024 * 1024)

    def dispatch(operation: str, input: Any) -> Any:
        if input["value"] == "raise":
            raise RuntimeError(big)
        return fake_dispatch(operation, {"value": big})

    suite = suite_of(tmp_path, case("c/wrong", value="small"), case("c/raise", value="raise"))
    result = run_cases(InProcessImplementation(dispatch, ("echo",)), suite, suite.cases)
    wrong, raised = result.results
    assert wrong.outcome is Outcome.FAIL and raised.outcome is Outcome.ADAPTER_ERROR
    assert wrong.verdict.detail is not None and wrong.verdict.detail.mismatch is not None
    actual = wrong.verdict.detail.mismatch.actual
    assert isinstance(actual, str) and len(actual) < KEEP + 200
    assert f"[truncated: {len(big) + 2} bytes in all, sha256 " in actual
    assert raised.verdict.detail is not None and raised.verdict.detail.traceback is not None
    assert len(raised.verdict.detail.message) < KEEP + 200
    assert len(raised.verdict.detail.traceback) < KEEP + 200
    assert wrong.request is not None and wrong.request.render().startswith('{"cmd":"run"')


def test_a_missing_or_extra_member_is_kept_as_absent(tmp_path: Path) -> None:
    def dispatch(operation: str, input: Any) -> Any:
        return Result(output={} if input["value"] == "drop" else {**input, "x": 1})

    suite = suite_of(tmp_path, case("c/missing", value="drop"), case("c/extra", value=2))
    result = run_cases(InProcessImplementation(dispatch, ("echo",)), suite, suite.cases)
    mismatches = [r.verdict.detail.mismatch for r in result.results if r.verdict.detail]
    assert [(m.pointer, m.expected, m.actual) for m in mismatches if m] == [
        ("/value", "drop", ABSENT),
        ("/x", ABSENT, 1),
    ]
