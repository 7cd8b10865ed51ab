"""Reference implementation of the reasoning-replay record specification (SPEC.md).

One folder per part of the SPEC: :mod:`.record` (Part I, §2–§8), :mod:`.ordering` (Part II, §9),
:mod:`.history` (Part III, §10); the modules common to all parts (:mod:`.diagnostics`,
:mod:`.schemas`, :mod:`.operations`, ...) at the top; :mod:`.suite` is the conformance machinery
and :mod:`.cli` the command line. ARCHITECTURE.md maps them. The names below are the public API.
"""

from reasoning_replay.history.text_redaction import redact, redact_text
from reasoning_replay.record.capture import (
    CaptureResult,
    CaptureSource,
    canonicalize_completed_reasoning_output_item,
)
from reasoning_replay.record.dedupe import (
    DedupeDecision,
    DedupeIdentity,
    decide,
    reasoning_replay_dedupe_key,
)
from reasoning_replay.record.envelope import (
    DISPLAY_CHANNEL,
    REPLAY_CHANNEL,
    SCHEMA_NAME,
    SCHEMA_VERSION,
    ReasoningReplayItem,
)
from reasoning_replay.record.history import HistoryMessage, history_from_json
from reasoning_replay.record.provider_input import (
    ConflictPolicy,
    ReplayRequestInput,
    ReplayTarget,
    Transport,
    build_replay_input,
    reasoning_replay_item_to_provider_input,
)
from reasoning_replay.record.reader import ReadResult, parse_reasoning_replay_envelope
from reasoning_replay.record.redaction import (
    redact_reasoning_replay_for_diagnostics,
    redact_structural,
)
from reasoning_replay.record.telemetry import ReplayTelemetry, replay_telemetry
from reasoning_replay.record.writer import serialize_reasoning_replay_envelope

from .diagnostics import Code, Diagnostic, ReplayRecordError
from .schemas import schema_registry, validator_for

__all__ = [
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
    "redact_structural",
    "redact_text",
    "replay_telemetry",
    "schema_registry",
    "serialize_reasoning_replay_envelope",
    "validator_for",
]
