"""Behaviour of the request planner (SPEC §9): what the conformance vectors cannot show.

The vectors in ``conformance/vectors/plan/`` pin single plans. These tests simulate whole
conversations the way an agent drives the planner: plan a request, store the response as an
assistant message carrying ``plan.record`` as its cache-state block (and a response id), add the
next user message or tool result, plan again. On top of that they pin resume (a JSON round trip
of the history), clearing, the key's persistence (K3), malformed records (F6), other models
(F10), a custom registry (§9.1) and :func:`read_cache_state` on every malformed shape.
"""

from __future__ import annotations

import copy
import importlib
import itertools
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from reasoning_replay import (
    REPLAY_CHANNEL,
    Code,
    Diagnostic,
    HistoryMessage,
    canonicalize_completed_reasoning_output_item,
    history_from_json,
)
from reasoning_replay.ordering.cache_state import (
    CACHE_STATE_CHANNEL,
    CacheStateRecord,
    read_cache_state,
)
from reasoning_replay.ordering.planner import (
    DEFAULT_UPDATE_CAPABLE,
    Endpoint,
    Plan,
    PlanSettings,
    PlanTransport,
    configuration_update,
    is_genuine_user_turn,
    plan_request,
)
from reasoning_replay.record.history import HistoryShapeError

ASTRA = "gpt-6-astra"  # the one update-capable model of the default registry (SPEC §9.1)
OTHER = "gpt-5.1"  # not update-capable
INSTANCE_KEY = "0123456789abcdef" * 2
NEW_INSTANCE_KEY = "fedcba9876543210" * 2
STAGED_MEDIA_CHANNEL = "fast-agent-tool-media-message"
NO_RECORD = "<no record>"  # assistant(effort=...) default: store no cache-state record


# --- building histories ---------------------------------------------------------------------


def user(text: str = "hello") -> HistoryMessage:
    return HistoryMessage("user", items=[{"type": "message", "role": "user", "content": text}])


def tool_result(call_id: str = "call_1", output: str = "42") -> HistoryMessage:
    return HistoryMessage(
        "user", items=[{"type": "function_call_output", "call_id": call_id, "output": output}]
    )


def record_block(record: CacheStateRecord | Mapping[str, Any] | str) -> dict[str, Any]:
    if isinstance(record, CacheStateRecord):
        text = json.dumps(record.to_json())
    elif isinstance(record, str):
        text = record
    else:
        text = json.dumps(record)
    return {"type": "text", "text": text}


def reasoning_block(item_id: str, summary: str = "thinking") -> dict[str, Any]:
    captured = canonicalize_completed_reasoning_output_item(
        {
            "type": "reasoning",
            "id": item_id,
            "summary": [{"type": "summary_text", "text": summary}],
            "encrypted_content": f"gAAAA-{item_id}",
        }
    )
    assert captured.envelope_text is not None
    return {"type": "text", "text": captured.envelope_text}


def assistant(
    record: CacheStateRecord | Mapping[str, Any] | str | None = None,
    *,
    effort: str | None = NO_RECORD,
    model: str = ASTRA,
    key: str = INSTANCE_KEY,
    text: str = "ok",
    calls: str | None = None,
    response_id: str | None = None,
    reasoning_ids: Sequence[str] = (),
    extra_items: Sequence[Mapping[str, Any]] = (),
) -> HistoryMessage:
    """An assistant message; ``effort=`` is shorthand for a valid record of ``model``/``key``."""
    if record is None and effort != NO_RECORD:
        record = CacheStateRecord(model, key, effort)
    channels: dict[str, list[object]] = {}
    if record is not None:
        channels[CACHE_STATE_CHANNEL] = [record_block(record)]
    if reasoning_ids:
        channels[REPLAY_CHANNEL] = [reasoning_block(item_id) for item_id in reasoning_ids]
    items: list[Mapping[str, Any]] = list(extra_items)
    if calls is not None:
        items.append(
            {"type": "function_call", "call_id": calls, "name": "lookup", "arguments": "{}"}
        )
    else:
        items.append(
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text}],
            }
        )
    return HistoryMessage("assistant", "openai", channels, items, response_id)


def compaction_message() -> HistoryMessage:
    return HistoryMessage("user", items=[{"type": "compaction", "encrypted_content": "cmp"}])


def history_to_json(messages: Sequence[HistoryMessage]) -> dict[str, Any]:
    out = []
    for message in messages:
        raw: dict[str, Any] = {
            "role": message.role,
            "channels": {name: list(blocks) for name, blocks in message.channels.items()},
            "items": [dict(item) for item in message.items],
        }
        if message.provider is not None:
            raw["provider"] = message.provider
        if message.response_id is not None:
            raw["response_id"] = message.response_id
        out.append(raw)
    return {"messages": out}


def resume(messages: Sequence[HistoryMessage]) -> tuple[HistoryMessage, ...]:
    """Save the history as JSON text and load it again, as a restarted agent would."""
    return history_from_json(json.loads(json.dumps(history_to_json(messages))))


def settings(desired: object = "low", **changes: Any) -> PlanSettings:
    return replace(
        PlanSettings(model=ASTRA, desired_effort=desired, instance_key=INSTANCE_KEY), **changes
    )


def plan_ok(messages: Sequence[HistoryMessage], plan_settings: PlanSettings) -> Plan:
    plan = plan_request(messages, plan_settings)
    assert isinstance(plan, Plan), plan
    return plan


def updates(items: Sequence[Mapping[str, Any]]) -> list[str]:
    return [
        item["reasoning"]["effort"] for item in items if item.get("type") == "configuration_update"
    ]


def update(effort: str) -> dict[str, Any]:
    return {"type": "configuration_update", "reasoning": {"effort": effort}}


def own_items(*messages: HistoryMessage) -> list[dict[str, Any]]:
    return [dict(item) for message in messages for item in message.items]


def assert_no_adjacent_updates(items: Sequence[Mapping[str, Any]]) -> None:
    kinds = [item.get("type") for item in items]
    assert all(not (a == b == "configuration_update") for a, b in itertools.pairwise(kinds)), kinds


# --- a conversation driven the way an agent drives the planner ------------------------------


@dataclass
class Conversation:
    """Plans each request, then stores the response with ``plan.record`` and a response id."""

    settings: PlanSettings
    messages: list[HistoryMessage] = field(default_factory=list)
    plans: list[Plan] = field(default_factory=list)

    def send(
        self,
        message: HistoryMessage,
        *,
        desired: object | None = None,
        metadata: Mapping[str, Any] | None = None,
        calls: str | None = None,
        **changes: Any,
    ) -> Plan:
        if desired is not None:
            changes["desired_effort"] = desired
        if metadata is not None:
            changes["metadata"] = metadata
        self.settings = replace(self.settings, **changes)
        self.messages.append(message)
        plan = plan_ok(self.messages, self.settings)
        self.plans.append(plan)
        self.messages.append(
            assistant(plan.record, calls=calls, response_id=f"resp_{len(self.plans)}")
        )
        return plan

    def replan(self, desired: object | None = None) -> Plan:
        """The request that the current history (ending with a message to send) gives."""
        chosen = (
            self.settings if desired is None else replace(self.settings, desired_effort=desired)
        )
        return plan_ok(self.messages[:-1], chosen)


# --- SPEC §9.4 worked examples ----------------------------------------------------------------


def test_worked_example_puts_updates_at_original_user_boundaries() -> None:
    u1, u2, u3 = user("u1"), user("u2"), user("u3")
    a1, a2 = assistant(effort="low", text="a1"), assistant(effort="high", text="a2")
    plan = plan_ok([u1, a1, u2, a2, u3], settings("low"))
    assert plan.request["reasoning"] == {"effort": "low"}
    assert plan.request["input"] == [
        *own_items(u1, a1),
        update("high"),
        *own_items(u2, a2),
        update("low"),
        *own_items(u3),
    ]
    assert plan.record == CacheStateRecord(ASTRA, INSTANCE_KEY, "low")
    assert plan.request["prompt_cache_key"] == INSTANCE_KEY
    assert plan.diagnostics == ()


def test_worked_example_tool_loop_change_waits_for_next_genuine_turn() -> None:
    conversation = Conversation(settings("low"))
    conversation.send(user("u1"), calls="call_1")
    during_loop = conversation.send(tool_result("call_1"), desired="high")
    assert updates(during_loop.request["input"]) == []
    assert during_loop.record.effort == "low"
    assert during_loop.request["reasoning"] == {"effort": "low"}
    next_turn = conversation.send(user("u2"))
    assert updates(next_turn.request["input"]) == ["high"]
    assert next_turn.request["input"][-2:] == [update("high"), *own_items(user("u2"))]
    assert next_turn.record.effort == "high"


@pytest.mark.parametrize("compaction_type", ["compaction", "compaction_trigger"])
def test_worked_example_native_compaction_forces_an_update_of_equal_effort(
    compaction_type: str,
) -> None:
    u1, a1, u2 = user("u1"), assistant(effort="low"), user("u2")
    c = HistoryMessage("user", items=[{"type": compaction_type, "encrypted_content": "cmp"}])
    plan = plan_ok([u1, a1, c, u2], settings("low"))
    assert plan.request["input"] == [*own_items(u1, a1, c), update("low"), *own_items(u2)]
    assert plan.record.effort == "low"


def test_compaction_inside_the_response_makes_the_next_turn_restate_its_effort() -> None:
    u1, u2 = user("u1"), user("u2")
    a1 = assistant(effort="medium", extra_items=[{"type": "compaction", "encrypted_content": "c"}])
    plan = plan_ok([u1, a1, u2], settings("medium"))
    assert updates(plan.request["input"]) == ["medium"]


def test_compaction_without_a_following_genuine_turn_records_last_known_effort() -> None:
    history = [
        user("u1"),
        assistant(effort="high", calls="call_1"),
        compaction_message(),
        tool_result(),
    ]
    plan = plan_ok(history, settings("low"))
    assert updates(plan.request["input"]) == []
    assert plan.record.effort == "high"
    assert plan.request["reasoning"] == {"effort": "high"}


def test_compaction_in_the_genuine_turn_itself_applies_after_that_turn() -> None:
    u1 = HistoryMessage(
        "user",
        items=[
            {"type": "compaction_trigger"},
            {"type": "message", "role": "user", "content": "u1"},
        ],
    )
    plan = plan_ok([user("u0"), assistant(effort="low"), u1], settings("low"))
    assert updates(plan.request["input"]) == []  # effort equal, and unknown only after u1
    assert plan.record.effort == "low"


def test_local_compaction_uses_surviving_records_only() -> None:
    """F7: a replaced (summarised) history gives its own baseline; nothing carries over."""
    summary = user("summary of earlier turns")
    plan = plan_ok([summary, assistant(effort="xhigh"), user("next")], settings("medium"))
    assert plan.request["reasoning"] == {"effort": "xhigh"}
    assert updates(plan.request["input"]) == ["medium"]
    emptied = plan_ok([user("next")], settings("medium"))
    assert emptied.request["reasoning"] == {"effort": "medium"}
    assert updates(emptied.request["input"]) == []


# --- F9: the four-request sequence, simulated -------------------------------------------------


def _f9_conversation(transport: PlanTransport) -> list[Plan]:
    conversation = Conversation(settings("low", transport=transport))
    conversation.send(user("u1"), desired="low")
    conversation.send(user("u2"), desired="high", calls="call_1")
    conversation.send(tool_result("call_1"), desired="high")
    conversation.send(user("u3"), desired="low")
    return conversation.plans


@pytest.mark.parametrize("transport", [PlanTransport.SSE, PlanTransport.WEBSOCKET])
def test_f9_full_replay_updates_low_high_high_low(transport: PlanTransport) -> None:
    plans = _f9_conversation(transport)
    assert [updates(p.request["input"]) for p in plans] == [[], ["high"], ["high"], ["high", "low"]]
    assert all("previous_response_id" not in p.request for p in plans)
    assert [p.request["reasoning"]["effort"] for p in plans] == ["low"] * 4
    assert [p.record.effort for p in plans] == ["low", "high", "high", "low"]


def test_f9_full_replay_is_the_same_over_sse_and_websocket() -> None:
    sse = _f9_conversation(PlanTransport.SSE)
    websocket = _f9_conversation(PlanTransport.WEBSOCKET)
    assert [p.request for p in sse] == [p.request for p in websocket]


def test_f9_websocket_continuation_sends_only_the_increment() -> None:
    plans = _f9_conversation(PlanTransport.WEBSOCKET_CONTINUATION)
    full = _f9_conversation(PlanTransport.SSE)
    assert [updates(p.request["input"]) for p in plans] == [[], ["high"], [], ["low"]]
    assert "previous_response_id" not in plans[0].request  # nothing to continue from
    assert plans[0].request["input"] == full[0].request["input"]
    assert [p.request.get("previous_response_id") for p in plans[1:]] == [
        "resp_1",
        "resp_2",
        "resp_3",
    ]
    for continued, replayed in zip(plans[1:], full[1:], strict=True):
        increment = continued.request["input"]
        assert replayed.request["input"][-len(increment) :] == increment
        assert continued.record == replayed.record
        assert continued.request["reasoning"] == replayed.request["reasoning"]


def test_continuation_without_a_response_id_falls_back_to_full_replay() -> None:
    history = [user("u1"), assistant(effort="low"), user("u2")]
    plan = plan_ok(history, settings("high", transport=PlanTransport.WEBSOCKET_CONTINUATION))
    assert "previous_response_id" not in plan.request
    assert plan.request["input"] == plan_ok(history, settings("high")).request["input"]


@pytest.mark.parametrize("response_id", ["", None, 7, False, ["resp_1"]])
def test_a_response_id_that_is_no_non_empty_string_carries_none(response_id: object) -> None:
    """SPEC F9: only a non-empty string carries a response id; a continuation is then a full
    replay, whatever the stored value was."""
    raw = {
        "messages": [
            {"role": "user", "items": [{"type": "message", "role": "user", "content": "u1"}]},
            {"role": "assistant", "items": [], "response_id": response_id},
            {"role": "user", "items": [{"type": "message", "role": "user", "content": "u2"}]},
        ]
    }
    history = history_from_json(raw)
    plan = plan_ok(history, settings("high", transport=PlanTransport.WEBSOCKET_CONTINUATION))
    assert "previous_response_id" not in plan.request
    assert plan.request["input"] == plan_ok(history, settings("high")).request["input"]


# --- resume, clear and the key (K1–K3) --------------------------------------------------------


def _long_conversation() -> Conversation:
    conversation = Conversation(settings("low"))
    conversation.send(user("u1"))
    conversation.send(user("u2"), desired="high", calls="call_1")
    conversation.send(tool_result("call_1"), desired="max", calls="call_2")
    conversation.send(tool_result("call_2"))
    conversation.send(user("u3"))
    conversation.send(user("u4"), desired="medium")
    conversation.send(user("u5"), desired="medium")
    return conversation


def test_resume_from_json_replans_the_identical_request_at_every_step() -> None:
    conversation = _long_conversation()
    for end in range(1, len(conversation.messages) + 1):
        prefix = conversation.messages[:end]
        for desired in ("low", "xhigh"):
            plan_settings = settings(desired)
            assert plan_ok(resume(prefix), plan_settings) == plan_ok(prefix, plan_settings)
    # and each stored request is what the resumed history before its response plans again
    requests = [i for i, m in enumerate(conversation.messages) if m.role == "user"]
    desired_at = ["low", "high", "max", "max", "max", "medium", "medium"]
    for index, desired, plan in zip(requests, desired_at, conversation.plans, strict=True):
        resumed = resume(conversation.messages[: index + 1])
        assert plan_ok(resumed, settings(desired)) == plan


def test_resume_then_continue_gives_the_same_updates_as_never_stopping() -> None:
    conversation = _long_conversation()
    resumed = Conversation(conversation.settings, list(resume(conversation.messages)))
    straight = copy.deepcopy(conversation)
    assert resumed.send(user("u6"), desired="low") == straight.send(user("u6"), desired="low")
    assert updates(resumed.plans[-1].request["input"]) == ["high", "max", "medium", "low"]


def test_clear_draws_a_new_key_and_a_new_baseline_without_updates() -> None:
    conversation = _long_conversation()
    assert conversation.plans[-1].request["prompt_cache_key"] == INSTANCE_KEY
    cleared = Conversation(settings("xhigh", instance_key=NEW_INSTANCE_KEY))
    plan = cleared.send(user("after clear"))
    assert plan.request["prompt_cache_key"] == NEW_INSTANCE_KEY
    assert plan.request["reasoning"] == {"effort": "xhigh"}
    assert updates(plan.request["input"]) == []
    assert plan.record == CacheStateRecord(ASTRA, NEW_INSTANCE_KEY, "xhigh")
    second = cleared.send(user("again"), desired="low")
    assert second.request["prompt_cache_key"] == NEW_INSTANCE_KEY
    assert second.request["reasoning"] == {"effort": "xhigh"}
    assert updates(second.request["input"]) == ["low"]


def test_explicit_keys_a_b_then_none_give_a_b_b_and_resume_gives_b() -> None:
    key_a, key_b = "key-A", "key-B"
    conversation = Conversation(settings("low"))
    sent = [
        conversation.send(user("u1"), metadata={"prompt_cache_key": key_a}),
        conversation.send(user("u2"), metadata={"prompt_cache_key": key_b}),
        conversation.send(user("u3"), metadata={}),
    ]
    assert [p.request["prompt_cache_key"] for p in sent] == [key_a, key_b, key_b]
    assert [p.record.key for p in sent] == [key_a, key_b, key_b]
    history = [*resume(conversation.messages), user("u4")]
    assert plan_ok(history, settings("low")).request["prompt_cache_key"] == key_b
    null_key = plan_ok(history, settings("low", metadata={"prompt_cache_key": None}))
    assert null_key.request["prompt_cache_key"] == key_b  # null asks for nothing (F8)


def test_key_of_last_record_of_the_requested_model_wins_over_the_instance_key() -> None:
    history = [
        user("u1"),
        assistant(effort="low", key="first"),
        user("u2"),
        assistant(effort=None, model=OTHER, key="other-model"),
        user("u3"),
        assistant(effort="low", key="second"),
        user("u4"),
        assistant(effort=None, model=OTHER, key="other-again"),
        user("u5"),
    ]
    assert plan_ok(history, settings("low")).request["prompt_cache_key"] == "second"
    other = plan_ok(history, settings("low", model=OTHER))
    assert other.request["prompt_cache_key"] == "other-again"


def test_independent_instances_keep_independent_keys() -> None:
    first = Conversation(settings("low"))
    second = Conversation(settings("low", instance_key=NEW_INSTANCE_KEY))
    for n in range(3):
        assert first.send(user(f"u{n}")).request["prompt_cache_key"] == INSTANCE_KEY
        assert second.send(user(f"u{n}")).request["prompt_cache_key"] == NEW_INSTANCE_KEY


# --- F6: malformed records --------------------------------------------------------------------

VALID_MAX = {"model": ASTRA, "key": "bad-key", "effort": "max"}

MALFORMED_CHANNELS: dict[str, list[object]] = {
    "bad_json": [{"type": "text", "text": '{"model": "gpt-6-astra", "key": "k", "effort": "max"'}],
    "not_an_object": [{"type": "text", "text": json.dumps([VALID_MAX])}],
    "extra_member": [record_block({**VALID_MAX, "extra": 1})],
    "missing_member": [record_block({"model": ASTRA, "effort": "max"})],
    "duplicate_member": [
        {"type": "text", "text": '{"model":"gpt-6-astra","key":"k","effort":"low","effort":"max"}'}
    ],
    "effort_not_allowed": [record_block({**VALID_MAX, "effort": "minimal"})],
    "effort_none_string": [record_block({**VALID_MAX, "effort": "none"})],
    "effort_null_for_capable": [record_block({**VALID_MAX, "effort": None})],
    "effort_wrong_case": [record_block({**VALID_MAX, "effort": "MAX"})],
    "effort_not_string": [record_block({**VALID_MAX, "effort": 3})],
    "key_empty": [record_block({**VALID_MAX, "key": ""})],
    "key_not_string": [record_block({**VALID_MAX, "key": 7})],
    "model_not_string": [record_block({**VALID_MAX, "model": None})],
    "two_blocks": [record_block(VALID_MAX), record_block(VALID_MAX)],
    "block_not_text": [{"type": "json", "text": json.dumps(VALID_MAX)}],
    "block_not_object": [json.dumps(VALID_MAX)],
    "text_not_string": [{"type": "text", "text": VALID_MAX}],
    "nan": [{"type": "text", "text": '{"model":"gpt-6-astra","key":"k","effort":NaN}'}],
    "byte_order_mark": [{"type": "text", "text": "\ufeff" + json.dumps(VALID_MAX)}],
    "lone_surrogate": [
        {"type": "text", "text": '{"model":"gpt-6-astra","key":"\\ud800","effort":"max"}'}
    ],
    "trailing_data": [{"type": "text", "text": json.dumps(VALID_MAX) + " x"}],
    "too_deep": [
        {
            "type": "text",
            "text": '{"model":"gpt-6-astra","key":"k","effort":"max","x":'
            + "[" * 40
            + "]" * 40
            + "}",
        }
    ],
}


@pytest.mark.parametrize("shape", sorted(MALFORMED_CHANNELS))
def test_malformed_record_is_absent_reported_and_its_effort_never_sent(shape: str) -> None:
    bad = HistoryMessage(
        "assistant",
        "openai",
        {CACHE_STATE_CHANNEL: MALFORMED_CHANNELS[shape]},
        own_items(assistant()),
    )
    history = [user("u1"), bad, user("u2"), assistant(effort="medium", key="good"), user("u3")]
    plan = plan_ok(history, settings("low"))
    assert plan.diagnostics == (Diagnostic(Code.CACHE_STATE_INVALID, 1, 0),)
    # the malformed record is absent: the valid one gives the baseline and u1 keeps it (F5)
    assert plan.request["reasoning"] == {"effort": "medium"}
    assert updates(plan.request["input"]) == ["low"]
    assert plan.request["prompt_cache_key"] == "good"
    assert "max" not in json.dumps(plan.request) and "bad-key" not in json.dumps(plan.request)


@pytest.mark.parametrize("shape", sorted(MALFORMED_CHANNELS))
def test_malformed_record_as_the_only_record_leaves_desired_as_baseline(shape: str) -> None:
    bad = HistoryMessage(
        "assistant",
        "openai",
        {CACHE_STATE_CHANNEL: MALFORMED_CHANNELS[shape]},
        own_items(assistant()),
    )
    plan = plan_ok([user("u1"), bad, user("u2")], settings("high"))
    assert plan.request["reasoning"] == {"effort": "high"}
    assert updates(plan.request["input"]) == []
    assert plan.request["prompt_cache_key"] == INSTANCE_KEY
    assert plan.record == CacheStateRecord(ASTRA, INSTANCE_KEY, "high")
    assert [d.code for d in plan.diagnostics] == [Code.CACHE_STATE_INVALID]


def test_every_malformed_record_is_reported_in_message_order_with_replay_diagnostics() -> None:
    broken_replay = HistoryMessage(
        "assistant",
        "openai",
        {
            REPLAY_CHANNEL: [{"type": "image"}],
            CACHE_STATE_CHANNEL: MALFORMED_CHANNELS["bad_json"],
        },
        own_items(assistant()),
    )
    history = [
        user("u1"),
        assistant(json.dumps({**VALID_MAX, "extra": 1})),
        user("u2"),
        broken_replay,
        user("u3"),
        assistant(effort="low"),
        user("u4"),
    ]
    plan = plan_ok(history, settings("low"))
    assert [(d.code, d.message_index, d.block_index) for d in plan.diagnostics] == [
        (Code.CACHE_STATE_INVALID, 1, 0),
        (Code.BLOCK_NOT_TEXT, 3, 0),
        (Code.CACHE_STATE_INVALID, 3, 0),
    ]


def test_record_of_another_model_is_ignored_not_reported() -> None:
    history = [
        user("u1"),
        assistant(effort="low"),
        user("u2"),
        assistant({"model": "gpt-6-astra-mini", "key": "x", "effort": "max"}),
        user("u3"),
        assistant(effort=None, model=OTHER, key="y"),
        user("u4"),
    ]
    plan = plan_ok(history, settings("high"))
    assert plan.diagnostics == ()
    # u2 and u3 are followed by records of other models: they keep the effective effort (F5)
    assert updates(plan.request["input"]) == ["high"]
    assert plan.request["input"][-2:] == [update("high"), *own_items(user("u4"))]
    assert plan.request["prompt_cache_key"] == INSTANCE_KEY


@pytest.mark.parametrize(
    ("requested", "record"),
    [
        (ASTRA, {"model": OTHER, "key": "k", "effort": "high"}),
        (ASTRA, {"model": OTHER, "key": "k", "effort": None}),
        (OTHER, {"model": ASTRA, "key": "k", "effort": "high"}),
        (OTHER, {"model": ASTRA, "key": "k", "effort": None}),
        (OTHER, {"model": "gpt-4o", "key": "k", "effort": "minimal"}),
    ],
)
def test_well_formed_record_of_another_model_is_ignored_whatever_its_effort(
    requested: str, record: dict[str, Any]
) -> None:
    """F6 (clarified): the effort is checked only against the requested model."""
    plan = plan_ok([user("u1"), assistant(record), user("u2")], settings("low", model=requested))
    assert plan.diagnostics == ()
    assert plan.request["prompt_cache_key"] == INSTANCE_KEY


@pytest.mark.parametrize("requested", [ASTRA, OTHER])
def test_structurally_malformed_record_of_another_model_is_still_reported(requested: str) -> None:
    """F6 (clarified): the structure is checked first, for every record."""
    bad = json.dumps({"model": "gpt-4o", "key": "k", "effort": None, "extra": True})
    plan = plan_ok([user("u1"), assistant(bad), user("u2")], settings("low", model=requested))
    assert plan.diagnostics == (Diagnostic(Code.CACHE_STATE_INVALID, 1, 0),)


def test_a_non_update_capable_record_with_an_effort_is_malformed_for_that_model() -> None:
    history = [user("u1"), assistant(effort="high", model=OTHER, key="k"), user("u2")]
    plan = plan_ok(history, settings("low", model=OTHER))
    assert plan.diagnostics == (Diagnostic(Code.CACHE_STATE_INVALID, 1, 0),)
    assert plan.request["prompt_cache_key"] == INSTANCE_KEY


# --- F2: never two adjacent updates -----------------------------------------------------------


def _two_user_items(first: object, second: str) -> HistoryMessage:
    return HistoryMessage(
        "user",
        items=[
            {"type": "message", "role": "user", "content": first},
            {"type": "message", "role": "user", "content": second},
        ],
    )


ADVERSARIAL_HISTORIES: dict[str, list[HistoryMessage]] = {
    "alternating_efforts": [
        m
        for n, effort in enumerate(["low", "max", "low", "max", "medium"])
        for m in (user(f"u{n}"), assistant(effort=effort))
    ]
    + [user("last")],
    "compaction_everywhere": [
        user("u1"),
        assistant(effort="low"),
        compaction_message(),
        compaction_message(),
        user("u2"),
        assistant(effort="high", extra_items=[{"type": "compaction", "encrypted_content": "c"}]),
        compaction_message(),
        user("u3"),
    ],
    "genuine_turns_back_to_back": [
        user("u1"),
        user("u2"),
        assistant(effort="high"),
        user("u3"),
        user("u4"),
    ],
    "two_user_items_in_one_turn": [
        _two_user_items("first", "second"),
        assistant(effort="max"),
        _two_user_items("", "second"),
        assistant(effort="low"),
        _two_user_items([], "second"),
    ],
    "tool_results_between": [
        user("u1"),
        assistant(effort="max", calls="c1"),
        tool_result("c1"),
        assistant(effort="max", calls="c2"),
        tool_result("c2"),
        assistant(effort="max"),
        user("u2"),
    ],
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL_HISTORIES))
@pytest.mark.parametrize("desired", ["low", "max"])
@pytest.mark.parametrize("transport", [PlanTransport.SSE, PlanTransport.WEBSOCKET_CONTINUATION])
def test_an_update_is_never_adjacent_to_another(
    name: str, desired: str, transport: PlanTransport
) -> None:
    history = ADVERSARIAL_HISTORIES[name]
    plan = plan_ok(history, settings(desired, transport=transport))
    items = plan.request["input"]
    assert_no_adjacent_updates(items)
    for at, item in enumerate(items):
        if item.get("type") == "configuration_update":
            assert items[at + 1]["type"] == "message" and items[at + 1]["role"] == "user"


def test_update_goes_before_the_first_user_item_even_when_it_is_empty() -> None:
    turn = _two_user_items("", "real text")
    plan = plan_ok([user("u1"), assistant(effort="low"), turn], settings("high"))
    assert plan.request["input"][-3:] == [update("high"), *own_items(turn)]


# --- F10 and the registry ---------------------------------------------------------------------


def test_non_update_capable_model_never_gets_updates_and_records_null() -> None:
    conversation = Conversation(settings("low", model=OTHER))
    for n, desired in enumerate(["low", "high", "minimal", "max", "none"]):
        plan = conversation.send(user(f"u{n}"), desired=desired, calls=f"c{n}")
        assert updates(plan.request["input"]) == []
        assert plan.request["reasoning"] == {"effort": desired}
        assert plan.record == CacheStateRecord(OTHER, INSTANCE_KEY, None)
        loop = conversation.send(tool_result(f"c{n}"), desired="medium")
        assert updates(loop.request["input"]) == []
        assert loop.request["reasoning"] == {"effort": "medium"}
    assert all(p.diagnostics == () for p in conversation.plans)


def test_switching_to_another_model_and_back_keeps_astra_history_intact() -> None:
    conversation = Conversation(settings("low"))
    conversation.send(user("u1"))
    conversation.send(user("u2"), desired="high")
    on_other = conversation.send(user("u3"), desired="max", model=OTHER)
    assert updates(on_other.request["input"]) == []
    assert on_other.request["reasoning"] == {"effort": "max"}
    back = conversation.send(user("u4"), desired="medium", model=ASTRA)
    # u3's response has another model's record: u3 keeps high; u4 gets medium
    assert back.request["reasoning"] == {"effort": "low"}
    assert updates(back.request["input"]) == ["high", "medium"]
    assert back.diagnostics == ()


def test_no_desired_effort_for_another_model_sends_no_effort() -> None:
    plan = plan_ok([user("u1")], settings(None, model=OTHER))
    assert "reasoning" not in plan.request
    with_summary = plan_ok(
        [user("u1")], settings(None, model=OTHER, metadata={"reasoning": {"summary": "auto"}})
    )
    assert with_summary.request["reasoning"] == {"summary": "auto"}


@pytest.mark.parametrize("reasoning", [[1], "high", 5, True, []])
def test_non_object_reasoning_is_rejected_for_every_model(reasoning: object) -> None:
    """F8 (clarified): a non-object ``metadata.reasoning`` is ``plan_effort_invalid`` for other
    models too, never a crash; ``null`` is absent for them and rejected for update-capable ones."""
    for model in (OTHER, ASTRA):
        chosen = settings("low", model=model, metadata={"reasoning": reasoning})
        assert plan_request([user("u1")], chosen) is Code.PLAN_EFFORT_INVALID
    null_other = plan_ok([user("u1")], settings("low", model=OTHER, metadata={"reasoning": None}))
    assert null_other.request["reasoning"] == {"effort": "low"}
    null_astra = settings("low", metadata={"reasoning": None})
    assert plan_request([user("u1")], null_astra) is Code.PLAN_EFFORT_INVALID


@pytest.mark.parametrize("effort", ["minimal", "none", "ultra", 5, ["high"], {"level": 1}])
def test_another_models_desired_effort_is_sent_as_given(effort: object) -> None:
    """F11 (clarified): no effort is checked for a model that is not update-capable."""
    configured = plan_ok([user("u1")], settings(effort, model=OTHER))
    assert configured.request["reasoning"] == {"effort": effort}
    metadata = {"reasoning": {"effort": effort, "summary": "auto"}}
    override = plan_ok([user("u1")], settings("low", model=OTHER, metadata=metadata))
    assert override.request["reasoning"] == {"effort": effort, "summary": "auto"}
    assert override.record.effort is None


def test_custom_registry_is_exact_membership() -> None:
    registry = frozenset(("house-model",))
    history = [user("u1"), assistant(effort="low", model="house-model"), user("u2")]
    house = plan_ok(history, settings("high", model="house-model", update_capable=registry))
    assert updates(house.request["input"]) == ["high"]
    assert house.request["reasoning"] == {"effort": "low"}
    assert house.record == CacheStateRecord("house-model", INSTANCE_KEY, "high")
    # astra is not update-capable under this registry: no updates, record effort null
    astra_history = [user("u1"), assistant(effort=None), user("u2")]
    astra = plan_ok(astra_history, settings("high", update_capable=registry))
    assert updates(astra.request["input"]) == []
    assert astra.request["reasoning"] == {"effort": "high"}
    assert astra.record.effort is None
    assert astra.diagnostics == ()
    # near misses of the default registry's name are other models
    for near in ("GPT-6-ASTRA", "gpt-6-astra ", "gpt-6-astra-mini"):
        plan = plan_ok(
            [user("u1"), assistant(effort="low", model=near), user("u2")],
            settings("high", model=near),
        )
        assert updates(plan.request["input"]) == []
        assert plan.record.effort is None
    assert frozenset((ASTRA,)) == DEFAULT_UPDATE_CAPABLE


def test_empty_registry_makes_every_model_plain() -> None:
    plan = plan_ok(
        [user("u1"), assistant(effort="low"), user("u2")], settings("high", update_capable=())
    )
    assert updates(plan.request["input"]) == []
    assert plan.request["reasoning"] == {"effort": "high"}


# --- the rest of the plan ---------------------------------------------------------------------


def test_reasoning_members_other_than_effort_pass_through_and_effort_is_the_baseline() -> None:
    metadata = {
        "reasoning": {"effort": "max", "summary": "auto", "context": {"x": 1}, "mode": "standard"}
    }
    plan = plan_ok(
        [user("u1"), assistant(effort="low"), user("u2")], settings("low", metadata=metadata)
    )
    assert plan.request["reasoning"] == {
        "effort": "low",
        "summary": "auto",
        "context": {"x": 1},
        "mode": "standard",
    }
    assert updates(plan.request["input"]) == ["max"]  # metadata's effort is the desired one


def test_replay_items_come_before_own_items_and_do_not_move_updates() -> None:
    history = [
        user("u1"),
        assistant(effort="low", reasoning_ids=["rs_1", "rs_2"]),
        user("u2"),
        assistant(effort="high", reasoning_ids=["rs_1", "rs_3"]),  # rs_1 again: deduplicated
        user("u3"),
    ]
    plan = plan_ok(history, settings("low"))
    items = plan.request["input"]
    assert [i.get("id") for i in items if i["type"] == "reasoning"] == ["rs_1", "rs_2", "rs_3"]
    assert [i["type"] for i in items] == [
        "message",
        "reasoning",
        "reasoning",
        "message",
        "configuration_update",
        "message",
        "reasoning",
        "message",
        "configuration_update",
        "message",
    ]
    assert [d.code for d in plan.diagnostics] == [Code.DEDUPE_EXACT_DUPLICATE]


def test_compact_endpoint_refuses_a_planned_update_but_not_a_plain_history() -> None:
    history = [user("u1"), assistant(effort="low"), user("u2")]
    assert plan_request(history, settings("high", endpoint=Endpoint.COMPACT)) == (
        Code.PLAN_COMPACT_WITH_UPDATES
    )
    assert isinstance(plan_request(history, settings("low", endpoint=Endpoint.COMPACT)), Plan)


def test_planning_is_pure_and_leaves_the_history_untouched() -> None:
    conversation = _long_conversation()
    history = [*conversation.messages, user("next")]
    before = copy.deepcopy(history_to_json(history))
    first = plan_ok(history, settings("xhigh"))
    assert history_to_json(history) == before
    first.request["input"].append({"type": "mutated"})
    assert plan_ok(history, settings("xhigh")).request["input"][-1] == own_items(user("next"))[0]


def test_configuration_update_item_is_exactly_the_spec_shape() -> None:
    assert configuration_update("xhigh") == {
        "type": "configuration_update",
        "reasoning": {"effort": "xhigh"},
    }


# --- §9.1 genuine user turns -------------------------------------------------------------------


def _user_with(
    *items: Mapping[str, Any], channels: Mapping[str, Sequence[object]] | None = None
) -> HistoryMessage:
    return HistoryMessage("user", channels=channels or {}, items=items)


def _text(content: object) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": content}


GENUINE_CASES: dict[str, tuple[HistoryMessage, bool]] = {
    "string_content": (_user_with(_text("hi")), True),
    "array_content": (_user_with(_text([{"type": "input_text", "text": "hi"}])), True),
    "whitespace_string": (_user_with(_text(" ")), True),
    "empty_string": (_user_with(_text("")), False),
    "empty_array": (_user_with(_text([])), False),
    "null_content": (_user_with(_text(None)), False),
    "no_content": (_user_with({"type": "message", "role": "user"}), False),
    "no_items": (_user_with(), False),
    "assistant_role_item": (
        _user_with({"type": "message", "role": "assistant", "content": "x"}),
        False,
    ),
    "function_call_output": (
        _user_with(_text("hi"), {"type": "function_call_output", "call_id": "c", "output": "x"}),
        False,
    ),
    "custom_tool_call_output": (
        _user_with(
            {"type": "custom_tool_call_output", "call_id": "c", "output": "err"}, _text("hi")
        ),
        False,
    ),
    "empty_staged_media_channel": (
        _user_with(_text("hi"), channels={STAGED_MEDIA_CHANNEL: []}),
        True,
    ),
    "staged_media": (
        _user_with(_text("hi"), channels={STAGED_MEDIA_CHANNEL: [{"type": "image"}]}),
        False,
    ),
    "other_channel": (
        _user_with(_text("hi"), channels={"reasoning": [{"type": "text", "text": "r"}]}),
        True,
    ),
    "with_function_call_item": (
        _user_with(_text("hi"), {"type": "function_call", "call_id": "c"}),
        True,
    ),
    "assistant_message": (HistoryMessage("assistant", items=[_text("hi")]), False),
    "system_message": (HistoryMessage("system", items=[_text("hi")]), False),
    # SPEC §9.1: content must be "a non-empty string, or a non-empty array"
    "object_content": (_user_with(_text({"type": "input_text", "text": "hi"})), False),
    "number_content": (_user_with(_text(5)), False),
    "true_content": (_user_with(_text(True)), False),
}


@pytest.mark.parametrize("case", sorted(GENUINE_CASES))
def test_is_genuine_user_turn_follows_section_9_1(case: str) -> None:
    message, expected = GENUINE_CASES[case]
    assert is_genuine_user_turn(message) is expected


def test_staged_media_and_tool_errors_are_continuations_that_get_no_update() -> None:
    media = _user_with(_text("see image"), channels={STAGED_MEDIA_CHANNEL: [{"type": "image"}]})
    error = _user_with({"type": "custom_tool_call_output", "call_id": "c", "output": "Error: boom"})
    for continuation in (media, error):
        plan = plan_ok(
            [user("u1"), assistant(effort="low", calls="c"), continuation], settings("max")
        )
        assert updates(plan.request["input"]) == []
        assert plan.record.effort == "low"


# --- read_cache_state ---------------------------------------------------------------------------


@pytest.mark.parametrize("shape", sorted(MALFORMED_CHANNELS))
def test_read_cache_state_refuses_each_malformed_shape(shape: str) -> None:
    blocks = MALFORMED_CHANNELS[shape]
    result = read_cache_state(blocks)
    if shape.startswith("effort_") and shape not in ("effort_not_string",):
        # a well-formed object whose effort is not allowed for the model: the planner decides
        assert isinstance(result, CacheStateRecord)
    else:
        assert result is Code.CACHE_STATE_INVALID


@pytest.mark.parametrize(
    "blocks",
    [
        [{"type": "text", "text": "{}"}],
        [{"type": "text", "text": '{"model":"m","key":"k","effort":null,"x":null}'}],
        [{"type": "text", "text": '{"model":"m","key":"k"}'}],
        [{"type": "text", "text": '{"model":"m","key":"k","effort":["low"]}'}],
        [{"type": "text", "text": '{"model":"m","key":"k","effort":true}'}],
        [{"type": "text", "text": '{"model":1,"key":"k","effort":null}'}],
        [{"type": "text", "text": '{"model":"m","key":{},"effort":null}'}],
        [{"type": "text", "text": '"just a string"'}],
        [{"type": "text", "text": "null"}],
        [{"type": "text", "text": ""}],
        [{"type": "text"}],
        [{"text": '{"model":"m","key":"k","effort":null}'}],
        [None],
        [[]],
        [
            {"type": "text", "text": '{"model":"m","key":"k","effort":null}'},
            {"type": "text", "text": "x"},
        ],
        [{"type": "text", "text": b'{"model":"m","key":"k","effort":null}'}],
    ],
)
def test_read_cache_state_refuses_more_shapes(blocks: list[object]) -> None:
    assert read_cache_state(blocks) is Code.CACHE_STATE_INVALID


def test_read_cache_state_absent_and_valid() -> None:
    assert read_cache_state([]) is None
    assert read_cache_state(()) is None
    text = json.dumps({"model": ASTRA, "key": "k", "effort": "high"})
    assert read_cache_state([{"type": "text", "text": text}]) == CacheStateRecord(
        ASTRA, "k", "high"
    )
    assert read_cache_state(
        [{"type": "text", "text": f"  {text}\n", "annotations": [], "_meta": {"a": 1}}]
    ) == CacheStateRecord(ASTRA, "k", "high")
    null_effort = json.dumps({"effort": None, "key": "k", "model": OTHER})
    assert read_cache_state([{"type": "text", "text": null_effort}]) == CacheStateRecord(
        OTHER, "k", None
    )
    assert CacheStateRecord(ASTRA, "k", "low").to_json() == {
        "model": ASTRA,
        "key": "k",
        "effort": "low",
    }


def test_a_record_text_over_the_16_mib_limit_of_e4_1_is_malformed() -> None:
    # SPEC F6: a record's text is one I-JSON object within the limits of E4.1, as a block's is;
    # a key that makes the text one byte too long leaves the record malformed, one byte less not.
    head, tail = '{"model":"m","key":"', '","effort":null}'
    room = 16 * 1024 * 1024 - len(head) - len(tail)
    at_limit = head + "k" * room + tail
    over = head + "k" * (room + 1) + tail
    assert read_cache_state([{"type": "text", "text": at_limit}]) == CacheStateRecord(
        "m", "k" * room, None
    )
    assert read_cache_state([{"type": "text", "text": over}]) is Code.CACHE_STATE_INVALID


@pytest.mark.parametrize(
    "text",
    [
        '{"model":"m","key":"k","effort":null,"key":"k"}',
        '{"model":"m","key":"k","key":"j","effort":null}',
        '{"model":"m","key":"k","effort":"low","effort":"high"}',
        '{"model":"m","key":"\\ud800","effort":null}',
        '{"model":"m","key":"k","effort":NaN}',
        '\ufeff{"model":"m","key":"k","effort":null}',
    ],
)
def test_read_cache_state_refuses_text_rule_breaks_the_compact_path_cannot_see(text: str) -> None:
    # Duplicates are what msgspec's typed decode drops silently; the length proof must catch them.
    assert read_cache_state([{"type": "text", "text": text}]) is Code.CACHE_STATE_INVALID


_RECORD_STRINGS = st.text(st.characters(codec="utf-8"), max_size=12)


@given(
    model=_RECORD_STRINGS,
    key=_RECORD_STRINGS,
    effort=st.none() | _RECORD_STRINGS,
    duplicate=st.sampled_from([None, "model", "key", "effort"]),
    spaced=st.booleans(),
)
def test_read_cache_state_agrees_with_the_strict_reading(
    model: str, key: str, effort: str | None, duplicate: str | None, spaced: bool
) -> None:
    members = [("model", model), ("key", key), ("effort", effort)]
    if duplicate is not None:
        members.append((duplicate, dict(members)[duplicate]))
    sep = (", ", ": ") if spaced else (",", ":")
    text = (
        "{"
        + sep[0].join(
            json.dumps(k) + sep[1] + json.dumps(v, ensure_ascii=False) for k, v in members
        )
        + "}"
    )
    expected = (
        CacheStateRecord(model, key, effort)
        if duplicate is None and key
        else Code.CACHE_STATE_INVALID
    )
    assert read_cache_state([{"type": "text", "text": text}]) == expected


# --- tools/bench_planner.py smoke test (nothing timed or asserted about speed) ----------------


def test_bench_planner_builds_the_history_it_describes_and_reports(tmp_path: Path) -> None:
    tools = str(Path(__file__).resolve().parent.parent / "tools")
    if tools not in sys.path:
        sys.path.insert(0, tools)
    bench = importlib.import_module("bench_planner")
    messages, composition = bench.build_history(400, seed=7)
    assert len(messages) == composition.messages == 400
    assert is_genuine_user_turn(messages[-1])
    assert (
        composition.genuine_turns + composition.tool_results + composition.assistant_messages == 400
    )
    assert composition.tool_results > 0 and composition.effort_changes > 0
    assert bench.build_history(400, seed=7)[0] == messages  # deterministic
    plan = plan_ok(messages, settings("medium"))
    assert plan.diagnostics == ()
    # the builder's records are what the planner records: replanning each stored request agrees
    for end, message in enumerate(messages):
        if message.role == "assistant" and end > 0:
            stored = read_cache_state(message.channels[CACHE_STATE_CHANNEL])
            assert isinstance(stored, CacheStateRecord)
            desired = stored.effort if is_genuine_user_turn(messages[end - 1]) else "low"
            assert plan_ok(messages[:end], settings(desired)).record == stored
            if end > 60:
                break
    out = tmp_path / "bench.json"
    assert (
        bench.main(["--messages", "40", "--runs", "1", "--scales", "1,2", "--json", str(out)]) == 0
    )
    report = json.loads(out.read_text(encoding="utf-8"))
    assert [m["messages"] for m in report["measurements"]] == [40, 80]
    assert len(report["ratios"]) == 1 and report["ratios"][0]["size_ratio"] == 2


@pytest.mark.parametrize("channel", [None, "x", {"type": "text", "text": "{}"}, 7, True])
def test_read_cache_state_refuses_a_channel_that_is_not_an_array(channel: object) -> None:
    assert read_cache_state(channel) is Code.CACHE_STATE_INVALID  # SPEC F6


def test_history_keeps_a_cache_state_channel_that_is_not_an_array_for_f6() -> None:
    messages = history_from_json(
        {"messages": [{"role": "assistant", "channels": {CACHE_STATE_CHANNEL: "x"}}]}
    )
    assert messages[0].channels[CACHE_STATE_CHANNEL] == "x"
    plan = plan_ok([user(), *messages, user()], settings())
    assert plan.diagnostics == (Diagnostic(Code.CACHE_STATE_INVALID, 1, 0),)


@pytest.mark.parametrize("channels", [{REPLAY_CHANNEL: "x"}, {STAGED_MEDIA_CHANNEL: {}}])
def test_history_refuses_other_channels_that_are_not_arrays(channels: dict[str, object]) -> None:
    with pytest.raises(HistoryShapeError, match="must be an array"):
        history_from_json({"messages": [{"role": "assistant", "channels": channels}]})


@pytest.mark.parametrize("provider", ["", None, 42, {"name": "x"}, ["openai"], False])
def test_only_a_non_empty_provider_string_is_recorded(provider: object) -> None:
    (message,) = history_from_json({"messages": [{"role": "assistant", "provider": provider}]})
    assert message.provider is None  # SPEC D1: the target provider is used


def test_a_record_on_a_user_message_is_never_read() -> None:
    # SPEC F6: neither a record for F1/K2 nor reported, however malformed.
    high = record_block(CacheStateRecord(ASTRA, NEW_INSTANCE_KEY, "high"))
    valid = replace(user(), channels={CACHE_STATE_CHANNEL: [high]})
    broken = replace(user(), channels={CACHE_STATE_CHANNEL: "junk"})
    plan = plan_ok([valid, assistant(effort="low"), broken], settings())
    assert plan.request["reasoning"] == {"effort": "low"}
    assert plan.request["prompt_cache_key"] == INSTANCE_KEY
    assert plan.diagnostics == ()


def test_compact_endpoint_ignores_a_websocket_continuation() -> None:
    # SPEC F8: the standalone compact endpoint always receives a full replay.
    history = [user("u1"), assistant(effort="low", response_id="resp_1"), user("u2")]
    compact = settings(transport=PlanTransport.WEBSOCKET_CONTINUATION, endpoint=Endpoint.COMPACT)
    plan = plan_ok(history, compact)
    assert "previous_response_id" not in plan.request
    assert len(plan.request["input"]) == 3
    updated = [
        user("u1"),
        assistant(effort="low", response_id="r"),
        user("u2"),
        assistant(effort="high", response_id="r2"),
        user("u3"),
    ]
    assert plan_request(updated, replace(compact, desired_effort="high")) is (
        Code.PLAN_COMPACT_WITH_UPDATES
    )
