"""Payload regressions (design note, "Payload regression tests"; SPEC §12, C3, P2, T1).

Sizes are compared as bytes of ``json.dumps`` of the request ``input``; nothing here is timed.
"""

from __future__ import annotations

import json
from typing import Any

from reasoning_replay import (
    DISPLAY_CHANNEL,
    REPLAY_CHANNEL,
    HistoryMessage,
    ReplayTarget,
    build_replay_input,
    canonicalize_completed_reasoning_output_item,
)
from support import GOLDEN_SDK_ITEM

OPENAI = ReplayTarget(provider="openai")


def wire_size(value: object) -> int:
    return len(json.dumps(value, ensure_ascii=False).encode("utf-8"))


def output_item(
    item_id: str, summary: list[str], content: list[Any] | None = None
) -> dict[str, Any]:
    return {
        "id": item_id,
        "type": "reasoning",
        "status": "completed",
        "summary": [{"type": "summary_text", "text": t} for t in summary],
        "content": [] if content is None else content,
        "encrypted_content": f"gAAAAB{item_id}" + "x" * 64,
    }


def envelope_text(item: dict[str, Any]) -> str:
    captured = canonicalize_completed_reasoning_output_item(item, source="response.completed")
    assert captured.envelope_text is not None, captured.code
    return captured.envelope_text


def assistant(items: list[dict[str, Any]], text: str = "answer") -> HistoryMessage:
    display = "\n\n".join(part["text"] for item in items for part in item["summary"])
    return HistoryMessage(
        role="assistant",
        channels={
            REPLAY_CHANNEL: [{"type": "text", "text": envelope_text(i)} for i in items],
            DISPLAY_CHANNEL: [{"type": "text", "text": display}],
        },
        items=[
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text}],
            }
        ],
    )


def user(text: str) -> HistoryMessage:
    return HistoryMessage(role="user", items=[{"type": "message", "role": "user", "content": text}])


def legacy_v0_10_4_input(history: list[HistoryMessage]) -> list[dict[str, Any]]:
    """The v0.10.4 counterfactual: each item gets ONE summary part, the message's whole display."""
    request_input: list[dict[str, Any]] = []
    for message in history:
        if message.role == "assistant":
            display_blocks = message.channels.get(DISPLAY_CHANNEL, [])
            display = "".join(b["text"] for b in display_blocks if isinstance(b, dict))
            for block in message.replay_blocks:
                assert isinstance(block, dict)
                item = json.loads(block["text"])["item"]
                request_input.append(
                    {
                        "type": "reasoning",
                        "id": item["id"],
                        "summary": [{"type": "summary_text", "text": display}],
                        "encrypted_content": item["encrypted_content"],
                    }
                )
        request_input.extend(dict(i) for i in message.items)
    return request_input


def multi_item_history() -> list[HistoryMessage]:
    return [
        user("q1"),
        assistant(
            [
                output_item("rs_1", ["Plan the search.", "Check the index."]),
                output_item("rs_2", ["Read the file."]),
                output_item("rs_3", ["Summarise findings ✓ 数据"]),
            ]
        ),
        user("q2"),
        assistant([output_item("rs_4", ["A"]), output_item("rs_5", ["B1", "B2"])]),
    ]


def test_golden_canonical_envelope_is_181_bytes() -> None:
    actual = envelope_text(GOLDEN_SDK_ITEM).encode("utf-8")

    assert len(actual) == 181


def test_per_item_summaries_are_smaller_on_the_wire_than_the_legacy_message_wide_fallback() -> None:
    history = multi_item_history()
    current = build_replay_input(history, OPENAI)
    legacy = legacy_v0_10_4_input(history)
    assert len(legacy) == len(current.input)

    actual = wire_size(list(current.input))
    legacy_size = wire_size(legacy)

    assert actual < legacy_size


def test_legacy_fallback_repeats_the_joined_summary_for_every_item() -> None:
    history = multi_item_history()
    legacy = legacy_v0_10_4_input(history)
    legacy_summaries = [i["summary"] for i in legacy if i["type"] == "reasoning"]
    current = build_replay_input(history, OPENAI)

    actual = [i["summary"] for i in current.input if i["type"] == "reasoning"]

    assert legacy_summaries[0] == legacy_summaries[1] == legacy_summaries[2]
    assert len({json.dumps(s) for s in actual}) == len(actual)
    assert [len(s) for s in actual] == [2, 1, 1, 1, 2]


def test_single_item_message_with_one_part_costs_the_same_as_the_legacy_fallback() -> None:
    history = [user("q"), assistant([output_item("rs_1", ["only part"])])]

    actual = wire_size(list(build_replay_input(history, OPENAI).input))

    assert actual == wire_size(legacy_v0_10_4_input(history))


def test_no_replay_item_carries_an_empty_or_null_content_field() -> None:
    history = [
        assistant(
            [
                output_item("rs_1", ["a"], content=[]),
                {**output_item("rs_2", ["b"]), "content": None},
                {k: v for k, v in output_item("rs_3", ["c"]).items() if k != "content"},
                output_item("rs_4", ["d"], content=[{"type": "reasoning_text", "text": "t"}]),
            ]
        ),
    ]

    actual = build_replay_input(history, OPENAI).input

    reasoning = [i for i in actual if i["type"] == "reasoning"]
    assert [("content" in i) for i in reasoning] == [False, False, False, True]
    assert all(i["content"] for i in reasoning if "content" in i)
    wire = json.dumps(reasoning)
    assert '"content": []' not in wire
    assert '"content": null' not in wire


def tool_loop_history(turns: int) -> list[HistoryMessage]:
    """A synthetic tool loop: each turn adds one assistant message with one reasoning item."""
    history: list[HistoryMessage] = [user("start the task")]
    for turn in range(turns):
        item = output_item(f"rs_{turn:03d}", [f"Turn {turn}: call the tool.", "Then check é."])
        history.append(
            HistoryMessage(
                role="assistant",
                channels={REPLAY_CHANNEL: [{"type": "text", "text": envelope_text(item)}]},
                items=[
                    {
                        "type": "function_call",
                        "call_id": f"call_{turn}",
                        "name": "shell",
                        "arguments": "{}",
                    }
                ],
            )
        )
        history.append(
            HistoryMessage(
                role="tool",
                items=[{"type": "function_call_output", "call_id": f"call_{turn}", "output": "ok"}],
            )
        )
    return history


def reasoning_bytes(request_input: tuple[dict[str, Any], ...]) -> int:
    return sum(wire_size(i) for i in request_input if i["type"] == "reasoning")


def test_cumulative_replay_bytes_over_a_long_tool_loop_equal_the_sum_of_items_replayed() -> None:
    turns = 50
    full = tool_loop_history(turns)
    item_sizes = [
        wire_size(json.loads(m.replay_blocks[0]["text"])["item"])  # type: ignore[index]
        for m in full
        if m.role == "assistant"
    ]

    per_turn = []
    for turn in range(1, turns + 1):
        request = build_replay_input(full[: 1 + 2 * turn], OPENAI)
        assert request.deduplicated_exact == 0
        assert sum(1 for i in request.input if i["type"] == "reasoning") == turn
        per_turn.append(reasoning_bytes(request.input))

    # each request replays every earlier item exactly once: growth per turn is one item
    assert per_turn == [sum(item_sizes[:turn]) for turn in range(1, turns + 1)]
    growth = [b - a for a, b in zip([0, *per_turn], per_turn, strict=False)]
    assert growth == item_sizes
    assert sum(per_turn) == sum((turns - k) * size for k, size in enumerate(item_sizes))


def test_replaying_a_resent_history_does_not_duplicate_reasoning() -> None:
    history = tool_loop_history(10)
    # a retry re-appends the last assistant message: its item is an exact duplicate
    retried = [*history, history[-2]]

    actual = build_replay_input(retried, OPENAI)
    expected = build_replay_input(history, OPENAI)

    assert reasoning_bytes(actual.input) == reasoning_bytes(expected.input)
    assert actual.deduplicated_exact == 1


def test_telemetry_matches_the_serialized_reasoning_bytes_of_the_tool_loop() -> None:
    request = build_replay_input(tool_loop_history(20), OPENAI)
    wire = json.loads(json.dumps({"input": list(request.input)}, ensure_ascii=False))

    actual = request.telemetry()

    reasoning = [i for i in wire["input"] if i["type"] == "reasoning"]
    assert actual.reasoning_replay_item_count == 20
    assert actual.reasoning_replay_encrypted_bytes == sum(
        len(i["encrypted_content"].encode()) for i in reasoning
    )
    assert actual.reasoning_replay_summary_bytes == sum(
        len(p["text"].encode()) for i in reasoning for p in i["summary"]
    )
    assert actual.reasoning_replay_summary_parts == 40
