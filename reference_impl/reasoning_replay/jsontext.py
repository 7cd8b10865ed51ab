"""Strict I-JSON text reading (SPEC §3, E4 and E6 steps 1–5): the rules a JSON Schema cannot see.

Two ways to read a text, with the same verdicts:

* :func:`parse_fast` with :func:`minimal_length` is the fast path. orjson already refuses bad
  UTF-8, byte-order marks, ``NaN``/``Infinity``, trailing data and lone surrogates; what it
  hides is a duplicate member (it keeps the last). A text exactly as long as the shortest
  serialization of the value it parsed to has no room for one, nor for whitespace. Canonical
  envelopes (SPEC C3) always pass this proof; the reader does the envelope-specific arithmetic.
* :func:`parse_strict` is the exhaustive path for everything else. It reports the first failing
  check in the order of SPEC E6 steps 1–5.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import orjson

from .diagnostics import Code

MAX_TEXT_BYTES: Final = 16 * 1024 * 1024  # SPEC E4.1
MAX_DEPTH: Final = 32  # SPEC E4.1

# A string literal (possibly unterminated) or one structural bracket; used to measure depth
# outside strings, even in malformed text, as SPEC E4.1 defines it.
_DEPTH_TOKEN: Final = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]', re.DOTALL)
_OPENERS: Final = frozenset("[{")

# CPython may refuse to convert longer integer literals (its int/str digit limit is at least
# 640); longer ones are read as the IEEE double they denote, as RFC 7493 §2.2 intends.
_MAX_INT_DIGITS: Final = 640


UNREAD: Final = object()  # parse_fast's answer when orjson refuses a text


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
    """Whether more than ``limit`` arrays/objects are open at one point, outside strings."""
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


# --- fast path ---------------------------------------------------------------------------------


def parse_fast(text: str | bytes) -> object:
    """The value of an I-JSON text as orjson reads it, or :data:`UNREAD` if orjson refuses it.

    orjson refuses bad UTF-8, byte-order marks, ``NaN``/``Infinity``, trailing data and lone
    surrogates, but it keeps the last of duplicate members silently: a value from here is trusted
    only together with a length proof (:func:`minimal_length`).
    """
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return UNREAD


def string_length(text: str, utf8: bool) -> int:
    """A lower bound on the length of ``text`` as a JSON string literal, quotes included.

    Exact for strings whose only escapes are ``\\"``, ``\\\\`` and ``\\n``; other escapes make the
    real literal longer, so such texts simply fail the compactness proof and go the strict way.
    """
    length = len(text) if not utf8 or text.isascii() else len(text.encode("utf-8"))
    return length + 2 + text.count('"') + text.count("\\") + text.count("\n")


def minimal_length(value: object, utf8: bool, depth_left: int) -> int:
    """A lower bound on the length of any JSON text of ``value``; -1 past the depth limit.

    Lengths are in UTF-8 bytes when ``utf8``, else in code points. A text exactly this long
    cannot contain whitespace, a longer-than-needed escape, or a member that a last-wins parser
    dropped: so it has no duplicate member.
    """
    if isinstance(value, str):
        return string_length(value, utf8)
    if isinstance(value, dict):
        if depth_left == 0:
            return -1
        total = 2 + len(value) + max(len(value) - 1, 0)  # braces, colons, commas
        for key, member in value.items():
            inner = minimal_length(member, utf8, depth_left - 1)
            if inner < 0:
                return -1
            total += string_length(key, utf8) + inner
        return total
    if isinstance(value, list):
        if depth_left == 0:
            return -1
        total = 2 + max(len(value) - 1, 0)
        for element in value:
            inner = minimal_length(element, utf8, depth_left - 1)
            if inner < 0:
                return -1
            total += inner
        return total
    if value is True or value is None:
        return 4
    if value is False:
        return 5
    if isinstance(value, int):
        return len(str(value))
    return 1  # a float: at least one digit


# --- strict path -------------------------------------------------------------------------------


class _NonJsonToken(Exception):
    """``NaN``, ``Infinity`` or ``-Infinity``: Python's json accepts them, JSON does not."""


def _refuse_constant(_token: str) -> object:
    raise _NonJsonToken


def _parse_int(digits: str) -> object:
    return int(digits) if len(digits) <= _MAX_INT_DIGITS else float(digits)


def _has_surrogate(text: str) -> bool:
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
        elif isinstance(current, list):
            stack.extend(current)
    return False


def parse_strict(text: str | bytes) -> object | TextRefused:
    """The JSON value of ``text``, or the first text rule it breaks, in SPEC E6 order (1–5)."""
    if text_length_exceeds_limit(text):
        return TextRefused(Code.LIMIT_EXCEEDED)
    # Bad bytes become lone surrogates here, so one scan serves both depth and encoding checks.
    chars = text.decode("utf-8", "surrogateescape") if isinstance(text, bytes) else text
    if nesting_depth_exceeds(chars):
        return TextRefused(Code.LIMIT_EXCEEDED)
    if _has_surrogate(chars):
        return TextRefused(Code.JSON_INVALID_UNICODE)
    if chars.startswith("\ufeff"):
        return TextRefused(Code.JSON_MALFORMED)
    duplicates: list[bool] = []

    def collect_members(pairs: list[tuple[str, object]]) -> dict[str, object]:
        members = dict(pairs)
        if len(members) != len(pairs):
            duplicates.append(True)
        return members

    try:
        value: object = json.loads(
            chars,
            object_pairs_hook=collect_members,
            parse_constant=_refuse_constant,
            parse_int=_parse_int,
        )
    except (json.JSONDecodeError, _NonJsonToken):
        return TextRefused(Code.JSON_MALFORMED)
    if _any_string(value, _has_surrogate):
        return TextRefused(Code.JSON_INVALID_UNICODE)
    if duplicates:
        return TextRefused(Code.JSON_DUPLICATE_MEMBER)
    return value
