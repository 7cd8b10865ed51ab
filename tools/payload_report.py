"""Compare the three stored forms of reasoning replay records over a corpus of fast-agent histories.

Usage::

    python tools/payload_report.py PATH [PATH ...] [--markdown OUT.md] [--chart OUT.svg]
                                   [--passes 3]

``PATH`` is a history file or a directory of them: every ``*.json`` below it except
``session.json``, the rotated copies ``*_previous.json``, compaction archives ``compacted_*.json``
(neither is replayed as the conversation's history) and a ``payload_corpus.json`` manifest
written by ``tools/payload_corpus.py``, whose parameters the report prints. Each file is read
with the reference's history-file reader (SPEC H1); a file it refuses is listed, not measured.

The three columns, each a stored form and the replay that fast-agent built from it:

raw SDK snapshot (fast-agent 0.10.6-0.10.11)
    stored: the SDK's ``model_dump`` of the output item without ``status``, written with Python's
    ``json.dumps`` defaults (``", "``/``": "``, non-ASCII as ``\\uXXXX``); replay: the stored
    object as it is, with ``type`` defaulted and a missing or ``null`` summary filled from the
    message's display channel (the builder below).
canonical envelope (version 1)
    stored: SPEC C3 bytes from the reference's capture and writer; replay: the reference's
    ``build_replay_input`` (strict reader, SPEC P1/P2, dedupe D1-D3).
legacy minimal record (fast-agent up to 0.10.4)
    stored: ``{"type", "encrypted_content", "id"}``, ``json.dumps`` defaults; replay: each item
    gets one ``summary_text`` part built from the whole message's display channel (its blocks
    joined by a newline, stripped), so every item of a multi-item message carries the same
    message-wide summary.

The raw and legacy builders model the deployed reader (research/fast-agent.md §0, its timeline),
which was the same in both releases: parse each block, skip what is not an object with a
ciphertext, default ``type``, fill a missing summary from the display channel. They are written
here, not taken from fast-agent.

Converting what is found. Each replay block is classified by the reference's reader (SPEC E6):
a resumable envelope, a raw SDK snapshot or a minimal record; any other block (another code) is
counted and left out of every column. A block is then expressed in the other forms when its data
allows it:

- a version 1 envelope gives the raw snapshot 0.10.11 would have written for it (the item's
  fields in the SDK's field order, ``content: []`` when the envelope has none, as in every item
  of the audited corpora; unknown SDK fields, never stored in an envelope, cannot be restored)
  and the minimal record;
- a raw snapshot gives the envelope the reference's capture makes of it (none when capture
  refuses it, e.g. a null summary) and the minimal record;
- a minimal record gives neither: it has no per-item summary, and rebuilding one from the
  display channel is exactly the lossy fallback (SPEC E5 does not migrate it either).

The tables cover the files in which every block can be expressed in all three forms; other files
are listed with the reason. A message without a display channel gets one derived from its items'
summaries by the rule fast-agent wrote it with (counted in the report).

What is measured, per column, over the compared files:

- stored bytes: UTF-8 bytes of the replay records, and of the same records as JSON string
  literals inside the history file (raw UTF-8, as the files are saved);
- replay bytes: each reasoning item of a request ``input`` as the SDK's HTTP body writes it
  (compact JSON, raw UTF-8; research/openai-sdk.md). A *turn* is an assistant message: the
  request that produced it replays every reasoning item of the assistant messages before it.
  The *final request* continues the saved history: it replays every stored item. *Cumulative*
  is the sum over all turns of every task. The WebSocket row writes the final request as the
  SDK's WebSocket frames do (``json.dumps`` defaults);
- the cumulative check: the cumulative figure, got by building every turn's request, must equal
  the sum over stored items of (its replay bytes × the turns after its message), and the final
  request must equal the sum of its items' bytes; the reference's dedupe must drop nothing.
  A failed check makes the exit status 1;
- multi-item rows: the items of messages with two or more reasoning items;
- summary duplication (final request): bytes of summaries that repeat, whole, an earlier item's
  summary in the same message, and items whose replayed summary is not their own parts (when
  the stored form knows them);
- unknown-field leakage (final request): items with a member outside ``type, id, summary,
  encrypted_content, content`` (``status`` and unknown SDK fields, or extra part members), and
  items with ``content`` ``null`` or ``[]``;
- redaction: the reference's diagnostic view (SPEC R1) of every final-request item, and its
  redaction (R2) of the whole request, must show no ciphertext and no summary text;
- serialize and parse time (timing; the median of ``--passes``): writing every record from
  its item (the canonical writer checks its output with the reader, SPEC C4) and reading every
  record back to a replay item.

Everything is deterministic for a given corpus except the rows marked *(timing)*.
The Markdown goes to standard output and to ``--markdown``; ``--chart`` writes an SVG of
cumulative replay bytes per turn, summed over the tasks (a task that has ended stays at its
total).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Final
from xml.sax.saxutils import escape

import msgspec

TOOLS_DIR: Final = Path(__file__).resolve().parent
if str(TOOLS_DIR) not in sys.path:
    sys.path.insert(0, str(TOOLS_DIR))

from payload_corpus import (  # noqa: E402
    MANIFEST_NAME,
    StoredForm,
    canonical_envelope_text,
    display_text,
    legacy_minimal_text,
    raw_snapshot_text,
    sdk_output_item,
    text_block,
)
from reasoning_replay import (  # noqa: E402
    DISPLAY_CHANNEL,
    REPLAY_CHANNEL,
    Code,
    HistoryMessage,
    ReplayTarget,
    build_replay_input,
    parse_reasoning_replay_envelope,
    redact,
    redact_reasoning_replay_for_diagnostics,
    serialize_reasoning_replay_envelope,
)
from reasoning_replay.history_files import HistoryFileProblem, parse_history_file  # noqa: E402

TOOL: Final = "tools/payload_report.py"
FORMS: Final = (StoredForm.RAW, StoredForm.CANONICAL, StoredForm.LEGACY)
TITLES: Final = {
    StoredForm.RAW: "raw SDK snapshot (0.10.11)",
    StoredForm.CANONICAL: "canonical envelope (v1)",
    StoredForm.LEGACY: "legacy minimal (0.10.4)",
}
ALLOWED_ITEM_MEMBERS: Final = frozenset(("type", "id", "summary", "encrypted_content", "content"))
PART_MEMBERS: Final = frozenset(("type", "text"))
SKIPPED_FILES: Final = ("session.json", MANIFEST_NAME)
TARGET: Final = ReplayTarget(provider="openai")
MIN_SECRET_CHARS: Final = 16  # SPEC H8: shorter strings are not looked for in redacted output
SEED_FIGURES: Final = {
    "extra_snapshot_fields": "4.34 MB and 4.19 MB (runs 1 and 2)",
    "canonical_vs_legacy": "8.9–9.2 % smaller",
    "cumulative_saving": "605–631 MB less, across successful turns",
}

Item = dict[str, Any]
_ENCODER: Final = msgspec.json.Encoder()


# --- reading histories -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Block:
    """One usable replay record of a message, and its text in each form it can be expressed in."""

    stored_form: StoredForm
    texts: Mapping[StoredForm, str | None]
    ciphertext: str
    own_summary: tuple[str, ...] | None  # its per-item summary parts, when the stored form has them


@dataclass(frozen=True, slots=True)
class Message:
    role: str
    display: tuple[str, ...]  # texts of the display channel
    blocks: tuple[Block, ...] = ()


@dataclass(frozen=True, slots=True)
class Task:
    """One history file, reduced to what the payload comparison needs."""

    path: Path
    messages: tuple[Message, ...]
    skipped_blocks: Mapping[str, int]  # code -> blocks left out of every column
    derived_display: int  # messages whose display channel was derived from item summaries

    @property
    def blocks(self) -> Iterable[Block]:
        return (block for message in self.messages for block in message.blocks)

    def missing_forms(self) -> tuple[StoredForm, ...]:
        """The forms some block of this history cannot be expressed in."""
        return tuple(f for f in FORMS if any(b.texts[f] is None for b in self.blocks))


@dataclass(frozen=True, slots=True)
class UnreadableFile:
    path: Path
    code: str
    detail: str


def history_paths(paths: Sequence[Path]) -> list[Path]:
    """The history files named by ``paths`` (files as given, directories searched)."""
    found: list[Path] = []
    for path in paths:
        if not path.is_dir():
            found.append(path)
            continue
        for candidate in sorted(path.rglob("*.json")):
            name = candidate.name
            if name in SKIPPED_FILES or name.endswith("_previous.json"):
                continue
            if name.startswith("compacted_"):
                continue
            found.append(candidate)
    return found


def _summary_texts(value: object) -> tuple[str, ...] | None:
    """The texts of a stored snapshot's summary parts, or ``None`` if they are not all there."""
    if not isinstance(value, list):
        return None
    texts = [part.get("text") for part in value if isinstance(part, dict)]
    if len(texts) != len(value) or not all(isinstance(t, str) for t in texts):
        return None
    return tuple(texts)  # type: ignore[arg-type]


def read_block(block: object) -> Block | str:
    """A replay block in the three forms, or the code of a block no column can use."""
    if not isinstance(block, Mapping) or block.get("type") != "text":
        return Code.BLOCK_NOT_TEXT.value
    text = block.get("text")
    if not isinstance(text, str):
        return Code.BLOCK_NOT_TEXT.value
    read = parse_reasoning_replay_envelope(text)
    if read.item is not None:
        item = read.item
        content = (
            []
            if item.content is None
            else [{"text": t, "type": "reasoning_text"} for t in item.content]
        )
        snapshot = sdk_output_item(item.id, item.summary, item.encrypted_content, content=content)
        texts: dict[StoredForm, str | None] = {
            StoredForm.RAW: raw_snapshot_text(snapshot),
            StoredForm.CANONICAL: text,
            StoredForm.LEGACY: legacy_minimal_text(item.id, item.encrypted_content),
        }
        return Block(StoredForm.CANONICAL, texts, item.encrypted_content, item.summary)
    assert read.code is not None
    if read.code not in (Code.LEGACY_MINIMAL_RECORD, Code.RAW_SDK_SNAPSHOT):
        return read.code.value
    value = json.loads(text)  # the reader found one JSON object in it (SPEC E6 steps 2-7)
    ciphertext = value.get("encrypted_content")
    if not isinstance(ciphertext, str) or not ciphertext:
        return "ciphertext_not_a_string"
    item_id = value.get("id")
    item_id = item_id if isinstance(item_id, str) and item_id else None
    if read.code is Code.LEGACY_MINIMAL_RECORD:
        texts = {StoredForm.RAW: None, StoredForm.CANONICAL: None, StoredForm.LEGACY: text}
        return Block(StoredForm.LEGACY, texts, ciphertext, None)
    texts = {
        StoredForm.RAW: text,
        StoredForm.CANONICAL: canonical_envelope_text(value),
        StoredForm.LEGACY: legacy_minimal_text(item_id, ciphertext),
    }
    return Block(StoredForm.RAW, texts, ciphertext, _summary_texts(value.get("summary")))


def _block_texts(blocks: Sequence[object]) -> tuple[str, ...]:
    return tuple(
        b["text"]
        for b in blocks
        if isinstance(b, Mapping) and b.get("type") == "text" and isinstance(b.get("text"), str)
    )


def read_task(path: Path) -> Task | UnreadableFile:
    """A history file as a :class:`Task`, or why it cannot be read (SPEC H1, H3)."""
    try:
        data = path.read_bytes()
    except OSError as error:
        return UnreadableFile(path, Code.HISTORY_UNREADABLE.value, str(error))
    parsed = parse_history_file(data, channels=(REPLAY_CHANNEL, DISPLAY_CHANNEL))
    if isinstance(parsed, HistoryFileProblem):
        return UnreadableFile(path, parsed.code.value, parsed.detail)
    skipped: Counter[str] = Counter()
    derived = 0
    messages = []
    for history_message in parsed.messages:
        raw_blocks = history_message.channels.get(REPLAY_CHANNEL, ())
        display = _block_texts(history_message.channels.get(DISPLAY_CHANNEL, ()))
        if history_message.role != "assistant":
            if raw_blocks:
                skipped[Code.REPLAY_CHANNEL_MISPLACED.value] += len(raw_blocks)
            messages.append(Message(history_message.role, display))
            continue
        blocks = []
        for raw in raw_blocks:
            block = read_block(raw)
            if isinstance(block, str):
                skipped[block] += 1
            else:
                blocks.append(block)
        if DISPLAY_CHANNEL not in history_message.channels:
            display = tuple(
                text
                for b in blocks
                if b.own_summary is not None and (text := display_text(b.own_summary))
            )
            derived += bool(display)
        messages.append(Message("assistant", display, tuple(blocks)))
    return Task(path, tuple(messages), dict(skipped), derived)


# --- the replay each form gets ---------------------------------------------------------------


def display_fallback(display: Sequence[str]) -> list[dict[str, str]]:
    """fast-agent <= 0.10.11: the display blocks, newline-joined and stripped, as one part."""
    text = "\n".join(t for t in display if t).strip()
    return [{"type": "summary_text", "text": text}] if text else []


def read_pre_envelope_block(text: str, fallback: Sequence[Mapping[str, str]]) -> Item | None:
    """One stored block as fast-agent <= 0.10.11 turned it into provider input, or ``None``."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    if not isinstance(value, dict) or not value.get("encrypted_content"):
        return None
    item = dict(value)
    item.setdefault("type", "reasoning")
    if item.get("summary") is None:
        item["summary"] = [dict(part) for part in fallback]
    return item


@dataclass(frozen=True, slots=True)
class Replay:
    """The reasoning items of one request, per history message, and what dedupe removed."""

    by_message: tuple[tuple[Item, ...], ...]
    deduplicated: int = 0
    conflicts: int = 0

    @property
    def items(self) -> tuple[Item, ...]:
        return tuple(item for items in self.by_message for item in items)


ReplayBuilder = Callable[[int], Replay]  # the request built from the first n messages


def _texts(message: Message, form: StoredForm) -> tuple[str, ...]:
    return tuple(text for b in message.blocks if (text := b.texts[form]) is not None)


def replay_builder(task: Task, form: StoredForm) -> ReplayBuilder:
    """How a request's reasoning input is built from a prefix of ``task`` in ``form``."""
    if form is StoredForm.CANONICAL:
        history = tuple(
            HistoryMessage(
                role=m.role,
                channels={REPLAY_CHANNEL: [text_block(t) for t in _texts(m, form)]}
                if m.blocks
                else {},
            )
            for m in task.messages
        )

        def canonical(n: int) -> Replay:
            built = build_replay_input(history[:n], TARGET)
            return Replay(built.by_message, built.deduplicated_exact, built.id_ciphertext_conflicts)

        return canonical

    stored = tuple((_texts(m, form), display_fallback(m.display)) for m in task.messages)

    def pre_envelope(n: int) -> Replay:
        return Replay(
            tuple(
                tuple(
                    item
                    for text in texts
                    if (item := read_pre_envelope_block(text, fallback)) is not None
                )
                for texts, fallback in stored[:n]
            )
        )

    return pre_envelope


def block_item(message: Message, block: Block, form: StoredForm) -> Item | None:
    """The replay item of one block on its own (the ledger's path, apart from the builders)."""
    text = block.texts[form]
    if text is None:
        return None
    if form is StoredForm.CANONICAL:
        return parse_reasoning_replay_envelope(text).provider_input()
    return read_pre_envelope_block(text, display_fallback(message.display))


def http_bytes(item: object) -> int:
    """Bytes of ``item`` in the SDK's HTTP body: compact JSON, raw UTF-8.

    The SDK writes ``json.dumps(..., ensure_ascii=False, separators=(",", ":"))``; msgspec's
    encoder writes the same bytes (the tests check it) about six times faster.
    """
    try:
        return len(_ENCODER.encode(item))
    except (msgspec.EncodeError, UnicodeEncodeError):  # a lone surrogate: count it as stored
        text = json.dumps(item, ensure_ascii=False, separators=(",", ":"))
        return len(text.encode("utf-8", "surrogatepass"))


def websocket_bytes(item: object) -> int:
    """Bytes of ``item`` in the SDK's WebSocket frames: ``json.dumps`` defaults."""
    return len(json.dumps(item).encode("utf-8"))


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


# --- measuring -------------------------------------------------------------------------------


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


# --- the corpus report -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CorpusFacts:
    """What the compared histories hold, whatever the form."""

    files: int = 0
    messages: int = 0
    turns: int = 0
    items: int = 0
    multi_item_messages: int = 0
    multi_item_items: int = 0
    max_turns: int = 0
    derived_display: int = 0
    stored_forms: Mapping[str, int] = field(default_factory=dict)
    skipped_blocks: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Report:
    inputs: tuple[str, ...]
    facts: CorpusFacts
    totals: Mapping[StoredForm, Totals]
    curves: Mapping[StoredForm, tuple[int, ...]]  # corpus cumulative bytes after turn 1, 2, ...
    timing: Mapping[StoredForm, Timing]
    not_compared: tuple[tuple[Path, str], ...]
    unreadable: tuple[UnreadableFile, ...]
    manifest: Mapping[str, Any] | None
    elapsed: float = 0.0

    @property
    def checks_pass(self) -> bool:
        return bool(self.facts.files) and all(t.cumulative_check for t in self.totals.values())


def corpus_curve(curves: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    """Sum of per-task cumulative curves, a task that has ended staying at its total."""
    length = max((len(c) for c in curves), default=0)
    return tuple(sum(c[min(t, len(c) - 1)] for c in curves if c) for t in range(length))


def _not_compared_reason(task: Task) -> str:
    forms = {b.stored_form for b in task.blocks}
    missing = ", ".join(TITLES[f] for f in task.missing_forms())
    if StoredForm.LEGACY in forms:
        return f"holds minimal records, which have no per-item summary ({missing}: not derivable)"
    return f"holds raw snapshots the reference cannot capture ({missing}: not derivable)"


def _read_manifest(inputs: Sequence[Path]) -> Mapping[str, Any] | None:
    for path in inputs:
        candidate = path / MANIFEST_NAME
        if path.is_dir() and candidate.is_file():
            value = json.loads(candidate.read_text(encoding="utf-8"))
            return value if isinstance(value, dict) else None
    return None


def build_report(inputs: Sequence[Path], passes: int = 3) -> Report:
    """Read every history under ``inputs`` and measure the compared ones in all three forms."""
    started = time.perf_counter()
    totals = dict.fromkeys(FORMS, Totals())
    timing = {form: Timing((0.0,) * passes, (0.0,) * passes) for form in FORMS}
    curves: dict[StoredForm, list[tuple[int, ...]]] = {form: [] for form in FORMS}
    facts = CorpusFacts()
    stored_forms: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    not_compared: list[tuple[Path, str]] = []
    unreadable: list[UnreadableFile] = []
    for path in history_paths(inputs):
        task = read_task(path)
        if isinstance(task, UnreadableFile):
            unreadable.append(task)
            continue
        skipped.update(task.skipped_blocks)
        if task.missing_forms():
            not_compared.append((path, _not_compared_reason(task)))
            continue
        stored_forms.update(b.stored_form.value for b in task.blocks)
        counts = [len(m.blocks) for m in task.messages if m.role == "assistant"]
        facts = CorpusFacts(
            files=facts.files + 1,
            messages=facts.messages + len(task.messages),
            turns=facts.turns + len(counts),
            items=facts.items + sum(counts),
            multi_item_messages=facts.multi_item_messages + sum(1 for n in counts if n >= 2),
            multi_item_items=facts.multi_item_items + sum(n for n in counts if n >= 2),
            max_turns=max(facts.max_turns, len(counts)),
            derived_display=facts.derived_display + task.derived_display,
        )
        for form in FORMS:
            measured = measure_task(task, form)
            totals[form] += measured.totals
            curves[form].append(measured.curve)
            timing[form] += time_task(task, form, passes)
    facts = CorpusFacts(
        **{f.name: getattr(facts, f.name) for f in fields(CorpusFacts)}
        | {"stored_forms": dict(stored_forms), "skipped_blocks": dict(skipped)}
    )
    return Report(
        inputs=tuple(str(p) for p in inputs),
        facts=facts,
        totals=totals,
        curves={form: corpus_curve(curves[form]) for form in FORMS},
        timing=timing,
        not_compared=tuple(not_compared),
        unreadable=tuple(unreadable),
        manifest=_read_manifest(inputs),
        elapsed=time.perf_counter() - started,
    )


# --- Markdown --------------------------------------------------------------------------------


def smaller_by(ours: int, theirs: int) -> float:
    """How much smaller ``ours`` is than ``theirs``, in percent of ``theirs``."""
    return 100.0 * (theirs - ours) / theirs if theirs else 0.0


def mb(value: float) -> str:
    return f"{value / 1e6:,.3f} MB"


def count(value: int) -> str:
    return f"{value:,}"


def _row(label: str, cells: Iterable[str]) -> str:
    return "| " + " | ".join([label, *cells]) + " |"


def results_table(report: Report) -> list[str]:
    t = report.totals
    columns = [t[form] for form in FORMS]

    def row(label: str, value: Callable[[Totals], str]) -> str:
        return _row(label, (value(c) for c in columns))

    def timed(label: str, pick: Callable[[Timing], tuple[float, ...]]) -> str:
        per_record = [
            1e6 * statistics.median(pick(report.timing[f])) / max(t[f].records, 1) for f in FORMS
        ]
        return _row(
            label,
            (
                f"{1e3 * statistics.median(pick(report.timing[f])):,.1f} ms ({us:.2f} µs/record)"
                for f, us in zip(FORMS, per_record, strict=True)
            ),
        )

    return [
        _row("measure", (TITLES[f] for f in FORMS)),
        "| --- | ---: | ---: | ---: |",
        row("replay records stored", lambda c: count(c.records)),
        row("stored record bytes", lambda c: mb(c.stored_bytes)),
        row(
            "stored bytes in history files (JSON string literals)",
            lambda c: mb(c.stored_file_bytes),
        ),
        row("final request: reasoning items", lambda c: count(c.final_items)),
        row("final request: replay bytes (HTTP)", lambda c: mb(c.final_bytes)),
        row(
            "final request: replay bytes (WebSocket frames)", lambda c: mb(c.final_websocket_bytes)
        ),
        row("final request: replay bytes, multi-item messages", lambda c: mb(c.final_multi_bytes)),
        row("cumulative replay bytes, all turns", lambda c: mb(c.cumulative_bytes)),
        row("cumulative replay bytes, multi-item messages", lambda c: mb(c.cumulative_multi_bytes)),
        row(
            "cumulative = Σ items replayed per turn (exact)",
            lambda c: "yes" if c.cumulative_check else "**NO**",
        ),
        row("items dropped by dedupe (all requests)", lambda c: count(c.deduplicated)),
        row("summary parts replayed (final request)", lambda c: count(c.summary_parts)),
        row("summary bytes replayed (final request)", lambda c: mb(c.summary_bytes)),
        row("duplicated summary bytes (final request)", lambda c: mb(c.duplicated_summary_bytes)),
        row(
            "items not carrying their own summary parts",
            lambda c: (
                count(c.items_not_own_summary)
                + (
                    f" (+{c.items_own_summary_unknown:,} unknown)"
                    if c.items_own_summary_unknown
                    else ""
                )
            ),
        ),
        row(
            "items with a member outside the allowlist", lambda c: count(c.items_outside_allowlist)
        ),
        row("items with content null or []", lambda c: count(c.items_null_or_empty_content)),
        row(
            "redaction: views holding ciphertext or summary text",
            lambda c: f"{c.redaction_leaks:,} of {c.redaction_views:,}",
        ),
        timed("serialize time *(timing)*", lambda tm: tm.serialize),
        timed("parse time *(timing)*", lambda tm: tm.parse),
    ]


def versus(ours: int, theirs: int) -> str:
    """``ours`` against ``theirs``: "1.23 % smaller" or "0.45 % larger"."""
    change = smaller_by(ours, theirs)
    return f"{abs(change):.2f} % {'smaller' if change >= 0 else 'larger'}"


def seed_table(report: Report) -> list[str]:
    raw, can, leg = (report.totals[f] for f in FORMS)
    checked = ", ".join(
        f"{TITLES[f].split(' (')[0]} {report.totals[f].cumulative_bytes:,} B ="
        f" {report.totals[f].ledger_cumulative_bytes:,} B"
        for f in FORMS
    )
    cumulative_line = (
        f"yes, exactly, in every column ({checked}); the reference's dedupe dropped"
        f" {can.deduplicated} items and found {can.conflicts} id/ciphertext conflicts"
        if report.checks_pass
        else "**NO**: see the results table"
    )
    single_can = can.cumulative_bytes - can.cumulative_multi_bytes
    single_leg = leg.cumulative_bytes - leg.cumulative_multi_bytes
    return [
        "| comparison | this corpus | the seed (two 113-task fast-agent 0.10.11 corpora) |",
        "| --- | --- | --- |",
        _row(
            "canonical vs raw snapshot: stored record bytes (in history files)",
            (
                f"{versus(can.stored_bytes, raw.stored_bytes)},"
                f" {mb(raw.stored_bytes - can.stored_bytes)}"
                f" ({versus(can.stored_file_bytes, raw.stored_file_bytes)})",
                "no percentage given",
            ),
        ),
        _row(
            "canonical vs raw snapshot: replay bytes, final request / cumulative",
            (
                f"{versus(can.final_bytes, raw.final_bytes)} /"
                f" {versus(can.cumulative_bytes, raw.cumulative_bytes)}",
                "no percentage given",
            ),
        ),
        _row(
            "extra stored snapshot fields (raw snapshot − minimal record, stored bytes)",
            (mb(raw.stored_bytes - leg.stored_bytes), SEED_FIGURES["extra_snapshot_fields"]),
        ),
        _row(
            "canonical vs legacy: all reasoning replay, cumulative / final request",
            (
                f"{versus(can.cumulative_bytes, leg.cumulative_bytes)} /"
                f" {versus(can.final_bytes, leg.final_bytes)}",
                f'{SEED_FIGURES["canonical_vs_legacy"]} ("on those histories")',
            ),
        ),
        _row(
            "canonical vs legacy: multi-item messages only, cumulative / final request",
            (
                f"{versus(can.cumulative_multi_bytes, leg.cumulative_multi_bytes)} /"
                f" {versus(can.final_multi_bytes, leg.final_multi_bytes)}",
                "not given separately",
            ),
        ),
        _row(
            "canonical vs legacy: single-item messages only, cumulative",
            (versus(single_can, single_leg), "not given"),
        ),
        _row(
            "legacy − canonical, cumulative replay",
            (
                f"{mb(leg.cumulative_bytes - can.cumulative_bytes)} less",
                SEED_FIGURES["cumulative_saving"],
            ),
        ),
        _row("cumulative replay grows exactly as the items replayed", (cumulative_line, "—")),
    ]


def findings(report: Report) -> list[str]:
    """The results in words, each figure and each direction computed from the report."""
    raw, can, leg = (report.totals[f] for f in FORMS)
    single_can = can.cumulative_bytes - can.cumulative_multi_bytes
    single_leg = leg.cumulative_bytes - leg.cumulative_multi_bytes
    leaks = sum(t.redaction_leaks for t in report.totals.values())
    views = sum(t.redaction_views for t in report.totals.values())
    wrapper = "less" if can.stored_bytes <= raw.stored_bytes else "more"
    exact = "equal" if report.checks_pass else "do **not** equal"
    return [
        "- **Canonical vs raw snapshot.** The envelope's records are"
        f" {versus(can.stored_bytes, raw.stored_bytes)} than the snapshot's: its wrapper"
        f" (`schema`, `version`, `item`) costs {wrapper} than the snapshot's"
        ' `"content": []`, its `", "`/`": "` separators and its `\\uXXXX` escapes of non-ASCII'
        " summary text. On the wire the canonical replay is"
        f" {versus(can.cumulative_bytes, raw.cumulative_bytes)} (cumulative): the snapshot"
        ' replays `"content": []` or `null`'
        f" ({raw.items_null_or_empty_content:,} of {raw.final_items:,} final-request items) and"
        f" every unknown SDK field ({raw.items_outside_allowlist:,} items with a member outside"
        f" the allowlist); the envelope replays {can.items_null_or_empty_content:,} and"
        f" {can.items_outside_allowlist:,}.",
        "- **Canonical vs legacy.** Per-item summaries make the whole replay"
        f" {versus(can.cumulative_bytes, leg.cumulative_bytes)} than the v0.10.4 message-wide"
        " fallback (the seed: 8.9–9.2 % on its histories), and"
        f" {versus(can.cumulative_multi_bytes, leg.cumulative_multi_bytes)} on multi-item"
        " messages, where the fallback gives every item the whole message's summary"
        f" ({mb(leg.duplicated_summary_bytes)} of repeated summary text in the final request;"
        f" {leg.items_not_own_summary:,} items lose their own parts). On single-item messages"
        f" the canonical replay is {versus(single_can, single_leg)}: the fallback merges a"
        " multipart summary into one part, which saves the part objects and loses the"
        " boundaries.",
        "- **Cumulative replay.** Each turn's request replays every earlier item once: summed"
        f" over the turns, the bytes of the items replayed {exact} the cumulative figure in all"
        f" three columns, and the reference's dedupe removed {can.deduplicated:,} items"
        f" ({can.conflicts:,} id/ciphertext conflicts).",
        "- **Redaction.** The reference's diagnostic view of each final-request item, and its"
        " redaction of the whole request, show no ciphertext and no summary text:"
        f" {leaks:,} leaks in {views:,} views.",
    ]


def _parameters(manifest: Mapping[str, Any] | None) -> list[str]:
    if not manifest:
        return ["No generator manifest was found: the histories are taken as they are."]
    lines = ["| generator parameter | value |", "| --- | --- |"]
    for name, value in manifest.get("parameters", {}).items():
        shown = ",".join(map(str, value)) if isinstance(value, list) else str(value)
        lines.append(f"| `--{name.replace('_', '-')}` | {shown} |")
    return lines


def render_markdown(report: Report, report_command: str, chart_link: str | None = None) -> str:
    f = report.facts
    commands = []
    if report.manifest and isinstance(report.manifest.get("command"), str):
        commands.append(report.manifest["command"])
    commands.append(report_command)
    forms = ", ".join(f"{n:,} {name}" for name, n in sorted(f.stored_forms.items()))
    skipped = ", ".join(f"{n:,} `{code}`" for code, n in sorted(f.skipped_blocks.items()))
    lines = [
        "# Reasoning replay payload: raw snapshot, canonical envelope, legacy fallback",
        "",
        f"Generated by `{TOOL}`. Every figure is deterministic for this corpus except the rows"
        " and lines marked *(timing)*. Byte figures are exact; MB are 10⁶ bytes.",
        "",
        "```sh",
        *commands,
        "```",
        "",
        "## Corpus",
        "",
        f"- history files compared: {f.files:,} ({f.messages:,} messages); not compared:"
        f" {len(report.not_compared):,}; unreadable: {len(report.unreadable):,}",
        f"- turns (assistant messages, one provider request each): {f.turns:,}, at most"
        f" {f.max_turns:,} in one task",
        f"- reasoning items: {f.items:,}, stored as {forms or 'nothing'}; in multi-item messages:"
        f" {f.multi_item_items:,} items in {f.multi_item_messages:,} messages",
        f"- blocks left out of every column: {skipped or 'none'}; messages whose display"
        f" channel was derived: {f.derived_display:,}",
        "",
        *_parameters(report.manifest),
        "",
        "## Results",
        "",
        *results_table(report),
        "",
        "## Beside the seed's figures",
        "",
        *seed_table(report),
        "",
        *findings(report),
        "",
        "Absolute sizes scale with the corpus (the seed does not give its item or turn counts);"
        " the percentages are the comparable figures.",
        "",
    ]
    if chart_link:
        lines += [
            "## Cumulative replay per turn",
            "",
            f"![Cumulative reasoning replay bytes per turn, three stored forms]({chart_link})",
            "",
        ]
    if report.not_compared or report.unreadable:
        lines += ["## Files not measured", ""]
        lines += [f"- `{p}`: {reason}" for p, reason in report.not_compared]
        lines += [f"- `{u.path}`: `{u.code}` ({u.detail})" for u in report.unreadable]
        lines.append("")
    lines += [
        "## How each column is built",
        "",
        "- **raw SDK snapshot (0.10.11)**: stored as the SDK's `model_dump` without `status`,"
        ' written by `json.dumps` defaults (`", "`, `": "`, `\\uXXXX`), as fast-agent'
        " 0.10.6–0.10.11 wrote it; replayed as stored, a missing summary filled from the display"
        " channel.",
        "- **canonical envelope (v1)**: stored as SPEC C3 bytes by the reference's capture and"
        " writer; replayed by the reference's `build_replay_input`.",
        "- **legacy minimal (0.10.4)**: stored as `{type, encrypted_content, id}`; replayed with"
        " one summary part per item, the message's whole display channel (newline-joined).",
        "- Each block is read in the form it is stored in and re-expressed in the others: a"
        " raw snapshot gives the envelope the reference's capture makes of it and the minimal"
        " record; a v1 envelope gives the snapshot 0.10.11 would have stored (SDK field order,"
        " `content: []` as in every audited item; unknown SDK fields cannot be restored) and the"
        " minimal record; a minimal record gives neither (no per-item summary), so a history"
        " holding one is listed, not compared.",
        "- A turn is an assistant message; its request replays every earlier reasoning item."
        " The final request continues the saved history. Replay bytes are compact UTF-8 JSON of"
        " each reasoning item, as the SDK's HTTP body carries it.",
        "- Timing is the median of the passes, summed over the files; the canonical writer"
        " checks its output with the reader (SPEC C4), so its serialize time includes a parse.",
        "",
        f"*(timing)* The report took {report.elapsed:.1f} s.",
        "",
    ]
    return "\n".join(lines)


# --- SVG chart -------------------------------------------------------------------------------

STYLES: Final = {  # Okabe-Ito colours; raw is drawn thin and dashed over the canonical line it hugs
    StoredForm.CANONICAL: ("#0072B2", ' stroke-width="3.6"'),
    StoredForm.RAW: ("#CC79A7", ' stroke-width="1.8" stroke-dasharray="6 4"'),
    StoredForm.LEGACY: ("#D55E00", ' stroke-width="2.4"'),
}
WIDTH: Final = 880
HEIGHT: Final = 520
LEFT, RIGHT, TOP, BOTTOM = 92, 848, 84, 452
FONT: Final = "system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif"


def nice_step(span: float, target: int = 5) -> float:
    """A round tick step (1, 2, 2.5 or 5 × 10^k) giving about ``target`` ticks over ``span``."""
    if span <= 0:
        return 1.0
    raw = span / target
    magnitude = 10.0 ** math.floor(math.log10(raw))
    return next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)


def byte_unit(value: float) -> tuple[str, float]:
    for name, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if value >= size:
            return name, size
    return "bytes", 1.0


def tick_label(value: float) -> str:
    """A tick value with thousands separators and no trailing zeros: 1,000, 2.5, 0.25."""
    if value == int(value):
        return f"{int(value):,}"
    return f"{value:,.2f}".rstrip("0")


def render_svg(curves: Mapping[StoredForm, Sequence[int]], title: str, subtitle: str) -> str:
    """A line chart of cumulative replay bytes per turn, one line per form, as SVG text."""
    turns = max((len(c) for c in curves.values()), default=0)
    top_value = max((c[-1] for c in curves.values() if c), default=0)
    unit, scale = byte_unit(top_value)
    y_step = nice_step(top_value / scale, target=6)
    y_max = max(y_step, math.ceil(top_value / scale / y_step) * y_step)
    x_step = max(1.0, nice_step(turns, target=8))
    x_max = max(x_step, math.ceil(turns / x_step) * x_step)

    def x(turn: float) -> float:
        return LEFT + (RIGHT - LEFT) * turn / x_max

    def y(value: float) -> float:
        return BOTTOM - (BOTTOM - TOP) * value / scale / y_max

    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}"'
        f' viewBox="0 0 {WIDTH} {HEIGHT}" font-family="{FONT}" role="img">',
        f"<title>{escape(title)}</title>",
        f"<desc>{escape(subtitle)}</desc>",
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>',
        f'<text x="{LEFT}" y="34" font-size="19" font-weight="600" fill="#222">'
        f"{escape(title)}</text>",
        f'<text x="{LEFT}" y="58" font-size="13" fill="#555">{escape(subtitle)}</text>',
        '<g class="grid" stroke="#e4e4e4" stroke-width="1">',
    ]
    y_ticks = [i * y_step for i in range(round(y_max / y_step) + 1)]
    x_ticks = [i * x_step for i in range(round(x_max / x_step) + 1)]
    out += [
        f'<line x1="{LEFT}" x2="{RIGHT}" y1="{y(v * scale):.1f}" y2="{y(v * scale):.1f}"/>'
        for v in y_ticks[1:]
    ]
    out += [
        "</g>",
        '<g class="axes" stroke="#333" stroke-width="1.2">',
        f'<line x1="{LEFT}" x2="{RIGHT}" y1="{BOTTOM}" y2="{BOTTOM}"/>',
        f'<line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{BOTTOM}"/>',
    ]
    out += [
        f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{BOTTOM}" y2="{BOTTOM + 5}"/>' for t in x_ticks
    ]
    out += [
        f'<line x1="{LEFT - 5}" x2="{LEFT}" y1="{y(v * scale):.1f}" y2="{y(v * scale):.1f}"/>'
        for v in y_ticks
    ]
    out += ["</g>", '<g class="tick-labels" font-size="12" fill="#444">']
    out += [
        f'<text x="{x(t):.1f}" y="{BOTTOM + 21}" text-anchor="middle">{tick_label(t)}</text>'
        for t in x_ticks
    ]
    out += [
        f'<text x="{LEFT - 9}" y="{y(v * scale) + 4:.1f}" text-anchor="end">{tick_label(v)}</text>'
        for v in y_ticks
    ]
    out += [
        "</g>",
        f'<text x="{(LEFT + RIGHT) / 2:.0f}" y="{BOTTOM + 48}" font-size="13" fill="#333"'
        ' text-anchor="middle">turn within a task (one provider request per assistant message)'
        "</text>",
        f'<text transform="translate(26 {(TOP + BOTTOM) / 2:.0f}) rotate(-90)" font-size="13"'
        f' fill="#333" text-anchor="middle">cumulative replay bytes, all tasks ({unit})</text>',
    ]
    for form in (StoredForm.CANONICAL, StoredForm.RAW, StoredForm.LEGACY):
        colour, style = STYLES[form]
        points = " ".join(f"{x(i + 1):.1f},{y(v):.1f}" for i, v in enumerate(curves[form]))
        out.append(
            f'<polyline class="series" data-series="{form.value}" fill="none" stroke="{colour}"'
            f' stroke-linejoin="round"{style} points="{points}"/>'
        )
    ordered = sorted(FORMS, key=lambda f: -(curves[f][-1] if curves[f] else 0))
    legend_x, legend_y = LEFT + 18, TOP + 14
    out += [
        '<g class="legend" font-size="13" fill="#222">',
        f'<rect x="{legend_x - 10}" y="{legend_y - 4}" width="330"'
        f' height="{22 * len(ordered) + 10}" fill="#ffffff" fill-opacity="0.92" stroke="#cccccc"'
        ' rx="4"/>',
    ]
    for row, form in enumerate(ordered):
        colour, style = STYLES[form]
        line_y = legend_y + 12 + 22 * row
        final = curves[form][-1] if curves[form] else 0
        out += [
            f'<line x1="{legend_x}" x2="{legend_x + 30}" y1="{line_y}" y2="{line_y}"'
            f' stroke="{colour}"{style}/>',
            f'<text x="{legend_x + 40}" y="{line_y + 4}">{escape(TITLES[form])}:'
            f" {final / scale:,.3f} {unit}</text>",
        ]
    out += ["</g>", "</svg>", ""]
    return "\n".join(out)


def chart_titles(report: Report) -> tuple[str, str]:
    return (
        f"Cumulative reasoning replay per turn, {report.facts.files:,} tasks",
        "Sum over tasks; each turn's request replays every earlier reasoning item"
        " (HTTP body bytes)",
    )


# --- command line ----------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n", 1)[0],
        epilog="See the module docstring (or tools/README.md) for how each column is built.",
    )
    parser.add_argument("paths", nargs="+", type=Path, help="history files or directories")
    parser.add_argument("--markdown", type=Path, help="also write the Markdown report here")
    parser.add_argument("--chart", type=Path, help="write the cumulative-replay chart (SVG) here")
    parser.add_argument(
        "--passes", type=int, default=3, help="timing passes; the median is shown (default 3)"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(arguments)
    if args.passes < 1:
        parser.error("--passes must be >= 1")
    missing = [str(p) for p in args.paths if not p.exists()]
    if missing:
        parser.error(f"no such path: {', '.join(missing)}")
    report = build_report(args.paths, args.passes)
    chart_link = None
    if args.chart is not None:
        args.chart.write_text(render_svg(report.curves, *chart_titles(report)), encoding="utf-8")
        base = args.markdown.parent if args.markdown is not None else Path.cwd()
        chart_link = os.path.relpath(args.chart, base)
    markdown = render_markdown(report, shlex.join(["python", TOOL, *arguments]), chart_link)
    sys.stdout.write(markdown)
    if args.markdown is not None:
        args.markdown.write_text(markdown, encoding="utf-8")
    if not report.facts.files:
        print("no history file could be compared in all three forms", file=sys.stderr)
        return 1
    if not report.checks_pass:
        print("cumulative check failed: see the results table", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
