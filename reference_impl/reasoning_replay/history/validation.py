"""Validation of stored history files (SPEC §10.2, H3 and H4): a file in, its findings out.

:func:`validate_history` is a pure function of a file's contents, its name and its permission
bits; reading files, walking directories and fixing modes belong to a run
(:mod:`reasoning_replay.history.validate_run`). A broken file is a finding, never an exception
(SPEC E4.2).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final, TypeAlias

from reasoning_replay.diagnostics import Code
from reasoning_replay.ordering.cache_state import (
    CACHE_STATE_CHANNEL,
    effort_allowed,
    read_cache_state,
)
from reasoning_replay.ordering.planner import DEFAULT_UPDATE_CAPABLE
from reasoning_replay.record.dedupe import DedupeDecision, decide_items
from reasoning_replay.record.display import display_consistent
from reasoning_replay.record.envelope import DISPLAY_CHANNEL, REPLAY_CHANNEL, ReasoningReplayItem
from reasoning_replay.record.providers import REGISTRY_ONLY, ProviderNames
from reasoning_replay.record.reader import parse_reasoning_replay_envelope

from .history_files import HistoryFileProblem, MessageChannels, read_message_channels
from .session_files import is_session_file

GROUP_OTHER_BITS: Final = 0o077  # SPEC H4


class Severity(StrEnum):
    """SPEC H3: how bad a finding is; a validator exits 1 when there is an ``error``."""

    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


_WARNINGS: Final = frozenset(
    (
        Code.LEGACY_MINIMAL_RECORD,
        Code.RAW_SDK_SNAPSHOT,
        Code.DEDUPE_EXACT_DUPLICATE,
        Code.DEDUPE_ID_CIPHERTEXT_CONFLICT,  # kept and replayed (SPEC D3): xAI reuses ids
        Code.BLOCK_NOT_TEXT,
        Code.REPLAY_CHANNEL_MISPLACED,
        Code.DISPLAY_REPLAY_MISMATCH,
    )
)
_LEGACY: Final = frozenset((Code.LEGACY_MINIMAL_RECORD, Code.RAW_SDK_SNAPSHOT))


def severity_of(code: Code) -> Severity:
    """SPEC H3: ``note`` for redacted records, ``warning`` for legacy forms, exact duplicates,
    id/ciphertext conflicts, non-text blocks, misplaced replay channels and display mismatches,
    ``error`` for everything
    else a validator reports."""
    if code is Code.REDACTED_RECORD:
        return Severity.NOTE
    return Severity.WARNING if code in _WARNINGS else Severity.ERROR


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing a validator reports about a file (SPEC H3), with its location when it has one.

    ``detail`` is for people (a mode, why a file is malformed); it never holds replay material.
    """

    code: Code
    message_index: int | None = None
    block_index: int | None = None
    detail: str = ""
    level: Severity | None = None  # the user's choice for permission findings (SPEC H3)

    @property
    def severity(self) -> Severity:
        return severity_of(self.code) if self.level is None else self.level

    def to_json(self) -> dict[str, Any]:
        """The finding as the ``validate`` operation reports it (conformance/PROTOCOL.md)."""
        out: dict[str, Any] = {"code": self.code.value, "severity": self.severity.value}
        if self.message_index is not None:
            out["message_index"] = self.message_index
        if self.block_index is not None:
            out["block_index"] = self.block_index
        return out


@dataclass(frozen=True, slots=True)
class BlockCounts:
    """SPEC H3: replay blocks of assistant messages by verdict; together, every such block."""

    resumable: int = 0
    legacy: int = 0  # legacy_minimal_record and raw_sdk_snapshot
    redacted: int = 0  # redacted_record
    malformed: int = 0  # every other code of E6, and block_not_text

    @property
    def total(self) -> int:
        return self.resumable + self.legacy + self.redacted + self.malformed

    def to_json(self) -> dict[str, int]:
        return {
            "resumable": self.resumable,
            "legacy": self.legacy,
            "redacted": self.redacted,
            "malformed": self.malformed,
        }


@dataclass(frozen=True, slots=True)
class FileReport:
    """What a validator reports for one file (SPEC H3): findings in order, counts, how many
    resumable blocks would not replay to the file's provider (another issuer's, SPEC P4), and
    whether the history replays exactly as stored (every replay block of every assistant message
    resumable, none dropped, and no replay block on another message)."""

    findings: tuple[Finding, ...]
    counts: BlockCounts
    replays_as_stored: bool
    file_name: str | None = None
    provider_mismatch: int = 0

    @property
    def has_error(self) -> bool:
        return any(f.severity is Severity.ERROR for f in self.findings)

    def to_json(self) -> dict[str, Any]:
        """The output of the ``validate`` operation (conformance/PROTOCOL.md)."""
        return {
            "findings": [f.to_json() for f in self.findings],
            "counts": self.counts.to_json(),
            "replays_as_stored": self.replays_as_stored,
            "provider_mismatch": self.provider_mismatch,
        }


def permission_findings(file_mode: int | None, directory_mode: int | None) -> list[Finding]:
    """SPEC H4: group or other permission bits on the file, then on its session directory."""
    findings = []
    if file_mode is not None and file_mode & GROUP_OTHER_BITS:
        findings.append(Finding(Code.FILE_MODE_TOO_OPEN, detail=f"mode {file_mode & 0o777:04o}"))
    if directory_mode is not None and directory_mode & GROUP_OTHER_BITS:
        findings.append(
            Finding(
                Code.DIRECTORY_MODE_TOO_OPEN,
                detail=f"session directory mode {directory_mode & 0o777:04o}",
            )
        )
    return findings


# Within one block, findings follow the order of SPEC H3's list (conformance/PROTOCOL.md).
_RANK_BLOCK: Final = 0  # a block's read code, or block_not_text
_RANK_CACHE_STATE: Final = 1
_RANK_DEDUPE: Final = 2
_RANK_DISPLAY: Final = 3


def _block_text(block: object) -> str | None:
    """SPEC P2: a text block is an object with ``type`` ``"text"`` and a string ``text``."""
    if isinstance(block, dict) and block.get("type") == "text":
        text = block.get("text")
        if isinstance(text, str):
            return text
    return None


def _replay_block_text(block: object) -> str | bytes | None:
    """:func:`_block_text` of a replay block, whose text may be the UTF-8 bytes the file stores
    (:func:`.history_files.read_message_channels`, ``stored_texts``): the reader reads those as
    it reads the characters (SPEC E6)."""
    if isinstance(block, dict) and block.get("type") == "text":
        text = block.get("text")
        if isinstance(text, (str, bytes)):
            return text
    return None


def _cache_state_problem(blocks: Sequence[object]) -> str | None:
    """SPEC H3, F6: why a message's cache-state record is malformed, if it is: structure
    first, then the effort against the record's own model."""
    record = read_cache_state(blocks)
    if record is None:
        return None
    if isinstance(record, Code):
        return "malformed cache-state record"
    if not effort_allowed(record.effort, record.model in DEFAULT_UPDATE_CAPABLE):
        return f"effort not allowed for model {record.model!r}"
    return None


class _CacheStateChecks:
    """:func:`_cache_state_problem`, remembered per record text: a history repeats a handful of
    records (one model, one key, a few efforts) on every assistant message."""

    def __init__(self) -> None:
        self._known: dict[str, str | None] = {}

    def finding(self, index: int, blocks: Sequence[object]) -> Finding | None:
        text = _block_text(blocks[0]) if len(blocks) == 1 else None
        if text is None:  # not one text block: malformed, and nothing to remember
            problem = _cache_state_problem(blocks)
        elif text in self._known:
            problem = self._known[text]
        else:
            problem = self._known[text] = _cache_state_problem(blocks)
        return None if problem is None else Finding(Code.CACHE_STATE_INVALID, index, 0, problem)


# A finding with its place in the report: (message index, block index, rank, finding).
_Located: TypeAlias = tuple[int, int, int, Finding]


@dataclass(slots=True)
class _BlockScan:
    """What reading a file's replay blocks and cache-state records found (SPEC H3)."""

    located: list[_Located] = field(default_factory=list)
    resumable: list[ReasoningReplayItem] = field(default_factory=list)
    places: list[tuple[int, int]] = field(default_factory=list)  # of each resumable item
    issuers: list[str | None] = field(default_factory=list)  # of each, the name recorded (P4)
    legacy: int = 0
    redacted: int = 0
    malformed: int = 0
    misplaced: int = 0  # blocks of replay channels on other messages: never read (SPEC P2, H3)

    def block(self, m_index: int, b_index: int, block: object, issuer: str | None) -> None:
        """One replay block's verdict (SPEC E6), or ``block_not_text`` (SPEC P2, H3)."""
        text = _replay_block_text(block)
        if text is None:
            self.malformed += 1
            found = Finding(Code.BLOCK_NOT_TEXT, m_index, b_index)
            self.located.append((m_index, b_index, _RANK_BLOCK, found))
            return
        read = parse_reasoning_replay_envelope(text)
        if read.item is not None:
            self.resumable.append(read.item)
            self.places.append((m_index, b_index))
            self.issuers.append(issuer)
            return
        code = read.code
        assert code is not None
        if code in _LEGACY:
            self.legacy += 1
        elif code is Code.REDACTED_RECORD:
            self.redacted += 1
        else:
            self.malformed += 1
        self.located.append((m_index, b_index, _RANK_BLOCK, Finding(code, m_index, b_index)))


def _scan_blocks(messages: list[MessageChannels]) -> _BlockScan:
    """SPEC H3: the replay blocks and the cache-state record of every assistant message, and
    each block of a replay channel on another message."""
    scan = _BlockScan()
    cache_states = _CacheStateChecks()
    for m_index, (role, channels, issuer) in enumerate(messages):
        if not channels:
            continue
        if role != "assistant":  # SPEC P2, H3: not read, each block reported, none replayed
            for b_index in range(len(channels.get(REPLAY_CHANNEL, ()))):
                misplaced = Finding(Code.REPLAY_CHANNEL_MISPLACED, m_index, b_index)
                scan.located.append((m_index, b_index, _RANK_BLOCK, misplaced))
                scan.misplaced += 1
            continue
        first_item = len(scan.resumable)
        replay_blocks = channels.get(REPLAY_CHANNEL, ())
        for b_index, block in enumerate(replay_blocks):
            scan.block(m_index, b_index, block, issuer)
        display = channels.get(DISPLAY_CHANNEL)
        # SPEC ST3: only a message whose replay blocks are all resumable can be checked.
        if display and replay_blocks and len(scan.resumable) - first_item == len(replay_blocks):
            texts = [text for text in map(_block_text, display) if text is not None]
            if not display_consistent(scan.resumable[first_item:], texts):
                mismatch = Finding(Code.DISPLAY_REPLAY_MISMATCH, m_index, 0)
                scan.located.append((m_index, 0, _RANK_DISPLAY, mismatch))
        cache_state = channels.get(CACHE_STATE_CHANNEL)
        if cache_state:
            found = cache_states.finding(m_index, cache_state)
            if found is not None:
                scan.located.append((m_index, 0, _RANK_CACHE_STATE, found))
    return scan


def _dedupe_findings(
    scan: _BlockScan, provider: str, names: ProviderNames
) -> tuple[list[_Located], int, int]:
    """SPEC P4 then D1–D3 across the file's resumable blocks, replayed to the file's provider:
    the findings, how many blocks are another issuer's, and how many are dropped as duplicates.
    """
    located: list[_Located] = []
    dropped = 0
    # SPEC P4: names map to issuers; a block whose message records another issuer would not be
    # sent, and takes no part in deduplication; every other block's issuer is the file's.
    issuer = names.issuer_of(provider)
    sent = [
        i
        for i, recorded in enumerate(scan.issuers)
        if recorded is None or names.issuer_of(recorded) == issuer
    ]
    mismatched = len(scan.resumable) - len(sent)
    items = scan.resumable if not mismatched else [scan.resumable[i] for i in sent]
    places = scan.places if not mismatched else [scan.places[i] for i in sent]
    decisions = decide_items(items, issuer)
    for (m_index, b_index), decision in zip(places, decisions, strict=True):
        if decision is DedupeDecision.KEEP:
            continue
        if decision is DedupeDecision.DROP_DUPLICATE:
            dropped += 1
            code = Code.DEDUPE_EXACT_DUPLICATE
        else:
            code = Code.DEDUPE_ID_CIPHERTEXT_CONFLICT
        located.append((m_index, b_index, _RANK_DEDUPE, Finding(code, m_index, b_index)))
    return located, mismatched, dropped


def validate_history(
    data: str | bytes,
    *,
    provider: str = "openai",
    file_mode: int | None = None,
    directory_mode: int | None = None,
    file_name: str | None = None,
    provider_names: ProviderNames = REGISTRY_ONLY,
) -> FileReport:
    """SPEC H3 and H4 for one file's contents.

    ``provider`` is the file's provider: the issuer of messages that record none, and the
    provider the history would replay to (SPEC P4, H3); ``provider_names`` extends the
    provider-name registry by which every name maps to its issuer. ``file_mode`` and
    ``directory_mode`` are the permission bits of the file and of its session directory, when
    known. A
    ``file_name`` of ``session.json`` is checked for permissions only (SPEC H1).
    """
    permissions = permission_findings(file_mode, directory_mode)
    if is_session_file(file_name):
        return FileReport(tuple(permissions), BlockCounts(), True, file_name)
    messages = read_message_channels(data, stored_texts=REPLAY_CHANNEL)
    if isinstance(messages, HistoryFileProblem):
        problem = Finding(messages.code, detail=messages.detail)
        return FileReport((problem, *permissions), BlockCounts(), False, file_name)

    scan = _scan_blocks(messages)
    duplicates, mismatched, dropped = _dedupe_findings(scan, provider, provider_names)
    located = scan.located + duplicates
    located.sort(key=lambda entry: entry[:3])
    counts = BlockCounts(len(scan.resumable), scan.legacy, scan.redacted, scan.malformed)
    return FileReport(
        (*permissions, *(entry[3] for entry in located)),
        counts,
        counts.total == counts.resumable and not (dropped or mismatched or scan.misplaced),
        file_name,
        mismatched,
    )
