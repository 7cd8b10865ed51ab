"""langchain-openai (``ChatOpenAI(use_responses_api=True)``) behind the adapter protocol.

    .implementations/langchain-openai/bin/python \
        conformance/implementations/langchain-openai/adapter.py

Runs in the environment made by ``tools/install_implementation.py langchain-openai`` and calls the
published package's own code; it never imports ``reasoning_replay`` (langchain-openai is measured,
not helped). It reads histories in the items form only (PROTOCOL.md#items-form) and builds every
request through the public ``ChatOpenAI.invoke`` on an ``httpx2`` client whose ``MockTransport``
records the request body and answers with a Responses body: nothing of a request is assembled
here. What each operation calls:

- ``replay``: the history mapped into LangChain messages (below), then ``ChatOpenAI.invoke`` with
  ``store=False`` and ``include=["reasoning.encrypted_content"]`` (what a user following SPEC P5
  sets). langchain-openai builds the input in
  ``chat_models/base.py::_construct_responses_api_input``. The reply is the recorded ``input``.
- ``dedupe``: langchain-openai has no dedupe function; the entries go through the replay path,
  one assistant turn per entry, and an entry is kept when its item comes out of the request.
- ``plan``: the history mapped as for ``replay``; the effort as langchain-openai expresses it,
  the request-level ``reasoning`` (``reasoning_effort``, or ``reasoning`` when
  ``metadata.reasoning`` has other members); the instance key, or ``metadata.prompt_cache_key``,
  as the invoke's ``prompt_cache_key`` (the key is the user's, K1); ``store=False`` and the
  include entry (P5); other ``metadata`` members as the ``ChatOpenAI`` field of the same
  meaning. A WebSocket continuation is langchain-openai's own continuation,
  ``use_previous_response_id=True``. No ``configuration_update`` is attached for the history's
  per-turn efforts: langchain-openai keeps no effort state, and attaching one is the user's work
  (the ``reasoning_effort`` docstring).
- ``defaults``: the request of ``ChatOpenAI(model=..., use_responses_api=True)`` with nothing else
  set, for one user message.

How a message of the items form becomes a LangChain message, as langchain-openai itself stores
one:

- an ``assistant`` message is the ``AIMessage`` langchain-openai returns for a response whose
  ``output`` is the message's items, in order: ``ChatOpenAI.invoke`` is run against a transport
  that answers with that response (``turn_message``), so the message is built by
  ``_construct_lc_result_from_responses_api`` itself (reasoning items and function calls kept as
  raw blocks, output text as ``text`` blocks with the message id). A message item whose ``content``
  is a string is the provider's ``[{"type": "output_text", "text": ..., "annotations": []}]``;
  ``response_id`` is the response's ``id`` (and is removed from the message when the history has
  none, as in an imported history). langchain-openai records no issuer: ``provider`` is not mapped;
- any other message becomes one LangChain message per item, in order: a ``message`` of role ``user``
  a ``HumanMessage`` (its content as given), of role ``system`` a ``SystemMessage``, of role
  ``developer`` a ``SystemMessage`` with ``__openai_role__: developer``; a ``function_call_output``
  a ``ToolMessage``; a ``custom_tool_call_output`` a ``ToolMessage`` holding that block; a stored
  ``configuration_update`` the ``HumanMessage`` block a user attaches by hand (the
  ``reasoning_effort`` docstring); a ``compaction`` item, which langchain-openai keeps only in an
  ``AIMessage``, the ``AIMessage`` of a response whose output is that item.

A case holding what langchain-openai has no message or setting for (a ``compaction_trigger``, an
``item_reference``, a user message among an assistant's items, a WebSocket transport, the compact
endpoint, ``metadata.input`` or ``multi_agent``) is answered ``skipped``. Where langchain-openai
raises before sending, the reply is a rejection with the code ``raised`` (not in the SPEC
registry: langchain-openai has none) and the exception as its message.
"""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

sys.path.append(str(Path(__file__).resolve().parents[1]))  # the modules the adapters share
from _dedupe_by_replay import dedupe_by_replay
from _protocol_loop import Adapter, Refused, defaults_output, main, skipped

DEFAULT_TARGET: Final = "openai"
INCLUDE: Final = ["reasoning.encrypted_content"]
# A model for ``replay`` and ``dedupe``, whose vectors name none; xAI's own for target ``xai``.
REPLAY_MODELS: Final = {"xai": "grok-4.6"}
REPLAY_MODEL: Final = "gpt-6-astra"
# The base URL a user gives ``ChatOpenAI`` for each target provider (langchain-openai does not
# branch on it; the transport is the recorder, so nothing leaves the process).
BASE_URLS: Final = {
    "openai": "https://api.openai.com/v1",
    "codex": "https://chatgpt.com/backend-api/codex",
    "xai": "https://api.x.ai/v1",
}
# SPEC F8's override members and the ``ChatOpenAI`` field each one is; ``prompt_cache_key`` and
# ``previous_response_id`` are arguments of ``invoke`` (its docstring), ``reasoning`` and ``model``
# are read by ``plan_settings``; any other member makes the case ``skipped``.
METADATA_FIELDS: Final = {
    "truncation": "truncation",
    "context_management": "context_management",
    "extra_body": "extra_body",
    "max_output_tokens": "max_tokens",
}
INVOKE_ARGUMENTS: Final = ("prompt_cache_key", "previous_response_id")
PLAN_FIELDS: Final = (
    "model",
    "store",
    "include",
    "reasoning",
    "prompt_cache_key",
    "input",
    "previous_response_id",
)
USER_ROLES: Final = {"user", "system", "developer"}


class LangChain:
    """The pieces of langchain-openai the adapter calls, imported once."""

    def __init__(self) -> None:
        import httpx2  # noqa: PLC0415 - only inside the langchain-openai env
        from langchain_core import messages  # noqa: PLC0415
        from langchain_openai import ChatOpenAI  # noqa: PLC0415

        self.httpx2 = httpx2
        self.m = messages
        self.ChatOpenAI = ChatOpenAI


@dataclass
class Transport:
    """The fake transport: records each request body and answers with a completed response whose
    ``output`` is ``output`` (a minimal assistant message unless a turn sets it)."""

    bodies: list[dict[str, Any]] = field(default_factory=list)
    output: list[dict[str, Any]] = field(default_factory=list)
    response_id: str = "resp_conformance"

    def __call__(self, request: Any) -> Any:
        import httpx2  # noqa: PLC0415

        body = json.loads(request.content)
        self.bodies.append(body)
        output = self.output or [
            {
                "type": "message",
                "id": "msg_conformance",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "ok", "annotations": []}],
            }
        ]
        # ASCII JSON: a lone surrogate in an item travels as its escape, as a provider sends it
        return httpx2.Response(
            200,
            headers={"content-type": "application/json"},
            content=json.dumps(
                {
                    "id": self.response_id,
                    "object": "response",
                    "created_at": 0,
                    "status": "completed",
                    "model": body.get("model", "model"),
                    "output": output,
                    "parallel_tool_calls": True,
                    "tool_choice": "auto",
                    "tools": [],
                }
            ).encode("ascii"),
        )


def chat_model(lc: LangChain, target: str, transport: Transport, **fields: Any) -> Any:
    """``ChatOpenAI`` on the Responses API for ``target``, on the recording transport."""
    client = lc.httpx2.Client(transport=lc.httpx2.MockTransport(transport))
    base_url = BASE_URLS.get(target, f"https://{target}.conformance.invalid/v1")
    return lc.ChatOpenAI(
        api_key="conformance",
        base_url=base_url,
        use_responses_api=True,
        http_client=client,
        max_retries=0,
        **fields,
    )


def invoke(model: Any, messages: list[Any], **arguments: Any) -> Any:
    """``ChatOpenAI.invoke``; raises :class:`Refused` when langchain-openai raises."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return model.invoke(messages, **arguments)
        except Exception as error:  # what langchain-openai raised is its verdict
            raise Refused(f"{type(error).__name__}: {error}") from error


def recorded_request(transport: Transport) -> dict[str, Any]:
    if len(transport.bodies) != 1:
        raise RuntimeError(f"{len(transport.bodies)} requests recorded, one expected")
    return transport.bodies[0]


# ---------------------------------------------------------------------------------------------
# the items form → LangChain messages


def output_item(item: Mapping[str, Any]) -> dict[str, Any]:
    """An assistant item as the provider returns it: a message's text as ``output_text`` parts
    (a Responses output message never holds a string, and always has its ``type``: a message
    stored in the short form, with no ``type``, SPEC §1.2, gets it)."""
    if "type" not in item and "role" in item:
        item = {"type": "message", **item}
    if item.get("type") == "message" and item.get("role") != "assistant":
        raise skipped(
            f"langchain-openai keeps no {item.get('role')!r} message among an assistant's items"
        )
    if item.get("type") == "message" and isinstance(item.get("content"), str):
        text = {"type": "output_text", "text": item["content"], "annotations": []}
        return {**item, "content": [text]}
    if item.get("type") == "message" and isinstance(item.get("content"), list):
        parts = [
            {"annotations": [], **part} if isinstance(part, Mapping) else part
            for part in item["content"]
        ]
        return {**item, "content": parts}
    return dict(item)


def turn_message(lc: LangChain, items: Sequence[Mapping[str, Any]], response_id: str | None) -> Any:
    """The ``AIMessage`` langchain-openai stores for a response whose output is ``items``."""
    for item in items:
        if item.get("type") in ("compaction_trigger", "item_reference"):
            raise skipped(f"langchain-openai keeps no block for an assistant {describe(item)}")
    transport = Transport(
        output=[output_item(item) for item in items],
        response_id=response_id or "resp_conformance",
    )
    producer = chat_model(lc, DEFAULT_TARGET, transport, model=REPLAY_MODEL)
    try:
        message = invoke(producer, [lc.m.HumanMessage("turn")])
    except Refused as refused:
        # langchain-openai refuses this response when it receives it: it never stores such a message
        raise skipped(
            f"langchain-openai refuses a response whose output is {describe(items)}: {refused}"
        ) from refused
    if response_id is None:
        message.response_metadata.pop("id", None)
        message.id = None
    return message


@dataclass
class Mapper:
    """Maps one items-form history into LangChain messages (module docstring)."""

    lc: LangChain

    def messages(self, history: Sequence[Mapping[str, Any]]) -> list[Any]:
        out: list[Any] = []
        for message in history:
            items = list(message.get("items", []))
            if message.get("role") == "assistant":
                response_id = message.get("response_id")
                out.append(
                    turn_message(
                        self.lc, items, response_id if isinstance(response_id, str) else None
                    )
                )
            else:
                out.extend(self.request_item(item) for item in items)
        return out

    def request_item(self, item: Mapping[str, Any]) -> Any:
        m = self.lc.m
        kind = item.get("type", "message")
        if kind == "message":
            role, content = item.get("role"), item.get("content")
            if not isinstance(content, (str, list)):
                raise skipped(
                    f"a message whose content is {describe(content)}: a LangChain message's "
                    "content is a string or a list"
                )
            if role == "user":
                return m.HumanMessage(content=item["content"])
            if role == "system":
                return m.SystemMessage(content=item["content"])
            if role == "developer":
                return m.SystemMessage(
                    content=item["content"], additional_kwargs={"__openai_role__": "developer"}
                )
            raise skipped(f"langchain-openai has no message of role {role!r} from the user")
        if kind == "function_call_output":
            return m.ToolMessage(content=item["output"], tool_call_id=item["call_id"])
        if kind == "custom_tool_call_output":
            return m.ToolMessage(content=[dict(item)], tool_call_id=item["call_id"])
        if kind == "configuration_update":
            return m.HumanMessage(content=[dict(item)])
        if kind == "compaction":
            return turn_message(self.lc, [item], None)
        raise skipped(f"langchain-openai keeps no message for {describe(item)}")


def describe(item: Any) -> str:
    text = json.dumps(item, ensure_ascii=False)
    return text if len(text) <= 120 else text[:117] + "..."


# ---------------------------------------------------------------------------------------------
# operations


def history_of(data: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    history = data.get("history")
    if not isinstance(history, Mapping) or history.get("form") != "items":
        raise ValueError("the history is not in the items form (this adapter reads only that form)")
    return list(history["messages"])


def op_replay(lc: LangChain, data: Mapping[str, Any]) -> dict[str, Any]:
    if (data.get("options") or {}).get("conflict_policy") == "reject":
        raise skipped(
            "langchain-openai has no strict conflict policy (SPEC D3 MAY): it detects no conflict"
        )
    target = data["target"]["provider"]
    messages = Mapper(lc).messages(history_of(data))
    transport = Transport()
    model = chat_model(
        lc,
        target,
        transport,
        model=REPLAY_MODELS.get(target, REPLAY_MODEL),
        store=False,
        include=list(INCLUDE),
    )
    invoke(model, messages)
    return {"input": recorded_request(transport)["input"], "diagnostics": []}


def op_dedupe(lc: LangChain, data: Mapping[str, Any]) -> dict[str, Any]:
    """Dedupe through the replay path (``_dedupe_by_replay.py``)."""
    if (data.get("options") or {}).get("conflict_policy") == "reject":
        raise skipped(
            "langchain-openai has no strict conflict policy (SPEC D3 MAY): it detects no conflict"
        )
    return dedupe_by_replay(data["entries"], lambda replay: op_replay(lc, replay)["input"])


@dataclass(frozen=True)
class PlanSettings:
    """A plan as langchain-openai takes it: ``ChatOpenAI`` fields and ``invoke`` arguments."""

    fields: dict[str, Any]
    arguments: dict[str, Any]


def plan_settings(data: Mapping[str, Any]) -> PlanSettings:
    """The model's fields and the invoke's arguments of a plan (module docstring)."""
    fields: dict[str, Any] = {"model": data.get("model"), "store": False}
    if data.get("reasoning_model", True) is not False:
        # a P5 user asks for the entry only of a model that returns reasoning (SPEC P5)
        fields["include"] = list(INCLUDE)
    arguments: dict[str, Any] = {"prompt_cache_key": data.get("instance_key")}
    reasoning: dict[str, Any] = {}
    desired = data.get("desired_effort")
    if desired is not None:
        reasoning["effort"] = desired
    overrides = data.get("metadata")
    if overrides is not None and not isinstance(overrides, Mapping):
        raise skipped("metadata that is not an object: langchain-openai's settings are fields")
    for name, value in (overrides or {}).items():
        if value is None:
            continue
        if name == "model":
            fields["model"] = value
        elif name == "reasoning":
            if not isinstance(value, Mapping):
                raise skipped(
                    f"reasoning {describe(value)}: ChatOpenAI.reasoning is a dict (no other value)"
                )
            reasoning.update({k: v for k, v in value.items() if v is not None})
        elif name == "text" and isinstance(value, Mapping) and set(value) == {"verbosity"}:
            fields["verbosity"] = value["verbosity"]
        elif name in METADATA_FIELDS:
            fields[METADATA_FIELDS[name]] = value
        elif name in INVOKE_ARGUMENTS:
            arguments[name] = value
        else:
            raise skipped(f"metadata.{name}: langchain-openai has no such setting")
    if set(reasoning) == {"effort"}:
        fields["reasoning_effort"] = reasoning["effort"]
    elif reasoning:
        fields["reasoning"] = reasoning
    return PlanSettings(fields=fields, arguments=arguments)


def op_plan(lc: LangChain, data: Mapping[str, Any]) -> dict[str, Any]:
    transport_name = data.get("transport", "sse")
    if transport_name == "websocket":
        raise skipped("ChatOpenAI has no WebSocket transport for the Responses API")
    if data.get("endpoint", "responses") != "responses":
        raise skipped("ChatOpenAI does not call the standalone compact endpoint")
    target = data.get("target_provider", DEFAULT_TARGET)
    settings = plan_settings(data)
    fields = dict(settings.fields)
    if transport_name == "websocket_continuation":
        # langchain-openai's own continuation: the messages after the last AIMessage with a
        # response id, and that id as previous_response_id (base.py::_get_last_messages)
        fields["use_previous_response_id"] = True
    messages = Mapper(lc).messages(history_of(data))
    transport = Transport()
    try:
        model = chat_model(lc, target, transport, **fields)
    except Exception as error:  # the model refuses its own settings (a pydantic error)
        raise Refused(f"{type(error).__name__}: {error}") from error
    invoke(model, messages, **settings.arguments)
    body = recorded_request(transport)
    return {
        "request": {name: body[name] for name in PLAN_FIELDS if name in body},
        "diagnostics": [],
    }


def op_defaults(lc: LangChain, data: Mapping[str, Any]) -> dict[str, Any]:
    transport = Transport()
    model = chat_model(lc, data["target_provider"], transport, model=data["model"])
    invoke(model, [lc.m.HumanMessage("hello")])
    body = recorded_request(transport)
    return defaults_output(body)


ADAPTER: Final = Adapter(
    name="langchain-openai",
    distribution="langchain-openai",
    load=LangChain,
    operations={
        "replay": op_replay,
        "dedupe": op_dedupe,
        "plan": op_plan,
        "defaults": op_defaults,
    },
    announce={
        "history_formats": ["items"],
        # an AIMessage records no issuer of its reasoning blocks
        "provenance": "none",
    },
    refusal_limit=2000,
)


if __name__ == "__main__":
    sys.exit(main(ADAPTER))
