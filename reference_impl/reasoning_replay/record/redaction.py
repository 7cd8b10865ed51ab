"""Redaction for diagnostics and logs (SPEC §7): structure stays visible, secrets do not."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from typing import Any, Final

from .envelope import ReasoningReplayItem
from .telemetry import part_totals, utf8_bytes, utf8_length

# SPEC R2: a name is sensitive when its normal form (ASCII letters lowercased, every character
# that is not an ASCII letter or digit removed) contains one of these fragments.
SENSITIVE_FRAGMENTS: Final = (
    "token",
    "secret",
    "password",
    "passwd",
    "auth",
    "privatekey",
    "apikey",
    "accesskey",
    "credential",
    "cookie",
    "encryptedcontent",
)
# SPEC R2: the members of a name/value pair (a HAR header, a tag): normal forms.
PAIR_NAME_MEMBERS: Final = frozenset(("name", "key"))
PAIR_VALUE_MEMBER: Final = "value"
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

_NOT_ALNUM: Final = re.compile(r"[^a-z0-9]+")
_LOWER: Final = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_HEX: Final = frozenset("0123456789abcdef")


def normal_name(name: str) -> str:
    """SPEC R2: ASCII letters lowercased, every character that is not an ASCII letter or digit
    removed (``X-Api.Key`` → ``xapikey``; a non-ASCII letter is removed, never folded)."""
    return _NOT_ALNUM.sub("", name.translate(_LOWER))


def is_sensitive_name(name: str) -> bool:
    """SPEC R2: whether a member's value is replaced."""
    normal = normal_name(name)
    return any(fragment in normal for fragment in SENSITIVE_FRAGMENTS)


def pair_name(value: Mapping[str, object], text: Callable[[str], str]) -> str | None:
    """SPEC R2: the sensitive name a name/value pair names (``{"name": "Authorization", "value":
    ...}``), as written out through ``text``, or None.

    A pair is an object with a member whose normal form is ``name`` or ``key`` and whose value is
    a string that is a sensitive name; the last such member names the pair.
    """
    named = None
    for member, held in value.items():
        if normal_name(text(member)) in PAIR_NAME_MEMBERS and isinstance(held, str):
            written = text(held)
            named = written if is_sensitive_name(written) else named
    return named


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


def redact_structural(value: object) -> object:
    """SPEC R2 as stated: the structural redaction of any JSON value (the ``redact`` operation of
    the vectors), deterministic, member order kept, every string kept as it is.

    Strings are not read: a JSON text, a header line or a ciphertext held in a string stays in
    it. For anything people will read, use :func:`reasoning_replay.redact`, which also redacts
    every string as a text (SPEC H7).
    """
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
    paired = pair_name(value, text)
    for name, member in value.items():
        # The name as written out decides (SPEC H6: a redacted name is the member's name).
        written = text(name)
        if is_sensitive_name(written):
            out[written] = replacement(written, member, text)
        elif paired is not None and normal_name(written) == PAIR_VALUE_MEMBER:
            out[written] = replacement(paired, member, text)  # SPEC R2: a name/value pair
        else:
            out[written] = redact_value(member, text, depth + 1)
    return out
