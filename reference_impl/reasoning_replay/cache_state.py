"""The per-assistant cache-state record (SPEC §9.1, F6, K2): what a request used, for the next."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from .diagnostics import Code
from .jsontext import TextRefused, parse_strict

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


def read_cache_state(blocks: Sequence[object]) -> CacheStateRecord | Code | None:
    """The record held by a message's cache-state channel; ``None`` when there is none.

    ``Code.CACHE_STATE_INVALID`` for a channel that is not exactly one text block holding an
    I-JSON object with exactly the three members of the right types (SPEC §9.1, F6).
    """
    if not blocks:
        return None
    block = blocks[0]
    if len(blocks) != 1 or not isinstance(block, Mapping) or block.get("type") != "text":
        return Code.CACHE_STATE_INVALID
    text = block.get("text")
    value = parse_strict(text) if isinstance(text, str) else None
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
