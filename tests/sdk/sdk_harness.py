"""What the SDK tests share: facts about the installed ``openai``, a recording HTTP mock that
speaks JSON and server-sent events, a loopback WebSocket server, and small builders.

Imported by the test modules of this directory only after ``pytest.importorskip("openai")``.
Nothing here talks to a real provider: HTTP goes through the SDK's own client into a mock
transport of the HTTP library the installed SDK is built on (``httpx`` for openai 2.x,
``httpx2`` for 3.x), and WebSocket traffic to a server on 127.0.0.1 that the test starts.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import re
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import ModuleType, TracebackType
from typing import Any, Final

from openai import DefaultHttpxClient, OpenAI
from openai.types.responses import ResponseReasoningItem
from reasoning_replay import canonicalize_completed_reasoning_output_item
from websockets.sync.server import Server, ServerConnection, serve

SDK_VERSION: Final = importlib.metadata.version("openai")
API_KEY: Final = "sk-test-not-a-real-key"
MODEL: Final = "gpt-6-astra"  # update-capable in the reference's default registry (SPEC §9.1)
INSTANCE_KEY: Final = "0123456789abcdef0123456789abcdef"
INCLUDE: Final = ["reasoning.encrypted_content"]
ALLOWLIST: Final = frozenset(("type", "id", "summary", "encrypted_content", "content"))
REQUIRED: Final = frozenset(("type", "id", "summary", "encrypted_content"))
FINAL_EVENTS: Final = frozenset(("response.completed", "response.incomplete", "response.failed"))


def release(version: str) -> tuple[int, ...]:
    """``"3.8.0"`` → ``(3, 8, 0)``: enough to compare the SDK's release numbers."""
    return tuple(int(number) for number in re.findall(r"\d+", version)[:3])


def http_flavour() -> str:
    """The HTTP library the installed SDK's default client subclasses: httpx or httpx2."""
    for base in DefaultHttpxClient.__mro__:
        package = base.__module__.partition(".")[0]
        if package in ("httpx", "httpx2"):
            return package
    raise AssertionError(f"openai {SDK_VERSION}: DefaultHttpxClient is built on neither httpx")


HTTP: Final[ModuleType] = importlib.import_module(http_flavour())


def sdk_has_configuration_update() -> bool:
    """openai 3.8.0 added the ``configuration_update`` input item TypedDict."""
    return release(SDK_VERSION) >= (3, 8, 0)


# --- wire JSON ------------------------------------------------------------------------------


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    names = [name for name, _ in pairs]
    duplicates = {name for name in names if names.count(name) > 1}
    assert not duplicates, f"duplicate members on the wire: {sorted(duplicates)}"
    return dict(pairs)


def wire_json(data: bytes | str) -> Any:
    """Parse what went over the wire, refusing duplicate members (two ``input``s, say)."""
    return json.loads(data, object_pairs_hook=_no_duplicates)


def reasoning_items(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [item for item in body["input"] if item.get("type") == "reasoning"]


def sse_body(events: Iterable[Mapping[str, Any]]) -> bytes:
    """Server-sent events as the Responses API streams them: one ``event``/``data`` pair each."""
    chunks = (f"event: {event['type']}\ndata: {json.dumps(event)}\n\n" for event in events)
    return "".join(chunks).encode("utf-8")


# --- HTTP: the SDK's client over a mock transport -------------------------------------------


@dataclass(frozen=True, slots=True)
class WireRequest:
    """One HTTP request the SDK sent: what the mock transport received."""

    method: str
    path: str
    content_type: str
    body: dict[str, Any]


@dataclass
class MockResponses:
    """Answers ``POST /v1/responses``: ``response`` as JSON, or ``events`` as an SSE stream
    when the request body has ``"stream": true``. Records every request."""

    response: dict[str, Any]
    events: list[dict[str, Any]] = field(default_factory=list)
    requests: list[WireRequest] = field(default_factory=list)

    def handle(self, request: Any) -> Any:
        body = wire_json(request.content)
        self.requests.append(
            WireRequest(
                request.method, request.url.path, request.headers.get("content-type", ""), body
            )
        )
        if body.get("stream") is True:
            headers = {"content-type": "text/event-stream"}
            return HTTP.Response(200, headers=headers, content=sse_body(self.events))
        return HTTP.Response(200, json=self.response)

    def client(self) -> OpenAI:
        transport = HTTP.MockTransport(self.handle)
        return OpenAI(
            api_key=API_KEY,
            base_url="http://provider.invalid/v1",
            http_client=HTTP.Client(transport=transport),
            max_retries=0,
        )

    @property
    def last_body(self) -> dict[str, Any]:
        return self.requests[-1].body


def response_json(response_id: str, output: list[dict[str, Any]]) -> dict[str, Any]:
    """A completed Responses API response object with ``output``."""
    return {
        "id": response_id,
        "object": "response",
        "created_at": 1_767_225_600,
        "status": "completed",
        "model": MODEL,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "store": False,
    }


def stream_events(response: dict[str, Any]) -> list[dict[str, Any]]:
    """The smallest stream for ``response``: created, then completed with its output."""
    created = {**response, "status": "in_progress", "output": []}
    return [
        {"type": "response.created", "sequence_number": 0, "response": created},
        {"type": "response.completed", "sequence_number": 1, "response": response},
    ]


# --- WebSocket: the SDK's connection to a loopback server -----------------------------------


class LoopbackResponsesServer:
    """A WebSocket server on 127.0.0.1, on a free port, for ``client.responses.connect()``.

    It records every text frame the SDK sends (and the path it connected to) and answers each
    frame with ``events``, one text frame per event.
    """

    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.events = events
        self.frames: list[str] = []
        self.paths: list[str] = []
        self._server: Server | None = None
        self._thread: threading.Thread | None = None

    def _handle(self, connection: ServerConnection) -> None:
        self.paths.append(connection.request.path if connection.request else "")
        for message in connection:
            self.frames.append(message if isinstance(message, str) else message.decode())
            for event in self.events:
                connection.send(json.dumps(event))

    def __enter__(self) -> LoopbackResponsesServer:
        self._server = serve(self._handle, "127.0.0.1", 0)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._thread.join(timeout=10)

    @property
    def base_url(self) -> str:
        """An ``http://`` base URL: the SDK derives ``ws://127.0.0.1:PORT/v1/responses``."""
        assert self._server is not None
        port = self._server.socket.getsockname()[1]
        return f"http://127.0.0.1:{port}/v1"

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [wire_json(frame) for frame in self.frames]


def send_over_websocket(server: LoopbackResponsesServer, fields: Mapping[str, Any]) -> list[Any]:
    """``conn.response.create(**fields)`` over ``client.responses.connect()``; the events the
    SDK parsed from the server's answer, up to the final one."""
    client = OpenAI(api_key=API_KEY, base_url=server.base_url, max_retries=0)
    events: list[Any] = []
    with client.responses.connect() as connection:
        connection.response.create(**fields)
        for event in connection:
            events.append(event)
            if event.type in FINAL_EVENTS:
                break
    client.close()
    return events


# --- reasoning items as the SDK returns them ------------------------------------------------


def summary_parts(*texts: str) -> list[dict[str, Any]]:
    """Summary parts with an unknown member each, as a newer SDK or provider might send."""
    return [{"type": "summary_text", "text": text, "future_part_field": 1} for text in texts]


def output_item(
    item_id: str, ciphertext: str, summary: Iterable[str], **more: Any
) -> dict[str, Any]:
    """A completed reasoning output item as the provider sends it: status, SDK extras and all."""
    return {
        "id": item_id,
        "type": "reasoning",
        "summary": summary_parts(*summary),
        "encrypted_content": ciphertext,
        "status": "completed",
        "future_item_field": {"nested": True},
        **more,
    }


def expected_replay_item(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The provider input expected for output item ``raw``, written out rather than computed
    by the reference (SPEC P1): the allowlisted members in canonical order, parts reduced to
    ``type`` and ``text``, ``content`` only when it is non-empty."""
    item: dict[str, Any] = {
        "type": "reasoning",
        "id": raw["id"],
        "summary": [{"type": "summary_text", "text": part["text"]} for part in raw["summary"]],
        "encrypted_content": raw["encrypted_content"],
    }
    if raw.get("content"):
        item["content"] = [{"type": "reasoning_text", "text": p["text"]} for p in raw["content"]]
    return item


def sdk_item(raw: Mapping[str, Any]) -> ResponseReasoningItem:
    """The SDK's model of ``raw``, validated (extra fields allowed, as the SDK allows them)."""
    return ResponseReasoningItem.model_validate(dict(raw))


def envelope_block(item: object, source: str = "response.output_item.done") -> dict[str, str]:
    """A replay-channel text block holding the envelope captured from ``item`` (SPEC ST1)."""
    captured = canonicalize_completed_reasoning_output_item(item, source=source)
    assert captured.envelope_text is not None, captured.code
    return {"type": "text", "text": captured.envelope_text}


def events_of_type(events: Iterable[Any], kind: str) -> Iterator[Any]:
    return (event for event in events if event.type == kind)
