"""Reference implementation of the reasoning-replay record specification (SPEC.md).

One module per boundary: :mod:`.envelope` (types, value checks), :mod:`.jsontext` (I-JSON text
rules), :mod:`.reader`, :mod:`.writer`, :mod:`.capture`, :mod:`.provider_input`, :mod:`.dedupe`,
:mod:`.redaction`, :mod:`.telemetry`, :mod:`.schemas`; :mod:`.operations` maps them to the
conformance protocol and :mod:`.suite` is the conformance runner.
"""

from .capture import CaptureResult, CaptureSource, canonicalize_completed_reasoning_output_item
from .dedupe import DedupeDecision, DedupeIdentity, decide, reasoning_replay_dedupe_key
from .diagnostics import Code, Diagnostic, ReplayRecordError
from .envelope import (
    DISPLAY_CHANNEL,
    REPLAY_CHANNEL,
    SCHEMA_NAME,
    SCHEMA_VERSION,
    ReasoningReplayItem,
)
from .history import HistoryMessage, history_from_json
from .provider_input import (
    ConflictPolicy,
    ReplayRequestInput,
    ReplayTarget,
    Transport,
    build_replay_input,
    reasoning_replay_item_to_provider_input,
)
from .reader import ReadResult, parse_reasoning_replay_envelope
from .redaction import redact, redact_reasoning_replay_for_diagnostics
from .schemas import schema_registry, validator_for
from .telemetry import ReplayTelemetry, replay_telemetry
from .writer import serialize_reasoning_replay_envelope

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
    "replay_telemetry",
    "schema_registry",
    "serialize_reasoning_replay_envelope",
    "validator_for",
]
