"""Drives selected cases through an implementation and collects the results."""

from __future__ import annotations

import datetime as dt
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

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
from .implementation import Exchange, Implementation
from .outcomes import UNEXPECTED, Detail, Outcome, Verdict
from .profiles import PROFILES, Profile, judge_in
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
    profile: Profile = Profile.DIAGNOSTICS  # what ``results`` were judged in (SPEC.md#profiles)
    strict_levels: bool = False  # SHOULD and MAY cases decide too
    # the same replies judged in the run's other profiles
    others: tuple[RunResult, ...] = ()

    @property
    def profiles(self) -> tuple[RunResult, ...]:
        """The run in each of its profiles, in ``PROFILES`` order."""
        return tuple(sorted((self, *self.others), key=lambda r: PROFILES.index(r.profile)))

    def totals(self) -> dict[Outcome, int]:
        counts = Counter(r.outcome for r in self.results)
        return {o: counts.get(o, 0) for o in Outcome}

    @property
    def unexpected(self) -> tuple[CaseResult, ...]:
        """Unexpected results at every level."""
        return tuple(r for r in self.results if r.unexpected)

    def decides(self, r: CaseResult) -> bool:
        """Whether the case's result decides conformance (SPEC.md#levels)."""
        return self.strict_levels or r.case.level == "MUST"

    @property
    def failing(self) -> tuple[CaseResult, ...]:
        """Unexpected results that fail this profile."""
        return tuple(r for r in self.unexpected if self.decides(r))

    @property
    def not_met(self) -> tuple[CaseResult, ...]:
        """Unexpected results of SHOULD and MAY cases: reported, deciding nothing."""
        return tuple(r for r in self.unexpected if not self.decides(r))

    @property
    def stale_fails(self) -> tuple[StaleEntry, ...]:
        """Stale entries not already counted as an unexpected case."""
        return tuple(s for s in self.stale if s.problem == "matches_no_case")

    @property
    def passed(self) -> bool:
        """This profile conforms."""
        return not self.failing and not self.stale_fails

    @property
    def ok(self) -> bool:
        """Every profile of the run conforms."""
        return all(view.passed for view in self.profiles)


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
    profiles: Sequence[Profile] = PROFILES,
    strict_levels: bool = False,
) -> RunResult:
    """The run, judged in the last of ``profiles`` (in ``PROFILES`` order), the others in
    ``others``: each case is sent once and its reply judged in every profile."""
    started = dt.datetime.now(dt.UTC)
    t0 = time.perf_counter()
    chosen = tuple(p for p in PROFILES if p in profiles) or PROFILES
    results: dict[Profile, list[CaseResult]] = {p: [] for p in chosen}
    handshake = impl.start()
    info = handshake if isinstance(handshake, ImplementationInfo) else None
    # Without a handshake every operation is tried: the cases then show what is wrong.
    supported = frozenset(info.operations) if info is not None else None
    total = len(cases)
    # Decide up front which cases are not run, so the rest can go to the implementation as one
    # batch (a persistent adapter overlaps them); results still come back in case order.
    plan = [
        (seq, case, entries, tuple(_not_run(case, e, supported) for e in entries))
        for seq, case in enumerate(cases, start=1)
        for entries in (tuple(expectations.lookup(case, p) for p in chosen),)
    ]
    try:
        exchanges = impl.run_batch(
            (seq, case) for seq, case, _, pre in plan if any(v is None for v in pre)
        )
        for seq, case, entries, pre in plan:
            ex = next(exchanges) if any(v is None for v in pre) else None
            for profile, entry, skip in zip(chosen, entries, pre, strict=True):
                results[profile].append(_result(case, seq, profile, entry=entry, skip=skip, ex=ex))
            if progress is not None:
                progress(seq, total, results[chosen[-1]][-1])
    finally:
        impl.close()
    run = RunResult(
        suite=suite,
        results=(),
        mode=impl.mode,
        command=impl.command,
        info=info,
        handshake_failure=None if isinstance(handshake, ImplementationInfo) else handshake,
        started=started,
        duration_s=time.perf_counter() - t0,
        restarts=impl.restarts,
        expectations=expectations,
        strict_levels=strict_levels,
    )
    views = [
        replace(
            run,
            results=tuple(results[p]),
            stale=_stale(expectations, suite, results[p], p),
            profile=p,
        )
        for p in chosen
    ]
    return replace(views[-1], others=tuple(views[:-1]))


def _result(
    case: Case,
    seq: int,
    profile: Profile,
    *,
    entry: Entry | None,
    skip: Verdict | None,
    ex: Exchange | None,
) -> CaseResult:
    if skip is not None or ex is None:
        return CaseResult(case, seq, skip or Verdict(Outcome.SKIPPED), 0.0, entry)
    judged = judge_in(profile, case.operation, case.expect, governed_reply(case, ex.reply))
    return CaseResult(
        case,
        seq,
        apply(judged, entry),
        ex.duration_s or 0.0,
        entry,
        ex.request,
        ex.response,
        ex.stderr,
    )


def _stale(
    expectations: Expectations, suite: Suite, results: Sequence[CaseResult], profile: Profile
) -> tuple[StaleEntry, ...]:
    if not expectations.entries:
        return ()
    judged = (Judged(r.case, r.verdict, r.entry, profile) for r in results)
    return stale_entries(expectations, suite.cases, judged)
