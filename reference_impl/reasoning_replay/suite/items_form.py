"""The items form of a history (SPEC CL3) and the form of each vector (SPEC CL4).

A ``replay`` or ``plan`` vector stores its history in the channels form: replay blocks as
envelope texts, cache-state records as record texts. An implementation that never adopted the
envelope reads the items form instead (conformance/PROTOCOL.md#items-form). ``vector_form``
decides whether a vector's meaning survives the conversion (*neutral*), whether its history is
already in the items form (*items*), or whether it tests the storage format (*storage*);
``items_form_history`` is the conversion. Both read blocks and records with the reference's own
reader, so this module, unlike the rest of the suite, knows what a history means.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from reasoning_replay.ordering.cache_state import (
    CACHE_STATE_CHANNEL,
    CacheStateRecord,
    effort_allowed,
    read_cache_state,
)
from reasoning_replay.ordering.planner import DEFAULT_UPDATE_CAPABLE, STAGED_MEDIA_CHANNEL
from reasoning_replay.record.envelope import REPLAY_CHANNEL
from reasoning_replay.record.reader import parse_reasoning_replay_envelope

from .forms import HISTORY_OPERATIONS, ITEMS_FORM, NEUTRAL_OPERATIONS, Form

TOOL_CALL_TYPES: Final = {
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
}


class NotNeutral(ValueError):
    """``items_form_history`` was given a history whose meaning the items form cannot carry."""


def vector_form(operation: str, input: Mapping[str, Any]) -> Form:
    """SPEC CL4: the form of a vector, from its operation and input alone."""
    return vector_form_and_reason(operation, input)[0]


def vector_form_and_reason(operation: str, input: Mapping[str, Any]) -> tuple[Form, str | None]:
    """The form of a vector and, for a storage vector, why (for ``conformance check``)."""
    if operation in NEUTRAL_OPERATIONS:
        return Form.NEUTRAL, None
    if operation not in HISTORY_OPERATIONS:
        return Form.STORAGE, f"a {operation} vector tests the storage format"
    history = input.get("history")
    if isinstance(history, Mapping) and history.get("form") == ITEMS_FORM:
        return Form.ITEMS, None
    reason = storage_reason(history, _registry(input))
    return (Form.STORAGE, reason) if reason is not None else (Form.NEUTRAL, None)


def _registry(input: Mapping[str, Any]) -> frozenset[str] | None:
    """The vector's update-capable registry (SPEC §9.1; ``plan``'s input, else the default)."""
    registry = input.get("update_capable_models", sorted(DEFAULT_UPDATE_CAPABLE))
    if not isinstance(registry, list) or not all(isinstance(m, str) for m in registry):
        return None
    return frozenset(registry)


def storage_reason(history: object, registry: frozenset[str] | None) -> str | None:
    """SPEC CL4: what in a channels-form history the items form cannot carry, or ``None`` when
    the history is neutral. ``registry`` is the vector's update-capable registry (``None``: not
    a list of names, so no record can be judged)."""
    if not isinstance(history, Mapping):
        return "the history is not an object"
    if not _provider_ok(history):
        return "the history's provider is neither absent nor a non-empty string"
    messages = history.get("messages")
    if not isinstance(messages, list):
        return "the history's messages are not an array"
    for index, message in enumerate(messages):
        reason = _message_reason(message, registry)
        if reason is not None:
            return f"message {index}: {reason}"
    return None


def _provider_ok(holder: Mapping[str, Any]) -> bool:
    """SPEC P4: only a non-empty string records a provider; the items form has no other value."""
    provider = holder.get("provider")
    return "provider" not in holder or (isinstance(provider, str) and provider != "")


def _message_reason(message: object, registry: frozenset[str] | None) -> str | None:
    if not isinstance(message, Mapping) or not isinstance(message.get("role"), str):
        return "not an object with a string role"
    if not _provider_ok(message):
        return "its provider is neither absent nor a non-empty string"
    channels = message.get("channels", {})
    items = message.get("items", [])
    if not isinstance(channels, Mapping) or not isinstance(items, list):
        return "its channels are not an object or its items not an array"
    if any(not isinstance(item, Mapping) for item in items):
        return "an own item is not an object"
    # Own reasoning items are sent as stored in the channels form; in the items form every
    # reasoning item is a replay item, deduplicated and checked for its issuer (SPEC CL3).
    if any(item.get("type") == "reasoning" for item in items):
        return "an own item of type reasoning"
    blocks = channels.get(REPLAY_CHANNEL, [])
    if not isinstance(blocks, list):
        return "its replay channel is not an array"
    for block_index, block in enumerate(blocks):
        reason = _block_reason(message["role"], block)
        if reason is not None:
            return f"block {block_index}: {reason}"
    if CACHE_STATE_CHANNEL in channels:
        reason = _record_reason(channels[CACHE_STATE_CHANNEL], registry)
        if reason is not None:
            return reason
    staged = channels.get(STAGED_MEDIA_CHANNEL)
    if isinstance(staged, list) and staged:  # SPEC §9.1: an empty channel stages nothing
        return "a staged tool-media channel holds a block"
    return None


def _block_reason(role: str, block: object) -> str | None:
    if role != "assistant":
        return "a replay block on a message whose role is not assistant"
    text = block.get("text") if isinstance(block, Mapping) else None
    if not isinstance(block, Mapping) or block.get("type") != "text" or not isinstance(text, str):
        return "a replay block that is not a text block"
    read = parse_reasoning_replay_envelope(text)
    if read.item is None:
        return f"a replay block that is not resumable ({read.code})"
    return None


def _record_reason(channel: object, registry: frozenset[str] | None) -> str | None:
    record = read_cache_state(channel)
    if record is None:
        return None
    if not isinstance(record, CacheStateRecord):
        return "a malformed cache-state record"
    if registry is None or not effort_allowed(record.effort, record.model in registry):
        return "a cache-state record whose effort its own model does not allow"
    return None


def items_form_input(operation: str, input: Mapping[str, Any]) -> dict[str, Any]:
    """A neutral ``replay`` or ``plan`` input with its history in the items form; every other
    member as it is."""
    return {**input, "history": items_form_history(input.get("history"), _registry(input))}


def items_form_history(history: object, registry: frozenset[str] | None) -> dict[str, Any]:
    """PROTOCOL.md#items-form: a neutral channels-form history in the items form. Each message's
    replay items (read from its blocks) come first among its items, where SPEC P2 sends them;
    its record's members are copied; every other channel is dropped. Raises :class:`NotNeutral`
    for a history that is not neutral (SPEC CL4), naming what the items form cannot carry."""
    reason = storage_reason(history, registry)
    if reason is not None:
        raise NotNeutral(reason)
    assert isinstance(history, Mapping)
    converted: dict[str, Any] = {"form": ITEMS_FORM}
    if "provider" in history:
        converted["provider"] = history["provider"]
    converted["messages"] = [_items_form_message(m) for m in history["messages"]]
    return converted


def _items_form_message(message: Mapping[str, Any]) -> dict[str, Any]:
    channels: Mapping[str, Any] = message.get("channels", {})
    replayed = [_replay_item(block) for block in channels.get(REPLAY_CHANNEL, [])]
    converted: dict[str, Any] = {
        "role": message["role"],
        "items": [*replayed, *message.get("items", [])],
    }
    if "provider" in message:
        converted["provider"] = message["provider"]
    # SPEC F9: only a non-empty string carries a response id; any other value carries none, and
    # the items form has no other value to hold.
    response_id = message.get("response_id")
    if isinstance(response_id, str) and response_id:
        converted["response_id"] = response_id
    record = read_cache_state(channels.get(CACHE_STATE_CHANNEL, ()))
    if isinstance(record, CacheStateRecord):  # on any role: only an assistant's counts (F6)
        converted |= {
            "model": record.model,
            "effort": record.effort,
            "prompt_cache_key": record.key,
        }
    return converted


def _replay_item(block: Mapping[str, Any]) -> dict[str, Any]:
    item = parse_reasoning_replay_envelope(block["text"]).item
    assert item is not None  # a neutral history's blocks all read resumable
    return item.to_provider_input()


def unanswered_tool_call(history: object) -> str | None:
    """SPEC CL4: a ``function_call`` or ``custom_tool_call`` of the history's last message with no
    output item of its ``call_id`` after it in that message (no real request sends one), named;
    ``None`` when there is none. Works on both forms."""
    if not isinstance(history, Mapping):
        return None
    messages = history.get("messages")
    if not isinstance(messages, list) or not messages or not isinstance(messages[-1], Mapping):
        return None
    items = list(_items_of(messages[-1]))
    for index, item in enumerate(items):
        output_type = TOOL_CALL_TYPES.get(str(item.get("type")))
        if output_type is None:
            continue
        call_id = item.get("call_id")
        later = items[index:]
        if not any(o.get("type") == output_type and o.get("call_id") == call_id for o in later):
            return f"the last message's {item['type']} {call_id!r} has no output after it"
    return None


def _items_of(message: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    items = message.get("items", [])
    if isinstance(items, Sequence):
        yield from (item for item in items if isinstance(item, Mapping))
