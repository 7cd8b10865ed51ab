"""openai-agents (PyPI ``openai-agents``) behind the conformance adapter protocol.

    .implementations/openai-agents/bin/python conformance/implementations/openai-agents/adapter.py

Runs in the environment made by ``tools/install_implementation.py openai-agents`` and calls the
published package's own code; it never imports ``reasoning_replay`` (openai-agents is measured,
not helped). It reads histories in the items form only (PROTOCOL.md#items-form). Every request
is built and sent by openai-agents' own agent loop (``Runner.run``, or ``Runner.run_streamed``
for an SSE target) with an ``Agent`` on ``OpenAIResponsesModel``; its ``AsyncOpenAI`` client has
an ``httpx2.MockTransport`` that records the request body and answers with a minimal Responses
body, or with a loopback WebSocket server (``Loopback``) for a WebSocket target: nothing of a
request is assembled here. What each operation calls:

- ``replay``: the history goes into openai-agents' own session store (``SQLiteSession``, in
  memory), up to its last assistant message; the messages after it are the run's new input.
  ``Runner`` then takes the resume path (``run_internal/session_persistence.py::
  prepare_input_with_session``: ``ensure_input_item_format``, ``drop_orphan_function_calls``,
  ``normalize_input_items_for_api``, ``deduplicate_input_items_preferring_latest``) and the model
  builds the request (``OpenAIResponsesModel._build_response_create_kwargs``, which drops
  reasoning items that carry ``provider_data``). The reply is the recorded body's ``input``.
- ``dedupe``: ``run_internal/items.py::deduplicate_input_items_preferring_latest`` over the
  entries' items; an entry is kept when its own item (the same object) is in the result.
- ``plan``: as ``replay``, with the plan's settings in openai-agents' own types (``plan_settings``):
  the configured model, desired effort and instance key are the agent's ``ModelSettings``,
  ``metadata`` the run's (``RunConfig.model_settings``, laid over the agent's by openai-agents'
  ``ModelSettings.resolve``). The reply is the recorded request.
- ``defaults``: the request of an agent built with nothing but a model name, for one message.

How a history becomes what openai-agents stores: a session holds a flat list of Responses input
items; a model's output item is stored as ``model_dump(exclude_unset=True)`` of the item the
provider sent (``items.py::_output_item_to_input_item``), which is the item of the items form, so
every item is stored as given, in order, message after message. The message members have no
place in it: ``provider`` (openai-agents records an issuer only as ``provider_data``, which only
its Chat Completions bridges set, never ``OpenAIResponsesModel`` whatever its base URL: every
provider of the suite is reached that way), ``response_id``, and the record members ``model``,
``effort`` and ``prompt_cache_key`` (its effort is request-level only, ``ModelSettings.reasoning``,
and it keeps no key with a session).

A case asking for what openai-agents cannot take at all (a strict conflict policy, the standalone
compact endpoint with a history the compaction session would refuse) is answered ``skipped``.
Where openai-agents raises before sending, the reply is a rejection with the code ``raised`` (not
in the SPEC registry: openai-agents has none) and the exception as its message.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import sys
import threading
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

sys.path.append(str(Path(__file__).resolve().parents[1]))  # the modules the adapters share
from _protocol_loop import Adapter, Refused, Reply, defaults_output, main, skipped

DEFAULT_TARGET: Final = "openai"
# Where a user points the client for each target provider of the suite: every one is a Responses
# endpoint, reached by ``OpenAIResponsesModel`` (SPEC P4's names; openai-agents sees only the URL).
BASE_URLS: Final = {
    "openai": "https://api.openai.com/v1",
    "codex": "https://chatgpt.com/backend-api/codex",
    "xai": "https://api.x.ai/v1",
    "azure": "https://conformance.openai.azure.com/openai/v1",
}
OTHER_BASE_URL: Final = "https://conformance.invalid/v1"
# A model for the requests of ``replay``, whose vectors name none.
REPLAY_MODELS: Final = {"xai": "grok-4"}
REPLAY_MODEL: Final = "gpt-6-astra"
# SPEC P5: what a user following it sets (``defaults`` measures what is sent without it).
P5_INCLUDE: Final = "reasoning.encrypted_content"
# The request members a plan reply carries (PROTOCOL.md, plan).
PLAN_FIELDS: Final = (
    "model",
    "store",
    "include",
    "reasoning",
    "prompt_cache_key",
    "input",
    "previous_response_id",
)
# What the compact endpoint answers: the compacted history (none: the request is measured).
COMPACTED: Final = {
    "id": "cmp_conformance",
    "object": "response.compaction",
    "created_at": 0,
    "output": [],
    "usage": {
        "input_tokens": 0,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 0,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 0,
    },
}
# SPEC F8's override members that have a ``ModelSettings`` field of their own; every other
# member goes into ``extra_args``, openai-agents' way to pass any keyword to ``responses.create``.
METADATA_SETTINGS: Final = {
    "reasoning": "reasoning",
    "truncation": "truncation",
    "context_management": "context_management",
    "extra_body": "extra_body",
    "max_output_tokens": "max_tokens",
}
# A minimal completed response: the request is what is measured, not the answer.
RESPONSE: Final = {
    "id": "resp_conformance",
    "object": "response",
    "created_at": 0,
    "status": "completed",
    "model": "model",
    "output": [
        {
            "type": "message",
            "id": "msg_conformance",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "ok", "annotations": []}],
        }
    ],
    "parallel_tool_calls": True,
    "tool_choice": "auto",
    "tools": [],
}


class OpenAIAgents:
    """The pieces of openai-agents the adapter calls, imported once."""

    def __init__(self) -> None:
        import agents  # noqa: PLC0415 - only inside the openai-agents env
        import httpx2  # noqa: PLC0415
        from agents.memory import OpenAIResponsesCompactionSession  # noqa: PLC0415
        from agents.models.openai_provider import OpenAIProvider  # noqa: PLC0415
        from agents.run_internal.items import (  # noqa: PLC0415
            _dedupe_key,
            deduplicate_input_items_preferring_latest,
        )
        from openai import AsyncOpenAI  # noqa: PLC0415

        agents.set_tracing_disabled(True)  # tracing would export over the network
        logging.getLogger("openai.agents").setLevel(logging.CRITICAL)
        self.agents = agents
        self.httpx2 = httpx2
        self.AsyncOpenAI = AsyncOpenAI
        self.OpenAIProvider = OpenAIProvider
        self.OpenAIResponsesCompactionSession = OpenAIResponsesCompactionSession
        self.dedupe = deduplicate_input_items_preferring_latest
        self.dedupe_key = _dedupe_key
        # the parameters responses.create takes: a metadata member that is one goes into
        # ``extra_args`` (keyword arguments), any other into ``extra_body`` (SDK's way)
        self.create_parameters = frozenset(
            inspect.signature(AsyncOpenAI(api_key="-").responses.create).parameters
        )


# ---------------------------------------------------------------------------------------------
# the transports: a recording HTTP transport and a loopback WebSocket server


def sse(events: Sequence[Mapping[str, Any]]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def response_events(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The events of ``RESPONSE`` as a stream carries them."""
    response = {**RESPONSE, "model": body.get("model", "model")}
    started = {**response, "status": "in_progress", "output": []}
    return [
        {"type": "response.created", "sequence_number": 0, "response": started},
        {"type": "response.completed", "sequence_number": 1, "response": response},
    ]


@dataclass
class Recorder:
    """The fake HTTP transport: records each request body, answers with ``RESPONSE`` (as JSON,
    or as server-sent events when the request streams)."""

    bodies: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, request: Any) -> Any:
        import httpx2  # noqa: PLC0415

        body = json.loads(request.content)
        self.bodies.append(body)
        if request.url.path.endswith("/responses/compact"):
            return httpx2.Response(200, json=COMPACTED)
        if not body.get("stream"):
            return httpx2.Response(200, json={**RESPONSE, "model": body.get("model", "model")})
        return httpx2.Response(
            200, content=sse(response_events(body)), headers={"content-type": "text/event-stream"}
        )


class Loopback:
    """A WebSocket server on a free 127.0.0.1 port, in its own thread (the ``websockets``
    package openai-agents' WebSocket model uses): each ``response.create`` frame is recorded into
    the ``Recorder`` and answered with ``RESPONSE``'s events on the same connection."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.server: Any = None
        self.port = 0

    async def handle(self, connection: Any) -> None:
        async for frame in connection:
            body = json.loads(frame)
            self.recorder.bodies.append(body)
            for event in response_events(body):
                await connection.send(json.dumps(event))

    async def start(self) -> None:
        from websockets.asyncio.server import serve  # noqa: PLC0415

        self.server = await serve(self.handle, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]

    def __enter__(self) -> Loopback:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.start(), self.loop).result(timeout=10)
        return self

    def __exit__(self, *exc_info: object) -> None:
        async def stop() -> None:
            self.server.close()
            await self.server.wait_closed()

        asyncio.run_coroutine_threadsafe(stop(), self.loop).result(timeout=10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()


def make_client(oa: OpenAIAgents, target: str, recorder: Recorder, websocket: int = 0) -> Any:
    """The ``AsyncOpenAI`` client a user builds for ``target`` (its base URL, ``BASE_URLS``), on
    the recording transport; for a WebSocket, its ``websocket_base_url`` is the loopback server
    (on port ``websocket``)."""
    options: dict[str, Any] = {}
    if websocket:
        options["websocket_base_url"] = f"ws://127.0.0.1:{websocket}/v1"
    return oa.AsyncOpenAI(
        api_key="conformance",
        base_url=BASE_URLS.get(target, OTHER_BASE_URL),
        http_client=oa.httpx2.AsyncClient(transport=oa.httpx2.MockTransport(recorder)),
        max_retries=0,
        **options,
    )


# ---------------------------------------------------------------------------------------------
# one run of the agent loop


@dataclass(frozen=True)
class Run:
    """One ``Runner`` run: what is stored in the session before it, what it is given as new
    input, the agent's model and settings, the run's overrides, and how it is sent."""

    target: str
    model: Any
    settings: Mapping[str, Any]
    stored: Sequence[Mapping[str, Any]]
    new_input: Sequence[Mapping[str, Any]]
    overrides: Mapping[str, Any] | None = None
    override_model: Any = None
    transport: str = "sse"  # "sse", "json", "websocket"
    previous_response_id: str | None = None
    use_session: bool = True


async def run_agent(oa: OpenAIAgents, run: Run, client: Any) -> None:
    a = oa.agents
    provider = oa.OpenAIProvider(
        openai_client=client,
        use_responses=True,
        use_responses_websocket=run.transport == "websocket",
    )
    agent = a.Agent(
        name="assistant", model=run.model, model_settings=a.ModelSettings(**run.settings)
    )
    config: dict[str, Any] = {"model_provider": provider, "tracing_disabled": True}
    if run.overrides is not None:
        config["model_settings"] = a.ModelSettings(**run.overrides)
    if run.override_model is not None:
        config["model"] = run.override_model
    options: dict[str, Any] = {"run_config": a.RunConfig(**config)}
    session = None
    if run.use_session:
        session = a.SQLiteSession("conformance")
        await session.add_items([dict(item) for item in run.stored])
        options["session"] = session
    if run.previous_response_id is not None:
        options["previous_response_id"] = run.previous_response_id
    new_input = [dict(item) for item in run.new_input]
    try:
        if run.transport == "json":
            await a.Runner.run(agent, new_input, **options)
        else:
            streamed = a.Runner.run_streamed(agent, new_input, **options)
            async for _ in streamed.stream_events():
                pass
    finally:
        if session is not None:
            session.close()
        await provider.aclose()


def send(oa: OpenAIAgents, run: Run) -> dict[str, Any]:
    """Runs the agent loop once; the one request it sent. Raises :class:`Refused` when
    openai-agents raises before a request is recorded."""
    recorder = Recorder()

    def go(websocket: int) -> None:
        client = make_client(oa, run.target, recorder, websocket)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                asyncio.run(run_agent(oa, run, client))
            except Reply:
                raise
            except Exception as error:  # what openai-agents raised is its verdict
                if not recorder.bodies:
                    raise Refused(f"{type(error).__name__}: {error}") from error

    if run.transport == "websocket":
        with Loopback(recorder) as loopback:
            go(loopback.port)
    else:
        go(0)
    if len(recorder.bodies) != 1:
        raise RuntimeError(f"{len(recorder.bodies)} requests recorded, one expected")
    return recorder.bodies[0]


# ---------------------------------------------------------------------------------------------
# the items form → openai-agents' session


def history_of(data: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    history = data.get("history")
    if not isinstance(history, Mapping) or history.get("form") != "items":
        raise ValueError("the history is not in the items form (this adapter reads only that form)")
    return list(history["messages"])


def split(
    messages: Sequence[Mapping[str, Any]],
) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """The session's items (every item up to the last assistant message, as openai-agents stored
    them) and the run's new input (the items of the messages after it)."""
    last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    stored = [item for message in messages[: last + 1] for item in message.get("items", [])]
    new_input = [item for message in messages[last + 1 :] for item in message.get("items", [])]
    return stored, new_input


def transport_of(transport: str) -> str:
    if transport in ("sse", "websocket"):
        return transport
    raise ValueError(f"unknown transport {transport!r}")


# ---------------------------------------------------------------------------------------------
# operations


def p5_settings(reasoning_model: object = True) -> dict[str, Any]:
    """What a user following SPEC P5 sets: ``store=False``, and the ``include`` entry unless the
    model returns no reasoning (the plan's ``reasoning_model: false``)."""
    if reasoning_model is False:
        return {"store": False}
    return {"store": False, "response_include": [P5_INCLUDE]}


def op_replay(oa: OpenAIAgents, data: Mapping[str, Any]) -> dict[str, Any]:
    target = data["target"]["provider"]
    stored, new_input = split(history_of(data))
    body = send(
        oa,
        Run(
            target=target,
            model=REPLAY_MODELS.get(target, REPLAY_MODEL),
            settings=p5_settings(),
            stored=stored,
            new_input=new_input,
            transport=transport_of(data["target"].get("transport", "sse")),
        ),
    )
    return {"input": body["input"], "diagnostics": []}


def op_dedupe(oa: OpenAIAgents, data: Mapping[str, Any]) -> dict[str, Any]:
    """openai-agents' dedupe over the entries' items, in order. It keys an item by its id alone
    (``_dedupe_key``) and sends, at the place of a key's first item, the key's latest item: each
    item sent is one entry's ``keep``, every other entry is ``drop_duplicate``. The item sent is
    the first entry's when it is equal to it (an exact copy sent in the first place is the first
    kept), else the entry whose object it is (the latest). The provider has no place in an input
    item of a Responses-route model (no ``provider_data``); openai-agents has no strict conflict
    policy (``options`` has no setting) and counts nothing: the counters are the decisions'."""
    items = [dict(entry["item"]) for entry in data["entries"]]
    sent = oa.dedupe(items)
    first_of: dict[str, int] = {}
    for index, item in enumerate(items):
        key = oa.dedupe_key(item)
        if key is not None:
            first_of.setdefault(key, index)
    kept: set[int] = set()
    for item in sent:
        index = next(i for i, candidate in enumerate(items) if candidate is item)
        key = oa.dedupe_key(item)
        first = first_of[key] if key is not None else index
        kept.add(first if items[first] == item else index)
    decisions = ["keep" if index in kept else "drop_duplicate" for index in range(len(items))]
    return {
        "decisions": decisions,
        "counters": {
            "replay_deduplicated_exact_count": decisions.count("drop_duplicate"),
            "replay_id_ciphertext_conflict_count": 0,
        },
    }


@dataclass(frozen=True)
class PlanSettings:
    """A plan's settings in openai-agents' terms (``plan_settings``)."""

    model: Any
    agent: dict[str, Any]
    run: dict[str, Any] | None
    run_model: Any
    previous_response_id: Any


def plan_settings(data: Mapping[str, Any], create_parameters: frozenset[str]) -> PlanSettings:
    """The agent's settings are the instance's: the configured desired effort
    (``reasoning.effort``), the instance key (``extra_args.prompt_cache_key``, where openai-agents
    takes a user's key, ``run_internal/prompt_cache_key.py``) and SPEC P5's ``store`` and
    ``include``. ``metadata`` is the run's: ``model`` is ``RunConfig.model``,
    ``previous_response_id`` the run's argument, a member with a ``ModelSettings`` field of its
    own that field (``METADATA_SETTINGS``; ``text.verbosity`` is ``verbosity``), any other member
    that ``responses.create`` takes (``prompt_cache_key``, ``input``, ...) an ``extra_args``
    entry, and the rest (``multi_agent``) members of ``extra_body``, as the OpenAI SDK sends a
    field it has no parameter for. ``null`` is unset, as in ``ModelSettings``. The update-capable
    registry has no setting: openai-agents has no configuration updates."""
    agent: dict[str, Any] = {
        **p5_settings(data.get("reasoning_model", True)),
        "extra_args": {"prompt_cache_key": data.get("instance_key")},
    }
    desired = data.get("desired_effort")
    if desired is not None:
        agent["reasoning"] = {"effort": desired}
    metadata_ = data.get("metadata")
    if metadata_ is None:
        return PlanSettings(data.get("model"), agent, None, None, None)
    if not isinstance(metadata_, Mapping):
        raise skipped("metadata that is not an object: openai-agents' settings are members")
    run: dict[str, Any] = {}
    extra_args: dict[str, Any] = {}
    extra_body: dict[str, Any] = {}
    run_model = previous_response_id = None
    for name, value in metadata_.items():
        if value is None:
            continue
        if name == "model":
            run_model = value
        elif name == "previous_response_id":
            previous_response_id = value
        elif name in METADATA_SETTINGS:
            run[METADATA_SETTINGS[name]] = value
        elif name == "text" and isinstance(value, Mapping) and set(value) == {"verbosity"}:
            run["verbosity"] = value["verbosity"]
        elif name in create_parameters:
            extra_args[name] = value
        else:
            extra_body[name] = value
    if extra_args:
        run["extra_args"] = extra_args
    if extra_body:
        given = run.get("extra_body")
        run["extra_body"] = {**given, **extra_body} if isinstance(given, Mapping) else extra_body
    return PlanSettings(data.get("model"), agent, run, run_model, previous_response_id)


def op_plan(oa: OpenAIAgents, data: Mapping[str, Any]) -> dict[str, Any]:
    if data.get("endpoint", "responses") != "responses":
        return {"request": compact(oa, data), "diagnostics": []}
    target = data.get("target_provider", DEFAULT_TARGET)
    settings = plan_settings(data, oa.create_parameters)
    messages = history_of(data)
    stored, new_input = split(messages)
    transport = data.get("transport", "sse")
    previous_response_id = settings.previous_response_id
    use_session = True
    if transport == "websocket_continuation":
        # openai-agents continues a chain with Runner.run(previous_response_id=...) and the new
        # items; a session cannot be combined with it (validate_session_conversation_settings)
        last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
        response_id = messages[last].get("response_id") if last >= 0 else None
        if isinstance(response_id, str) and previous_response_id is None:
            previous_response_id = response_id
            use_session = False
        transport = "websocket"
    body = send(
        oa,
        Run(
            target=target,
            model=settings.model,
            settings=settings.agent,
            stored=stored,
            new_input=new_input,
            overrides=settings.run,
            override_model=settings.run_model,
            transport=transport_of(transport),
            previous_response_id=previous_response_id,
            use_session=use_session,
        ),
    )
    return {"request": plan_request(body), "diagnostics": []}


def plan_request(body: Mapping[str, Any]) -> dict[str, Any]:
    return {name: body[name] for name in PLAN_FIELDS if name in body}


def compact(oa: OpenAIAgents, data: Mapping[str, Any]) -> dict[str, Any]:
    """The standalone compact endpoint as openai-agents calls it: its compaction session
    (``memory/openai_responses_compaction_session.py::OpenAIResponsesCompactionSession``) over a
    ``SQLiteSession`` holding the whole history, with the plan's model, compacted on demand
    (``run_compaction`` with ``force``, from the stored items: ``compaction_mode: input``). The
    transport, the effort, the key and ``metadata`` have no place in that request."""
    recorder = Recorder()
    client = make_client(oa, data.get("target_provider", DEFAULT_TARGET), recorder)
    items = [dict(item) for message in history_of(data) for item in message.get("items", [])]

    async def go() -> None:
        underlying = oa.agents.SQLiteSession("conformance")
        try:
            session = oa.OpenAIResponsesCompactionSession(
                "conformance", underlying, client=client, model=data.get("model")
            )
            await session.add_items(items)
            await session.run_compaction({"force": True, "compaction_mode": "input"})
        finally:
            underlying.close()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            asyncio.run(go())
        except Exception as error:  # what openai-agents raised is its verdict
            if not recorder.bodies:
                raise Refused(f"{type(error).__name__}: {error}") from error
    if len(recorder.bodies) != 1:
        raise RuntimeError(f"{len(recorder.bodies)} requests recorded, one expected")
    return plan_request(recorder.bodies[0])


def op_defaults(oa: OpenAIAgents, data: Mapping[str, Any]) -> dict[str, Any]:
    """An ``Agent`` with a model name and nothing else (openai-agents' own defaults for that
    model apply, ``models/default_models.py``), run once with ``Runner.run``."""
    recorder = Recorder()
    client = make_client(oa, data["target_provider"], recorder)
    a = oa.agents

    async def go() -> None:
        provider = oa.OpenAIProvider(openai_client=client)
        agent = a.Agent(name="assistant", model=data["model"])
        config = a.RunConfig(model_provider=provider, tracing_disabled=True)
        try:
            await a.Runner.run(agent, "hello", run_config=config)
        finally:
            await provider.aclose()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        asyncio.run(go())
    body = recorder.bodies[0]
    return defaults_output(body)


ADAPTER: Final = Adapter(
    name="openai-agents",
    distribution="openai-agents",
    load=OpenAIAgents,
    operations={
        "replay": op_replay,
        "dedupe": op_dedupe,
        "plan": op_plan,
        "defaults": op_defaults,
    },
    announce={
        "history_formats": ["items"],
        # only provider_data, which OpenAIResponsesModel's items never carry
        "provenance": "none",
    },
)


if __name__ == "__main__":
    sys.exit(main(ADAPTER))
