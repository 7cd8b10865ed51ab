"""Helpers several test modules share: the golden SPEC §15 example, the strict reading, the
edits that turn a good text into a bad one, and the modules a Python file imports."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

from hypothesis import strategies as st
from reasoning_replay import Code, ReasoningReplayItem
from reasoning_replay.record.read import read_block

# SPEC §15: the SDK output item whose canonical envelope is the 181-byte golden text.
GOLDEN_SDK_ITEM: dict[str, Any] = {
    "id": "rs_1",
    "type": "reasoning",
    "status": "completed",
    "content": None,
    "summary": [{"type": "summary_text", "text": "é", "annotations": []}],
    "encrypted_content": "c",
    "new_sdk_field": 7,
}


def strict_verdict(text: str | bytes) -> tuple[Code | None, ReasoningReplayItem | None]:
    """The verdict of the reader's statement (SPEC E6 in Python): the yardstick for every faster
    path."""
    result = read_block(text)
    return result.code, result.item


# Mostly invalid UTF-8: a stray continuation byte, a truncated sequence, an encoded surrogate, an
# overlong form, a code point past U+10FFFF; and a byte-order mark, a quote, a backslash, a space.
BYTE_PIECES = (
    b"\x80", b"\xbf", b"\xc3", b"\xe6\x95", b"\xed\xa0\x80", b"\xc0\xa2", b"\xff",
    b"\xf4\x90\x80\x80", b"\xef\xbb\xbf", b'"', b"\\", b" ", b"\xc3\xa9",
)  # fmt: skip


@st.composite
def bytes_changed(draw: st.DrawFn, texts: st.SearchStrategy[str]) -> bytes:
    """The UTF-8 of a text drawn from ``texts`` with one to three pieces of :data:`BYTE_PIECES`
    inserted or written over a byte."""
    data = bytearray(draw(texts).encode("utf-8"))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        at = draw(st.integers(min_value=0, max_value=len(data)))
        piece = draw(st.sampled_from(BYTE_PIECES))
        data[at : at + draw(st.integers(min_value=0, max_value=1))] = piece
    return bytes(data)


CHARACTER_EDITS = ("insert", "replace", "delete", "truncate")


def character_edit(text: str, at: int, edit: str, piece: str) -> str:
    """``text`` with one of :data:`CHARACTER_EDITS` at ``at``: ``piece`` inserted or written over
    a character, a character deleted, or the text cut short."""
    if edit == "insert":
        return text[:at] + piece + text[at:]
    if edit == "replace":
        return text[:at] + piece + text[at + 1 :]
    if edit == "delete":
        return text[:at] + text[at + 1 :]
    return text[:at]


def envelope_text(item_id: str, cipher: str) -> str:
    """A canonical envelope text (SPEC C3) of an item with an empty summary."""
    item = {"type": "reasoning", "id": item_id, "summary": [], "encrypted_content": cipher}
    schema = "fast-agent.openai-responses.reasoning-replay"
    return json.dumps({"schema": schema, "version": 1, "item": item}, separators=(",", ":"))


def history_of_blocks(*blocks: str) -> str:
    """A history file (SPEC H1): a user message, then one assistant message per replay block."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": []}]
    for block in blocks:
        channels = {"openai-reasoning-encrypted": [{"type": "text", "text": block}]}
        messages.append({"role": "assistant", "content": [], "channels": channels})
    return json.dumps({"messages": messages})


def validate_report_records(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The report of ``conformance validate --format json`` (one document) as a flat list, in
    report order: each file's findings (``"type": "finding"``), then the file
    (``"type": "file"``), and the summary last (``"type": "summary"``)."""
    records: list[dict[str, Any]] = []
    for entry in document["files"]:
        records += [{"type": "finding", **finding} for finding in entry["findings"]]
        file_record = {k: v for k, v in entry.items() if k != "findings"}
        records.append({"type": "file", **file_record, "findings": len(entry["findings"])})
    records.append({"type": "summary", **document["summary"]})
    return records


def imported_modules(path: Path) -> set[str]:
    """Every module a Python file imports (``import m``, ``from m import ...``), by name."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    return names | {
        node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
    }


# --- a string spelled every way JSON allows ------------------------------------------------------

SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "/": "\\/", "\b": "\\b", "\f": "\\f", "\n": "\\n",
                 "\r": "\\r", "\t": "\\t"}  # fmt: skip


@st.composite
def spelled(draw: st.DrawFn, value: str, quote_escape: bool = True) -> str:
    """A JSON string literal of ``value`` spelled any way JSON allows (RFC 8259 §7): each
    character raw where it may be, or as its short escape, or as \\uXXXX in either case, an
    astral one as an escaped surrogate pair; a quote not as \\" if not ``quote_escape`` (the
    Python path's ciphertext limit)."""
    out = ['"']
    for char in value:
        units = utf16_units(char)
        ways = ["".join(f"\\u{unit:04x}" for unit in units)]
        ways.append("".join(f"\\u{unit:04X}" for unit in units))
        if char in SHORT_ESCAPES and (quote_escape or char != '"'):
            ways.append(SHORT_ESCAPES[char])
        if char >= " " and char not in '"\\':
            ways.extend([char] * 4)  # mostly raw, as writers write it
        out.append(draw(st.sampled_from(ways)))
    out.append('"')
    return "".join(out)


def utf16_units(char: str) -> list[int]:
    data = char.encode("utf-16-be")
    return [int.from_bytes(data[at : at + 2], "big") for at in range(0, len(data), 2)]
