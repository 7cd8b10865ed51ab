"""SPEC E6's fast path for a canonical text (SPEC C3): an item, or ``None`` to read it otherwise.

Writers store every block in canonical form (SPEC C3), so most texts take this path: it accepts
only an envelope laid out exactly as C3 writes it, which is therefore free of everything SPEC E4
forbids, and returns ``None`` for any other text. :func:`read_canonical` is this path in Python;
the C module :mod:`reasoning_replay._canonical` reads the same layout in one pass over the text
as stored (characters or bytes) and accepts exactly the texts it accepts. Neither ever decides a
refusal: that is :mod:`..read`'s, or :mod:`.general`'s.
"""

from __future__ import annotations

from codecs import utf_16_le_encode
from collections.abc import Callable
from json import decoder as json_decoder
from typing import Final, cast

import msgspec

from reasoning_replay._accelerators import load_accelerator

from ..envelope import SCHEMA_NAME, ReasoningReplayItem

# --- the canonical text, read as characters ------------------------------------------------
# For a ``str``, transcoding the whole text to UTF-8 for msgspec costs as much as the parse, and
# most of it is the ciphertext. So the canonical layout (SPEC C3) is followed directly: every
# piece of structure is compared as it stands, and every string is decoded in C, by ``json``'s
# ``scanstring`` (which refuses raw control characters and bad escapes) or, for the long ASCII
# ciphertext, by msgspec on that literal alone. Whatever departs from the layout in any way
# returns ``None`` and is read the general way (:mod:`.general`): this path only ever accepts,
# and what it accepts is one JSON value with no whitespace and no member twice, so SPEC E4 holds
# by construction.

_CANONICAL_HEAD: Final = (
    f'{{"schema":"{SCHEMA_NAME}","version":1,"item":{{"type":"reasoning","id":"'
)
_SUMMARY_HEAD: Final = ',"summary":['
_SUMMARY_PART_HEAD: Final = '{"type":"summary_text","text":"'
_CIPHERTEXT_HEAD: Final = ',"encrypted_content":"'  # with the literal's opening quote
_CONTENT_HEAD: Final = ',"content":['
_CONTENT_PART_HEAD: Final = '{"type":"reasoning_text","text":"'
_CONTENT_START: Final = _CONTENT_HEAD + _CONTENT_PART_HEAD  # content, if any, is never empty
_decode_json: Final = msgspec.json.decode
# json's C string scanner, absent from typeshed: given the index just after an opening quote, the
# decoded string and the index just after its closing quote; ValueError for an invalid literal.
_scanstring: Final[Callable[[str, int], tuple[str, int]]] = json_decoder.scanstring  # type: ignore[attr-defined]


def _check_scalar_values(text: str) -> None:
    """Raise ``UnicodeEncodeError`` if ``text`` holds a surrogate (SPEC E6 steps 2 and 4).

    ``scanstring`` passes raw surrogates and escaped lone ones through; UTF-16 encoding refuses
    both, in one tight C loop, and an ASCII string (known in O(1)) has none.
    """
    if not text.isascii():
        utf_16_le_encode(text)


def _canonical_parts(text: str, at: int, part_head: str) -> tuple[list[str], int] | None:
    """The texts of a part array written canonically from ``at`` (just after its ``[``).

    Returns the texts and the index just after the ``]``, or ``None`` if it is not canonical.
    """
    texts: list[str] = []
    if text.startswith("]", at):
        return texts, at + 1
    skip = len(part_head)
    while text.startswith(part_head, at):
        part_text, at = _scanstring(text, at + skip)
        _check_scalar_values(part_text)
        texts.append(part_text)
        if text.startswith("},", at):
            at += 2
        elif text.startswith("}]", at):
            return texts, at + 2
        else:
            return None
    return None


def read_canonical(text: str) -> ReasoningReplayItem | None:
    """The item of an envelope text laid out as SPEC C3 writes it, or ``None`` for any other text.

    Member order, separators and nesting are fixed; strings may use any escape JSON allows.
    Raises nothing: a string that is not valid JSON, or holds a surrogate, gives ``None``.
    """
    if not text.startswith(_CANONICAL_HEAD):
        return None
    # Where the ciphertext is, and what follows it, first: many departures from the layout show
    # there (an unknown or null member, an empty content), before any string has been decoded.
    # The first such head is the real one in a canonical text: its quotes cannot be in a string.
    head_at = text.find(_CIPHERTEXT_HEAD, len(_CANONICAL_HEAD))
    start = head_at + len(_CIPHERTEXT_HEAD) - 1  # the literal's opening quote
    end = text.find('"', start + 1) + 1  # just after the literal, if canonical
    length = len(text)
    if head_at < 0 or end == 0 or not text.endswith("}}"):
        return None
    if end != length - len("}}") and not text.startswith(_CONTENT_START, end):
        return None
    try:
        item_id, at = _scanstring(text, len(_CANONICAL_HEAD))
        if not item_id or not text.startswith(_SUMMARY_HEAD, at):
            return None
        _check_scalar_values(item_id)
        summary = _canonical_parts(text, at + len(_SUMMARY_HEAD), _SUMMARY_PART_HEAD)
        if summary is None or summary[1] != head_at:
            return None
        # The ciphertext literal, sliced, is ASCII (one byte a character) and msgspec reads it
        # without transcoding, refusing control characters and lone surrogates; an escaped
        # quote would have ended it early, which msgspec refuses too.
        literal = text[start:end]
        if not literal.isascii():
            return None
        ciphertext = _decode_json(literal.encode("ascii"))
        if not ciphertext:
            return None
        content = None
        if end != length - len("}}"):
            parts = _canonical_parts(text, end + len(_CONTENT_HEAD), _CONTENT_PART_HEAD)
            if parts is None or parts[1] != length - len("}}"):
                return None
            content = tuple(parts[0])  # not empty: it starts with a part
    except ValueError:  # scanstring's, msgspec's and the UTF-16 encoder's errors alike
        return None
    return ReasoningReplayItem(item_id, tuple(summary[0]), ciphertext, content)


# --- the accelerator -----------------------------------------------------------------------------
# _canonical.c reads the same layout in one pass over the stored characters (or bytes), which is
# what the Python path above cannot do: slicing a string out of a two-byte-a-character text
# converts it, and each literal is scanned twice. It returns the item's fields, or None exactly
# where read_canonical does (tests/test_canonical_accelerator.py compares them text by text).

_Fields = tuple[str, tuple[str, ...], str, tuple[str, ...] | None]


# Looked up at every call, so that tests can compare the reader with and without it.
_accelerator = cast(
    "Callable[[str | bytes], _Fields | None] | None",
    load_accelerator("_canonical", "read_canonical"),
)
ACCELERATED: Final = _accelerator is not None
"""Whether the C accelerator of the canonical fast path is in use (it changes no verdict)."""
