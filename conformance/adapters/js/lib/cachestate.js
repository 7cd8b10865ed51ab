// Cache-state records (SPEC §9.1, F6, F11): reading a stored record and deciding whether it is
// valid for the requested model, absent, of another model, or malformed.
import { isJsonObject, parseStrict, JsonTextError, stringify } from './jsontext.js';

/** The assistant-message channel that holds the record. */
export const CACHE_STATE_CHANNEL = 'fast-agent-responses-cache-state';

/** §9.1: the update-capable registry unless the caller supplies another. */
export const DEFAULT_UPDATE_CAPABLE_MODELS = Object.freeze(['gpt-6-astra']);

/** §9.1: the allowed efforts of an update-capable model. */
export const ALLOWED_EFFORTS = Object.freeze(['low', 'medium', 'high', 'xhigh', 'max']);
const ALLOWED = new Set(ALLOWED_EFFORTS);

export function isAllowedEffort(e) {
  return typeof e === 'string' && ALLOWED.has(e);
}

const RECORD_MEMBERS = ['model', 'key', 'effort'];

/** Verdicts of readCacheState. */
export const ABSENT = 'absent'; // no record on this message (no channel, or an empty one)
export const MALFORMED = 'malformed'; // F6: treated as absent and reported cache_state_invalid
export const OTHER_MODEL = 'other_model'; // F5: a well-formed record of another model, ignored
export const VALID = 'valid'; // valid for the requested model

/**
 * Read the cache-state record of one history message.
 *
 * Order of the checks:
 *   1. only an assistant message's channel holds a record (another role's channel is not read);
 *      a missing channel or an empty one means no record;
 *   2. the channel must be an array of exactly one block, a text block
 *      ({type: "text", text: string}), else malformed ("more than one block");
 *   3. the text must be one I-JSON text (E4, with the E4.1 limits of our reader) denoting an
 *      object with exactly the members model, key, effort, where model is a string, key a
 *      non-empty string and effort a string or null, else malformed ("wrong members or types");
 *   4. model other than the requested one: another model's record, ignored (not malformed);
 *   5. effort must be an allowed effort (update-capable requested model) or null (any other
 *      model), else malformed ("an effort the model does not allow").
 *
 * @param {unknown} msg a history message
 * @param {string} model the requested model
 * @param {boolean} updateCapable whether the requested model is update-capable
 * @returns {{verdict: string, key?: string, effort?: string|null}}
 */
export function readCacheState(msg, model, updateCapable) {
  if (!isJsonObject(msg) || msg.role !== 'assistant') return { verdict: ABSENT };
  const channels = isJsonObject(msg.channels) ? msg.channels : null;
  if (!channels || !Object.hasOwn(channels, CACHE_STATE_CHANNEL)) return { verdict: ABSENT };
  const blocks = channels[CACHE_STATE_CHANNEL];
  if (Array.isArray(blocks) && blocks.length === 0) return { verdict: ABSENT };
  if (!Array.isArray(blocks) || blocks.length !== 1) return { verdict: MALFORMED };
  const block = blocks[0];
  if (!isJsonObject(block) || block.type !== 'text' || typeof block.text !== 'string') return { verdict: MALFORMED };

  let value;
  try {
    value = parseStrict(block.text);
  } catch (err) {
    if (err instanceof JsonTextError) return { verdict: MALFORMED };
    throw err;
  }
  if (!isJsonObject(value)) return { verdict: MALFORMED };
  const names = Object.keys(value);
  if (names.length !== RECORD_MEMBERS.length || !RECORD_MEMBERS.every((m) => Object.hasOwn(value, m))) {
    return { verdict: MALFORMED };
  }
  const { model: m, key, effort } = value;
  if (typeof m !== 'string' || typeof key !== 'string' || key === '' || (effort !== null && typeof effort !== 'string')) {
    return { verdict: MALFORMED };
  }
  if (m !== model) return { verdict: OTHER_MODEL };
  const effortOk = updateCapable ? isAllowedEffort(effort) : effort === null;
  if (!effortOk) return { verdict: MALFORMED };
  return { verdict: VALID, key, effort };
}

/** The record text a writer stores with a response (compact JSON, members in record order). */
export function cacheStateText(record) {
  return stringify({ model: record.model, key: record.key, effort: record.effort });
}

/** CL3: the members of an items-form message that hold its record. */
const RECORD_MEMBER_NAMES = ['model', 'effort', 'prompt_cache_key'];

/**
 * Read the record of one message of a history in the items form (SPEC CL3): its members model,
 * effort and prompt_cache_key are the record {model, key: prompt_cache_key, effort}, read and
 * checked as a stored record is (only on an assistant message; verdicts as readCacheState's).
 * @throws {TypeError} when only some of the three members are present (not the items form)
 */
export function readRecordMembers(msg, model, updateCapable) {
  if (!isJsonObject(msg) || msg.role !== 'assistant') return { verdict: ABSENT };
  const present = RECORD_MEMBER_NAMES.filter((name) => Object.hasOwn(msg, name));
  if (present.length === 0) return { verdict: ABSENT };
  if (present.length !== RECORD_MEMBER_NAMES.length) {
    throw new TypeError('items form: model, effort and prompt_cache_key go together');
  }
  const { model: m, prompt_cache_key: key, effort } = msg;
  if (typeof m !== 'string' || typeof key !== 'string' || key === '' || (effort !== null && typeof effort !== 'string')) {
    return { verdict: MALFORMED };
  }
  if (m !== model) return { verdict: OTHER_MODEL };
  const effortOk = updateCapable ? isAllowedEffort(effort) : effort === null;
  if (!effortOk) return { verdict: MALFORMED };
  return { verdict: VALID, key, effort };
}
