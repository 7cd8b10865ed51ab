"""Hostile adapter programs: every failure costs exactly one case and the run continues."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from fakes.fake_adapter import LARGE
from fakes.suite_fixture import (
    case,
    fake_argv,
    fake_cmd,
    kill_logged,
    logged_pids,
    running,
    write_suite,
)
from reasoning_replay.suite.adapter_process import (
    MAX_FAILED_RESTARTS,
    MAX_LINE,
    OneShotAdapter,
    PersistentAdapter,
    StderrTail,
)
from reasoning_replay.suite.outcomes import Outcome
from reasoning_replay.suite.protocol import Crash, ImplementationInfo, ProtocolViolation, Timeout
from reasoning_replay.suite.retained import KEEP
from reasoning_replay.suite.runner import RunResult, run_cases
from reasoning_replay.suite.vectors import Suite, load_vector_dirs


def suite_of(tmp_path: Path, *cases: dict[str, Any]) -> Suite:
    conf = write_suite(tmp_path, {"a.yaml": list(cases)})
    return load_vector_dirs([conf / "vectors"])


def run(impl: Any, suite: Suite) -> RunResult:
    return run_cases(impl, suite, suite.cases)


def outcomes(result: RunResult) -> list[tuple[str, Outcome]]:
    return [(r.case.id, r.outcome) for r in result.results]


def starts(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_crash_mid_run_blames_one_case_and_restarts_with_handshake(tmp_path: Path) -> None:
    log = tmp_path / "starts.log"
    suite = suite_of(tmp_path, case("h/before"), case("h/crash"), case("h/next", value=[1]))
    result = run(PersistentAdapter(fake_argv("--log-starts", str(log))), suite)
    assert outcomes(result) == [
        ("h/before", Outcome.PASS),
        ("h/crash", Outcome.CRASH),
        ("h/next", Outcome.PASS),
    ]
    crashed = result.results[1]
    assert crashed.stderr is not None and "crashed on purpose" in crashed.stderr
    assert crashed.verdict.detail is not None and "status 3" in crashed.verdict.detail.message
    assert result.restarts == 1 and starts(log) == 2
    assert result.restart_causes == {"a crash (the adapter exited with status 3)": 1}


def test_hang_times_out_then_the_run_continues(tmp_path: Path) -> None:
    suite = suite_of(tmp_path, case("h/hang"), case("h/next"))
    result = run(PersistentAdapter(fake_argv(), timeout=0.5), suite)
    assert outcomes(result) == [("h/hang", Outcome.TIMEOUT), ("h/next", Outcome.PASS)]
    assert result.results[0].duration_s < 3


def test_garbage_line_is_an_adapter_error_and_the_stream_is_resynchronised(
    tmp_path: Path,
) -> None:
    suite = suite_of(tmp_path, case("h/garbage"), case("h/chatty"), case("h/next"))
    result = run(PersistentAdapter(fake_argv()), suite)
    assert outcomes(result) == [
        ("h/garbage", Outcome.ADAPTER_ERROR),
        ("h/chatty", Outcome.ADAPTER_ERROR),
        ("h/next", Outcome.PASS),
    ]
    detail = result.results[1].verdict.detail
    assert detail is not None and "stdout must carry only protocol lines" in detail.message
    response = result.results[1].response
    assert response is not None and response.render() == "debug: handling a request"


def test_wrong_seq_is_an_adapter_error(tmp_path: Path) -> None:
    suite = suite_of(tmp_path, case("h/wrong-seq"), case("h/next"))
    result = run(PersistentAdapter(fake_argv()), suite)
    assert outcomes(result) == [("h/wrong-seq", Outcome.ADAPTER_ERROR), ("h/next", Outcome.PASS)]
    detail = result.results[0].verdict.detail
    assert detail is not None and "expected 1" in detail.message


def test_schema_invalid_reply_shows_the_schema_error(tmp_path: Path) -> None:
    suite = suite_of(tmp_path, case("h/invalid"), case("h/next"))
    result = run(PersistentAdapter(fake_argv()), suite)
    assert outcomes(result) == [("h/invalid", Outcome.ADAPTER_ERROR), ("h/next", Outcome.PASS)]
    detail = result.results[0].verdict.detail
    assert detail is not None and "/output" in detail.message and "object" in detail.message
    assert result.restarts == 0  # still in step: no restart needed


def test_error_and_skipped_replies(tmp_path: Path) -> None:
    suite = suite_of(tmp_path, case("h/error"), case("h/skip"))
    result = run(PersistentAdapter(fake_argv()), suite)
    assert outcomes(result) == [("h/error", Outcome.ADAPTER_ERROR), ("h/skip", Outcome.SKIPPED)]
    detail = result.results[0].verdict.detail
    assert detail is not None and detail.traceback == "tb line"


def test_reply_line_over_the_limit_is_reply_too_long_and_keeps_only_its_head(
    tmp_path: Path,
) -> None:
    suite = suite_of(tmp_path, case("h/huge"), case("h/next"))
    result = run(PersistentAdapter(fake_argv(), timeout=10), suite)
    assert outcomes(result) == [("h/huge", Outcome.REPLY_TOO_LONG), ("h/next", Outcome.PASS)]
    huge = result.results[0]
    assert huge.verdict.detail is not None
    assert f"longer than {MAX_LINE} bytes" in huge.verdict.detail.message
    assert huge.response is not None and huge.response.render().startswith('{"seq": 1')
    assert huge.response.size <= KEEP
    assert result.restarts == 1


def test_oneshot_reply_line_over_the_limit_is_reply_too_long(tmp_path: Path) -> None:
    suite = suite_of(tmp_path, case("o/huge"), case("o/next"))
    result = run(OneShotAdapter(fake_argv("--oneshot"), timeout=10), suite)
    assert outcomes(result) == [("o/huge", Outcome.REPLY_TOO_LONG), ("o/next", Outcome.PASS)]


def retained_bytes(value: Any, seen: set[int] | None = None) -> int:
    """Bytes of text a result holds: every str and bytes reachable from it, counted once."""
    seen = set() if seen is None else seen
    if id(value) in seen:
        return 0
    seen.add(id(value))
    if isinstance(value, (str, bytes)):
        return len(value)
    if isinstance(value, dict):
        return sum(retained_bytes(k, seen) + retained_bytes(v, seen) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return sum(retained_bytes(v, seen) for v in value)
    slots = [n for cls in type(value).__mro__ for n in getattr(cls, "__slots__", ())]
    return sum(retained_bytes(getattr(value, n, None), seen) for n in slots)


def test_retained_bytes_per_case_are_bounded_whatever_the_reply_size(tmp_path: Path) -> None:
    """4 MiB reply lines: a passing case keeps no line, a failing one at most KEEP of each."""
    passing = [case(f"m/large-{i}") for i in range(6)]
    failing = [case(f"m/large-wrongval-{i}") for i in range(3)]
    suite = suite_of(tmp_path, *passing, *failing)
    result = run(PersistentAdapter(fake_argv(), timeout=20), suite)
    assert [o for _, o in outcomes(result)] == [Outcome.PASS] * 6 + [Outcome.FAIL] * 3
    for r in result.results:
        kept = retained_bytes(r) - retained_bytes(r.case)
        if r.outcome is Outcome.PASS:
            assert r.request is None and r.response is None and kept < 1024
        else:
            assert r.response is not None and r.response.size > LARGE > 3 * KEEP
            assert not r.response.complete and r.response.sha256 is not None
            assert kept < 3 * KEEP
            assert r.response.render().endswith(
                f"[truncated: {r.response.size} bytes in all, sha256 {r.response.sha256}]"
            )


def test_stderr_flood_does_not_deadlock(tmp_path: Path) -> None:
    suite = suite_of(tmp_path, case("h/flood"), case("h/next"))
    result = run(PersistentAdapter(fake_argv(), timeout=10), suite)
    assert outcomes(result) == [("h/flood", Outcome.PASS), ("h/next", Outcome.PASS)]


def test_stderr_tail_keeps_only_the_end() -> None:
    tail = StderrTail(keep=10)
    for _ in range(100):
        tail.append(b"0123456789")
    tail.append(b"END")
    assert tail.text().endswith("789END") and len(tail.text()) < 40
    mark = tail.total
    tail.append(b"new")
    assert tail.since(mark) == "new"


def test_crash_on_start_ends_the_run_at_once_with_its_cause(tmp_path: Path) -> None:
    log = tmp_path / "starts.log"
    suite = suite_of(tmp_path, *(case(f"h/c{i}") for i in range(10)))
    impl = PersistentAdapter(fake_argv("--crash-on-start", "--log-starts", str(log)))
    result = run(impl, suite)
    assert isinstance(result.handshake_failure, Crash)
    assert "missing configuration file" in result.handshake_failure.message
    assert result.results == () and not result.started_ok and not result.ok
    assert starts(log) == 1  # no case is sent, so no restart is tried


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (("--bad-handshake",), ProtocolViolation),
        (("--hang-on-start",), Timeout),
        (("--crash-on-start",), Crash),
    ],
    ids=["invalid-reply", "no-reply", "exits-at-once"],
)
def test_a_failed_first_handshake_sends_no_case_in_either_mode(
    tmp_path: Path, flags: tuple[str, ...], expected: type
) -> None:
    suite = suite_of(tmp_path, case("h/a"), case("h/b"))
    for cls in (PersistentAdapter, OneShotAdapter):
        extra = ("--oneshot",) if cls is OneShotAdapter else ()
        result = run(cls(fake_argv(*flags, *extra), start_timeout=0.5), suite)
        assert isinstance(result.handshake_failure, expected), (cls, result.handshake_failure)
        assert result.results == () and not result.ok


def test_restarts_after_a_failed_spawn_stop_after_the_limit(tmp_path: Path) -> None:
    """A program that disappears mid-run is given up on after MAX_FAILED_RESTARTS attempts,
    not tried again for every remaining case."""
    program = tmp_path / "adapter.sh"
    program.write_text(f'#!/bin/sh\nrm -f "$0"\nexec {fake_cmd()}\n')
    program.chmod(0o755)
    suite = suite_of(tmp_path, case("h/crash"), *(case(f"h/c{i}") for i in range(10)))
    impl = PersistentAdapter([str(program)])
    result = run(impl, suite)
    assert result.started_ok
    assert [o for _, o in outcomes(result)] == [Outcome.CRASH] * 11
    assert result.restarts == MAX_FAILED_RESTARTS
    assert sum(result.restart_causes.values()) == result.restarts


def test_hang_on_start_is_a_handshake_timeout() -> None:
    impl = PersistentAdapter(fake_argv("--hang-on-start"), start_timeout=0.5)
    assert isinstance(impl.start(), Timeout)
    impl.close()


def test_invalid_handshake_is_a_protocol_violation(tmp_path: Path) -> None:
    got = PersistentAdapter(fake_argv("--bad-handshake")).start()
    assert isinstance(got, ProtocolViolation) and "version" in got.message


def test_unflushed_replies_time_out() -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    impl = PersistentAdapter(fake_argv("--no-flush"), start_timeout=0.5, env=env)
    assert isinstance(impl.start(), Timeout)
    impl.close()


def test_always_reject_is_never_a_crash(tmp_path: Path) -> None:
    suite = suite_of(tmp_path, case("h/ok"), case("h/rej", reject="bad_value"))
    result = run(PersistentAdapter(fake_argv("--always-reject", "other_code")), suite)
    assert outcomes(result) == [("h/ok", Outcome.FALSE_REJECTION), ("h/rej", Outcome.WRONG_CODE)]


def test_operations_missing_from_the_handshake_are_skipped(tmp_path: Path) -> None:
    suite = suite_of(tmp_path, case("h/a"), case("h/b", operation="plan"))
    result = run(PersistentAdapter(fake_argv("--ops", "echo")), suite)
    assert outcomes(result) == [("h/a", Outcome.PASS), ("h/b", Outcome.SKIPPED)]


def test_oneshot_mode_runs_one_process_per_case(tmp_path: Path) -> None:
    log = tmp_path / "starts.log"
    suite = suite_of(
        tmp_path,
        case("o/a"),
        case("o/r", reject="bad_value"),
        case("o/crash"),
        case("o/garbage"),
        case("o/next"),
    )
    impl = OneShotAdapter(fake_argv("--oneshot", "--log-starts", str(log)))
    result = run(impl, suite)
    assert isinstance(result.info, ImplementationInfo) and result.info.name == "fake"
    assert outcomes(result) == [
        ("o/a", Outcome.PASS),
        ("o/r", Outcome.PASS),
        ("o/crash", Outcome.CRASH),
        ("o/garbage", Outcome.ADAPTER_ERROR),
        ("o/next", Outcome.PASS),
    ]
    assert starts(log) == 6  # the metadata probe plus one per case


def test_oneshot_hang_is_killed_at_the_timeout(tmp_path: Path) -> None:
    suite = suite_of(tmp_path, case("o/hang"), case("o/ok"))
    result = run(OneShotAdapter(fake_argv("--oneshot"), timeout=0.5), suite)
    assert outcomes(result) == [("o/hang", Outcome.TIMEOUT), ("o/ok", Outcome.PASS)]


def test_missing_program_is_a_start_failure_not_an_exception(tmp_path: Path) -> None:
    suite = suite_of(tmp_path, case("o/a"))
    for cls in (PersistentAdapter, OneShotAdapter):
        result = run(cls([str(tmp_path / "no-such-adapter")]), suite)
        assert isinstance(result.handshake_failure, Crash)
        assert "no-such-adapter" in result.handshake_failure.message
        assert result.results == ()


def test_persistent_mode_is_fast_enough(tmp_path: Path) -> None:
    """Requests are pipelined: a quick adapter is not held to one pipe round trip per case."""
    suite = suite_of(tmp_path, *(case(f"p/{i}", value=i) for i in range(2000)))
    impl = PersistentAdapter(fake_argv())
    assert not isinstance(impl.start(), Crash)
    t0 = time.perf_counter()
    results = list(impl.run_batch(enumerate(suite.cases, start=1)))
    elapsed = time.perf_counter() - t0
    impl.close()
    assert len(results) == 2000
    assert all(not isinstance(r.reply, (Crash, Timeout, ProtocolViolation)) for r in results)
    assert elapsed < 2.0  # ~0.15 s on a laptop; generous for loaded CI machines


def test_crash_inside_a_pipelined_batch_resends_the_rest(tmp_path: Path) -> None:
    cases = [case(f"b/{i}") for i in range(50)]
    cases[20] = case("b/crash")
    cases[35] = case("b/hang")
    suite = suite_of(tmp_path, *cases)
    result = run(PersistentAdapter(fake_argv(), timeout=0.5), suite)
    bad = {cid: o for cid, o in outcomes(result) if o is not Outcome.PASS}
    assert bad == {"b/crash": Outcome.CRASH, "b/hang": Outcome.TIMEOUT}
    assert [r.seq for r in result.results] == list(range(1, 51))


ADAPTERS = {"persistent": (PersistentAdapter, ()), "oneshot": (OneShotAdapter, ("--oneshot",))}
needs_procfs = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


@needs_procfs
@pytest.mark.parametrize("mode", list(ADAPTERS))
def test_no_adapter_or_grandchild_outlives_the_run(tmp_path: Path, mode: str) -> None:
    cls, flags = ADAPTERS[mode]
    log = tmp_path / "pids.log"
    suite = suite_of(tmp_path, case("g/a"), case("g/crash"), case("g/hang"), case("g/b"))
    try:
        result = run(cls(fake_argv("--grandchild", str(log), *flags), timeout=0.5), suite)
        survivors = [p for p in logged_pids(log) if running(p)]
    finally:
        kill_logged(log)
    assert survivors == []
    assert [o for _, o in outcomes(result)] == [
        Outcome.PASS,
        Outcome.CRASH,
        Outcome.TIMEOUT,
        Outcome.PASS,
    ]
    # the first process, a restart after the crash and one after the hang (one-shot: more)
    assert len(logged_pids(log)) >= 6


@pytest.mark.parametrize("mode", list(ADAPTERS))
def test_crash_while_a_grandchild_holds_stdout_is_a_crash(tmp_path: Path, mode: str) -> None:
    cls, flags = ADAPTERS[mode]
    suite = suite_of(tmp_path, case("g/crash"), case("g/next"))
    log = tmp_path / "pids.log"
    try:
        result = run(cls(fake_argv("--grandchild", str(log), *flags), timeout=30), suite)
    finally:
        kill_logged(log)
    assert outcomes(result) == [("g/crash", Outcome.CRASH), ("g/next", Outcome.PASS)]
    detail = result.results[0].verdict.detail
    assert detail is not None and "status 3" in detail.message
