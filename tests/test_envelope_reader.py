"""The strict reader (SPEC §3, E1–E6): one block text in, one verdict out, never an exception."""

from __future__ import annotations

import json
from typing import Any

import pytest
from reasoning_replay import (
    Code,
    ReadResult,
    ReasoningReplayItem,
    parse_reasoning_replay_envelope,
)
from support import strict_verdict

SCHEMA = "fast-agent.openai-responses.reasoning-replay"
MIB16 = 16 * 1024 * 1024

GOLDEN_TEXT = (
    '{"schema":"fast-agent.openai-responses.reasoning-replay","version":1,"item":{"type":'
    '"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"é"}],'
    '"encrypted_content":"c"}}'
)

GOLDEN_ITEM = ReasoningReplayItem(id="rs_1", summary=("é",), encrypted_content="c")


def item_value(**overrides: Any) -> dict[str, Any]:
    """A canonical item value; ``...`` deletes a member."""
    item: dict[str, Any] = {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "s1"}, {"type": "summary_text", "text": "s2"}],
        "encrypted_content": "ciphertext",
    }
    for name, value in overrides.items():
        if value is ...:
            item.pop(name, None)
        else:
            item[name] = value
    return item


def envelope_value(item: Any = None, **overrides: Any) -> dict[str, Any]:
    envelope: dict[str, Any] = {
        "schema": SCHEMA,
        "version": 1,
        "item": item_value() if item is None else item,
    }
    if item is ...:
        del envelope["item"]
    for name, value in overrides.items():
        if value is ...:
            envelope.pop(name, None)
        else:
            envelope[name] = value
    return envelope


def text_of(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def read(text: str | bytes) -> ReadResult:
    return parse_reasoning_replay_envelope(text)


def code_of(text: str | bytes) -> Code | None:
    actual = read(text)
    assert actual.resumable == (actual.code is None)
    return actual.code


VALID_TEXT = text_of(envelope_value())


# --- canonical envelopes -------------------------------------------------------------------------


def test_golden_envelope_is_resumable_with_its_item() -> None:
    actual = read(GOLDEN_TEXT)

    assert actual.resumable
    assert actual.code is None
    assert actual.item == GOLDEN_ITEM


def test_golden_envelope_bytes_are_resumable_with_its_item() -> None:
    actual = read(GOLDEN_TEXT.encode("utf-8"))

    assert actual.item == GOLDEN_ITEM


def test_provider_input_is_the_item_exactly_without_envelope_members() -> None:
    value = envelope_value(item_value(content=[{"type": "reasoning_text", "text": "c"}]))

    actual = read(text_of(value)).provider_input()

    assert actual is not None
    assert actual == value["item"]
    assert "schema" not in actual
    assert "version" not in actual


def test_non_resumable_block_has_no_provider_input() -> None:
    actual = read('{"type":"reasoning","encrypted_content":"c"}')

    assert actual.provider_input() is None
    assert actual.item is None


@pytest.mark.parametrize("version", ["1.0", "1e0", "1E0", "10e-1", "1.00000", "0.1e1"])
def test_version_one_written_as_another_number_is_accepted(version: str) -> None:
    text = VALID_TEXT.replace('"version":1,', f'"version":{version},')
    assert text != VALID_TEXT

    actual = read(text)

    assert actual.resumable
    assert actual.item == read(VALID_TEXT).item


def test_empty_summary_and_empty_part_text_are_resumable() -> None:
    text = text_of(envelope_value(item_value(summary=[])))
    assert read(text).resumable

    text = text_of(envelope_value(item_value(summary=[{"type": "summary_text", "text": ""}])))
    assert read(text).item == ReasoningReplayItem("rs_1", ("",), "ciphertext")


@pytest.mark.parametrize(
    "text",
    [
        " \n\t" + VALID_TEXT + "\r\n ",
        json.dumps(envelope_value(), indent=2),
        json.dumps(envelope_value()),
        text_of({"item": item_value(), "version": 1, "schema": SCHEMA}),
        text_of(envelope_value(dict(reversed(list(item_value().items()))))),
        text_of(
            envelope_value(
                item_value(
                    summary=[
                        {"text": "s1", "type": "summary_text"},
                        {"text": "s2", "type": "summary_text"},
                    ]
                )
            )
        ),
        VALID_TEXT.replace('"rs_1"', '"\\u0072s_1"'),
        VALID_TEXT.replace('"rs_1"', '"rs\\u005f1"'),
        VALID_TEXT.replace('"ciphertext"', '"cipher\\u0074ext"'),
        VALID_TEXT.replace('"type":"reasoning"', '"type":"\\u0072easoning"'),
        VALID_TEXT.replace('"schema"', '"\\u0073chema"'),
        VALID_TEXT.replace('"item"', '"it\\u0065m"'),
        json.dumps(envelope_value(), ensure_ascii=True),
    ],
    ids=[
        "surrounding-whitespace",
        "indented",
        "spaced",
        "reordered-envelope",
        "reordered-item",
        "reordered-parts",
        "escaped-id",
        "escaped-id-2",
        "escaped-ciphertext",
        "escaped-type",
        "escaped-member-name",
        "escaped-item-name",
        "ensure-ascii",
    ],
)
def test_equal_value_written_differently_is_resumable_with_the_same_item(text: str) -> None:
    actual = read(text)

    assert actual.resumable, actual.code
    assert actual.item == ReasoningReplayItem("rs_1", ("s1", "s2"), "ciphertext")


def test_escaped_solidus_equals_a_raw_solidus() -> None:
    raw = text_of(envelope_value(item_value(encrypted_content="a/b+c==")))
    escaped = raw.replace("a/b", "a\\/b")
    assert escaped != raw

    actual = read(escaped)

    assert actual.item == read(raw).item
    assert actual.item is not None
    assert actual.item.encrypted_content == "a/b+c=="


def test_escaped_non_ascii_equals_raw_non_ascii() -> None:
    escaped = GOLDEN_TEXT.replace('"é"', '"\\u00e9"')

    assert read(escaped).item == GOLDEN_ITEM


def test_surrogate_pair_escape_equals_raw_astral_character() -> None:
    raw = text_of(envelope_value(item_value(summary=[{"type": "summary_text", "text": "😀"}])))
    escaped = raw.replace("😀", "\\ud83d\\ude00")

    actual = read(escaped)

    assert actual.item == read(raw).item
    assert actual.item is not None
    assert actual.item.summary == ("😀",)


# --- legacy forms (E5) ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "record",
    [
        {"type": "reasoning", "encrypted_content": "gAAAA"},
        {"type": "reasoning", "encrypted_content": "gAAAA", "id": "rs_1"},
        {"id": "rs_1", "encrypted_content": "gAAAA"},
        {"encrypted_content": "gAAAA"},
    ],
)
def test_v0_10_4_minimal_record_is_not_resumable(record: dict[str, Any]) -> None:
    actual = read(json.dumps(record))

    assert actual.code is Code.LEGACY_MINIMAL_RECORD
    assert actual.provider_input() is None


@pytest.mark.parametrize(
    "record",
    [
        {
            "id": "rs_1",
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": "A"}],
            "content": [],
            "encrypted_content": "gAAAA",
        },
        {
            "id": "rs_1",
            "type": "reasoning",
            "summary": [],
            "content": None,
            "encrypted_content": "gAAAA",
        },
        {"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAAA", "status": "completed"},
        {"type": "reasoning", "encrypted_content": "gAAAA", "new_sdk_field": 7},
        {"encrypted_content": "gAAAA", "item": {}},
    ],
)
def test_raw_sdk_snapshot_is_not_resumable(record: dict[str, Any]) -> None:
    actual = read(json.dumps(record))

    assert actual.code is Code.RAW_SDK_SNAPSHOT
    assert actual.provider_input() is None


@pytest.mark.parametrize(
    "value",
    [{}, {"type": "reasoning", "id": "rs_1"}, {"version": 1, "item": item_value()}],
)
def test_object_without_schema_or_encrypted_content_is_missing_a_member(value: Any) -> None:
    assert code_of(json.dumps(value)) is Code.ENVELOPE_MEMBER_MISSING


# --- envelope members (E1) -----------------------------------------------------------------------


@pytest.mark.parametrize("version", ["2", "0", "-1", "1.5", "1.0000001", "100", "1e400"])
def test_unknown_version_number_is_unsupported(version: str) -> None:
    text = VALID_TEXT.replace('"version":1,', f'"version":{version},')

    assert code_of(text) is Code.ENVELOPE_VERSION_UNSUPPORTED


@pytest.mark.parametrize("version", ["true", "false", '"1"', "null", "[1]", '{"v":1}'])
def test_version_that_is_not_a_number_is_invalid(version: str) -> None:
    text = VALID_TEXT.replace('"version":1,', f'"version":{version},')

    assert code_of(text) is Code.ENVELOPE_VERSION_INVALID


@pytest.mark.parametrize(
    "schema",
    [
        "fast-agent.openai-responses.reasoning-replay.v2",
        "",
        "FAST-AGENT.OPENAI-RESPONSES.REASONING-REPLAY",
        1,
        None,
        [SCHEMA],
        " " + SCHEMA,
    ],
)
def test_unknown_schema_name_is_refused(schema: Any) -> None:
    assert code_of(text_of(envelope_value(schema=schema))) is Code.ENVELOPE_SCHEMA_UNKNOWN


@pytest.mark.parametrize("missing", ["version", "item"])
def test_missing_envelope_member_is_reported(missing: str) -> None:
    text = text_of(envelope_value(**{missing: ...}))

    assert code_of(text) is Code.ENVELOPE_MEMBER_MISSING


@pytest.mark.parametrize(
    "extra", [{"status": "completed"}, {"provider": "openai"}, {"Schema": SCHEMA}, {"": 0}]
)
def test_unknown_envelope_member_is_refused(extra: dict[str, Any]) -> None:
    assert code_of(text_of(envelope_value(**extra))) is Code.ENVELOPE_MEMBER_UNKNOWN


@pytest.mark.parametrize("item", [None, [], "item", 1, [item_value()]])
def test_item_that_is_not_an_object_is_refused(item: Any) -> None:
    text = text_of({"schema": SCHEMA, "version": 1, "item": item})

    assert code_of(text) is Code.ITEM_NOT_OBJECT


@pytest.mark.parametrize(
    "extra",
    [{"status": "completed"}, {"new_sdk_field": 7}, {"Type": "reasoning"}, {"status": None}],
)
def test_unknown_item_member_is_refused(extra: dict[str, Any]) -> None:
    assert code_of(text_of(envelope_value(item_value(**extra)))) is Code.ITEM_MEMBER_UNKNOWN


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"type": ...}, Code.ITEM_TYPE_INVALID),
        ({"type": "message"}, Code.ITEM_TYPE_INVALID),
        ({"type": None}, Code.ITEM_TYPE_INVALID),
        ({"id": ...}, Code.ITEM_ID_INVALID),
        ({"id": ""}, Code.ITEM_ID_INVALID),
        ({"id": 1}, Code.ITEM_ID_INVALID),
        ({"summary": ...}, Code.ITEM_SUMMARY_INVALID),
        ({"summary": None}, Code.ITEM_SUMMARY_INVALID),
        ({"summary": {"type": "summary_text", "text": "x"}}, Code.ITEM_SUMMARY_INVALID),
        ({"summary": [{"type": "summary_text"}]}, Code.ITEM_SUMMARY_INVALID),
        ({"summary": [{"type": "reasoning_text", "text": "x"}]}, Code.ITEM_SUMMARY_INVALID),
        (
            {"summary": [{"type": "summary_text", "text": "x", "annotations": []}]},
            Code.ITEM_SUMMARY_INVALID,
        ),
        ({"summary": [{"type": "summary_text", "text": None}]}, Code.ITEM_SUMMARY_INVALID),
        ({"summary": ["x"]}, Code.ITEM_SUMMARY_INVALID),
        ({"encrypted_content": ...}, Code.ITEM_CIPHERTEXT_INVALID),
        ({"encrypted_content": ""}, Code.ITEM_CIPHERTEXT_INVALID),
        ({"encrypted_content": None}, Code.ITEM_CIPHERTEXT_INVALID),
        ({"content": None}, Code.ITEM_CONTENT_INVALID),
        ({"content": []}, Code.ITEM_CONTENT_INVALID),
        ({"content": "x"}, Code.ITEM_CONTENT_INVALID),
        ({"content": [{"type": "summary_text", "text": "x"}]}, Code.ITEM_CONTENT_INVALID),
        (
            {"content": [{"type": "reasoning_text", "text": "x", "extra": 1}]},
            Code.ITEM_CONTENT_INVALID,
        ),
        ({"content": [{"type": "reasoning_text", "text": 1}]}, Code.ITEM_CONTENT_INVALID),
    ],
)
def test_invalid_item_field_gets_its_code(overrides: dict[str, Any], expected: Code) -> None:
    assert code_of(text_of(envelope_value(item_value(**overrides)))) is expected


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"type": "x", "id": ""}, Code.ITEM_TYPE_INVALID),
        ({"id": "", "summary": None}, Code.ITEM_ID_INVALID),
        ({"summary": None, "encrypted_content": ""}, Code.ITEM_SUMMARY_INVALID),
        ({"encrypted_content": "", "content": []}, Code.ITEM_CIPHERTEXT_INVALID),
        ({"status": "x", "type": "message"}, Code.ITEM_MEMBER_UNKNOWN),
    ],
)
def test_item_fields_are_checked_in_the_order_of_e6_step_13(
    overrides: dict[str, Any], expected: Code
) -> None:
    assert code_of(text_of(envelope_value(item_value(**overrides)))) is expected


# --- the text rules (E4) -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "\n\t ",
        "{",
        VALID_TEXT[:-1],
        "{'schema': 1}",
        '{"a" 1}',
        '{"a":1,}',
        "[1,]",
        "01",
        "tru",
        "undefined",
        '"unterminated',
        '{"a":"raw\ncontrol"}',
        '{"a":"raw\tcontrol"}',
        "/* comment */ {}",
    ],
)
def test_malformed_json_is_not_resumable(text: str) -> None:
    assert code_of(text) is Code.JSON_MALFORMED


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_non_json_number_token_is_malformed(token: str) -> None:
    assert code_of(token) is Code.JSON_MALFORMED
    assert code_of(VALID_TEXT.replace('"version":1,', f'"version":{token},')) is (
        Code.JSON_MALFORMED
    )


@pytest.mark.parametrize("trailing", ["x", "{}", VALID_TEXT, "1", "\x00", ",", "]"])
def test_trailing_data_is_malformed(trailing: str) -> None:
    assert code_of(VALID_TEXT + trailing) is Code.JSON_MALFORMED
    assert code_of(VALID_TEXT + " " + trailing) is Code.JSON_MALFORMED


def test_byte_order_mark_is_malformed_as_text_and_as_bytes() -> None:
    assert code_of("\ufeff" + VALID_TEXT) is Code.JSON_MALFORMED
    assert code_of(b"\xef\xbb\xbf" + VALID_TEXT.encode()) is Code.JSON_MALFORMED


def test_empty_bytes_are_malformed() -> None:
    assert code_of(b"") is Code.JSON_MALFORMED


def duplicate_cases() -> list[tuple[str, str]]:
    """Texts with one duplicated member at each level, first-valid and last-valid."""
    item = text_of(item_value())
    part = '{"type":"summary_text","text":"s1"}'
    return [
        ("top-valid-first", VALID_TEXT[:-1] + ',"schema":"other"}'),
        ("top-valid-last", '{"schema":"other",' + VALID_TEXT[1:]),
        ("version-valid-first", VALID_TEXT.replace('"version":1,', '"version":1,"version":2,')),
        ("version-valid-last", VALID_TEXT.replace('"version":1,', '"version":2,"version":1,')),
        ("item-whole-twice", VALID_TEXT[:-1] + ',"item":' + item + "}"),
        ("item-valid-first", VALID_TEXT.replace('"id":"rs_1"', '"id":"rs_1","id":"rs_2"')),
        ("item-valid-last", VALID_TEXT.replace('"id":"rs_1"', '"id":"","id":"rs_1"')),
        (
            "item-ciphertext",
            VALID_TEXT.replace(
                '"encrypted_content":"ciphertext"',
                '"encrypted_content":"a","encrypted_content":"b"',
            ),
        ),
        ("part-valid-first", VALID_TEXT.replace(part, part[:-1] + ',"text":"evil"}')),
        ("part-valid-last", VALID_TEXT.replace(part, '{"text":"evil",' + part[1:])),
        ("part-type-twice", VALID_TEXT.replace(part, part[:-1] + ',"type":"summary_text"}')),
        ("escaped-duplicate", VALID_TEXT[:-1] + ',"\\u0073chema":"' + SCHEMA + '"}'),
        ("nested-unrelated", '{"a":[{"b":1,"b":1}]}'),
    ]


@pytest.mark.parametrize(("case", "text"), duplicate_cases(), ids=[c for c, _ in duplicate_cases()])
def test_duplicate_member_at_any_level_is_refused(case: str, text: str) -> None:
    assert code_of(text) is Code.JSON_DUPLICATE_MEMBER
    assert code_of(text.encode("utf-8")) is Code.JSON_DUPLICATE_MEMBER


@pytest.mark.parametrize(
    "literal",
    [
        "\\ud800",
        "\\udbff",
        "\\udc00",
        "\\udfff",
        "a\\ud800b",
        "\\ude00\\ud83d",
        "\\ud800\\u0041",
        "\\ud800\\ud800",
    ],
)
def test_escaped_lone_surrogate_is_invalid_unicode(literal: str) -> None:
    in_summary = VALID_TEXT.replace('"text":"s1"', f'"text":"{literal}"')
    in_member_name = VALID_TEXT[:-1] + f',"{literal}":1}}'
    in_unrelated_value = f'["{literal}"]'

    assert code_of(in_summary) is Code.JSON_INVALID_UNICODE
    assert code_of(in_member_name) is Code.JSON_INVALID_UNICODE
    assert code_of(in_unrelated_value) is Code.JSON_INVALID_UNICODE


@pytest.mark.parametrize(
    "bad",
    [b"\xff", b"\xc3", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80", b"\xe2\x82"],
    ids=[
        "ff",
        "truncated",
        "overlong",
        "encoded-surrogate",
        "above-max",
        "continuation",
        "truncated-3",
    ],
)
def test_invalid_utf8_bytes_are_invalid_unicode(bad: bytes) -> None:
    inside_string = VALID_TEXT.encode().replace(b'"s1"', b'"s' + bad + b'"')
    outside_string = VALID_TEXT.encode() + bad

    assert code_of(inside_string) is Code.JSON_INVALID_UNICODE
    assert code_of(outside_string) is Code.JSON_INVALID_UNICODE


@pytest.mark.parametrize("surrogate", ["\ud800", "\udfff", "\udc80"])
def test_raw_surrogate_in_a_str_is_invalid_unicode(surrogate: str) -> None:
    inside_string = VALID_TEXT.replace('"s1"', f'"s{surrogate}"')
    outside_string = VALID_TEXT + surrogate

    assert code_of(inside_string) is Code.JSON_INVALID_UNICODE
    assert code_of(outside_string) is Code.JSON_INVALID_UNICODE


@pytest.mark.parametrize(
    ("depth", "expected"),
    [(32, Code.JSON_NOT_OBJECT), (33, Code.LIMIT_EXCEEDED), (200, Code.LIMIT_EXCEEDED)],
)
def test_nesting_deeper_than_32_exceeds_the_limit(depth: int, expected: Code) -> None:
    text = "[" * depth + "]" * depth

    assert code_of(text) is expected
    assert code_of(text.encode()) is expected


def nested_objects(levels: int) -> Any:
    """A value of nesting depth ``levels``: ``{}`` is 1, ``{"d":{}}`` is 2."""
    value: Any = {}
    for _ in range(levels - 1):
        value = {"d": value}
    return value


def test_object_nesting_depth_33_inside_an_envelope_exceeds_the_limit() -> None:
    # the envelope object and the item object are the first two levels
    text = text_of(envelope_value(item_value(extra=nested_objects(33 - 2))))
    assert text.endswith("{}" + "}" * 32)  # innermost {} plus 32 closers

    assert code_of(text) is Code.LIMIT_EXCEEDED


def test_object_nesting_depth_32_gets_its_value_code() -> None:
    text = text_of(envelope_value(item_value(extra=nested_objects(32 - 2))))
    assert text.endswith("{}" + "}" * 31)

    assert code_of(text) is Code.ITEM_MEMBER_UNKNOWN


def test_brackets_inside_strings_do_not_count_towards_depth() -> None:
    brackets = "[{" * 40
    text = text_of(
        envelope_value(
            item_value(
                summary=[{"type": "summary_text", "text": brackets}],
                encrypted_content='"]}' * 40 + "[[[" * 40,
            )
        )
    )

    actual = read(text)

    assert actual.resumable
    assert actual.item is not None
    assert actual.item.summary == (brackets,)


def padded_envelope_text(total_bytes: int, pad_char: str = "A") -> str:
    """A canonical envelope whose UTF-8 encoding is exactly ``total_bytes`` long."""
    base = text_of(envelope_value(item_value(encrypted_content="X")))
    pad_width = len(pad_char.encode("utf-8"))
    missing = total_bytes - len(base.encode("utf-8"))
    assert missing % pad_width == 0
    text = base.replace(
        '"encrypted_content":"X"',
        '"encrypted_content":"X' + pad_char * (missing // pad_width) + '"',
    )
    assert len(text.encode("utf-8")) == total_bytes
    return text


def test_text_of_exactly_16_mib_is_accepted() -> None:
    text = padded_envelope_text(MIB16)

    assert read(text).resumable
    assert read(text.encode("utf-8")).resumable


def test_text_longer_than_16_mib_exceeds_the_limit() -> None:
    text = padded_envelope_text(MIB16 + 1)

    assert code_of(text) is Code.LIMIT_EXCEEDED
    assert code_of(text.encode("utf-8")) is Code.LIMIT_EXCEEDED


def test_limit_is_measured_in_utf8_bytes_not_characters() -> None:
    base_bytes = len(text_of(envelope_value(item_value(encrypted_content="X"))).encode())
    text = padded_envelope_text(MIB16 + 2 + (MIB16 - base_bytes) % 2, pad_char="é")
    assert len(text) < MIB16

    assert code_of(text) is Code.LIMIT_EXCEEDED


def test_limit_exceeded_replaces_every_other_code() -> None:
    over_limit_malformed = "\ufeff" + "x" * MIB16
    over_limit_bad_bytes = b"\xff" * (MIB16 + 1)

    assert code_of(over_limit_malformed) is Code.LIMIT_EXCEEDED
    assert code_of(over_limit_bad_bytes) is Code.LIMIT_EXCEEDED
    assert code_of("\ud800" + "[" * 40) is Code.LIMIT_EXCEEDED


def test_value_that_is_not_an_object_is_refused() -> None:
    for text in ["1", "-0", '"envelope"', "null", "true", "[]", f"[{VALID_TEXT}]", "1e400"]:
        assert code_of(text) is Code.JSON_NOT_OBJECT, text


# --- precedence (E6) -----------------------------------------------------------------------------

PRECEDENCE_CASES = [
    (
        "duplicate-and-bad-version",
        VALID_TEXT.replace('"version":1,', '"version":2,"version":true,'),
        Code.JSON_DUPLICATE_MEMBER,
    ),
    (
        "duplicate-and-unknown-schema",
        '{"schema":"x","schema":"y","version":1,"item":{}}',
        Code.JSON_DUPLICATE_MEMBER,
    ),
    (
        "bad-schema-and-bad-version",
        text_of(envelope_value(schema="other", version="1")),
        Code.ENVELOPE_SCHEMA_UNKNOWN,
    ),
    (
        "bad-schema-and-missing-version",
        text_of(envelope_value(schema="other", version=...)),
        Code.ENVELOPE_SCHEMA_UNKNOWN,
    ),
    (
        "version-2-and-unknown-member",
        text_of(envelope_value(version=2, extra=1)),
        Code.ENVELOPE_VERSION_UNSUPPORTED,
    ),
    (
        "version-2-and-missing-item",
        text_of(envelope_value(version=2, item=...)),
        Code.ENVELOPE_VERSION_UNSUPPORTED,
    ),
    (
        "version-2-and-bad-item",
        text_of(envelope_value(item=[], version=2)),
        Code.ENVELOPE_VERSION_UNSUPPORTED,
    ),
    (
        "version-string-and-unknown-member",
        text_of(envelope_value(version="2", extra=1)),
        Code.ENVELOPE_VERSION_INVALID,
    ),
    (
        "missing-version-and-unknown-member",
        text_of(envelope_value(version=..., extra=1)),
        Code.ENVELOPE_MEMBER_MISSING,
    ),
    (
        "missing-item-and-unknown-member",
        text_of(envelope_value(item=..., extra=1)),
        Code.ENVELOPE_MEMBER_MISSING,
    ),
    (
        "unknown-member-and-bad-item",
        text_of(envelope_value(item="x", extra=1)),
        Code.ENVELOPE_MEMBER_UNKNOWN,
    ),
    (
        "item-unknown-member-and-bad-type",
        text_of(envelope_value(item_value(type="x", status="completed"))),
        Code.ITEM_MEMBER_UNKNOWN,
    ),
    (
        "legacy-with-version-and-item",
        json.dumps({"version": 1, "item": item_value(), "encrypted_content": "c"}),
        Code.RAW_SDK_SNAPSHOT,
    ),
    ("malformed-and-lone-surrogate-escape", '["\\ud800"', Code.JSON_MALFORMED),
    ("malformed-and-duplicate", '{"a":1,"a":2', Code.JSON_MALFORMED),
    ("lone-surrogate-escape-and-duplicate", '{"a":"\\ud800","a":1}', Code.JSON_INVALID_UNICODE),
    (
        "lone-surrogate-escape-in-dropped-duplicate-envelope",
        VALID_TEXT.replace('"id":"rs_1"', '"id":"\\udc00","id":"rs_1"'),
        Code.JSON_INVALID_UNICODE,
    ),
    ("lone-surrogate-escape-in-kept-duplicate", '{"a":1,"a":"\\ud800"}', Code.JSON_INVALID_UNICODE),
    (
        "lone-surrogate-escape-in-duplicated-name",
        '{"\\ud800":1,"\\ud800":2}',
        Code.JSON_INVALID_UNICODE,
    ),
    ("raw-surrogate-and-malformed", "\ud800{", Code.JSON_INVALID_UNICODE),
    ("raw-surrogate-and-bom", "\ufeff\ud800" + VALID_TEXT, Code.JSON_INVALID_UNICODE),
    ("bom-and-duplicate", '\ufeff{"a":1,"a":1}', Code.JSON_MALFORMED),
    ("nan-and-duplicate", '{"a":NaN,"a":1}', Code.JSON_MALFORMED),
    ("depth-and-malformed", "[" * 33, Code.LIMIT_EXCEEDED),
    ("depth-and-duplicate", '{"a":1,"a":' + "[" * 33 + "]" * 33 + "}", Code.LIMIT_EXCEEDED),
    ("duplicate-and-not-object", '[{"a":1,"a":1}]', Code.JSON_DUPLICATE_MEMBER),
]


@pytest.mark.parametrize(
    ("case", "text", "expected"), PRECEDENCE_CASES, ids=[case for case, _, _ in PRECEDENCE_CASES]
)
def test_first_failing_check_of_e6_gives_the_code(case: str, text: str, expected: Code) -> None:
    assert code_of(text) is expected


def test_invalid_bytes_come_before_byte_order_mark_and_grammar() -> None:
    text = b"\xef\xbb\xbf{\xff"

    assert code_of(text) is Code.JSON_INVALID_UNICODE


# --- totality (E4.2), fast path versus strict path, str versus bytes ---------------------------


@pytest.mark.parametrize("value", [None, 1, 1.5, [VALID_TEXT], {"text": VALID_TEXT}, object()])
def test_reader_never_raises_on_a_value_that_is_not_text(value: Any) -> None:
    actual = parse_reasoning_replay_envelope(value)

    assert not actual.resumable
    assert actual.code is not None


def sample_texts() -> list[str]:
    texts = [GOLDEN_TEXT, VALID_TEXT, "", "{}", "[]", "1", "NaN", "\ufeff{}", "\ud800"]
    texts += [text for _, text in duplicate_cases()]
    texts += [text for _, text, _ in PRECEDENCE_CASES]
    texts += [
        VALID_TEXT.replace('"version":1,', '"version":1.0,'),
        VALID_TEXT.replace('"version":1,', '"version":true,'),
        json.dumps(envelope_value(), indent=1),
        text_of(envelope_value(item_value(content=[]))),
        text_of(envelope_value(item_value(content=None))),
        text_of(envelope_value(item_value(status="completed"))),
        text_of(envelope_value(item_value(summary=[{"type": "summary_text", "text": 'q"\\\n'}]))),
        text_of(envelope_value(item_value(summary=[{"type": "summary_text", "text": "\x00\x1f"}]))),
        text_of(envelope_value(item_value(id="rs_\u2028", encrypted_content="é😀"))),
        json.dumps({"type": "reasoning", "encrypted_content": "c"}),
        json.dumps({"type": "reasoning", "encrypted_content": "c", "summary": []}),
        VALID_TEXT.replace('"rs_1"', '"\\u0072s_1"'),
        VALID_TEXT.replace('"text":"s1"', '"text":"\\ud800"'),
        '{"a":' * 32 + "1" + "}" * 32,
        '{"a":' * 33 + "1" + "}" * 33,
        '{"":{"":[]}}',
        '{"a":1, "a":1}',
    ]
    return texts


@pytest.mark.parametrize("text", sample_texts())
def test_fast_path_and_strict_path_give_the_same_verdict(text: str) -> None:
    expected = strict_verdict(text)

    actual = read(text)

    assert (actual.code, actual.item) == expected


def has_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@pytest.mark.parametrize("text", [t for t in sample_texts() if has_utf8(t)])
def test_str_and_bytes_of_the_same_text_give_the_same_verdict(text: str) -> None:
    as_bytes = text.encode("utf-8")

    actual = read(as_bytes)
    expected = read(text)

    assert (actual.code, actual.item) == (expected.code, expected.item)
    assert (actual.code, actual.item) == strict_verdict(as_bytes)
