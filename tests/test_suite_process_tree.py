"""Nothing an adapter starts outlives the run, whatever it does and however the run ends.

The fake adapter's ``--escape HOW FILE`` starts a sleeper that ignores SIGTERM and leaves the
adapter's process group: in a new session (``setsid``), or as a daemon whose parent exits at
once (``double-fork``). Each test ends the run one way (a normal end, an adapter crash,
SIGINT or SIGTERM in a case or in the handshake, a SIGKILL of the runner) and then checks that
the adapter, the sleeper and the adapter's parent (the runner's supervisor) are gone, polling
/proc until a deadline where the end is not synchronous.
"""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from fakes.suite_fixture import case, fake_argv, fake_cmd, running, write_suite
from reasoning_replay.suite.adapter_process import OneShotAdapter, PersistentAdapter
from reasoning_replay.suite.outcomes import Outcome
from reasoning_replay.suite.runner import run_cases
from reasoning_replay.suite.vectors import load_vector_dirs

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

ESCAPES = ("setsid", "double-fork")
ADAPTERS: dict[str, tuple[Any, tuple[str, ...]]] = {
    "persistent": (PersistentAdapter, ()),
    "oneshot": (OneShotAdapter, ("--oneshot",)),
}
DEADLINE_S = 20.0  # the supervisor's grace for SIGTERM is 1 s; this is only an upper bound


def logged(log: Path) -> list[tuple[int, int, int]]:
    """(adapter, sleeper, adapter's parent) for every adapter process that escaped."""
    if not log.exists():
        return []
    rows = [line.split() for line in log.read_text().splitlines() if line.strip()]
    return [(int(a), int(s), int(p)) for a, s, p in rows]


def every_pid(log: Path) -> set[int]:
    """Every logged pid but this test's own (the parent of an adapter started unsupervised)."""
    return {pid for row in logged(log) for pid in row} - {os.getpid()}


def alive_at_deadline(pids: set[int], seconds: float = DEADLINE_S) -> list[int]:
    """The pids still running when all are gone or at the deadline, polling every 20 ms."""
    deadline = time.monotonic() + seconds
    while True:
        alive = sorted(pid for pid in pids if running(pid))
        if not alive or time.monotonic() >= deadline:
            return alive
        time.sleep(0.02)


def wait_for_rows(log: Path, rows: int, process: subprocess.Popen[bytes]) -> None:
    """Until the log has ``rows`` rows (the adapter handling the hanging case escaped)."""
    deadline = time.monotonic() + DEADLINE_S
    while len(logged(log)) < rows:
        assert process.poll() is None, "the runner ended before its adapter started"
        assert time.monotonic() < deadline, "the adapter never started"
        time.sleep(0.02)


@pytest.fixture
def log(tmp_path: Path) -> Any:
    path = tmp_path / "escaped.log"
    yield path
    for adapter, sleeper, _ in logged(path):  # a failed test leaves nothing running either
        for pid in (adapter, sleeper):
            if running(pid):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("mode", list(ADAPTERS))
@pytest.mark.parametrize("how", ESCAPES)
def test_nothing_outlives_a_normal_end_or_an_adapter_crash(
    tmp_path: Path, log: Path, how: str, mode: str
) -> None:
    cls, flags = ADAPTERS[mode]
    conf = write_suite(tmp_path, {"a.yaml": [case("e/a"), case("e/crash"), case("e/b")]})
    suite = load_vector_dirs([conf / "vectors"])
    impl = cls(fake_argv("--escape", how, str(log), *flags), timeout=10)
    result = run_cases(impl, suite, suite.cases)
    assert [r.outcome for r in result.results] == [Outcome.PASS, Outcome.CRASH, Outcome.PASS]
    assert len(logged(log)) >= 2  # the first adapter (crashed) and the one after it
    assert all(parent != 1 for _, _, parent in logged(log))  # each had its supervisor
    # The run's end is synchronous: when run_cases returns, every process is already gone.
    assert sorted(pid for pid in every_pid(log) if running(pid)) == []


def _runner(
    tmp_path: Path, how: str, log: Path, oneshot: bool, *more: str, command: str = "run"
) -> subprocess.Popen[bytes]:
    """``conformance COMMAND`` (run or smoke) with the fake adapter, whose sleeper escapes
    ``how`` (``more``: the fake's flags).

    Its stderr goes to ``tmp_path/runner.err``, a file, not a pipe: the supervisor inherits the
    runner's stderr, and reading a pipe to its end would wait for the supervisor's exit too,
    hiding a runner that exits before it has stopped everything."""
    conf = write_suite(tmp_path, {"a.yaml": [case("s/ok"), case("s/hang")]})
    flags = ("--escape", how, str(log), *(("--oneshot",) if oneshot else ()), *more)
    argv = [sys.executable, "-m", "reasoning_replay.cli.main", command]
    argv += ["--no-progress"] if command == "run" else []
    argv += ["--vectors", str(conf / "vectors"), "--impl", fake_cmd(*flags), "--timeout", "600"]
    argv += ["--oneshot"] if oneshot else []
    # SIGINT as a terminal gives it, even where this test runs with SIGINT ignored (a shell's
    # background job): an ignored disposition is inherited, and Python then keeps it.
    restore = functools.partial(signal.signal, signal.SIGINT, signal.SIG_DFL)
    with (tmp_path / "runner.err").open("wb") as err:
        null = subprocess.DEVNULL
        return subprocess.Popen(argv, stdout=null, stderr=err, preexec_fn=restore)  # noqa: PLW1509


# When the signal comes: while the adapter handles the hanging case, or while the runner still
# waits for its handshake (under load the adapter's log row, written before it reads the start
# request, can be seen that early; the fake's --hang-on-start makes that moment last).
MOMENTS = {"in-a-case": (), "in-the-handshake": ("--hang-on-start",)}


@pytest.mark.parametrize("moment", list(MOMENTS))
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("how", ESCAPES)
def test_nothing_outlives_a_runner_stopped_by_sigint_or_sigterm(
    tmp_path: Path, log: Path, how: str, signum: signal.Signals, moment: str
) -> None:
    _stop_and_check(_runner(tmp_path, how, log, False, *MOMENTS[moment]), tmp_path, log, signum)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_nothing_outlives_a_smoke_check_stopped_in_the_handshake(
    tmp_path: Path, log: Path, signum: signal.Signals
) -> None:
    runner = _runner(tmp_path, "setsid", log, False, "--hang-on-start", command="smoke")
    _stop_and_check(runner, tmp_path, log, signum)


@pytest.mark.parametrize("how", ESCAPES)
def test_a_second_signal_does_not_cut_short_the_end_of_the_first(
    tmp_path: Path, log: Path, how: str
) -> None:
    """Ctrl-C, then SIGTERM while the adapters are being ended (the sleeper's grace period): the
    runner still exits only once nothing is left, with the first signal's status."""
    runner = _runner(tmp_path, how, log, False)
    _stop_and_check(runner, tmp_path, log, signal.SIGINT, then=signal.SIGTERM)


def _stop_and_check(
    runner: subprocess.Popen[bytes],
    tmp_path: Path,
    log: Path,
    signum: signal.Signals,
    then: signal.Signals | None = None,
) -> None:
    try:
        wait_for_rows(log, 1, runner)
        runner.send_signal(signum)
        if then is not None:
            time.sleep(0.3)  # the supervisor gives the sleeper 1 s after its SIGTERM
            runner.send_signal(then)
        runner.wait(timeout=DEADLINE_S)
    finally:
        runner.kill()
    # The runner stops everything before it exits: nothing is left once it has.
    assert sorted(pid for pid in every_pid(log) if running(pid)) == []
    assert runner.returncode == 128 + signum
    assert f"interrupted by {signum.name}".encode() in (tmp_path / "runner.err").read_bytes()


@pytest.mark.parametrize("oneshot", [False, True], ids=["persistent", "oneshot"])
@pytest.mark.parametrize("how", ESCAPES)
def test_nothing_outlives_a_sigkill_of_the_runner(
    tmp_path: Path, log: Path, how: str, oneshot: bool
) -> None:
    """A SIGKILLed runner runs no cleanup: its supervisor sees it die and ends everything."""
    runner = _runner(tmp_path, how, log, oneshot=oneshot)
    try:
        wait_for_rows(log, 3 if oneshot else 1, runner)  # one-shot: the probe, s/ok, s/hang
        runner.send_signal(signal.SIGKILL)
        runner.wait(timeout=DEADLINE_S)
    finally:
        runner.kill()
    assert runner.returncode == -signal.SIGKILL
    assert alive_at_deadline(every_pid(log)) == []


def test_a_killed_supervisor_takes_its_adapter_with_it_and_the_run_goes_on(
    tmp_path: Path, log: Path
) -> None:
    """The supervisor's own SIGKILL ends its adapter (its parent-death signal): the case in
    flight is a crash, not a hang, and the next case runs under a new supervisor. (What the
    adapter started is then out of reach: the limit the supervisor's docstring states.)"""
    conf = write_suite(tmp_path, {"a.yaml": [case("k/ok"), case("k/hang"), case("k/next")]})
    suite = load_vector_dirs([conf / "vectors"])
    requests = tmp_path / "requests.log"
    argv = fake_argv("--escape", "setsid", str(log), "--log-requests", str(requests))
    impl = PersistentAdapter(argv, timeout=60)
    results: list[Any] = []
    runner = threading.Thread(target=lambda: results.append(run_cases(impl, suite, suite.cases)))
    runner.start()
    try:
        deadline = time.monotonic() + DEADLINE_S
        while "k/hang" not in (requests.read_text() if requests.exists() else ""):
            assert time.monotonic() < deadline, "k/hang never reached the adapter"
            time.sleep(0.02)
        adapter, _, supervisor = logged(log)[0]
        os.kill(supervisor, signal.SIGKILL)
    finally:
        runner.join(timeout=DEADLINE_S)
    assert not runner.is_alive()
    assert alive_at_deadline({adapter, supervisor}) == []
    outcomes = [(r.case.id, r.outcome) for r in results[0].results]
    assert outcomes == [
        ("k/ok", Outcome.PASS),
        ("k/hang", Outcome.CRASH),
        ("k/next", Outcome.PASS),
    ]
    assert len(logged(log)) == 2 and logged(log)[1][2] != supervisor  # a new supervisor
