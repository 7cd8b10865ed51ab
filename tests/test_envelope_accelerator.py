"""The reader's C path for an envelope in any layout (``_strict.read_envelope``) reads as SPEC E6.

Writers other than SPEC C3's put an envelope's members in their own order, with whitespace and
escapes of their own; ``record._fast.general`` reads those texts with ``read_envelope``, which
returns the item's fields or ``None``. Within SPEC E4.1's length limit (the caller's to check)
it must return fields exactly for the texts the reader's statement (``record.read.read_block``)
finds resumable, with the same item, and ``None`` for every other: compared on envelopes and
near-envelopes written in every layout, on those texts mutated, and on every ``read`` vector, as
characters and as bytes.
"""

from __future__ import annotations

import base64
import json
import tracemalloc
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from reasoning_replay.record import reader
from reasoning_replay.record._fast import general
from reasoning_replay.record.read import read_block
from reasoning_replay.suite.vectors import load_vector_dirs
from support import BYTE_PIECES, CHARACTER_EDITS, character_edit, spelled

strict: ModuleType | None
try:
    from reasoning_replay import _strict as strict
except ImportError:
    strict = None

REPO = Path(__file__).resolve().parents[1]
SCHEMA = "fast-agent.openai-responses.reasoning-replay"

pytestmark = pytest.mark.skipif(strict is None, reason="the C accelerator is not built")

PROPERTY_SETTINGS = settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

Fields = tuple[str, tuple[str, ...], str, tuple[str, ...] | None]


def read_in_c(text: str | bytes) -> Fields | None:
    assert strict is not None
    fields: Fields | None = strict.read_envelope(text)
    return fields


def assert_reads_as_the_statement(text: str | bytes) -> Fields | None:
    """``read_envelope`` accepts ``text`` exactly when the statement finds it resumable, with
    the same item (equal strings are equal in representation too: CPython compares strings of
    different kinds as unequal, so each is made in its narrowest kind)."""
    result = read_block(text)
    expected = None
    if result.item is not None:
        item = result.item
        expected = (item.id, item.summary, item.encrypted_content, item.content)
    assert read_in_c(text) == expected
    return expected


def assert_reads_alike_in_both_forms(text: str) -> Fields | None:
    expected = assert_reads_as_the_statement(text)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # a raw surrogate: its bytes are not UTF-8, never resumable
        assert assert_reads_as_the_statement(text.encode("utf-8", "surrogatepass")) is None
    else:
        assert assert_reads_as_the_statement(data) == expected
    return expected


# --- values, and every layout of them -------------------------------------------------------------


@dataclass(frozen=True)
class Members:
    """An object as a writer writes it: its members in order, a name possibly twice."""

    pairs: tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class Number:
    """A number literal, written as it is."""

    literal: str


TRICKY_CHARS = '"\\/\x00\x01\x08\t\n\x0b\x0c\r\x1f\x7f\x80\xe9\xff\u0100\u2028\ufeff\uffff数😀𝄞'
strings = st.one_of(
    st.text(max_size=30),
    st.text(alphabet=st.sampled_from(TRICKY_CHARS), max_size=12),
    st.text(alphabet=st.characters(max_codepoint=0x7F), min_size=16, max_size=120),
)
# The version, as writers spell the number 1, and numbers and values that are not 1.
VERSIONS = (
    "1", "1.0", "1e0", "1E+0", "10e-1", "0.1e1", "1.000000000000000000001", "100e-2",
    "2", "-1", "0", "1.5", "11", "10", "1e1", "0.999", "-1.0", "1e400",
)  # fmt: skip
WHITESPACE = st.text(alphabet=" \t\n\r", max_size=2)


def parts(texts: list[str], part_type: str) -> list[Members]:
    return [Members((("type", part_type), ("text", text))) for text in texts]


@st.composite
def envelope_values(draw: st.DrawFn) -> Members:
    """A valid envelope, or one broken in one of the ways E1-E3 name: a member missing, unknown
    or written twice, a value of the wrong type or content, a part of the wrong shape."""
    item: dict[str, Any] = {
        "type": "reasoning",
        "id": draw(st.one_of(strings.filter(bool), st.from_regex(r"rs_[0-9a-f]{1,48}"))),
        "summary": parts(draw(st.lists(strings, max_size=4)), "summary_text"),
        "encrypted_content": draw(st.one_of(strings.filter(bool), st.just("Zm9v=="))),
    }
    if draw(st.booleans()):
        item["content"] = parts(draw(st.lists(strings, min_size=1, max_size=3)), "reasoning_text")
    envelope: dict[str, Any] = {
        "schema": SCHEMA,
        "version": Number(draw(st.sampled_from(VERSIONS))),
        "item": item,
    }
    target = draw(st.sampled_from([envelope, item]))
    name = draw(st.sampled_from(sorted(target)))
    match draw(st.sampled_from(["none", "none", "drop", "add", "twice", "retype", "part"])):
        case "drop":
            del target[name]
        case "add":
            target[draw(st.sampled_from(["status", "x", "Item", "schema "]))] = None
        case "twice":
            pairs = list(target.items())
            pairs.insert(draw(st.integers(0, len(pairs))), (name, target[name]))
            return to_members(envelope, target, Members(tuple(pairs)))
        case "retype":
            target[name] = draw(
                st.sampled_from([None, True, "", [], Members(()), Number("1"), "reasoning", 1])
            )
        case "part":
            for key, part_type in (("summary", "summary_text"), ("content", "reasoning_text")):
                if item.get(key):
                    bad = draw(
                        st.sampled_from(
                            [
                                Members((("type", part_type),)),
                                Members((("text", "x"),)),
                                Members((("type", part_type), ("text", None))),
                                Members((("type", "output_text"), ("text", "x"))),
                                Members((("type", part_type), ("text", "x"), ("x", 1))),
                                Members((("type", part_type), ("text", "x"), ("text", "x"))),
                                "x",
                            ]
                        )
                    )
                    item[key] = [*item[key], bad]
    return to_members(envelope, None, None)


def to_members(value: Any, target: Any, replacement: Members | None) -> Any:
    """``value`` with each dict as :class:`Members` (``target`` replaced by ``replacement``)."""
    if replacement is not None and value is target:
        return Members(tuple((k, to_members(v, None, None)) for k, v in replacement.pairs))
    if isinstance(value, dict):
        return Members(tuple((k, to_members(v, target, replacement)) for k, v in value.items()))
    if isinstance(value, list):
        return [to_members(v, target, replacement) for v in value]
    return value


@st.composite
def laid_out(draw: st.DrawFn, value: Any) -> str:
    """``value`` written in any layout: members in any order, whitespace between any two tokens,
    every string (names too) spelled any way JSON allows."""

    def write(node: Any) -> str:
        space = draw(WHITESPACE)
        if isinstance(node, Members):
            pairs = list(node.pairs)
            if draw(st.booleans()):
                pairs = draw(st.permutations(pairs))
            written = ",".join(
                f"{draw(WHITESPACE)}{draw(spelled(name))}{draw(WHITESPACE)}:{write(member)}"
                for name, member in pairs
            )
            return f"{space}{{{written or draw(WHITESPACE)}}}{draw(WHITESPACE)}"
        if isinstance(node, list):
            written = ",".join(write(element) for element in node)
            return f"{space}[{written or draw(WHITESPACE)}]{draw(WHITESPACE)}"
        if isinstance(node, Number):
            return f"{space}{node.literal}{draw(WHITESPACE)}"
        if isinstance(node, str):
            return f"{space}{draw(spelled(node))}{draw(WHITESPACE)}"
        return f"{space}{json.dumps(node)}{draw(WHITESPACE)}"

    return write(value)


envelope_texts = envelope_values().flatmap(laid_out)

# Pieces a mutation may put into a text: structure, whitespace and what is not JSON's, escapes
# valid and not, lone surrogates raw and escaped, number pieces, characters of every width.
INSERTS = (
    " ", "\t", "\n", "\x0b", "\xa0", "\ufeff", '"', "\\", ",", ":", "{", "}", "[", "]", "null",
    "1", ".0", "e0", "-", "\x00", "\x1f", "é", "数", "😀", "\ud800", "\\ud800", "\\udc00",
    "\\ud83d\\ude00", "\\u0022", '\\"', "\\x", "\\u12", '"id":"x",', '"text":"x",',
    '"type":"reasoning",', '{"type":"summary_text","text":""},', ',"content":[]', ',"x":1',
)  # fmt: skip


@st.composite
def mutated_envelope_texts(draw: st.DrawFn) -> str:
    text = draw(envelope_texts)
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        at = draw(st.integers(min_value=0, max_value=len(text)))
        edit = draw(st.sampled_from(CHARACTER_EDITS))
        text = character_edit(text, at, edit, draw(st.sampled_from(INSERTS)))
    return text


@st.composite
def mutated_envelope_bytes(draw: st.DrawFn) -> bytes:
    data = bytearray(draw(envelope_texts).encode("utf-8", "surrogatepass"))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        at = draw(st.integers(min_value=0, max_value=len(data)))
        piece = draw(st.sampled_from(BYTE_PIECES))
        data[at : at + draw(st.integers(min_value=0, max_value=1))] = piece
    return bytes(data)


# --- properties -----------------------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(text=envelope_texts)
def test_every_layout_of_every_envelope_is_read_as_the_statement_reads_it(text: str) -> None:
    assert_reads_alike_in_both_forms(text)


@PROPERTY_SETTINGS
@given(value=envelope_values(), data=st.data())
def test_a_resumable_envelope_is_read_in_every_layout(value: Members, data: st.DataObject) -> None:
    """Not only agreement: whatever its layout, an envelope the statement resumes is read here
    too, so the texts other writers make never fall to the slow way."""
    canonical = assert_reads_alike_in_both_forms(data.draw(laid_out(value)))
    assert assert_reads_alike_in_both_forms(data.draw(laid_out(value))) == canonical


@PROPERTY_SETTINGS
@given(text=mutated_envelope_texts())
@example(text='{"schema":"' + SCHEMA + '","version":1,"item":{}}')
@example(text='{"item":{},"item":{}}')
def test_every_mutated_text_is_read_as_the_statement_reads_it(text: str) -> None:
    assert_reads_alike_in_both_forms(text)


@PROPERTY_SETTINGS
@given(data=mutated_envelope_bytes())
def test_every_mutated_byte_string_is_read_as_the_statement_reads_it(data: bytes) -> None:
    assert_reads_as_the_statement(data)


# --- examples -------------------------------------------------------------------------------------

ITEM = '{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"é"}],"encrypted_content":"c"}'  # noqa: E501
GOLDEN = f'{{"schema":"{SCHEMA}","version":1,"item":{ITEM}}}'
FIELDS = ("rs_1", ("é",), "c", None)


@pytest.mark.parametrize(
    ("text", "fields"),
    [
        (GOLDEN, FIELDS),
        (f'{{"item":{ITEM},"version":1,"schema":"{SCHEMA}"}}', FIELDS),  # any member order
        (json.dumps(json.loads(GOLDEN), indent=2), FIELDS),  # any whitespace
        (" \t\n\r" + GOLDEN + " \t\n\r", FIELDS),
        (json.dumps(json.loads(GOLDEN)), FIELDS),  # json.dumps: spaces and \u escapes
        (GOLDEN.replace('"schema"', '"sch\\u0065ma"'), FIELDS),  # a name spelled otherwise
        (GOLDEN.replace('"reasoning"', '"\\u0072easoning"'), FIELDS),  # a constant too
        (GOLDEN.replace('"version":1', '"version":1.0'), FIELDS),  # SPEC E1: the number 1
        (GOLDEN.replace('"version":1', '"version":10e-1'), FIELDS),
        (GOLDEN.replace('"version":1', '"version":2'), None),
        (GOLDEN.replace('"version":1', '"version":true'), None),
        (GOLDEN.replace('"version":1', '"version":"1"'), None),
        (GOLDEN.replace('"version":1', '"version":1,"version":1'), None),  # SPEC E4: twice
        (GOLDEN.replace('"id":"rs_1"', '"id":"rs_1","\\u0069d":"rs_1"'), None),  # spelled apart
        (GOLDEN.replace('"c"}', '"c","content":null}'), None),  # SPEC E3
        (GOLDEN.replace('"c"}', '"c","content":[]}'), None),
        (GOLDEN.replace('"rs_1"', '""'), None),  # SPEC E2: an empty id
        (GOLDEN.replace('"c"}', '"c","status":null}'), None),  # an unknown member
        (GOLDEN.replace('"é"', '"\\ud800"'), None),  # SPEC E4: an escaped lone surrogate
        (GOLDEN + "x", None),
        ("\ufeff" + GOLDEN, None),  # a byte-order mark is not whitespace
        ("\x0b" + GOLDEN, None),  # nor is a vertical tab
        ("", None),
        ("{}", None),
        ("[]", None),
    ],
)
def test_examples(text: str, fields: Fields | None) -> None:
    assert assert_reads_alike_in_both_forms(text) == fields


@pytest.mark.parametrize("count", [0, 1, 11, 12, 13, 100])
def test_any_number_of_parts_is_read(count: int) -> None:
    """Literals are noted before any string is made; past a dozen, on the heap."""
    texts = [f"part {index}\n" for index in range(count)]
    item: dict[str, Any] = {"encrypted_content": "c", "type": "reasoning", "id": "rs_1"}
    item["summary"] = [{"text": text, "type": "summary_text"} for text in texts]
    if texts:
        item["content"] = [{"type": "reasoning_text", "text": text} for text in texts]
    text = json.dumps({"item": item, "schema": SCHEMA, "version": 1}, indent=1)
    expected = ("rs_1", tuple(texts), "c", tuple(texts) or None)
    assert assert_reads_alike_in_both_forms(text) == expected


def test_it_takes_only_str_and_bytes() -> None:
    assert strict is not None
    with pytest.raises(TypeError):
        strict.read_envelope(bytearray(b"{}"))


def test_the_reader_reads_other_layouts_with_it() -> None:
    assert general._envelope_accelerator is not None
    text = json.dumps(json.loads(GOLDEN), indent=2)
    assert reader.parse_reasoning_replay_envelope(text).item == read_block(text).item


# --- the read vectors -----------------------------------------------------------------------------


def read_vector_texts() -> Iterator[Any]:
    suite = load_vector_dirs([REPO / "conformance" / "vectors"])
    for case in suite.cases:
        if case.operation == "read":
            if "text_base64" in case.input:
                yield pytest.param(base64.b64decode(case.input["text_base64"]), id=case.id)
            else:
                yield pytest.param(case.input["text"], id=case.id)


@pytest.mark.parametrize("text", list(read_vector_texts()))
def test_every_read_vector_is_read_as_the_statement_reads_it(text: str | bytes) -> None:
    if general.text_length_exceeds_limit(text):
        return  # SPEC E4.1's length is the caller's to check (record._fast.general.read)
    if isinstance(text, bytes):
        assert_reads_as_the_statement(text)
    else:
        assert_reads_alike_in_both_forms(text)


# --- memory ---------------------------------------------------------------------------------------


def test_no_path_leaks_memory() -> None:
    """Each way out, items read and texts refused early or late, frees what it made."""
    many = json.loads(GOLDEN)
    many["item"]["summary"] *= 20
    texts = [
        json.dumps(json.loads(GOLDEN), indent=1),
        json.dumps(many),
        GOLDEN.replace('"schema"', '"sch\\u0065ma"').replace('"version":1', '"version":1.0'),
        GOLDEN.replace('"version":1', '"version":2.5'),
        GOLDEN.replace('"c"}', '"c","content":null}'),
        GOLDEN.replace('"é"', '"\\ud800"'),
        GOLDEN + "x",
    ]
    forms: list[str | bytes] = [form for text in texts for form in (text, text.encode())]
    forms.append(GOLDEN.encode().replace("é".encode(), b"\xff"))
    for _ in range(2_000):  # fill every cache and free list first (a 20-tuple's too)
        for form in forms:
            read_in_c(form)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(2_000):
            for form in forms:
                read_in_c(form)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 64 * 1024, f"{grown} bytes kept after 2,000 rounds"
