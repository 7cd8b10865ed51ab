// Telemetry counters (SPEC §8, T1). Only counts leave this module: never text, never ciphertext
// (T2).
import { isJsonObject, isJsonNumber } from './jsontext.js';
import { utf8Length } from './bytes.js';

export const CANONICAL_SCHEMA_VERSION = 1;

/**
 * The nine T1 counters for a request input array.
 * @param {unknown[]} input the request's input array (non-arrays count as empty)
 * @param {{replay_deduplicated_exact_count?: number, replay_id_ciphertext_conflict_count?: number}} [dedupe]
 */
export function telemetryCounters(input, dedupe) {
  let items = 0;
  let encryptedBytes = 0;
  let summaryParts = 0;
  let summaryBytes = 0;
  let contentParts = 0;
  let contentBytes = 0;
  for (const it of Array.isArray(input) ? input : []) {
    if (!isJsonObject(it) || it.type !== 'reasoning') continue;
    items++;
    if (typeof it.encrypted_content === 'string') encryptedBytes += utf8Length(it.encrypted_content);
    const s = partStats(it.summary);
    summaryParts += s.parts;
    summaryBytes += s.bytes;
    const c = partStats(it.content);
    contentParts += c.parts;
    contentBytes += c.bytes;
  }
  return {
    reasoning_replay_item_count: items,
    reasoning_replay_encrypted_bytes: encryptedBytes,
    reasoning_replay_summary_parts: summaryParts,
    reasoning_replay_summary_bytes: summaryBytes,
    reasoning_replay_content_parts: contentParts,
    reasoning_replay_content_bytes: contentBytes,
    replay_deduplicated_exact_count: count(dedupe?.replay_deduplicated_exact_count),
    replay_id_ciphertext_conflict_count: count(dedupe?.replay_id_ciphertext_conflict_count),
    canonical_schema_version: CANONICAL_SCHEMA_VERSION,
  };
}

/**
 * Parts of a summary/content list: every element counts as a part; bytes come from the string
 * `text` of object parts. Non-arrays count 0 parts and 0 bytes (T1; same rule as R1).
 */
export function partStats(list) {
  if (!Array.isArray(list)) return { parts: 0, bytes: 0 };
  let bytes = 0;
  for (const p of list) {
    if (isJsonObject(p) && typeof p.text === 'string') bytes += utf8Length(p.text);
  }
  return { parts: list.length, bytes };
}

function count(v) {
  if (!isJsonNumber(v)) return 0;
  const n = Number(v); // also unwraps a raw JsonNumber from the protocol parse
  return Number.isSafeInteger(n) && n >= 0 ? n : 0;
}
