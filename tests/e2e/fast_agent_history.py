"""fast-agent's saved history (SPEC H1) as the planner's messages (SPEC H9, P2); plan comparison.

The translation of a saved message into its own provider input items is the reference's
(:mod:`reasoning_replay.history.saved_messages`, SPEC H9), whose shapes are fast-agent 0.10.48's;
this test checks it against the requests fast-agent sends. A saved tool call keeps only its call
id; fast-agent derives the item ``id`` from it (``call_X`` → ``fc_X``), which is not the id the
provider gave the item, and so does the reference (see docs/fast-agent-e2e.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from reasoning_replay.history.history_files import HistoryFileProblem
from reasoning_replay.history.saved_messages import saved_history_messages
from reasoning_replay.ordering.planner import Plan
from reasoning_replay.record.history import HistoryMessage


def history_messages(
    saved: Mapping[str, Any], response_ids: Mapping[int, str] | None = None
) -> tuple[HistoryMessage, ...]:
    """A saved history file's messages in the P2 shape (SPEC H9); ``response_ids`` by index."""
    messages = saved_history_messages(saved, response_ids)
    assert not isinstance(messages, HistoryFileProblem), messages
    return messages


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
