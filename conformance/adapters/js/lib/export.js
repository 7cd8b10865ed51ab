// History exports (SPEC H6) and redacted records (SPEC H2). Pure: a history value in, its export
// out; the input is never mutated.
//
// Where H2/H6 leave a choice, the suite's export vectors pin it, and this module follows them:
// - the view of a replay block exists only when its text passes E6 steps 1–5: the envelope's
//   `item` when that is an object, else the value itself when it has `encrypted_content`;
// - a replay block that is not a text block becomes {type:"text", text:<block_not_text record>};
//   a text block keeps its other members, redacted (R2);
// - a block already read as `redacted_record` stays one: its value redacted (R2), written compactly;
// - in other channels a text is "a JSON object" when it passes E6 steps 1–5 and its value is an
//   object with finite numbers only; every other text is kept verbatim; the display channel is kept
//   verbatim (structurally redacted) unless dropped; message `content` texts are never parsed;
// - compact text: no whitespace, C3 string escapes, ECMAScript number forms (JSON.stringify's);
// - the marker is always last; drop_display_reasoning applies to redacted mode only.
import { isJsonObject, parseStrict, stringify, JsonTextError } from './jsontext.js';
import { readEnvelope, REDACTED_SCHEMA } from './envelope.js';
import { redact, diagnosticView } from './redact.js';
import { ReplayError } from './codes.js';
import { REPLAY_CHANNEL } from './replay.js';

export const EXPORT_MARKER = 'reasoning_replay_export';
export const DISPLAY_CHANNEL = 'reasoning';
export const RESUMABLE_WARNING =
  'This file contains resumable encrypted provider reasoning state (bearer-capable). Keep it private.';
export const REDACTED_NOTE = 'Reasoning replay state was removed; this history is not resumable.';
export const EXPORT_MODES = Object.freeze(['resumable', 'redacted']);

const ROLES = new Set(['user', 'assistant']);
const OBJECT_MEMBERS = ['tool_calls', 'tool_results', 'channels'];

/** H6: the marker value of a mode. */
export function exportMarker(mode) {
  return mode === 'resumable'
    ? { mode: 'resumable', warning: RESUMABLE_WARNING }
    : { mode: 'redacted', note: REDACTED_NOTE };
}

/** Assign a member without ever touching a prototype (`__proto__` is an ordinary name in JSON). */
function setMember(out, name, value) {
  Object.defineProperty(out, name, { value, writable: true, enumerable: true, configurable: true });
}

function isMessage(m) {
  if (!isJsonObject(m) || !ROLES.has(m.role) || !Array.isArray(m.content)) return false;
  for (const name of OBJECT_MEMBERS) {
    const v = Object.hasOwn(m, name) ? m[name] : null;
    if (v !== null && !isJsonObject(v)) return false;
  }
  const channels = Object.hasOwn(m, 'channels') && m.channels !== null ? m.channels : {};
  return Object.values(channels).every(Array.isArray);
}

/** H1: the shape of a history file (null optional members count as absent). */
export function isHistory(h) {
  return isJsonObject(h) && Object.hasOwn(h, 'messages') && Array.isArray(h.messages) && h.messages.every(isMessage);
}

/** P2: a text block is an object whose type is "text" and whose text is a string. */
function isTextBlock(b) {
  return isJsonObject(b) && b.type === 'text' && typeof b.text === 'string';
}

/** Compact text, or null when a number cannot be written (binary64 overflow: not I-JSON). */
function compact(value) {
  try {
    return stringify(value);
  } catch (err) {
    if (err instanceof TypeError) return null;
    throw err;
  }
}

/** The JSON value of a text per E6 steps 1–5, or undefined when the text breaks one of them. */
function strictValue(text) {
  try {
    return parseStrict(text);
  } catch (err) {
    if (err instanceof JsonTextError) return undefined;
    throw err;
  }
}

/** H2: the redacted record object. */
export function redactedRecord(was, view) {
  return { schema: REDACTED_SCHEMA, version: 1, was, view };
}

function viewOfValue(v) {
  if (!isJsonObject(v)) return null;
  if (Object.hasOwn(v, 'item') && isJsonObject(v.item)) return diagnosticView(v.item);
  if (Object.hasOwn(v, 'encrypted_content')) return diagnosticView(v);
  return null;
}

/** H2: the text that replaces a replay block whose text is `text`. */
export function redactedRecordText(text) {
  const verdict = readEnvelope(text);
  if (verdict.ok) return stringify(redactedRecord('resumable', diagnosticView(verdict.item)));
  const value = strictValue(text);
  if (value === undefined) return stringify(redactedRecord(verdict.code, null));
  if (verdict.code === 'redacted_record') {
    return compact(redact(value)) ?? stringify(redactedRecord(verdict.code, null));
  }
  return stringify(redactedRecord(verdict.code, viewOfValue(value)));
}

/** R2 rule 2 for one member of an object redacted member by member. */
function redactMember(name, value) {
  if (name === 'type') return redact(value);
  const one = {};
  setMember(one, name, value);
  return redact(one)[name];
}

function mapBlock(block, textFn) {
  const out = {};
  for (const name of Object.keys(block)) {
    setMember(out, name, name === 'text' ? textFn(block.text) : redactMember(name, block[name]));
  }
  return out;
}

function redactReplayBlock(block) {
  if (!isTextBlock(block)) return { type: 'text', text: stringify(redactedRecord('block_not_text', null)) };
  return mapBlock(block, redactedRecordText);
}

/** R2 for a channel text: the compact redaction of a JSON object text, else the text itself. */
function redactedChannelText(text) {
  const value = strictValue(text);
  if (!isJsonObject(value)) return text;
  return compact(redact(value)) ?? text;
}

function redactChannelBlock(block) {
  return isTextBlock(block) ? mapBlock(block, redactedChannelText) : redact(block);
}

function redactChannels(channels, drop) {
  const out = {};
  for (const name of Object.keys(channels)) {
    const blocks = channels[name];
    if (name === REPLAY_CHANNEL) setMember(out, name, blocks.map(redactReplayBlock));
    else if (name === DISPLAY_CHANNEL) {
      if (!drop) setMember(out, name, redact(blocks)); // R2 never changes a string
    } else setMember(out, name, blocks.map(redactChannelBlock));
  }
  return out;
}

function redactMessage(message, drop) {
  const out = {};
  for (const name of Object.keys(message)) {
    const v = message[name];
    setMember(out, name, name === 'channels' && isJsonObject(v) ? redactChannels(v, drop) : redactMember(name, v));
  }
  return out;
}

/**
 * H6: export a history.
 * @param {unknown} history a history file's JSON value
 * @param {'resumable'|'redacted'} mode
 * @param {{dropDisplayReasoning?: boolean}} [options]
 * @returns {object} the exported history, the marker last
 * @throws {ReplayError} history_malformed when `history` does not have the shape of H1
 */
export function exportHistory(history, mode, { dropDisplayReasoning = false } = {}) {
  if (!EXPORT_MODES.includes(mode)) throw new TypeError(`unknown export mode ${JSON.stringify(mode)}`);
  if (!isHistory(history)) throw new ReplayError('history_malformed', 'not the shape of a history (H1)');
  const out = {};
  for (const name of Object.keys(history)) {
    if (name === EXPORT_MARKER) continue; // replaced, and placed last
    const v = history[name];
    if (mode === 'resumable') setMember(out, name, v);
    else if (name === 'messages') setMember(out, name, v.map((m) => redactMessage(m, dropDisplayReasoning)));
    else setMember(out, name, redactMember(name, v));
  }
  setMember(out, EXPORT_MARKER, exportMarker(mode));
  return out;
}
