// History forms and applicability (SPEC CL3, CL4), as the runner decides them, for the node:test
// helper: which cases apply to an implementation that reads some history forms, each case's
// history converted into the items form where it goes in that form
// (conformance/PROTOCOL.md#items-form), and what is left out of comparing its reply (SPEC CL2).
import { isJsonObject, parseStrict } from './jsontext.js';
import { readEnvelope } from './envelope.js';
import { REPLAY_CHANNEL, ITEMS_FORM } from './replay.js';
import { CACHE_STATE_CHANNEL } from './cachestate.js';

export const FORMS = Object.freeze(['neutral', 'items', 'storage']);
export const HISTORY_FORMATS = Object.freeze(['channels', 'items']);
const FORM_TAG_PREFIX = 'form:';
const HISTORY_OPERATIONS = new Set(['replay', 'plan']);

/** A case's form, from its one form tag (`conformance check` guarantees there is exactly one). */
export function caseForm(testCase) {
  const tags = testCase.tags.filter((t) => t.startsWith(FORM_TAG_PREFIX));
  const form = tags.length === 1 ? tags[0].slice(FORM_TAG_PREFIX.length) : undefined;
  if (!FORMS.includes(form)) throw new TypeError(`${testCase.id}: no single form tag (${tags.join(', ') || 'none'})`);
  return form;
}

/**
 * CL4: whether a case applies to an implementation that reads `formats`, and the form its history
 * is sent in (null: the operation takes no history): as written, except a neutral history, which
 * goes in the items form when the channels form is not read.
 * @returns {{applies: boolean, historyFormat: 'channels'|'items'|null}}
 */
export function applicability(testCase, formats) {
  const form = caseForm(testCase);
  const reads = (f) => formats.includes(f);
  if ((form === 'storage' && !reads('channels')) || (form === 'items' && !reads('items'))) {
    return { applies: false, historyFormat: null };
  }
  if (!HISTORY_OPERATIONS.has(testCase.operation)) return { applies: true, historyFormat: null };
  if (form === 'items') return { applies: true, historyFormat: 'items' };
  if (reads('channels')) return { applies: true, historyFormat: 'channels' };
  if (reads('items')) return { applies: true, historyFormat: 'items' };
  return { applies: false, historyFormat: null };
}

/** CL2: the output members left out of comparing a case's reply. */
export function unjudgedMembers(testCase, historyFormat, telemetry) {
  if (testCase.operation === 'plan' && historyFormat === 'items') return ['record'];
  if (testCase.operation === 'replay' && !telemetry) return ['counters'];
  return [];
}

/**
 * The case as it is sent and judged: a neutral history converted into the items form when it
 * goes in that form, and the unjudged members left out of its expectation (checkCase leaves
 * them out of the result too).
 */
export function preparedCase(testCase, historyFormat, unjudged) {
  let out = testCase;
  if (historyFormat === 'items' && caseForm(testCase) === 'neutral' && isJsonObject(testCase.input.history)) {
    out = { ...out, input: { ...out.input, history: itemsFormHistory(testCase.input.history) } };
  }
  if (unjudged.length > 0) {
    const output = out.expect.output;
    if (output !== undefined) {
      const kept = Object.fromEntries(Object.entries(output).filter(([name]) => !unjudged.includes(name)));
      out = { ...out, expect: { output: kept } };
    }
    out = { ...out, unjudged };
  }
  return out;
}

/**
 * PROTOCOL.md#items-form: a neutral channels-form history in the items form. Each message's
 * replay items come first among its items (where P2 sends them), its record's members are
 * copied, every other channel is dropped.
 * @throws {TypeError} for a block that does not read resumable (the history is not neutral)
 */
export function itemsFormHistory(history) {
  const out = { form: ITEMS_FORM };
  if (Object.hasOwn(history, 'provider')) out.provider = history.provider;
  out.messages = history.messages.map((msg, mi) => {
    const channels = isJsonObject(msg.channels) ? msg.channels : {};
    const blocks = Array.isArray(channels[REPLAY_CHANNEL]) ? channels[REPLAY_CHANNEL] : [];
    const replayed = blocks.map((block, bi) => {
      const verdict = readEnvelope(block.text);
      if (!verdict.ok) throw new TypeError(`message ${mi} block ${bi} is not resumable: not a neutral history`);
      return verdict.item;
    });
    const converted = { role: msg.role, items: [...replayed, ...(Array.isArray(msg.items) ? msg.items : [])] };
    if (Object.hasOwn(msg, 'provider')) converted.provider = msg.provider;
    // F9: only a non-empty string carries a response id; any other value carries none, and the
    // items form has no other value to hold.
    if (typeof msg.response_id === 'string' && msg.response_id !== '') converted.response_id = msg.response_id;
    const record = Array.isArray(channels[CACHE_STATE_CHANNEL]) ? channels[CACHE_STATE_CHANNEL] : [];
    if (record.length === 1) {
      const { model, key, effort } = parseStrict(record[0].text);
      Object.assign(converted, { model, effort, prompt_cache_key: key });
    }
    return converted;
  });
  return out;
}
