"""SPEC E6's accelerated reading of any text: the verdict of :mod:`..read`, in C where it can be.

* A canonically written envelope (SPEC C3) is read by :mod:`.canonical` (in C where built).
* An envelope in any other layout (members in another order, whitespace, escapes) is read in C
  by :mod:`reasoning_replay._strict`'s ``read_envelope``, which only ever accepts: the item of a
  resumable envelope, checked whole in one pass, or ``None``.
* Any other text is parsed by :func:`parse_strict`, which :mod:`reasoning_replay._strict` makes
  one pass in C for all but the texts that break the JSON grammar or Unicode, and its value
  checked by :func:`..envelope.check_envelope_value`.
* Without the C modules, msgspec decodes bytes straight into the envelope's shape
  (:class:`_Envelope`), and a length count proves that the text hides no duplicate member, which
  msgspec would silently drop. Any other text msgspec reads is decoded untyped and checked, then
  proven canonical; a text msgspec accepts but that cannot be proven free of duplicates only
  needs its duplicates looked for (:func:`has_duplicate_member`); a text msgspec refuses goes the
  exhaustive way, :func:`parse_strict`, which checks every text rule in the order of SPEC E6.

All ways give every text the verdict of :func:`..read.read_block` (tests/test_envelope_reader.py,
tests/test_*_accelerator.py and tools/fuzz.py compare them).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Final, Literal, cast, get_args, get_type_hints

import msgspec

from reasoning_replay._accelerators import load_accelerator
from reasoning_replay.diagnostics import Code

from ..envelope import SCHEMA_NAME, ReasoningReplayItem, check_envelope_value
from ..jsontext import (
    MAX_TEXT_BYTES,
    TextRefused,
    nesting_depth_exceeds,
    parse_json_int,
    parse_strict_statement,
    text_length_exceeds_limit,
    value_depth_exceeds,
)
from ..verdict import REFUSED, ReadResult
from . import canonical

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


# --- the strict parse, in C where built ------------------------------------------------------
# _strict.c parses as jsontext.parse_strict_statement does (the same value, with ints and floats as
# Python's json makes them) for the texts it decides; tests/test_strict_accelerator.py compares
# the two text by text.

_StrictParse = Callable[[str | bytes], tuple[str | None, object] | None]


# Looked up at every call, so that tests can compare the two paths.
_accelerator = cast("_StrictParse | None", load_accelerator("_strict", "parse"))

# _strict.c's read_envelope: the fields of a resumable envelope in any layout, or None for any
# other text. Within the length limit it accepts exactly what record.read.read_block finds
# resumable, with the same item (tests/test_envelope_accelerator.py); looked up at every call.
_Fields = tuple[str, tuple[str, ...], str, tuple[str, ...] | None]
_envelope_accelerator = cast(
    "Callable[[str | bytes], _Fields | None] | None",
    load_accelerator("_strict", "read_envelope"),
)

_DECIDED_REFUSALS: Final = {
    Code.LIMIT_EXCEEDED.value: TextRefused(Code.LIMIT_EXCEEDED),
    Code.JSON_DUPLICATE_MEMBER.value: TextRefused(Code.JSON_DUPLICATE_MEMBER),
}


def parse_strict_is_accelerated() -> bool:
    """Whether :func:`parse_strict` parses in C first (it changes no result)."""
    return _accelerator is not None


def parse_strict(text: str | bytes) -> object | TextRefused:
    """:func:`..jsontext.parse_strict_statement`'s result, in C first where it is built."""
    accelerator = _accelerator
    if accelerator is not None and not text_length_exceeds_limit(text):
        decided = accelerator(text)
        if decided is not None:
            code, value = decided
            return value if code is None else _DECIDED_REFUSALS[code]
    return parse_strict_statement(text)


# --- duplicate members, and the canonical text ---------------------------------------------------


def is_canonical_text(value: object, data: bytes) -> bool:
    """Whether ``data`` is byte for byte the compact serialization of ``value`` (SPEC C3).

    Such a text has exactly one member per name, so nothing was hidden from the parser. msgspec
    escapes exactly as SPEC C3 does (a test pins this).
    """
    try:
        return msgspec.json.encode(value) == data
    except (msgspec.EncodeError, RecursionError, OverflowError):
        return False


class _DuplicateMember(Exception):
    """Raised by :func:`_unique_members` at the first object that names a member twice."""


def _unique_members(pairs: list[tuple[str, object]]) -> dict[str, object]:
    members = dict(pairs)
    if len(members) != len(pairs):
        raise _DuplicateMember
    return members


# Made once: json.loads with hooks would build a new decoder, and its scanner, on every call.
_DUPLICATE_FINDER: Final = json.JSONDecoder(
    object_pairs_hook=_unique_members, parse_int=parse_json_int
)


def has_duplicate_member(chars: str) -> bool | None:
    """Whether an object in a JSON text names a member twice (SPEC E6 step 5), at any depth.

    Only for a text msgspec accepts, so every other rule of steps 2–4 holds; the caller applies
    the depth limit (step 1), which comes first. ``None`` if Python's json refuses it all the same
    (it should not, unless it nests deeper than Python recurses), so that the caller can read it
    the exhaustive way.
    """
    try:
        _DUPLICATE_FINDER.decode(chars)
    except _DuplicateMember:
        return True
    except (ValueError, RecursionError):
        return None
    return False


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
        return REFUSED[checked]
    return ReadResult(checked, None)


def _read_strict(text: str | bytes) -> ReadResult:
    """The exhaustive way: every rule of SPEC E6 in order, for a text msgspec refuses."""
    strict = parse_strict(text)
    if isinstance(strict, TextRefused):
        return REFUSED[strict.code]
    return _verdict(check_envelope_value(strict))


def _read_other(text: str | bytes) -> ReadResult:
    """The verdict of a text that is not a canonical envelope written canonically."""
    read_envelope = _envelope_accelerator
    if read_envelope is not None:  # a resumable envelope in another layout: one pass in C
        fields = read_envelope(text)
        if fields is not None:
            return ReadResult(ReasoningReplayItem(*fields), None)
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
        return REFUSED[Code.LIMIT_EXCEEDED]  # E6 step 1 comes before step 5
    return REFUSED[Code.JSON_DUPLICATE_MEMBER] if duplicate else _verdict(checked)


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
        return REFUSED[Code.LIMIT_EXCEEDED] if too_deep else REFUSED[checked]
    return _read_unproven(text, data, checked, value)


def read(text: str | bytes) -> ReadResult:
    """:func:`..read.read_block`'s verdict, the fastest way available (SPEC E6).

    ``text`` is the block's text as characters or as the bytes it was stored as.
    """
    if isinstance(text, str):
        # Only a text of over 4 Mi characters can exceed 16 MiB of UTF-8 (SPEC E4.1, E6 step 1).
        if len(text) > _MAX_CHARS_WITHIN_LIMIT and text_length_exceeds_limit(text):
            return REFUSED[Code.LIMIT_EXCEEDED]
        accelerator = canonical._accelerator
        if accelerator is not None:
            fields = accelerator(text)
            if fields is not None:
                return ReadResult(ReasoningReplayItem(*fields), None)
        else:
            read_item = canonical.read_canonical(text)
            if read_item is not None:
                return ReadResult(read_item, None)
        # Not laid out canonically, so msgspec's envelope types would most likely refuse it too.
        return _read_other(text)
    if not isinstance(text, bytes):
        return REFUSED[Code.JSON_MALFORMED]
    if len(text) > MAX_TEXT_BYTES:  # SPEC E4.1, E6 step 1
        return REFUSED[Code.LIMIT_EXCEEDED]
    accelerator = canonical._accelerator
    if accelerator is not None:
        # Faster than msgspec's typed decode, and needs no length proof. A text it refuses is
        # seldom an envelope at all, so the typed decode would mostly be wasted on it.
        fields = accelerator(text)
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
