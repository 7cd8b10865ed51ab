"""JSON text in and out (PROTOCOL.md), fast where possible and exact everywhere.

msgspec is fast but refuses lone surrogates (which a JSON text may escape, and vectors do carry),
so every function falls back to the standard library rather than fail. NaN and Infinity are not
JSON and are refused in both directions.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

import msgspec

_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")


class JSONTextError(ValueError):
    """The bytes are not one JSON text."""


def _refuse_constant(name: str) -> Any:
    raise JSONTextError(f"{name} is not JSON")


def loads(data: bytes | str) -> Any:
    """Parse one JSON text; raises :class:`JSONTextError`."""
    try:
        return msgspec.json.decode(data)
    except (msgspec.DecodeError, UnicodeEncodeError) as exc:
        # Lone surrogates, escaped or raw, are refused by msgspec: retry with the stdlib parser.
        try:
            return json.loads(data, parse_constant=_refuse_constant)
        except (ValueError, RecursionError) as exc2:
            raise JSONTextError(str(exc2)) from exc
    except RecursionError as exc:  # pragma: no cover - msgspec limits depth itself
        raise JSONTextError("nesting too deep") from exc


def dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON text (no newline)."""
    try:
        return msgspec.json.encode(value)
    except (TypeError, UnicodeEncodeError, OverflowError, ValueError):
        # Lone surrogates and NaN land here; ASCII escapes keep the text valid UTF-8.
        return json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode()


def dumps_str(value: Any) -> str:
    return dumps(value).decode("utf-8", "replace")


def dumps_pretty(value: Any) -> str:
    """Indented text for humans and committed files; keys keep their order."""
    text = json.dumps(value, ensure_ascii=False, indent=2, allow_nan=False)
    # Lone surrogates (vectors carry some, SPEC U1) can only be written as escapes; outside
    # strings a JSON text has none, so escaping each one in place keeps every other character.
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
