"""What is measured per task and form: stored and replay bytes, duplication, leakage, timing.

Part of ``tools/payload_report.py`` (see its docstring for what each column holds).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, Final

from payload_corpus import StoredForm
from reasoning_replay import (
    parse_reasoning_replay_envelope,
    redact,
    redact_reasoning_replay_for_diagnostics,
    serialize_reasoning_replay_envelope,
)

from payload.forms import (
    Replay,
    block_item,
    display_fallback,
    http_bytes,
    read_pre_envelope_block,
    replay_builder,
    utf8_len,
    websocket_bytes,
)
from payload.reading import Task

ALLOWED_ITEM_MEMBERS: Final = frozenset(("type", "id", "summary", "encrypted_content", "content"))
PART_MEMBERS: Final = frozenset(("type", "text"))
MIN_SECRET_CHARS: Final = 16


@dataclass(frozen=True, slots=True)
class Totals:
    """The deterministic figures of one form over some histories; they add up."""

    records: int = 0
    stored_bytes: int = 0
    stored_file_bytes: int = 0
    final_items: int = 0
    final_bytes: int = 0
    final_websocket_bytes: int = 0
    final_multi_bytes: int = 0
    cumulative_bytes: int = 0
    cumulative_multi_bytes: int = 0
    ledger_final_bytes: int = 0
    ledger_cumulative_bytes: int = 0
    turns: int = 0
    deduplicated: int = 0
    conflicts: int = 0
    summary_parts: int = 0
    summary_bytes: int = 0
    duplicated_summary_bytes: int = 0
    items_not_own_summary: int = 0
    items_own_summary_unknown: int = 0
    items_outside_allowlist: int = 0
    items_null_or_empty_content: int = 0
    redaction_views: int = 0
    redaction_leaks: int = 0

    def __add__(self, other: Totals) -> Totals:
        return Totals(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(Totals)))

    @property
    def cumulative_check(self) -> bool:
        """Cumulative replay is exactly the items replayed per turn, and dedupe drops nothing."""
        return (
            self.cumulative_bytes == self.ledger_cumulative_bytes
            and self.final_bytes == self.ledger_final_bytes
            and self.deduplicated == 0
            and self.conflicts == 0
        )


@dataclass(frozen=True, slots=True)
class TaskMeasure:
    totals: Totals
    curve: tuple[int, ...]  # cumulative replay bytes after each turn


def _outside_allowlist(item: Mapping[str, Any]) -> bool:
    if not item.keys() <= ALLOWED_ITEM_MEMBERS:
        return True
    parts = [*(item.get("summary") or ()), *(item.get("content") or ())]
    return any(not isinstance(p, Mapping) or p.keys() != PART_MEMBERS for p in parts)


def _part_texts(parts: object) -> tuple[str, ...]:
    if not isinstance(parts, list):
        return ()
    return tuple(
        p["text"] for p in parts if isinstance(p, Mapping) and isinstance(p.get("text"), str)
    )


def _leaks(item: Mapping[str, Any], shown: str) -> bool:
    """Whether redacted text ``shown`` holds ``item``'s ciphertext or a summary text."""
    secrets = [item.get("encrypted_content"), *_part_texts(item.get("summary"))]
    return any(isinstance(s, str) and len(s) >= MIN_SECRET_CHARS and s in shown for s in secrets)


def summary_figures(task: Task, final: Replay) -> dict[str, int]:
    """Summary parts, bytes, repeats and per-item fidelity over the final request."""
    figures = Counter[str]()
    for message, items in zip(task.messages, final.by_message, strict=True):
        seen: set[tuple[str, ...]] = set()
        aligned = len(items) == len(message.blocks)
        for index, item in enumerate(items):
            parts = _part_texts(item.get("summary"))
            size = sum(map(utf8_len, parts))
            figures["summary_parts"] += len(parts)
            figures["summary_bytes"] += size
            if parts and parts in seen:
                figures["duplicated_summary_bytes"] += size
            seen.add(parts)
            own = message.blocks[index].own_summary if aligned else None
            if own is None:
                figures["items_own_summary_unknown"] += 1
            elif parts != own or len(item.get("summary") or ()) != len(own):
                figures["items_not_own_summary"] += 1
    return dict(figures)


def measure_task(task: Task, form: StoredForm) -> TaskMeasure:
    """Every deterministic figure of ``task`` replayed from ``form``."""
    build = replay_builder(task, form)
    turn_positions = [i for i, m in enumerate(task.messages) if m.role == "assistant"]
    curve: list[int] = []
    cumulative = deduplicated = conflicts = 0
    for position in turn_positions:
        request = build(position)
        cumulative += sum(map(http_bytes, request.items))
        deduplicated += request.deduplicated
        conflicts += request.conflicts
        curve.append(cumulative)
    final = build(len(task.messages))
    final_items = final.items

    ledger_final = ledger_cumulative = final_multi = cumulative_multi = 0
    for index, message in enumerate(task.messages):
        later_turns = sum(1 for p in turn_positions if p > index)
        for block in message.blocks:
            item = block_item(message, block, form)
            size = 0 if item is None else http_bytes(item)
            ledger_final += size
            ledger_cumulative += size * later_turns
            if len(message.blocks) >= 2:
                final_multi += size
                cumulative_multi += size * later_turns

    texts = [text for block in task.blocks if (text := block.texts[form]) is not None]
    redacted_request = json.dumps(redact(list(final_items)), ensure_ascii=False)
    leaks = sum(
        1
        for item in final_items
        if _leaks(item, json.dumps(redact_reasoning_replay_for_diagnostics(item)))
        or _leaks(item, redacted_request)
    )
    totals = Totals(
        records=len(texts),
        stored_bytes=sum(map(utf8_len, texts)),
        stored_file_bytes=sum(utf8_len(json.dumps(t, ensure_ascii=False)) for t in texts),
        final_items=len(final_items),
        final_bytes=sum(map(http_bytes, final_items)),
        final_websocket_bytes=sum(map(websocket_bytes, final_items)),
        final_multi_bytes=final_multi,
        cumulative_bytes=cumulative,
        cumulative_multi_bytes=cumulative_multi,
        ledger_final_bytes=ledger_final,
        ledger_cumulative_bytes=ledger_cumulative,
        turns=len(turn_positions),
        deduplicated=deduplicated + final.deduplicated,
        conflicts=conflicts + final.conflicts,
        items_outside_allowlist=sum(1 for item in final_items if _outside_allowlist(item)),
        items_null_or_empty_content=sum(
            1 for item in final_items if "content" in item and item["content"] in (None, [])
        ),
        redaction_views=len(final_items),
        redaction_leaks=leaks,
        **summary_figures(task, final),
    )
    return TaskMeasure(totals, tuple(curve))


@dataclass(frozen=True, slots=True)
class Timing:
    """Seconds per pass (timing: varies from run to run)."""

    serialize: tuple[float, ...]
    parse: tuple[float, ...]

    def __add__(self, other: Timing) -> Timing:
        return Timing(
            tuple(a + b for a, b in zip(self.serialize, other.serialize, strict=True)),
            tuple(a + b for a, b in zip(self.parse, other.parse, strict=True)),
        )


def _seconds(function: Callable[[Any], object], inputs: Sequence[Any]) -> float:
    started = time.perf_counter()
    for value in inputs:
        function(value)
    return time.perf_counter() - started


def time_task(task: Task, form: StoredForm, passes: int) -> Timing:
    """Write each record of ``task`` in ``form`` from its item, read it back; ``passes`` times."""
    pairs = [
        (text, display_fallback(message.display))
        for message in task.messages
        for block in message.blocks
        if (text := block.texts[form]) is not None
    ]
    texts = [text for text, _ in pairs]
    write: Callable[[Any], object]
    read: Callable[[Any], object]
    if form is StoredForm.CANONICAL:
        sources: list[Any] = [parse_reasoning_replay_envelope(t).item for t in texts]
        write = serialize_reasoning_replay_envelope

        def read(text: str) -> object:
            return parse_reasoning_replay_envelope(text).provider_input()

        inputs: list[Any] = texts
    else:
        sources = [json.loads(t) for t in texts]
        write = json.dumps

        def read(pair: tuple[str, list[dict[str, str]]]) -> object:
            return read_pre_envelope_block(*pair)

        inputs = pairs
    serialize, parse = [], []
    for _ in range(passes):
        serialize.append(_seconds(write, sources))
        parse.append(_seconds(read, inputs))
    return Timing(tuple(serialize), tuple(parse))
