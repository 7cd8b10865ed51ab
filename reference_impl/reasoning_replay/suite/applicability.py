"""Applicability (SPEC CL4, CL2): which vectors apply to an implementation, the form each one's
history is sent in, and what is left out of comparing its reply.

Everything here reads a vector's form tag (:mod:`.forms`) and the implementation's handshake;
nothing reads a history. A vector without a form tag and the conversion of a history into the
items form are :mod:`.items_form`, imported only when a case needs it (the runner keeps working
for external adapters even if the reference is broken).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace

from .forms import HISTORY_OPERATIONS, TELEMETRY, Form, HistoryFormat, tagged_form
from .vectors import Case, Expect


def case_form(case: Case) -> Form:
    """A vector's form: its tag, or computed when it carries none."""
    tagged = tagged_form(case)
    if tagged is not None:
        return tagged
    from .items_form import vector_form  # noqa: PLC0415 - only untagged vectors need the reader

    return vector_form(case.operation, case.input)


@dataclass(frozen=True, slots=True)
class Applicability:
    """How a case goes to an implementation: not at all (``reason`` says why), or with its
    history in ``history_format`` (``None``: the operation takes no history)."""

    applies: bool
    history_format: HistoryFormat | None = None
    reason: str | None = None


def applicability(case: Case, formats: Collection[HistoryFormat]) -> Applicability:
    """SPEC CL4: whether ``case`` applies to an implementation that reads ``formats``, and the
    form its history is sent in: as written, except a neutral history, which goes in the items
    form when the channels form is not read."""
    form = case_form(case)
    if form is Form.STORAGE and HistoryFormat.CHANNELS not in formats:
        return Applicability(False, reason=_not_read(form, formats, HistoryFormat.CHANNELS))
    if form is Form.ITEMS and HistoryFormat.ITEMS not in formats:
        return Applicability(False, reason=_not_read(form, formats, HistoryFormat.ITEMS))
    if case.operation not in HISTORY_OPERATIONS:
        return Applicability(True)
    if form is Form.ITEMS:
        return Applicability(True, HistoryFormat.ITEMS)
    if HistoryFormat.CHANNELS in formats:
        return Applicability(True, HistoryFormat.CHANNELS)
    if HistoryFormat.ITEMS in formats:
        return Applicability(True, HistoryFormat.ITEMS)
    return Applicability(False, reason=_not_read(form, formats, HistoryFormat.ITEMS))


def _not_read(form: Form, formats: Collection[HistoryFormat], needed: HistoryFormat) -> str:
    read = ", ".join(sorted(formats)) or "none"
    return (
        f"a {form.tag} case needs the {needed} form; the implementation reads: {read} (SPEC.md#CL4)"
    )


def unjudged_members(
    case: Case, history_format: HistoryFormat | None, operations: Collection[str]
) -> frozenset[str]:
    """SPEC CL2: the output members left out of comparing ``case``'s reply: a ``plan``'s
    ``record`` in the items form, a ``replay``'s ``counters`` for an implementation that does not
    announce ``telemetry`` (T1 binds only implementations that emit telemetry)."""
    if case.operation == "plan" and history_format is HistoryFormat.ITEMS:
        return frozenset(("record",))
    if case.operation == "replay" and TELEMETRY not in operations:
        return frozenset(("counters",))
    return frozenset()


def prepared_case(
    case: Case, history_format: HistoryFormat | None, unjudged: frozenset[str]
) -> Case:
    """``case`` as it is sent and judged: a neutral history converted into the items form when
    it goes in that form, and ``unjudged`` left out of the expected output (the reply loses them
    too when it is judged, :func:`reasoning_replay.suite.governed.governed_reply`). Raises
    ``items_form.NotNeutral`` for a case tagged neutral whose history is not."""
    converted = (
        history_format is HistoryFormat.ITEMS
        and case.operation in HISTORY_OPERATIONS
        and case_form(case) is Form.NEUTRAL
    )
    if not converted and not unjudged:
        return case
    input = case.input
    if converted:
        from .items_form import items_form_input  # noqa: PLC0415 - the reader, only when needed

        input = items_form_input(case.operation, case.input)
    expect = case.expect
    if unjudged and expect.output is not None:
        kept = {name: value for name, value in expect.output.items() if name not in unjudged}
        expect = Expect(output=kept)
    return replace(case, input=input, expect=expect, unjudged=unjudged)
