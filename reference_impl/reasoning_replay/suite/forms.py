"""History forms (SPEC CL3, CL4): what a vector's meaning needs of a history form (its form tag),
and the forms an implementation reads (its handshake).

Below the items form (:mod:`.items_form`, which computes a vector's form from its history) and
applicability (:mod:`.applicability`); nothing here reads a history.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Final

from .vectors import Case

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
