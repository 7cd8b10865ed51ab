"""The strict reader (SPEC §3): one block text in, a verdict out, never an exception.

Most stored blocks are canonical (SPEC C3), so the reader first tries the fast path of
:mod:`.jsontext`: orjson parses the text, the value is checked, and the text's length proves it
holds nothing a JSON parser would have hidden (SPEC E4). Anything unproven is read again by the
exhaustive strict parser, which decides every text rule in the order of SPEC E6.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from .diagnostics import Code
from .envelope import SCHEMA_NAME, ReasoningReplayItem, check_envelope_value
from .jsontext import (
    MAX_DEPTH,
    UNREAD,
    TextRefused,
    minimal_length,
    parse_fast,
    parse_strict,
    text_length_exceeds_limit,
)


@dataclass(frozen=True, slots=True)
class ReadResult:
    """A block's verdict (SPEC E4.2): resumable with its item, or not, with exactly one code."""

    item: ReasoningReplayItem | None
    code: Code | None

    @property
    def resumable(self) -> bool:
        return self.item is not None

    def provider_input(self) -> dict[str, Any] | None:
        """The replay item as provider input (SPEC P1), or ``None`` for a non-resumable block."""
        return None if self.item is None else self.item.to_provider_input()


# Lengths of the fixed parts of a compact envelope (all ASCII, so bytes and code points agree).
_ENVELOPE_FIXED: Final = len(
    f'{{"schema":"{SCHEMA_NAME}","version":1,"item":{{"type":"reasoning","id":"",'
    '"summary":[],"encrypted_content":""}}'
)
_SUMMARY_PART_FIXED: Final = len('{"type":"summary_text","text":""}')
_CONTENT_PART_FIXED: Final = len('{"type":"reasoning_text","text":""}')
_CONTENT_FIXED: Final = len(',"content":[]')


def _opaque_length(text: str, utf8: bool) -> int:
    # Ids and ciphertexts are long ASCII: counting escapes in them would cost more than the
    # whole parse, and one that needs an escape merely fails the proof and is read strictly.
    return len(text) if not utf8 or text.isascii() else len(text.encode("utf-8"))


def _parts_length(texts: tuple[str, ...], fixed: int, utf8: bool) -> int:
    length = max(len(texts) - 1, 0)  # commas
    for text in texts:
        length += fixed + string_body_length(text, utf8)
    return length


def string_body_length(text: str, utf8: bool) -> int:
    """A lower bound on the length of ``text`` inside a JSON string literal (quotes excluded)."""
    length = len(text) if not utf8 or text.isascii() else len(text.encode("utf-8"))
    return length + text.count('"') + text.count("\\") + text.count("\n")


def compact_envelope_length(item: ReasoningReplayItem, utf8: bool) -> int:
    """A lower bound on the length of any envelope text holding ``item``.

    It is the length of the canonical text (SPEC C3) whenever the item's strings need no escapes
    beyond ``\\"``, ``\\\\`` and ``\\n`` (ids and ciphertexts: none).
    """
    length = (
        _ENVELOPE_FIXED
        + _opaque_length(item.id, utf8)
        + _opaque_length(item.encrypted_content, utf8)
        + _parts_length(item.summary, _SUMMARY_PART_FIXED, utf8)
    )
    if item.content is not None:
        length += _CONTENT_FIXED + _parts_length(item.content, _CONTENT_PART_FIXED, utf8)
    return length


def _verdict(checked: ReasoningReplayItem | Code) -> ReadResult:
    if isinstance(checked, Code):
        return ReadResult(None, checked)
    return ReadResult(checked, None)


def parse_reasoning_replay_envelope(text: str | bytes) -> ReadResult:
    """Read one replay-channel block (SPEC E6): its replay item if resumable, else its code.

    ``text`` is the block's text as characters or as the bytes it was stored as.
    """
    if not isinstance(text, str | bytes):
        return ReadResult(None, Code.JSON_MALFORMED)
    if text_length_exceeds_limit(text):  # SPEC E4.1, E6 step 1
        return ReadResult(None, Code.LIMIT_EXCEEDED)
    value = parse_fast(text)
    if value is not UNREAD:
        checked = check_envelope_value(value)
        utf8 = isinstance(text, bytes)
        if isinstance(checked, ReasoningReplayItem):
            bound = compact_envelope_length(checked, utf8)
        else:
            bound = minimal_length(value, utf8, MAX_DEPTH)
        # A text no longer than the shortest serialization of its value hides nothing: no
        # duplicate member, nothing deeper than the limit (SPEC E4, E6 steps 1–5 all pass).
        if bound == len(text):
            return _verdict(checked)
    strict = parse_strict(text)
    if isinstance(strict, TextRefused):
        return ReadResult(None, strict.code)
    return _verdict(check_envelope_value(strict))
