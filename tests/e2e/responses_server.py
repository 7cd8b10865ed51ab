"""A Responses-compatible server on loopback that answers from scripted turns.

It speaks the three ways a client reaches ``/v1/responses``: ``POST`` with ``stream: true``
(server-sent events), ``POST`` without it (one JSON response), and the WebSocket mode (an
upgrade on ``GET``, then one ``response.create`` text frame per request, answered by the same
events as JSON text frames on the same connection). Every request body is recorded as received.

Answers are built from the OpenAI SDK's own types, so what is sent is what those types say the
real API sends; a turn may also break the stream in the ways a real provider can (``Fault``).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from aiohttp import WSMsgType, web
from openai import BaseModel
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseContentPartAddedEvent,
    ResponseContentPartDoneEvent,
    ResponseCreatedEvent,
    ResponseFunctionCallArgumentsDeltaEvent,
    ResponseFunctionCallArgumentsDoneEvent,
    ResponseFunctionToolCall,
    ResponseIncompleteEvent,
    ResponseInProgressEvent,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseReasoningItem,
    ResponseReasoningSummaryPartAddedEvent,
    ResponseReasoningSummaryPartDoneEvent,
    ResponseReasoningSummaryTextDeltaEvent,
    ResponseReasoningSummaryTextDoneEvent,
    ResponseTextDeltaEvent,
    ResponseTextDoneEvent,
)
from openai.types.responses.response_reasoning_item import Summary
from openai.types.responses.response_reasoning_summary_part_added_event import (
    Part as SummaryPart,
)

OutputItem = ResponseReasoningItem | ResponseOutputMessage | ResponseFunctionToolCall


class Fault(Enum):
    """How a scripted turn departs from a well-formed stream."""

    NONE = "none"
    TRUNCATED = "truncated"  # the stream stops after the last item, with no terminal event
    UNKNOWN_EVENT = "unknown_event"  # an event type no client knows, before the terminal one
    INCOMPLETE = "incomplete"  # ends with response.incomplete instead of response.completed


@dataclass(frozen=True)
class Turn:
    """One scripted answer: the output items, in order, and how the stream ends."""

    output: Sequence[OutputItem]
    fault: Fault = Fault.NONE


@dataclass(frozen=True)
class Received:
    """A request as the server received it: how it came, and its body."""

    transport: str  # "sse", "json" or "websocket"
    body: dict[str, Any]
    response_id: str
    connection: int  # WebSocket connections are numbered from 1; 0 for HTTP


def reasoning(
    item_id: str,
    *summaries: str,
    encrypted_content: str | None = None,
    status: str | None = None,
    content: Sequence[str] = (),
    **unknown: Any,
) -> ResponseReasoningItem:
    """A reasoning output item; ``unknown`` fields are what a newer API might add."""
    fields: dict[str, Any] = {
        "id": item_id,
        "type": "reasoning",
        "summary": [Summary(type="summary_text", text=text) for text in summaries],
    }
    if encrypted_content is not None:
        fields["encrypted_content"] = encrypted_content
    if status is not None:
        fields["status"] = status
    if content:
        fields["content"] = [{"type": "reasoning_text", "text": text} for text in content]
    return ResponseReasoningItem.model_validate({**fields, **unknown})


def message(item_id: str, *texts: str, **unknown: Any) -> ResponseOutputMessage:
    return ResponseOutputMessage.model_validate(
        {
            "id": item_id,
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [
                ResponseOutputText(type="output_text", text=text, annotations=[]) for text in texts
            ],
            **unknown,
        }
    )


def function_call(
    item_id: str, call_id: str, name: str, arguments: str
) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(
        id=item_id,
        type="function_call",
        call_id=call_id,
        name=name,
        arguments=arguments,
        status="completed",
    )


def _dump(model: BaseModel) -> dict[str, Any]:
    # exclude_unset: exactly the fields the script set, unknown future ones included
    return model.model_dump(mode="json", exclude_unset=True)


def _response(
    response_id: str, body: Mapping[str, Any], output: Sequence[OutputItem], status: str
) -> Response:
    return Response.model_validate(
        {
            "id": response_id,
            "object": "response",
            "created_at": 1_700_000_000,
            "model": body.get("model", "unknown"),
            "status": status,
            "output": [_dump(item) for item in output],
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "reasoning": body.get("reasoning"),
            "usage": {
                "input_tokens": 10,
                "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                "output_tokens": 5,
                "output_tokens_details": {"reasoning_tokens": 3},
                "total_tokens": 15,
            },
        }
    )


def _item_events(index: int, item: OutputItem, sequence: Iterator[int]) -> Iterator[BaseModel]:
    """The events of one output item between its ``added`` and its ``done``."""
    if isinstance(item, ResponseReasoningItem):
        for part_index, part in enumerate(item.summary):
            common = {
                "item_id": item.id,
                "output_index": index,
                "summary_index": part_index,
            }
            yield ResponseReasoningSummaryPartAddedEvent(
                type="response.reasoning_summary_part.added",
                part=SummaryPart(type="summary_text", text=""),
                sequence_number=next(sequence),
                **common,
            )
            yield ResponseReasoningSummaryTextDeltaEvent(
                type="response.reasoning_summary_text.delta",
                delta=part.text,
                sequence_number=next(sequence),
                **common,
            )
            yield ResponseReasoningSummaryTextDoneEvent(
                type="response.reasoning_summary_text.done",
                text=part.text,
                sequence_number=next(sequence),
                **common,
            )
            yield ResponseReasoningSummaryPartDoneEvent.model_validate(
                {
                    "type": "response.reasoning_summary_part.done",
                    "part": {"type": "summary_text", "text": part.text},
                    "sequence_number": next(sequence),
                    **common,
                }
            )
    elif isinstance(item, ResponseFunctionToolCall):
        assert item.id is not None
        yield ResponseFunctionCallArgumentsDeltaEvent(
            type="response.function_call_arguments.delta",
            delta=item.arguments,
            item_id=item.id,
            output_index=index,
            sequence_number=next(sequence),
        )
        yield ResponseFunctionCallArgumentsDoneEvent(
            type="response.function_call_arguments.done",
            arguments=item.arguments,
            item_id=item.id,
            output_index=index,
            sequence_number=next(sequence),
        )
    elif isinstance(item, ResponseOutputMessage):
        for content_index, text_part in enumerate(item.content):
            assert isinstance(text_part, ResponseOutputText)
            common = {"item_id": item.id, "output_index": index, "content_index": content_index}
            yield ResponseContentPartAddedEvent(
                type="response.content_part.added",
                part=ResponseOutputText(type="output_text", text="", annotations=[]),
                sequence_number=next(sequence),
                **common,
            )
            yield ResponseTextDeltaEvent(
                type="response.output_text.delta",
                delta=text_part.text,
                logprobs=[],
                sequence_number=next(sequence),
                **common,
            )
            yield ResponseTextDoneEvent(
                type="response.output_text.done",
                text=text_part.text,
                logprobs=[],
                sequence_number=next(sequence),
                **common,
            )
            yield ResponseContentPartDoneEvent(
                type="response.content_part.done",
                part=text_part,
                sequence_number=next(sequence),
                **common,
            )


def _in_progress(item: OutputItem) -> dict[str, Any]:
    """The item as ``output_item.added`` carries it: not yet complete."""
    started = _dump(item)
    if isinstance(item, ResponseReasoningItem):
        started["summary"] = []
        started.pop("encrypted_content", None)
    elif isinstance(item, ResponseOutputMessage):
        started["content"] = []
    else:
        started["arguments"] = ""
    if "status" in started:
        started["status"] = "in_progress"
    return started


def stream_events(response_id: str, body: Mapping[str, Any], turn: Turn) -> list[dict[str, Any]]:
    """The events of a streamed response, as JSON objects, in the order the API sends them."""
    sequence = itertools.count()
    started = _response(response_id, body, [], "in_progress")
    events: list[BaseModel | dict[str, Any]] = [
        ResponseCreatedEvent(
            type="response.created", response=started, sequence_number=next(sequence)
        ),
        ResponseInProgressEvent(
            type="response.in_progress", response=started, sequence_number=next(sequence)
        ),
    ]
    for index, item in enumerate(turn.output):
        events.append(
            ResponseOutputItemAddedEvent.model_validate(
                {
                    "type": "response.output_item.added",
                    "item": _in_progress(item),
                    "output_index": index,
                    "sequence_number": next(sequence),
                }
            )
        )
        events.extend(_item_events(index, item, sequence))
        events.append(
            ResponseOutputItemDoneEvent.model_validate(
                {
                    "type": "response.output_item.done",
                    "item": _dump(item),
                    "output_index": index,
                    "sequence_number": next(sequence),
                }
            )
        )
    if turn.fault is Fault.UNKNOWN_EVENT:
        events.append(
            {"type": "response.future_thing.delta", "sequence_number": next(sequence), "x": 1}
        )
    if turn.fault is Fault.INCOMPLETE:
        finished = _response(response_id, body, turn.output, "incomplete")
        events.append(
            ResponseIncompleteEvent(
                type="response.incomplete", response=finished, sequence_number=next(sequence)
            )
        )
    elif turn.fault is not Fault.TRUNCATED:
        finished = _response(response_id, body, turn.output, "completed")
        events.append(
            ResponseCompletedEvent(
                type="response.completed", response=finished, sequence_number=next(sequence)
            )
        )
    return [event if isinstance(event, dict) else _dump(event) for event in events]


Script = Callable[[Mapping[str, Any]], Turn]


def last_user_text(body: Mapping[str, Any]) -> str | None:
    """The text of the last user message item in a request's input."""
    for item in reversed(body.get("input") or []):
        if isinstance(item, Mapping) and item.get("role") == "user":
            content = item.get("content")
            if isinstance(content, str):
                return content
            texts = [part.get("text", "") for part in content or [] if isinstance(part, Mapping)]
            return "".join(texts)
    return None


@dataclass
class ScriptedTurns:
    """Answers keyed by the last user text; successive requests with it take successive turns.

    A tool loop sends several requests under one user text: the tool call, then the answer.
    """

    turns: Mapping[str, Sequence[Turn]]
    taken: dict[str, int] = field(default_factory=dict)

    def __call__(self, body: Mapping[str, Any]) -> Turn:
        text = last_user_text(body) or ""
        key = next((k for k in self.turns if k in text), None)
        if key is None:
            return Turn([message("msg_default", "ok")])
        index = self.taken.get(key, 0)
        self.taken[key] = index + 1
        answers = self.turns[key]
        return answers[min(index, len(answers) - 1)]


class ResponsesServer:
    """The server on a free 127.0.0.1 port, in its own thread; a context manager."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.received: list[Received] = []
        self._ids = itertools.count(1)
        self._connections = itertools.count(1)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _next(self, transport: str, body: dict[str, Any], connection: int) -> tuple[str, Turn]:
        response_id = f"resp_{next(self._ids):04d}"
        self.received.append(Received(transport, body, response_id, connection))
        return response_id, self.script(body)

    async def _post(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        if not body.get("stream"):
            response_id, turn = self._next("json", body, 0)
            status = "incomplete" if turn.fault is Fault.INCOMPLETE else "completed"
            return web.json_response(_dump(_response(response_id, body, turn.output, status)))
        response_id, turn = self._next("sse", body, 0)
        stream = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await stream.prepare(request)
        for event in stream_events(response_id, body, turn):
            data = json.dumps(event)
            await stream.write(f"event: {event['type']}\ndata: {data}\n\n".encode())
        await stream.write_eof()
        return stream

    async def _websocket(self, request: web.Request) -> web.StreamResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        connection = next(self._connections)
        async for frame in socket:
            if frame.type is not WSMsgType.TEXT:
                continue
            body = json.loads(frame.data)
            response_id, turn = self._next("websocket", body, connection)
            for event in stream_events(response_id, body, turn):
                await socket.send_str(json.dumps(event))
            if turn.fault is Fault.TRUNCATED:
                await socket.close()
                break
        return socket

    async def _start(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/responses", self._post)
        app.router.add_get("/v1/responses", self._websocket)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]

    def __enter__(self) -> ResponsesServer:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(timeout=10)
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()
