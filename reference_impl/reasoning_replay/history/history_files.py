"""Stored history files (SPEC H1): a file's bytes or text in, typed messages or one finding out.

A history file is a UTF-8 JSON file whose top-level object has ``messages``, an array of messages
in fast-agent's saved-history shape. This module is strict about the JSON text (one value every
parser reads alike: no byte-order mark, no ``NaN``, no member named twice in one object, SPEC H1)
and about the members H1 names, and lenient about every other member, which it ignores. It never
raises on data: a file that is not UTF-8 is ``history_unreadable``, one that is not such a JSON
text or not of that shape ``history_malformed`` (SPEC H3, E4.2 applied to files).

Three readings with one verdict, as in the reader. The fastest, :mod:`reasoning_replay._history`
(C, where built), reads the file in one pass and makes only what a message's role, channels and
provider hold, passing over everything else while it checks it (grammar, UTF-8, no member named
twice); the next parses the whole file in C (:mod:`reasoning_replay._strict`, which notes a member
named twice as it goes) and decides the files it reads whole: the value, or a duplicate member.
Any other file (an escaped lone surrogate, bad UTF-8, a byte-order mark, bad grammar, nesting
deeper than they read, or no C parser built) is read the exhaustive way: :mod:`json` with a hook
that refuses a member named twice. An escaped lone surrogate is JSON every parser reads alike, so
the file is read; the block that then holds one gets its own verdict from the reader,
``json_invalid_unicode``. The exhaustive reading decides every file the fast ones leave, and
tests/test_history_accelerator.py, tests/test_validation.py and tools/fuzz.py compare the C
readings with it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final, TypeAlias, cast

from reasoning_replay._accelerators import load_accelerator
from reasoning_replay.diagnostics import Code
from reasoning_replay.record.history import HistoryMessage
from reasoning_replay.record.jsontext import parse_json_int

ROLES: Final = frozenset(("user", "assistant"))  # SPEC H1
# SPEC H1: members that, when present, are objects. An explicit ``null`` counts as absent (H1):
# pydantic-style dumps write it.
_OBJECT_MEMBERS: Final = ("tool_calls", "tool_results", "channels")

# The C parser of the reader (SPEC E6 steps 1-5), asked for a depth no real history reaches; a
# deeper file is read the exhaustive way, which decides it alike. Looked up at every call, so
# that tests can compare the two readings.
_StrictParse = Callable[[str | bytes, int], tuple[str | None, object] | None]
_strict_parse = cast("_StrictParse | None", load_accelerator("_strict", "parse"))
_ACCELERATED_DEPTH: Final = 512
_DUPLICATE: Final = "json_duplicate_member"  # what the C parser says of a member named twice

# One message of SPEC H1 as a validator reads it: its role, every one of its channels (name →
# blocks) and the provider it records (SPEC P4), if any. A plain tuple, not a
# :class:`HistoryMessage`: a validator makes one per message of every file it reads, and a tuple
# costs a fraction of a frozen dataclass.
MessageChannels: TypeAlias = tuple[str, Mapping[str, list[Any]], str | None]
_NO_CHANNELS: Final[Mapping[str, list[Any]]] = MappingProxyType({})  # absent or null (H1)


@dataclass(frozen=True, slots=True)
class HistoryFile:
    """A history file of the shape of SPEC H1, as the messages of SPEC P2.

    Each message keeps its role, channels and recorded provider (SPEC P4; fast-agent records
    none); its own items are not needed to validate it and are left empty.
    """

    messages: tuple[HistoryMessage, ...]


@dataclass(frozen=True, slots=True)
class HistoryFileProblem:
    """Why a file is not a history: ``history_unreadable`` or ``history_malformed`` (SPEC H3)."""

    code: Code
    detail: str


class _NonJsonToken(Exception):
    """``NaN``, ``Infinity`` or ``-Infinity``: Python's json accepts them, JSON does not."""


class _DuplicateMember(Exception):
    """An object names a member twice: Python's json keeps the last, another parser the first."""


def _refuse_constant(_token: str) -> object:
    raise _NonJsonToken


def _refuse_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    members = dict(pairs)
    if len(members) != len(pairs):
        raise _DuplicateMember
    return members


def _malformed(detail: str) -> HistoryFileProblem:
    return HistoryFileProblem(Code.HISTORY_MALFORMED, detail)


_TWICE: Final = "not one JSON value every parser reads alike: an object names a member twice"


def parse_json_file(data: str | bytes) -> object | HistoryFileProblem:
    """The JSON value of a file's contents, or the problem that prevents reading one (SPEC H1)."""
    strict_parse = _strict_parse
    if strict_parse is not None:
        decided = strict_parse(data, _ACCELERATED_DEPTH)
        if decided is not None:
            code, value = decided
            if code is None:
                return value
            if code == _DUPLICATE:
                return _malformed(_TWICE)
    return parse_json_file_exhaustively(data)


def parse_json_file_exhaustively(data: str | bytes) -> object | HistoryFileProblem:
    """:func:`parse_json_file` without the C parser: the statement of SPEC H1's text rules, which
    decides every file (the C parser may only answer what this answers)."""
    if isinstance(data, bytes):
        try:
            chars = data.decode("utf-8")
        except UnicodeDecodeError as error:
            return HistoryFileProblem(
                Code.HISTORY_UNREADABLE, f"not UTF-8: invalid byte at offset {error.start}"
            )
    else:
        chars = data
        try:
            chars.encode("utf-8")
        except UnicodeEncodeError as error:
            return HistoryFileProblem(
                Code.HISTORY_UNREADABLE, f"not UTF-8: a surrogate at offset {error.start}"
            )
    if chars.startswith("\ufeff"):
        return _malformed("not JSON: the text starts with a byte-order mark")
    try:
        value: object = json.loads(
            chars,
            object_pairs_hook=_refuse_duplicates,
            parse_constant=_refuse_constant,
            parse_int=parse_json_int,
        )
    except json.JSONDecodeError as error:
        return _malformed(f"not JSON: {error.msg} at line {error.lineno} column {error.colno}")
    except _NonJsonToken:
        return _malformed("not JSON: NaN or Infinity")
    except _DuplicateMember:
        return _malformed(_TWICE)
    except RecursionError:
        return _malformed("not JSON this reader can hold: nesting too deep")
    return value


def history_shape_problem(data: str | bytes) -> str | None:
    """Why a file is not a history by its shape, or None when it is one.

    A file claims to be a history (SPEC H1) when it is a JSON object with a member
    ``messages``; whether the rest has H1's shape is then for validation to report
    (``history_malformed``). A file that is not JSON, or not an object, or has no such member,
    is some other JSON file (``package.json``, a report, a corpus) and claims nothing.
    """
    value = parse_json_file(data)
    if isinstance(value, HistoryFileProblem):
        return value.detail
    if not isinstance(value, dict):
        return "the top-level value is not an object"
    if "messages" not in value:
        return "no top-level member messages"
    return None


def recorded_provider(value: object) -> str | None:
    """SPEC P4: a message records a provider only with a non-empty string."""
    return value if isinstance(value, str) and value else None


def _selected(
    channels: Mapping[str, list[Any]], wanted: Collection[str] | None
) -> Mapping[str, list[Any]]:
    if wanted is None:
        return channels
    return {name: blocks for name, blocks in channels.items() if name in wanted}


def _message(index: int, raw: object) -> MessageChannels | HistoryFileProblem:
    """One message of SPEC H1, or the first way it breaks the shape."""
    where = f"messages[{index}]"
    if not isinstance(raw, dict):
        return _malformed(f"{where} is not an object")
    role = raw.get("role")
    if not isinstance(role, str) or role not in ROLES:
        return _malformed(f'{where}.role is not "user" or "assistant"')
    if not isinstance(raw.get("content"), list):
        return _malformed(f"{where}.content is absent or not an array")
    for name in _OBJECT_MEMBERS:
        value = raw.get(name)
        if value is not None and not isinstance(value, dict):
            return _malformed(f"{where}.{name} is not an object")
    channels: Mapping[str, Any] = raw.get("channels") or _NO_CHANNELS
    for name, blocks in channels.items():
        if not isinstance(blocks, list):
            return _malformed(f"{where}.channels[{json.dumps(name)}] is not an array")
    return role, channels, recorded_provider(raw.get("provider"))


def _channels_from_value(value: object) -> list[MessageChannels] | HistoryFileProblem:
    """The messages of a parsed history file, or ``history_malformed`` (SPEC H1)."""
    if not isinstance(value, dict):
        return _malformed("the top-level value is not an object")
    raw_messages = value.get("messages")
    if not isinstance(raw_messages, list):
        return _malformed("messages is absent or not an array")
    messages = []
    for index, raw in enumerate(raw_messages):
        message = _message(index, raw)
        if isinstance(message, HistoryFileProblem):
            return message
        messages.append(message)
    return messages


def _history(messages: list[MessageChannels], wanted: Collection[str] | None) -> HistoryFile:
    return HistoryFile(
        tuple(
            HistoryMessage(
                role=role,
                provider=provider,
                channels=_selected(channels, wanted) if channels else {},
            )
            for role, channels, provider in messages
        )
    )


def history_from_value(
    value: object, channels: Collection[str] | None = None
) -> HistoryFile | HistoryFileProblem:
    """The messages of a parsed history file, or ``history_malformed`` (SPEC H1).

    ``channels`` names the channels to keep in each message (all of them when ``None``).
    """
    messages = _channels_from_value(value)
    if isinstance(messages, HistoryFileProblem):
        return messages
    return _history(messages, channels)


# _history.c's read_history: the messages of a file it reads whole, or None to read it otherwise.
# Looked up at every call, so that tests can compare the readings.
_accelerator = cast(
    "Callable[[str | bytes, Mapping[str, list[Any]], str | None], list[MessageChannels] | None]"
    " | None",
    load_accelerator("_history", "read_history"),
)


def read_message_channels(
    data: str | bytes, *, stored_texts: str | None = None
) -> list[MessageChannels] | HistoryFileProblem:
    """SPEC H1: each message's role, channels and recorded provider (SPEC P4), in order, or why
    the file is not a history.

    The reading of :func:`parse_history_file`, without building a :class:`HistoryMessage` per
    message: what a validator, which reads every message of every file, needs and no more.
    ``stored_texts`` names a channel whose text blocks may keep their texts as the UTF-8 bytes
    the file stores them as (the C reading does so for a file given as bytes): for a channel
    whose texts go to the reader, which reads a block's bytes as it reads its characters (SPEC
    E6), sooner.
    """
    accelerator = _accelerator
    if accelerator is not None:
        messages = accelerator(data, _NO_CHANNELS, stored_texts)
        if messages is not None:
            return messages
    value = parse_json_file(data)
    if isinstance(value, HistoryFileProblem):
        return value
    return _channels_from_value(value)


def read_message_channels_exhaustively(
    data: str | bytes,
) -> list[MessageChannels] | HistoryFileProblem:
    """:func:`read_message_channels` by Python's :mod:`json` alone, the reading that decides
    every file: what the faster readings must give wherever they read a file."""
    value = parse_json_file_exhaustively(data)
    if isinstance(value, HistoryFileProblem):
        return value
    return _channels_from_value(value)


def parse_history_file(
    data: str | bytes, channels: Collection[str] | None = None
) -> HistoryFile | HistoryFileProblem:
    """SPEC H1: a history file's contents as messages, or why they are not a history.

    ``channels`` names the channels to keep in each message (all of them when ``None``).
    """
    messages = read_message_channels(data)
    if isinstance(messages, HistoryFileProblem):
        return messages
    return _history(messages, channels)
