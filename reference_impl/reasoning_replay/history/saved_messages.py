"""A saved history file's messages as the messages of a request (SPEC H9).

SPEC H1 describes the saved shape (``content``, ``tool_calls``, ``tool_results``, channels); P2
and §9 take messages with their own provider input items. SPEC H9 leaves the items' shapes to the
implementation and fixes what decides a plan: one tool-result item per result (a tool-result
continuation), one user ``message`` item with one part per content block (a genuine turn exactly
when there is a block), an assistant's message items before its tool calls, member order
throughout, and no own item from a channel of SPEC §18.3.

The shapes here are fast-agent 0.10.48's, which tests/e2e checks against fast-agent's own
requests: text as ``input_text`` / ``output_text`` parts, an assistant's message items from its
channel ``openai-assistant-message-items`` when it kept them, tool calls as ``function_call``
items whose ``id`` fast-agent derives from the call id (``call_X`` → ``fc_X``), tool results as
``function_call_output`` items holding the result's text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from reasoning_replay.record.history import HistoryMessage

from .history_files import HistoryFileProblem, history_from_value

ASSISTANT_ITEMS_CHANNEL: Final = "openai-assistant-message-items"  # fast-agent's own channel


def _texts(content: Sequence[Any]) -> list[str]:
    return [
        block["text"]
        for block in content
        if isinstance(block, Mapping) and block.get("type") == "text" and "text" in block
    ]


def _part(block: object, role: str) -> dict[str, Any]:
    """SPEC H9 rule 2: one content part per block; its shape is fast-agent's."""
    text_type = "output_text" if role == "assistant" else "input_text"
    kind = block.get("type") if isinstance(block, Mapping) else None
    if isinstance(block, Mapping) and kind == "text" and isinstance(block.get("text"), str):
        return {"type": text_type, "text": block["text"]}
    if isinstance(block, Mapping) and kind == "image":
        data, mime = block.get("data"), block.get("mimeType")
        if isinstance(data, str) and isinstance(mime, str):
            return {"type": "input_image", "image_url": f"data:{mime};base64,{data}"}
    return {"type": text_type, "text": f"[Unsupported content: {kind}]"}


def _message_item(role: str, content: Sequence[Any]) -> list[dict[str, Any]]:
    """SPEC H9 rule 2: exactly one message item when ``content`` holds a block, else none."""
    if not content:
        return []
    return [{"type": "message", "role": role, "content": [_part(b, role) for b in content]}]


def function_call_item_id(call_id: str) -> str:
    """The item id fast-agent 0.10.48 sends for a saved tool call: derived from the call id."""
    if call_id.startswith("fc"):
        return call_id
    suffix = call_id.removeprefix("call_")
    return f"fc_{suffix or call_id}"


def _tool_call_item(call_id: str, call: object) -> dict[str, Any]:
    params = call.get("params") if isinstance(call, Mapping) else None
    params = params if isinstance(params, Mapping) else {}
    return {
        "type": "function_call",
        "id": function_call_item_id(call_id),
        "call_id": call_id,
        "name": params.get("name"),
        "arguments": json.dumps(params.get("arguments") or {}),
    }


def _tool_result_item(call_id: str, result: object) -> dict[str, Any]:
    content = result.get("content") if isinstance(result, Mapping) else None
    output = "".join(_texts(content)) if isinstance(content, list) else ""
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def saved_message_items(raw: Mapping[str, Any]) -> list[dict[str, Any]]:
    """SPEC H9: the own provider input items of one saved message (H1), in order, without its
    replay items (P2 adds those from its replay channel)."""
    role = raw.get("role")
    content = raw.get("content") or []
    tool_results = raw.get("tool_results") or {}
    items = [_tool_result_item(call_id, r) for call_id, r in tool_results.items()]  # rules 1, 4
    if role == "user":
        return items + _message_item("user", content)
    channels = raw.get("channels") or {}
    kept = channels.get(ASSISTANT_ITEMS_CHANNEL) or []
    message_items = [item for item in map(_kept_item, kept) if item is not None]
    items += message_items or _message_item("assistant", content)  # rule 3
    tool_calls = raw.get("tool_calls") or {}
    return items + [_tool_call_item(call_id, call) for call_id, call in tool_calls.items()]


def _kept_item(block: object) -> dict[str, Any] | None:
    """A provider message item fast-agent kept as a text block of JSON; anything else, none
    (a block that does not hold an object is the implementation's to ignore, never an error)."""
    text = block.get("text") if isinstance(block, Mapping) and block.get("type") == "text" else None
    if not isinstance(text, str):
        return None
    try:
        item = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return item if isinstance(item, dict) else None


def saved_history_messages(
    saved: object, response_ids: Mapping[int, str] | None = None
) -> tuple[HistoryMessage, ...] | HistoryFileProblem:
    """SPEC H9: a parsed history file's messages as P2's, each with its channels, recorded
    provider and own items, and the response id of a message that ``response_ids`` names (F9);
    ``history_malformed`` when the file does not have the shape of H1."""
    history = history_from_value(saved)
    if isinstance(history, HistoryFileProblem):
        return history
    assert isinstance(saved, Mapping)  # history_from_value checked the shape of H1
    ids = response_ids or {}
    return tuple(
        HistoryMessage(
            role=message.role,
            provider=message.provider,
            channels=message.channels,
            items=saved_message_items(raw),
            response_id=ids.get(index),
        )
        for index, (message, raw) in enumerate(
            zip(history.messages, saved["messages"], strict=True)
        )
    )
