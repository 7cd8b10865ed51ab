// The closed diagnostic-code registry (SPEC §10) and the error type that carries a code.

export const CODES = Object.freeze([
  'limit_exceeded',
  'json_invalid_unicode',
  'json_malformed',
  'json_duplicate_member',
  'json_not_object',
  'legacy_minimal_record',
  'raw_sdk_snapshot',
  'envelope_member_missing',
  'envelope_member_unknown',
  'envelope_schema_unknown',
  'redacted_record',
  'envelope_version_invalid',
  'envelope_version_unsupported',
  'item_not_object',
  'item_member_unknown',
  'item_type_invalid',
  'item_id_invalid',
  'item_ciphertext_invalid',
  'item_summary_invalid',
  'item_content_invalid',
  'capture_not_reasoning',
  'capture_not_completed',
  'capture_source_unknown',
  'block_not_text',
  'replay_channel_misplaced',
  'replay_provider_mismatch',
  'dedupe_exact_duplicate',
  'dedupe_id_ciphertext_conflict',
  'display_replay_mismatch',
  'history_unreadable',
  'history_malformed',
  'file_mode_too_open',
  'directory_mode_too_open',
  'replay_material_exposed',
  'scan_file_not_text',
  'cache_state_invalid',
  'plan_model_invalid',
  'plan_cache_key_invalid',
  'plan_extra_body_invalid',
  'plan_model_boundary',
  'plan_extra_body_override',
  'plan_raw_input_override',
  'plan_auto_context_management',
  'plan_mode_unsupported',
  'plan_effort_invalid',
  'plan_compact_with_updates',
]);

const CODE_SET = new Set(CODES);

export function isRegistryCode(code) {
  return CODE_SET.has(code);
}

/**
 * An expected, specified refusal (a capture reject, a strict-policy dedupe conflict). Anything
 * thrown that is not a ReplayError is an internal bug, and the adapter reports it as an error.
 */
export class ReplayError extends Error {
  constructor(code, message = code) {
    if (!CODE_SET.has(code)) throw new TypeError(`not a registry code: ${code}`);
    super(message);
    this.name = 'ReplayError';
    this.code = code;
  }
}
