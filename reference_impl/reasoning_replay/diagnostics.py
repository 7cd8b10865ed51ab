"""The closed registry of diagnostic codes (SPEC §12, §18) and the diagnostic value carrying one."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Code(StrEnum):
    """A diagnostic code of the registry in SPEC §12; the value is the code as written there."""

    LIMIT_EXCEEDED = "limit_exceeded"
    JSON_INVALID_UNICODE = "json_invalid_unicode"
    JSON_MALFORMED = "json_malformed"
    JSON_DUPLICATE_MEMBER = "json_duplicate_member"
    JSON_NOT_OBJECT = "json_not_object"
    LEGACY_MINIMAL_RECORD = "legacy_minimal_record"
    RAW_SDK_SNAPSHOT = "raw_sdk_snapshot"
    ENVELOPE_MEMBER_MISSING = "envelope_member_missing"
    ENVELOPE_MEMBER_UNKNOWN = "envelope_member_unknown"
    ENVELOPE_SCHEMA_UNKNOWN = "envelope_schema_unknown"
    ENVELOPE_VERSION_INVALID = "envelope_version_invalid"
    ENVELOPE_VERSION_UNSUPPORTED = "envelope_version_unsupported"
    ITEM_NOT_OBJECT = "item_not_object"
    ITEM_MEMBER_UNKNOWN = "item_member_unknown"
    ITEM_TYPE_INVALID = "item_type_invalid"
    ITEM_ID_INVALID = "item_id_invalid"
    ITEM_CIPHERTEXT_INVALID = "item_ciphertext_invalid"
    ITEM_SUMMARY_INVALID = "item_summary_invalid"
    ITEM_CONTENT_INVALID = "item_content_invalid"
    CAPTURE_NOT_REASONING = "capture_not_reasoning"
    CAPTURE_NOT_COMPLETED = "capture_not_completed"
    CAPTURE_SOURCE_UNKNOWN = "capture_source_unknown"
    BLOCK_NOT_TEXT = "block_not_text"
    REPLAY_CHANNEL_MISPLACED = "replay_channel_misplaced"
    REPLAY_PROVIDER_MISMATCH = "replay_provider_mismatch"
    DEDUPE_EXACT_DUPLICATE = "dedupe_exact_duplicate"
    DEDUPE_ID_CIPHERTEXT_CONFLICT = "dedupe_id_ciphertext_conflict"
    DISPLAY_REPLAY_MISMATCH = "display_replay_mismatch"
    REDACTED_RECORD = "redacted_record"
    HISTORY_UNREADABLE = "history_unreadable"
    HISTORY_MALFORMED = "history_malformed"
    FILE_MODE_TOO_OPEN = "file_mode_too_open"
    DIRECTORY_MODE_TOO_OPEN = "directory_mode_too_open"
    REPLAY_MATERIAL_EXPOSED = "replay_material_exposed"
    SCAN_FILE_NOT_TEXT = "scan_file_not_text"
    CACHE_STATE_INVALID = "cache_state_invalid"
    PLAN_MODEL_INVALID = "plan_model_invalid"
    PLAN_CACHE_KEY_INVALID = "plan_cache_key_invalid"
    PLAN_EXTRA_BODY_INVALID = "plan_extra_body_invalid"
    PLAN_MODEL_BOUNDARY = "plan_model_boundary"
    PLAN_EXTRA_BODY_OVERRIDE = "plan_extra_body_override"
    PLAN_RAW_INPUT_OVERRIDE = "plan_raw_input_override"
    PLAN_AUTO_CONTEXT_MANAGEMENT = "plan_auto_context_management"
    PLAN_MODE_UNSUPPORTED = "plan_mode_unsupported"
    PLAN_EFFORT_INVALID = "plan_effort_invalid"
    PLAN_COMPACT_WITH_UPDATES = "plan_compact_with_updates"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One code reported while building a request, at the block it concerns (SPEC §12)."""

    code: Code
    message_index: int
    block_index: int

    def to_json(self) -> dict[str, object]:
        return {
            "code": self.code.value,
            "message_index": self.message_index,
            "block_index": self.block_index,
        }


class ReplayRecordError(Exception):
    """Raised only for programming errors: a caller handed the writer a value that is not canonical.

    Readers and builders never raise on data; they return codes. This exception carries the code
    that the same value would get from a reader.
    """

    def __init__(self, code: Code, detail: str) -> None:
        super().__init__(code, detail)
        self.code = code
        self.detail = detail

    def __str__(self) -> str:
        return f"{self.code.value}: {self.detail}"
