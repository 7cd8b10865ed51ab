"""The per-assistant cache-state record (SPEC §9.1, F6, K2): what a request used, for the next."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Final

import msgspec

from reasoning_replay.diagnostics import Code
from reasoning_replay.record.jsontext import MAX_TEXT_BYTES, TextRefused
from reasoning_replay.record.reader import parse_strict

CACHE_STATE_CHANNEL: Final = "fast-agent-responses-cache-state"
ALLOWED_EFFORTS: Final = ("low", "medium", "high", "xhigh", "max")  # update-capable models
RECORD_MEMBERS: Final = frozenset(("model", "key", "effort"))


@dataclass(frozen=True, slots=True)
class CacheStateRecord:
    """``{model, key, effort}``: the requested model, the key sent, the effective effort."""

    model: str
    key: str
    effort: str | None

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model, "key": self.key, "effort": self.effort}


class _RecordText(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    # The record's shape (F6) as msgspec types: decoding into it checks members and types in C.
    model: str
    key: Annotated[str, msgspec.Meta(min_length=1)]
    effort: str | None  # required, and may be null


_RECORD_DECODER: Final = msgspec.json.Decoder(_RecordText)
_encode: Final = msgspec.json.encode


def _read_compact_record(text: str) -> CacheStateRecord | None:
    """The record of a text written as the planner writes it, or ``None`` to read it strictly.

    msgspec refuses what breaks the I-JSON rules it sees (SPEC E4) but keeps one of two duplicate
    members silently. A text exactly as long as the compact encoding of what it decoded to has no
    room for a second member, whitespace or a longer escape, so it needs no strict parse.
    """
    try:
        data = text.encode("utf-8")
        record = _RECORD_DECODER.decode(data)
    except (UnicodeEncodeError, msgspec.DecodeError):  # ValidationError is a DecodeError
        return None
    if len(data) > MAX_TEXT_BYTES or len(data) != len(_encode(record)):  # E4.1 limit as strictly
        return None
    return CacheStateRecord(record.model, record.key, record.effort)


def read_cache_state(blocks: object = ()) -> CacheStateRecord | Code | None:
    """The record held by an assistant message's cache-state channel; ``None`` when there is none
    (the channel absent, passed as the default, or an empty array).

    ``Code.CACHE_STATE_INVALID`` for a channel that is not exactly one text block holding an
    I-JSON object with exactly the three members of the right types, a value that is not an
    array included (SPEC §9.1, F6).
    """
    if not isinstance(blocks, Sequence) or isinstance(blocks, str):
        return Code.CACHE_STATE_INVALID
    if not blocks:
        return None
    block = blocks[0]
    if len(blocks) != 1 or not isinstance(block, Mapping) or block.get("type") != "text":
        return Code.CACHE_STATE_INVALID
    text = block.get("text")
    if not isinstance(text, str):
        return Code.CACHE_STATE_INVALID
    compact = _read_compact_record(text)
    if compact is not None:
        return compact
    value = parse_strict(text)
    if not isinstance(value, dict) or isinstance(value, TextRefused):
        return Code.CACHE_STATE_INVALID
    model, key, effort = value.get("model"), value.get("key"), value.get("effort")
    if (
        value.keys() != RECORD_MEMBERS
        or not isinstance(model, str)
        or not isinstance(key, str)
        or not key
        or not (effort is None or isinstance(effort, str))
    ):
        return Code.CACHE_STATE_INVALID
    return CacheStateRecord(model, key, effort)


def effort_allowed(effort: object, update_capable: bool) -> bool:
    """SPEC §9.1: an allowed effort for an update-capable model; ``null`` for any other."""
    return effort in ALLOWED_EFFORTS if update_capable else effort is None
