"""Per-request replay telemetry (SPEC §8): structural counters, never content."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass

from .envelope import SCHEMA_VERSION


@dataclass(frozen=True, slots=True)
class ReplayTelemetry:
    """The counters of SPEC T1, named as there."""

    reasoning_replay_item_count: int = 0
    reasoning_replay_encrypted_bytes: int = 0
    reasoning_replay_summary_parts: int = 0
    reasoning_replay_summary_bytes: int = 0
    reasoning_replay_content_parts: int = 0
    reasoning_replay_content_bytes: int = 0
    replay_deduplicated_exact_count: int = 0
    replay_id_ciphertext_conflict_count: int = 0
    canonical_schema_version: int = SCHEMA_VERSION

    def to_json(self) -> dict[str, int]:
        return asdict(self)


def utf8_bytes(text: str) -> bytes:
    """UTF-8 of ``text``, a lone surrogate counting as U+FFFD (SPEC §1.1)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= char <= "\udfff" else char for char in text).encode(
            "utf-8"
        )


def utf8_length(value: object) -> int:
    """UTF-8 byte length of a string; 0 for anything else (SPEC T1, last paragraph)."""
    return len(utf8_bytes(value)) if isinstance(value, str) else 0


def part_totals(parts: object) -> tuple[int, int]:
    """(number of parts, UTF-8 bytes of their string ``text``s) of a summary or content array."""
    if not isinstance(parts, list):
        return 0, 0
    return len(parts), sum(utf8_length(p.get("text")) for p in parts if isinstance(p, Mapping))


def replay_telemetry(
    request_input: Iterable[object],
    *,
    deduplicated_exact: int = 0,
    id_ciphertext_conflicts: int = 0,
) -> ReplayTelemetry:
    """SPEC T1 over the reasoning items of a request's ``input`` array."""
    items = encrypted = summary_parts = summary_bytes = content_parts = content_bytes = 0
    for element in request_input:
        if not isinstance(element, Mapping) or element.get("type") != "reasoning":
            continue
        items += 1
        encrypted += utf8_length(element.get("encrypted_content"))
        parts, size = part_totals(element.get("summary"))
        summary_parts += parts
        summary_bytes += size
        parts, size = part_totals(element.get("content"))
        content_parts += parts
        content_bytes += size
    return ReplayTelemetry(
        reasoning_replay_item_count=items,
        reasoning_replay_encrypted_bytes=encrypted,
        reasoning_replay_summary_parts=summary_parts,
        reasoning_replay_summary_bytes=summary_bytes,
        reasoning_replay_content_parts=content_parts,
        reasoning_replay_content_bytes=content_bytes,
        replay_deduplicated_exact_count=deduplicated_exact,
        replay_id_ciphertext_conflict_count=id_ciphertext_conflicts,
    )
