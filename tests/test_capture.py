"""Capture and writing (SPEC §4, C1–C4): completed output item in, canonical envelope text out."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from reasoning_replay import (
    Code,
    ReasoningReplayItem,
    ReplayRecordError,
    canonicalize_completed_reasoning_output_item,
    parse_reasoning_replay_envelope,
    serialize_reasoning_replay_envelope,
)
from support import GOLDEN_SDK_ITEM

SCHEMA = "fast-agent.openai-responses.reasoning-replay"

GOLDEN_TEXT = (
    '{"schema":"fast-agent.openai-responses.reasoning-replay","version":1,"item":{"type":'
    '"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"é"}],'
    '"encrypted_content":"c"}}'
)

GOLDEN_PROVIDER_INPUT = {
    "type": "reasoning",
    "id": "rs_1",
    "summary": [{"type": "summary_text", "text": "é"}],
    "encrypted_content": "c",
}

FINAL_SOURCES = ("response.completed", "response.incomplete", "response.output_item.done")


def sdk_item(**overrides: Any) -> dict[str, Any]:
    """A completed reasoning output item as an SDK would dump it; ``...`` deletes a member."""
    item: dict[str, Any] = {
        "id": "rs_abc",
        "type": "reasoning",
        "status": "completed",
        "summary": [
            {"type": "summary_text", "text": "First part."},
            {"type": "summary_text", "text": "Second part."},
        ],
        "content": [],
        "encrypted_content": "gAAAAB-opaque-ciphertext==",
    }
    for name, value in overrides.items():
        if value is ...:
            item.pop(name, None)
        else:
            item[name] = value
    return item


def capture(output_item: object, source: str = "response.output_item.done") -> Any:
    return canonicalize_completed_reasoning_output_item(output_item, source=source)


def captured_envelope(output_item: object) -> dict[str, Any]:
    result = capture(output_item)
    assert result.code is None
    assert result.envelope_text is not None
    value: dict[str, Any] = json.loads(result.envelope_text)
    return value


class FakeSdkReasoningItem:
    """A tiny stand-in for an SDK pydantic model: only ``model_dump(mode=...)``."""

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data
        self.dump_modes: list[str] = []

    def model_dump(self, *, mode: str) -> dict[str, Any]:
        self.dump_modes.append(mode)
        return copy.deepcopy(self._data)


# --- the golden example (SPEC §13) -------------------------------------------------------------


def test_golden_example_is_captured_as_the_exact_181_bytes() -> None:
    actual = capture(GOLDEN_SDK_ITEM, source="response.completed")

    assert actual.code is None
    assert actual.envelope_text == GOLDEN_TEXT
    assert len(actual.envelope_text.encode("utf-8")) == 181


def test_golden_example_replays_as_the_exact_provider_input() -> None:
    captured = capture(GOLDEN_SDK_ITEM)
    assert captured.envelope_text is not None

    actual = parse_reasoning_replay_envelope(captured.envelope_text).provider_input()

    assert actual == GOLDEN_PROVIDER_INPUT
    assert list(actual) == list(GOLDEN_PROVIDER_INPUT)


def test_capture_does_not_modify_the_output_item() -> None:
    original = copy.deepcopy(GOLDEN_SDK_ITEM)

    capture(GOLDEN_SDK_ITEM)

    assert original == GOLDEN_SDK_ITEM


# --- the allowlist (C2) ------------------------------------------------------------------------


def test_captured_item_has_exactly_the_allowlisted_fields_in_canonical_order() -> None:
    output_item = sdk_item(content=[{"type": "reasoning_text", "text": "thinking"}])

    envelope = captured_envelope(output_item)

    assert list(envelope) == ["schema", "version", "item"]
    assert list(envelope["item"]) == ["type", "id", "summary", "encrypted_content", "content"]


def test_captured_envelope_names_the_schema_and_version_one() -> None:
    envelope = captured_envelope(sdk_item())

    assert envelope["schema"] == SCHEMA
    assert envelope["version"] == 1
    assert type(envelope["version"]) is int


@pytest.mark.parametrize(
    "extra",
    [
        {"new_sdk_field": 7},
        {"created_at": 1730000000, "usage": {"output_tokens": 12}},
        {"sequence_number": 3, "output_index": 0, "event_id": "evt_1"},
        {"debug": {"trace": "x"}, "annotations": [], "provider_data": None},
    ],
)
def test_unknown_sdk_fields_are_dropped_on_capture(extra: dict[str, Any]) -> None:
    envelope = captured_envelope(sdk_item(**extra))

    actual = set(envelope["item"])

    assert actual == {"type", "id", "summary", "encrypted_content"}
    for name in extra:
        assert f'"{name}"' not in json.dumps(envelope)


@pytest.mark.parametrize("status", ["completed", None, ...])
def test_status_is_dropped_on_capture(status: Any) -> None:
    envelope = captured_envelope(sdk_item(status=status))

    assert "status" not in envelope["item"]
    assert '"status"' not in json.dumps(envelope)


@pytest.mark.parametrize("content", [None, [], ...], ids=["null", "empty", "absent"])
def test_null_or_empty_content_is_omitted(content: Any) -> None:
    envelope = captured_envelope(sdk_item(content=content))

    assert "content" not in envelope["item"]


def test_valid_nonempty_content_is_kept_in_order() -> None:
    content = [
        {"type": "reasoning_text", "text": "step one"},
        {"type": "reasoning_text", "text": ""},
        {"type": "reasoning_text", "text": "step three"},
    ]

    envelope = captured_envelope(sdk_item(content=content))

    assert envelope["item"]["content"] == content


@pytest.mark.parametrize(
    "item_id", [..., None, "", 17, ["rs_1"]], ids=["missing", "null", "empty", "int", "list"]
)
def test_missing_or_invalid_id_is_rejected(item_id: Any) -> None:
    actual = capture(sdk_item(id=item_id))

    assert actual.code is Code.ITEM_ID_INVALID
    assert actual.envelope_text is None
    assert actual.item is None
    assert not actual.captured


@pytest.mark.parametrize(
    "ciphertext",
    [..., None, "", 42, {"data": "x"}],
    ids=["missing", "null", "empty", "int", "object"],
)
def test_missing_empty_or_non_string_encrypted_content_is_rejected(ciphertext: Any) -> None:
    actual = capture(sdk_item(encrypted_content=ciphertext))

    assert actual.code is Code.ITEM_CIPHERTEXT_INVALID
    assert actual.envelope_text is None


@pytest.mark.parametrize(
    "summary",
    [..., None, "a summary", {"type": "summary_text", "text": "x"}],
    ids=["missing", "null", "string", "object"],
)
def test_missing_or_non_array_summary_is_rejected(summary: Any) -> None:
    actual = capture(sdk_item(summary=summary))

    assert actual.code is Code.ITEM_SUMMARY_INVALID
    assert actual.envelope_text is None


def test_empty_summary_array_is_kept() -> None:
    envelope = captured_envelope(sdk_item(summary=[]))

    assert envelope["item"]["summary"] == []


@pytest.mark.parametrize(
    "part",
    [
        {"type": "reasoning_text", "text": "x"},
        {"type": "summary_image", "text": "x"},
        {"text": "x"},
        {"type": "summary_text"},
        {"type": "summary_text", "text": None},
        {"type": "summary_text", "text": 3},
        "x",
        None,
    ],
)
def test_unknown_or_malformed_summary_part_is_rejected(part: Any) -> None:
    summary = [{"type": "summary_text", "text": "ok"}, part]

    actual = capture(sdk_item(summary=summary))

    assert actual.code is Code.ITEM_SUMMARY_INVALID


@pytest.mark.parametrize(
    "content",
    [
        [{"type": "summary_text", "text": "x"}],
        [{"type": "reasoning_text", "text": "x"}, {"type": "output_text", "text": "y"}],
        [{"type": "reasoning_text"}],
        [{"type": "reasoning_text", "text": None}],
        ["x"],
        "text",
        {"type": "reasoning_text", "text": "x"},
        0,
    ],
)
def test_unknown_or_malformed_content_is_rejected(content: Any) -> None:
    actual = capture(sdk_item(content=content))

    assert actual.code is Code.ITEM_CONTENT_INVALID


def test_extra_keys_inside_parts_are_dropped_on_capture() -> None:
    output_item = sdk_item(
        summary=[{"type": "summary_text", "text": "s", "annotations": [], "logprobs": None}],
        content=[{"type": "reasoning_text", "text": "c", "annotations": [{"x": 1}]}],
    )

    envelope = captured_envelope(output_item)

    assert envelope["item"]["summary"] == [{"type": "summary_text", "text": "s"}]
    assert envelope["item"]["content"] == [{"type": "reasoning_text", "text": "c"}]
    assert [list(part) for part in envelope["item"]["summary"]] == [["type", "text"]]


def test_summary_part_order_and_boundaries_round_trip_exactly() -> None:
    texts = ["**Plan**\n\nFirst,", "", "  untrimmed  ", "second", "second", "数据 ✓ 😀", "A", "B"]
    output_item = sdk_item(summary=[{"type": "summary_text", "text": t} for t in texts])
    captured = capture(output_item)
    assert captured.envelope_text is not None

    replayed = parse_reasoning_replay_envelope(captured.envelope_text).provider_input()

    assert replayed is not None
    actual = [part["text"] for part in replayed["summary"]]
    assert actual == texts
    assert all(part["type"] == "summary_text" for part in replayed["summary"])


# --- completed sources only (C1) -----------------------------------------------------------------


@pytest.mark.parametrize("source", FINAL_SOURCES)
def test_capture_accepts_every_final_source(source: str) -> None:
    actual = capture(sdk_item(), source=source)

    assert actual.code is None
    assert actual.captured


def test_capture_from_output_item_added_is_not_completed() -> None:
    actual = capture(sdk_item(), source="response.output_item.added")

    assert actual.code is Code.CAPTURE_NOT_COMPLETED
    assert actual.envelope_text is None


@pytest.mark.parametrize(
    "source",
    [
        "response.created",
        "response.output_item.delta",
        "response.in_progress",
        "",
        "COMPLETED",
        "response.completed ",
    ],
)
def test_capture_from_an_unknown_source_is_refused(source: str) -> None:
    actual = capture(sdk_item(), source=source)

    assert actual.code is Code.CAPTURE_SOURCE_UNKNOWN


@pytest.mark.parametrize("status", ["in_progress", "incomplete", "failed", "COMPLETED", "", 1])
def test_item_whose_status_is_not_completed_is_refused(status: Any) -> None:
    actual = capture(sdk_item(status=status), source="response.completed")

    assert actual.code is Code.CAPTURE_NOT_COMPLETED


@pytest.mark.parametrize(
    "output_item",
    [
        {"type": "message", "id": "msg_1", "role": "assistant", "content": []},
        {"id": "rs_1", "summary": [], "encrypted_content": "c"},
        ["reasoning"],
        "reasoning",
        None,
        42,
    ],
)
def test_non_reasoning_output_item_is_refused(output_item: Any) -> None:
    actual = capture(output_item)

    assert actual.code is Code.CAPTURE_NOT_REASONING


@pytest.mark.parametrize(
    ("source", "output_item", "expected"),
    [
        ("response.bogus", {"type": "message"}, Code.CAPTURE_SOURCE_UNKNOWN),
        ("response.output_item.added", {"type": "message"}, Code.CAPTURE_NOT_COMPLETED),
        (
            "response.completed",
            {"type": "message", "status": "in_progress"},
            Code.CAPTURE_NOT_REASONING,
        ),
        ("response.completed", sdk_item(status="in_progress", id=""), Code.CAPTURE_NOT_COMPLETED),
        (
            "response.completed",
            sdk_item(id=..., summary=None, encrypted_content=""),
            Code.ITEM_ID_INVALID,
        ),
        (
            "response.completed",
            sdk_item(summary=None, encrypted_content=""),
            Code.ITEM_SUMMARY_INVALID,
        ),
        (
            "response.completed",
            sdk_item(encrypted_content=..., content="bad"),
            Code.ITEM_CIPHERTEXT_INVALID,
        ),
    ],
)
def test_capture_checks_apply_in_the_order_of_c2(
    source: str, output_item: Any, expected: Code
) -> None:
    actual = capture(output_item, source=source).code

    assert actual is expected


# --- SDK objects (C4) ----------------------------------------------------------------------------


def test_capture_accepts_an_sdk_object_with_model_dump() -> None:
    sdk_object = FakeSdkReasoningItem(GOLDEN_SDK_ITEM)

    actual = capture(sdk_object, source="response.completed")

    assert actual.envelope_text == GOLDEN_TEXT
    assert sdk_object.dump_modes == ["json"]


def test_capture_of_an_sdk_object_applies_the_same_checks() -> None:
    sdk_object = FakeSdkReasoningItem(sdk_item(status="in_progress"))

    actual = capture(sdk_object)

    assert actual.code is Code.CAPTURE_NOT_COMPLETED


def test_capture_of_sdk_object_equals_capture_of_its_dump() -> None:
    data = sdk_item(content=[{"type": "reasoning_text", "text": "x"}], extra_field={"a": 1})

    expected = capture(data).envelope_text
    actual = capture(FakeSdkReasoningItem(data)).envelope_text

    assert actual == expected
    assert actual is not None


def test_capture_of_a_broken_sdk_object_does_not_raise() -> None:
    class Broken:
        def model_dump(self, *, mode: str) -> Any:
            raise RuntimeError("validation failed")

    actual = capture(Broken())

    assert not actual.captured
    assert actual.code is not None


# --- canonical bytes (C3) ------------------------------------------------------------------------

SHORT_ESCAPES = {0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r"}


def expected_escape(code_point: int) -> str:
    return SHORT_ESCAPES.get(code_point, f"\\u{code_point:04x}")


def summary_literal(text: str) -> str:
    """The characters between the quotes of the summary text in the captured envelope text."""
    captured = capture(sdk_item(summary=[{"type": "summary_text", "text": text}]))
    envelope: str | None = captured.envelope_text
    assert envelope is not None
    prefix = '"summary":[{"type":"summary_text","text":"'
    start = envelope.index(prefix) + len(prefix)
    end = envelope.index('"}],"encrypted_content"', start)
    return envelope[start:end]


@pytest.mark.parametrize("code_point", range(0x20), ids=lambda cp: f"U+{cp:04X}")
def test_every_control_character_is_escaped_as_c3_requires(code_point: int) -> None:
    actual = summary_literal(f"a{chr(code_point)}b")

    expected = f"a{expected_escape(code_point)}b"
    assert actual == expected


def test_quote_and_backslash_are_escaped_with_a_backslash() -> None:
    actual = summary_literal('say "hi" \\ bye')

    assert actual == 'say \\"hi\\" \\\\ bye'


@pytest.mark.parametrize(
    "char",
    ["\u007f", "\u2028", "\u2029", "é", "数", "\U0001f600", "/", "\u0080", "\ufeff", "\uffff"],
    ids=lambda c: f"U+{ord(c):04X}",
)
def test_other_characters_are_written_as_raw_utf8(char: str) -> None:
    actual = summary_literal(f"<{char}>")

    assert actual == f"<{char}>"


def test_canonical_text_has_no_whitespace_and_escapes_only_where_required() -> None:
    output_item = sdk_item(
        id="rs_é",
        summary=[{"type": "summary_text", "text": "a b\tc"}],
        content=[{"type": "reasoning_text", "text": "ü \n"}],
    )
    captured = capture(output_item)
    assert captured.envelope_text is not None

    expected = (
        '{"schema":"' + SCHEMA + '","version":1,"item":{"type":"reasoning","id":"rs_é",'
        '"summary":[{"type":"summary_text","text":"a b\\tc"}],'
        '"encrypted_content":"gAAAAB-opaque-ciphertext==",'
        '"content":[{"type":"reasoning_text","text":"ü \\n"}]}}'
    )
    assert captured.envelope_text == expected


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"id": "rs_\ud800"}, Code.ITEM_ID_INVALID),
        ({"encrypted_content": "abc\udfff"}, Code.ITEM_CIPHERTEXT_INVALID),
        ({"summary": [{"type": "summary_text", "text": "x\ud83d"}]}, Code.ITEM_SUMMARY_INVALID),
        ({"content": [{"type": "reasoning_text", "text": "\udc00y"}]}, Code.ITEM_CONTENT_INVALID),
    ],
    ids=["id", "encrypted_content", "summary", "content"],
)
def test_lone_surrogate_in_a_captured_string_is_rejected_with_the_field_code(
    overrides: dict[str, Any], expected: Code
) -> None:
    actual = capture(sdk_item(**overrides))

    assert actual.code is expected
    assert actual.envelope_text is None


def test_lone_surrogate_in_a_dropped_field_does_not_prevent_capture() -> None:
    output_item = sdk_item(
        unknown_field="\ud800",
        summary=[{"type": "summary_text", "text": "ok", "annotation": "\udc00"}],
    )

    actual = capture(output_item)

    assert actual.captured
    assert actual.envelope_text is not None
    actual.envelope_text.encode("utf-8")


def test_captured_text_is_accepted_by_the_reader_with_the_same_item() -> None:
    captured = capture(sdk_item(content=[{"type": "reasoning_text", "text": "c"}]))
    assert captured.envelope_text is not None

    actual = parse_reasoning_replay_envelope(captured.envelope_text)

    assert actual.resumable
    assert actual.item == captured.item


# --- the writer ----------------------------------------------------------------------------------


def test_writer_output_for_a_hand_built_item_equals_the_golden_text() -> None:
    item = ReasoningReplayItem(id="rs_1", summary=("é",), encrypted_content="c")

    actual = serialize_reasoning_replay_envelope(item)

    assert actual == GOLDEN_TEXT


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        (ReasoningReplayItem(id="", summary=(), encrypted_content="c"), Code.ITEM_ID_INVALID),
        (
            ReasoningReplayItem(id="rs_1", summary=(), encrypted_content=""),
            Code.ITEM_CIPHERTEXT_INVALID,
        ),
        (
            ReasoningReplayItem(id="rs_1", summary=(), encrypted_content="c", content=()),
            Code.ITEM_CONTENT_INVALID,
        ),
    ],
    ids=["empty-id", "empty-ciphertext", "empty-content"],
)
def test_writer_raises_replay_record_error_for_a_non_canonical_hand_built_item(
    item: ReasoningReplayItem, expected: Code
) -> None:
    with pytest.raises(ReplayRecordError) as raised:
        serialize_reasoning_replay_envelope(item)

    assert raised.value.code is expected


def test_writer_raises_for_a_hand_built_item_with_a_lone_surrogate() -> None:
    item = ReasoningReplayItem(id="rs_1", summary=("\ud800",), encrypted_content="c")

    with pytest.raises(ReplayRecordError):
        serialize_reasoning_replay_envelope(item)
