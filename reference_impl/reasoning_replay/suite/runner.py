"""Drives selected cases through an implementation and collects the results (SPEC §13).

Each result keeps only what the reports show, bounded (:mod:`.retained`): a passing or skipped
case keeps no line, any other keeps at most 64 KiB of each line, text and compared value.

A run whose handshake fails (a program that cannot be started, a wrong protocol, a line that is
not JSON, an exit before the reply) ends at once, with no case sent: every case would only repeat
that failure. Crashes later in a run cost the case being handled, and the adapter is restarted
(:mod:`.adapter_process`); the run keeps how often, and why.
"""

from __future__ import annotations

import datetime as dt
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Final

from . import protocol
from .compare import ABSENT
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
from .outcomes import UNEXPECTED, Detail, Outcome, Verdict, output_differs
from .profiles import PROFILES, Profile, judge_in
from .protocol import Failure, ImplementationInfo, OutputReply, Reply, Timeout
from .retained import Kept, bounded_value, clip_text
from .vectors import Case, Suite

if TYPE_CHECKING:
    from .report_redaction import CaseRedaction

# Outcomes whose reports show no request or response line (PASS: no detail at all).
_NO_LINES: Final = frozenset({Outcome.PASS, Outcome.SKIPPED})


@dataclass(frozen=True, slots=True)
class CaseResult:
    case: Case
    seq: int
    verdict: Verdict
    duration_s: float
    entry: Entry | None = None
    request: Kept | None = None  # the request line (no newline); None for passed and skipped
    response: Kept | None = None  # the reply line, when there was one
    stderr: str | None = None

    @property
    def outcome(self) -> Outcome:
        return self.verdict.outcome

    @property
    def unexpected(self) -> bool:
        return self.verdict.outcome in UNEXPECTED


def _kept_detail(
    detail: Detail | None, redaction: CaseRedaction | None, expected: object, reply: object
) -> Detail | None:
    if detail is None:
        return None
    message, traceback, mismatch = detail.message, detail.traceback, detail.mismatch
    if redaction is not None:
        message = redaction.text(message)
        traceback = None if traceback is None else redaction.text(traceback)
        if mismatch is not None:
            actual = reply.output if isinstance(reply, OutputReply) else ABSENT
            raw, mismatch = mismatch, redaction.mismatch(mismatch, expected, actual)
            if message == output_differs(raw):
                message = output_differs(mismatch)
    if mismatch is not None:
        mismatch = replace(
            mismatch,
            expected=bounded_value(mismatch.expected),
            actual=bounded_value(mismatch.actual),
        )
    return replace(
        detail,
        message=clip_text(message),
        mismatch=mismatch,
        traceback=None if traceback is None else clip_text(traceback),
    )


def kept_result(
    case: Case,
    seq: int,
    verdict: Verdict,
    entry: Entry | None,
    ex: Exchange,
    *,
    judged: Reply | Failure | None = None,
    redaction: CaseRedaction | None = None,
) -> CaseResult:
    """The result of a case that ran, holding only what its reports show, bounded (and
    redacted before it is cut, when ``redaction`` is given). ``judged`` is the reply as the
    verdict compared it, when that is not ``ex.reply`` itself."""
    reply = ex.reply if judged is None else judged
    detail = _kept_detail(verdict.detail, redaction, case.expect.output, reply)
    verdict = replace(verdict, detail=detail)
    duration = ex.duration_s or 0.0
    stderr = ex.stderr
    if stderr is not None:
        stderr = clip_text(stderr if redaction is None else redaction.text(stderr))
    if verdict.outcome in _NO_LINES:
        return CaseResult(case, seq, verdict, duration, entry, stderr=stderr)
    request = ex.request if ex.request is not None else protocol.run_request_line(seq, case)
    lines = [request.rstrip(b"\n"), ex.response]
    if redaction is not None:
        lines = [None if line is None else redaction.line(line) for line in lines]
    request_line, response = lines
    assert request_line is not None
    return CaseResult(
        case,
        seq,
        verdict,
        duration,
        entry,
        Kept.of(request_line),
        None if response is None else Kept.of(response),
        stderr,
    )


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
    restart_causes: Mapping[str, int] = field(default_factory=dict)  # cause → restarts
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
    def started_ok(self) -> bool:
        """The handshake succeeded, so the cases ran; otherwise none was sent."""
        return self.handshake_failure is None

    @property
    def ok(self) -> bool:
        """The implementation started and every profile of the run conforms."""
        return self.started_ok and all(view.passed for view in self.profiles)


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
    redact: bool = False,
) -> RunResult:
    """The run, judged in the last of ``profiles`` (in ``PROFILES`` order), the others in
    ``others``: each case is sent once and its reply judged in every profile. With ``redact``,
    every line, text and value the results keep for reports is redacted first
    (``--redact-reports``: vectors holding real captures)."""
    started = dt.datetime.now(dt.UTC)
    redactor: Callable[[Case], CaseRedaction] | None = None
    if redact:
        # late import: the runner needs the reference only to redact
        from .report_redaction import case_redaction  # noqa: PLC0415

        redactor = case_redaction
    t0 = time.perf_counter()
    chosen = tuple(p for p in PROFILES if p in profiles) or PROFILES
    results: dict[Profile, list[CaseResult]] = {p: [] for p in chosen}
    handshake = impl.start()
    if not isinstance(handshake, ImplementationInfo):
        impl.close()
        duration = time.perf_counter() - t0
        return _not_started(
            impl, suite, handshake, started=started, duration_s=duration, profiles=chosen
        )
    info = handshake
    supported = frozenset(info.operations)
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
            redaction = None if redactor is None or ex is None else redactor(case)
            for profile, entry, skip in zip(chosen, entries, pre, strict=True):
                results[profile].append(
                    _result(case, seq, profile, entry=entry, skip=skip, ex=ex, redaction=redaction)
                )
            del ex  # the reply, however large, is not kept past this case
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
        handshake_failure=None,
        started=started,
        duration_s=time.perf_counter() - t0,
        restarts=impl.restarts,
        restart_causes=dict(impl.restart_causes),
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


def _not_started(
    impl: Implementation,
    suite: Suite,
    failure: Failure,
    *,
    started: dt.datetime,
    duration_s: float,
    profiles: Sequence[Profile],
) -> RunResult:
    """The run of an implementation whose handshake failed: no case was sent."""
    run = RunResult(
        suite=suite,
        results=(),
        mode=impl.mode,
        command=impl.command,
        info=None,
        handshake_failure=failure,
        started=started,
        duration_s=duration_s,
        restarts=0,
    )
    views = [replace(run, profile=p) for p in profiles]
    return replace(views[-1], others=tuple(views[:-1]))


def _result(
    case: Case,
    seq: int,
    profile: Profile,
    *,
    entry: Entry | None,
    skip: Verdict | None,
    ex: Exchange | None,
    redaction: CaseRedaction | None,
) -> CaseResult:
    if skip is not None or ex is None:
        return CaseResult(case, seq, skip or Verdict(Outcome.SKIPPED), 0.0, entry)
    reply = governed_reply(case, ex.reply)
    verdict = apply(judge_in(profile, case.operation, case.expect, reply), entry)
    return kept_result(case, seq, verdict, entry, ex, judged=reply, redaction=redaction)


def _stale(
    expectations: Expectations, suite: Suite, results: Sequence[CaseResult], profile: Profile
) -> tuple[StaleEntry, ...]:
    if not expectations.entries:
        return ()
    judged = (Judged(r.case, r.verdict, r.entry, profile) for r in results)
    return stale_entries(expectations, suite.cases, judged)
