"""fast-agent (PyPI ``fast-agent-mcp``) behind the conformance adapter protocol.

    .fast-agent-env/bin/python conformance/implementations/fast-agent/adapter.py [--oneshot]

Runs in the environment made by ``tools/install_fast_agent.py`` and calls the published
package's own functions; it never imports ``reasoning_replay`` (it is an independent
implementation, measured by the suite). What each operation calls:

- ``read``: the channel reader of fast-agent's OpenAI Responses route,
  ``ResponsesContentMixin._extract_encrypted_reasoning_items`` (``json.loads``, then fast-agent's
  ``parse_reasoning_replay``) on a channel holding the one block.
- ``capture``: the writer, ``ResponsesOutputMixin._extract_encrypted_reasoning`` (which calls
  ``capture_reasoning_replay`` and ``json.dumps(..., ensure_ascii=False, separators=(",", ":"))``)
  on a response whose ``output`` is the item, as the WebSocket transport hands it raw JSON
  (``responses_websocket._to_attr_object``). Sources: the terminal events of
  ``responses_events.RESPONSES_TERMINAL_EVENT_TYPES`` and ``response.output_item.done``; fast-agent
  captures from no other event.
- ``replay``: ``_convert_extended_messages_to_provider`` of ``ResponsesLLM`` (``XAIResponsesLLM``
  for target ``xai``): each message through ``_convert_message_to_items``, then the route's
  ``_dedupe_input_items``. Messages are loaded with fast-agent's history loader
  (``prompt_serialization.messages_from_dict``).
- ``dedupe``: ``ResponsesLLM._dedupe_input_items`` (the OpenAI Responses route).
- ``redact``: ``JSONSerializer().serialize``, the serializer fast-agent's logger applies to
  structured log data.
- ``plan`` (target ``openai`` or fast-agent's route name ``responses``):
  ``responses_cache.prepare_cached_request`` with
  ``ResponsesLLM._convert_message_to_items``, then ``_dedupe_input_items``, as
  ``ResponsesLLM._apply_prompt_provider_specific`` calls them.

How a protocol message becomes a fast-agent message:

- ``role``; ``tool`` becomes ``user`` (fast-agent keeps tool results in user messages);
- ``channels`` as given;
- the own ``message`` items of role ``assistant`` of an assistant message go to the channel
  fast-agent keeps them in (``openai-assistant-message-items``, one JSON text block each);
- the own ``message`` items of role ``user`` of a user message become its ``content`` (one text
  block per string, or per part of an array);
- ``function_call_output`` and ``custom_tool_call_output`` items become its ``tool_results``;
- ``configuration_update`` items are left out (fast-agent's history never holds one: it derives
  every update from the cache-state records);
- every other own item (tool calls, compaction items, ...) is appended verbatim after what
  fast-agent derives from the message, since the protocol gives it in provider form already.

A message fast-agent's loader refuses is dropped, own items and all, as the loader does.

Where fast-agent has no diagnostic code, the reply is a rejection with a code that is not in the
SPEC.md registry, saying so: ``not_resumable`` (the reader gave no item), ``not_captured`` (the
writer gave no envelope), ``raised`` (fast-agent's function raised). ``ModelConfigError``
messages of the planner map to the registry code of the same check (``PLAN_ERROR_CODES``; any
other message gives ``model_config_error``). Cases
asking for what fast-agent cannot do or be configured to do are answered ``skipped``.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

sys.path.append(str(Path(__file__).resolve().parents[1]))  # the modules the adapters share
from _protocol_loop import RAISED, Adapter, main, reject, skipped

NOT_RESUMABLE: Final = "not_resumable"
NOT_CAPTURED: Final = "not_captured"
MODEL_CONFIG_ERROR: Final = "model_config_error"
CAPTURED_ITEM_EVENT: Final = "response.output_item.done"
REQUEST_FIELDS: Final = frozenset(
    {"model", "reasoning", "prompt_cache_key", "input", "previous_response_id"}
)
TOOL_OUTPUT_TYPES: Final = frozenset({"function_call_output", "custom_tool_call_output"})

# fast-agent's planner errors (``ModelConfigError.message``) and the registry code of the SPEC F8
# check each one makes.
PLAN_ERROR_CODES: Final = {
    "Responses cache state requires a model": "plan_model_invalid",
    "Responses prompt_cache_key must be a string": "plan_cache_key_invalid",
    "Responses extra_body must be an object": "plan_extra_body_invalid",
    "Set model directly in metadata, not extra_body": "plan_model_boundary",
    "Set reasoning, prompt_cache_key and model directly in metadata, not extra_body": (
        "plan_extra_body_override"
    ),
    "Managed Astra effort updates require fast-agent message history": "plan_raw_input_override",
    "Astra effort updates cannot use automatic truncation or compaction": (
        "plan_auto_context_management"
    ),
    "Astra effort updates require standard single-agent mode": "plan_mode_unsupported",
    "Astra reasoning must be an object": "plan_effort_invalid",
    "Astra reasoning effort must be low, medium, high, xhigh or max": "plan_effort_invalid",
}


class FastAgent:
    """The published package's functions, imported once."""

    def __init__(self) -> None:
        # LOG_SECRETS=TRUE would switch the log serializer's redaction off: measure the default.
        os.environ.pop("LOG_SECRETS", None)
        from fast_agent.constants import (  # noqa: PLC0415 - only inside the fast-agent env
            OPENAI_ASSISTANT_MESSAGE_ITEMS,
            OPENAI_REASONING_ENCRYPTED,
        )
        from fast_agent.core.exceptions import ModelConfigError  # noqa: PLC0415
        from fast_agent.core.logging.json_serializer import JSONSerializer  # noqa: PLC0415
        from fast_agent.llm.provider.openai.responses import (  # noqa: PLC0415
            RESPONSE_INCLUDE_REASONING,
            ResponsesLLM,
        )
        from fast_agent.llm.provider.openai.responses_cache import (  # noqa: PLC0415
            prepare_cached_request,
        )
        from fast_agent.llm.provider.openai.responses_events import (  # noqa: PLC0415
            is_responses_terminal_event,
        )
        from fast_agent.llm.provider.openai.responses_websocket import (  # noqa: PLC0415
            _to_attr_object,
        )
        from fast_agent.llm.provider.openai.xai_responses import (  # noqa: PLC0415
            XAIResponsesLLM,
        )
        from fast_agent.llm.request_params import RequestParams  # noqa: PLC0415
        from fast_agent.mcp.prompt_serialization import messages_from_dict  # noqa: PLC0415
        from mcp_types import TextContent  # noqa: PLC0415
        from pydantic import ValidationError  # noqa: PLC0415

        self.replay_channel: str = OPENAI_REASONING_ENCRYPTED
        self.assistant_items_channel: str = OPENAI_ASSISTANT_MESSAGE_ITEMS
        self.model_config_error: type[Exception] = ModelConfigError
        self.validation_error: type[Exception] = ValidationError
        self.serializer_class = JSONSerializer
        self.prepare_cached_request = prepare_cached_request
        self.include_reasoning: str = RESPONSE_INCLUDE_REASONING
        self.is_terminal_event: Callable[[object], bool] = is_responses_terminal_event
        self.attr_object: Callable[[Any], Any] = _to_attr_object
        self.request_params = RequestParams
        self.messages_from_dict = messages_from_dict
        self.text_content = TextContent
        # One LLM object per route; own items travel beside the messages (see the module doc).
        self.own_items: dict[int, list[dict[str, Any]]] = {}

        own_items = self.own_items

        def converting(base: type[Any]) -> type[Any]:
            class Route(base):  # type: ignore[misc,valid-type]
                def _convert_message_to_items(self, msg: Any) -> list[dict[str, Any]]:
                    bare = msg.model_copy(
                        update={"content": [], "tool_calls": None, "tool_results": None}
                    )
                    return [*super()._convert_message_to_items(bare), *own_items.get(id(msg), [])]

            return Route

        self.openai = converting(ResponsesLLM)(model="gpt-6-astra")
        self.xai = converting(XAIResponsesLLM)(model="grok-4.5")


def decode_text(data: Mapping[str, Any], name: str) -> str:
    """The member ``name`` as text; ``name_base64`` is decoded (PROTOCOL.md, byte members)."""
    if f"{name}_base64" in data:
        try:
            raw = base64.b64decode(data[f"{name}_base64"], validate=True)
        except (binascii.Error, TypeError) as error:
            raise ValueError(f"input.{name}_base64 is not base64: {error}") from None
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise reject(
                NOT_RESUMABLE,
                f"the bytes are not UTF-8 ({error}): fast-agent keeps block texts as str and "
                "its history loader cannot read such a file",
            ) from None
    value = data.get(name)
    if not isinstance(value, str):
        raise ValueError(f"input.{name} is missing or not a string")
    return value


# --- operations -----------------------------------------------------------------------------


def op_read(fa: FastAgent, data: Mapping[str, Any]) -> dict[str, Any]:
    text = decode_text(data, "text")
    block = fa.text_content(type="text", text=text)
    try:
        items = fa.openai._extract_encrypted_reasoning_items({fa.replay_channel: [block]})
    except Exception as error:  # fast-agent raised: no verdict
        raise reject(RAISED, f"{type(error).__name__}: {error}") from None
    if not items:
        raise reject(NOT_RESUMABLE, "fast-agent skips the block (no item, no code)")
    return {"item": items[0]}


def op_capture(fa: FastAgent, data: Mapping[str, Any]) -> dict[str, Any]:
    if "output_item" not in data or not isinstance(data.get("source"), str):
        raise ValueError("capture needs output_item and a string source")
    source = data["source"]
    if source != CAPTURED_ITEM_EVENT and not fa.is_terminal_event(source):
        raise reject(NOT_CAPTURED, f"fast-agent does not capture reasoning from {source!r}")
    response = fa.attr_object({"output": [data["output_item"]]})
    try:
        blocks = fa.openai._extract_encrypted_reasoning(response)
    except Exception as error:  # fast-agent raised: no verdict
        raise reject(RAISED, f"{type(error).__name__}: {error}") from None
    if not blocks:
        raise reject(NOT_CAPTURED, "capture_reasoning_replay gives no envelope (no code)")
    return {"envelope_text": blocks[0].text}


def _text_blocks(content: Any) -> list[dict[str, Any]]:
    """A user message item's content as fast-agent's content blocks: a string is one text block
    (``""`` too: fast-agent's own empty prompt is one empty text block), an array one block per
    part."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [
            {
                "type": "text",
                "text": part["text"]
                if isinstance(part, dict) and isinstance(part.get("text"), str)
                else json.dumps(part),
            }
            for part in content
        ]
    raise skipped(
        "a user message item whose content is neither a string nor an array has no "
        "fast-agent representation (content blocks)"
    )


def load_history(fa: FastAgent, history: Any) -> list[Any]:
    """The protocol's messages as fast-agent's loader reads them (see the module doc)."""
    if not isinstance(history, Mapping) or not isinstance(history.get("messages"), list):
        raise ValueError("input.history.messages must be an array")
    fa.own_items.clear()
    loaded: list[Any] = []
    for message in history["messages"]:
        if not isinstance(message, Mapping):
            raise ValueError("a history message is not an object")
        # fast-agent keeps tool results in user messages (``tool_results``): a "tool" message
        # is a user message there. Other roles do not exist in its history (Role: user|assistant).
        role = "user" if message.get("role") == "tool" else message.get("role")
        items = message.get("items") or []
        saved: dict[str, Any] = {"role": role, "content": []}
        if "channels" in message:
            saved["channels"] = message["channels"]
        assistant_items: list[dict[str, Any]] = []
        tool_results: dict[str, Any] = {}
        passed: list[dict[str, Any]] = []
        for index, item in enumerate(items):
            kind = item.get("type") if isinstance(item, dict) else None
            if kind == "message" and role == "assistant" and item.get("role") == "assistant":
                assistant_items.append({"type": "text", "text": json.dumps(item)})
                continue
            if kind == "configuration_update":
                continue  # fast-agent never stores one: it derives updates from the records
            if kind == "message" and role == "user" and item.get("role") == "user":
                saved["content"].extend(_text_blocks(item.get("content")))
            elif kind in TOOL_OUTPUT_TYPES:
                call_id = item.get("call_id")
                key = call_id if isinstance(call_id, str) and call_id else f"tool_{index}"
                tool_results[key] = {"content": [], "isError": False}
            passed.append(item)
        if assistant_items:
            channels = saved.get("channels")
            saved["channels"] = {
                **(channels if isinstance(channels, Mapping) else {}),
                fa.assistant_items_channel: assistant_items,
            }
        if tool_results:
            saved["tool_results"] = tool_results
        restored = fa.messages_from_dict({"messages": [saved]})
        if len(restored) == 1:
            fa.own_items[id(restored[0])] = passed
            loaded.append(restored[0])
    return loaded


def t1_counters(items: Sequence[Any], dropped: int) -> dict[str, int]:
    """SPEC T1 over the input fast-agent built. fast-agent emits no telemetry: the adapter
    measures its result; every item fast-agent's dedupe dropped counts as a dropped duplicate."""

    def utf8(value: Any) -> int:
        return len(value.encode("utf-8", "surrogatepass")) if isinstance(value, str) else 0

    def parts(value: Any) -> list[Any]:
        return value if isinstance(value, list) else []

    reasoning = [i for i in items if isinstance(i, dict) and i.get("type") == "reasoning"]
    summary = [p for i in reasoning for p in parts(i.get("summary"))]
    content = [p for i in reasoning for p in parts(i.get("content"))]
    return {
        "reasoning_replay_item_count": len(reasoning),
        "reasoning_replay_encrypted_bytes": sum(
            utf8(i.get("encrypted_content")) for i in reasoning
        ),
        "reasoning_replay_summary_parts": len(summary),
        "reasoning_replay_summary_bytes": sum(
            utf8(p.get("text")) for p in summary if isinstance(p, dict)
        ),
        "reasoning_replay_content_parts": len(content),
        "reasoning_replay_content_bytes": sum(
            utf8(p.get("text")) for p in content if isinstance(p, dict)
        ),
        "replay_deduplicated_exact_count": dropped,
        "replay_id_ciphertext_conflict_count": 0,
        "canonical_schema_version": 1,
    }


def _strict_policy_requested(data: Mapping[str, Any]) -> bool:
    options = data.get("options")
    return isinstance(options, Mapping) and options.get("conflict_policy") == "reject"


def op_replay(fa: FastAgent, data: Mapping[str, Any]) -> dict[str, Any]:
    if _strict_policy_requested(data):
        raise skipped("fast-agent offers no strict conflict policy (SPEC D3: MAY)")
    target = data.get("target")
    if not isinstance(target, Mapping) or not isinstance(target.get("provider"), str):
        raise ValueError("input.target.provider must be a string")
    llm = fa.xai if target["provider"] == "xai" else fa.openai
    messages = load_history(fa, data.get("history"))
    try:
        undeduped = [item for m in messages for item in llm._convert_message_to_items(m)]
        built = llm._dedupe_input_items(undeduped)
    except Exception as error:  # fast-agent raised: the request is not sent
        raise reject(RAISED, f"{type(error).__name__}: {error}") from None
    return {
        "input": built,
        "diagnostics": [],  # fast-agent skips blocks silently
        "counters": t1_counters(built, len(undeduped) - len(built)),
    }


def op_dedupe(fa: FastAgent, data: Mapping[str, Any]) -> dict[str, Any]:
    if _strict_policy_requested(data):
        raise skipped("fast-agent offers no strict conflict policy (SPEC D3: MAY)")
    entries = data.get("entries")
    if not isinstance(entries, list):
        raise ValueError("input.entries must be an array")
    items = [dict(entry["item"]) for entry in entries]
    kept = {id(item) for item in fa.openai._dedupe_input_items(items)}
    decisions = ["keep" if id(item) in kept else "drop_duplicate" for item in items]
    return {
        "decisions": decisions,
        "counters": {
            "replay_deduplicated_exact_count": decisions.count("drop_duplicate"),
            "replay_id_ciphertext_conflict_count": 0,
        },
    }


def op_redact(fa: FastAgent, data: Mapping[str, Any]) -> dict[str, Any]:
    if "payload" not in data:
        raise ValueError("input.payload is missing")
    return {"payload": fa.serializer_class().serialize(data["payload"])}


# The target names the cache planner runs for: the issuer name ``openai`` and the name of
# fast-agent's OpenAI Responses route as ``session.json`` records it (``Provider.RESPONSES``).
OPENAI_ROUTE_NAMES = ("openai", "responses")


def op_plan(fa: FastAgent, data: Mapping[str, Any]) -> dict[str, Any]:
    transport = data.get("transport", "sse")
    if transport == "websocket_continuation":
        raise skipped(
            "fast-agent decides a continuation in StatefulContinuationResponsesWsPlanner from "
            "the live connection's previous request, which a saved history does not give"
        )
    if data.get("endpoint", "responses") != "responses":
        raise skipped("fast-agent's OpenAI route never calls the standalone compact endpoint")
    if data.get("target_provider", "openai") not in OPENAI_ROUTE_NAMES:
        raise skipped(
            "fast-agent runs the cache planner (responses_cache) on its OpenAI routes only"
        )
    if data.get("provider_names") is not None:
        raise skipped(
            "fast-agent takes no mapping of provider names: its routes are its Provider enum"
        )
    model, desired, key = data.get("model"), data.get("desired_effort"), data.get("instance_key")
    meta = data.get("metadata")
    messages = load_history(fa, data.get("history"))
    llm = fa.openai
    try:
        params = fa.request_params(model=model, metadata=meta)
    except fa.validation_error:
        raise skipped(
            "fast-agent cannot be configured with this model: RequestParams.model is a string"
        ) from None
    try:
        items, state, planned = fa.prepare_cached_request(
            messages, params, key=key, default_effort=desired, convert=llm._convert_message_to_items
        )
        items = llm._dedupe_input_items(items)
    except fa.model_config_error as error:
        message = getattr(error, "message", str(error))
        raise reject(PLAN_ERROR_CODES.get(message, MODEL_CONFIG_ERROR), message) from None
    except Exception as error:  # e.g. pydantic's ValidationError from read_cache_state
        raise reject(RAISED, f"{type(error).__name__}: {error}") from None
    # The request fields as ResponsesLLM._build_response_args merges them: the configured model
    # and effort (``_apply_response_reasoning``: summary "auto" and the effort), then every
    # metadata member on top (``prepare_provider_arguments``: ``arguments.update(metadata)``).
    # ``_build_response_args`` sends ``store: False`` and ``include: [RESPONSE_INCLUDE_REASONING]``
    # on every request (SPEC P5).
    request: dict[str, Any] = {
        "model": model,
        "store": False,
        "include": [fa.include_reasoning],
        "prompt_cache_key": key,
        "input": items,
    }
    if desired:
        request["reasoning"] = {"summary": "auto", "effort": desired}
    request.update((k, v) for k, v in (planned.metadata or {}).items() if k in REQUEST_FIELDS)
    return {
        "request": request,
        "record": state.model_dump(mode="json"),
        "diagnostics": [],  # fast-agent reports nothing
    }


ADAPTER: Final = Adapter(
    name="fast-agent",
    distribution="fast-agent-mcp",
    load=FastAgent,
    operations={
        "read": op_read,
        "capture": op_capture,
        "replay": op_replay,
        "dedupe": op_dedupe,
        "redact": op_redact,
        "plan": op_plan,
    },
)


if __name__ == "__main__":
    sys.exit(main(ADAPTER))
