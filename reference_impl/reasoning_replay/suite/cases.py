"""The vectors (SPEC §13) as test cases for another Python implementation's own test suite.

``pytest_cases`` returns one ``pytest.param`` per case, with the case id as the test id, so a
third-party implementation runs the suite under pytest without an adapter program; ``assert_case``
judges one result exactly as ``conformance run`` does, in either profile of SPEC CL2. The cases
come from the installed package's ``vectors.bundle.json`` (see conformance/README.md, "Use the
vectors from pytest"). A framework that reads histories in the items form asks for
``history_formats="items"``: it gets the cases that apply to it (SPEC CL4), each neutral history
already converted, and judged as the runner judges such an implementation (SPEC CL2).

Every selector takes one name or several (``levels="MUST"`` or ``levels=["MUST", "SHOULD"]``).
A part of the specification is selected by ``part=``; ``profile=`` is the conformance profile
(CL2) of ``assert_case``. ``pytest_cases`` and ``vector_cases`` used to call the part ``profile=``:
that keyword still selects a part, with a ``DeprecationWarning`` (CHANGELOG.md).

The helpers hide their own frames from pytest's tracebacks (``__tracebackhide__``): a failing
case shows the caller's line and the case's message, not this module's source.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any, Final

from reasoning_replay.resources import data_path

from .applicability import applicability, case_form, prepared_case, unjudged_members
from .forms import Form, HistoryFormat
from .governed import governed_reply
from .outcomes import Outcome
from .profiles import Profile, judge_in
from .protocol import OutputReply, RejectReply
from .selection import Selection, select
from .vectors import BUNDLE_NAME, LEVELS, Case, load_bundle

if TYPE_CHECKING:  # pytest is the caller's dependency, imported only when params are asked for
    from _pytest.mark.structures import ParameterSet

# The operations of each part of the specification (SPEC §13): a part selects them all.
PARTS: Final[Mapping[str, tuple[str, ...]]] = {
    "record": ("read", "capture", "replay", "dedupe", "redact", "telemetry", "defaults"),
    "configuration-update-ordering": ("plan",),
    "stored-history": ("validate", "export", "scan"),
}

Names = str | Iterable[str]
"""A selector's value: one name, or any iterable of names (never a string's characters)."""


class UnknownSelection(ValueError):
    """A part, operation, level or profile that the suite does not have: a caller's typo, not
    data."""


@cache
def _bundled_cases() -> tuple[Case, ...]:
    suite = load_bundle(data_path("conformance", BUNDLE_NAME))
    if suite.problems:
        raise RuntimeError("; ".join(str(problem) for problem in suite.problems))
    return suite.cases


def _names(selector: Names | None) -> tuple[str, ...]:
    """A selector's names: a string is one name (``"MUST"``, not ``M, U, S, T``)."""
    if selector is None:
        return ()
    if isinstance(selector, str):
        return (selector,)
    return tuple(selector)


def _part_of_old_keyword(part: Names | None, profile: Names | None) -> Names | None:
    """``part``, or the value of the deprecated ``profile=`` selector when ``part`` is not given."""
    if profile is None:
        return part
    if part is not None:
        raise TypeError("give part= only (profile= is its deprecated name)")
    conformance_profiles = [name for name in _names(profile) if name in set(Profile)]
    if conformance_profiles:
        raise UnknownSelection(
            f"profile {conformance_profiles[0]!r} is a conformance profile (SPEC CL2): pass it "
            "to assert_case(..., profile=...); a part of the specification is selected by part="
        )
    warnings.warn(
        "profile= selects a part of the specification here: call it part= (profile= now names "
        "the conformance profile of assert_case)",
        DeprecationWarning,
        stacklevel=3,
    )
    return profile


def vector_cases(
    *,
    operation: Names | None = None,
    part: Names | None = None,
    levels: Names = LEVELS,
    forms: Names | None = None,
    history_formats: Names = ("channels",),
    telemetry: bool = True,
    profile: Names | None = None,
) -> tuple[Case, ...]:
    """The bundled cases of one or more operations, or of the operations of one or more parts of
    the specification (``record``, ``configuration-update-ordering``, ``stored-history``), at the
    given levels (``MUST``, ``SHOULD``, ``MAY``) and forms (``neutral``, ``items``, ``storage``;
    SPEC CL4), in the suite's order, that apply to an implementation reading ``history_formats``
    (SPEC CL3, as its handshake would announce them), each as it is sent to such an
    implementation: a neutral history in the items form when the channels form is not read, and
    with what SPEC CL2 leaves unjudged (a plan's ``record`` in the items form; ``counters`` of a
    replay when ``telemetry`` is false) left out of the expectation. ``profile`` is the
    deprecated name of ``part``."""
    __tracebackhide__ = True
    part = _part_of_old_keyword(part, profile)
    cases = _bundled_cases()
    known_operations = {case.operation for case in cases}
    named = _names(operation)
    parts = _names(part)
    wanted_levels = _names(levels)
    wanted_forms = _names(forms) if forms is not None else tuple(Form)
    formats = _names(history_formats)
    unknown = [name for name in named if name not in known_operations]
    unknown += [level for level in wanted_levels if level not in LEVELS]
    unknown += [f"part {name!r}" for name in parts if name not in PARTS]
    unknown += [f"form {f!r}" for f in wanted_forms if f not in set(Form)]
    unknown += [f"history format {f!r}" for f in formats if f not in set(HistoryFormat)]
    if unknown:
        raise UnknownSelection(
            f"not in the suite: {', '.join(unknown)} (operations: "
            f"{', '.join(sorted(known_operations))}; levels: {', '.join(LEVELS)}; "
            f"parts: {', '.join(PARTS)}; forms: {', '.join(Form)}; history formats: "
            f"{', '.join(HistoryFormat)})"
        )
    operations = named
    if parts:
        in_parts = [name for p in parts for name in PARTS[p]]
        operations = tuple(name for name in named if name in in_parts) if named else (*in_parts,)
        if not operations:  # the named operations are all outside the parts
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
    operation: Names | None = None,
    part: Names | None = None,
    levels: Names = LEVELS,
    forms: Names | None = None,
    history_formats: Names = ("channels",),
    telemetry: bool = True,
    profile: Names | None = None,
) -> list[ParameterSet]:
    """``vector_cases(...)`` as ``pytest.param(case, id=case.id)``, for
    ``@pytest.mark.parametrize("case", pytest_cases(operation="read", levels="MUST"))``."""
    __tracebackhide__ = True
    import pytest  # noqa: PLC0415 - only callers that use pytest need it

    part = _part_of_old_keyword(part, profile)
    return [
        pytest.param(case, id=case.id)
        for case in vector_cases(
            operation=operation,
            part=part,
            levels=levels,
            forms=forms,
            history_formats=history_formats,
            telemetry=telemetry,
        )
    ]


def assert_case(
    case: Case,
    output: Mapping[str, Any] | None = None,
    *,
    code: str | None = None,
    profile: str = Profile.DIAGNOSTICS,
) -> None:
    """Passes when the operation's result is what the case expects in the conformance
    ``profile`` (SPEC CL2): ``"diagnostics"`` (the default) compares ``output`` exactly as a JSON
    value and a rejection by its ``code``; ``"verdict"`` takes any code for a rejection and
    leaves out the output members that carry diagnostics only. Otherwise raises
    ``AssertionError`` naming the case, its rule and level, the profile and the first difference
    (a JSON pointer), as ``conformance run`` reports it."""
    __tracebackhide__ = True
    if profile not in set(Profile):
        raise UnknownSelection(
            f"not a conformance profile: {profile!r} (profiles: {', '.join(Profile)})"
        )
    reply: OutputReply | RejectReply
    if output is not None and code is None:
        reply = OutputReply(output)
    elif code is not None and output is None:
        reply = RejectReply(code)
    else:
        raise TypeError("give exactly one of output and code")
    verdict = judge_in(Profile(profile), case.operation, case.expect, governed_reply(case, reply))
    if verdict.outcome is not Outcome.PASS:
        why = verdict.detail.message if verdict.detail is not None else verdict.outcome.value
        raise AssertionError(f"{case.id} [{case.spec}, {case.level}, {profile}]: {why}")
