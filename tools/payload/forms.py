"""The replay each stored form gets, and the bytes of a request's items over HTTP and WebSocket.

Part of ``tools/payload_report.py`` (see its docstring for what each column holds).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import msgspec
from payload_corpus import StoredForm, text_block
from reasoning_replay import (
    REPLAY_CHANNEL,
    HistoryMessage,
    ReplayTarget,
    build_replay_input,
    parse_reasoning_replay_envelope,
)

from payload.reading import Block, Message, Task

TITLES: Final = {
    StoredForm.RAW: "raw SDK snapshot (0.10.11)",
    StoredForm.CANONICAL: "canonical envelope (v1)",
    StoredForm.LEGACY: "legacy minimal (0.10.4)",
}
TARGET: Final = ReplayTarget(provider="openai")
Item = dict[str, Any]
_ENCODER: Final = msgspec.json.Encoder()


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
