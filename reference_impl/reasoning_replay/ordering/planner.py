"""The plan of a request (SPEC §9): where reasoning-effort configuration updates go, and the key.

A pure function of the history and the request's settings, linear in the history's length.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final

from reasoning_replay.diagnostics import Code, Diagnostic
from reasoning_replay.record.history import HistoryMessage
from reasoning_replay.record.item_types import is_message
from reasoning_replay.record.provider_input import ReplayTarget, message_inputs, read_replay_blocks
from reasoning_replay.record.providers import REGISTRY_ONLY, ProviderNames

from .cache_state import CACHE_STATE_CHANNEL, CacheStateRecord, effort_allowed, read_cache_state
from .overrides import check_overrides, desired_effort, is_update_capable, requested_model

DEFAULT_UPDATE_CAPABLE: Final = frozenset(("gpt-6-astra",))  # SPEC §9.1
STAGED_MEDIA_CHANNEL: Final = "fast-agent-tool-media-message"
TOOL_OUTPUT_TYPES: Final = frozenset(("function_call_output", "custom_tool_call_output"))
COMPACTION_TYPES: Final = frozenset(("compaction", "compaction_trigger"))
GOVERNED_PROVIDERS: Final = frozenset(("openai", "codex"))  # SPEC F12: issuers (P4)
REPLAY_INCLUDE: Final = "reasoning.encrypted_content"  # SPEC P5


class PlanTransport(StrEnum):
    SSE = "sse"
    WEBSOCKET = "websocket"
    WEBSOCKET_CONTINUATION = "websocket_continuation"  # SPEC F9


class Endpoint(StrEnum):
    RESPONSES = "responses"
    COMPACT = "compact"  # the standalone /responses/compact


@dataclass(frozen=True, slots=True)
class PlanSettings:
    """Everything but the history that a plan depends on (SPEC F11)."""

    model: object
    desired_effort: object  # a string, or None; anything else is rejected (SPEC F8)
    instance_key: object
    metadata: Mapping[str, Any] = field(default_factory=dict)
    transport: PlanTransport = PlanTransport.SSE
    endpoint: Endpoint = Endpoint.RESPONSES
    target_provider: str = "openai"
    update_capable: Collection[str] = DEFAULT_UPDATE_CAPABLE
    provider_names: ProviderNames = REGISTRY_ONLY  # SPEC P4: the caller's names extend §18.2
    reasoning_model: bool = True  # SPEC P5: False when the caller declares no reasoning returned


@dataclass(frozen=True, slots=True)
class Plan:
    """The request fields, the record to store with the response, and what planning found."""

    request: dict[str, Any]
    record: CacheStateRecord | None  # SPEC F12: None for a target §9 does not govern
    diagnostics: tuple[Diagnostic, ...]


def configuration_update(effort: str) -> dict[str, Any]:
    """SPEC F2: exactly this item, nothing more."""
    return {"type": "configuration_update", "reasoning": {"effort": effort}}


def is_genuine_user_turn(message: HistoryMessage) -> bool:
    """SPEC §9.1: a user message with non-empty content that is not a tool-result continuation."""
    if message.role != "user" or _stages_media(message):
        return False
    if any(item.get("type") in TOOL_OUTPUT_TYPES for item in message.items):
        return False
    return any(_is_user_message_item(item) and _has_content(item) for item in message.items)


def _stages_media(message: HistoryMessage) -> bool:
    """SPEC §9.1: a staged tool-media channel counts only when it holds at least one block."""
    channel = message.channels.get(STAGED_MEDIA_CHANNEL)
    return isinstance(channel, list | tuple) and len(channel) > 0


def _has_content(item: Mapping[str, Any]) -> bool:
    """SPEC §9.1: a non-empty string, or a non-empty array."""
    content = item.get("content")
    return isinstance(content, (str, list)) and len(content) > 0


def _is_user_message_item(item: Mapping[str, Any]) -> bool:
    return is_message(item, "user")  # SPEC §1.2: the short form without `type` counts too


def _has_compaction(message: HistoryMessage) -> bool:
    return any(item.get("type") in COMPACTION_TYPES for item in message.items)


def _records(
    messages: Sequence[HistoryMessage], model: str, update_capable: bool
) -> tuple[dict[int, CacheStateRecord], list[Diagnostic]]:
    """The records valid for ``model``, by message index, and a diagnostic per malformed one."""
    valid: dict[int, CacheStateRecord] = {}
    # A history repeats a few records many times: keeping one object per distinct record leaves
    # the collector a count of objects that does not grow with the history.
    distinct: dict[CacheStateRecord, CacheStateRecord] = {}
    diagnostics = []
    for index, message in enumerate(messages):
        if message.role != "assistant":
            continue  # SPEC F6: only assistant messages carry records; others are not read
        record = read_cache_state(message.channels.get(CACHE_STATE_CHANNEL, ()))
        if record is None:
            continue
        if isinstance(record, Code):  # SPEC F6: absent, but said
            diagnostics.append(Diagnostic(record, index, 0))
        elif record.model == model:  # SPEC F5: other models' records are ignored
            if effort_allowed(record.effort, update_capable):
                valid[index] = distinct.setdefault(record, record)
            else:
                diagnostics.append(Diagnostic(Code.CACHE_STATE_INVALID, index, 0))
    return valid, diagnostics


def _turn_efforts(
    messages: Sequence[HistoryMessage], records: Mapping[int, CacheStateRecord], desired: str
) -> dict[int, str | None]:
    """SPEC F3/F5: each genuine user turn's effort; ``None`` keeps the effective effort.

    One backward pass: what decides a turn is the first assistant message or genuine user turn
    after it, or the end of the history (the new turn, which gets the desired effort).
    """
    efforts: dict[int, str | None] = {}
    decider: str | None = desired
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        genuine = is_genuine_user_turn(message)
        if genuine:
            efforts[index] = decider
        if message.role == "assistant":
            record = records.get(index)
            decider = record.effort if record is not None else None
        elif genuine:
            decider = None  # SPEC F5: a later genuine turn first: keep the effective effort
    return efforts


@dataclass(slots=True)
class Input:
    """A request's ``input`` as one list, with where each message's part starts.

    One list rather than a list per message: a plan then leaves the collector a number of
    objects that grows with the history's tracked items only, not with its messages, so a long
    history's plan does not set off full collections of the whole heap.
    """

    items: list[dict[str, Any]] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)

    def append(self, message_items: Iterable[dict[str, Any]]) -> None:
        self.starts.append(len(self.items))
        self.items.extend(message_items)

    def after(self, index: int) -> list[dict[str, Any]]:
        """The items of the messages after message ``index``."""
        return self.items[self.starts[index + 1] :] if index + 1 < len(self.starts) else []


def _insert_updates(
    by_message: Iterable[Sequence[dict[str, Any]]],
    messages: Sequence[HistoryMessage],
    turn_efforts: Mapping[int, str | None],
    baseline: str,
) -> tuple[Input, str]:
    """SPEC F2, F4, F7 as the state machine of §9.3; returns the input and the record's effort."""
    effective: str | None = baseline
    remembered = baseline
    planned = Input()
    for index, (message, items) in enumerate(zip(messages, by_message, strict=True)):
        out = items  # copied only when an update goes in
        if index in turn_efforts:
            effort = turn_efforts[index]
            if effort is None:  # no relabelling: the turn keeps what is in force
                effort = effective if effective is not None else remembered
            if effort != effective:  # an unknown effective effort always differs (SPEC F7)
                at = next(i for i, item in enumerate(out) if _is_user_message_item(item))
                out = [*out[:at], configuration_update(effort), *out[at:]]
                effective = effort
        if _has_compaction(message):
            if effective is not None:
                remembered = effective
            effective = None
        planned.append(out)
    return planned, effective if effective is not None else remembered


def _state_fields(compact: bool, reasoning_model: bool) -> dict[str, Any]:
    """SPEC P5: the responses endpoint gets ``store: false`` and asks for the ciphertext a later
    request replays, unless the model returns no reasoning (some refuse the entry); the compact
    endpoint takes neither parameter."""
    if compact:
        return {}
    if not reasoning_model:
        return {"store": False}
    return {"store": False, "include": [REPLAY_INCLUDE]}


def _instance_key(settings: PlanSettings) -> str:
    """SPEC K1: the instance key, where F8 has checked it (it can be the key sent)."""
    assert isinstance(settings.instance_key, str)
    return settings.instance_key


def _without_updates(items: Sequence[dict[str, Any]]) -> Sequence[dict[str, Any]]:
    """``items`` without configuration updates; the same object when it has none (no copy)."""
    for item in items:
        if item.get("type") == "configuration_update":
            return [item for item in items if item.get("type") != "configuration_update"]
    return items


def plan_request(messages: Sequence[HistoryMessage], settings: PlanSettings) -> Plan | Code:
    """SPEC F1–F12, K1–K4, P5: the plan of the next request, or the F8 code that rejects it."""
    metadata = settings.metadata
    target = ReplayTarget(settings.target_provider, provider_names=settings.provider_names)
    # SPEC F12: decided on the target's issuer (P4); for a target §9 does not govern, no model
    # is update-capable and no record is read.
    governed = target.issuer in GOVERNED_PROVIDERS
    registry = settings.update_capable if governed else frozenset()
    rejected = check_overrides(
        settings.model,
        settings.desired_effort,
        settings.instance_key,
        metadata,
        registry,
        governed=governed,
    )
    if rejected is not None:
        return rejected
    model = requested_model(settings.model, metadata)
    assert isinstance(model, str)
    capable = is_update_capable(model, registry)
    desired = desired_effort(settings.desired_effort, metadata)
    records, record_diagnostics = _records(messages, model, capable) if governed else ({}, [])

    explicit_key = metadata.get("prompt_cache_key") if governed else None
    latest = records[max(records)].key if records else None
    # SPEC K2; F8 checked the instance key wherever it can be the key sent.
    key = explicit_key if isinstance(explicit_key, str) else latest or _instance_key(settings)

    replay = read_replay_blocks(messages, target)
    # SPEC F2: stored updates are never sent; every update is derived from the records.
    by_message = (_without_updates(items) for items in message_inputs(messages, target, replay))
    planned: Input
    reasoning: dict[str, Any] | None
    metadata_reasoning = metadata.get("reasoning")
    others = {name: value for name, value in (metadata_reasoning or {}).items() if name != "effort"}
    if capable:
        assert isinstance(desired, str)
        baseline = records[min(records)].effort if records else desired  # SPEC F1
        assert baseline is not None
        turn_efforts = _turn_efforts(messages, records, desired)
        planned, final_effort = _insert_updates(by_message, messages, turn_efforts, baseline)
        reasoning = {"effort": baseline, **others}
        record = CacheStateRecord(model, key, final_effort)
    else:  # SPEC F10: the request-level effort changes normally, and no update is ever sent
        # The effort as given (no effort is checked for such a model); a reasoning object with
        # no member is omitted (SPEC F11, SHOULD).
        reasoning = {"effort": desired, **others} if desired is not None else others or None
        record = CacheStateRecord(model, key, None)
        planned = Input()
        for items in by_message:
            planned.append(items)

    compact = settings.endpoint is Endpoint.COMPACT
    request: dict[str, Any] = {"model": model, **_state_fields(compact, settings.reasoning_model)}
    if reasoning is not None:
        request["reasoning"] = reasoning
    request["prompt_cache_key"] = key
    # SPEC F8: the standalone compact endpoint always receives a full replay.
    transport = PlanTransport.SSE if compact else settings.transport
    request.update(_input_for_transport(messages, planned, transport))
    if compact and any(item.get("type") == "configuration_update" for item in request["input"]):
        return Code.PLAN_COMPACT_WITH_UPDATES
    # Stable: within a message, P2's diagnostics (already in block order) come first (F11).
    diagnostics = sorted((*replay.diagnostics, *record_diagnostics), key=lambda d: d.message_index)
    return Plan(request, record if governed else None, tuple(diagnostics))


def _input_for_transport(
    messages: Sequence[HistoryMessage],
    planned: Input,
    transport: PlanTransport,
) -> dict[str, Any]:
    """SPEC F9: the whole input, or for a WebSocket continuation only what follows the last
    assistant message, chained to its response by ``previous_response_id`` when that message
    carries a response id (a non-empty string); without one, the whole input."""
    if transport is PlanTransport.WEBSOCKET_CONTINUATION:
        last_assistant = max(
            (i for i, message in enumerate(messages) if message.role == "assistant"), default=None
        )
        response_id = None if last_assistant is None else messages[last_assistant].response_id
        if last_assistant is not None and response_id:  # "" carries none (SPEC F9)
            return {"input": planned.after(last_assistant), "previous_response_id": response_id}
    return {"input": planned.items}
