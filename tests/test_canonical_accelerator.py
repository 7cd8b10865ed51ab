"""The reader's C accelerator (``reasoning_replay._canonical``) reads exactly as its Python path.

``_fast.canonical.read_canonical`` is the canonical fast path in Python (SPEC C3 layout, SPEC E4
string rules); ``_canonical.read_canonical`` must accept exactly the same texts with the
same fields, and return ``None`` for every other, for ``str`` and for bytes (which must also be
valid UTF-8). Compared on texts the writer makes from arbitrary items, on those texts mutated,
and on every ``read`` vector; then the whole reader, with and without it, on every ``read``
vector, with the strict parser's accelerator (``_strict``, tests/test_strict_accelerator.py) on
and off as well, against the reader's statement (``record.read``).

These tests skip only where the accelerators are not built, and one test fails then, unless
``REASONING_REPLAY_ALLOW_PURE_PYTHON=1`` says a pure-Python install is meant: a build that
silently lost its compiler must not pass CI.
"""

from __future__ import annotations

import base64
import importlib
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from reasoning_replay import ReadResult, ReasoningReplayItem
from reasoning_replay.record import reader
from reasoning_replay.record._fast import canonical as canonical_path
from reasoning_replay.record._fast import general
from reasoning_replay.record.read import read_block
from reasoning_replay.record.writer import canonical_json
from reasoning_replay.suite.vectors import load_vector_dirs
from support import CHARACTER_EDITS, bytes_changed, character_edit, spelled

canonical: ModuleType | None
try:
    from reasoning_replay import _canonical as canonical
except ImportError:
    canonical = None

REPO = Path(__file__).resolve().parents[1]
SCHEMA = "fast-agent.openai-responses.reasoning-replay"
ALLOW_PURE_PYTHON = os.environ.get("REASONING_REPLAY_ALLOW_PURE_PYTHON") == "1"

needs_accelerator = pytest.mark.skipif(canonical is None, reason="the C accelerator is not built")

PROPERTY_SETTINGS = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

Fields = tuple[str, tuple[str, ...], str, tuple[str, ...] | None]


def python_fields(text: str) -> Fields | None:
    item = canonical_path.read_canonical(text)
    if item is None:
        return None
    return item.id, item.summary, item.encrypted_content, item.content


def accelerated(text: str | bytes) -> Fields | None:
    assert canonical is not None
    fields: Fields | None = canonical.read_canonical(text)
    return fields


def assert_agree(text: str) -> Fields | None:
    """The accelerator reads ``text``, as characters and as its UTF-8, as the Python path does.

    Equal strings are also equal in representation: CPython compares strings of different kinds
    as unequal, so this checks that the accelerator makes each string in its narrowest kind.
    """
    expected = python_fields(text)
    assert accelerated(text) == expected
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # a raw surrogate: its bytes are not UTF-8, never accepted
        assert accelerated(text.encode("utf-8", "surrogatepass")) is None
    else:
        assert accelerated(data) == expected
    return expected


def assert_agree_on_bytes(data: bytes) -> None:
    """Bytes are read as their characters are, and only when they are valid UTF-8 (SPEC E4)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        assert accelerated(data) is None
    else:
        assert accelerated(data) == python_fields(text)


def envelope_text(item_id: str, summary: list[str], ciphertext: str, content: Any) -> str:
    """The canonical text (SPEC C3) of an envelope, whatever its fields hold (no check)."""
    item: dict[str, Any] = {
        "type": "reasoning",
        "id": item_id,
        "summary": [{"type": "summary_text", "text": text} for text in summary],
        "encrypted_content": ciphertext,
    }
    if content is not None:
        item["content"] = [{"type": "reasoning_text", "text": text} for text in content]
    return canonical_json({"schema": SCHEMA, "version": 1, "item": item})


# --- strategies ----------------------------------------------------------------------------------

# Characters the writer escapes (SPEC C3), the ones JSON parsers get wrong, and every width.
TRICKY_CHARS = '"\\/\x00\x01\x08\t\n\x0b\x0c\r\x1f\x7f\x80\xe9\xff\u0100\u2028\ufeff\uffff数😀𝄞'
strings = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=st.sampled_from(TRICKY_CHARS), max_size=20),
    st.text(alphabet=st.characters(min_codepoint=0x10000, max_codepoint=0x10FFFF), max_size=6),
    st.text(alphabet=st.characters(max_codepoint=0xFF), max_size=60),
    st.text(alphabet=st.characters(max_codepoint=0x7F), min_size=16, max_size=200),
)
non_empty_strings = st.one_of(
    strings.filter(bool), st.from_regex(r"rs_[0-9a-f]{1,48}", fullmatch=True)
)
# The ciphertext as providers write it (base64), ASCII as the Python path reads it, or anything.
ciphertexts = st.one_of(
    st.binary(min_size=1, max_size=300).map(lambda raw: base64.b64encode(raw).decode("ascii")),
    st.text(alphabet=st.characters(max_codepoint=0x7F, exclude_characters='"'), min_size=1),
    strings,
)


@st.composite
def canonical_texts(draw: st.DrawFn) -> str:
    """Envelopes as the writer lays them out, with any strings; an empty id, an empty
    ciphertext or an empty content breaks SPEC E2, and the texts with one are read alike too."""
    content = draw(st.one_of(st.none(), st.lists(strings, max_size=3)))
    return envelope_text(
        draw(st.one_of(non_empty_strings, st.just(""))),
        draw(st.lists(strings, max_size=4)),
        draw(ciphertexts),
        content,
    )


@st.composite
def respelled_texts(draw: st.DrawFn) -> tuple[str, Fields]:
    """The canonical layout of a valid item, its strings spelled any way JSON allows: both paths
    read every spelling (a \\" in the ciphertext excepted), so every one is accepted."""
    item_id = draw(non_empty_strings)
    summary = draw(st.lists(strings, max_size=4))
    ciphertext = draw(ciphertexts.filter(lambda text: text.isascii() and text != ""))
    content = draw(st.one_of(st.none(), st.lists(strings, min_size=1, max_size=3)))

    def parts(part_type: str, texts: list[str]) -> str:
        return ",".join(f'{{"type":"{part_type}","text":{draw(spelled(text))}}}' for text in texts)

    ciphertext_literal = draw(spelled(ciphertext, quote_escape=False))
    text = (
        f'{{"schema":"{SCHEMA}","version":1,"item":{{"type":"reasoning",'
        f'"id":{draw(spelled(item_id))},"summary":[{parts("summary_text", summary)}],'
        f'"encrypted_content":{ciphertext_literal}'
        + ("" if content is None else f',"content":[{parts("reasoning_text", content)}]')
        + "}}"
    )
    fields = (item_id, tuple(summary), ciphertext, None if content is None else tuple(content))
    return text, fields


# Pieces a mutation may put into a text: structure, whitespace, escapes valid and not, lone
# surrogates raw and escaped, characters of every width.
INSERTS = (
    " ", "\t", "\n", "\r", '"', "\\", ",", ":", "{", "}", "[", "]", "}}", "null", "1", "\x00",
    "\x1f", "\x7f", "é", "数", "😀", "\ud800", "\udc00", "\\u", "\\ud800", "\\udc00",
    "\\ud800\\u0041", "\\ud83d\\ude00", "\\uD83D\\uDE00", "\\ud83d", "\\u00e9", "\\u00E9",
    "\\u0022", '\\"', "\\\\", "\\/", "\\n", "\\x", "\\u12", "\\uzzzz",
    '"id":"x",', '"text":"x",', '"type":"reasoning",', '{"type":"summary_text","text":""},',
    ',"content":[]', ',"content":null', ',"status":"completed"',
)  # fmt: skip


@st.composite
def mutated_texts(draw: st.DrawFn) -> str:
    """A canonical text with a few edits: replaced, inserted or deleted characters, truncation,
    a member written twice, or a character written as a (valid) escape."""
    text = draw(st.one_of(canonical_texts(), respelled_texts().map(lambda pair: pair[0])))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        at = draw(st.integers(min_value=0, max_value=len(text)))
        edit = draw(st.sampled_from((*CHARACTER_EDITS, "escape", "duplicate")))
        if edit in CHARACTER_EDITS:
            text = character_edit(text, at, edit, draw(st.sampled_from(INSERTS)))
        elif edit == "escape" and at < len(text) and ord(text[at]) < 0x10000:
            # Any character may be written \uXXXX inside a string: a layout the writer does not
            # use, but one the reader reads (outside a string it breaks the grammar).
            text = text[:at] + f"\\u{ord(text[at]):04x}" + text[at + 1 :]
        elif edit == "duplicate":
            # Repeat a member, or a whole part, where the writer put it once.
            member = draw(st.sampled_from(('"id":', '"text":', '"type":', '{"type":"summary')))
            found = text.find(member, at)
            if found >= 0:
                end = text.find(",", found) + 1 or len(text)
                text = text[:found] + text[found:end] + text[found:]
    return text


# --- the accelerator agrees with the Python path -------------------------------------------------


@pytest.mark.parametrize("module", ["_canonical", "_strict", "_history"])
def test_accelerators_are_built_in_the_standard_install(module: str) -> None:
    """``pip install .`` and ``pip install -e .`` compile them (hatch_build.py) where there is a
    C compiler; a pure-Python install is only expected with REASONING_REPLAY_ALLOW_PURE_PYTHON=1."""
    if ALLOW_PURE_PYTHON:
        pytest.skip("REASONING_REPLAY_ALLOW_PURE_PYTHON=1: a pure-Python install is allowed")
    try:
        __import__(f"reasoning_replay.{module}")
    except ImportError:
        pytest.fail(
            f"reasoning_replay.{module} is not built: hatch_build.py could not compile it "
            "(see the build's warning), or the install predates it"
        )
    if os.environ.get("REASONING_REPLAY_PURE_PYTHON", "") in ("", "0"):
        assert reader.ACCELERATED
        assert reader.parse_strict_is_accelerated()


@needs_accelerator
def test_the_environment_variable_turns_both_accelerators_off() -> None:
    check = (
        "from reasoning_replay.record import reader; "
        "from reasoning_replay.history import history_files; "
        "print(reader.ACCELERATED, reader.parse_strict_is_accelerated(), "
        "history_files._accelerator is not None)"
    )

    def accelerated_with(value: str | None) -> str:
        env = {k: v for k, v in os.environ.items() if k != "REASONING_REPLAY_PURE_PYTHON"}
        if value is not None:
            env["REASONING_REPLAY_PURE_PYTHON"] = value
        completed = subprocess.run(
            [sys.executable, "-c", check], env=env, capture_output=True, text=True, check=True
        )
        return completed.stdout.strip()

    assert accelerated_with(None) == "True True True"
    assert accelerated_with("0") == "True True True"
    assert accelerated_with("1") == "False False False"


@needs_accelerator
def test_it_takes_only_str_and_bytes() -> None:
    assert canonical is not None
    with pytest.raises(TypeError):
        canonical.read_canonical(bytearray(b"{}"))
    assert canonical.read_canonical("") is None
    assert canonical.read_canonical(b"") is None


GOLDEN = envelope_text("rs_1", ["é"], "c", None)


@needs_accelerator
@pytest.mark.parametrize(
    ("text", "accepted"),
    [
        (GOLDEN, True),
        (envelope_text("rs_1", [], "c", ["a", "b"]), True),
        (envelope_text("", ["s"], "c", None), False),  # SPEC E2: an empty id
        (envelope_text("rs_1", ["s"], "", None), False),  # and an empty ciphertext
        (envelope_text("rs_1", ["s"], "c", []), False),  # SPEC E3: content []
        (GOLDEN.replace('"é"', r'"\u00e9"'), True),  # any escape, not only the writer's
        (GOLDEN.replace('"é"', r'"\ud83d\ude00"'), True),  # an escaped pair
        (GOLDEN.replace('"é"', r'"\ud83d"'), False),  # SPEC E4: an escaped lone surrogate
        (GOLDEN.replace('"é"', r'"\ude00\ud83d"'), False),  # a pair in the wrong order
        (GOLDEN.replace('"é"', '"\ud83d\ude00"'), False),  # raw surrogates (SPEC E6 step 2)
        (GOLDEN.replace('"é"', '"\x1f"'), False),  # a raw control character
        (GOLDEN.replace('"é"', r'"\x"'), False),  # an escape JSON does not have
        (GOLDEN.replace('"c"', r'"c\"d"'), False),  # the Python path's ciphertext limit
        (GOLDEN.replace('"c"', r'"c\u0022d"'), True),  # a quote escaped otherwise is read
        (GOLDEN.replace('"c"', '"cé"'), False),  # the other limit: a non-ASCII ciphertext
        (GOLDEN.replace('"c"', r'"c\u00e9"'), True),
        (GOLDEN.replace(',"summary"', ', "summary"'), False),  # whitespace: not the layout
        (GOLDEN + " ", False),
        (GOLDEN[:-1], False),
    ],
)
def test_examples(text: str, accepted: bool) -> None:
    fields = assert_agree(text)
    assert (fields is not None) is accepted


@needs_accelerator
@pytest.mark.parametrize("parts", [0, 1, 11, 12, 13, 100])
def test_any_number_of_parts_is_read(parts: int) -> None:
    """Literals are noted before any string is made; past a dozen, on the heap (_canonical.c)."""
    texts = [f"part {index}\n" for index in range(parts)]
    text = envelope_text("rs_1", texts, "c", texts or None)
    assert assert_agree(text) == ("rs_1", tuple(texts), "c", tuple(texts) or None)
    assert assert_agree(text.replace('"c"', '"c"}', 1)) is None  # refused after all the parts


# Long runs of plain characters are tested many at a time (16 bytes, _canonical.c): a character
# that ends a run, or widens the string, must be seen wherever it falls in a block.
RUN_LENGTHS = (1, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 40)


# Each with whether a string may hold it as written (raw): the escapes are invalid ones.
ODD_CHARACTERS = (
    ("\x00", False),
    ("\x1f", False),
    ('"', False),
    ("\\", False),
    ("\\x", False),
    ("\\ud800", False),
    ("\ud800", False),
    ("\udfff", False),
    ("\x7f", True),
    ("\x80", True),
    ("\u0100", True),
    ("\uffff", True),
    ("\U0001f600", True),
)


@needs_accelerator
@pytest.mark.parametrize("wide", ["", "é", "数", "😀"], ids=["ascii", "latin1", "ucs2", "ucs4"])
@pytest.mark.parametrize(("odd", "raw_ok"), ODD_CHARACTERS)
@pytest.mark.parametrize("field", ["id", "summary", "ciphertext", "content"])
def test_a_character_is_seen_wherever_it_falls_in_a_long_run(
    wide: str, odd: str, raw_ok: bool, field: str
) -> None:
    for length in RUN_LENGTHS:
        for at in range(length):
            value = "a" * at + odd + "a" * (length - at)
            strings = {name: "rs_1" if name == "id" else "c" for name in ("id", "ciphertext")}
            strings[field] = value
            summary = [wide + "s", value] if field == "summary" else [wide + "s"]
            content = [value] if field == "content" else None
            text = envelope_text(strings["id"], summary, strings["ciphertext"], content)
            # Written raw, as the writer would not: a raw control character, quote or
            # backslash breaks the literal.
            text = text.replace(canonical_json(value), f'"{value}"')
            plain = raw_ok and (field != "ciphertext" or odd.isascii())
            assert (assert_agree(text) is not None) is plain


@needs_accelerator
@pytest.mark.parametrize("wide", ["é", "数", "😀"], ids=["latin1", "ucs2", "ucs4"])
@pytest.mark.parametrize("gap", [0, 1, 7, 8, 15, 16, 17])
def test_a_wide_character_just_before_the_end_of_a_run_widens_the_string(
    wide: str, gap: int
) -> None:
    """A run ends inside a block of 16 bytes (an escape here): the characters of the block
    before it are the run's, and a wide one among them decides the string's kind."""
    for at in range(40):
        value = "a" * at + wide + "b" * gap + "\n" + "c" * 20
        text = envelope_text("rs_1", [value], "c", [value])
        assert assert_agree(text) == ("rs_1", (value,), "c", (value,))


@needs_accelerator
@PROPERTY_SETTINGS
@given(text=canonical_texts())
def test_every_canonical_text_is_read_alike(text: str) -> None:
    assert_agree(text)


@needs_accelerator
@PROPERTY_SETTINGS
@given(pair=respelled_texts())
def test_every_spelling_of_every_string_is_read(pair: tuple[str, Fields]) -> None:
    text, fields = pair
    assert assert_agree(text) == fields


@needs_accelerator
@PROPERTY_SETTINGS
@given(
    item_id=strings.filter(bool),
    summary=st.lists(strings, max_size=4),
    ciphertext=ciphertexts.filter(bool),
    content=st.one_of(st.none(), st.lists(strings, min_size=1, max_size=3)),
)
def test_every_item_the_writer_writes_is_accepted(
    item_id: str, summary: list[str], ciphertext: str, content: list[str] | None
) -> None:
    """The writer's texts of a valid item are read back to the item, by both paths, unless the
    ciphertext holds a quote or a non-ASCII character (the Python path's limits)."""
    text = envelope_text(item_id, summary, ciphertext, content)
    fields = assert_agree(text)
    expected = (item_id, tuple(summary), ciphertext, None if content is None else tuple(content))
    plain = ciphertext.isascii() and '"' not in ciphertext
    assert fields == (expected if plain else None)


@needs_accelerator
@PROPERTY_SETTINGS
@given(text=mutated_texts())
@example(text=GOLDEN.replace('{"type":"summary_text"', '{"type":"summary_text","text":"x"', 1))
@example(text=GOLDEN.replace('"id":"rs_1"', '"id":"rs_1","id":"rs_1"'))
def test_every_mutated_text_is_read_alike(text: str) -> None:
    assert_agree(text)


@needs_accelerator
@PROPERTY_SETTINGS
@given(data=bytes_changed(canonical_texts()))
@example(data=GOLDEN.encode().replace("é".encode(), b"\xed\xa0\x80"))  # an encoded surrogate
@example(data=GOLDEN.encode().replace("é".encode(), b"\xc3"))  # a truncated sequence
def test_every_mutated_byte_string_is_read_alike(data: bytes) -> None:
    assert_agree_on_bytes(data)


# --- the read vectors ----------------------------------------------------------------------------


def read_vector_inputs() -> Iterator[Any]:
    suite = load_vector_dirs([REPO / "conformance" / "vectors"])
    assert not suite.problems
    for case in suite.cases:
        if case.operation != "read":
            continue
        if "text_base64" in case.input:
            text: str | bytes = base64.b64decode(case.input["text_base64"])
        else:
            text = case.input["text"]
        yield pytest.param(text, id=case.id)


READ_VECTORS = list(read_vector_inputs())


def test_there_are_read_vectors() -> None:
    assert len(READ_VECTORS) > 400


@needs_accelerator
@pytest.mark.parametrize("text", READ_VECTORS)
def test_every_read_vector_is_read_alike(text: str | bytes) -> None:
    if isinstance(text, bytes):
        assert_agree_on_bytes(text)
    else:
        assert_agree(text)


def both_forms(text: str | bytes) -> list[str | bytes]:
    """The vector's text as given, and in the other form, when it has one."""
    if isinstance(text, bytes):
        try:
            return [text, text.decode("utf-8")]
        except UnicodeDecodeError:
            return [text]
    try:
        return [text, text.encode("utf-8")]
    except UnicodeEncodeError:
        return [text]


STRICT_READ_ENVELOPE = general._envelope_accelerator


def read_with(
    accelerator: Callable[[str | bytes], Fields | None] | None,
    strict_accelerator: Callable[[str | bytes], Any] | None,
    text: str | bytes,
) -> ReadResult:
    """The fast reader with these accelerators; ``_strict``'s envelope reader goes with its
    parser (both are of ``_strict``), on or off."""
    saved = canonical_path._accelerator, general._accelerator, general._envelope_accelerator
    read_envelope = None if strict_accelerator is None else STRICT_READ_ENVELOPE
    canonical_path._accelerator, general._accelerator = accelerator, strict_accelerator
    general._envelope_accelerator = read_envelope
    try:
        return general.read(text)
    finally:
        (
            canonical_path._accelerator,
            general._accelerator,
            general._envelope_accelerator,
        ) = saved


def verdicts_with_and_without(text: str | bytes) -> list[ReadResult]:
    """The fast reader's verdicts with both accelerators, either, and neither; then the
    statement's (SPEC E6 in Python)."""
    assert canonical is not None
    strict_parse = importlib.import_module("reasoning_replay._strict").parse
    return [
        read_with(accelerator, strict_accelerator, text)
        for accelerator in (canonical.read_canonical, None)
        for strict_accelerator in (strict_parse, None)
    ] + [read_block(text)]


@needs_accelerator
@pytest.mark.parametrize("text", READ_VECTORS)
def test_the_reader_gives_every_read_vector_one_verdict_with_or_without_them(
    text: str | bytes,
) -> None:
    for form in both_forms(text):
        with_both, *others = verdicts_with_and_without(form)
        assert others == [with_both] * 4
        assert with_both.item is None or type(with_both.item) is ReasoningReplayItem


@needs_accelerator
@PROPERTY_SETTINGS
@given(text=st.one_of(canonical_texts(), mutated_texts()))
def test_the_reader_gives_every_text_one_verdict_with_or_without_them(text: str) -> None:
    for form in both_forms(text):
        with_both, *others = verdicts_with_and_without(form)
        assert others == [with_both] * 4
