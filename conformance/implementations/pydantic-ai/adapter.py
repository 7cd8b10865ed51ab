"""pydantic-ai (PyPI ``pydantic-ai-slim[openai]``) behind the conformance adapter protocol.

    .implementations/pydantic-ai/bin/python conformance/implementations/pydantic-ai/adapter.py

Runs in the environment made by ``tools/install_implementation.py pydantic-ai`` and calls the
published package's own code; it never imports ``reasoning_replay`` (pydantic-ai is measured, not
helped). It reads histories in the items form only (PROTOCOL.md#items-form) and builds every
request with pydantic-ai's ``OpenAIResponsesModel`` on an ``AsyncOpenAI`` client whose transport
(``httpx2.MockTransport``) records the request body and answers with a minimal Responses body:
nothing of a request is assembled here. What each operation calls:

- ``replay``: the history mapped into pydantic-ai's messages (below), then the agent graph's
  request step (``_agent_graph.py``, ``ModelRequestNode``): ``_clean_message_history``,
  ``Model.prepare_messages``, ``Model.request``. The reply is the recorded body's ``input``.
- ``dedupe``: pydantic-ai has no dedupe function; the entries go through the replay path, one
  assistant response per entry, sent to each entry's provider; an entry is kept when its item
  comes out of the request, at its turn (``Dedupe`` below).
- ``plan``: the history mapped as for ``replay``; each step's effort (the ``effort`` of the
  assistant message it produced) is recorded by pydantic-ai's own
  ``_agent_graph._record_model_settings_changes`` at the step's request, the desired effort at
  the last one, as an agent run records them; then the request step as for ``replay``, with the
  model and settings of the plan (``plan_settings``). The reply is the recorded request.
- ``defaults``: the request of a model built with no settings at all, for one user message.

How a message of the items form becomes a pydantic-ai message (as pydantic-ai itself stores
one: ``OpenAIResponsesModel._process_response`` and the agent graph):

- an ``assistant`` message becomes a ``ModelResponse`` with ``provider_name`` its issuer (SPEC
  P4: the message's provider, else the history's, else the target; protocol names map to
  pydantic-ai's provider names by ``SYSTEMS``), ``model_name`` its ``model`` and
  ``provider_response_id`` its ``response_id``. Reasoning items become ``ThinkingPart``s through
  pydantic-ai's own ``_reasoning.map_reasoning_item``; ``message`` items one ``TextPart`` per
  text (``id``, ``phase`` in ``provider_details``); ``function_call`` items ``ToolCallPart``s;
  ``compaction`` items ``CompactionPart``s through ``_response_fields.map_compaction_item``;
- any other message becomes a ``ModelRequest``: ``message`` items of role ``user`` a
  ``UserPromptPart``, of role ``developer`` or ``system`` a ``SystemPromptPart``;
  ``function_call_output`` items ``ToolReturnPart``s (tool name from the matching call);
  ``configuration_update`` items the ``ModelSettingsDeltaPart`` pydantic-ai records for an effort
  change; a ``compaction`` item is pydantic-ai's ``CompactionPart`` in a ``ModelResponse`` of its
  own at that place (pydantic-ai keeps compaction only in responses).

A case holding what pydantic-ai has no part for (an ``item_reference``, a ``compaction_trigger``,
custom tool calls, ...) or asking for a setting it does not have is answered ``skipped``. Where
pydantic-ai raises before sending, the reply is a rejection with the code ``raised`` (not in the
SPEC registry: pydantic-ai has none) and the exception as its message.
"""

from __future__ import annotations

import asyncio
import json
import sys
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Final

sys.path.append(str(Path(__file__).resolve().parents[1]))  # the modules the adapters share
from _dedupe_by_replay import dedupe_by_replay
from _protocol_loop import Adapter, Refused, Reply, defaults_output, main, skipped

DEFAULT_TARGET: Final = "openai"
# A model for the requests of ``replay`` and ``dedupe``, whose vectors name none: one of
# pydantic-ai's update-capable models (``profiles/openai.py::_GPT_6_MODEL_PREFIXES``), so a stored
# ``configuration_update`` is rendered rather than dropped; xAI's own for target ``xai``.
REPLAY_MODELS: Final = {"xai": "grok-4.6"}
REPLAY_MODEL: Final = "gpt-6-astra"
# The protocol's provider names (SPEC P4) and the ``provider_name`` pydantic-ai records for the
# same service: ``OpenAIProvider.name``, ``OpenAICodexProvider.name``
# (``providers/openai_codex.py``)
# and the name an ``OpenAICompatibleProvider`` for xAI's Responses API is given.
SYSTEMS: Final = {"openai": "openai", "codex": "openai-codex", "xai": "xai"}
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
# SPEC F8's override members, and the pydantic-ai setting each one is
# (``models/openai/_settings.py``,
# ``settings.py``); a member with no setting makes the case ``skipped``.
METADATA_SETTINGS: Final = {
    "prompt_cache_key": "openai_prompt_cache_key",
    "truncation": "openai_truncation",
    "context_management": "openai_context_management",
    "extra_body": "extra_body",
    "previous_response_id": "openai_previous_response_id",
    "max_output_tokens": "max_tokens",
}
REASONING_SETTINGS: Final = {
    "summary": "openai_reasoning_summary",
    "context": "openai_reasoning_context",
}


class PydanticAI:
    """The pieces of pydantic-ai the adapter calls, imported once."""

    def __init__(self) -> None:
        import httpx2  # noqa: PLC0415 - only inside the pydantic-ai env
        from openai import AsyncOpenAI  # noqa: PLC0415
        from openai.types import responses  # noqa: PLC0415
        from openai.types.responses import ResponseCompactionItem  # noqa: PLC0415
        from pydantic_ai import _agent_graph, messages  # noqa: PLC0415
        from pydantic_ai.models import ModelRequestParameters  # noqa: PLC0415
        from pydantic_ai.models.openai import OpenAIResponsesModel  # noqa: PLC0415
        from pydantic_ai.models.openai._reasoning import map_reasoning_item  # noqa: PLC0415
        from pydantic_ai.models.openai._response_fields import map_compaction_item  # noqa: PLC0415
        from pydantic_ai.models.openai_codex import OpenAICodexModel  # noqa: PLC0415
        from pydantic_ai.profiles.openai import OpenAIModelProfile  # noqa: PLC0415
        from pydantic_ai.providers.openai import OpenAIProvider  # noqa: PLC0415
        from pydantic_ai.providers.openai_codex import OpenAICodexProvider  # noqa: PLC0415
        from pydantic_ai.providers.openai_compatible import OpenAICompatibleProvider  # noqa: PLC0415

        self.httpx2 = httpx2
        self.AsyncOpenAI = AsyncOpenAI
        self.responses = responses
        self.ResponseCompactionItem = ResponseCompactionItem
        self.m = messages
        self.graph = _agent_graph
        self.ModelRequestParameters = ModelRequestParameters
        self.OpenAIResponsesModel = OpenAIResponsesModel
        self.OpenAICodexModel = OpenAICodexModel
        self.OpenAIModelProfile = OpenAIModelProfile
        self.OpenAIProvider = OpenAIProvider
        self.OpenAICodexProvider = OpenAICodexProvider
        self.OpenAICompatibleProvider = OpenAICompatibleProvider
        self.map_reasoning_item = map_reasoning_item
        self.map_compaction_item = map_compaction_item


@dataclass
class Recorder:
    """The fake transport: records each request body, answers with ``RESPONSE`` (as JSON, or as
    server-sent events when the request streams, as the Codex route always does)."""

    bodies: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, request: Any) -> Any:
        import httpx2  # noqa: PLC0415

        body = json.loads(request.content)
        self.bodies.append(body)
        response = {**RESPONSE, "model": body.get("model", "model")}
        if not body.get("stream"):
            return httpx2.Response(200, json=response)
        events = [
            {
                "type": "response.created",
                "sequence_number": 0,
                "response": {**response, "status": "in_progress", "output": []},
            },
            {"type": "response.completed", "sequence_number": 1, "response": response},
        ]
        text = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
        return httpx2.Response(
            200, content=text.encode(), headers={"content-type": "text/event-stream"}
        )


def system_of(provider: str) -> str:
    """The ``provider_name`` pydantic-ai records for a protocol provider name (``SYSTEMS``)."""
    return SYSTEMS.get(provider, provider)


def make_model(
    pa: PydanticAI,
    target: str,
    model_name: Any,
    recorder: Recorder,
    *,
    settings: Mapping[str, Any] | None = None,
    update_capable: frozenset[str] | None = None,
) -> Any:
    """The model a pydantic-ai user builds for ``target``: ``OpenAIResponsesModel`` on OpenAI's
    provider; ``OpenAICodexModel`` on the Codex provider; for xAI (and any other name) an
    ``OpenAICompatibleProvider`` of that name, whose profile says it returns encrypted reasoning
    (pydantic-ai's default profile for a compatible service claims none, so its reasoning would
    never be asked for). ``update_capable`` (a vector's registry, SPEC §9.1) overrides the
    profile's ``supports_mid_conversation_effort`` as a user's ``profile=`` does."""
    client = pa.AsyncOpenAI(
        api_key="conformance",
        base_url="https://conformance.invalid/v1",
        http_client=pa.httpx2.AsyncClient(transport=pa.httpx2.MockTransport(recorder)),
        max_retries=0,
    )
    profile: dict[str, Any] = {}
    if update_capable is not None:
        profile["supports_mid_conversation_effort"] = model_name in update_capable
    kwargs: dict[str, Any] = {"settings": dict(settings) if settings else None}
    if target == "openai":
        provider: Any = pa.OpenAIProvider(openai_client=client)
        model_class: Any = pa.OpenAIResponsesModel
    elif target == "codex":
        provider = pa.OpenAICodexProvider(openai_client=client)
        model_class = pa.OpenAICodexModel
    else:
        profile.setdefault("openai_supports_encrypted_reasoning_content", True)
        provider = pa.OpenAICompatibleProvider(system_of(target), openai_client=client)
        model_class = pa.OpenAIResponsesModel
    if profile:
        # merged over the provider's profile for the model, as ``profile=`` documents
        kwargs["profile"] = pa.OpenAIModelProfile(**profile)
    return model_class(model_name, provider=provider, **kwargs)


# ---------------------------------------------------------------------------------------------
# the items form → pydantic-ai's messages


@dataclass
class Mapper:
    """Maps one items-form history into pydantic-ai's messages (module docstring)."""

    pa: PydanticAI
    target: str
    history_provider: str | None
    tool_names: dict[str, str] = field(default_factory=dict)
    #: the effort each mapped message ran with: an assistant message's ``effort`` for its
    #: ``ModelResponse``, ``None`` for every other message (``record_efforts`` reads it)
    efforts: list[Any] = field(default_factory=list)

    def issuer(self, message: Mapping[str, Any]) -> str:
        """SPEC P4: the message's provider, else the history's, else the target."""
        provider = message.get("provider")
        if isinstance(provider, str) and provider:
            return provider
        return self.history_provider or self.target

    def messages(self, history: Sequence[Mapping[str, Any]]) -> list[Any]:
        out: list[Any] = []
        for message in history:
            if message.get("role") == "assistant":
                out.append(self.response(message))
                self.efforts.append(message.get("effort"))
            else:
                mapped = self.request(message)
                out.extend(mapped)
                self.efforts.extend([None] * len(mapped))
        return out

    def response(self, message: Mapping[str, Any]) -> Any:
        m = self.pa.m
        system = system_of(self.issuer(message))
        parts: list[Any] = []
        for item in message.get("items", []):
            kind = item.get("type")
            if kind == "reasoning":
                reasoning = self.pa.responses.ResponseReasoningItem.model_validate(item)
                parts.extend(self.pa.map_reasoning_item(reasoning, system))
            elif kind == "message" and item.get("role") == "assistant":
                parts.extend(self.text_parts(item, system))
            elif kind == "function_call":
                self.tool_names[item["call_id"]] = item["name"]
                parts.append(
                    m.ToolCallPart(
                        item["name"],
                        item["arguments"],
                        tool_call_id=item["call_id"],
                        id=item.get("id"),
                        provider_name=system,
                    )
                )
            elif kind == "compaction":
                parts.append(self.compaction(item, system))
            else:
                raise skipped(f"pydantic-ai keeps no part for an assistant item {describe(item)}")
        model = message.get("model")
        return m.ModelResponse(
            parts=parts,
            model_name=model if isinstance(model, str) else None,
            provider_name=system,
            provider_response_id=message.get("response_id"),
        )

    def text_parts(self, item: Mapping[str, Any], system: str) -> list[Any]:
        """As ``_process_response`` stores a message: one ``TextPart`` per output text, with the
        message's id and phase."""
        content = item.get("content")
        if isinstance(content, str):
            texts = [content]
        elif isinstance(content, list) and all(
            isinstance(c, Mapping) and c.get("type") == "output_text" for c in content
        ):
            texts = [c["text"] for c in content]
        else:
            raise skipped(f"pydantic-ai keeps no part for assistant content {describe(item)}")
        details = {"phase": item["phase"]} if "phase" in item else None
        return [
            self.pa.m.TextPart(
                text, id=item.get("id"), provider_name=system, provider_details=details
            )
            for text in texts
        ]

    def compaction(self, item: Mapping[str, Any], system: str) -> Any:
        compaction = self.pa.ResponseCompactionItem.model_validate(item)
        return self.pa.map_compaction_item(compaction, system)

    def request(self, message: Mapping[str, Any]) -> list[Any]:
        """A ``ModelRequest`` (and a ``ModelResponse`` for each compaction item, in place)."""
        m = self.pa.m
        out: list[Any] = []
        parts: list[Any] = []

        def close() -> None:
            if parts:
                out.append(m.ModelRequest(parts=list(parts)))
                parts.clear()

        for item in message.get("items", []):
            kind = item.get("type", "message" if "role" in item else None)
            role = item.get("role")
            if kind == "message" and role == "user":
                parts.append(m.UserPromptPart(self.user_content(item)))
            elif kind == "message" and role in ("developer", "system"):
                if not isinstance(item.get("content"), str):
                    raise skipped(f"pydantic-ai keeps no part for {describe(item)}")
                parts.append(m.SystemPromptPart(item["content"]))
            elif kind == "function_call_output":
                name = self.tool_names.get(item["call_id"], "tool")
                parts.append(m.ToolReturnPart(name, item["output"], tool_call_id=item["call_id"]))
            elif kind == "configuration_update":
                effort = (item.get("reasoning") or {}).get("effort")
                parts.append(m.ModelSettingsDeltaPart(settings={"thinking": effort}))
            elif kind == "compaction":
                close()
                system = system_of(self.issuer(message))
                out.append(
                    m.ModelResponse(parts=[self.compaction(item, system)], provider_name=system)
                )
            else:
                raise skipped(
                    f"pydantic-ai keeps no part for a {message.get('role')} item {describe(item)}"
                )
        close()
        return out

    def user_content(self, item: Mapping[str, Any]) -> Any:
        content = item.get("content")
        if isinstance(content, str):
            return content
        if not isinstance(content, list):
            raise skipped(f"pydantic-ai keeps no user prompt for {describe(item)}")
        parts: list[Any] = []
        for part in content:
            kind = part.get("type") if isinstance(part, Mapping) else None
            if kind == "input_text":
                parts.append(part["text"])
            elif kind == "input_image" and isinstance(part.get("image_url"), str):
                parts.append(self.pa.m.ImageUrl(part["image_url"]))
            else:
                raise skipped(f"pydantic-ai keeps no user content part {describe(part)}")
        return parts


def describe(item: Any) -> str:
    text = json.dumps(item, ensure_ascii=False)
    return text if len(text) <= 120 else text[:117] + "..."


# ---------------------------------------------------------------------------------------------
# the request step


def send(
    pa: PydanticAI, model: Any, messages: list[Any], settings: Mapping[str, Any] | None
) -> None:
    """The agent graph's request step (``_agent_graph.py``, ``ModelRequestNode``): clean the
    history, ``Model.prepare_messages``, then ``Model.request``. Raises :class:`Refused` when
    pydantic-ai raises before a request is recorded."""
    clean = pa.m._clean_message_history
    parameters = pa.ModelRequestParameters()

    async def run() -> None:
        cleaned = clean(list(messages), repair_last_response=True)
        prepared = model.prepare_messages(cleaned, parameters)
        if prepared is not cleaned:
            prepared = clean(prepared, repair_last_response=True)
        await model.request(prepared, dict(settings) if settings else None, parameters)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            asyncio.run(run())
        except Reply:
            raise
        except Exception as error:  # what pydantic-ai raised is its verdict
            raise Refused(f"{type(error).__name__}: {error}") from error


def recorded_request(recorder: Recorder) -> dict[str, Any]:
    if len(recorder.bodies) != 1:
        raise RuntimeError(f"{len(recorder.bodies)} requests recorded, one expected")
    return recorder.bodies[0]


# ---------------------------------------------------------------------------------------------
# operations


def history_of(data: Mapping[str, Any]) -> tuple[list[Mapping[str, Any]], str | None]:
    history = data.get("history")
    if not isinstance(history, Mapping) or history.get("form") != "items":
        raise ValueError("the history is not in the items form (this adapter reads only that form)")
    provider = history.get("provider")
    return list(history["messages"]), provider if isinstance(provider, str) and provider else None


def op_replay(pa: PydanticAI, data: Mapping[str, Any]) -> dict[str, Any]:
    if (data.get("options") or {}).get("conflict_policy") == "reject":
        raise skipped(
            "pydantic-ai has no strict conflict policy (SPEC D3 MAY): it detects no conflict"
        )
    target = data["target"]["provider"]
    messages, history_provider = history_of(data)
    mapped = Mapper(pa, target, history_provider).messages(messages)
    recorder = Recorder()
    model = make_model(pa, target, REPLAY_MODELS.get(target, REPLAY_MODEL), recorder)
    send(pa, model, mapped, {"openai_store": False})
    return {"input": recorded_request(recorder)["input"], "diagnostics": []}


def op_dedupe(pa: PydanticAI, data: Mapping[str, Any]) -> dict[str, Any]:
    """Dedupe through the replay path (``_dedupe_by_replay.py``), each item as pydantic-ai
    rebuilt it (``_map_thinking_to_reasoning_item``)."""
    if (data.get("options") or {}).get("conflict_policy") == "reject":
        raise skipped(
            "pydantic-ai has no strict conflict policy (SPEC D3 MAY): it detects no conflict"
        )
    return dedupe_by_replay(data["entries"], lambda replay: op_replay(pa, replay)["input"])


def plan_settings(data: Mapping[str, Any]) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """The model, the instance's settings and the request's settings of a plan (SPEC F11): the
    configured model and desired effort, the instance key as ``openai_prompt_cache_key`` and
    ``openai_store=False`` (what a user following SPEC P5 sets; without it: ``defaults``) are the
    model's own settings; ``metadata`` becomes the request's, member by member
    (``METADATA_SETTINGS``); a member pydantic-ai has no setting for makes the case skipped."""
    model = data.get("model")
    instance: dict[str, Any] = {
        "openai_store": False,
        "openai_prompt_cache_key": data.get("instance_key"),
    }
    desired = data.get("desired_effort")
    if desired is not None:
        instance["thinking"] = thinking_of(desired)
    request: dict[str, Any] = {}
    metadata = data.get("metadata")
    if metadata is None:
        return model, instance, request
    if not isinstance(metadata, Mapping):
        raise skipped("metadata that is not an object: pydantic-ai's settings are a mapping")
    for name, value in metadata.items():
        if value is None:
            continue
        if name == "model":
            model = value
        elif name == "reasoning":
            if not isinstance(value, Mapping):
                raise skipped(
                    f"reasoning {describe(value)}: pydantic-ai has no setting for a reasoning "
                    "that is not an object"
                )
            for member, setting in value.items():
                if setting is None:
                    continue
                if member == "effort":
                    request["thinking"] = thinking_of(setting)
                elif member in REASONING_SETTINGS:
                    request[REASONING_SETTINGS[member]] = setting
                else:
                    raise skipped(f"reasoning.{member}: pydantic-ai has no such setting")
        elif name == "text" and isinstance(value, Mapping) and set(value) == {"verbosity"}:
            request["openai_text_verbosity"] = value["verbosity"]
        elif name in METADATA_SETTINGS:
            request[METADATA_SETTINGS[name]] = value
        else:
            raise skipped(f"metadata.{name}: pydantic-ai has no such setting")
    return model, instance, request


def thinking_of(effort: Any) -> Any:
    """An effort as pydantic-ai's unified ``thinking`` setting (``settings.py::ThinkingLevel``):
    ``none`` is ``False`` (no reasoning); every other value is handed over as it is."""
    return False if effort == "none" else effort


class StepContext:
    """What ``_record_model_settings_changes`` reads of the run context: the event buffer."""

    def __init__(self) -> None:
        self.state = SimpleNamespace(event_stream_buffer=[])


def record_efforts(
    pa: PydanticAI,
    model: Any,
    messages: list[Any],
    efforts: Sequence[Any],
    final_settings: Mapping[str, Any] | None,
) -> None:
    """Record each step's effort as an agent run does: at the last request of every run of
    requests, ``_agent_graph._record_model_settings_changes`` with the settings the step ran with
    (the effort of the response it produced, from that message's ``effort``; a response with no
    effort recorded leaves its step unrecorded), and the final request with the plan's settings."""
    for index, message in enumerate(messages):
        if not isinstance(message, pa.m.ModelRequest):
            continue
        following = messages[index + 1] if index + 1 < len(messages) else None
        if isinstance(following, pa.m.ModelRequest):
            continue
        if following is None:
            settings: Mapping[str, Any] | None = final_settings
        else:
            effort = efforts[index + 1]
            if effort is None:
                continue
            settings = {"thinking": thinking_of(effort)}
        pa.graph._record_model_settings_changes(
            StepContext(),
            model,
            dict(settings) if settings else None,
            messages[: index + 1],
            [message],
        )


def op_plan(pa: PydanticAI, data: Mapping[str, Any]) -> dict[str, Any]:
    transport = data.get("transport", "sse")
    if transport != "sse":
        raise skipped(f"transport {transport}: the offline transport records HTTP requests only")
    if data.get("endpoint", "responses") != "responses":
        raise skipped(
            "the standalone compact endpoint (Model.compact_messages) is not driven by this adapter"
        )
    target = data.get("target_provider", DEFAULT_TARGET)
    model_name, instance, request = plan_settings(data)
    registry = data.get("update_capable_models")
    messages, history_provider = history_of(data)
    mapper = Mapper(pa, target, history_provider)
    mapped = mapper.messages(messages)
    recorder = Recorder()
    update_capable = frozenset(registry) if isinstance(registry, list) else None
    model = make_model(
        pa, target, model_name, recorder, settings=instance, update_capable=update_capable
    )
    record_efforts(pa, model, mapped, mapper.efforts, request)
    send(pa, model, mapped, request)
    body = recorded_request(recorder)
    fields = (
        "model",
        "store",
        "include",
        "reasoning",
        "prompt_cache_key",
        "input",
        "previous_response_id",
    )
    return {"request": {name: body[name] for name in fields if name in body}, "diagnostics": []}


def op_defaults(pa: PydanticAI, data: Mapping[str, Any]) -> dict[str, Any]:
    recorder = Recorder()
    model = make_model(pa, data["target_provider"], data["model"], recorder)
    messages = [pa.m.ModelRequest(parts=[pa.m.UserPromptPart("hello")])]
    send(pa, model, messages, None)
    body = recorded_request(recorder)
    return defaults_output(body)


ADAPTER: Final = Adapter(
    name="pydantic-ai",
    distribution="pydantic-ai-slim",
    load=PydanticAI,
    operations={
        "replay": op_replay,
        "dedupe": op_dedupe,
        "plan": op_plan,
        "defaults": op_defaults,
    },
    announce={
        "history_formats": ["items"],
        # ThinkingPart.provider_name: each part records the provider that produced it
        "provenance": "item",
    },
)


if __name__ == "__main__":
    sys.exit(main(ADAPTER))
