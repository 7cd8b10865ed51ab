"""Redaction for diagnostics and logs (SPEC §7): structure stays visible, secrets do not."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, Final

from .envelope import ReasoningReplayItem
from .telemetry import part_totals, utf8_bytes, utf8_length

# SPEC R2: matched after ASCII lowercasing, as whole names, never as substrings.
SENSITIVE_NAMES: Final = frozenset(
    (
        "encrypted_content",
        "api_key",
        "authorization",
        "password",
        "secret",
        "client_secret",
        "access_token",
        "refresh_token",
        "id_token",
        "private_key",
    )
)


DIAGNOSTIC_VIEW_MEMBERS: Final = frozenset(
    (
        "type",
        "id",
        "fields",
        "encrypted_content_bytes",
        "encrypted_content_sha256",
        "summary_parts",
        "summary_bytes",
        "content_parts",
        "content_bytes",
    )
)


REPLACEMENT_MEMBERS: Final = frozenset(("redacted",))
CIPHERTEXT_REPLACEMENT_MEMBERS: Final = frozenset(("redacted", "bytes", "sha256"))


def _sha256(value: str) -> str:
    return hashlib.sha256(utf8_bytes(value)).hexdigest()


def redact_reasoning_replay_for_diagnostics(
    item: ReasoningReplayItem | Mapping[str, Any],
) -> dict[str, Any]:
    """The diagnostic view of a reasoning item (SPEC R1), canonical or not."""
    raw = item.to_provider_input() if isinstance(item, ReasoningReplayItem) else item
    ciphertext = raw.get("encrypted_content")
    summary_parts, summary_bytes = part_totals(raw.get("summary"))
    content_parts, content_bytes = part_totals(raw.get("content"))
    item_id = raw.get("id")
    return {
        "type": "reasoning",
        "id": item_id if isinstance(item_id, str) else None,
        "fields": sorted(raw),
        "encrypted_content_bytes": utf8_length(ciphertext) if isinstance(ciphertext, str) else None,
        "encrypted_content_sha256": _sha256(ciphertext) if isinstance(ciphertext, str) else None,
        "summary_parts": summary_parts,
        "summary_bytes": summary_bytes,
        "content_parts": content_parts,
        "content_bytes": content_bytes,
    }


def is_replacement(value: object) -> bool:
    """Whether ``value`` is already a replacement object of SPEC R2 (so redact is idempotent)."""
    return (
        isinstance(value, Mapping)
        and isinstance(value.get("redacted"), str)
        and value.keys() in (REPLACEMENT_MEMBERS, CIPHERTEXT_REPLACEMENT_MEMBERS)
    )


def _replacement(name: str, value: object) -> object:
    if is_replacement(value):
        return value
    if _ascii_lower(name) == "encrypted_content" and isinstance(value, str):
        return {
            "redacted": "encrypted_content",
            "bytes": utf8_length(value),
            "sha256": _sha256(value),
        }
    return {"redacted": name}


_ASCII_LOWER: Final = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _ascii_lower(name: str) -> str:
    return name.translate(_ASCII_LOWER)


def redact(value: object) -> object:
    """SPEC R2: the redaction of any JSON value, deterministic, member order kept."""
    if isinstance(value, Mapping):
        # A diagnostic view is already redacted; leaving it alone makes redact idempotent.
        if value.get("type") == "reasoning" and value.keys() != DIAGNOSTIC_VIEW_MEMBERS:
            return redact_reasoning_replay_for_diagnostics(value)
        return {
            name: _replacement(name, member)
            if _ascii_lower(name) in SENSITIVE_NAMES
            else redact(member)
            for name, member in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(element) for element in value]
    return value
