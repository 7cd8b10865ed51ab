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


class _Lines:
    """Offsets in a text to SARIF lines and columns."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._starts = [0]
        index = text.find("\n")
        while index >= 0:
            self._starts.append(index + 1)
            index = text.find("\n", index + 1)

    def position(self, offset: int) -> tuple[int, int]:
        low, high = 0, len(self._starts) - 1
        while low < high:  # the last line start at or before offset
            middle = (low + high + 1) // 2
            if self._starts[middle] <= offset:
                low = middle
            else:
                high = middle - 1
        start = self._starts[low]
        if start == 0 and self._text.startswith(_BOM):
            start = min(1, offset)  # SARIF §3.30.2: a byte-order mark counts for nothing
        before = self._text[start:offset]
        units = len(before.encode("utf-16-le", "surrogatepass")) // 2
        return low + 1, units + 1

    def region(self, start: int, end: int) -> TextRegion:
        return TextRegion(*self.position(start), *self.position(end))


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
    lines = _Lines(text)
    messages = _member(root, "messages")
    places: dict[BlockKey, BlockPlace] = {}
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
        places[key] = BlockPlace(lines.region(shift + spot.start, shift + spot.end), digest)
    return places
