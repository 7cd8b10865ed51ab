"""The conformance operations (SPEC §13) over the reference: JSON input in, JSON output or a code.

This is the one place that maps the protocol's JSON shapes (conformance/PROTOCOL.md) to the
reference's typed API; both the in-process runner and the adapter program use it.
"""

from __future__ import annotations

import base64
import binascii
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from reasoning_replay.history.export import ExportMode, export_history
from reasoning_replay.history.scan import scan_text
from reasoning_replay.history.validation import validate_history
from reasoning_replay.ordering.planner import (
    DEFAULT_UPDATE_CAPABLE,
    REPLAY_INCLUDE,
    Endpoint,
    PlanSettings,
    PlanTransport,
    plan_request,
)
from reasoning_replay.record.capture import canonicalize_completed_reasoning_output_item
from reasoning_replay.record.dedupe import DedupeDecision, decide, reasoning_replay_dedupe_key
from reasoning_replay.record.envelope import check_item_value
from reasoning_replay.record.history import HistoryShapeError, history_from_json
from reasoning_replay.record.provider_input import (
    ConflictPolicy,
    ReplayTarget,
    Transport,
    build_replay_input,
)
from reasoning_replay.record.providers import (
    REGISTRY_ONLY,
    ProviderNames,
    ProviderNamesError,
    provider_names_from_json,
)
from reasoning_replay.record.reader import parse_reasoning_replay_envelope
from reasoning_replay.record.redaction import redact_structural
from reasoning_replay.record.telemetry import replay_telemetry

from .diagnostics import Code


@dataclass(frozen=True, slots=True)
class OperationResult:
    """An operation's answer: ``output`` when it accepts, ``code`` when it rejects."""

    output: dict[str, Any] | None = None
    code: str | None = None


class OperationInputError(Exception):
    """The operation's input does not have the shape PROTOCOL.md gives it (a suite bug)."""


def _accepted(output: dict[str, Any]) -> OperationResult:
    return OperationResult(output=output)


def _rejected(code: Code) -> OperationResult:
    return OperationResult(code=code.value)


def _field(data: Mapping[str, Any], name: str, kind: type | tuple[type, ...]) -> Any:
    value = data.get(name)
    if not isinstance(value, kind):
        raise OperationInputError(f"input.{name} is missing or has the wrong type")
    return value


def _read(data: Mapping[str, Any]) -> OperationResult:
    if "text_base64" in data:
        try:
            text: str | bytes = base64.b64decode(_field(data, "text_base64", str), validate=True)
        except binascii.Error as error:
            raise OperationInputError(f"input.text_base64 is not base64: {error}") from None
    else:
        text = _field(data, "text", str)
    result = parse_reasoning_replay_envelope(text)
    if result.item is None:
        assert result.code is not None
        return _rejected(result.code)
    return _accepted({"item": result.item.to_provider_input()})


def _capture(data: Mapping[str, Any]) -> OperationResult:
    if "output_item" not in data:
        raise OperationInputError("input.output_item is missing")
    result = canonicalize_completed_reasoning_output_item(
        data["output_item"], source=_field(data, "source", str)
    )
    if result.envelope_text is None:
        assert result.code is not None
        return _rejected(result.code)
    return _accepted({"envelope_text": result.envelope_text})


def _conflict_policy(data: Mapping[str, Any]) -> ConflictPolicy:
    options = data.get("options", {})
    if not isinstance(options, Mapping):
        raise OperationInputError("input.options must be an object")
    try:
        return ConflictPolicy(options.get("conflict_policy", ConflictPolicy.KEEP))
    except ValueError:
        raise OperationInputError("options.conflict_policy must be keep or reject") from None


def _provider_names(data: Mapping[str, Any]) -> ProviderNames:
    """SPEC P4: the caller's ``provider_names`` (name → issuer), extending the registry."""
    try:
        return provider_names_from_json(data.get("provider_names"))
    except ProviderNamesError as error:
        raise OperationInputError(str(error)) from None


def _reasoning_model(data: Mapping[str, Any]) -> bool:
    """SPEC P5, F11: whether the requested model returns reasoning (default true)."""
    value = data.get("reasoning_model")
    if value is None:
        return True
    if not isinstance(value, bool):
        raise OperationInputError("input.reasoning_model must be a boolean")
    return value


def _replay(data: Mapping[str, Any]) -> OperationResult:
    try:
        messages = history_from_json(data.get("history"))
    except HistoryShapeError as error:
        raise OperationInputError(str(error)) from None
    target = _field(data, "target", Mapping)
    try:
        replay_target = ReplayTarget(
            provider=_field(target, "provider", str),
            transport=Transport(target.get("transport", Transport.SSE)),
            conflict_policy=_conflict_policy(data),
            provider_names=_provider_names(data),
        )
    except ValueError:
        raise OperationInputError("target.transport must be sse or websocket") from None
    built = build_replay_input(messages, replay_target)
    if built.rejected is not None:
        return _rejected(built.rejected)
    return _accepted(
        {
            "input": list(built.input),
            "diagnostics": [d.to_json() for d in built.diagnostics],
            "counters": built.telemetry().to_json(),
        }
    )


def _dedupe(data: Mapping[str, Any]) -> OperationResult:
    identities = []
    for index, entry in enumerate(_field(data, "entries", list)):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("provider"), str):
            raise OperationInputError(f"entries[{index}] needs a provider string and an item")
        item = check_item_value(entry.get("item"))
        if isinstance(item, Code):
            raise OperationInputError(f"entries[{index}].item is not a replay item: {item}")
        # SPEC D1: the identity's provider is the item's issuer, the registry's (P4, §18.2)
        issuer = REGISTRY_ONLY.issuer_of(entry["provider"])
        identities.append(reasoning_replay_dedupe_key(item, issuer))
    decisions = decide(identities)
    conflicts = decisions.count(DedupeDecision.KEEP_CONFLICT)
    if conflicts and _conflict_policy(data) is ConflictPolicy.REJECT:
        return _rejected(Code.DEDUPE_ID_CIPHERTEXT_CONFLICT)
    return _accepted(
        {
            "decisions": [d.value for d in decisions],
            "counters": {
                "replay_deduplicated_exact_count": decisions.count(DedupeDecision.DROP_DUPLICATE),
                "replay_id_ciphertext_conflict_count": conflicts,
            },
        }
    )


def _plan(data: Mapping[str, Any]) -> OperationResult:
    try:
        messages = history_from_json(data.get("history"))
        settings = PlanSettings(
            model=data.get("model"),
            desired_effort=data.get("desired_effort"),
            instance_key=data.get("instance_key"),
            metadata=_field(data, "metadata", Mapping) if "metadata" in data else {},
            transport=PlanTransport(data.get("transport", PlanTransport.SSE)),
            endpoint=Endpoint(data.get("endpoint", Endpoint.RESPONSES)),
            target_provider=data.get("target_provider", "openai"),
            update_capable=frozenset(data.get("update_capable_models", DEFAULT_UPDATE_CAPABLE)),
            provider_names=_provider_names(data),
            reasoning_model=_reasoning_model(data),
        )
    except (HistoryShapeError, ValueError, TypeError) as error:
        raise OperationInputError(f"plan input: {error}") from None
    plan = plan_request(messages, settings)
    if isinstance(plan, Code):
        return _rejected(plan)
    return _accepted(
        {
            "request": plan.request,
            "record": None if plan.record is None else plan.record.to_json(),
            "diagnostics": [d.to_json() for d in plan.diagnostics],
        }
    )


def _defaults(data: Mapping[str, Any]) -> OperationResult:
    """SPEC P5, K1: what the reference sends with no configuration at all: ``store: false``, the
    include P5 asks for, and a fresh instance key; no ``reasoning`` (no effort is configured)."""
    return _accepted(
        {
            "request": {
                "model": _field(data, "model", str),
                "store": False,
                "include": [REPLAY_INCLUDE],
                "prompt_cache_key": secrets.token_hex(16),  # K1: 32 lowercase hex, at random
            }
        }
    )


def _redact(data: Mapping[str, Any]) -> OperationResult:
    if "payload" not in data:
        raise OperationInputError("input.payload is missing")
    return _accepted({"payload": redact_structural(data["payload"])})


def _telemetry(data: Mapping[str, Any]) -> OperationResult:
    request = _field(data, "request", Mapping)
    dedupe = data.get("dedupe", {})
    if not isinstance(dedupe, Mapping):
        raise OperationInputError("input.dedupe must be an object")
    counters = replay_telemetry(
        _field(request, "input", list),
        deduplicated_exact=int(dedupe.get("replay_deduplicated_exact_count", 0)),
        id_ciphertext_conflicts=int(dedupe.get("replay_id_ciphertext_conflict_count", 0)),
    )
    return _accepted({"counters": counters.to_json()})


def _mode(modes: Mapping[str, Any], name: str) -> int | None:
    value = modes.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or not value or any(c not in "01234567" for c in value):
        raise OperationInputError(f"input.modes.{name} must be an octal string such as 0600")
    return int(value, 8)


def _validate(data: Mapping[str, Any]) -> OperationResult:
    """SPEC H3, H4: never a rejection; a broken file is a finding."""
    if "history_text_base64" in data:
        try:
            text: str | bytes = base64.b64decode(
                _field(data, "history_text_base64", str), validate=True
            )
        except binascii.Error as error:
            raise OperationInputError(f"input.history_text_base64 is not base64: {error}") from None
    else:
        text = _field(data, "history_text", (str, bytes))  # bytes: decoded by the runner
    modes = data.get("modes", {})
    file_name = data.get("file_name")
    if not isinstance(modes, Mapping) or not (file_name is None or isinstance(file_name, str)):
        raise OperationInputError("input.modes must be an object and input.file_name a string")
    report = validate_history(
        text,
        provider=_field(data, "provider", str) if "provider" in data else "openai",
        file_mode=_mode(modes, "file"),
        directory_mode=_mode(modes, "directory"),
        file_name=file_name,
        provider_names=_provider_names(data),
    )
    return _accepted(report.to_json())


def _export(data: Mapping[str, Any]) -> OperationResult:
    """SPEC H2, H6: the exported history, or ``history_malformed``."""
    if "history" not in data:
        raise OperationInputError("input.history is missing")
    try:
        mode = ExportMode(_field(data, "mode", str))
    except ValueError:
        raise OperationInputError("input.mode must be resumable or redacted") from None
    drop = data.get("drop_display_reasoning", False)
    if not isinstance(drop, bool):
        raise OperationInputError("input.drop_display_reasoning must be a boolean")
    exported = export_history(data["history"], mode, drop_display_reasoning=drop)
    if isinstance(exported, Code):
        return _rejected(exported)
    return _accepted({"history": exported})


def _scan(data: Mapping[str, Any]) -> OperationResult:
    """SPEC H8: the findings of one file's text, in line order, then in order on the line."""
    return _accepted({"findings": [f.to_json() for f in scan_text(_field(data, "text", str))]})


_HANDLERS: Final[dict[str, Callable[[Mapping[str, Any]], OperationResult]]] = {
    "read": _read,
    "capture": _capture,
    "replay": _replay,
    "dedupe": _dedupe,
    "redact": _redact,
    "telemetry": _telemetry,
    "plan": _plan,
    "defaults": _defaults,
    "scan": _scan,
    "validate": _validate,
    "export": _export,
}
OPERATIONS: Final = tuple(_HANDLERS)


def dispatch(operation: str, data: Mapping[str, Any]) -> OperationResult:
    """Run one conformance operation on the reference.

    Raises :class:`OperationInputError` for an input of the wrong shape and ``KeyError`` for an
    unknown operation; callers turn both into protocol errors. Never raises for what the input
    says (bad blocks, bad items): that is what the codes are for.
    """
    return _HANDLERS[operation](data)
