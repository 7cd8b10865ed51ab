"""Where a finding's block is in a history file's text, for reports that point at lines (SARIF).

A finding of SPEC H3 names its block by message index and block index; a code-scanning viewer
needs a line and a column. This module reads a file's text once more, the lenient way of
:mod:`reasoning_replay.history.jsonspans` (which keeps where every value starts and ends), and
gives each located finding's block its region: the span of the block's ``text`` string (of the
block itself when it has none), in lines and UTF-16 columns as SARIF 2.1.0 §3.30 counts them (a
line ends at ``\\n``, a ``\\r\\n`` is one break; a byte-order mark takes no column). It also gives
a digest of the block's JSON text as stored, which identifies the block across runs and edits
elsewhere in the file; a digest of the whole block, never a ciphertext or any part of it, so a
report shows no replay material (SPEC H7).

It is used only when a report asks for regions, and only for files with located findings.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final, TypeAlias

from reasoning_replay.diagnostics import Code
from reasoning_replay.ordering.cache_state import CACHE_STATE_CHANNEL
from reasoning_replay.record.envelope import REPLAY_CHANNEL

from .jsonspans import JArray, JNode, JObject, JString, parse_whole
from .validation import Finding

_BOM: Final = "\ufeff"

# A block of a file: (message index, block index, whether it is the cache-state record).
BlockKey: TypeAlias = tuple[int, int, bool]


@dataclass(frozen=True, slots=True)
class TextRegion:
    """A span of a file's text: 1-based lines, 1-based columns in UTF-16 code units, the end
    column one past the span's last character (SARIF 2.1.0 §3.30)."""

    start_line: int
    start_column: int
    end_line: int
    end_column: int

    def to_sarif(self) -> dict[str, int]:
        return {
            "startLine": self.start_line,
            "startColumn": self.start_column,
            "endLine": self.end_line,
            "endColumn": self.end_column,
        }


FILE_START: Final = TextRegion(1, 1, 1, 1)


@dataclass(frozen=True, slots=True)
class BlockPlace:
    """Where a block is, and the SHA-256 of its JSON text as the file stores it."""

    region: TextRegion
    digest: str


def block_key(finding: Finding) -> BlockKey | None:
    """The block a finding is about, or None for a finding about the whole file."""
    if finding.message_index is None or finding.block_index is None:
        return None
    cache_state = finding.code is Code.CACHE_STATE_INVALID
    return (finding.message_index, finding.block_index, cache_state)


def _positions(text: str, offsets: Iterable[int]) -> dict[int, tuple[int, int]]:
    """Each offset's line and UTF-16 column, in one pass over the text (offsets in order): a
    column counts from its line's start, so a file on one line costs no more than one with many.
    """
    positions: dict[int, tuple[int, int]] = {}
    line, units, cursor = 1, 0, 0
    bom = text.startswith(_BOM)
    for offset in sorted(set(offsets)):
        breaks = text.count("\n", cursor, offset)
        if breaks:
            line += breaks
            cursor = text.rfind("\n", cursor, offset) + 1
            units = 0
        units += len(text[cursor:offset].encode("utf-16-le", "surrogatepass")) // 2
        cursor = offset
        # SARIF 2.1.0 §3.30.2: a byte-order mark takes no column
        positions[offset] = (line, units + 1 - (bom and line == 1 and offset > 0))
    return positions


def _member(node: JNode | None, name: str) -> JNode | None:
    return node.last(name) if isinstance(node, JObject) else None


def _element(node: JNode | None, index: int) -> JNode | None:
    if isinstance(node, JArray) and 0 <= index < len(node.elements):
        return node.elements[index]
    return None


def block_places(data: bytes | str, keys: Iterable[BlockKey]) -> Mapping[BlockKey, BlockPlace]:
    """Each block's place in the file, for the blocks that can be found (all of them, in a
    file that validation read; none in a file that is not UTF-8 JSON)."""
    wanted = sorted(set(keys))
    if not wanted:
        return {}
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError:
        return {}
    root = parse_whole(text.removeprefix(_BOM))
    if root is None:
        return {}
    shift = len(text) - len(text.removeprefix(_BOM))
    messages = _member(root, "messages")
    spans: dict[BlockKey, tuple[int, int, str]] = {}
    for key in wanted:
        message_index, block_index, cache_state = key
        channels = _member(_element(messages, message_index), "channels")
        channel = _member(channels, CACHE_STATE_CHANNEL if cache_state else REPLAY_CHANNEL)
        block = _element(channel, block_index)
        if block is None:
            continue
        shown = _member(block, "text")
        spot = shown if isinstance(shown, JString) else block
        raw = text[shift + block.start : shift + block.end]
        digest = hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()
        spans[key] = (shift + spot.start, shift + spot.end, digest)
    at = _positions(text, (o for start, end, _ in spans.values() for o in (start, end)))
    places: dict[BlockKey, BlockPlace] = {}
    for key, (start, end, digest) in spans.items():
        places[key] = BlockPlace(TextRegion(*at[start], *at[end]), digest)
    return places
