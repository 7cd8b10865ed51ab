"""The reader's fast path: an envelope text in canonical form, decoded and checked in C.

Writers store every envelope in canonical form (SPEC C3), so nearly every block a reader meets is
one. msgspec decodes such a text straight into the wire shape of SPEC E2, checking every member's
presence, type, constant value and non-emptiness as it parses, and refusing unknown members, bad
UTF-8, byte-order marks, ``NaN`` and lone surrogates (SPEC E4).

The one thing a decoder cannot see is a duplicate member: it keeps the last. The text's length
rules that out. Without whitespace, a JSON text is exactly its structure plus its strings plus
the characters escapes add, and :func:`compact_envelope_length` is a lower bound on exactly that
for the decoded envelope. A text that long has no room for a second occurrence of any member.
(Texts are measured as UTF-8; a text given as characters is encoded first, as a C decoder would.)
Any text this path cannot vouch for goes to the strict path, which finds its exact code.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

import msgspec

from .envelope import SCHEMA_NAME, ReasoningReplayItem

NonEmptyString = Annotated[str, msgspec.Meta(min_length=1)]


class _SummaryPart(msgspec.Struct, forbid_unknown_fields=True):
    type: Literal["summary_text"]
    text: str


class _ContentPart(msgspec.Struct, forbid_unknown_fields=True):
    type: Literal["reasoning_text"]
    text: str


class _Item(msgspec.Struct, forbid_unknown_fields=True):
    type: Literal["reasoning"]
    id: NonEmptyString
    summary: list[_SummaryPart]
    encrypted_content: NonEmptyString
    content: Annotated[list[_ContentPart], msgspec.Meta(min_length=1)] | msgspec.UnsetType = (
        msgspec.UNSET
    )


class _Envelope(msgspec.Struct, forbid_unknown_fields=True):
    schema: Literal["fast-agent.openai-responses.reasoning-replay"]  # SCHEMA_NAME, spelled out
    version: Literal[1]  # an integer 1: "1.0" is version 1 too, but not canonical
    item: _Item


_DECODER: Final = msgspec.json.Decoder(_Envelope)

_ENCODER: Final = msgspec.json.Encoder()

# The canonical envelope of an item with an empty id, ciphertext and summary, and what each part
# adds beyond its text as a JSON string: '{"type":"summary_text","text":' and '}'.
_ENVELOPE_FIXED: Final = len(
    f'{{"schema":"{SCHEMA_NAME}","version":1,"item":{{"type":"reasoning","id":"",'
    '"summary":[],"encrypted_content":""}}'
)
_SUMMARY_PART_EXTRA: Final = len('{"type":"summary_text","text":}')
_CONTENT_PART_EXTRA: Final = len('{"type":"reasoning_text","text":}')
_CONTENT_FIXED: Final = len(',"content":')


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

    It is the length of the envelope's canonical text (SPEC C3) whenever its id and ciphertext
    need no escape, which is always so in practice.
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


def read_canonical_envelope(text: str | bytes) -> ReasoningReplayItem | None:
    """The replay item of a canonical envelope text; ``None`` for any other text.

    ``None`` says nothing against the text: the caller reads it with the strict path.
    """
    try:
        data = text if isinstance(text, bytes) else text.encode("utf-8")
        envelope = _DECODER.decode(data)
    except (msgspec.DecodeError, UnicodeEncodeError, RecursionError):
        return None
    wire = envelope.item
    item = ReasoningReplayItem(
        wire.id,
        tuple([part.text for part in wire.summary]),
        wire.encrypted_content,
        None if wire.content is msgspec.UNSET else tuple([part.text for part in wire.content]),
    )
    return item if len(data) == compact_envelope_length(item) else None
