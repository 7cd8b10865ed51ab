// History exports (SPEC H6) and redacted records (SPEC H2). Pure: a history value in, its export
// out; the input is never mutated. H6 decides every detail: replay blocks become redacted
// records; the file, its messages and their channels objects are redacted member by member;
// everything else by R2 with every kept string (names too) redacted as a text (textredact.js).
import { isJsonObject, parseStrict, stringify, JsonTextError } from './jsontext.js';
import { readEnvelope, REDACTED_SCHEMA } from './envelope.js';
import { diagnosticView, isSensitiveName, redactValue, replacement } from './redact.js';
import { redactText } from './textredact.js';
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

/**
 * H6: the marker value of a mode; `displayReasoning` ('duplicated' or 'none') is the resumable
 * marker's own member, a redacted marker has none.
 */
export function exportMarker(mode, displayReasoning = 'none') {
  return mode === 'resumable'
    ? { mode: 'resumable', warning: RESUMABLE_WARNING, display_reasoning: displayReasoning }
    : { mode: 'redacted', note: REDACTED_NOTE };
}

/** H6: 'duplicated' when one assistant message holds a display block and a resumable replay block. */
export function displayReasoning(history) {
  const holdsBoth = (m) => {
    if (m.role !== 'assistant' || !isJsonObject(m.channels)) return false;
    const display = Object.hasOwn(m.channels, DISPLAY_CHANNEL) ? m.channels[DISPLAY_CHANNEL] : [];
    const replay = Object.hasOwn(m.channels, REPLAY_CHANNEL) ? m.channels[REPLAY_CHANNEL] : [];
    // any display block counts, an empty one too (H6)
    return display.length > 0 && replay.some((b) => isTextBlock(b) && readEnvelope(b.text).ok);
  };
  return history.messages.some(holdsBoth) ? 'duplicated' : 'none';
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
  if (verdict.ok) return redactText(stringify(redactedRecord('resumable', diagnosticView(verdict.item))));
  if (verdict.code === 'redacted_record') return redactText(text);
  const value = strictValue(text);
  const view = value === undefined ? null : viewOfValue(value);
  return redactText(stringify(redactedRecord(verdict.code, view)));
}

// Depths (arrays and objects around a value, R2 rule 4) of the parts of a history (H1).
const MESSAGE_MEMBER_DEPTH = 3;
const CHANNEL_DEPTH = 4;
const BLOCK_MEMBER_DEPTH = 6;

/** H6: one member of an object redacted member by member. */
function redactMember(name, value, depth) {
  const written = redactText(name); // the name as written out decides (H6)
  return isSensitiveName(written) ? replacement(written, value, redactText) : redactValue(value, redactText, depth);
}

function redactReplayBlock(block) {
  if (!isTextBlock(block)) return { type: 'text', text: stringify(redactedRecord('block_not_text', null)) };
  const out = {};
  for (const name of Object.keys(block)) {
    setMember(out, redactText(name), name === 'text' ? redactedRecordText(block.text) : redactMember(name, block[name], BLOCK_MEMBER_DEPTH));
  }
  return out;
}

function redactChannels(channels, drop) {
  const out = {};
  for (const name of Object.keys(channels)) {
    const blocks = channels[name];
    if (name === REPLAY_CHANNEL) setMember(out, name, blocks.map(redactReplayBlock));
    else if (name !== DISPLAY_CHANNEL || !drop) setMember(out, redactText(name), redactValue(blocks, redactText, CHANNEL_DEPTH));
  }
  return out;
}

function redactMessage(message, drop) {
  const out = {};
  for (const name of Object.keys(message)) {
    const v = message[name];
    setMember(out, redactText(name), name === 'channels' && isJsonObject(v) ? redactChannels(v, drop) : redactMember(name, v, MESSAGE_MEMBER_DEPTH));
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
    else setMember(out, redactText(name), redactMember(name, v, 1));
  }
  setMember(out, EXPORT_MARKER, exportMarker(mode, displayReasoning(history)));
  return out;
}
