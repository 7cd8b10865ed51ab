"""The strict parser's C accelerator (``reasoning_replay._strict``) parses as its Python path.

``jsontext.parse_strict_statement`` is the statement of SPEC E6 steps 1–5 in Python;
``_strict.parse`` must, for every text it decides, give the same value (the same types, ints and
floats as Python's json makes them) or the same code, and must decide every text that is valid
JSON apart from a duplicate member or its depth. Compared on JSON values written every way JSON
allows, on those texts mutated, on texts built to sit on each rule's edge, and on every ``read``
vector, as characters and as bytes. The other accelerator's tests
(tests/test_canonical_accelerator.py) check that it is built and that the reader gives one
verdict with both, either or neither.
"""

from __future__ import annotations

import base64
import json
import math
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from reasoning_replay import Code
from reasoning_replay.record import jsontext
from reasoning_replay.record._fast import general
from reasoning_replay.record.jsontext import MAX_DEPTH, TextRefused
from reasoning_replay.suite.vectors import load_vector_dirs
from support import CHARACTER_EDITS, bytes_changed, character_edit

strict: ModuleType | None
try:
    from reasoning_replay import _strict as strict
except ImportError:
    strict = None

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(strict is None, reason="the C accelerator is not built")

PROPERTY_SETTINGS = settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# The codes a text the accelerator leaves undecided may have: it decides every other text.
UNDECIDED_CODES = {Code.JSON_MALFORMED, Code.JSON_INVALID_UNICODE, Code.LIMIT_EXCEEDED}


def typed(value: Any) -> Any:
    """``value`` with every scalar tagged by its type (``True == 1`` and ``0.0 == -0.0`` in
    Python, not here), and members kept in order."""
    if isinstance(value, dict):
        return ("object", [(name, typed(member)) for name, member in value.items()])
    if isinstance(value, list):
        return ("array", [typed(element) for element in value])
    if isinstance(value, float):
        return ("float", math.copysign(1.0, value), repr(value))
    return (type(value).__name__, value)


def parse_in_c(text: str | bytes) -> tuple[str | None, object] | None:
    assert strict is not None
    decided: tuple[str | None, object] | None = strict.parse(text)
    return decided


def assert_agree(text: str | bytes) -> object | TextRefused:
    """The accelerator decides ``text`` as the Python path does, or leaves it to it, and only
    a text that breaks the grammar or Unicode; returns the Python path's result."""
    expected = jsontext.parse_strict_statement(text)
    decided = parse_in_c(text)
    if decided is None:
        assert isinstance(expected, TextRefused), "a valid text was left undecided"
        assert expected.code in UNDECIDED_CODES
        return expected
    code, value = decided
    if isinstance(expected, TextRefused):
        assert (code, value) == (expected.code.value, None)
    else:
        assert code is None
        assert typed(value) == typed(expected)
    return expected


def assert_agree_in_both_forms(text: str) -> object | TextRefused:
    expected = assert_agree(text)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # a raw surrogate: its bytes are not UTF-8
        assert_agree(text.encode("utf-8", "surrogatepass"))
    else:
        assert typed(assert_agree(data)) == typed(expected)
    return expected


# --- strategies ----------------------------------------------------------------------------------

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
json_scalars = st.one_of(st.none(), st.booleans(), json_numbers, json_strings)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(json_strings, inner, max_size=4)
    ),
    max_leaves=20,
)
WHITESPACE = st.text(alphabet=" \t\n\r", max_size=2)


@st.composite
def written(draw: st.DrawFn) -> str:
    """A JSON value written by Python's json in any layout, with whitespace around it."""
    value = draw(json_values)
    indent = draw(st.sampled_from([None, 0, 1, "\t"]))
    separators = draw(st.sampled_from([(",", ":"), (", ", ": "), (" ,", " : ")]))
    text = json.dumps(value, indent=indent, separators=separators, ensure_ascii=draw(st.booleans()))
    return draw(WHITESPACE) + text + draw(WHITESPACE)


# Pieces a mutation may put into a text: structure, whitespace (and what is not JSON's), number
# pieces, names, escapes valid and not, lone surrogates raw and escaped, characters of each width.
INSERTS = (
    " ", "\t", "\n", "\r", "\x0b", "\xa0", "\ufeff", '"', "\\", ",", ":", "{", "}", "[", "]",
    "-", "+", ".", "0", "01", "1.", ".5", "1e", "1e+", "-0.0e-0", "NaN", "Infinity", "-Infinity",
    "true", "false", "null", "nul", "tru", "\x00", "\x1f", "é", "数", "😀", "\ud800", "\udc00",
    "\\u", "\\ud800", "\\udc00", "\\ud800\\u0041", "\\ud83d\\ude00", "\\u00e9", "\\u0022", '\\"',
    "\\\\", "\\/", "\\n", "\\x", "\\u12", "\\uzzzz", '"a":1,', '"a":', '{"a":1,"a":2}',
    "[" * (MAX_DEPTH + 1),
)  # fmt: skip


@st.composite
def mutated(draw: st.DrawFn) -> str:
    """A written value with a few edits: inserted, replaced or deleted characters, truncation,
    a member written twice, or the whole text nested in more arrays."""
    text = draw(written())
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        at = draw(st.integers(min_value=0, max_value=len(text)))
        edit = draw(st.sampled_from((*CHARACTER_EDITS, "duplicate", "nest")))
        if edit in CHARACTER_EDITS:
            text = character_edit(text, at, edit, draw(st.sampled_from(INSERTS)))
        elif edit == "duplicate":
            # The member at or after `at`, written again before it.
            start = text.find('"', at)
            end = text.find(",", start) + 1
            if start >= 0 and end > 0 and text.startswith("{", start - 1):
                text = text[:start] + text[start:end] + text[start:]
        else:
            depth = draw(st.integers(min_value=1, max_value=MAX_DEPTH + 2))
            text = "[" * depth + text + "]" * depth
    return text


# --- properties ----------------------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(text=written())
def test_every_written_value_is_parsed_alike(text: str) -> None:
    assert not isinstance(assert_agree_in_both_forms(text), TextRefused)


@PROPERTY_SETTINGS
@given(text=mutated())
@example(text='{"a":1,"a":2,"b":[}')  # a duplicate, then bad grammar: json_malformed
@example(text='{"a":1,"a":"\\ud800"}')  # a duplicate and a lone surrogate: json_invalid_unicode
@example(text='{"a":"\\ud800","a":1}')  # the lone surrogate in the member json drops
def test_every_mutated_text_is_parsed_alike(text: str) -> None:
    assert_agree_in_both_forms(text)


@PROPERTY_SETTINGS
@given(data=bytes_changed(written()))
@example(data=b'["\xed\xa0\x80"]')  # an encoded surrogate
@example(data=b'["\xc3"]')  # a truncated sequence
@example(data=b'["a"]\xff')  # a bad byte in trailing data
def test_every_mutated_byte_string_is_parsed_alike(data: bytes) -> None:
    assert_agree(data)


# --- each rule's edge ----------------------------------------------------------------------------

DIGITS = "1234567890" * 70


@pytest.mark.parametrize(
    "text",
    [
        "0", "-0", "-0.0", "0.0", "1.5", "1E400", "-1e400", "1e-400", "1E+2", "1e-2",
        "12345678901234567890",
        DIGITS[:640], DIGITS[:641], "-" + DIGITS[:639], "-" + DIGITS[:640], DIGITS[:700] + ".5",
        "01", "1.", ".5", "-", "+1", "1e", "1e+", "0x10", "NaN", "-NaN", "Infinity", "-Infinity",
    ],
)  # fmt: skip
def test_numbers_are_the_values_python_json_makes(text: str) -> None:
    for form in (text, f"[{text}]", f'{{"n":{text}}}'):
        assert_agree_in_both_forms(form)


@pytest.mark.parametrize(
    "text",
    [
        "", " ", "true", "false", "null", "nul", "truex", "[]", "{}", "[ ]", "{ }", "[1,]", "[,1]",
        '{"a":1,}', '{"a" 1}', '{a:1}', "[1 2]", '"a" "b"', "\ufeff{}", "{}\ufeff", "\x0b{}",
        "{}\x0b", "\xa0[]", " \t\n\r[ \t\n\r1 \t\n\r] \t\n\r", '"\\u0000"', '"\x00"', '"\x7f"',
        '"\\ud800"', '"\\udc00"', '"\\ud83d\\ude00"', '"\\ud83d"', '"\ud800"', '"\\ud800\\u0041"',
        '"\\uD83D\\uDE00"', '"\\u00e9\\u00E9"', '"\\x"', '"\\u12"', '"abc', '"\\"',
    ],
)  # fmt: skip
def test_grammar_and_unicode_edges_are_read_alike(text: str) -> None:
    assert_agree_in_both_forms(text)


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ('{"a":1,"a":1}', Code.JSON_DUPLICATE_MEMBER),
        ('[{"x":{"a":[],"a":{}}}]', Code.JSON_DUPLICATE_MEMBER),
        ('{"a":1,"\\u0061":2}', Code.JSON_DUPLICATE_MEMBER),  # the same name, spelled otherwise
        ('{"a":1,"A":2}', None),
        ('{"a":1,"a":2} x', Code.JSON_MALFORMED),  # step 3 comes first
        ('{"a":1,"a":2,"b":"\\udc00"}', Code.JSON_INVALID_UNICODE),  # and step 4
        ("[" * MAX_DEPTH + "]" * MAX_DEPTH, None),
        ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), Code.LIMIT_EXCEEDED),
        ("[" * (MAX_DEPTH + 1), Code.LIMIT_EXCEEDED),  # step 1 comes before step 3
        ("[" * (MAX_DEPTH + 1) + '"\\ud800"', Code.LIMIT_EXCEEDED),  # and before step 4
        ('{"a":1,"a":' + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "}", Code.LIMIT_EXCEEDED),
        ('{"a":' + '{"b":' * (MAX_DEPTH - 2) + "[]" + "}" * (MAX_DEPTH - 1), None),
        ('{"a":' + '{"b":' * (MAX_DEPTH - 1) + "[", Code.LIMIT_EXCEEDED),
        ("[" * 100_000, Code.LIMIT_EXCEEDED),
    ],
)
def test_codes_come_in_the_order_of_spec_e6(text: str, code: Code | None) -> None:
    expected = assert_agree_in_both_forms(text)
    assert (expected.code if isinstance(expected, TextRefused) else None) is code


def test_it_decides_duplicates_and_depth_and_leaves_the_rest() -> None:
    assert parse_in_c('{"a":1,"a":2}') == ("json_duplicate_member", None)
    assert parse_in_c("[" * 33) == ("limit_exceeded", None)
    assert parse_in_c(' {"a" : [1, 2.5, null]} ') == (None, {"a": [1, 2.5, None]})
    assert parse_in_c('"\\ud800"') is None
    assert parse_in_c("[1] x") is None


def test_it_takes_only_str_and_bytes() -> None:
    assert strict is not None
    with pytest.raises(TypeError):
        strict.parse(bytearray(b"{}"))


def test_a_caller_may_ask_for_another_depth_up_to_a_thousand() -> None:
    """A history file (SPEC H1) has no depth limit: its reader asks for a larger one."""
    assert strict is not None
    deep = "[" * 100 + "]" * 100
    assert strict.parse(deep) == ("limit_exceeded", None)
    assert strict.parse(deep, 100) == (None, json.loads(deep))
    assert strict.parse(deep, 99) == ("limit_exceeded", None)
    assert strict.parse('{"a":' * 50 + '{"a":1,"a":2}' + "}" * 50, 512) == (
        "json_duplicate_member",
        None,
    )
    for bad in (-1, 1001):
        with pytest.raises(ValueError, match="max_depth"):
            strict.parse("[]", bad)
    with pytest.raises(TypeError):
        strict.parse("[]", 32, 1)


def test_parse_strict_uses_it_and_falls_back_to_python() -> None:
    assert general.parse_strict_is_accelerated()
    assert general.parse_strict('{"a":1,"a":2}') == TextRefused(Code.JSON_DUPLICATE_MEMBER)
    assert general.parse_strict('"\\ud800"') == TextRefused(Code.JSON_INVALID_UNICODE)
    assert general.parse_strict("[1] x") == TextRefused(Code.JSON_MALFORMED)
    too_long = " " * (jsontext.MAX_TEXT_BYTES + 1)
    assert general.parse_strict(too_long) == TextRefused(Code.LIMIT_EXCEEDED)


# --- the read vectors ----------------------------------------------------------------------------


def read_vector_texts() -> Iterator[Any]:
    suite = load_vector_dirs([REPO / "conformance" / "vectors"])
    for case in suite.cases:
        if case.operation == "read":
            if "text_base64" in case.input:
                yield pytest.param(base64.b64decode(case.input["text_base64"]), id=case.id)
            else:
                yield pytest.param(case.input["text"], id=case.id)


@pytest.mark.parametrize("text", list(read_vector_texts()))
def test_every_read_vector_is_parsed_alike(text: str | bytes) -> None:
    if isinstance(text, bytes):
        assert_agree(text)
    else:
        assert_agree_in_both_forms(text)


# --- memory --------------------------------------------------------------------------------------


def test_no_path_leaks_memory() -> None:
    """Each way out of the parser, values made and refusals, frees what it made."""
    texts = [
        '{"a":[1,2.5,"é",null,true],"b":{"c":"数😀"},"d":' + DIGITS[:700] + "}",
        '{"a":[1,{"b":"x"}],"a":2}',
        '{"a":[1,{"b":"x"}],"c":' + "[" * MAX_DEPTH,
        '{"a":[1,{"b":"x"}],"c":"\\ud800"}',
        '{"a":[1,{"b":"x"}],"c":tru}',
        '{"a":[1,{"b":"x"}]} x',
    ]
    forms = [form for text in texts for form in (text, text.encode("utf-8"))]
    forms.append(b'{"a":[1,{"b":"x"}],"c":"\xff"}')
    for form in forms:  # warm up every cache first
        parse_in_c(form)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(2_000):
            for form in forms:
                parse_in_c(form)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 64 * 1024, f"{grown} bytes kept after 2,000 rounds"
