"""Reading a corpus of fast-agent histories: each replay block and the forms it can be expressed in.

Part of ``tools/payload_report.py`` (see its docstring for what each column holds).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from payload_corpus import (
    MANIFEST_NAME,
    StoredForm,
    canonical_envelope_text,
    display_text,
    legacy_minimal_text,
    raw_snapshot_text,
    sdk_output_item,
)
from reasoning_replay import (
    DISPLAY_CHANNEL,
    REPLAY_CHANNEL,
    Code,
    HistoryMessage,
    parse_reasoning_replay_envelope,
)
from reasoning_replay.history.history_files import HistoryFileProblem, parse_history_file

FORMS: Final = (StoredForm.RAW, StoredForm.CANONICAL, StoredForm.LEGACY)
SKIPPED_FILES: Final = ("session.json", MANIFEST_NAME)


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


def _channel_blocks(message: HistoryMessage, name: str) -> Sequence[object]:
    """A channel's blocks: an array in a file parse_history_file has read (SPEC H1)."""
    blocks = message.channels.get(name, ())
    return blocks if isinstance(blocks, list | tuple) else ()


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
        raw_blocks = _channel_blocks(history_message, REPLAY_CHANNEL)
        display = _block_texts(_channel_blocks(history_message, DISPLAY_CHANNEL))
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
