"""Provider input built from a history (SPEC §5, P1–P3): multi-item replay, order, diagnostics."""

from __future__ import annotations

import json
from typing import Any

import pytest
from reasoning_replay import (
    DISPLAY_CHANNEL,
    REPLAY_CHANNEL,
    Code,
    Diagnostic,
    HistoryMessage,
    ReplayTarget,
    Transport,
    build_replay_input,
    canonicalize_completed_reasoning_output_item,
    parse_reasoning_replay_envelope,
    reasoning_replay_item_to_provider_input,
)
from reasoning_replay.ordering.cache_state import (
    CACHE_STATE_CHANNEL,
    CacheStateRecord,
    read_cache_state,
)
from reasoning_replay.record.history import HistoryShapeError, history_from_json

OPENAI = ReplayTarget(provider="openai")


def output_item(
    item_id: str, summary: list[str], ciphertext: str | None = None, **extra: Any
) -> dict[str, Any]:
    """A completed reasoning output item as the SDK returns it (with status and SDK extras)."""
    return {
        "id": item_id,
        "type": "reasoning",
        "status": "completed",
        "summary": [{"type": "summary_text", "text": text, "annotations": []} for text in summary],
        "content": [],
        "encrypted_content": ciphertext if ciphertext is not None else f"enc-{item_id}",
        "future_sdk_field": {"x": 1},
        **extra,
    }


def envelope_block(item: dict[str, Any]) -> dict[str, str]:
    captured = canonicalize_completed_reasoning_output_item(
        item, source="response.output_item.done"
    )
    assert captured.envelope_text is not None, captured.code
    return {"type": "text", "text": captured.envelope_text}


def expected_replay_item(
    item_id: str, summary: list[str], ciphertext: str | None = None
) -> dict[str, Any]:
    return {
        "type": "reasoning",
        "id": item_id,
        "summary": [{"type": "summary_text", "text": text} for text in summary],
        "encrypted_content": ciphertext if ciphertext is not None else f"enc-{item_id}",
    }


def user(text: str, **extra: Any) -> HistoryMessage:
    return HistoryMessage(
        role="user",
        items=[
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
        ],
        **extra,
    )


def assistant(
    text: str,
    reasoning: list[dict[str, Any]],
    *,
    msg_id: str = "msg_1",
    display: str | None = None,
    provider: str | None = None,
    extra_items: list[dict[str, Any]] | None = None,
) -> HistoryMessage:
    channels: dict[str, list[Any]] = {REPLAY_CHANNEL: [envelope_block(r) for r in reasoning]}
    if display is not None:
        channels[DISPLAY_CHANNEL] = [{"type": "text", "text": display}]
    items = [
        {
            "type": "message",
            "role": "assistant",
            "id": msg_id,
            "content": [{"type": "output_text", "text": text}],
        }
    ]
    items += extra_items or []
    return HistoryMessage(role="assistant", provider=provider, channels=channels, items=items)


def two_item_history(display: str | None = "A\n\nB1B2") -> list[HistoryMessage]:
    return [
        user("question"),
        assistant(
            "answer",
            [output_item("rs_A", ["A"]), output_item("rs_B", ["B1", "B2"])],
            display=display,
        ),
        user("follow-up"),
    ]


# --- P1 --------------------------------------------------------------------------------------


def test_replay_item_is_the_envelope_item_exactly() -> None:
    text = envelope_block(output_item("rs_1", ["s"]))["text"]
    item = parse_reasoning_replay_envelope(text).item
    assert item is not None

    actual = reasoning_replay_item_to_provider_input(item)

    assert actual == json.loads(text)["item"]
    assert list(actual) == ["type", "id", "summary", "encrypted_content"]


def test_replay_item_with_content_keeps_content_last() -> None:
    item = output_item("rs_1", ["s"], content=[{"type": "reasoning_text", "text": "t"}])
    read = parse_reasoning_replay_envelope(envelope_block(item)["text"])
    assert read.item is not None

    actual = reasoning_replay_item_to_provider_input(read.item)

    assert list(actual) == ["type", "id", "summary", "encrypted_content", "content"]
    assert actual["content"] == [{"type": "reasoning_text", "text": "t"}]


# --- multi-item replay (P2) ------------------------------------------------------------------


def test_two_reasoning_items_of_one_message_keep_distinct_summaries() -> None:
    actual = build_replay_input(two_item_history(), OPENAI)

    reasoning = [item for item in actual.input if item["type"] == "reasoning"]
    assert reasoning == [
        expected_replay_item("rs_A", ["A"]),
        expected_replay_item("rs_B", ["B1", "B2"]),
    ]


def test_multipart_summary_stays_multipart() -> None:
    actual = build_replay_input(two_item_history(), OPENAI)

    item_b = next(item for item in actual.input if item.get("id") == "rs_B")
    assert [part["text"] for part in item_b["summary"]] == ["B1", "B2"]


def test_no_message_wide_fallback_from_the_display_channel() -> None:
    display = "DISPLAY-ONLY joined summary text"
    history = two_item_history(display=display)

    actual = build_replay_input(history, OPENAI)

    serialized = json.dumps(actual.input, ensure_ascii=False)
    assert "DISPLAY-ONLY" not in serialized
    assert actual.diagnostics == ()


def test_display_channel_never_repairs_a_missing_item() -> None:
    message = HistoryMessage(
        role="assistant",
        channels={
            REPLAY_CHANNEL: [
                {
                    "type": "text",
                    "text": json.dumps(
                        {"type": "reasoning", "id": "rs_old", "encrypted_content": "enc-old"}
                    ),
                }
            ],
            DISPLAY_CHANNEL: [{"type": "text", "text": "legacy display summary"}],
        },
        items=[{"type": "message", "role": "assistant", "content": []}],
    )

    actual = build_replay_input([message], OPENAI)

    assert [item["type"] for item in actual.input] == ["message"]
    assert "legacy display summary" not in json.dumps(actual.input)
    assert actual.diagnostics == (Diagnostic(Code.LEGACY_MINIMAL_RECORD, 0, 0),)


def test_request_order_is_history_order_with_reasoning_before_each_messages_own_items() -> None:
    history = [
        user("q1"),
        assistant(
            "a1",
            [output_item("rs_1", ["one"]), output_item("rs_2", ["two"])],
            msg_id="msg_a1",
            extra_items=[
                {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}
            ],
        ),
        HistoryMessage(
            role="tool", items=[{"type": "function_call_output", "call_id": "c1", "output": "ok"}]
        ),
        assistant("a2", [output_item("rs_3", ["three"])], msg_id="msg_a2"),
        user("q2"),
    ]

    actual = build_replay_input(history, OPENAI)

    expected = [
        ("message", "user"),
        ("reasoning", "rs_1"),
        ("reasoning", "rs_2"),
        ("message", "msg_a1"),
        ("function_call", "c1"),
        ("function_call_output", "c1"),
        ("reasoning", "rs_3"),
        ("message", "msg_a2"),
        ("message", "user"),
    ]
    assert [
        (item["type"], item.get("id") or item.get("call_id") or item.get("role"))
        for item in actual.input
    ] == expected


def test_reasoning_items_follow_channel_order_not_id_order() -> None:
    history = [
        assistant(
            "a",
            [output_item("rs_z", ["z"]), output_item("rs_a", ["a"]), output_item("rs_m", ["m"])],
        )
    ]

    actual = build_replay_input(history, OPENAI)

    assert [item.get("id") for item in actual.input] == ["rs_z", "rs_a", "rs_m", "msg_1"]


def test_replayed_items_carry_no_status_unknown_fields_or_empty_content() -> None:
    actual = build_replay_input(two_item_history(), OPENAI)

    for item in actual.input:
        if item["type"] == "reasoning":
            assert set(item) == {"type", "id", "summary", "encrypted_content"}
    serialized = json.dumps(actual.input)
    assert "future_sdk_field" not in serialized
    assert "annotations" not in serialized
    assert '"status"' not in serialized


def test_non_resumable_blocks_are_skipped_with_diagnostics_and_the_rest_replays() -> None:
    good_1 = envelope_block(output_item("rs_1", ["one"]))
    good_2 = envelope_block(output_item("rs_2", ["two"]))
    bad_version = {"type": "text", "text": good_1["text"].replace('"version":1', '"version":2')}
    raw_snapshot = {"type": "text", "text": json.dumps(output_item("rs_raw", ["raw"]))}
    malformed = {"type": "text", "text": "{not json"}
    message = HistoryMessage(
        role="assistant",
        channels={REPLAY_CHANNEL: [bad_version, good_1, raw_snapshot, malformed, good_2]},
        items=[{"type": "message", "role": "assistant", "id": "msg_1", "content": []}],
    )

    actual = build_replay_input([user("q"), message], OPENAI)

    assert [item.get("id") for item in actual.input[1:]] == ["rs_1", "rs_2", "msg_1"]
    assert actual.diagnostics == (
        Diagnostic(Code.ENVELOPE_VERSION_UNSUPPORTED, 1, 0),
        Diagnostic(Code.RAW_SDK_SNAPSHOT, 1, 2),
        Diagnostic(Code.JSON_MALFORMED, 1, 3),
    )


def test_diagnostic_carries_code_message_index_and_block_index() -> None:
    message = HistoryMessage(
        role="assistant", channels={REPLAY_CHANNEL: [{"type": "text", "text": ""}]}
    )

    actual = build_replay_input([user("a"), user("b"), message], OPENAI).diagnostics

    assert [d.to_json() for d in actual] == [
        {"code": "json_malformed", "message_index": 2, "block_index": 0}
    ]


@pytest.mark.parametrize(
    "block",
    [
        {"type": "image", "image_url": "data:..."},
        {"type": "resource", "text": "{}"},
        {"text": "{}"},
        {"type": "text", "text": None},
        {"type": "text"},
        "a bare string",
        None,
    ],
)
def test_block_that_is_not_a_text_block_is_reported_block_not_text(block: Any) -> None:
    good = envelope_block(output_item("rs_1", ["one"]))
    message = HistoryMessage(role="assistant", channels={REPLAY_CHANNEL: [block, good]})

    actual = build_replay_input([message], OPENAI)

    assert actual.diagnostics == (Diagnostic(Code.BLOCK_NOT_TEXT, 0, 0),)
    assert [item["id"] for item in actual.input] == ["rs_1"]


@pytest.mark.parametrize("role", ["user", "tool", "system", "developer"])
def test_replay_channel_on_a_non_assistant_message_is_misplaced_and_not_read(role: str) -> None:
    good = envelope_block(output_item("rs_1", ["one"]))
    message = HistoryMessage(
        role=role,
        channels={REPLAY_CHANNEL: [good, {"type": "image"}, {"type": "text", "text": ""}]},
    )

    actual = build_replay_input([message], OPENAI)

    assert actual.input == ()
    assert actual.diagnostics == (
        Diagnostic(Code.REPLAY_CHANNEL_MISPLACED, 0, 0),
        Diagnostic(Code.REPLAY_CHANNEL_MISPLACED, 0, 1),
        Diagnostic(Code.REPLAY_CHANNEL_MISPLACED, 0, 2),
    )


def test_each_block_gets_at_most_one_diagnostic_and_they_are_in_block_order() -> None:
    good = envelope_block(output_item("rs_1", ["one"]))
    history = [
        HistoryMessage(role="user", channels={REPLAY_CHANNEL: [good]}),
        HistoryMessage(role="assistant", channels={REPLAY_CHANNEL: [good, good, {"type": "x"}]}),
        HistoryMessage(
            role="assistant", channels={REPLAY_CHANNEL: [{"type": "text", "text": "1"}, good]}
        ),
    ]

    actual = build_replay_input(history, OPENAI).diagnostics

    locations = [(d.message_index, d.block_index) for d in actual]
    assert locations == sorted(locations)
    assert len(set(locations)) == len(locations)
    assert [d.code for d in actual] == [
        Code.REPLAY_CHANNEL_MISPLACED,
        Code.DEDUPE_EXACT_DUPLICATE,
        Code.BLOCK_NOT_TEXT,
        Code.JSON_NOT_OBJECT,
        Code.DEDUPE_EXACT_DUPLICATE,
    ]


def test_message_without_a_replay_channel_contributes_only_its_own_items() -> None:
    message = HistoryMessage(
        role="assistant",
        channels={DISPLAY_CHANNEL: [{"type": "text", "text": "visible reasoning"}]},
        items=[{"type": "message", "role": "assistant", "id": "m", "content": []}],
    )

    actual = build_replay_input([message], OPENAI)

    assert actual.input == ({"type": "message", "role": "assistant", "id": "m", "content": []},)
    assert actual.diagnostics == ()


# --- display derivation does not alter replay items (ST2) -------------------------------------


def derive_display(message: HistoryMessage) -> str:
    """A display summary derived from the replay channel, as a history viewer would."""
    texts = []
    for block in message.replay_blocks:
        assert isinstance(block, dict)
        item = parse_reasoning_replay_envelope(block["text"]).provider_input()
        if item is not None:
            texts.append("\n\n".join(part["text"] for part in item["summary"]))
    return "\n\n".join(texts)


def test_display_summary_derivation_does_not_alter_replay_items() -> None:
    history = two_item_history(display=None)
    before = build_replay_input(history, OPENAI)
    blocks_before = json.dumps([dict(m.channels) for m in history])

    display = derive_display(history[1])
    with_display = [
        history[0],
        HistoryMessage(
            role="assistant",
            channels={**history[1].channels, DISPLAY_CHANNEL: [{"type": "text", "text": display}]},
            items=history[1].items,
        ),
        history[2],
    ]
    after = build_replay_input(with_display, OPENAI)

    assert display == "A\n\nB1\n\nB2"
    assert after.input == before.input
    assert json.dumps([dict(m.channels) for m in history]) == blocks_before


@pytest.mark.parametrize("display", ["", "totally different", "A\n\nB1B2", "A"])
def test_replay_input_does_not_depend_on_the_display_channel(display: str) -> None:
    expected = build_replay_input(two_item_history(display=None), OPENAI).input

    actual = build_replay_input(two_item_history(display=display), OPENAI).input

    assert actual == expected


def test_building_a_request_does_not_modify_the_history() -> None:
    history = two_item_history()
    snapshot = json.dumps([(m.role, dict(m.channels), list(m.items)) for m in history])

    build_replay_input(history, ReplayTarget(provider="xai"))
    build_replay_input(history, OPENAI)

    assert json.dumps([(m.role, dict(m.channels), list(m.items)) for m in history]) == snapshot


# --- transports (P3) -------------------------------------------------------------------------


@pytest.mark.parametrize("provider", ["openai", "xai", "azure"])
def test_sse_and_websocket_transports_give_identical_input(provider: str) -> None:
    history = [
        *two_item_history(),
        assistant(
            "again",
            [output_item("rs_A", ["A"]), output_item("rs_A", ["A"], "enc-new")],
            msg_id="msg_1",
        ),
    ]
    sse = build_replay_input(history, ReplayTarget(provider=provider, transport=Transport.SSE))
    websocket = build_replay_input(
        history, ReplayTarget(provider=provider, transport=Transport.WEBSOCKET)
    )

    assert websocket.input == sse.input
    assert json.dumps(websocket.input) == json.dumps(sse.input)
    assert websocket.diagnostics == sse.diagnostics
    assert websocket.telemetry() == sse.telemetry()


# --- the issuer (P4) -------------------------------------------------------------------------


def switching_history() -> list[HistoryMessage]:
    """openai, then xai, then openai again, in one conversation."""
    return [
        user("u1"),
        assistant("a1", [output_item("rs_1", ["s1"])], msg_id="m1", provider="openai"),
        user("u2"),
        assistant("a2", [output_item("rs_2", ["s2"])], msg_id="m2", provider="xai"),
        user("u3"),
        assistant("a3", [output_item("rs_3", ["s3"])], msg_id="m3", provider="openai"),
    ]


def reasoning_ids(built: Any) -> list[str]:
    return [item["id"] for item in built.input if item.get("type") == "reasoning"]


@pytest.mark.parametrize(
    ("target", "sent", "mismatched"),
    [("openai", ["rs_1", "rs_3"], [(3, 0)]), ("xai", ["rs_2"], [(1, 0), (5, 0)])],
)
def test_a_history_that_switches_provider_replays_only_the_targets_items(
    target: str, sent: list[str], mismatched: list[tuple[int, int]]
) -> None:
    built = build_replay_input(switching_history(), ReplayTarget(provider=target))

    assert reasoning_ids(built) == sent
    assert built.diagnostics == tuple(
        Diagnostic(Code.REPLAY_PROVIDER_MISMATCH, m, b) for m, b in mismatched
    )
    # every message's own items are still sent, and the counters count only what is sent (T1)
    own_answers = [i["content"][0]["text"] for i in built.input if i.get("role") == "assistant"]
    assert own_answers == ["a1", "a2", "a3"]
    assert built.telemetry().reasoning_replay_item_count == len(sent)


@pytest.mark.parametrize("alias", ["codex", "OpenAI", "openai ", "azure"])
def test_provider_names_are_never_aliased(alias: str) -> None:
    history = [assistant("a", [output_item("rs_1", ["s"])], provider=alias)]

    built = build_replay_input(history, OPENAI)

    assert reasoning_ids(built) == []
    assert built.diagnostics == (Diagnostic(Code.REPLAY_PROVIDER_MISMATCH, 0, 0),)


def test_a_block_that_is_not_resumable_keeps_its_code_whatever_its_issuer() -> None:
    legacy = {"type": "text", "text": '{"type":"reasoning","id":"rs","encrypted_content":"c"}'}
    message = HistoryMessage(
        role="assistant",
        provider="xai",
        channels={REPLAY_CHANNEL: [legacy, envelope_block(output_item("rs_1", ["s"]))]},
    )

    built = build_replay_input([message], OPENAI)

    assert built.diagnostics == (
        Diagnostic(Code.LEGACY_MINIMAL_RECORD, 0, 0),
        Diagnostic(Code.REPLAY_PROVIDER_MISMATCH, 0, 1),
    )


# ---------------------------------------------------------------------------------------------
# The items form (SPEC CL3)


def _items_form(*messages: dict[str, Any], **history: Any) -> tuple[HistoryMessage, ...]:
    return history_from_json({"form": "items", "messages": list(messages), **history})


def _reasoning(item_id: str, ciphertext: str = "c") -> dict[str, Any]:
    return {"type": "reasoning", "id": item_id, "summary": [], "encrypted_content": ciphertext}


def test_items_form_reasoning_is_sent_in_place_and_reported_at_its_item_index() -> None:
    call = {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}
    messages = _items_form(
        {"role": "assistant", "items": [_reasoning("rs_1"), call]},
        {"role": "assistant", "items": [call, _reasoning("rs_2"), _reasoning("rs_1")]},
        {"role": "assistant", "provider": "xai", "items": [call, _reasoning("rs_x")]},
    )

    built = build_replay_input(messages, OPENAI)

    assert built.input == (_reasoning("rs_1"), call, call, _reasoning("rs_2"), call)
    assert built.diagnostics == (
        Diagnostic(Code.DEDUPE_EXACT_DUPLICATE, 1, 2),
        Diagnostic(Code.REPLAY_PROVIDER_MISMATCH, 2, 1),
    )


def test_items_form_reasoning_item_that_is_not_a_replay_item_is_reported_not_sent() -> None:
    broken = {"type": "reasoning", "id": "rs_1", "summary": []}
    messages = _items_form({"role": "assistant", "items": [{"type": "x"}, broken]})

    built = build_replay_input(messages, OPENAI)

    assert built.input == ({"type": "x"},)
    assert built.diagnostics == (Diagnostic(Code.ITEM_CIPHERTEXT_INVALID, 0, 1),)


@pytest.mark.parametrize(
    "history",
    [
        {"form": "channels", "messages": []},
        {"form": "items", "messages": [{"role": "user", "items": [_reasoning("rs_1")]}]},
        {"form": "items", "messages": [{"role": "assistant", "model": "m", "items": []}]},
        {"form": "items", "messages": [{"role": "assistant"}]},
        {"form": "items", "messages": [{"role": "assistant", "provider": "", "items": []}]},
    ],
    ids=["unknown-form", "user-reasoning", "partial-record", "no-items", "empty-provider"],
)
def test_a_history_not_of_the_items_form_shape_is_a_shape_error(history: dict[str, Any]) -> None:
    with pytest.raises(HistoryShapeError):
        history_from_json(history)


def test_items_form_record_members_become_the_record_the_planner_reads() -> None:
    (message,) = _items_form(
        {"role": "assistant", "model": "m", "effort": None, "prompt_cache_key": "k", "items": []}
    )

    record = read_cache_state(message.channels[CACHE_STATE_CHANNEL])
    assert record == CacheStateRecord("m", "k", None)
    assert message.reasoning_in_items
