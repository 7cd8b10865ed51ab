"""Drives selected cases through an implementation and collects the results (SPEC §13).

Which cases apply, and in which history form each goes, follows from the cases' form tags and
the handshake (SPEC CL4, :mod:`.forms`). Each result keeps only what the reports show, bounded
(:mod:`.retained`): a passing, skipped or not applicable case keeps no line, any other keeps at
most 64 KiB of each line, text and compared value.

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
from .applicability import applicability, prepared_case, unjudged_members
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
from .forms import HistoryFormat
from .governed import governed_reply
from .implementation import Exchange, Implementation
from .outcomes import UNEXPECTED, Detail, Outcome, Verdict, output_differs
from .probe import DEFAULTS, DefaultsProbe, defaults_probe
from .profiles import PROFILES, Profile, judge_in
from .protocol import Failure, ImplementationInfo, OutputReply, Reply, Timeout
from .retained import Kept, bounded_value, clip_text
from .vectors import Case, Suite

if TYPE_CHECKING:
    from .report_redaction import CaseRedaction

# Outcomes whose reports show no request or response line (PASS: no detail at all).
_NO_LINES: Final = frozenset({Outcome.PASS, Outcome.SKIPPED, Outcome.NOT_APPLICABLE})


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
    history_format: HistoryFormat | None = None  # the form its history was sent in (CL3)
    probe: DefaultsProbe | None = None  # a defaults case's reply as probed (SPEC CL4)

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
    # the history forms the run judged the implementation in (SPEC CL4): the announced ones, or
    # the one ``--history-format`` asked for
    history_formats: tuple[HistoryFormat, ...] = (HistoryFormat.CHANNELS,)
    judged_as: HistoryFormat | None = None  # --history-format

    @property
    def probes(self) -> tuple[tuple[Case, DefaultsProbe], ...]:
        """Every defaults case's reply as probed, in case order (SPEC CL4)."""
        return tuple((r.case, r.probe) for r in self.results if r.probe is not None)

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


def announced_formats(info: ImplementationInfo) -> tuple[HistoryFormat, ...]:
    """The history forms an implementation reads (SPEC CL3): as announced, the channels form when
    it announces none."""
    return tuple(f for f in HistoryFormat if f.value in info.formats)


def _judged_formats(
    info: ImplementationInfo, judged_as: HistoryFormat | None
) -> tuple[HistoryFormat, ...]:
    announced = announced_formats(info)
    return announced if judged_as is None else tuple(f for f in announced if f is judged_as)


@dataclass(frozen=True, slots=True)
class _Planned:
    """One case before it runs: the case as sent and judged, its expectations entries, and per
    profile the verdict of a case that is not sent (``None``: it is sent)."""

    seq: int
    case: Case
    entries: tuple[Entry | None, ...]
    pre: tuple[Verdict | None, ...]
    history_format: HistoryFormat | None

    @property
    def sent(self) -> bool:
        return any(v is None for v in self.pre)


def _planned(
    seq: int,
    case: Case,
    entries: tuple[Entry | None, ...],
    supported: frozenset[str],
    formats: tuple[HistoryFormat, ...],
) -> _Planned:
    """SPEC CL4: a case that does not apply is ``not_applicable`` in every profile; one that does
    goes in its form, with what the handshake leaves unjudged (SPEC CL2)."""
    applies = applicability(case, formats)
    if not applies.applies:
        not_applicable = Verdict(Outcome.NOT_APPLICABLE, Detail(applies.reason or "not applicable"))
        return _Planned(seq, case, entries, tuple(not_applicable for _ in entries), None)
    unjudged = unjudged_members(case, applies.history_format, supported)
    try:
        sent = prepared_case(case, applies.history_format, unjudged)
    except ValueError as exc:  # items_form.NotNeutral: a form tag `conformance check` refuses
        detail = Detail(f"its form:neutral tag is wrong (run `conformance check`): {exc}")
        wrong = Verdict(Outcome.NOT_APPLICABLE, detail)
        return _Planned(seq, case, entries, tuple(wrong for _ in entries), None)
    pre = tuple(_not_run(case, e, supported) for e in entries)
    return _Planned(seq, sent, entries, pre, applies.history_format)


def _not_run(case: Case, entry: Entry | None, supported: frozenset[str]) -> Verdict | None:
    if entry is not None and entry.state is State.SKIP:
        return skip_verdict(entry)
    if case.operation not in supported:
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
    judged_as: HistoryFormat | None = None,
) -> RunResult:
    """The run, judged in the last of ``profiles`` (in ``PROFILES`` order), the others in
    ``others``: each case is sent once and its reply judged in every profile. With ``redact``,
    every line, text and value the results keep for reports is redacted first
    (``--redact-reports``: vectors holding real captures). With ``judged_as``, the
    implementation is judged as if it read only that history form (SPEC CL4; a form it does not
    announce leaves every history case not applicable)."""
    started = dt.datetime.now(dt.UTC)
    redactor: Callable[[Case], CaseRedaction] | None = None
    if redact:
        # late import: the runner needs the reference only to redact
        from .report_redaction import case_redaction  # noqa: PLC0415

        redactor = case_redaction
    t0 = time.perf_counter()
    chosen = tuple(p for p in PROFILES if p in profiles) or PROFILES
    results: dict[Profile, list[CaseResult]] = {p: [] for p in chosen}
    # Everything from the start on is inside: a signal while the runner waits for the handshake,
    # or plans the cases, stops the adapter and what it started before the runner exits, as it
    # does in a case (conformance/README.md).
    try:
        handshake = impl.start()
        if isinstance(handshake, ImplementationInfo):
            formats = _judged_formats(handshake, judged_as)
            supported = frozenset(handshake.operations)
            entries = [tuple(expectations.lookup(case, p) for p in chosen) for case in cases]
            plan = [
                _planned(seq, case, found, supported, formats)
                for seq, (case, found) in enumerate(zip(cases, entries, strict=True), start=1)
            ]
            _judge_all(impl, plan, results, redactor, progress)
    finally:
        impl.close()
    if not isinstance(handshake, ImplementationInfo):
        duration = time.perf_counter() - t0
        return _not_started(
            impl, suite, handshake, started=started, duration_s=duration, profiles=chosen
        )
    info = handshake
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
        history_formats=formats,
        judged_as=judged_as,
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


def _judge_all(
    impl: Implementation,
    plan: Sequence[_Planned],
    results: dict[Profile, list[CaseResult]],
    redactor: Callable[[Case], CaseRedaction] | None,
    progress: Progress | None,
) -> None:
    """Send the planned cases and append each one's result to ``results``, per profile, in case
    order. The cases not run are decided up front (``plan``), so the rest go to the
    implementation as one batch (a persistent adapter overlaps them)."""
    chosen = tuple(results)
    total = len(plan)
    exchanges = impl.run_batch((p.seq, p.case) for p in plan if p.sent)
    for planned in plan:
        seq, case = planned.seq, planned.case
        ex = next(exchanges) if planned.sent else None
        redaction = None if redactor is None or ex is None else redactor(case)
        probe = (
            defaults_probe(case.input, ex.reply)
            if ex is not None and case.operation == DEFAULTS
            else None
        )
        for profile, entry, skip in zip(chosen, planned.entries, planned.pre, strict=True):
            result = _result(case, seq, profile, entry=entry, skip=skip, ex=ex, redaction=redaction)
            results[profile].append(
                replace(result, history_format=planned.history_format, probe=probe)
            )
        del ex  # the reply, however large, is not kept past this case
        if progress is not None:
            progress(seq, total, results[chosen[-1]][-1])


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
