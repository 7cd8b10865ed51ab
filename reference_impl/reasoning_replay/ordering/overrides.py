"""The request overrides of a plan, and the rejections of SPEC F8, checked in the table's order."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any, Final

from reasoning_replay.diagnostics import Code

from .cache_state import ALLOWED_EFFORTS

INSTANCE_KEY: Final = re.compile(r"[0-9a-f]{32}")  # SPEC K1


def is_instance_key(key: object) -> bool:
    """SPEC K1: 32 lowercase hexadecimal digits."""
    return isinstance(key, str) and INSTANCE_KEY.fullmatch(key) is not None


def is_update_capable(model: object, update_capable: Collection[str]) -> bool:
    """SPEC §9.1: membership of the registry, by exact string equality."""
    return isinstance(model, str) and model in update_capable


def present(mapping: Mapping[str, Any], name: str) -> bool:
    """SPEC F8: a member that is there and not ``null`` (``null`` asks for nothing)."""
    return mapping.get(name) is not None


def requested_model(configured_model: object, metadata: Mapping[str, Any]) -> object:
    """SPEC F11: ``metadata.model`` when present, else the configured model."""
    return metadata["model"] if present(metadata, "model") else configured_model


def desired_effort(configured_effort: object, metadata: Mapping[str, Any]) -> object:
    """SPEC §9.1: ``metadata.reasoning.effort`` when the request sets it, else the configured."""
    reasoning = metadata.get("reasoning")
    if isinstance(reasoning, Mapping) and present(reasoning, "effort"):
        return reasoning["effort"]
    return configured_effort


def _in_either(metadata: Mapping[str, Any], extra_body: Mapping[str, Any], name: str) -> list[Any]:
    return [place[name] for place in (metadata, extra_body) if present(place, name)]


def check_overrides(
    configured_model: object,
    configured_effort: object,
    instance_key: object,
    metadata: Mapping[str, Any],
    update_capable: Collection[str],
    *,
    governed: bool = True,
) -> Code | None:
    """The first row of the SPEC F8 table that the request breaks, or ``None``.

    ``governed``: whether §9 governs the target (SPEC F12), which decides whether an explicit
    key replaces the instance key."""
    model = requested_model(configured_model, metadata)
    if not isinstance(model, str):
        return Code.PLAN_MODEL_INVALID
    explicit_key = metadata.get("prompt_cache_key")
    if explicit_key is not None and not (isinstance(explicit_key, str) and explicit_key):
        return Code.PLAN_CACHE_KEY_INVALID  # a record needs a non-empty key (SPEC §9.1)
    # SPEC F8: the instance key is checked only where it can be the key sent: for a governed
    # target when no explicit key replaces it (K2), for any other target always (F12).
    if (not governed or explicit_key is None) and not is_instance_key(instance_key):
        return Code.PLAN_CACHE_KEY_INVALID
    extra_body = metadata.get("extra_body")
    if extra_body is None:
        extra_body = {}
    if not isinstance(extra_body, Mapping):
        return Code.PLAN_EXTRA_BODY_INVALID
    if present(extra_body, "model") and (
        is_update_capable(extra_body["model"], update_capable)
        or is_update_capable(model, update_capable)
    ):
        return Code.PLAN_MODEL_BOUNDARY
    reasoning = metadata.get("reasoning")
    if not is_update_capable(model, update_capable):
        if reasoning is not None and not isinstance(reasoning, Mapping):
            return Code.PLAN_EFFORT_INVALID
        return None
    if present(extra_body, "reasoning") or present(extra_body, "prompt_cache_key"):
        return Code.PLAN_EXTRA_BODY_OVERRIDE
    if _in_either(metadata, extra_body, "input") or _in_either(
        metadata, extra_body, "previous_response_id"
    ):
        return Code.PLAN_RAW_INPUT_OVERRIDE
    if any(value != "disabled" for value in _in_either(metadata, extra_body, "truncation")) or any(
        value not in ([], {}) for value in _in_either(metadata, extra_body, "context_management")
    ):
        return Code.PLAN_AUTO_CONTEXT_MANAGEMENT
    if isinstance(reasoning, Mapping) and reasoning.get("mode") not in (None, "standard"):
        return Code.PLAN_MODE_UNSUPPORTED
    for multi_agent in _in_either(metadata, extra_body, "multi_agent"):
        # Compared by identity: 0 is not false here, whatever Python's 0 == False says.
        enabled = multi_agent.get("enabled") if isinstance(multi_agent, Mapping) else True
        if enabled is not None and enabled is not False:
            return Code.PLAN_MODE_UNSUPPORTED
    if "reasoning" in metadata and not isinstance(reasoning, Mapping):  # null included (F8)
        return Code.PLAN_EFFORT_INVALID
    effort = desired_effort(configured_effort, metadata)
    if not isinstance(effort, str) or effort not in ALLOWED_EFFORTS:
        return Code.PLAN_EFFORT_INVALID
    return None
