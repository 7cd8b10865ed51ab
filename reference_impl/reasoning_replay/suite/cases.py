"""The vectors (SPEC §13) as test cases for another Python implementation's own test suite.

``pytest_cases`` returns one ``pytest.param`` per case, with the case id as the test id, so a
third-party implementation runs the suite under pytest without an adapter program; ``assert_case``
judges one result exactly as ``conformance run`` does. The cases come from the installed
package's ``vectors.bundle.json`` (see conformance/README.md, "Use the vectors from pytest").
A framework that reads histories in the items form asks for ``history_formats=("items",)``: it
gets the cases that apply to it (SPEC CL4), each neutral history already converted, and judged
as the runner judges such an implementation (SPEC CL2).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, Final

from reasoning_replay.resources import data_path

from .forms import Form, HistoryFormat, applicability, case_form, prepared_case, unjudged_members
from .governed import governed_reply
from .outcomes import Outcome, judge
from .protocol import OutputReply, RejectReply
from .vectors import BUNDLE_NAME, LEVELS, Case, Selection, load_bundle, select

if TYPE_CHECKING:  # pytest is the caller's dependency, imported only when params are asked for
    from _pytest.mark.structures import ParameterSet

# The operations of each part of the specification (SPEC §13): a profile selects them all.
PROFILES: Final[Mapping[str, tuple[str, ...]]] = {
    "record": ("read", "capture", "replay", "dedupe", "redact", "telemetry", "defaults"),
    "configuration-update-ordering": ("plan",),
    "stored-history": ("validate", "export", "scan"),
}


class UnknownSelection(ValueError):
    """A profile, operation or level that the suite does not have: a caller's typo, not data."""


@cache
def _bundled_cases() -> tuple[Case, ...]:
    suite = load_bundle(data_path("conformance", BUNDLE_NAME))
    if suite.problems:
        raise RuntimeError("; ".join(str(problem) for problem in suite.problems))
    return suite.cases


def vector_cases(
    *,
    operation: str | Sequence[str] | None = None,
    profile: str | None = None,
    levels: Iterable[str] = LEVELS,
    forms: Iterable[str] | None = None,
    history_formats: Iterable[str] = ("channels",),
    telemetry: bool = True,
) -> tuple[Case, ...]:
    """The bundled cases of one or more operations, or of a profile's operations, at the given
    levels (``MUST``, ``SHOULD``, ``MAY``) and forms (``neutral``, ``items``, ``storage``; SPEC
    CL4), in the suite's order, that apply to an implementation reading ``history_formats``
    (SPEC CL3, as its handshake would announce them), each as it is sent to such an
    implementation: a neutral history in the items form when the channels form is not read, and
    with what SPEC CL2 leaves unjudged (a plan's ``record`` in the items form; ``counters`` of a
    replay when ``telemetry`` is false) left out of the expectation."""
    cases = _bundled_cases()
    known_operations = {case.operation for case in cases}
    named = (operation,) if isinstance(operation, str) else tuple(operation or ())
    unknown = [name for name in named if name not in known_operations]
    wanted_levels = tuple(levels)
    unknown += [level for level in wanted_levels if level not in LEVELS]
    if profile is not None and profile not in PROFILES:
        unknown.append(f"profile {profile!r} (profiles: {', '.join(PROFILES)})")
    wanted_forms = tuple(forms) if forms is not None else tuple(Form)
    unknown += [f"form {f!r}" for f in wanted_forms if f not in set(Form)]
    formats = tuple(history_formats)
    unknown += [f"history format {f!r}" for f in formats if f not in set(HistoryFormat)]
    if unknown:
        raise UnknownSelection(
            f"not in the suite: {', '.join(unknown)} (operations: "
            f"{', '.join(sorted(known_operations))}; levels: {', '.join(LEVELS)}; forms: "
            f"{', '.join(Form)}; history formats: {', '.join(HistoryFormat)})"
        )
    operations = named
    if profile is not None:
        in_profile = PROFILES[profile]
        operations = tuple(name for name in named if name in in_profile) if named else in_profile
        if not operations:  # the named operations are all outside the profile
            return ()
    chosen = select(cases, Selection(operations=operations, levels=wanted_levels))
    announced = tuple(HistoryFormat(f) for f in formats)
    implemented = {*known_operations} - (set() if telemetry else {"telemetry"})
    sent = []
    for case in chosen:
        if case_form(case) not in wanted_forms:
            continue
        applies = applicability(case, announced)
        if applies.applies:
            unjudged = unjudged_members(case, applies.history_format, implemented)
            sent.append(prepared_case(case, applies.history_format, unjudged))
    return tuple(sent)


def pytest_cases(
    *,
    operation: str | Sequence[str] | None = None,
    profile: str | None = None,
    levels: Iterable[str] = LEVELS,
    forms: Iterable[str] | None = None,
    history_formats: Iterable[str] = ("channels",),
    telemetry: bool = True,
) -> list[ParameterSet]:
    """``vector_cases(...)`` as ``pytest.param(case, id=case.id)``, for
    ``@pytest.mark.parametrize("case", pytest_cases(operation="read"))``."""
    import pytest  # noqa: PLC0415 - only callers that use pytest need it

    return [
        pytest.param(case, id=case.id)
        for case in vector_cases(
            operation=operation,
            profile=profile,
            levels=levels,
            forms=forms,
            history_formats=history_formats,
            telemetry=telemetry,
        )
    ]


def assert_case(
    case: Case, output: Mapping[str, Any] | None = None, *, code: str | None = None
) -> None:
    """Passes when the operation's result is what the case expects: ``output`` (compared as JSON
    values) or the rejection ``code``. Otherwise raises ``AssertionError`` naming the case, its
    rule and the first difference (a JSON pointer), as ``conformance run`` reports it."""
    reply: OutputReply | RejectReply
    if output is not None and code is None:
        reply = OutputReply(output)
    elif code is not None and output is None:
        reply = RejectReply(code)
    else:
        raise TypeError("give exactly one of output and code")
    verdict = judge(case.expect, governed_reply(case, reply))
    if verdict.outcome is not Outcome.PASS:
        why = verdict.detail.message if verdict.detail is not None else verdict.outcome.value
        raise AssertionError(f"{case.id} [{case.spec}, {case.level}]: {why}")
