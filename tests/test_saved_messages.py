"""SPEC H9: a saved message (H1) as P2's message: what decides a plan is fixed, the items' shapes
are the implementation's (the reference's are fast-agent 0.10.48's)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from reasoning_replay.history.history_files import HistoryFileProblem
from reasoning_replay.history.saved_messages import saved_history_messages, saved_message_items
from reasoning_replay.ordering.planner import Plan, PlanSettings, is_genuine_user_turn, plan_request
from reasoning_replay.record.history import HistoryMessage, history_from_json

KEY = "0123456789abcdef0123456789abcdef"
CACHE_STATE = "fast-agent-responses-cache-state"


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def result(value: str) -> dict[str, Any]:
    return {"content": [text(value)], "isError": False}


def call(name: str) -> dict[str, Any]:
    return {"method": "tools/call", "params": {"name": name, "arguments": {"city": "Oslo"}}}


def message(raw: dict[str, Any]) -> HistoryMessage:
    (converted,) = saved(raw)
    return converted


def saved(*raw: dict[str, Any]) -> tuple[HistoryMessage, ...]:
    messages = saved_history_messages({"messages": list(raw)})
    assert not isinstance(messages, HistoryFileProblem), messages
    return messages


def types(items: Any) -> list[str]:
    return [item["type"] for item in items]


@pytest.mark.parametrize("content", [[], [text("also this")], [text("")]])
def test_tool_results_make_a_user_message_a_continuation_whatever_its_content(
    content: list[dict[str, Any]],
) -> None:
    """Rule 1: one tool-result item per member of tool_results; never a genuine turn."""
    raw = {"role": "user", "content": content, "tool_results": {"call_a": result("sunny")}}

    converted = message(raw)

    assert types(converted.items).count("function_call_output") == 1
    assert not is_genuine_user_turn(converted)


@pytest.mark.parametrize(
    ("content", "genuine"),
    [
        ([text("hello")], True),
        ([text("")], True),  # a text block of empty text is a block
        ([{"type": "image", "data": "aGk=", "mimeType": "image/png"}], True),
        ([{"type": "resource_link", "uri": "file:///x", "name": "x"}], True),
        ([], False),
    ],
)
def test_a_user_message_with_any_block_is_a_genuine_turn_and_one_without_is_not(
    content: list[dict[str, Any]], genuine: bool
) -> None:
    """Rule 2: exactly one user message item when content holds a block, else none."""
    converted = message({"role": "user", "content": content, "tool_results": {}})

    assert types(converted.items) == (["message"] if genuine else [])
    assert is_genuine_user_turn(converted) is genuine


def test_a_staged_tool_media_channel_still_makes_a_continuation() -> None:
    channels = {"fast-agent-tool-media-message": [text("staged")]}

    converted = message({"role": "user", "content": [text("hi")], "channels": channels})

    assert types(converted.items) == ["message"] and not is_genuine_user_turn(converted)


def test_one_part_per_block_in_block_order() -> None:
    """Rule 2: one content part per block, in order; the parts' shapes are fast-agent's."""
    content = [text("a"), {"type": "image", "data": "aGk=", "mimeType": "image/png"}, text("b")]

    (item,) = saved_message_items({"role": "user", "content": content})

    assert item["content"] == [
        {"type": "input_text", "text": "a"},
        {"type": "input_image", "image_url": "data:image/png;base64,aGk="},
        {"type": "input_text", "text": "b"},
    ]


def test_assistant_message_items_come_before_its_tool_calls_in_member_order() -> None:
    """Rule 3: message items (content, or the kept provider items), then one call per member."""
    calls = {"call_b": call("second"), "call_a": call("first")}
    kept = {"openai-assistant-message-items": [text('{"type":"message","id":"msg_1"}')]}
    plain = {"role": "assistant", "content": [text("checking")], "tool_calls": calls}

    items = saved_message_items(plain)
    with_kept = saved_message_items({**plain, "channels": kept})

    assert types(items) == ["message", "function_call", "function_call"]
    assert [item["call_id"] for item in items[1:]] == ["call_b", "call_a"]
    assert items[1]["id"] == "fc_b" and json.loads(items[1]["arguments"]) == {"city": "Oslo"}
    assert (
        with_kept[0] == {"type": "message", "id": "msg_1"}
        and types(with_kept)[1:] == types(items)[1:]
    )


def test_tool_results_come_before_the_message_item_in_member_order() -> None:
    """Rule 4."""
    results = {"call_b": result("two"), "call_a": result("one")}

    items = saved_message_items({"role": "user", "content": [text("x")], "tool_results": results})

    assert types(items) == ["function_call_output", "function_call_output", "message"]
    assert [(i["call_id"], i["output"]) for i in items[:2]] == [
        ("call_b", "two"),
        ("call_a", "one"),
    ]


def test_channels_of_the_registry_give_no_own_items() -> None:
    """Rule 5: replay, display, cache-state and tool-media channels give no own item."""
    channels = {
        "openai-reasoning-encrypted": [text("{}")],
        "reasoning": [text("thinking")],
        CACHE_STATE: [text('{"model":"m","key":"k","effort":null}')],
    }

    converted = message({"role": "assistant", "content": [], "channels": channels})

    assert converted.items == [] and converted.channels == channels


def test_an_unreadable_kept_item_is_left_out_never_raised() -> None:
    kept = {"openai-assistant-message-items": [text("{"), text("[1]"), {"type": "image"}]}

    items = saved_message_items({"role": "assistant", "content": [text("hi")], "channels": kept})

    assert items == [
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hi"}]}
    ]


def test_a_file_that_is_not_a_history_is_history_malformed() -> None:
    assert isinstance(saved_history_messages({"messages": [{"role": "x"}]}), HistoryFileProblem)


def test_a_saved_file_plans_as_its_p2_shape_does() -> None:
    """The whole of H9 on one file: the plan equals the plan of the P2 shape written by hand."""
    record = '{"model":"gpt-6-astra","key":"' + KEY + '","effort":"low"}'
    saved_file = {
        "messages": [
            {"role": "user", "content": [text("weather?")]},
            {
                "role": "assistant",
                "content": [],
                "tool_calls": {"call_a": call("weather")},
                "channels": {CACHE_STATE: [text(record)]},
            },
            {"role": "user", "content": [], "tool_results": {"call_a": result("sunny")}},
            {
                "role": "assistant",
                "content": [text("sunny")],
                "channels": {CACHE_STATE: [text(record)]},
            },
            {"role": "user", "content": [text("thanks")]},
        ]
    }
    by_hand = history_from_json(
        {
            "messages": [
                {"role": "user", "items": [user_item("weather?")]},
                {
                    "role": "assistant",
                    "channels": {CACHE_STATE: [text(record)]},
                    "items": [function_call("call_a", "fc_a")],
                },
                {"role": "user", "items": [output("call_a", "sunny")]},
                {
                    "role": "assistant",
                    "channels": {CACHE_STATE: [text(record)]},
                    "items": [assistant_item("sunny")],
                },
                {"role": "user", "items": [user_item("thanks")]},
            ]
        }
    )
    settings = PlanSettings(model="gpt-6-astra", desired_effort="high", instance_key=KEY)

    actual = plan_request(saved(*saved_file["messages"]), settings)
    expected = plan_request(by_hand, settings)

    assert isinstance(actual, Plan) and actual == expected
    assert [i["type"] for i in actual.request["input"]][-2:] == ["configuration_update", "message"]


def user_item(value: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": value}]}


def assistant_item(value: str) -> dict[str, Any]:
    parts = [{"type": "output_text", "text": value}]
    return {"type": "message", "role": "assistant", "content": parts}


def function_call(call_id: str, item_id: str) -> dict[str, Any]:
    arguments = json.dumps({"city": "Oslo"})
    return {
        "type": "function_call",
        "id": item_id,
        "call_id": call_id,
        "name": "weather",
        "arguments": arguments,
    }


def output(call_id: str, value: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": value}
