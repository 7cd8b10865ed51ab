"""The strict reader (SPEC §3): one block text in, a verdict out, never an exception.

Writers store every block in canonical form (SPEC C3), so the reader first tries the ways that
only such a text can take, and that prove it free of everything SPEC E4 forbids:

* characters (``str``): :func:`_read_canonical` follows the canonical layout token by token,
  decoding each string in C, with no UTF-8 transcoding of the whole text;
* bytes: msgspec decodes the text straight into the envelope's shape (:class:`_Envelope`), and a
  length count proves that it hides no duplicate member, which msgspec would silently drop.

Where the optional C accelerators are built (by ``hatch_build.py``), they take both ways' place.
:mod:`reasoning_replay._canonical` follows the canonical layout in one pass over the text as it
is stored, characters or bytes, and accepts exactly the texts :func:`_read_canonical` accepts (as
bytes, when they are their valid UTF-8). That function stays its statement in Python, and its
fallback. Any other text is parsed by :func:`.jsontext.parse_strict`, which
:mod:`reasoning_replay._strict` makes one pass in C for all but the texts that break the JSON
grammar or Unicode, and its value checked by :func:`.envelope.check_envelope_value`.
``REASONING_REPLAY_PURE_PYTHON=1`` turns both off.

Without them, any other text msgspec reads is decoded untyped and checked, then proven
canonical; a text msgspec accepts but that the reader cannot prove free of duplicates only needs
its duplicates looked for (:func:`.jsontext.has_duplicate_member`); a text msgspec refuses goes
the exhaustive way, :func:`.jsontext.parse_strict`, which checks every text rule in the order of
SPEC E6. All ways give every text the same verdict.
"""

from __future__ import annotations

from codecs import utf_16_le_encode
from collections.abc import Callable
from json import decoder as json_decoder
from typing import Annotated, Any, Final, Literal, cast, get_args, get_type_hints

import msgspec

from reasoning_replay._accelerators import load_accelerator
from reasoning_replay.diagnostics import Code

from .envelope import SCHEMA_NAME, ReasoningReplayItem, check_envelope_value
from .jsontext import (
    MAX_TEXT_BYTES,
    TextRefused,
    has_duplicate_member,
    is_canonical_text,
    nesting_depth_exceeds,
    parse_strict,
    parse_strict_is_accelerated,
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


# One shared result per code: they are frozen, and a refusal then costs no allocation.
_REFUSED: Final = {code: ReadResult(None, code) for code in Code}

# --- the canonical envelope as msgspec types -----------------------------------------------------
# Decoding straight into these is SPEC E1/E2 checked in C: a text decodes only if its value is a
# canonical envelope (no other member at any level, every field of its type and value). Member
# order does not matter; a duplicate member would be dropped silently, hence the length proof.
# A text that does not decode is read the general way, so these types only ever accept.


class _SummaryPart(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    type: Literal["summary_text"]
    text: str


class _ContentPart(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    type: Literal["reasoning_text"]
    text: str


class _Item(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    type: Literal["reasoning"]
    id: Annotated[str, msgspec.Meta(min_length=1)]
    summary: list[_SummaryPart]
    encrypted_content: Annotated[str, msgspec.Meta(min_length=1)]
    # Absent, or a non-empty array: ``null`` and ``[]`` do not decode (SPEC E3).
    content: Annotated[list[_ContentPart], msgspec.Meta(min_length=1)] | msgspec.UnsetType = (
        msgspec.UNSET
    )


class _Envelope(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    # Literal[SCHEMA_NAME] is not a valid type; the two are checked equal below.
    schema: Literal["fast-agent.openai-responses.reasoning-replay"]
    version: Literal[1]  # the integer 1 only; ``1.0`` is version 1 too but is read untyped
    item: _Item


if get_args(get_type_hints(_Envelope)["schema"]) != (SCHEMA_NAME,):  # pragma: no cover
    raise RuntimeError("_Envelope.schema must be Literal[SCHEMA_NAME]")

_ENVELOPE_DECODER: Final = msgspec.json.Decoder(_Envelope)
_MAX_CHARS_WITHIN_LIMIT: Final = MAX_TEXT_BYTES // 4  # a character is at most 4 bytes of UTF-8
_VALUE_DECODER: Final = msgspec.json.Decoder()

# --- the canonical text, read as characters ------------------------------------------------
# For a ``str``, transcoding the whole text to UTF-8 for msgspec costs as much as the parse, and
# most of it is the ciphertext. So the canonical layout (SPEC C3) is followed directly: every
# piece of structure is compared as it stands, and every string is decoded in C, by ``json``'s
# ``scanstring`` (which refuses raw control characters and bad escapes) or, for the long ASCII
# ciphertext, by msgspec on that literal alone. Whatever departs from the layout in any way
# returns ``None`` and is read the general way: this path only ever accepts, and what it accepts
# is one JSON value with no whitespace and no member twice, so SPEC E4 holds by construction.

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


def _read_canonical(text: str) -> ReasoningReplayItem | None:
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
# where _read_canonical does (tests/test_canonical_accelerator.py compares them text by text).

_Fields = tuple[str, tuple[str, ...], str, tuple[str, ...] | None]


# Looked up at every call, so that tests can compare the reader with and without it.
_accelerator = cast(
    "Callable[[str | bytes], _Fields | None] | None",
    load_accelerator("_canonical", "read_canonical"),
)
ACCELERATED: Final = _accelerator is not None
"""Whether the C accelerator of the canonical fast path is in use (it changes no verdict)."""


# --- the length proof ----------------------------------------------------------------------------
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


# --- reading -------------------------------------------------------------------------------------


def _verdict(checked: ReasoningReplayItem | Code) -> ReadResult:
    if isinstance(checked, Code):
        return _REFUSED[checked]
    return ReadResult(checked, None)


def _read_strict(text: str | bytes) -> ReadResult:
    """The exhaustive way: every rule of SPEC E6 in order, for a text msgspec refuses."""
    strict = parse_strict(text)
    if isinstance(strict, TextRefused):
        return _REFUSED[strict.code]
    return _verdict(check_envelope_value(strict))


def _read_other(text: str | bytes) -> ReadResult:
    """The verdict of a text that is not a canonical envelope written canonically."""
    if parse_strict_is_accelerated():  # one pass in C, unless the text is not JSON
        return _read_strict(text)
    if isinstance(text, bytes):
        return _read_value(text, text)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # a surrogate: the strict way gives the code
        return _read_strict(text)
    return _read_value(text, data)


def _read_unproven(
    text: str | bytes, data: bytes, checked: ReasoningReplayItem | Code, value: object
) -> ReadResult:
    """The verdict of a text msgspec accepts and that checks as ``checked``, but is not canonical.

    msgspec accepting it settles SPEC E6 steps 2-4 (encoding, grammar, escapes of lone
    surrogates); what is left is the depth limit (step 1) and duplicate members (step 5). Without
    a duplicate, every array and object of the text is in ``value`` (the value msgspec read, or
    ``None`` for an envelope, whose depth is 4), so the value shows the depth; a dropped duplicate
    may nest deeper, so with one the text is measured.
    """
    if isinstance(text, str):
        chars = text
    else:
        try:
            chars = data.decode("utf-8")
        except UnicodeDecodeError:  # msgspec checks UTF-8; should it miss a case, so does this
            return _read_strict(text)
    duplicate = has_duplicate_member(chars)
    if duplicate is None:  # json refused what msgspec accepted: let the exhaustive way decide
        return _read_strict(text)
    if nesting_depth_exceeds(chars) if duplicate else value_depth_exceeds(value):
        return _REFUSED[Code.LIMIT_EXCEEDED]  # E6 step 1 comes before step 5
    return _REFUSED[Code.JSON_DUPLICATE_MEMBER] if duplicate else _verdict(checked)


def _read_value(text: str | bytes, data: bytes) -> ReadResult:
    """The verdict of a text that is not a canonical envelope, or not written canonically."""
    try:
        value = _VALUE_DECODER.decode(data)
    except (msgspec.DecodeError, RecursionError):
        return _read_strict(text)
    checked = check_envelope_value(value)
    if isinstance(checked, ReasoningReplayItem):  # an envelope msgspec's types refuse, e.g. 1.0
        if len(data) == compact_envelope_length(checked):
            return ReadResult(checked, None)
        return _read_unproven(text, data, checked, None)
    # Not an envelope: a canonical text names no member twice, so the value shows its depth.
    if is_canonical_text(value, data):
        too_deep = value_depth_exceeds(value)  # E6 step 1
        return _REFUSED[Code.LIMIT_EXCEEDED] if too_deep else _REFUSED[checked]
    return _read_unproven(text, data, checked, value)


def parse_reasoning_replay_envelope(text: str | bytes) -> ReadResult:
    """Read one replay-channel block (SPEC E6): its replay item if resumable, else its code.

    ``text`` is the block's text as characters or as the bytes it was stored as.
    """
    if isinstance(text, str):
        # Only a text of over 4 Mi characters can exceed 16 MiB of UTF-8 (SPEC E4.1, E6 step 1).
        if len(text) > _MAX_CHARS_WITHIN_LIMIT and text_length_exceeds_limit(text):
            return _REFUSED[Code.LIMIT_EXCEEDED]
        accelerator = _accelerator
        if accelerator is not None:
            fields = accelerator(text)
            if fields is not None:
                return ReadResult(ReasoningReplayItem(*fields), None)
        else:
            canonical = _read_canonical(text)
            if canonical is not None:
                return ReadResult(canonical, None)
        # Not laid out canonically, so msgspec's envelope types would most likely refuse it too.
        return _read_other(text)
    if not isinstance(text, bytes):
        return _REFUSED[Code.JSON_MALFORMED]
    if len(text) > MAX_TEXT_BYTES:  # SPEC E4.1, E6 step 1
        return _REFUSED[Code.LIMIT_EXCEEDED]
    if _accelerator is not None:
        # Faster than msgspec's typed decode, and needs no length proof. A text it refuses is
        # seldom an envelope at all, so the typed decode would mostly be wasted on it.
        fields = _accelerator(text)
        if fields is not None:
            return ReadResult(ReasoningReplayItem(*fields), None)
        return _read_other(text)
    try:
        envelope = _ENVELOPE_DECODER.decode(text)
    except msgspec.ValidationError:  # JSON, maybe, but not a canonical envelope
        return _read_value(text, text)
    except (msgspec.DecodeError, RecursionError):  # not JSON msgspec reads
        return _read_strict(text)
    item = envelope.item
    content = item.content
    checked = ReasoningReplayItem(
        item.id,
        tuple([part.text for part in item.summary]),
        item.encrypted_content,
        None if content is msgspec.UNSET else tuple([part.text for part in content]),
    )
    if len(text) == compact_envelope_length(checked):
        return ReadResult(checked, None)
    return _read_unproven(text, text, checked, None)
