"""Exact JSON comparison of outputs (SPEC §13), with the location of the first difference.

Outputs are compared as JSON values: object member order is ignored, array order matters,
numbers compare by value (``1 == 1.0``) but booleans are never numbers, and no member may be
missing or extra. Strict by default on purpose: a loose comparison lets broken implementations
pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final


class _Absent:
    """The value at a pointer where a member does not exist."""

    _instance: _Absent | None = None

    def __new__(cls) -> _Absent:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "<absent>"


ABSENT: Final = _Absent()


@dataclass(frozen=True, slots=True)
class Mismatch:
    """The first difference: a JSON pointer into the compared values, and both sides there."""

    pointer: str
    expected: Any  # ABSENT when the member should not exist
    actual: Any  # ABSENT when the member is missing
    reason: str

    def describe(self) -> str:
        return f"at {self.pointer or '/'} ({self.reason})"


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _token(key: str | int) -> str:
    return "/" + str(key).replace("~", "~0").replace("/", "~1")


def first_difference(expected: Any, actual: Any, pointer: str = "") -> Mismatch | None:
    """``None`` when equal as JSON values, else the first difference in document order
    (expected's member order, then members only ``actual`` has)."""
    ek, ak = _kind(expected), _kind(actual)
    if ek != ak:
        return Mismatch(pointer, expected, actual, f"expected {ek}, got {ak}")
    if ek == "object":
        for key, value in expected.items():
            if key not in actual:
                return Mismatch(pointer + _token(key), value, ABSENT, "member missing")
            found = first_difference(value, actual[key], pointer + _token(key))
            if found is not None:
                return found
        for key, value in actual.items():
            if key not in expected:
                return Mismatch(pointer + _token(key), ABSENT, value, "unexpected member")
        return None
    if ek == "array":
        for i, (e, a) in enumerate(zip(expected, actual, strict=False)):
            found = first_difference(e, a, pointer + _token(i))
            if found is not None:
                return found
        if len(expected) != len(actual):
            i = min(len(expected), len(actual))
            e_item = expected[i] if i < len(expected) else ABSENT
            a_item = actual[i] if i < len(actual) else ABSENT
            reason = f"array has {len(actual)} items, expected {len(expected)}"
            return Mismatch(pointer + _token(i), e_item, a_item, reason)
        return None
    # numbers: int/float compare by value in Python exactly as JSON numbers should
    if expected != actual:
        return Mismatch(pointer, expected, actual, "value differs")
    return None


def json_equal(expected: Any, actual: Any) -> bool:
    return first_difference(expected, actual) is None
