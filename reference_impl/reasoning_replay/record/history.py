"""The language-neutral history shape that requests are built from (SPEC P2).

A message has a role, optionally the provider that produced it, its channels (name → blocks), and
its own provider input items. This is the shape of the conformance vectors; stored history files
of real agents are converted to it at the edge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from reasoning_replay.ordering.cache_state import CACHE_STATE_CHANNEL

from .envelope import REPLAY_CHANNEL


@dataclass(frozen=True, slots=True)
class HistoryMessage:
    """One message of a history, as SPEC P2 describes it."""

    role: str
    # The issuer of its replay items when one is known (SPEC P4): the provider recorded with the
    # message, else the history's provider. None: unknown, taken to be the target provider.
    provider: str | None = None
    channels: Mapping[str, object] = field(default_factory=dict)  # name → blocks, as stored
    items: Sequence[Mapping[str, Any]] = ()
    # The provider's id of the response it came from (SPEC F9): only a non-empty string carries
    # one; ``None`` and ``""`` carry none.
    response_id: str | None = None

    @property
    def replay_blocks(self) -> Sequence[object]:
        """The blocks of the replay channel (SPEC ST1), in order; each should be a text block."""
        blocks = self.channels.get(REPLAY_CHANNEL, ())
        return blocks if isinstance(blocks, list | tuple) else ()


class HistoryShapeError(Exception):
    """A JSON history that does not have the shape of SPEC P2 (a caller's error, not a block's)."""


def _mapping(value: object, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise HistoryShapeError(f"{what} must be an object")
    return value


def _list(value: object, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise HistoryShapeError(f"{what} must be an array")
    return value


def _history_provider(history: Mapping[str, Any]) -> str | None:
    """The history's provider (SPEC P4): a non-empty string, or none when absent or ``null``."""
    provider = history.get("provider")
    if provider is None:
        return None
    if not isinstance(provider, str) or not provider:
        raise HistoryShapeError("history.provider must be a non-empty string")
    return provider


def history_from_json(history: object) -> tuple[HistoryMessage, ...]:
    """Messages from ``{"messages": [...], "provider"?: ...}`` as the conformance vectors write
    them, each with its issuer when one is known (SPEC P4)."""
    messages = []
    document = _mapping(history, "history")
    history_provider = _history_provider(document)
    raw_messages = _list(document.get("messages"), "history.messages")
    for index, raw in enumerate(raw_messages):
        message = _mapping(raw, f"message {index}")
        role = message.get("role")
        recorded = message.get("provider")
        # SPEC P4: only a non-empty string records a provider; a message that records none was
        # issued by the history's provider, when the caller gives one.
        provider = recorded if isinstance(recorded, str) and recorded else history_provider
        if not isinstance(role, str):
            raise HistoryShapeError(f"message {index}: role must be a string")
        # SPEC F9: only a non-empty string carries a response id; any other value carries none.
        recorded_response = message.get("response_id")
        response_id = recorded_response if isinstance(recorded_response, str) else None
        # SPEC F6: a cache-state channel that is not an array is a malformed record, not a
        # malformed history; every other channel must be an array of blocks.
        channels = {
            name: blocks if name == CACHE_STATE_CHANNEL else _list(blocks, f"channel {name}")
            for name, blocks in _mapping(message.get("channels", {}), "channels").items()
        }
        items = [
            _mapping(item, f"message {index} item")
            for item in _list(message.get("items", []), "items")
        ]
        messages.append(HistoryMessage(role, provider, channels, items, response_id))
    return tuple(messages)
