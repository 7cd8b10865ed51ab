"""The strict reader (SPEC §3): one block text in, a verdict out, never an exception.

Writers store every block in canonical form (SPEC C3), so the reader first reads a text the fast
way: parsed in C, checked by :func:`.envelope.check_envelope_value`, and then proven to hide
nothing the C parser could have dropped (SPEC E4). Any text it cannot prove goes the exhaustive
way, :func:`.jsontext.parse_strict`, which checks every text rule in the order of SPEC E6. Both
ways give every text the same verdict.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from .diagnostics import Code
from .envelope import SCHEMA_NAME, ReasoningReplayItem, check_envelope_value
from .jsontext import (
    UNREAD,
    TextRefused,
    is_canonical_text,
    parse_fast,
    parse_strict,
    text_length_exceeds_limit,
    utf8_text,
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


# The canonical envelope of an item with an empty id, ciphertext and summary, and what each part
# adds beyond its text as a JSON string: '{"type":"summary_text","text":' and '}'.
_ENVELOPE_FIXED: Final = len(
    f'{{"schema":"{SCHEMA_NAME}","version":1,"item":{{"type":"reasoning","id":"",'
    '"summary":[],"encrypted_content":""}}'
)
_SUMMARY_PART_EXTRA: Final = len('{"type":"summary_text","text":}')
_CONTENT_PART_EXTRA: Final = len('{"type":"reasoning_text","text":}')
_CONTENT_FIXED: Final = len(',"content":')
_ENCODER: Final = msgspec.json.Encoder()


def _opaque_length(text: str) -> int:
    # Ids and ciphertexts are long and plain: measuring their escapes would cost as much as the
    # parse. One that needs an escape is longer than this bound, and is read strictly.
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def _parts_length(texts: tuple[str, ...], extra: int) -> int:
    # The texts as one JSON array of strings, written by msgspec exactly as SPEC C3 escapes them;
    # a part array has the same brackets and commas, and each part wraps its string in ``extra``.
    return len(_ENCODER.encode(texts)) + extra * len(texts)


def compact_envelope_length(item: ReasoningReplayItem) -> int:
    """A lower bound on the UTF-8 length of any JSON text of the envelope of ``item``.

    Without whitespace, a JSON text is exactly its structure, its strings and the characters its
    escapes add. This counts all three for the envelope, escapes only where they are due (none
    assumed in ids and ciphertexts), so it is the length of the canonical text (SPEC C3) and at
    most the length of any other. A text this long has no room for a duplicate member.
    """
    length = (
        _ENVELOPE_FIXED
        - len("[]")
        + _opaque_length(item.id)
        + _opaque_length(item.encrypted_content)
        + _parts_length(item.summary, _SUMMARY_PART_EXTRA)
    )
    if item.content is not None:
        length += _CONTENT_FIXED + _parts_length(item.content, _CONTENT_PART_EXTRA)
    return length


def _verdict(checked: ReasoningReplayItem | Code) -> ReadResult:
    if isinstance(checked, Code):
        return ReadResult(None, checked)
    return ReadResult(checked, None)


def _read_fast(data: bytes) -> ReadResult | None:
    """The verdict of a compact text in canonical form; ``None`` for any other text."""
    value = parse_fast(data)
    if value is UNREAD:
        return None
    checked = check_envelope_value(value)
    if isinstance(checked, ReasoningReplayItem):
        proven = len(data) == compact_envelope_length(checked)
    else:
        # Not an envelope: prove the text canonical, and look at the depth limit (E6 step 1).
        proven = is_canonical_text(value, data) and not value_depth_exceeds(value)
    return _verdict(checked) if proven else None


def parse_reasoning_replay_envelope(text: str | bytes) -> ReadResult:
    """Read one replay-channel block (SPEC E6): its replay item if resumable, else its code.

    ``text`` is the block's text as characters or as the bytes it was stored as.
    """
    if not isinstance(text, (str, bytes)):  # a tuple: no union object per call
        return ReadResult(None, Code.JSON_MALFORMED)
    if text_length_exceeds_limit(text):  # SPEC E4.1, E6 step 1
        return ReadResult(None, Code.LIMIT_EXCEEDED)
    data = utf8_text(text)
    if data is not None:
        fast = _read_fast(data)
        if fast is not None:
            return fast
    strict = parse_strict(text)
    if isinstance(strict, TextRefused):
        return ReadResult(None, strict.code)
    return _verdict(check_envelope_value(strict))
