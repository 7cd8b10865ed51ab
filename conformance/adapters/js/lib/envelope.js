// The strict envelope reader (SPEC §3): E6's checks in order, first failure gives the code.
//
// The reader never repairs, strips or migrates (E3): it returns the stored item object exactly
// as parsed, or one code. It is total (E4.2): every text gets a verdict and nothing is thrown.
import { parseStrict, JsonTextError, isJsonObject } from './jsontext.js';

export const ENVELOPE_SCHEMA = 'fast-agent.openai-responses.reasoning-replay';
export const REDACTED_SCHEMA = `${ENVELOPE_SCHEMA}.redacted`; // H2
export const ENVELOPE_VERSION = 1;

const ENVELOPE_MEMBERS = new Set(['schema', 'version', 'item']);
const ITEM_MEMBERS = new Set(['type', 'id', 'summary', 'encrypted_content', 'content']);
// E5: members a minimal record may have besides encrypted_content.
const MINIMAL_RECORD_MEMBERS = new Set(['type', 'id', 'encrypted_content']);

const has = Object.hasOwn;

/**
 * Decide a block's verdict.
 * @param {string|Uint8Array} text the block text, as a string or as raw bytes
 * @param {{maxBytes?: number, maxDepth?: number}} [limits]
 * @returns {{ok: true, item: object} | {ok: false, code: string}}
 */
export function readEnvelope(text, limits) {
  let value;
  try {
    value = parseStrict(text, limits); // steps 1–5
  } catch (err) {
    if (err instanceof JsonTextError) return { ok: false, code: err.code };
    throw err;
  }
  const code = envelopeValueCode(value);
  return code === null ? { ok: true, item: value.item } : { ok: false, code };
}

/**
 * Steps 6–13 on an already-parsed value. Returns null for a canonical envelope, else the code.
 * Exposed so tests (and the writer's self-check) can judge values directly.
 */
export function envelopeValueCode(v) {
  // 6. value kind
  if (!isJsonObject(v)) return 'json_not_object';
  // 7. legacy shapes are recognised only when there is no schema member at all
  if (!has(v, 'schema')) {
    if (!has(v, 'encrypted_content')) return 'envelope_member_missing';
    for (const k of Object.keys(v)) {
      if (!MINIMAL_RECORD_MEMBERS.has(k)) return 'raw_sdk_snapshot';
    }
    return 'legacy_minimal_record';
  }
  // 8. schema name, exactly
  if (v.schema !== ENVELOPE_SCHEMA) {
    // H2: a redacted record from a redacted export is named, and never resumable.
    return v.schema === REDACTED_SCHEMA ? 'redacted_record' : 'envelope_schema_unknown';
  }
  // 9. version: by binary64 value; a boolean is not a number
  if (!has(v, 'version')) return 'envelope_member_missing';
  if (typeof v.version !== 'number') return 'envelope_version_invalid';
  if (v.version !== ENVELOPE_VERSION) return 'envelope_version_unsupported';
  // 10. envelope members
  if (!has(v, 'item')) return 'envelope_member_missing';
  for (const k of Object.keys(v)) {
    if (!ENVELOPE_MEMBERS.has(k)) return 'envelope_member_unknown';
  }
  // 11–13. the item
  return itemCode(v.item);
}

/** E6 steps 11–13 for a replay item. Null when canonical. */
export function itemCode(item) {
  if (!isJsonObject(item)) return 'item_not_object';
  for (const k of Object.keys(item)) {
    if (!ITEM_MEMBERS.has(k)) return 'item_member_unknown';
  }
  if (item.type !== 'reasoning') return 'item_type_invalid';
  if (!isNonEmptyString(item.id)) return 'item_id_invalid';
  if (!isPartList(item.summary, 'summary_text', true)) return 'item_summary_invalid';
  if (!isNonEmptyString(item.encrypted_content)) return 'item_ciphertext_invalid';
  // content is optional, but when present it must be a non-empty list (null and [] are not
  // canonical: only the writer drops them, E3).
  if (has(item, 'content') && !isPartList(item.content, 'reasoning_text', false)) {
    return 'item_content_invalid';
  }
  return null;
}

function isNonEmptyString(v) {
  return typeof v === 'string' && v.length > 0;
}

/** An array of parts that are exactly {type: partType, text: string}. */
function isPartList(list, partType, allowEmpty) {
  if (!Array.isArray(list)) return false;
  if (!allowEmpty && list.length === 0) return false;
  for (const part of list) {
    if (!isJsonObject(part)) return false;
    const keys = Object.keys(part);
    if (keys.length !== 2 || !has(part, 'type') || !has(part, 'text')) return false;
    if (part.type !== partType || typeof part.text !== 'string') return false;
  }
  return true;
}
