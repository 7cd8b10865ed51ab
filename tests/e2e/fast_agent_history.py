"""fast-agent's saved history (SPEC H1) as the planner's messages (SPEC P2), and plan comparison.

The planner reads a message's channels itself (replay blocks, cache-state records); what a saved
message does not say in the P2 shape is its own provider input items, which fast-agent builds at
request time from the message's content, tool calls and tool results. This module builds them
the way fast-agent 0.10.48 does (facts read from its requests): user text as ``input_text``
parts, assistant messages from the raw items kept in ``openai-assistant-message-items``, tool
calls as ``function_call`` items, tool results as ``function_call_output`` items. A saved tool
call keeps only its call id; fast-agent derives the item ``id`` from it (``call_X`` → ``fc_X``),
which is not the id the provider gave the item, and so does this module (see
docs/fast-agent-e2e.md).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from reasoning_replay.ordering.planner import Plan
from reasoning_replay.record.history import HistoryMessage

ASSISTANT_ITEMS_CHANNEL = "openai-assistant-message-items"


def _texts(content: Sequence[Mapping[str, Any]]) -> list[str]:
    return [part["text"] for part in content if part.get("type") == "text"]


def _tool_result_output(result: Mapping[str, Any]) -> str:
    return "".join(_texts(result.get("content") or []))


def function_call_item_id(call_id: str) -> str:
    """The item id fast-agent 0.10.48 sends for a saved tool call: derived from the call id."""
    if call_id.startswith("fc"):
        return call_id
    suffix = call_id.removeprefix("call_")
    return f"fc_{suffix or call_id}"


def message_items(raw: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The provider input items of one saved message, without its reasoning (P2 adds that)."""
    if raw["role"] == "user":
        items: list[dict[str, Any]] = [
            {"type": "function_call_output", "call_id": call_id, "output": _tool_result_output(r)}
            for call_id, r in (raw.get("tool_results") or {}).items()
        ]
        texts = _texts(raw.get("content") or [])
        if texts:
            parts = [{"type": "input_text", "text": text} for text in texts]
            items.append({"type": "message", "role": "user", "content": parts})
        return items
    channels = raw.get("channels") or {}
    items = [json.loads(block["text"]) for block in channels.get(ASSISTANT_ITEMS_CHANNEL, [])]
    if not items and _texts(raw.get("content") or []):
        parts = [{"type": "output_text", "text": t} for t in _texts(raw["content"])]
        items.append({"type": "message", "role": "assistant", "content": parts})
    for call_id, call in (raw.get("tool_calls") or {}).items():
        params = call["params"]
        item = {
            "type": "function_call",
            "id": function_call_item_id(call_id),
            "call_id": call_id,
            "name": params["name"],
            "arguments": json.dumps(params.get("arguments") or {}),
        }
        items.append(item)
    return items


def history_messages(
    saved: Mapping[str, Any], response_ids: Mapping[int, str] | None = None
) -> list[HistoryMessage]:
    """A saved history file's messages in the P2 shape; ``response_ids`` by message index."""
    return [
        HistoryMessage(
            role=raw["role"],
            channels=raw.get("channels") or {},
            items=message_items(raw),
            response_id=(response_ids or {}).get(index),
        )
        for index, raw in enumerate(saved["messages"])
    ]


@dataclass(frozen=True)
class Comparison:
    """One request fast-agent sent, against the reference's plan from the same history."""

    label: str
    differences: tuple[str, ...]  # named fields that differ; empty when identical
    explained: Mapping[str, str] = field(default_factory=dict)  # difference → SPEC §14 row


# SPEC §14 rows, by the request field in which they show.
SUMMARY_AUTO = "§14: every request's reasoning gets summary: auto (F11)"
ID_DEDUPE = "§14: dedupe by id alone, first wins, for every item type (D1–D3, P2)"


def dedupe_by_id(items: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """fast-agent's dedupe on the OpenAI routes: any item with an id, first occurrence wins."""
    seen: set[str] = set()
    kept = []
    for item in items:
        item_id = item.get("id")
        if item_id:
            if item_id in seen:
                continue
            seen.add(item_id)
        kept.append(item)
    return kept


def compare(label: str, plan: Plan, sent: Mapping[str, Any]) -> Comparison:
    """The named differences between a plan and the request fast-agent sent (§9.5 fields).

    A difference that a SPEC §14 row accounts for is moved to ``explained``, with the row.
    """
    differences = []
    explained = {}
    for name in ("model", "prompt_cache_key", "previous_response_id"):
        if plan.request.get(name) != sent.get(name):
            differences.append(name)
    if plan.request["input"] != sent.get("input"):
        if dedupe_by_id(plan.request["input"]) == sent.get("input"):
            explained["input"] = ID_DEDUPE
        else:
            differences.append("input")
    planned_reasoning = plan.request.get("reasoning") or {}
    sent_reasoning = dict(sent.get("reasoning") or {})
    if sent_reasoning.get("summary") == "auto" and "summary" not in planned_reasoning:
        sent_reasoning.pop("summary")
        explained["reasoning.summary"] = SUMMARY_AUTO
    if planned_reasoning != sent_reasoning:
        differences.append("reasoning")
    return Comparison(label, tuple(differences), explained)
