"""Drives selected cases through an implementation and collects the results."""

from __future__ import annotations

import datetime as dt
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from . import protocol
from .expectations import (
    NO_EXPECTATIONS,
    Entry,
    Expectations,
    Judged,
    StaleEntry,
    State,
    apply,
    skip_verdict,
    stale_entries,
)
from .governed import governed_reply
from .implementation import Implementation
from .outcomes import UNEXPECTED, Detail, Outcome, Verdict, judge
from .protocol import Failure, ImplementationInfo, Timeout
from .vectors import Case, Suite


@dataclass(frozen=True, slots=True)
class CaseResult:
    case: Case
    seq: int
    verdict: Verdict
    duration_s: float
    entry: Entry | None = None
    request: bytes | None = None  # None in-process: rebuilt on demand by request_line()
    response: bytes | None = None
    stderr: str | None = None

    @property
    def outcome(self) -> Outcome:
        return self.verdict.outcome

    @property
    def unexpected(self) -> bool:
        return self.verdict.outcome in UNEXPECTED

    def request_line(self) -> bytes:
        """The exact request line (without newline) this case was, or would be, sent as."""
        line = self.request or protocol.run_request_line(self.seq, self.case)
        return line.rstrip(b"\n")


@dataclass(frozen=True, slots=True)
class RunResult:
    suite: Suite
    results: tuple[CaseResult, ...]
    mode: str
    command: tuple[str, ...] | None
    info: ImplementationInfo | None
    handshake_failure: Failure | None
    started: dt.datetime
    duration_s: float
    restarts: int
    stale: tuple[StaleEntry, ...] = ()
    expectations: Expectations = NO_EXPECTATIONS

    def totals(self) -> dict[Outcome, int]:
        counts = Counter(r.outcome for r in self.results)
        return {o: counts.get(o, 0) for o in Outcome}

    @property
    def unexpected(self) -> tuple[CaseResult, ...]:
        return tuple(r for r in self.results if r.unexpected)

    @property
    def stale_fails(self) -> tuple[StaleEntry, ...]:
        """Stale entries not already counted as an unexpected case."""
        return tuple(s for s in self.stale if s.problem == "matches_no_case")

    @property
    def ok(self) -> bool:
        return not self.unexpected and not self.stale_fails


Progress = Callable[[int, int, CaseResult], None]


def handshake_message(failure: Failure) -> str:
    if isinstance(failure, Timeout):
        return f"no reply to the start request within {failure.seconds:g} s"
    return failure.message


def _not_run(case: Case, entry: Entry | None, supported: frozenset[str] | None) -> Verdict | None:
    if entry is not None and entry.state is State.SKIP:
        return skip_verdict(entry)
    if supported is not None and case.operation not in supported:
        detail = Detail(f"operation {case.operation!r} is not supported by the implementation")
        return Verdict(Outcome.SKIPPED, detail)
    return None


def run_cases(
    impl: Implementation,
    suite: Suite,
    cases: Sequence[Case],
    *,
    expectations: Expectations = NO_EXPECTATIONS,
    progress: Progress | None = None,
) -> RunResult:
    started = dt.datetime.now(dt.UTC)
    t0 = time.perf_counter()
    results: list[CaseResult] = []
    handshake = impl.start()
    info = handshake if isinstance(handshake, ImplementationInfo) else None
    # Without a handshake every operation is tried: the cases then show what is wrong.
    supported = frozenset(info.operations) if info is not None else None
    total = len(cases)
    # Decide up front which cases are not run, so the rest can go to the implementation as one
    # batch (a persistent adapter overlaps them); results still come back in case order.
    plan = [
        (seq, case, entry, _not_run(case, entry, supported))
        for seq, case in enumerate(cases, start=1)
        for entry in (expectations.lookup(case),)
    ]
    try:
        exchanges = impl.run_batch((seq, case) for seq, case, _, pre in plan if pre is None)
        for seq, case, entry, pre in plan:
            if pre is not None:
                result = CaseResult(case, seq, pre, 0.0, entry)
            else:
                ex = next(exchanges)
                verdict = apply(judge(case.expect, governed_reply(case, ex.reply)), entry)
                result = CaseResult(
                    case,
                    seq,
                    verdict,
                    ex.duration_s or 0.0,
                    entry,
                    ex.request,
                    ex.response,
                    ex.stderr,
                )
            results.append(result)
            if progress is not None:
                progress(seq, total, result)
    finally:
        impl.close()
    stale: tuple[StaleEntry, ...] = ()
    if expectations.entries:
        stale = stale_entries(
            expectations, suite.cases, (Judged(r.case, r.verdict, r.entry) for r in results)
        )
    return RunResult(
        suite=suite,
        results=tuple(results),
        mode=impl.mode,
        command=impl.command,
        info=info,
        handshake_failure=None if isinstance(handshake, ImplementationInfo) else handshake,
        started=started,
        duration_s=time.perf_counter() - t0,
        restarts=impl.restarts,
        stale=stale,
        expectations=expectations,
    )
