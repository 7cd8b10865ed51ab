// The writer (SPEC §4): C1 completed items only, C2 allowlist copy, C3 canonical bytes,
// C4 self-check with the reader.
import { ReplayError } from './codes.js';
import { isJsonObject, quoteString } from './jsontext.js';
import { ENVELOPE_SCHEMA, readEnvelope } from './envelope.js';

/** C1: sources carrying an item's final state. */
export const FINAL_SOURCES = Object.freeze([
  'response.output_item.done',
  'response.completed',
  'response.incomplete',
]);
/** C1: the one named source that must never be captured from. */
export const PARTIAL_SOURCE = 'response.output_item.added';

const FINAL_SOURCE_SET = new Set(FINAL_SOURCES);

/**
 * Capture one provider output item. Returns the canonical envelope text (C3); throws a
 * ReplayError with the first failing code, in C2's order: source, not-reasoning, status, then the
 * fields in E6 step 13 order. Nothing partial is ever returned.
 */
export function captureEnvelopeText(outputItem, source) {
  return canonicalEnvelopeText(captureItem(outputItem, source));
}

/** C1 + C2: the allowlisted replay item, members already in canonical order. */
export function captureItem(outputItem, source) {
  // C1: source first.
  if (!FINAL_SOURCE_SET.has(source)) {
    if (source === PARTIAL_SOURCE) throw new ReplayError('capture_not_completed', 'source is response.output_item.added');
    throw new ReplayError('capture_source_unknown', `unknown capture source ${describe(source)}`);
  }

  // C4: accept an SDK object as well as plain JSON. The JS convention for "give me your JSON
  // form" is toJSON(); nothing SDK-specific is imported.
  const it = plain(outputItem);

  if (!isJsonObject(it) || it.type !== 'reasoning') {
    throw new ReplayError('capture_not_reasoning', 'output item is not an object of type reasoning');
  }
  // C1: status absent, null or "completed" only.
  if (Object.hasOwn(it, 'status') && it.status !== null && it.status !== 'completed') {
    throw new ReplayError('capture_not_completed', 'item status is not completed');
  }

  const id = plain(it.id);
  if (!isScalarString(id) || id.length === 0) throw new ReplayError('item_id_invalid');

  const summary = copyParts(plain(it.summary), 'summary_text', 'item_summary_invalid');

  const ciphertext = plain(it.encrypted_content);
  if (!isScalarString(ciphertext) || ciphertext.length === 0) throw new ReplayError('item_ciphertext_invalid');

  const item = { type: 'reasoning', id, summary, encrypted_content: ciphertext };

  // absent, null and [] are "no content" and omitted, never stored (C2, E3)
  const content = plain(it.content);
  if (content !== undefined && content !== null && !(Array.isArray(content) && content.length === 0)) {
    item.content = copyParts(content, 'reasoning_text', 'item_content_invalid');
  }
  return item;
}

/** Copy a part list keeping only {type, text}; order, boundaries and text untouched. */
function copyParts(list, partType, code) {
  if (!Array.isArray(list)) throw new ReplayError(code);
  return list.map((raw) => {
    const part = plain(raw);
    if (!isJsonObject(part) || part.type !== partType || !isScalarString(part.text)) {
      throw new ReplayError(code);
    }
    return { type: partType, text: part.text };
  });
}

/**
 * C3: the canonical bytes (as a JS string; UTF-8 encoding it gives the bytes). Member order is
 * fixed here rather than relying on the caller's object; strings use RFC 8785 escaping.
 * C4: the text is checked by the reader before it is handed out.
 */
export function canonicalEnvelopeText(item) {
  let text = '{"schema":' + quoteString(ENVELOPE_SCHEMA) + ',"version":1,"item":{"type":"reasoning","id":' +
    quoteString(item.id) + ',"summary":' + partsText(item.summary, 'summary_text') +
    ',"encrypted_content":' + quoteString(item.encrypted_content);
  if (item.content !== undefined) text += ',"content":' + partsText(item.content, 'reasoning_text');
  text += '}}';
  const verdict = readEnvelope(text);
  if (!verdict.ok) {
    // Unreachable if C2 is implemented right; never hand out an envelope our reader refuses.
    throw new Error(`writer produced a non-canonical envelope (${verdict.code})`);
  }
  return text;
}

function partsText(parts, partType) {
  return '[' + parts.map((p) => '{"type":"' + partType + '","text":' + quoteString(p.text) + '}').join(',') + ']';
}

/** Unicode scalar values only (C2): a JS string with a lone surrogate fails. */
function isScalarString(v) {
  return typeof v === 'string' && v.isWellFormed();
}

function plain(v) {
  return v !== null && typeof v === 'object' && typeof v.toJSON === 'function' ? v.toJSON() : v;
}

function describe(v) {
  return typeof v === 'string' ? JSON.stringify(v) : `of type ${v === null ? 'null' : typeof v}`;
}
