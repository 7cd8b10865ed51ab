"""The lenient reading of JSON inside texts (SPEC H8), with the span of every value.

The leak scanner and the export's text redaction read texts the same way, so that what one finds
the other removes (SPEC H6, H8). The reading is RFC 8259's grammar with what a leak scanner must
not refuse: duplicate member names (every member is kept, in text order), escapes of lone
surrogates, ``NaN``, ``Infinity`` and ``-Infinity``, and any depth. It is iterative, so no text
can exhaust the stack, and it keeps where each value, and each member name, starts and ends, so
that redaction can replace a value and keep every other character of the text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Final, TypeAlias

_SPACE: Final = re.compile(r"[ \t\n\r]*")


def _skip_space(text: str, index: int) -> int:
    """The index of the first character at or after ``index`` that is not JSON whitespace."""
    match = _SPACE.match(text, index)
    return index if match is None else match.end()


# Unrolled ("normal* (escape normal*)*"), so that a failing match cannot backtrack badly.
_STRING: Final = re.compile(
    r'"[^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*)*"'
)
_NUMBER: Final = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_LITERALS: Final = ("true", "false", "null", "NaN", "Infinity", "-Infinity")


@dataclass(frozen=True, slots=True)
class JString:
    """A string value: ``text[start:end]`` is its literal, quotes included."""

    start: int
    end: int
    value: str


@dataclass(frozen=True, slots=True)
class JScalar:
    """A number or a literal (``true``, ``false``, ``null``, ``NaN``, ``Infinity``)."""

    start: int
    end: int
    lexeme: str


@dataclass(frozen=True, slots=True)
class JMember:
    """One member of an object: its name (a string literal) and its value."""

    name: JString
    value: JNode


@dataclass(slots=True)
class JObject:
    """An object: its members in text order, duplicates kept."""

    start: int
    end: int
    members: list[JMember]

    def last(self, name: str) -> JNode | None:
        """The value of the last member named ``name`` (as JSON parsers keep it), or None."""
        for member in reversed(self.members):
            if member.name.value == name:
                return member.value
        return None


@dataclass(slots=True)
class JArray:
    """An array: its elements in order."""

    start: int
    end: int
    elements: list[JNode]


JNode: TypeAlias = JObject | JArray | JString | JScalar


def _string_at(text: str, index: int) -> JString | None:
    match = _STRING.match(text, index)
    if match is None:
        return None
    literal = match.group()
    # The standard parser decodes escapes exactly as RFC 8259 says, lone surrogates included.
    value = json.loads(literal) if "\\" in literal else literal[1:-1]
    return JString(index, match.end(), value)


def _scalar_at(text: str, index: int) -> JScalar | None:
    for literal in _LITERALS:
        if text.startswith(literal, index):
            return JScalar(index, index + len(literal), literal)
    match = _NUMBER.match(text, index)
    if match is None:
        return None
    return JScalar(index, match.end(), match.group())


def _name_and_colon(text: str, index: int) -> tuple[JString, int] | None:
    """A member name, the colon after it, and the index of the value that follows."""
    name = _string_at(text, index)
    if name is None:
        return None
    index = _skip_space(text, name.end)
    if not text.startswith(":", index):
        return None
    return name, _skip_space(text, index + 1)


def parse_at(text: str, index: int) -> tuple[JNode, int] | None:
    """The JSON value starting exactly at ``index`` and the index after it, or None."""
    stack: list[JObject | JArray] = []
    names: list[JString] = []  # the pending member name of each open object
    while True:
        node: JNode | None
        char = text[index : index + 1]
        if char in ("{", "["):
            after = _skip_space(text, index + 1)
            closing = "}" if char == "{" else "]"
            container: JObject | JArray = (
                JObject(index, -1, []) if char == "{" else JArray(index, -1, [])
            )
            if text.startswith(closing, after):
                container.end = after + 1
                node, index = container, after + 1
            else:
                stack.append(container)
                if isinstance(container, JObject):
                    named = _name_and_colon(text, after)
                    if named is None:
                        return None
                    names.append(named[0])
                    index = named[1]
                else:
                    index = after
                continue
        else:
            node = _string_at(text, index) if char == '"' else _scalar_at(text, index)
            if node is None:
                return None
            index = node.end
        # A value is complete: add it to the open container, closing containers as they end.
        while stack:
            top = stack[-1]
            if isinstance(top, JObject):
                top.members.append(JMember(names.pop(), node))
            else:
                top.elements.append(node)
            index = _skip_space(text, index)
            char = text[index : index + 1]
            if char == ",":
                index = _skip_space(text, index + 1)
                if isinstance(top, JObject):
                    named = _name_and_colon(text, index)
                    if named is None:
                        return None
                    names.append(named[0])
                    index = named[1]
                break
            if char != ("}" if isinstance(top, JObject) else "]"):
                return None
            stack.pop()
            top.end = index + 1
            node, index = top, index + 1
        else:
            return node, index


def parse_whole(text: str) -> JNode | None:
    """The value of a text that is exactly one JSON value between optional whitespace."""
    start = _skip_space(text, 0)
    parsed = parse_at(text, start)
    if parsed is None:
        return None
    node, end = parsed
    return node if _skip_space(text, end) == len(text) else None
