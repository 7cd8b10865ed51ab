"""Property tests (hypothesis) of the request planner (SPEC §9) over simulated conversations.

A conversation is driven turn by turn from random events: a genuine user turn with a random
desired effort, a tool result or staged media (tool-result continuations, SPEC §9.1) with a
possibly changed desired effort, a native compaction item in the next response, a switch to a
model that is not update-capable and back, and a resume (a JSON round trip of the history).
After each request the planner's plan is stored the way an agent stores it: an assistant message
carrying ``plan.record`` as its cache-state block and a response id.

(a) no two configuration updates are adjacent in any request input (F2);
(b) every update directly precedes the first ``message`` item of role user of a genuine user
    turn, and the input is exactly P2's input plus the updates (F2, F4, F11);
(c) planning again from the saved history reproduces the update positions of every historical
    turn (F3);
(d) the request-level effort is the baseline: the first valid record's effort for the model,
    else the desired effort (F1); other models get the desired effort and no updates (F10);
(e) the effective effort at each genuine turn equals the record of the first assistant message
    after it; a change made during a tool loop surfaces only at the next genuine user turn (F4);
(f) the planner never raises: arbitrary cache-state texts and arbitrary override objects built
    from the F8 keys give a Plan or one of the registry's codes (F6, F8).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from reasoning_replay import (
    REPLAY_CHANNEL,
    Code,
    HistoryMessage,
    ReplayTarget,
    build_replay_input,
    canonicalize_completed_reasoning_output_item,
    history_from_json,
)
from reasoning_replay.ordering.cache_state import CACHE_STATE_CHANNEL
from reasoning_replay.ordering.planner import (
    Endpoint,
    Plan,
    PlanSettings,
    PlanTransport,
    plan_request,
)

ASTRA = "gpt-6-astra"
OTHER = "gpt-5.1"
KEY = "0123456789abcdef" * 2
EFFORTS = ("low", "medium", "high", "xhigh", "max")
STAGED_MEDIA_CHANNEL = "fast-agent-tool-media-message"
TOOL_OUTPUTS = ("function_call_output", "custom_tool_call_output")
PLAN_CODES = frozenset(code for code in Code if code.value.startswith("plan_"))

PROPERTY_SETTINGS = settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# --- independent readings of the history (not the planner's helpers) -------------------------


def spec_genuine(message: HistoryMessage) -> bool:
    """SPEC §9.1, read directly."""
    if message.role != "user" or message.channels.get(STAGED_MEDIA_CHANNEL):
        return False
    if any(item.get("type") in TOOL_OUTPUTS for item in message.items):
        return False
    return any(
        item.get("type") == "message"
        and item.get("role") == "user"
        and isinstance(item.get("content"), str | list)
        and len(item["content"]) > 0
        for item in message.items
    )


def valid_record(message: HistoryMessage, model: str) -> dict[str, Any] | None:
    """The message's record when it is valid for ``model`` (SPEC §9.1); records here are the
    planner's own, so a plain JSON parse suffices."""
    blocks = message.channels.get(CACHE_STATE_CHANNEL, ())
    if message.role != "assistant" or len(blocks) != 1:
        return None
    block = blocks[0]
    assert isinstance(block, Mapping)
    record = json.loads(block["text"])
    assert isinstance(record, dict)
    if record.keys() != {"model", "key", "effort"} or record["model"] != model:
        return None
    allowed = record["effort"] in EFFORTS if model == ASTRA else record["effort"] is None
    return record if allowed and isinstance(record["key"], str) and record["key"] else None


def is_update(item: Mapping[str, Any]) -> bool:
    return item.get("type") == "configuration_update"


def segments(
    messages: Sequence[HistoryMessage], planned: Sequence[Mapping[str, Any]]
) -> list[list[Mapping[str, Any]]]:
    """Each message's part of ``planned``: P2's items of the message, with the updates that
    precede them. Asserts that ``planned`` is exactly P2's input with updates inserted."""
    expected = build_replay_input(messages, ReplayTarget("openai")).by_message
    out: list[list[Mapping[str, Any]]] = []
    at = 0
    for items in expected:
        part: list[Mapping[str, Any]] = []
        for item in items:
            while at < len(planned) and is_update(planned[at]):
                part.append(planned[at])
                at += 1
            assert at < len(planned) and planned[at] == item, (at, item)
            part.append(planned[at])
            at += 1
        out.append(part)
    assert at == len(planned), "items after the last message"
    return out


def update_efforts(items: Sequence[Mapping[str, Any]]) -> list[str]:
    return [item["reasoning"]["effort"] for item in items if is_update(item)]


# --- the simulated conversation ----------------------------------------------------------------


def user_turn(n: int) -> HistoryMessage:
    return HistoryMessage("user", items=[{"type": "message", "role": "user", "content": f"u{n}"}])


def tool_result(call_id: str) -> HistoryMessage:
    return HistoryMessage(
        "user", items=[{"type": "function_call_output", "call_id": call_id, "output": "42"}]
    )


def staged_media(n: int) -> HistoryMessage:
    return HistoryMessage(
        "user",
        channels={STAGED_MEDIA_CHANNEL: [{"type": "text", "text": f"media {n}"}]},
        items=[{"type": "message", "role": "user", "content": [{"type": "input_image"}]}],
    )


def reasoning_block(item_id: str) -> dict[str, Any]:
    captured = canonicalize_completed_reasoning_output_item(
        {
            "type": "reasoning",
            "id": item_id,
            "summary": [{"type": "summary_text", "text": "s"}],
            "encrypted_content": "gAAAA" + item_id,
        }
    )
    assert captured.envelope_text is not None
    return {"type": "text", "text": captured.envelope_text}


def response(
    plan: Plan, n: int, call_id: str | None, compaction: bool, reasoning_id: int | None
) -> HistoryMessage:
    channels: dict[str, list[object]] = {
        CACHE_STATE_CHANNEL: [{"type": "text", "text": json.dumps(plan.record.to_json())}]
    }
    if reasoning_id is not None:
        channels[REPLAY_CHANNEL] = [reasoning_block(f"rs_{reasoning_id}")]
    items: list[dict[str, Any]] = []
    if compaction:
        items.append({"type": "compaction", "encrypted_content": f"cmp_{n}"})
    if call_id is not None:
        items.append({"type": "function_call", "call_id": call_id, "name": "f", "arguments": "{}"})
    else:
        items.append(
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "ok"}],
            }
        )
    return HistoryMessage("assistant", "openai", channels, items, f"resp_{n}")


def resume(messages: Sequence[HistoryMessage]) -> list[HistoryMessage]:
    raw = [
        {
            "role": m.role,
            "provider": m.provider,
            "channels": {name: list(blocks) for name, blocks in m.channels.items()},
            "items": [dict(item) for item in m.items],
            "response_id": m.response_id,
        }
        for m in messages
    ]
    return list(history_from_json(json.loads(json.dumps({"messages": raw}))))


@dataclass(frozen=True)
class Step:
    genuine: bool
    plan_settings: PlanSettings
    history: tuple[HistoryMessage, ...]
    plan: Plan


@dataclass
class Simulation:
    messages: list[HistoryMessage] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    last_astra_desired: str = "low"


Event = tuple[Any, ...]

KINDS = ("user",) * 6 + ("tool",) * 4 + ("media", "compaction", "switch", "resume")
events = st.lists(
    st.tuples(
        st.sampled_from(KINDS),
        st.sampled_from(EFFORTS),  # the desired effort of a request
        st.booleans(),  # its response calls a tool
        st.none() | st.integers(0, 3),  # a reasoning replay block (ids repeat: deduplication)
    ),
    min_size=2,
    max_size=30,
)


def simulate(script: Sequence[Event]) -> Simulation:
    sim = Simulation()
    model = ASTRA
    pending_call: str | None = None
    compaction_next = False
    for n, event in enumerate(script):
        if event[0] == "switch":
            model = OTHER if model == ASTRA else ASTRA
            continue
        if event[0] == "compaction":
            compaction_next = True
            continue
        if event[0] == "resume":
            sim.messages = resume(sim.messages)
            if sim.steps:  # the last request, planned again from the resumed history
                last = sim.steps[-1]
                again = plan_request(sim.messages[: len(last.history)], last.plan_settings)
                assert again == last.plan
            continue
        kind, desired, calls, reasoning_id = event
        if kind == "tool" and pending_call is not None:
            message = tool_result(pending_call)
        elif kind == "media":
            message = staged_media(n)
        else:
            message = user_turn(n)
        sim.messages.append(message)
        plan_settings = PlanSettings(model, desired, KEY)
        plan = plan_request(sim.messages, plan_settings)
        assert isinstance(plan, Plan), plan
        sim.steps.append(Step(spec_genuine(message), plan_settings, tuple(sim.messages), plan))
        if model == ASTRA:
            sim.last_astra_desired = desired
        pending_call = f"call_{n}" if calls else None
        sim.messages.append(response(plan, n, pending_call, compaction_next, reasoning_id))
        compaction_next = False
    return sim


def final_replan(sim: Simulation) -> Plan:
    plan = plan_request(sim.messages, PlanSettings(ASTRA, sim.last_astra_desired, KEY))
    assert isinstance(plan, Plan)
    return plan


def effective_at_turns(
    messages: Sequence[HistoryMessage], parts: Sequence[Sequence[Mapping[str, Any]]], baseline: str
) -> dict[int, str]:
    """The effective effort at each genuine user turn, walking the planned input (§9.3)."""
    effective: str | None = baseline
    at_turn: dict[int, str] = {}
    for index, (message, part) in enumerate(zip(messages, parts, strict=True)):
        for item in part:
            if is_update(item):
                effective = item["reasoning"]["effort"]
        if spec_genuine(message):
            assert effective is not None, f"turn {index} after native compaction without update"
            at_turn[index] = effective
        if any(item.get("type") in ("compaction", "compaction_trigger") for item in message.items):
            effective = None
    return at_turn


# --- (a)–(e) ---------------------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(events)
def test_a_b_updates_never_adjacent_and_only_before_genuine_user_items(
    script: list[Event],
) -> None:
    sim = simulate(script)
    plans = [(step.history, step.plan) for step in sim.steps]
    plans.append((tuple(sim.messages), final_replan(sim)))
    for history, plan in plans:
        planned = plan.request["input"]
        assert not any(is_update(a) and is_update(b) for a, b in itertools.pairwise(planned))
        for message, part in zip(history, segments(history, planned), strict=True):
            if not any(is_update(item) for item in part):
                continue
            assert spec_genuine(message)
            first_user = next(
                i
                for i, item in enumerate(part)
                if item.get("type") == "message" and item.get("role") == "user"
            )
            assert [i for i, item in enumerate(part) if is_update(item)] == [first_user - 1]


@PROPERTY_SETTINGS
@given(events)
def test_c_replaying_the_saved_history_reproduces_historical_update_positions(
    script: list[Event],
) -> None:
    sim = simulate(script)
    final = final_replan(sim)
    final_parts = segments(sim.messages, final.request["input"])
    resumed = plan_request(resume(sim.messages), PlanSettings(ASTRA, sim.last_astra_desired, KEY))
    assert resumed == final  # the saved history, read back, plans the same request
    for step in sim.steps:
        if step.plan_settings.model != ASTRA:
            continue
        parts = segments(step.history, step.plan.request["input"])
        assert [update_efforts(p) for p in parts] == [
            update_efforts(p) for p in final_parts[: len(step.history)]
        ]


@PROPERTY_SETTINGS
@given(events)
def test_d_request_effort_is_always_the_baseline(script: list[Event]) -> None:
    sim = simulate(script)
    for step in sim.steps:
        model = step.plan_settings.model
        desired = step.plan_settings.desired_effort
        request = step.plan.request
        if model == ASTRA:
            first = next(
                (r for m in step.history if (r := valid_record(m, ASTRA)) is not None), None
            )
            assert request["reasoning"] == {"effort": desired if first is None else first["effort"]}
        else:  # F10
            assert request["reasoning"] == {"effort": desired}
            assert not any(is_update(item) for item in request["input"])
            assert step.plan.record.effort is None
        assert step.plan.record.model == model and step.plan.record.key == KEY


@PROPERTY_SETTINGS
@given(events)
def test_e_effective_effort_at_each_turn_is_the_recorded_one(script: list[Event]) -> None:
    sim = simulate(script)
    final = final_replan(sim)
    checked: list[tuple[Sequence[HistoryMessage], Plan]] = [(sim.messages, final)]
    checked += [(s.history, s.plan) for s in sim.steps if s.plan_settings.model == ASTRA]
    for history, plan in checked:
        parts = segments(history, plan.request["input"])
        at_turn = effective_at_turns(history, parts, plan.request["reasoning"]["effort"])
        for index, effective in at_turn.items():
            after = next((m for m in history[index + 1 :] if m.role == "assistant"), None)
            if after is None:
                continue
            record = valid_record(after, ASTRA)
            if record is not None:
                assert effective == record["effort"], index
    # F4: a continuation keeps the effort in force; a genuine turn brings the desired one
    for step in sim.steps:
        if step.plan_settings.model != ASTRA:
            continue
        desired = step.plan_settings.desired_effort
        if step.genuine:
            assert step.plan.record.effort == desired
            parts = segments(step.history, step.plan.request["input"])
            assert (
                effective_at_turns(step.history, parts, step.plan.request["reasoning"]["effort"])[
                    len(step.history) - 1
                ]
                == desired
            )
        else:
            records = [r for m in step.history if (r := valid_record(m, ASTRA)) is not None]
            in_force = records[-1]["effort"] if records else desired
            assert step.plan.record.effort == in_force
            assert not any(
                is_update(item) for item in segments(step.history, step.plan.request["input"])[-1]
            )


@PROPERTY_SETTINGS
@given(events, st.sampled_from(list(PlanTransport)))
def test_transports_agree_on_records_and_continuation_is_the_tail(
    script: list[Event], transport: PlanTransport
) -> None:
    sim = simulate(script)
    for step in sim.steps:
        other = plan_request(
            step.history,
            PlanSettings(
                step.plan_settings.model,
                step.plan_settings.desired_effort,
                KEY,
                transport=transport,
            ),
        )
        assert isinstance(other, Plan)
        assert other.record == step.plan.record
        assert other.request["reasoning"] == step.plan.request["reasoning"]
        increment = other.request["input"]
        if "previous_response_id" in other.request:
            assert transport is PlanTransport.WEBSOCKET_CONTINUATION
            assert other.request["previous_response_id"] == step.history[-2].response_id
            assert (
                increment
                == step.plan.request["input"][len(step.plan.request["input"]) - len(increment) :]
            )
        else:
            assert increment == step.plan.request["input"]


# --- (f) never raises --------------------------------------------------------------------------

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(["", "standard", "disabled", "low", "high", "max", "none", ASTRA, OTHER, KEY])
    | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.sampled_from(["enabled", "effort", "mode", "x"]), children, max_size=3)
    ),
    max_leaves=6,
)


def _object_of(
    keys: Sequence[str], values: st.SearchStrategy[Any]
) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(st.sampled_from(keys), values, max_size=len(keys))


REASONING_KEYS = ["effort", "mode", "summary", "context"]
SHARED_KEYS = ["input", "previous_response_id", "truncation", "context_management", "multi_agent"]
multi_agent = json_values | _object_of(["enabled"], json_values)
reasoning = json_values | _object_of(REASONING_KEYS, json_values | st.sampled_from(EFFORTS))
extra_body = json_values | st.fixed_dictionaries(
    {},
    optional={
        "model": json_values | st.sampled_from([ASTRA, OTHER]),
        "reasoning": reasoning,
        "prompt_cache_key": json_values,
        **{name: multi_agent if name == "multi_agent" else json_values for name in SHARED_KEYS},
    },
)
metadata = st.fixed_dictionaries(
    {},
    optional={
        "model": json_values | st.sampled_from([ASTRA, OTHER]),
        "prompt_cache_key": json_values,
        "extra_body": extra_body,
        "reasoning": reasoning,
        **{name: multi_agent if name == "multi_agent" else json_values for name in SHARED_KEYS},
    },
)

FUZZ_HISTORY_HEAD = (
    user_turn(0),
    HistoryMessage(
        "assistant",
        "openai",
        {
            CACHE_STATE_CHANNEL: [
                {"type": "text", "text": json.dumps({"model": ASTRA, "key": KEY, "effort": "high"})}
            ]
        },
        [{"type": "message", "role": "assistant", "content": "a"}],
        "resp_0",
    ),
    user_turn(1),
)


@PROPERTY_SETTINGS
@given(
    st.lists(
        st.text(max_size=60)
        | st.sampled_from(['{"model":"gpt-6-astra","key":"k","effort":"max"}']),
        min_size=1,
        max_size=2,
    ),
    st.sampled_from([ASTRA, OTHER]),
    st.sampled_from(EFFORTS),
    st.sampled_from(list(PlanTransport)),
)
def test_f_arbitrary_cache_state_texts_never_abort_a_plan(
    texts: list[str], model: str, desired: str, transport: PlanTransport
) -> None:
    fuzzed = HistoryMessage(
        "assistant",
        "openai",
        {CACHE_STATE_CHANNEL: [{"type": "text", "text": text} for text in texts]},
        [{"type": "message", "role": "assistant", "content": "b"}],
        "resp_1",
    )
    history = [*FUZZ_HISTORY_HEAD, fuzzed, user_turn(2)]
    plan = plan_request(history, PlanSettings(model, desired, KEY, transport=transport))
    assert isinstance(plan, Plan)
    assert {d.code for d in plan.diagnostics} <= {Code.CACHE_STATE_INVALID}
    assert all(d.message_index == 3 and d.block_index == 0 for d in plan.diagnostics)
    if model == ASTRA:
        assert plan.request["reasoning"] == {"effort": "high"}
        assert plan.record.effort == desired


@PROPERTY_SETTINGS
@given(
    metadata=metadata,
    model=st.one_of(st.just(ASTRA), st.just(ASTRA), st.just(OTHER), json_values),
    desired=st.one_of(
        st.sampled_from(EFFORTS), st.sampled_from([None, "minimal", "none"]), json_values
    ),
    instance_key=st.one_of(
        st.just(KEY),
        st.just(KEY),
        st.just(KEY),
        st.sampled_from([KEY.upper(), KEY[:-1], ""]),
        json_values,
    ),
    transport=st.sampled_from(list(PlanTransport)),
    compact=st.booleans(),
)
@example(
    metadata={"reasoning": [1]},
    model=OTHER,
    desired="low",
    instance_key=KEY,
    transport=PlanTransport.SSE,
    compact=False,
).via("non-object metadata.reasoning for a model that is not update-capable")
def test_f_arbitrary_overrides_give_a_plan_or_a_registry_code(
    *,
    metadata: dict[str, Any],
    model: object,
    desired: object,
    instance_key: object,
    transport: PlanTransport,
    compact: bool,
) -> None:
    plan_settings = PlanSettings(
        model,
        desired,
        instance_key,
        metadata,
        transport,
        Endpoint.COMPACT if compact else Endpoint.RESPONSES,
    )
    result = plan_request([*FUZZ_HISTORY_HEAD], plan_settings)
    assert isinstance(result, Plan) or result in PLAN_CODES
