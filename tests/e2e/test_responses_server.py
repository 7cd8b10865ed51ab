"""The loopback Responses server speaks what the OpenAI SDK reads: JSON, SSE and WebSocket.

These run without fast-agent: the SDK itself is the client, so a server that drifted from the
API's shapes fails here before it can mislead the end-to-end test.
"""

from __future__ import annotations

import pytest

pytest.importorskip(
    "aiohttp", reason="aiohttp is not importable: pip install -c constraints/ci.txt '.[sdk]'"
)

from openai import OpenAI
from openai.types.responses import ResponseReasoningItem
from responses_server import (
    Fault,
    ResponsesServer,
    ScriptedTurns,
    Turn,
    function_call,
    message,
    reasoning,
    stream_events,
)

TURN = Turn(
    [
        reasoning("rs_a", "one", "two", encrypted_content="c-a", status="completed", future=1),
        reasoning("rs_b", encrypted_content="c-b"),
        function_call("fc_1", "call_1", "lookup", "{}"),
        message("msg_1", "hi"),
    ]
)
INPUT = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}]


def client(server: ResponsesServer) -> OpenAI:
    return OpenAI(api_key="test", base_url=server.base_url, max_retries=0)


def test_a_plain_json_response_parses_with_every_scripted_item() -> None:
    with ResponsesServer(ScriptedTurns({"go": [TURN]})) as server:
        response = client(server).responses.create(model="m", input=INPUT)
    assert [item.type for item in response.output] == [
        "reasoning",
        "reasoning",
        "function_call",
        "message",
    ]
    first = response.output[0]
    assert isinstance(first, ResponseReasoningItem)
    assert [part.text for part in first.summary] == ["one", "two"]
    assert first.model_extra == {"future": 1}  # an unknown field reaches the client
    assert [(r.transport, r.body["input"]) for r in server.received] == [("json", INPUT)]


def test_a_stream_gives_the_sdk_its_final_response_and_every_summary_part() -> None:
    with (
        ResponsesServer(ScriptedTurns({"go": [TURN]})) as server,
        client(server).responses.stream(model="m", input=INPUT) as stream,
    ):
        kinds = [event.type for event in stream]
        final = stream.get_final_response()
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    assert kinds.count("response.reasoning_summary_part.done") == 2
    assert kinds.count("response.output_item.done") == 4
    assert kinds.count("response.function_call_arguments.done") == 1
    assert [item.id for item in final.output] == ["rs_a", "rs_b", "fc_1", "msg_1"]
    assert server.received[0].transport == "sse"


def test_the_websocket_mode_answers_each_response_create_on_one_connection() -> None:
    turns = ScriptedTurns({"go": [TURN, Turn([message("msg_2", "again")])]})
    with (
        ResponsesServer(turns) as server,
        OpenAI(
            api_key="test", websocket_base_url=server.base_url.replace("http", "ws")
        ).responses.connect() as connection,
    ):
        ids = []
        for _ in range(2):
            connection.response.create(model="m", input=INPUT)
            for event in connection:
                if event.type == "response.completed":
                    ids.append([item.id for item in event.response.output])
                    break
    assert ids == [["rs_a", "rs_b", "fc_1", "msg_1"], ["msg_2"]]
    assert [(r.transport, r.connection) for r in server.received] == [
        ("websocket", 1),
        ("websocket", 1),
    ]


@pytest.mark.parametrize(
    ("fault", "last"),
    [
        (Fault.NONE, "response.completed"),
        (Fault.TRUNCATED, "response.output_item.done"),
        (Fault.UNKNOWN_EVENT, "response.completed"),
        (Fault.INCOMPLETE, "response.incomplete"),
    ],
)
def test_each_fault_ends_the_stream_as_named(fault: Fault, last: str) -> None:
    events = stream_events("resp_1", {"model": "m"}, Turn(TURN.output, fault))
    assert events[-1]["type"] == last
    unknown = [e for e in events if e["type"] == "response.future_thing.delta"]
    assert len(unknown) == (fault is Fault.UNKNOWN_EVENT)
    numbers = [event["sequence_number"] for event in events]
    assert numbers == list(range(len(events)))
