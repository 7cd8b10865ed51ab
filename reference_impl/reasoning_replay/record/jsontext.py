"""SPEC E6 steps 1–5, the text rules (SPEC §3, E4, E4.1) a JSON Schema cannot see, in Python.

:func:`parse_strict_statement` is the statement: the value of a text, or the first of E6 steps
1–5 it fails. :mod:`.read` builds the reader's statement on it; the accelerated reading (the C
parser :mod:`reasoning_replay._strict`, msgspec) lives apart, in :mod:`._fast`, and must give
every text the verdict this module gives.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from reasoning_replay.diagnostics import Code

MAX_TEXT_BYTES: Final = 16 * 1024 * 1024  # SPEC E4.1
MAX_DEPTH: Final = 32  # SPEC E4.1

# A string literal (possibly unterminated) or one structural bracket; used to measure depth
# outside strings, even in malformed text, as SPEC E4.1 defines it.
_DEPTH_TOKEN: Final = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]', re.DOTALL)
_OPENERS: Final = frozenset("[{")

# CPython may refuse to convert longer integer literals (its int/str digit limit is at least
# 640); longer ones are read as the IEEE double they denote, as RFC 7493 §2.2 intends.
_MAX_INT_DIGITS: Final = 640


@dataclass(frozen=True, slots=True)
class TextRefused:
    """A text that breaks a text rule of SPEC E4; ``code`` is the first failing check of E6."""

    code: Code


def text_length_exceeds_limit(text: str | bytes) -> bool:
    """Whether the text is longer than SPEC E4.1's 16 MiB of UTF-8."""
    if isinstance(text, bytes) or len(text) * 4 <= MAX_TEXT_BYTES:
        return len(text) > MAX_TEXT_BYTES
    return len(text.encode("utf-8", "surrogatepass")) > MAX_TEXT_BYTES


def nesting_depth_exceeds(text: str, limit: int = MAX_DEPTH) -> bool:
    """Whether more than ``limit`` arrays/objects are open at one point, outside strings: the
    lexical depth SPEC E4.1 defines for every text, well-formed or not."""
    if text.count("[") + text.count("{") <= limit:  # cannot open more brackets than it has
        return False
    depth = 0
    for token in _DEPTH_TOKEN.finditer(text):
        bracket = token.group()
        if bracket in _OPENERS:
            depth += 1
            if depth > limit:
                return True
        elif bracket in "]}" and depth:
            depth -= 1
    return False


def value_depth_exceeds(value: object, limit: int = MAX_DEPTH) -> bool:
    """Whether more than ``limit`` arrays/objects nest in a parsed value (SPEC E4.1).

    Level by level, keeping only the arrays and objects of each: a loop, not a call per value.
    """
    level: list[dict[str, Any] | list[Any]] = [value] if isinstance(value, (dict, list)) else []
    for _ in range(limit):
        if not level:
            return False
        inner: list[dict[str, Any] | list[Any]] = []
        for node in level:
            for child in node.values() if isinstance(node, dict) else node:
                if isinstance(child, (dict, list)):
                    inner.append(child)
        level = inner
    return bool(level)


def parse_json_int(digits: str) -> object:
    """An integer literal as Python's ``json`` should read it (its ``parse_int``): see above."""
    return int(digits) if len(digits) <= _MAX_INT_DIGITS else float(digits)


# --- strict path -------------------------------------------------------------------------------


class _NonJsonToken(Exception):
    """``NaN``, ``Infinity`` or ``-Infinity``: Python's json accepts them, JSON does not."""


def _refuse_constant(_token: str) -> object:
    raise _NonJsonToken


def _has_surrogate(text: str) -> bool:
    if text.isascii():  # known in O(1): no need to look
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _any_string(value: object, predicate: Callable[[str], bool]) -> bool:
    """Whether ``predicate`` holds for any string or member name inside ``value``."""
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, str):
            if predicate(current):
                return True
        elif isinstance(current, dict):
            for key, member in current.items():
                if predicate(key):
                    return True
                stack.append(member)
        elif isinstance(current, (list, tuple)):  # tuples: the hook's pairs
            stack.extend(current)
    return False


def _unreadable(chars: str) -> TextRefused:
    """The code of a text Python's json cannot read: SPEC E6 steps 1–3, in order."""
    if nesting_depth_exceeds(chars):
        return TextRefused(Code.LIMIT_EXCEEDED)
    if _has_surrogate(chars):  # raw, or a bad byte turned into one
        return TextRefused(Code.JSON_INVALID_UNICODE)
    return TextRefused(Code.JSON_MALFORMED)  # a byte-order mark, bad grammar, NaN, trailing data


def parse_strict_statement(text: str | bytes) -> object | TextRefused:
    """The JSON value of ``text``, or the first text rule it breaks, in SPEC E6 order (1–5).

    The text is parsed first, and the rules the parse cannot see are checked after it, on what it
    found: that costs one pass over the text where checking each rule on the text first would
    cost three. A text Python's json refuses is examined rule by rule (:func:`_unreadable`).
    """
    if text_length_exceeds_limit(text):  # step 1, the length (SPEC E4.1)
        return TextRefused(Code.LIMIT_EXCEEDED)
    # Bad bytes become lone surrogates here, so one check serves both kinds of bad encoding.
    chars = text.decode("utf-8", "surrogateescape") if isinstance(text, bytes) else text
    duplicates: list[bool] = []
    surrogates: list[bool] = []

    def collect_members(pairs: list[tuple[str, object]]) -> dict[str, object]:
        members = dict(pairs)
        if len(members) != len(pairs):
            duplicates.append(True)
            # The dict keeps only the last duplicate; a lone surrogate in a dropped one still
            # decides the code, since E6 checks Unicode (step 4) before duplicates (step 5).
            if _any_string(pairs, _has_surrogate):
                surrogates.append(True)
        return members

    try:
        value: object = json.loads(
            chars,
            object_pairs_hook=collect_members,
            parse_constant=_refuse_constant,
            parse_int=parse_json_int,
        )
    except (json.JSONDecodeError, _NonJsonToken, RecursionError):
        return _unreadable(chars)  # json refuses a byte-order mark too
    # Step 1: every array and object of the text is in the value, unless a duplicate was dropped.
    if nesting_depth_exceeds(chars) if duplicates else value_depth_exceeds(value):
        return TextRefused(Code.LIMIT_EXCEEDED)
    # Steps 2 and 4: json read the text, so outside its strings it is ASCII syntax. Any surrogate,
    # raw or escaped, is in a string or member name of the value or of a dropped duplicate.
    if surrogates or _any_string(value, _has_surrogate):
        return TextRefused(Code.JSON_INVALID_UNICODE)
    if duplicates:
        return TextRefused(Code.JSON_DUPLICATE_MEMBER)
    return value
