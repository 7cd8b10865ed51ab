// Redaction for diagnostics (SPEC §7, R1–R2). Pure and deterministic: same value in, same value
// out; the input is never mutated.
import { isJsonObject, isJsonNumber } from './jsontext.js';
import { utf8Length, sha256Hex } from './bytes.js';
import { partStats } from './telemetry.js';

/** R2: a name is sensitive when its normal form contains one of these fragments. */
export const SENSITIVE_FRAGMENTS = Object.freeze(['token', 'secret', 'password', 'passwd', 'auth',
  'privatekey', 'apikey', 'accesskey', 'credential', 'cookie', 'encryptedcontent']);
/** R2: the members of a name/value pair, by normal form. */
export const PAIR_NAME_MEMBERS = Object.freeze(['name', 'key']);
export const MAX_REDACTION_DEPTH = 256; // R2 rule 4

/**
 * ASCII lowercasing only. String.prototype.toLowerCase is Unicode-aware and would, for example,
 * map KELVIN SIGN (U+212A) to "k", making "\u212Aey"-style names match; R2 says ASCII.
 */
export function asciiLower(s) {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

/** Compare strings by Unicode code point (JS's default sort compares UTF-16 code units). */
export function compareCodePoints(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; ) {
    const ca = a.codePointAt(i);
    const cb = b.codePointAt(i);
    if (ca !== cb) return ca - cb;
    i += ca > 0xffff ? 2 : 1; // equal code points have equal widths
  }
  return a.length - b.length; // a proper prefix sorts first
}

/** R2: ASCII letters lowercased, every character that is not an ASCII letter or digit removed. */
export function normalName(name) {
  return asciiLower(name).replace(/[^a-z0-9]+/g, '');
}

/** R2: whether a member's value is replaced. */
export function isSensitiveName(name) {
  const n = normalName(name);
  return SENSITIVE_FRAGMENTS.some((f) => n.includes(f));
}

/** R2: the sensitive name a name/value pair names (as written out through `text`), or null. */
export function pairName(value, text) {
  let named = null;
  for (const k of Object.keys(value)) {
    const held = value[k];
    if (PAIR_NAME_MEMBERS.includes(normalName(text(k))) && typeof held === 'string') {
      const written = text(held);
      if (isSensitiveName(written)) named = written;
    }
  }
  return named;
}

/** R2: a count is a number whose value is a whole number >= 0. */
export function isCount(v) {
  if (!isJsonNumber(v)) return false;
  const n = Number(v); // also unwraps a raw JsonNumber from the protocol parse
  return Number.isInteger(n) && n >= 0;
}

/** R2: 64 lowercase hexadecimal digits. */
export function isSha256Hex(v) {
  return typeof v === 'string' && /^[0-9a-f]{64}$/.test(v);
}

/** R1: the diagnostic view of an object whose type is "reasoning" (canonical or not). */
export function diagnosticView(item) {
  const ct = item.encrypted_content;
  const hasCt = typeof ct === 'string';
  const summary = partStats(item.summary);
  const content = partStats(item.content);
  return {
    type: 'reasoning',
    id: typeof item.id === 'string' ? item.id : null,
    fields: Object.keys(item).sort(compareCodePoints),
    encrypted_content_bytes: hasCt ? utf8Length(ct) : null,
    encrypted_content_sha256: hasCt ? sha256Hex(ct) : null,
    summary_parts: summary.parts,
    summary_bytes: summary.bytes,
    content_parts: content.parts,
    content_bytes: content.bytes,
  };
}

export const VIEW_MEMBERS = Object.freeze(['type', 'id', 'fields', 'encrypted_content_bytes',
  'encrypted_content_sha256', 'summary_parts', 'summary_bytes', 'content_parts', 'content_bytes']);

function hasExactlyMembers(value, names) {
  const keys = Object.keys(value);
  return keys.length === names.length && names.every((n) => Object.hasOwn(value, n));
}

/** R2 rule 1: exactly the members of a view (R1), each of its form. */
export function isDiagnosticView(v) {
  if (!isJsonObject(v) || !hasExactlyMembers(v, VIEW_MEMBERS) || v.type !== 'reasoning') return false;
  return (v.id === null || typeof v.id === 'string') &&
    Array.isArray(v.fields) && v.fields.every((f) => typeof f === 'string') &&
    (v.encrypted_content_bytes === null || isCount(v.encrypted_content_bytes)) &&
    (v.encrypted_content_sha256 === null || isSha256Hex(v.encrypted_content_sha256)) &&
    VIEW_MEMBERS.slice(5).every((n) => isCount(v[n]));
}

/** R2: whether `value` already is the replacement of member `name`'s value. */
export function isReplacement(value, name) {
  if (!isJsonObject(value)) return false;
  if (hasExactlyMembers(value, ['redacted'])) return value.redacted === name;
  return hasExactlyMembers(value, ['redacted', 'bytes', 'sha256']) && value.redacted === 'encrypted_content' &&
    isCount(value.bytes) && isSha256Hex(value.sha256);
}

function setMember(out, name, value) {
  Object.defineProperty(out, name, { value, writable: true, enumerable: true, configurable: true });
}

/** R2: the value replacing member `name`'s `value` (kept strings passed through `text`). */
export function replacement(name, value, text) {
  if (isReplacement(value, name)) {
    const out = {};
    for (const k of Object.keys(value)) setMember(out, k, typeof value[k] === 'string' ? text(value[k]) : value[k]);
    return out;
  }
  if (normalName(name) === 'encryptedcontent' && typeof value === 'string') {
    return { redacted: 'encrypted_content', bytes: utf8Length(value), sha256: sha256Hex(value) };
  }
  return { redacted: text(name) };
}

const keep = (s) => s;

/** R2: redact any JSON value. Idempotent. */
export function redact(value) {
  return redactValue(value, keep, 0);
}

/** R2 with every string it keeps (member names too) passed through `text`; `depth` counts the
 * arrays and objects around `value`. */
export function redactValue(value, text, depth = 0) {
  if (typeof value === 'string') return text(value);
  const container = Array.isArray(value) || isJsonObject(value);
  if (!container) return value;
  if (depth >= MAX_REDACTION_DEPTH) return { redacted: 'nesting' };
  if (Array.isArray(value)) return value.map((e) => redactValue(e, text, depth + 1));
  if (value.type === 'reasoning') {
    const view = isDiagnosticView(value) ? value : diagnosticView(value);
    const out = {};
    for (const k of Object.keys(view)) {
      const m = view[k];
      setMember(out, k, k === 'fields' ? m.map(text) : typeof m === 'string' ? text(m) : m);
    }
    return out;
  }
  const out = {};
  const paired = pairName(value, text);
  for (const name of Object.keys(value)) {
    const v = value[name];
    const written = text(name); // the name as written out decides (H6)
    let member;
    if (isSensitiveName(written)) member = replacement(written, v, text);
    else if (paired !== null && normalName(written) === 'value') member = replacement(paired, v, text); // R2 pairs
    else member = redactValue(v, text, depth + 1);
    setMember(out, written, member);
  }
  return out;
}
