"""History exports (SPEC H6) and redacted records (SPEC H2): a history value in, its export out.

Pure functions only; reading and writing files is the CLI's job (``conformance export``). What a
redacted export changes, and how, is SPEC H6's to say; this module follows it:

* replay blocks become redacted records (:func:`redacted_record_text`);
* everything else is redacted by SPEC R2 with every string it keeps, member names included,
  redacted as a text (:func:`.text_redaction.redact_text`), except that the file, its messages and
  their ``channels`` are redacted member by member (never taken for a reasoning item);
* the display channel ``reasoning`` is dropped on request; the marker is always last.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from reasoning_replay.diagnostics import Code
from reasoning_replay.record.envelope import DISPLAY_CHANNEL, REDACTED_SCHEMA_NAME, REPLAY_CHANNEL
from reasoning_replay.record.jsontext import TextRefused
from reasoning_replay.record.reader import parse_reasoning_replay_envelope, parse_strict
from reasoning_replay.record.redaction import (
    is_sensitive_name,
    redact_reasoning_replay_for_diagnostics,
    redact_value,
    replacement,
)

from .history_files import HistoryFileProblem, history_from_value, parse_json_file
from .text_redaction import compact_json, json_string, redact_text


class ExportMode(StrEnum):
    """SPEC H6: the two export modes."""

    RESUMABLE = "resumable"
    REDACTED = "redacted"


EXPORT_MARKER: Final = "reasoning_replay_export"  # SPEC H6
RESUMABLE_WARNING: Final = (
    "This file contains resumable encrypted provider reasoning state (bearer-capable). "
    "Keep it private."
)  # SPEC H6
REDACTED_NOTE: Final = "Reasoning replay state was removed; this history is not resumable."


class DisplayReasoning(StrEnum):
    """SPEC H6: whether a resumable export stores summary text twice (SPEC ST2)."""

    DUPLICATED = "duplicated"
    NONE = "none"


def _is_resumable_block(block: object) -> bool:
    """SPEC §1: a replay block whose text is a canonical envelope."""
    if not _is_text_block(block):
        return False
    assert isinstance(block, dict)
    return parse_reasoning_replay_envelope(block["text"]).item is not None


def display_reasoning(history: dict[str, Any]) -> DisplayReasoning:
    """SPEC H6: ``duplicated`` when one assistant message holds both channels, else ``none``.

    ``history`` has the shape of SPEC H1 (channel values are arrays).
    """
    for message in history["messages"]:
        channels = message.get("channels")
        if message["role"] != "assistant" or not isinstance(channels, dict):
            continue
        if channels.get(DISPLAY_CHANNEL) and any(  # any block counts, an empty one too
            map(_is_resumable_block, channels.get(REPLAY_CHANNEL) or ())
        ):
            return DisplayReasoning.DUPLICATED
    return DisplayReasoning.NONE


def export_marker(
    mode: ExportMode, display: DisplayReasoning = DisplayReasoning.NONE
) -> dict[str, str]:
    """SPEC H6: the value of the top-level member ``reasoning_replay_export``.

    ``display`` is the resumable marker's ``display_reasoning``; a redacted marker has none.
    """
    if mode is ExportMode.RESUMABLE:
        return {
            "mode": "resumable",
            "warning": RESUMABLE_WARNING,
            "display_reasoning": display.value,
        }
    return {"mode": "redacted", "note": REDACTED_NOTE}


# --- SPEC H2 redacted records -----------------------------------------------------------------


def _redact_member(name: str, value: object, depth: int) -> object:
    """SPEC H6: one member of an object redacted member by member, ``depth`` levels down."""
    written = redact_text(name)  # the name as the export writes it decides (SPEC H6)
    if is_sensitive_name(written):
        return replacement(written, value, redact_text)
    return redact_value(value, redact_text, depth)


def _is_text_block(block: object) -> bool:
    """SPEC P2: an object whose ``type`` is ``"text"`` and whose ``text`` is a string."""
    return (
        isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    )


def _view_of_value(value: object) -> dict[str, Any] | None:
    """SPEC H2: the diagnostic view of a block value's reasoning item, or ``None``."""
    if not isinstance(value, dict):
        return None
    item = value.get("item")
    if isinstance(item, dict):
        return redact_reasoning_replay_for_diagnostics(item)
    if "encrypted_content" in value:
        return redact_reasoning_replay_for_diagnostics(value)
    return None


def redacted_record(was: str, view: dict[str, Any] | None) -> dict[str, Any]:
    """SPEC H2: the redacted record object."""
    return {"schema": REDACTED_SCHEMA_NAME, "version": 1, "was": was, "view": view}


def redacted_record_text(text: str) -> str:
    """SPEC H2: the text replacing a replay block whose text is ``text``."""
    verdict = parse_reasoning_replay_envelope(text)
    if verdict.item is not None:
        item_view = redact_reasoning_replay_for_diagnostics(verdict.item)
        return redact_text(compact_json(redacted_record("resumable", item_view)))
    assert verdict.code is not None
    if verdict.code is Code.REDACTED_RECORD:
        return redact_text(text)  # a redacted export exported again: kept, as any text is
    value = parse_strict(text)
    view = None if isinstance(value, TextRefused) else _view_of_value(value)  # E6 steps 1–5
    return redact_text(compact_json(redacted_record(verdict.code.value, view)))


# Depths (arrays and objects around a value, SPEC R2) of the parts of a history (SPEC H1).
_MESSAGE_MEMBER_DEPTH: Final = 3  # file object, messages array, message object
_CHANNEL_DEPTH: Final = 4  # ... and the channels object
_BLOCK_MEMBER_DEPTH: Final = 6  # ... and the blocks array, the block object


def _redact_replay_block(block: object) -> object:
    if not _is_text_block(block):
        record = compact_json(redacted_record(Code.BLOCK_NOT_TEXT.value, None))
        return {"type": "text", "text": record}
    assert isinstance(block, dict)
    return {
        redact_text(name): redacted_record_text(member)
        if name == "text"
        else _redact_member(name, member, _BLOCK_MEMBER_DEPTH)
        for name, member in block.items()
    }


def _redact_channels(channels: dict[str, Any], *, drop_display_reasoning: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, blocks in channels.items():
        if name == REPLAY_CHANNEL:
            out[name] = [_redact_replay_block(block) for block in blocks]
        elif name != DISPLAY_CHANNEL or not drop_display_reasoning:
            out[redact_text(name)] = redact_value(blocks, redact_text, _CHANNEL_DEPTH)
    return out


def _redact_message(message: dict[str, Any], *, drop_display_reasoning: bool) -> dict[str, Any]:
    return {
        redact_text(name): _redact_channels(member, drop_display_reasoning=drop_display_reasoning)
        if name == "channels" and isinstance(member, dict)
        else _redact_member(name, member, _MESSAGE_MEMBER_DEPTH)
        for name, member in message.items()
    }


def export_history(
    history: object, mode: ExportMode, *, drop_display_reasoning: bool = False
) -> dict[str, Any] | Code:
    """SPEC H6: the export of a history in ``mode``, or ``history_malformed`` (not SPEC H1).

    Member order is the input's, with the marker ``reasoning_replay_export`` last.
    """
    if isinstance(history_from_value(history), HistoryFileProblem):  # SPEC H1, H3
        return Code.HISTORY_MALFORMED
    assert isinstance(history, dict)
    exported: dict[str, Any] = {}
    for name, member in history.items():
        if name == EXPORT_MARKER:
            continue  # an export exported again gets the new marker, last
        if mode is ExportMode.RESUMABLE:
            exported[name] = member
        elif name == "messages":
            exported[name] = [
                _redact_message(message, drop_display_reasoning=drop_display_reasoning)
                for message in member
            ]
        else:
            exported[redact_text(name)] = _redact_member(name, member, 1)
    exported[EXPORT_MARKER] = export_marker(mode, display_reasoning(history))
    return exported


# --- the export file: SPEC H6 keeps every number as written -------------------------------------


@dataclass(frozen=True, slots=True)
class NumberLexeme:
    """A number of a history file exactly as the file writes it (SPEC H6)."""

    text: str


def read_history_for_export(data: bytes) -> object | HistoryFileProblem:
    """A history file's JSON value with its numbers as :class:`NumberLexeme`, or its problem.

    The verdict is the validator's (SPEC H3): the same file is refused alike.
    """
    problem = parse_json_file(data)
    if isinstance(problem, HistoryFileProblem):
        return problem
    try:
        value: object = json.loads(data, parse_int=NumberLexeme, parse_float=NumberLexeme)
    except RecursionError:  # SPEC E4.2 for files: a finding, never an exception
        return HistoryFileProblem(
            Code.HISTORY_MALFORMED, "not JSON this exporter can hold: nesting too deep"
        )
    return value


def _scalar_text(value: object) -> str:
    if isinstance(value, NumberLexeme):
        return value.text
    if isinstance(value, str):
        return json_string(value)
    return json.dumps(value)


def export_file_text(value: object) -> str:
    """The text of an export file: ``value`` indented by two spaces, numbers as read (SPEC H6).

    Iterative, so that a value as deep as the file it was read from is written whole.
    """
    pieces: list[str] = []
    # Each open container: its (prefix, member) pairs, its level, its closing bracket, and
    # whether a member was written yet.
    stack: list[tuple[Iterator[tuple[str, object]], int, str, list[bool]]] = []

    def open_value(member: object, level: int) -> None:
        if isinstance(member, dict) and member:
            pieces.append("{")
            pairs = ((json_string(str(name)) + ": ", item) for name, item in member.items())
            stack.append((pairs, level + 1, "}", [False]))
        elif isinstance(member, list) and member:
            pieces.append("[")
            stack.append(((("", item) for item in member), level + 1, "]", [False]))
        elif isinstance(member, dict | list):
            pieces.append("{}" if isinstance(member, dict) else "[]")
        else:
            pieces.append(_scalar_text(member))

    open_value(value, 0)
    while stack:
        pairs, level, closing, written = stack[-1]
        pair = next(pairs, None)
        if pair is None:
            stack.pop()
            pieces.append("\n" + "  " * (level - 1) + closing)
            continue
        pieces.append(("", ",")[written[0]] + "\n" + "  " * level + pair[0])
        written[0] = True
        open_value(pair[1], level)
    return "".join(pieces)
