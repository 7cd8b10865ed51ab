"""What the real OpenAI SDK puts on the wire for requests the reference builds (SPEC P1–P3, F2,
F9): over HTTP (JSON and ``stream=True``) through ``client.responses.create`` into a mock
transport, and over a WebSocket through ``client.responses.connect()`` to a loopback server.

The history replays reasoning items captured from the SDK's own ``ResponseReasoningItem``
models (with ``status``, ``content: null`` or ``[]`` and unknown fields), and the plan puts two
configuration updates in it. The expected ``input`` is written out in full below, so any member
the SDK adds, drops, reorders or rewrites fails a test.
"""

from __future__ import annotations

import copy
import importlib
import typing
from typing import Any

import pytest
from reasoning_replay import REPLAY_CHANNEL, HistoryMessage
from reasoning_replay.ordering.cache_state import CACHE_STATE_CHANNEL
from reasoning_replay.ordering.planner import Plan, PlanSettings, PlanTransport, plan_request

pytest.importorskip(
    "openai", reason="openai is not importable: install the sdk extras, pip install '.[sdk]'"
)

import pydantic
from openai.types.responses import ResponseInputItemParam, ResponseReasoningItemParam
from sdk_harness import (
    ALLOWLIST,
    INCLUDE,
    INSTANCE_KEY,
    MODEL,
    REQUIRED,
    SDK_VERSION,
    LoopbackResponsesServer,
    MockResponses,
    envelope_block,
    expected_replay_item,
    output_item,
    reasoning_items,
    response_json,
    sdk_has_configuration_update,
    sdk_item,
    send_over_websocket,
    stream_events,
)

# --- the history ----------------------------------------------------------------------------

A = output_item("rs_A", "gAAAA-cipher-A-0001", ["A: read the task", "A: plan the call"])
B = output_item(
    "rs_B",
    "gAAAA-cipher-B-0002",
    ["B: one part"],
    content=[{"type": "reasoning_text", "text": "B thinks", "future_part_field": 2}],
)
C = output_item("rs_C", "gAAAA-cipher-C-0003", ["C1", "C2", "C3"], content=[])
D = output_item("rs_D", "gAAAA-cipher-D-0004", [], content=None, status=None)


def user(text: str) -> HistoryMessage:
    item = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
    return HistoryMessage("user", items=[item])


def assistant(
    text: str,
    reasoning: list[dict[str, Any]],
    effort: str,
    *,
    response_id: str,
    calls: tuple[dict[str, Any], ...] = (),
) -> HistoryMessage:
    """An assistant message whose reasoning was captured from the SDK's validated models."""
    record = f'{{"model":"{MODEL}","key":"{INSTANCE_KEY}","effort":"{effort}"}}'
    channels = {
        REPLAY_CHANNEL: [envelope_block(sdk_item(raw)) for raw in reasoning],
        CACHE_STATE_CHANNEL: [{"type": "text", "text": record}],
    }
    message = {
        "type": "message",
        "role": "assistant",
        "id": f"msg_{response_id}",
        "content": [{"type": "output_text", "text": text}],
    }
    own = [message, *calls]
    return HistoryMessage("assistant", channels=channels, items=own, response_id=response_id)


CALL = {"type": "function_call", "call_id": "call_1", "name": "add", "arguments": '{"a":2}'}
TOOL_RESULT = HistoryMessage(
    "user", items=[{"type": "function_call_output", "call_id": "call_1", "output": "4"}]
)
HISTORY = (
    user("Add 2 and 2."),
    assistant("Calling add.", [A, B], "low", response_id="resp_1", calls=(CALL,)),
    TOOL_RESULT,
    assistant("It is 4.", [C], "low", response_id="resp_2"),
    user("Think harder: and 3?"),
    assistant("It is 7.", [D], "high", response_id="resp_3"),
    user("Now briefly: and 5?"),
)


def update(effort: str) -> dict[str, Any]:
    return {"type": "configuration_update", "reasoning": {"effort": effort}}


def own(message: HistoryMessage) -> list[dict[str, Any]]:
    return [dict(item) for item in message.items]


# u1 (low = the baseline: no update), a1, tool result, a2, update(high) u2, a3, update(medium) u3
EXPECTED_INPUT = [
    *own(HISTORY[0]),
    expected_replay_item(A),
    expected_replay_item(B),
    *own(HISTORY[1]),
    *own(HISTORY[2]),
    expected_replay_item(C),
    *own(HISTORY[3]),
    update("high"),
    *own(HISTORY[4]),
    expected_replay_item(D),
    *own(HISTORY[5]),
    update("medium"),
    *own(HISTORY[6]),
]


def plan(transport: PlanTransport) -> Plan:
    settings = PlanSettings(MODEL, "medium", INSTANCE_KEY, transport=transport)
    planned = plan_request(HISTORY, settings)
    assert isinstance(planned, Plan), planned
    assert planned.diagnostics == ()
    return planned


def request_fields(planned: Plan) -> dict[str, Any]:
    """What an agent passes to the SDK: the plan's fields plus stateless replay settings."""
    return {**copy.deepcopy(planned.request), "store": False, "include": INCLUDE}


# --- sending it three ways ------------------------------------------------------------------


def send_http(fields: dict[str, Any], *, stream: bool) -> dict[str, Any]:
    response = response_json("resp_next", [])
    mock = MockResponses(response, stream_events(response))
    client = mock.client()
    if stream:
        events = list(client.responses.create(**fields, stream=True))
        assert [event.type for event in events] == ["response.created", "response.completed"]
    else:
        parsed = client.responses.create(**fields)
        assert parsed.id == "resp_next"
    (request,) = mock.requests
    assert (request.method, request.path) == ("POST", "/v1/responses")
    assert request.content_type.startswith("application/json")
    return request.body


def send_websocket(fields: dict[str, Any]) -> dict[str, Any]:
    response = response_json("resp_next", [])
    with LoopbackResponsesServer(stream_events(response)) as server:
        events = send_over_websocket(server, fields)
    assert [event.type for event in events] == ["response.created", "response.completed"]
    assert server.paths == ["/v1/responses"]
    (frame,) = server.bodies
    assert frame["type"] == "response.create"
    return frame


@pytest.fixture(scope="module")
def wire() -> dict[str, dict[str, Any]]:
    """The three request bodies as the SDK sent them, by transport."""
    sse_fields = request_fields(plan(PlanTransport.SSE))
    return {
        "http": send_http(sse_fields, stream=False),
        "sse": send_http(sse_fields, stream=True),
        "websocket": send_websocket(request_fields(plan(PlanTransport.WEBSOCKET))),
    }


TRANSPORTS = ("http", "sse", "websocket")


# --- what is on the wire --------------------------------------------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_wire_input_is_exactly_the_planned_input(
    wire: dict[str, dict[str, Any]], transport: str
) -> None:
    assert wire[transport]["input"] == EXPECTED_INPUT


def test_http_sse_and_websocket_carry_the_same_input(wire: dict[str, dict[str, Any]]) -> None:
    assert wire["http"]["input"] == wire["sse"]["input"] == wire["websocket"]["input"]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_request_fields_around_the_input_are_sent_as_planned(
    wire: dict[str, dict[str, Any]], transport: str
) -> None:
    body = wire[transport]
    assert body["model"] == MODEL
    assert body["reasoning"] == {"effort": "low"}  # SPEC F1: the baseline, not the new effort
    assert body["prompt_cache_key"] == INSTANCE_KEY
    assert body["store"] is False
    assert body["include"] == INCLUDE
    assert body.get("stream") is (True if transport == "sse" else None)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_reasoning_items_carry_only_allowlisted_members(
    wire: dict[str, dict[str, Any]], transport: str
) -> None:
    items = reasoning_items(wire[transport])
    assert len(items) == 4
    for item in items:
        assert REQUIRED <= item.keys() <= ALLOWLIST, item.keys()
        assert "status" not in item
        assert item.get("content", "absent") not in (None, [])
        parts = [*item["summary"], *item.get("content", [])]
        assert all(part.keys() == {"type", "text"} for part in parts)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_each_item_keeps_its_own_multipart_summary_in_order(
    wire: dict[str, dict[str, Any]], transport: str
) -> None:
    summaries = {
        item["id"]: [part["text"] for part in item["summary"]]
        for item in reasoning_items(wire[transport])
    }
    assert summaries == {
        "rs_A": ["A: read the task", "A: plan the call"],
        "rs_B": ["B: one part"],
        "rs_C": ["C1", "C2", "C3"],
        "rs_D": [],
    }
    assert [item["id"] for item in reasoning_items(wire[transport])] == [
        "rs_A",
        "rs_B",
        "rs_C",
        "rs_D",
    ]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_configuration_updates_sit_where_the_plan_put_them(
    wire: dict[str, dict[str, Any]], transport: str
) -> None:
    sent = wire[transport]["input"]
    planned = plan(PlanTransport.SSE).request["input"]
    positions = [i for i, item in enumerate(sent) if item["type"] == "configuration_update"]
    assert positions == [
        i for i, item in enumerate(planned) if item["type"] == "configuration_update"
    ]
    assert [sent[i] for i in positions] == [update("high"), update("medium")]
    for i in positions:  # SPEC F2: immediately before the user message of a genuine turn
        assert sent[i + 1]["type"] == "message" and sent[i + 1]["role"] == "user"


def test_websocket_continuation_sends_only_the_new_turn_after_previous_response_id() -> None:
    fields = request_fields(plan(PlanTransport.WEBSOCKET_CONTINUATION))
    frame = send_websocket(fields)
    assert frame["previous_response_id"] == "resp_3"
    assert frame["input"] == [update("medium"), *own(HISTORY[6])]  # SPEC F9


# --- the replay item against the SDK's own input types --------------------------------------


def test_replay_members_are_fields_of_the_sdk_reasoning_input_type() -> None:
    fields = typing.get_type_hints(ResponseReasoningItemParam)
    assert fields.keys() >= ALLOWLIST
    assert ResponseReasoningItemParam.__required_keys__ <= REQUIRED
    assert ResponseReasoningItemParam in typing.get_args(ResponseInputItemParam)


def test_configuration_update_matches_the_sdk_typed_dict() -> None:
    if not sdk_has_configuration_update():
        pytest.skip(f"openai {SDK_VERSION} has no configuration_update type (3.8.0+); sent as dict")
    module = importlib.import_module(
        "openai.types.responses.response_configuration_update_item_param_param"
    )
    typed = module.ResponseConfigurationUpdateItemParamParam
    assert typed in typing.get_args(ResponseInputItemParam)
    for effort in ("low", "medium", "high", "xhigh", "max"):
        item = update(effort)
        assert item.keys() <= typing.get_type_hints(typed).keys()
        assert pydantic.TypeAdapter(typed).validate_python(item) == item
    with pytest.raises(pydantic.ValidationError):  # the adapter does check the effort
        pydantic.TypeAdapter(typed).validate_python(update("ultra"))


# --- null versus omitted, at the wire -------------------------------------------------------

CONTENT_FORMS: dict[str, dict[str, Any]] = {
    "content absent": {},
    "content null": {"content": None},
    "content empty": {"content": []},
    "content non-empty": {"content": [{"type": "reasoning_text", "text": "T"}]},
}


@pytest.mark.parametrize("status", ["completed", None])
@pytest.mark.parametrize("form", CONTENT_FORMS)
def test_null_or_empty_content_never_reaches_the_wire_and_real_content_does(
    form: str, status: str | None
) -> None:
    raw = output_item("rs_N", "gAAAA-cipher-N", ["S"], status=status, **CONTENT_FORMS[form])
    message = HistoryMessage(
        "assistant", channels={REPLAY_CHANNEL: [envelope_block(sdk_item(raw))]}
    )
    settings = PlanSettings("gpt-5", None, INSTANCE_KEY)
    planned = plan_request([user("hi"), message, user("again")], settings)
    assert isinstance(planned, Plan)
    body = send_http(request_fields(planned), stream=False)
    (item,) = reasoning_items(body)
    assert item == expected_replay_item(raw)
    assert ("content" in item) is (form == "content non-empty")
