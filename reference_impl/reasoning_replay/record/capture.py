"""Capture (SPEC §4): a completed provider output item in, a canonical envelope out, or a code."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final, Protocol, runtime_checkable

from reasoning_replay.diagnostics import Code

from .envelope import CONTENT_PART_TYPE, SUMMARY_PART_TYPE, ReasoningReplayItem
from .writer import serialize_reasoning_replay_envelope


class CaptureSource(StrEnum):
    """Where an output item was taken from (SPEC C1)."""

    OUTPUT_ITEM_DONE = "response.output_item.done"
    RESPONSE_COMPLETED = "response.completed"
    RESPONSE_INCOMPLETE = "response.incomplete"
    OUTPUT_ITEM_ADDED = "response.output_item.added"


FINAL_SOURCES: Final = frozenset(
    (
        CaptureSource.OUTPUT_ITEM_DONE,
        CaptureSource.RESPONSE_COMPLETED,
        CaptureSource.RESPONSE_INCOMPLETE,
    )
)
CAPTURABLE_STATUSES: Final = (None, "completed")


@runtime_checkable
class SupportsModelDump(Protocol):
    """A provider SDK object: anything pydantic-like, so the SDK itself is never imported."""

    def model_dump(self, *, mode: str) -> Any: ...


@dataclass(frozen=True, slots=True)
class CaptureResult:
    """The outcome of capturing one output item: its envelope text and item, or a code."""

    envelope_text: str | None
    item: ReasoningReplayItem | None
    code: Code | None

    @property
    def captured(self) -> bool:
        return self.envelope_text is not None


def _refused(code: Code) -> CaptureResult:
    return CaptureResult(None, None, code)


def _is_scalar_string(value: object) -> bool:
    """A string of Unicode scalar values: one that UTF-8 can encode (SPEC C2, last bullet)."""
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _part_texts(value: object, part_type: str) -> tuple[str, ...] | None:
    """SPEC C2: the texts of parts of ``part_type``; extra part members are dropped."""
    if not isinstance(value, list):
        return None
    texts: list[str] = []
    for part in value:
        if not isinstance(part, Mapping) or part.get("type") != part_type:
            return None
        text = part.get("text")
        if not isinstance(text, str) or not _is_scalar_string(text):
            return None
        texts.append(text)
    return tuple(texts)


def _non_empty_string(value: object) -> str | None:
    return value if _is_scalar_string(value) and value else None  # type: ignore[return-value]


def canonicalize_completed_reasoning_output_item(
    output_item: object, *, source: str = CaptureSource.RESPONSE_COMPLETED
) -> CaptureResult:
    """Capture one reasoning output item taken from ``source`` (SPEC C1–C4).

    ``output_item`` is a plain JSON object or an SDK object with ``model_dump(mode="json")``.
    Only the allowlisted members are copied; the result is checked by the reader before it is
    returned. Never raises on data.
    """
    if source not in CaptureSource.__members__.values():
        return _refused(Code.CAPTURE_SOURCE_UNKNOWN)
    if source not in FINAL_SOURCES:
        return _refused(Code.CAPTURE_NOT_COMPLETED)
    if isinstance(output_item, SupportsModelDump) and not isinstance(output_item, Mapping):
        try:
            output_item = output_item.model_dump(mode="json")
        except Exception:  # a broken SDK object is data we cannot read, not a crash
            return _refused(Code.CAPTURE_NOT_REASONING)
    if not isinstance(output_item, Mapping) or output_item.get("type") != "reasoning":
        return _refused(Code.CAPTURE_NOT_REASONING)
    if output_item.get("status") not in CAPTURABLE_STATUSES:
        return _refused(Code.CAPTURE_NOT_COMPLETED)
    item_id = _non_empty_string(output_item.get("id"))
    if item_id is None:
        return _refused(Code.ITEM_ID_INVALID)
    summary = _part_texts(output_item.get("summary"), SUMMARY_PART_TYPE)
    if summary is None:
        return _refused(Code.ITEM_SUMMARY_INVALID)
    ciphertext = _non_empty_string(output_item.get("encrypted_content"))
    if ciphertext is None:
        return _refused(Code.ITEM_CIPHERTEXT_INVALID)
    raw_content = output_item.get("content")
    content = None
    if raw_content is not None and raw_content != []:  # SPEC C2: null and [] are omitted
        content = _part_texts(raw_content, CONTENT_PART_TYPE)
        if content is None:
            return _refused(Code.ITEM_CONTENT_INVALID)
    item = ReasoningReplayItem(item_id, summary, ciphertext, content)
    return CaptureResult(serialize_reasoning_replay_envelope(item), item, None)
