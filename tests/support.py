"""Helpers several test modules share: the golden SPEC §15 example and the strict reading."""

from __future__ import annotations

from typing import Any

from reasoning_replay import Code, ReasoningReplayItem
from reasoning_replay.envelope import check_envelope_value
from reasoning_replay.jsontext import TextRefused, parse_strict

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
    """The verdict of the exhaustive path alone: the yardstick for every faster one."""
    parsed = parse_strict(text)
    if isinstance(parsed, TextRefused):
        return parsed.code, None
    checked = check_envelope_value(parsed)
    if isinstance(checked, Code):
        return checked, None
    return None, checked
