"""The C reading of history files (``reasoning_replay._history``) reads as Python's json does.

``history_files.read_message_channels_exhaustively`` is SPEC H1's reading by Python's json, the
one that decides every file; ``_history.read_history`` must, for every file it reads (it returns
``None`` for the others, which are read the other ways), give the same messages: each role,
channels (names in order, every value of the same type and value) and recorded provider. Given
the replay channel's name and a file's bytes, it keeps that channel's block texts as the UTF-8
bytes stored, the same texts. Compared on histories written in every layout, on those mutated
as characters and as bytes, and then through ``validate_history``: one report with the C
reading and without it.
"""

from __future__ import annotations

import json
import math
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from reasoning_replay.history import history_files
from reasoning_replay.history.history_files import (
    HistoryFileProblem,
    read_message_channels,
    read_message_channels_exhaustively,
)
from reasoning_replay.history.validation import validate_history
from reasoning_replay.record.envelope import DISPLAY_CHANNEL, REPLAY_CHANNEL
from support import BYTE_PIECES, CHARACTER_EDITS, character_edit, envelope_text, spelled

accelerator: ModuleType | None
try:
    from reasoning_replay import _history as accelerator
except ImportError:
    accelerator = None

pytestmark = pytest.mark.skipif(accelerator is None, reason="the C accelerator is not built")

PROPERTY_SETTINGS = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
NO_CHANNELS = history_files._NO_CHANNELS


def typed(value: Any) -> Any:
    """``value`` with every scalar tagged by its type (``True == 1`` in Python, not here) and
    members kept in order; a mapping proxy (no channels) is an empty object."""
    if isinstance(value, dict | type(NO_CHANNELS)):
        return ("object", [(name, typed(member)) for name, member in value.items()])
    if isinstance(value, list | tuple):
        return ("array", [typed(element) for element in value])
    if isinstance(value, float):
        return ("float", math.copysign(1.0, value), repr(value))
    return (type(value).__name__, value)


def read_in_c(data: str | bytes, stored_texts: str | None = None) -> Any:
    assert accelerator is not None
    return accelerator.read_history(data, NO_CHANNELS, stored_texts)


def as_characters(messages: Any) -> Any:
    """The messages with every replay-channel text kept as bytes decoded: the characters."""
    out = []
    for role, stored, provider in messages:
        channels = dict(stored)
        if REPLAY_CHANNEL in channels:
            channels[REPLAY_CHANNEL] = [
                {k: v.decode("utf-8") if k == "text" and isinstance(v, bytes) else v
                 for k, v in block.items()} if isinstance(block, dict) else block
                for block in channels[REPLAY_CHANNEL]
            ]  # fmt: skip
        out.append((role, channels, provider))
    return out


def only_replay_texts_are_bytes(messages: Any) -> bool:
    def has_bytes(value: Any) -> bool:
        if isinstance(value, bytes):
            return True
        if isinstance(value, dict):
            return any(map(has_bytes, value.values()))
        if isinstance(value, list):
            return any(map(has_bytes, value))
        return False

    for _role, channels, _provider in messages:
        for name, stored in channels.items():
            blocks = stored
            if name == REPLAY_CHANNEL:
                blocks = [
                    {k: v for k, v in block.items() if k != "text"} for block in blocks
                    if isinstance(block, dict)
                ]  # fmt: skip
            if has_bytes(blocks):
                return False
    return True


def assert_reads_as_json(data: str | bytes) -> Any:
    """The C reading gives ``data`` json's messages, or leaves it to the other readings; and a
    file json finds broken is always left. Returns the C reading's messages (``None``: left)."""
    expected = read_message_channels_exhaustively(data)
    got = read_in_c(data)
    if isinstance(expected, HistoryFileProblem):
        assert got is None, f"read a file json finds broken: {expected}"
    elif got is not None:
        assert typed(got) == typed(expected)
    with_bytes = read_in_c(data, REPLAY_CHANNEL)
    assert (with_bytes is None) is (got is None)
    if with_bytes is not None:
        if isinstance(data, str):
            assert typed(with_bytes) == typed(got)  # a str's texts stay characters
        else:
            assert only_replay_texts_are_bytes(with_bytes)
            assert typed(as_characters(with_bytes)) == typed(got)
    return got


def assert_reads_alike_in_both_forms(text: str) -> Any:
    got = assert_reads_as_json(text)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        assert_reads_as_json(text.encode("utf-8", "surrogatepass"))
        return got
    from_bytes = assert_reads_as_json(data)
    assert (from_bytes is None) is (got is None)
    return got


# --- strategies -----------------------------------------------------------------------------------

TRICKY_CHARS = '"\\/\x00\x01\x08\t\n\x0b\x0c\r\x1f\x7f\x80\xe9\xff\u0100\u2028\ufeff\uffff数😀𝄞'
json_strings = st.one_of(
    st.text(max_size=20),
    st.text(alphabet=st.sampled_from(TRICKY_CHARS), max_size=12),
    st.text(alphabet=st.characters(max_codepoint=0x7F), min_size=16, max_size=120),
)
json_numbers = st.one_of(
    st.integers(),
    st.integers(min_value=-(10**700), max_value=10**700),  # past the 640-character limit
    st.floats(allow_nan=False, allow_infinity=False),
)
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), json_numbers, json_strings),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(json_strings, inner, max_size=4)
    ),
    max_leaves=12,
)
texts = st.one_of(json_strings, st.sampled_from([envelope_text("rs_1", "c"), "", "é数😀"]))
blocks = st.one_of(
    st.builds(lambda text: {"type": "text", "text": text}, texts),
    st.builds(lambda text, extra: {"text": text, "type": "text", **extra}, texts,
              st.dictionaries(st.sampled_from(["meta", "x"]), json_values, max_size=1)),
    json_values,
)  # fmt: skip
CHANNEL_NAMES = st.one_of(
    st.sampled_from([REPLAY_CHANNEL, DISPLAY_CHANNEL, "fast-agent-responses-cache-state"]),
    json_strings,
)
OPTIONAL_MEMBERS = {
    "tool_calls": st.one_of(st.none(), st.dictionaries(json_strings, json_values, max_size=2)),
    "tool_results": st.one_of(st.none(), st.dictionaries(json_strings, json_values, max_size=2)),
    "channels": st.one_of(
        st.none(), st.dictionaries(CHANNEL_NAMES, st.lists(blocks, max_size=3), max_size=4)
    ),
    "provider": st.one_of(st.none(), st.sampled_from(["openai", "", "xai"]), json_values),
    "stop_reason": json_values,
    "timestamp": json_values,
    "is_template": json_values,
    "metadata": json_values,  # a member H1 does not name: ignored
}


@st.composite
def messages(draw: st.DrawFn) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": draw(st.sampled_from(["user", "assistant"])),
        "content": draw(st.lists(json_values, max_size=3)),
    }
    for name in draw(st.lists(st.sampled_from(sorted(OPTIONAL_MEMBERS)), unique=True)):
        message[name] = draw(OPTIONAL_MEMBERS[name])
    return message


@st.composite
def histories(draw: st.DrawFn) -> dict[str, Any]:
    history: dict[str, Any] = {"messages": draw(st.lists(messages(), max_size=4))}
    if draw(st.booleans()):
        history[draw(st.sampled_from(["reasoning_replay_export", "version", "x"]))] = draw(
            json_values
        )
    return history


WHITESPACE = st.text(alphabet=" \t\n\r", max_size=2)


@st.composite
def laid_out(draw: st.DrawFn, value: Any) -> str:
    """``value`` written in any layout: members in any order, whitespace between any two tokens,
    every string (names too) spelled any way JSON allows, numbers as json writes them."""

    def write(node: Any) -> str:
        space, after = draw(WHITESPACE), draw(WHITESPACE)
        if isinstance(node, dict):
            pairs = list(node.items())
            if draw(st.booleans()):
                pairs = draw(st.permutations(pairs))
            written = ",".join(
                f"{draw(WHITESPACE)}{draw(spelled(name))}{draw(WHITESPACE)}:{write(member)}"
                for name, member in pairs
            )
            return f"{space}{{{written or draw(WHITESPACE)}}}{after}"
        if isinstance(node, list):
            written = ",".join(write(element) for element in node)
            return f"{space}[{written or draw(WHITESPACE)}]{after}"
        if isinstance(node, str):
            return f"{space}{draw(spelled(node))}{after}"
        return f"{space}{json.dumps(node)}{after}"

    return write(value)


history_texts = st.one_of(
    histories().map(lambda history: json.dumps(history, ensure_ascii=False, indent=2)),
    histories().flatmap(laid_out),
)

# Pieces a mutation may put into a text: structure, whitespace and what is not JSON's, names H1
# reads, number pieces, escapes valid and not, lone surrogates raw and escaped, wide characters.
INSERTS = (
    " ", "\t", "\x0b", "\ufeff", '"', "\\", ",", ":", "{", "}", "[", "]", "null", "true", "1",
    "-", ".5", "1e", "NaN", "\x00", "\x1f", "é", "数", "😀", "\ud800", "\\ud800", "\\udc00",
    "\\ud83d\\ude00", "\\u0022", '\\"', "\\x", "\\u12", '"role":"user",', '"content":[],',
    '"channels":{},', '"channels":null,', '"provider":"p",', '"messages":[],', '"x":1,',
    "[" * 70, "{" * 3,
)  # fmt: skip


@st.composite
def mutated_history_texts(draw: st.DrawFn) -> str:
    text = draw(history_texts)
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        at = draw(st.integers(min_value=0, max_value=len(text)))
        edit = draw(st.sampled_from(CHARACTER_EDITS))
        text = character_edit(text, at, edit, draw(st.sampled_from(INSERTS)))
    return text


@st.composite
def mutated_history_bytes(draw: st.DrawFn) -> bytes:
    data = bytearray(draw(history_texts).encode("utf-8", "surrogatepass"))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        at = draw(st.integers(min_value=0, max_value=len(data)))
        piece = draw(st.sampled_from(BYTE_PIECES))
        data[at : at + draw(st.integers(min_value=0, max_value=1))] = piece
    return bytes(data)


# --- properties -----------------------------------------------------------------------------------


def leaves_nothing_to_the_others(history: dict[str, Any]) -> bool:
    """Whether a history has none of what the C reading leaves to the others on purpose: an
    escaped lone surrogate (json writes one for a lone surrogate), or a channel nested deeper
    than 32 in the file."""

    def fine(value: Any, depth: int) -> bool:
        if isinstance(value, str):
            return not any(0xD800 <= ord(char) <= 0xDFFF for char in value)
        if isinstance(value, dict):
            return depth < 64 and all(
                fine(k, depth) and fine(v, depth + 1) for k, v in value.items()
            )
        if isinstance(value, list):
            return depth < 64 and all(fine(v, depth + 1) for v in value)
        return True

    return fine(history, 1)


@PROPERTY_SETTINGS
@given(history=histories(), data=st.data())
def test_every_history_in_every_layout_is_read_as_json_reads_it(
    history: dict[str, Any], data: st.DataObject
) -> None:
    text = data.draw(st.one_of(st.just(json.dumps(history, indent=2)), laid_out(history)))
    got = assert_reads_alike_in_both_forms(text)
    if leaves_nothing_to_the_others(history):
        assert got is not None, "a plain history was left to the slower readings"


@PROPERTY_SETTINGS
@given(text=mutated_history_texts())
@example(text='{"messages":[{"role":"user","content":[],"role":"user"}]}')  # H1's member twice
@example(text='{"messages":[],"messages":[]}')
@example(text='{"messages":[{"role":"user","content":["\\ud800"]}]}')  # an escaped lone one
@example(text='{"messages":[{"role":"user","content":[' + "[" * 70 + "]" * 70 + "]}]}")
@example(  # a channel nested deeper than 32 in the file
    text='{"messages":[{"role":"user","content":[],"channels":{"a":[{"b":'
    + "[" * 30
    + "]" * 30
    + "}]}}]}"
)
def test_every_mutated_text_is_read_as_json_reads_it(text: str) -> None:
    assert_reads_alike_in_both_forms(text)


@PROPERTY_SETTINGS
@given(data=mutated_history_bytes())
@example(data=b'{"messages":[{"role":"user","content":["\xed\xa0\x80"]}]}')  # an encoded surrogate
@example(data=b'{"messages":[{"role":"user","content":["\xc3"]}]}')  # a truncated sequence
@example(data=b'{"messages":[{"role":"user","content":[],"x\xff":1}]}')  # in a skipped name
@example(data=b'\xef\xbb\xbf{"messages":[]}')  # a byte-order mark
def test_every_mutated_byte_string_is_read_as_json_reads_it(data: bytes) -> None:
    assert_reads_as_json(data)


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ('{"messages":[]}', []),
        (' {"x":1, "messages" : [ ] } ', []),
        ('{"messages":[{"content":[],"role":"assistant"}]}', [("assistant", {}, None)]),
        ('{"messages":[{"role":"user","content":[],"channels":null}]}', [("user", {}, None)]),
        ('{"messages":[{"role":"user","content":[],"channels":{}}]}', [("user", {}, None)]),
        # SPEC H1: no object names a member twice, at any depth, however the name is written
        ('{"messages":[{"role":"user","content":[],"channels":{"a":[1],"b":[],"a":[2]}}]}', None),
        ('{"messages":[{"role":"user","content":[],"channels":{"a":[{"x":1,"x":2}]}}]}', None),
        ('{"messages":[{"role":"user","content":[{"type":"text","type":"image"}]}]}', None),
        ('{"messages":[{"role":"user","content":[{"a":1,"\\u0061":2}]}]}', None),
        ('{"messages":[{"role":"user","content":[],"x":1,"y":{},"x":2}]}', None),
        ('{"messages":[{"role":"user","content":[],"tool_calls":{"c":{},"c":{}}}]}', None),
        ('{"x":1,"messages":[],"\\u0078":2}', None),
        (
            '{"messages":[{"role":"assistant","content":[],'
            '"channels":{"openai-reasoning-encrypted":[{"text":"a","text":"b"}]}}]}',
            None,
        ),
        ('{"messages":[{"role":"user","content":[{"a":1,"b":{"a":1}}]}]}', [("user", {}, None)]),
        ('{"messages":[{"role":"user","content":[],"provider":"xai"}]}', [("user", {}, "xai")]),
        ('{"messages":[{"role":"user","content":[],"provider":""}]}', [("user", {}, None)]),
        ('{"messages":[{"role":"user","content":[],"provider":7}]}', [("user", {}, None)]),
        ('{"messages":[{"r\\u006fle":"\\u0075ser","content":[]}]}', [("user", {}, None)]),
        ('{"messages":[{"role":"user","content":{}}]}', None),  # SPEC H1: content an array
        ('{"messages":[{"role":"system","content":[]}]}', None),
        ('{"messages":[{"role":"user"}]}', None),
        ('{"messages":[{"role":"user","content":[],"tool_calls":[]}]}', None),
        ('{"messages":[{"role":"user","content":[],"channels":{"a":{}}}]}', None),
        ('{"messages":[{"role":"user","content":[NaN]}]}', None),
        ('{"messages":[]} x', None),
        ('{"message":[]}', None),
        ("[]", None),
        ("", None),
    ],
)
def test_examples(text: str, read: list[Any] | None) -> None:
    got = assert_reads_alike_in_both_forms(text)
    assert (got is None) is (read is None)
    if read is not None:
        assert typed(got) == typed(read)


def test_an_object_of_many_members_is_left_to_the_other_readings() -> None:
    """Names are compared pairwise up to a bound (so the reading stays linear); past it the
    other readings, which find a name twice among any number, decide."""
    many = ",".join(f'"k{k}":0' for k in range(200))
    text = '{"messages":[{"role":"user","content":[{' + many + "}]}]}"
    twice = text.replace('"k199"', '"k0"')

    assert read_in_c(text) is None
    assert read_message_channels(text) == [("user", {}, None)]
    assert read_in_c(twice) is None
    assert isinstance(read_message_channels(twice), HistoryFileProblem)


def test_the_replay_channels_texts_are_the_bytes_stored() -> None:
    text = envelope_text("rs_é", "c")
    history = {
        "messages": [
            {
                "role": "assistant",
                "content": [],
                "channels": {
                    REPLAY_CHANNEL: [{"type": "text", "text": text}, {"type": "text", "text": 5}],
                    DISPLAY_CHANNEL: [{"type": "text", "text": "é"}],
                },
            }
        ]
    }
    for data in (json.dumps(history).encode(), json.dumps(history, ensure_ascii=False).encode()):
        [(_role, channels, _provider)] = read_in_c(data, REPLAY_CHANNEL)
        assert channels[REPLAY_CHANNEL] == [
            {"type": "text", "text": text.encode()},
            {"type": "text", "text": 5},
        ]
        assert channels[DISPLAY_CHANNEL] == [{"type": "text", "text": "é"}]


def test_it_takes_only_str_and_bytes() -> None:
    assert accelerator is not None
    with pytest.raises(TypeError):
        accelerator.read_history(bytearray(b"{}"), NO_CHANNELS, None)
    with pytest.raises(TypeError):
        accelerator.read_history(b"{}", NO_CHANNELS, b"x")
    with pytest.raises(TypeError):
        accelerator.read_history(b"{}", NO_CHANNELS)


# --- through the validator ------------------------------------------------------------------------


@contextmanager
def without_the_c_reading() -> Iterator[None]:
    saved = history_files._accelerator
    history_files._accelerator = None
    try:
        yield
    finally:
        history_files._accelerator = saved


@PROPERTY_SETTINGS
@given(text=st.one_of(history_texts, mutated_history_texts()))
def test_the_validator_reports_alike_with_or_without_it(text: str) -> None:
    forms: list[str | bytes] = [text]
    with suppress(UnicodeEncodeError):
        forms.append(text.encode("utf-8"))
    for form in forms:
        with_it = validate_history(form).to_json()
        with without_the_c_reading():
            without = validate_history(form).to_json()
        assert with_it == without


def test_read_message_channels_uses_it_and_falls_back() -> None:
    assert history_files._accelerator is not None
    lone = '{"messages":[{"role":"user","content":["\\ud800"]}]}'
    assert read_in_c(lone) is None
    assert read_message_channels(lone) == [("user", {}, None)]
    assert isinstance(read_message_channels("[]"), HistoryFileProblem)


# --- memory ---------------------------------------------------------------------------------------


def test_no_path_leaks_memory() -> None:
    """Each way out, files read and files left at every point, frees what it made."""
    block = {"type": "text", "text": envelope_text("rs_é", "c"), "x": [1, 2.5]}
    message = {
        "role": "assistant",
        "content": [{"type": "text", "text": "é" * 40}],
        "channels": {REPLAY_CHANNEL: [block, 3], DISPLAY_CHANNEL: [{"text": "d"}]},
        "provider": "openai",
    }
    good = json.dumps({"messages": [message, {"role": "user", "content": []}]})
    texts = [
        good,
        good.replace('"provider"', '"role":"user","provider"', 1),  # H1's member twice, late
        good.replace('"d"', '"\\ud800"'),
        good.replace("[1, 2.5]", "[1, 2.5" + "[" * 40 + "]" * 40 + "]"),
        good.replace('"x": [1', '"x": [01'),
        good[:-10],
        good + "x",
    ]
    forms: list[str | bytes] = [form for text in texts for form in (text, text.encode())]
    forms.append(good.encode().replace("é".encode(), b"\xff", 1))
    forms.append(good.encode().replace(b'"text": "d"', b'"text": "\xff"'))
    for _ in range(1_000):  # fill every cache and free list first
        for form in forms:
            read_in_c(form, REPLAY_CHANNEL)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(1_000):
            for form in forms:
                read_in_c(form, REPLAY_CHANNEL)
                read_in_c(form)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 64 * 1024, f"{grown} bytes kept after 1,000 rounds"
