"""The public API: every name importable from ``reasoning_replay`` stays importable from it,
wherever its module lives in the package."""

from __future__ import annotations

import importlib

import pytest
import reasoning_replay

# The package's __all__ when the modules moved into folders by SPEC part (issue 15); a name may
# be added, none of these may go.
PUBLIC_NAMES = (
    "DISPLAY_CHANNEL",
    "REPLAY_CHANNEL",
    "SCHEMA_NAME",
    "SCHEMA_VERSION",
    "CaptureResult",
    "CaptureSource",
    "Code",
    "ConflictPolicy",
    "DedupeDecision",
    "DedupeIdentity",
    "Diagnostic",
    "HistoryMessage",
    "ReadResult",
    "ReasoningReplayItem",
    "ReplayRecordError",
    "ReplayRequestInput",
    "ReplayTarget",
    "ReplayTelemetry",
    "Transport",
    "build_replay_input",
    "canonicalize_completed_reasoning_output_item",
    "decide",
    "history_from_json",
    "parse_reasoning_replay_envelope",
    "reasoning_replay_dedupe_key",
    "reasoning_replay_item_to_provider_input",
    "redact",
    "redact_reasoning_replay_for_diagnostics",
    "replay_telemetry",
    "schema_registry",
    "serialize_reasoning_replay_envelope",
    "validator_for",
)


@pytest.mark.parametrize("name", PUBLIC_NAMES)
def test_each_public_name_imports_from_the_package(name: str) -> None:
    namespace: dict[str, object] = {}
    exec(f"from reasoning_replay import {name}", namespace)
    assert namespace[name] is getattr(importlib.import_module("reasoning_replay"), name)


def test_the_public_names_are_all_still_exported() -> None:
    assert set(PUBLIC_NAMES) <= set(reasoning_replay.__all__)


def test_every_exported_name_is_bound() -> None:
    missing = [name for name in reasoning_replay.__all__ if not hasattr(reasoning_replay, name)]
    assert missing == []
