"""Property tests (hypothesis) over capture, the strict reader and the writer's canonical bytes.

(a) any completed item round-trips capture → bytes → read → provider input, allowlisted and
    with its summaries intact;
(b) the reader is total, and its verdict equals the envelope schema's on every JSON value (S2),
    and on every text that a strict JSON parser reads without breaking an E4 rule;
(c) canonical text is a fixed point of read → write and of provider input → capture.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from reasoning_replay import (
    Code,
    ReasoningReplayItem,
    canonicalize_completed_reasoning_output_item,
    parse_reasoning_replay_envelope,
    serialize_reasoning_replay_envelope,
    validator_for,
)
from reasoning_replay.schemas import ENVELOPE_SCHEMA_ID, ITEM_SCHEMA_ID
from support import strict_verdict

SCHEMA = "fast-agent.openai-responses.reasoning-replay"
ALLOWED_ITEM_FIELDS = {"type", "id", "summary", "encrypted_content", "content"}
FINAL_SOURCES = ("response.completed", "response.incomplete", "response.output_item.done")

ENVELOPE_VALIDATOR = validator_for(ENVELOPE_SCHEMA_ID)
ITEM_VALIDATOR = validator_for(ITEM_SCHEMA_ID)

PROPERTY_SETTINGS = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# --- strategies ----------------------------------------------------------------------------------

TRICKY_CHARS = '"\\/\x00\x01\x08\t\n\x0b\x0c\r\x1f\x7f\u0080\u2028\u2029\ufeff\uffffé数😀𝄞 '
# st.text() never yields surrogates: every generated string is a string of Unicode scalar values.
tricky_text = st.one_of(
    st.text(max_size=20),
    st.text(alphabet=st.sampled_from(TRICKY_CHARS), max_size=12),
    st.text(alphabet=st.characters(min_codepoint=0x10000, max_codepoint=0x10FFFF), max_size=4),
)
non_empty_text = st.one_of(
    st.text(min_size=1, max_size=30),
    st.text(alphabet=st.sampled_from(TRICKY_CHARS), min_size=1, max_size=12),
    st.from_regex(r"rs_[0-9a-f]{8,48}", fullmatch=True),
)
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=10),
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.text(max_size=8), children, max_size=4),
    ),
    max_leaves=20,
)
sdk_extra_fields = st.dictionaries(
    st.text(max_size=12).filter(lambda name: name not in ALLOWED_ITEM_FIELDS | {"status"}),
    json_values,
    max_size=4,
)
part_extras = st.dictionaries(
    st.text(max_size=8).filter(lambda name: name not in {"type", "text"}),
    json_scalars,
    max_size=2,
)


@st.composite
def parts(draw: st.DrawFn, part_type: str, min_size: int = 0) -> list[dict[str, Any]]:
    texts = draw(st.lists(tricky_text, min_size=min_size, max_size=5))
    return [{"type": part_type, "text": text, **draw(part_extras)} for text in texts]


ABSENT = object()


@st.composite
def completed_output_items(draw: st.DrawFn) -> dict[str, Any]:
    """A completed reasoning output item as an SDK could return it, with extras and status."""
    item: dict[str, Any] = draw(sdk_extra_fields)
    item["type"] = "reasoning"
    item["id"] = draw(non_empty_text)
    item["encrypted_content"] = draw(non_empty_text)
    item["summary"] = draw(parts("summary_text"))
    content = draw(st.sampled_from(["absent", "null", "empty", "parts"]))
    if content == "null":
        item["content"] = None
    elif content == "empty":
        item["content"] = []
    elif content == "parts":
        item["content"] = draw(parts("reasoning_text", min_size=1))
    status = draw(st.sampled_from([ABSENT, None, "completed"]))
    if status is not ABSENT:
        item["status"] = status
    keys = list(item)
    order = draw(st.permutations(keys))
    return {key: item[key] for key in order}


class FakeSdkObject:
    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def model_dump(self, *, mode: str) -> dict[str, Any]:
        assert mode == "json"
        return self._data


def capture(output_item: object, source: str = "response.output_item.done") -> Any:
    return canonicalize_completed_reasoning_output_item(output_item, source=source)


def verdict(text: str | bytes) -> tuple[Code | None, ReasoningReplayItem | None]:
    result = parse_reasoning_replay_envelope(text)
    assert (result.code is None) == (result.item is not None)
    return result.code, result.item


# --- (a) capture → bytes → read → provider input --------------------------------------------------


@PROPERTY_SETTINGS
@given(
    output_item=completed_output_items(),
    source=st.sampled_from(FINAL_SOURCES),
    as_sdk_object=st.booleans(),
)
def test_any_completed_item_round_trips_to_provider_input(
    output_item: dict[str, Any], source: str, as_sdk_object: bool
) -> None:
    subject = FakeSdkObject(output_item) if as_sdk_object else output_item
    captured = capture(subject, source=source)
    assert captured.code is None, captured.code
    assert captured.envelope_text is not None

    read = parse_reasoning_replay_envelope(captured.envelope_text.encode("utf-8"))
    actual = read.provider_input()

    assert actual is not None
    assert set(actual) <= ALLOWED_ITEM_FIELDS
    assert actual["type"] == "reasoning"
    assert actual["id"] == output_item["id"]
    assert actual["encrypted_content"] == output_item["encrypted_content"]
    assert actual["summary"] == [
        {"type": "summary_text", "text": part["text"]} for part in output_item["summary"]
    ]
    expected_content = output_item.get("content")
    if expected_content:
        assert actual["content"] == [
            {"type": "reasoning_text", "text": part["text"]} for part in expected_content
        ]
    else:
        assert "content" not in actual
    assert list(actual) == [
        name for name in ("type", "id", "summary", "encrypted_content", "content") if name in actual
    ]
    ITEM_VALIDATOR.validate(actual)
    ENVELOPE_VALIDATOR.validate(json.loads(captured.envelope_text))
    assert parse_reasoning_replay_envelope(captured.envelope_text).item == read.item


@PROPERTY_SETTINGS
@given(output_item=completed_output_items())
def test_no_unknown_sdk_field_reaches_the_envelope_text(output_item: dict[str, Any]) -> None:
    captured = capture(output_item)
    assert captured.envelope_text is not None

    envelope = json.loads(captured.envelope_text)

    assert list(envelope) == ["schema", "version", "item"]
    assert set(envelope["item"]) <= ALLOWED_ITEM_FIELDS
    for part in envelope["item"]["summary"] + envelope["item"].get("content", []):
        assert list(part) == ["type", "text"]


# --- (b) the reader is total and agrees with the schema -------------------------------------------


@st.composite
def perturbed_envelopes(draw: st.DrawFn) -> object:
    """A canonical envelope value with a few random perturbations at any level."""
    captured = capture(draw(completed_output_items()))
    assert captured.envelope_text is not None
    envelope: dict[str, Any] = json.loads(captured.envelope_text)
    containers: list[Any] = [
        envelope,
        envelope["item"],
        *envelope["item"]["summary"],
        *envelope["item"].get("content", []),
    ]
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        target = draw(st.sampled_from(containers))
        if not isinstance(target, dict):
            continue
        action = draw(st.sampled_from(["set", "delete", "add", "version", "content"]))
        if action == "set" and target:
            target[draw(st.sampled_from(sorted(target)))] = draw(json_values)
        elif action == "delete" and target:
            del target[draw(st.sampled_from(sorted(target)))]
        elif action == "add":
            target[
                draw(
                    st.sampled_from(
                        [
                            "status",
                            "schema",
                            "version",
                            "item",
                            "type",
                            "text",
                            "content",
                            "extra",
                            "id",
                            "encrypted_content",
                        ]
                    )
                )
            ] = draw(json_values)
        elif action == "version":
            envelope["version"] = draw(
                st.sampled_from([1, 1.0, True, False, "1", 2, 0, None, 1.5, [1], -1])
            )
        elif action == "content" and isinstance(envelope.get("item"), dict):
            envelope["item"]["content"] = draw(st.sampled_from([None, [], "x", [{"type": "x"}]]))
    return envelope


any_json_value = st.one_of(json_values, perturbed_envelopes())


@PROPERTY_SETTINGS
@given(
    value=any_json_value,
    ensure_ascii=st.booleans(),
    indent=st.sampled_from([None, 0, 2]),
    as_bytes=st.booleans(),
)
def test_reader_verdict_on_any_json_value_equals_the_schema_verdict(
    value: object, ensure_ascii: bool, indent: int | None, as_bytes: bool
) -> None:
    text = json.dumps(value, ensure_ascii=ensure_ascii, indent=indent)
    subject: str | bytes = text.encode("utf-8") if as_bytes else text

    actual = parse_reasoning_replay_envelope(subject)
    event(f"verdict: {actual.code or 'resumable'}")

    assert actual.resumable == ENVELOPE_VALIDATOR.is_valid(value)
    assert (actual.code, actual.item) == strict_verdict(subject)
    if actual.resumable:
        assert actual.provider_input() == value["item"]  # type: ignore[index]


TEXT_CODES = frozenset(
    (
        Code.LIMIT_EXCEEDED,
        Code.JSON_INVALID_UNICODE,
        Code.JSON_MALFORMED,
        Code.JSON_DUPLICATE_MEMBER,
    )
)


def text_depth(chars: str) -> int:
    """SPEC E4.1: the most arrays/objects open at one point, counted outside string literals."""
    depth = deepest = 0
    in_string = escaped = False
    for char in chars:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}" and depth:
            depth -= 1
    return deepest


def has_surrogate(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


class _NonJsonToken(Exception):
    pass


def python_oracle(text: str | bytes) -> Code | tuple[object]:
    """SPEC E6 steps 1–5 decided with Python's json, independently of the reference.

    Returns the code of the first text rule ``text`` breaks, or ``(value,)`` when it breaks none.
    """
    chars = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    if text_depth(chars) > 32:
        return Code.LIMIT_EXCEEDED
    if isinstance(text, bytes):
        try:
            chars = text.decode("utf-8")
        except UnicodeDecodeError:
            return Code.JSON_INVALID_UNICODE
    if has_surrogate(chars):
        return Code.JSON_INVALID_UNICODE
    if chars.startswith("\ufeff"):
        return Code.JSON_MALFORMED
    found = {"surrogate": False, "duplicate": False}

    def note_strings(value: object) -> None:
        if isinstance(value, str) and has_surrogate(value):
            found["surrogate"] = True
        elif isinstance(value, list):
            for element in value:
                note_strings(element)

    def pairs_hook(pairs: list[tuple[str, object]]) -> dict[str, object]:
        for name, member in pairs:  # every pair, including those a duplicate will drop
            note_strings(name)
            note_strings(member)
        if len({name for name, _ in pairs}) != len(pairs):
            found["duplicate"] = True
        return dict(pairs)

    def no_constant(_token: str) -> object:
        raise _NonJsonToken

    try:
        value = json.loads(chars, object_pairs_hook=pairs_hook, parse_constant=no_constant)
    except (ValueError, _NonJsonToken):  # JSONDecodeError is a ValueError
        return Code.JSON_MALFORMED
    note_strings(value)
    if found["surrogate"]:
        return Code.JSON_INVALID_UNICODE
    if found["duplicate"]:
        return Code.JSON_DUPLICATE_MEMBER
    return (value,)


MUTATION_CHARS = st.sampled_from(
    [*'{}[]":,\\ \t\n0123456789.eE-+truefalsnNaIiy', "\ufeff", "\ud800", "é", "\x00", "\\u"]
)


MEMBER_SNIPPETS = st.sampled_from(
    [
        '"id":"rs_dup",',
        '"schema":"' + SCHEMA + '",',
        '"version":1,',
        '"version":2,',
        '"type":"reasoning",',
        '"text":"",',
        '"item":{},',
        '"\\ud800":1,',
        '"a":"\\udc00",',
        '"encrypted_content":"c",',
        '"status":"completed",',
        '"summary":[],',
        '"content":[],',
    ]
)


@st.composite
def mutated_envelope_texts(draw: st.DrawFn) -> str | bytes:
    captured = capture(draw(completed_output_items()))
    assert captured.envelope_text is not None
    chars = list(captured.envelope_text)
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        operation = draw(st.sampled_from(["insert", "delete", "replace", "member"]))
        position = draw(st.integers(min_value=0, max_value=max(len(chars) - 1, 0)))
        openers = [index for index, char in enumerate(chars) if char == "{"]
        if operation == "member" and openers:
            # a (possibly duplicate) member right after an object's opening brace
            chars.insert(draw(st.sampled_from(openers)) + 1, draw(MEMBER_SNIPPETS))
        elif operation == "insert":
            chars.insert(position, draw(MUTATION_CHARS))
        elif chars and operation == "delete":
            del chars[position]
        elif chars:
            chars[position] = draw(MUTATION_CHARS)
    text = "".join(chars)
    if draw(st.booleans()):
        return text.encode("utf-8", "surrogatepass")
    return text


any_text = st.one_of(
    st.text(max_size=40),
    st.binary(max_size=40),
    st.text(alphabet=st.sampled_from(list('{}[]":,\\ 01aeflnrstu')), max_size=30),
    mutated_envelope_texts(),
)


@PROPERTY_SETTINGS
@given(text=any_text)
@example(text='{"a":"\\ud800","a":1}')  # an escaped lone surrogate in a dropped duplicate
@example(text='{"a":1,"a":"\\ud800"}')
@example(text=b'\xef\xbb\xbf{"a":1,"a":1}')
@example(text="[" * 33 + '"\\ud800')
def test_reader_never_raises_and_agrees_with_the_schema_on_any_text(text: str | bytes) -> None:
    actual = parse_reasoning_replay_envelope(text)
    event(f"verdict: {actual.code or 'resumable'}")

    expected = python_oracle(text)

    if isinstance(expected, Code):
        assert actual.code is expected
    else:
        (value,) = expected
        assert actual.resumable == ENVELOPE_VALIDATOR.is_valid(value)
        assert actual.code not in TEXT_CODES
    assert (actual.code, actual.item) == strict_verdict(text)


@PROPERTY_SETTINGS
@given(text=mutated_envelope_texts())
def test_str_and_bytes_of_one_text_get_the_same_verdict(text: str | bytes) -> None:
    as_str = text.decode("utf-8", "surrogatepass") if isinstance(text, bytes) else text
    try:
        as_bytes = as_str.encode("utf-8")
    except UnicodeEncodeError:
        return  # a surrogate has no UTF-8 form; both forms are covered by the test above

    assert verdict(as_bytes) == verdict(as_str)


# --- (c) canonical bytes are a fixed point --------------------------------------------------------


@PROPERTY_SETTINGS
@given(output_item=completed_output_items())
def test_canonical_text_is_a_fixed_point_of_read_and_write(output_item: dict[str, Any]) -> None:
    captured = capture(output_item)
    assert captured.envelope_text is not None
    text = captured.envelope_text

    read = parse_reasoning_replay_envelope(text)
    assert read.item is not None
    rewritten = serialize_reasoning_replay_envelope(read.item)
    recaptured = capture(read.provider_input(), source="response.completed")

    assert rewritten == text
    assert recaptured.envelope_text == text
    assert capture(FakeSdkObject(read.provider_input() or {})).envelope_text == text


@PROPERTY_SETTINGS
@given(output_item=completed_output_items(), indent=st.sampled_from([None, 1, 4]))
def test_any_equal_text_reads_to_the_item_whose_canonical_text_is_the_captured_one(
    output_item: dict[str, Any], indent: int | None
) -> None:
    captured = capture(output_item)
    assert captured.envelope_text is not None
    envelope = json.loads(captured.envelope_text)
    reordered = {
        "item": dict(reversed(list(envelope["item"].items()))),
        "version": 1,
        "schema": SCHEMA,
    }
    loose = json.dumps(reordered, ensure_ascii=True, indent=indent)

    read = parse_reasoning_replay_envelope(loose)

    assert read.item == captured.item
    assert read.item is not None
    assert serialize_reasoning_replay_envelope(read.item) == captured.envelope_text
