// Redaction for diagnostics (SPEC §7, R1–R2). Pure and deterministic: same value in, same value
// out; the input is never mutated.
import { isJsonObject } from './jsontext.js';
import { utf8Length, sha256Hex } from './bytes.js';
import { partStats } from './telemetry.js';

/** R2: exact names, matched after ASCII-only lowercasing (never as substrings). */
export const SENSITIVE_NAMES = Object.freeze([
  'encrypted_content',
  'api_key',
  'authorization',
  'password',
  'secret',
  'client_secret',
  'access_token',
  'refresh_token',
  'id_token',
  'private_key',
]);
const SENSITIVE = new Set(SENSITIVE_NAMES);

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

const VIEW_MEMBERS = ['type', 'id', 'fields', 'encrypted_content_bytes', 'encrypted_content_sha256',
  'summary_parts', 'summary_bytes', 'content_parts', 'content_bytes'];

function hasExactlyMembers(value, names) {
  const keys = Object.keys(value);
  return keys.length === names.length && names.every((n) => Object.hasOwn(value, n));
}

/** R2 rule 1: an object whose member names are exactly those of a diagnostic view (R1). */
export function isDiagnosticViewShape(value) {
  return isJsonObject(value) && hasExactlyMembers(value, VIEW_MEMBERS);
}

/** R2: a replacement object (`{redacted}` or `{redacted, bytes, sha256}`, `redacted` a string). */
export function isReplacement(value) {
  return isJsonObject(value) && typeof value.redacted === 'string' &&
    (hasExactlyMembers(value, ['redacted']) || hasExactlyMembers(value, ['redacted', 'bytes', 'sha256']));
}

/** R2: redact any JSON value. Idempotent: views and replacement objects are left as they are. */
export function redact(value) {
  if (Array.isArray(value)) return value.map(redact);
  if (!isJsonObject(value)) return value;
  if (value.type === 'reasoning' && !isDiagnosticViewShape(value)) return diagnosticView(value);
  const out = {};
  for (const name of Object.keys(value)) {
    const v = value[name];
    const lower = asciiLower(name);
    let r;
    if (!SENSITIVE.has(lower)) r = redact(v);
    else if (isReplacement(v)) r = v;
    else if (lower === 'encrypted_content' && typeof v === 'string') {
      // "The replacement of an encrypted_content string": the label is the canonical name
      // (also for a differently-cased member name), plus size and digest.
      r = { redacted: 'encrypted_content', bytes: utf8Length(v), sha256: sha256Hex(v) };
    } else {
      r = { redacted: name };
    }
    if (name === '__proto__') {
      Object.defineProperty(out, name, { value: r, writable: true, enumerable: true, configurable: true });
    } else {
      out[name] = r;
    }
  }
  return out;
}
