"""History forms and applicability (SPEC CL3, CL4): which vectors apply to an implementation, the
form each one's history is sent in, and what is left out of comparing its reply (SPEC CL2).

Everything here reads a vector's form tag and the implementation's handshake; nothing reads a
history. Converting one into the items form is :mod:`.items_form`, imported only when a case
needs it (the runner keeps working for external adapters even if the reference is broken).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Final

from .vectors import Case, Expect

FORM_TAG_PREFIX: Final = "form:"
ITEMS_FORM: Final = "items"  # the ``form`` member of a history in the items form
# SPEC CL4: the operations whose vectors are always neutral, and those that take a history.
NEUTRAL_OPERATIONS: Final = frozenset(("dedupe", "redact", "telemetry", "defaults"))
HISTORY_OPERATIONS: Final = frozenset(("replay", "plan"))
TELEMETRY: Final = "telemetry"


class Form(StrEnum):
    """SPEC CL4: what a vector's meaning needs of a history form."""

    NEUTRAL = "neutral"  # survives the conversion into the items form
    ITEMS = "items"  # written in the items form
    STORAGE = "storage"  # tests the channels form: envelopes, records, channels

    @property
    def tag(self) -> str:
        return FORM_TAG_PREFIX + self.value


class HistoryFormat(StrEnum):
    """SPEC CL3: a form an implementation reads (the handshake's ``history_formats``)."""

    CHANNELS = "channels"
    ITEMS = "items"


DEFAULT_HISTORY_FORMATS: Final = (HistoryFormat.CHANNELS,)
FORM_TAGS: Final = frozenset(form.tag for form in Form)


def form_tags(tags: Iterable[str]) -> tuple[str, ...]:
    """The form tags among ``tags`` (a vector carries exactly one, SPEC CL4)."""
    return tuple(tag for tag in tags if tag.startswith(FORM_TAG_PREFIX))


def tagged_form(case: Case) -> Form | None:
    """The form a vector's tag gives; ``None`` when it carries no single known form tag (vectors
    from elsewhere: the runner then computes the form, as ``conformance check`` does)."""
    tags = form_tags(case.tags)
    if len(tags) != 1 or tags[0] not in FORM_TAGS:
        return None
    return Form(tags[0].removeprefix(FORM_TAG_PREFIX))


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
