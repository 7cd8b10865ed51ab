"""The strict reader (SPEC §3): one block text in, a verdict out, never an exception.

Writers store every block in canonical form (SPEC C3), so the reader tries three ways, cheapest
first, each of which gives the same verdict the exhaustive one would:

1. :mod:`.fast_reader`: a canonical envelope, decoded and checked in C;
2. :func:`.jsontext.parse_canonical`: any other compact text (legacy records, bad versions),
   whose value :func:`.envelope.check_envelope_value` then classifies;
3. :func:`.jsontext.parse_strict`: everything else, every text rule in the order of SPEC E6.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .diagnostics import Code
from .envelope import ReasoningReplayItem, check_envelope_value
from .fast_reader import read_canonical_envelope
from .jsontext import (
    UNREAD,
    TextRefused,
    parse_canonical,
    parse_strict,
    text_length_exceeds_limit,
    value_depth_exceeds,
)


class ReadResult(msgspec.Struct, frozen=True, gc=False):
    """A block's verdict (SPEC E4.2): resumable with its item, or not, with exactly one code.

    A frozen msgspec Struct, like :class:`.envelope.ReasoningReplayItem`, for its cheap creation.
    """

    item: ReasoningReplayItem | None
    code: Code | None

    @property
    def resumable(self) -> bool:
        return self.item is not None

    def provider_input(self) -> dict[str, Any] | None:
        """The replay item as provider input (SPEC P1), or ``None`` for a non-resumable block."""
        return None if self.item is None else self.item.to_provider_input()


def _verdict(checked: ReasoningReplayItem | Code) -> ReadResult:
    if isinstance(checked, Code):
        return ReadResult(None, checked)
    return ReadResult(checked, None)


def parse_reasoning_replay_envelope(text: str | bytes) -> ReadResult:
    """Read one replay-channel block (SPEC E6): its replay item if resumable, else its code.

    ``text`` is the block's text as characters or as the bytes it was stored as.
    """
    if not isinstance(text, (str, bytes)):  # a tuple: no union object per call
        return ReadResult(None, Code.JSON_MALFORMED)
    if text_length_exceeds_limit(text):  # SPEC E4.1, E6 step 1
        return ReadResult(None, Code.LIMIT_EXCEEDED)
    item = read_canonical_envelope(text)
    if item is not None:
        return ReadResult(item, None)
    value = parse_canonical(text)
    if value is not UNREAD:
        checked = check_envelope_value(value)
        # A canonical text passes E6 steps 2–5; step 1's depth limit needs a look only when the
        # value is not an envelope (an envelope nests four deep).
        if isinstance(checked, ReasoningReplayItem) or not value_depth_exceeds(value):
            return _verdict(checked)
    strict = parse_strict(text)
    if isinstance(strict, TextRefused):
        return ReadResult(None, strict.code)
    return _verdict(check_envelope_value(strict))
