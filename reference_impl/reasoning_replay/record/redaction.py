"""Redaction for diagnostics and logs (SPEC §7): structure stays visible, secrets do not."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from typing import Any, Final

from .envelope import ReasoningReplayItem
from .telemetry import part_totals, utf8_bytes, utf8_length

# SPEC R2: a name is sensitive when its normal form (ASCII lowercase, without "-" and "_")
# contains one of these fragments or ends with one of these suffixes.
SENSITIVE_FRAGMENTS: Final = (
    "apikey",
    "accesskey",
    "secret",
    "password",
    "passwd",
    "privatekey",
    "authorization",
    "credential",
    "cookie",
    "encryptedcontent",
)
SENSITIVE_SUFFIXES: Final = ("token", "auth")
CIPHERTEXT_NORMAL_NAME: Final = "encryptedcontent"  # SPEC R2: the measured replacement

DIAGNOSTIC_VIEW_MEMBERS: Final = (
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
_VIEW_NAMES: Final = frozenset(DIAGNOSTIC_VIEW_MEMBERS)
_CIPHERTEXT_REPLACEMENT_NAMES: Final = frozenset(("redacted", "bytes", "sha256"))
MAX_REDACTION_DEPTH: Final = 256  # SPEC R2
NESTING_REPLACEMENT: Final = "nesting"  # SPEC R2: {"redacted": "nesting"}

_NORMAL: Final = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz", "-_")
_HEX: Final = frozenset("0123456789abcdef")


def normal_name(name: str) -> str:
    """SPEC R2: a member name in ASCII lowercase without ``-`` and ``_``."""
    return name.translate(_NORMAL)


def is_sensitive_name(name: str) -> bool:
    """SPEC R2: whether a member's value is replaced."""
    normal = normal_name(name)
    return normal.endswith(SENSITIVE_SUFFIXES) or any(f in normal for f in SENSITIVE_FRAGMENTS)


def sha256_hex(value: str) -> str:
    """Lowercase hex SHA-256 of a string's UTF-8 (SPEC R1; lone surrogates as U+FFFD, §1.1)."""
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
        "encrypted_content_sha256": sha256_hex(ciphertext) if isinstance(ciphertext, str) else None,
        "summary_parts": summary_parts,
        "summary_bytes": summary_bytes,
        "content_parts": content_parts,
        "content_bytes": content_bytes,
    }


def is_count(value: object) -> bool:
    """SPEC R2: a non-negative whole number (``2.0`` too: JSON does not tell them apart)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return value >= 0 and (isinstance(value, int) or value.is_integer())


def is_sha256_hex(value: object) -> bool:
    """SPEC R2: 64 lowercase hexadecimal digits."""
    return isinstance(value, str) and len(value) == 64 and _HEX.issuperset(value)


def is_diagnostic_view(value: object) -> bool:
    """SPEC R2 rule 1: an object with exactly the members of a view (R1), each of its form."""
    if not isinstance(value, Mapping) or value.keys() != _VIEW_NAMES:
        return False
    fields = value["fields"]
    return bool(
        value["type"] == "reasoning"
        and (value["id"] is None or isinstance(value["id"], str))
        and isinstance(fields, list)
        and all(isinstance(name, str) for name in fields)
        and (value["encrypted_content_bytes"] is None or is_count(value["encrypted_content_bytes"]))
        and (
            value["encrypted_content_sha256"] is None
            or is_sha256_hex(value["encrypted_content_sha256"])
        )
        and all(is_count(value[name]) for name in DIAGNOSTIC_VIEW_MEMBERS[5:])
    )


def is_replacement(value: object, name: str) -> bool:
    """SPEC R2: whether ``value`` already is the replacement of member ``name``'s value."""
    if not isinstance(value, Mapping):
        return False
    if value.keys() == {"redacted"}:
        return bool(value["redacted"] == name)
    return (
        value.keys() == _CIPHERTEXT_REPLACEMENT_NAMES
        and value["redacted"] == "encrypted_content"
        and is_count(value["bytes"])
        and is_sha256_hex(value["sha256"])
    )


def replacement(name: str, value: object, text: Callable[[str], str]) -> object:
    """SPEC R2: the value that replaces member ``name``'s ``value`` (strings kept through
    ``text``)."""
    if is_replacement(value, name):
        assert isinstance(value, Mapping)
        return {member: text(v) if isinstance(v, str) else v for member, v in value.items()}
    if normal_name(name) == CIPHERTEXT_NORMAL_NAME and isinstance(value, str):
        return {
            "redacted": "encrypted_content",
            "bytes": utf8_length(value),
            "sha256": sha256_hex(value),
        }
    return {"redacted": text(name)}


def _keep(text: str) -> str:
    return text


def redact(value: object) -> object:
    """SPEC R2: the redaction of any JSON value, deterministic, member order kept."""
    return redact_value(value, _keep)


def redact_value(value: object, text: Callable[[str], str], depth: int = 0) -> object:
    """SPEC R2 with every string it keeps (member names too) passed through ``text``.

    ``redact`` passes strings through unchanged; a redacted export passes them through the text
    redaction of SPEC H6. ``depth`` counts the arrays and objects around ``value``.
    """
    if isinstance(value, str):
        return text(value)
    if not isinstance(value, Mapping | list | tuple):
        return value
    if depth >= MAX_REDACTION_DEPTH:  # SPEC R2: bounded, so no value exhausts the stack
        return {"redacted": NESTING_REPLACEMENT}
    if isinstance(value, list | tuple):
        return [redact_value(element, text, depth + 1) for element in value]
    if value.get("type") == "reasoning":
        view = (
            value if is_diagnostic_view(value) else redact_reasoning_replay_for_diagnostics(value)
        )
        # A view is left as it is: only its strings go through ``text``.
        return {
            name: [text(field) for field in member]
            if name == "fields"
            else text(member)
            if isinstance(member, str)
            else member
            for name, member in view.items()
        }
    out: dict[str, object] = {}
    for name, member in value.items():
        # The name as written out decides (SPEC H6: a redacted name is the member's name).
        written = text(name)
        sensitive = is_sensitive_name(written)
        out[written] = (
            replacement(written, member, text)
            if sensitive
            else redact_value(member, text, depth + 1)
        )
    return out
