// Secrets in text that is not JSON (SPEC H8 "Text forms"): assignments of sensitive names,
// ciphertext-shaped base64 runs, and encoded texts (base64 runs, percent escapes, HTML character
// references), read in the gaps of a text that no JSON value or fragment covers. The regular
// expressions are the reference's, so both implementations read a gap alike.
import { isSensitiveName, normalName } from './redact.js';

export const MAX_DECODINGS = 4;
export const REDACTED_VALUE = '[redacted]';
const FERNET_PREFIX = 'gAAAAA';
const MIN_FERNET_CHARS = 100;
const MIN_LONG_RUN_CHARS = 200;
const MIN_DECODED_RUN_CHARS = 16;
const VIEW_MEASURE_NAMES = new Set(['encryptedcontentbytes', 'encryptedcontentsha256']);
const BASE64_RUN = /(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]+={0,2}(?![A-Za-z0-9+/_=-])/g;
const ASSIGNMENT_NAME = /("(?:[^"\\\n]|\\[^\n])*")|('[^'\\\n]*')|<([A-Za-z_][A-Za-z0-9_.:-]*)(?:[ \t][^<>]*)?>|(?<![A-Za-z0-9_.-])([A-Za-z0-9_.-]+)(?:\\*["'])?/g;
const SEPARATOR = /[ \t]*[:=][ \t]*|[ \t]+/y;
const BARE_AFTER_COLON = /[^\n\r"'`<>{}[\](),;&]*/y;
const BARE_AFTER_EQUALS = /[^ \t\n\r\f\v"'`<>{}[\](),;&]*/y;
const XML_CONTENT = /[^<]*/y;
// H8: a YAML block scalar header ending its line; its value is the more indented lines after it.
const BLOCK_SCALAR_HEADER = /[|>](?:[1-9][-+]?|[-+][1-9]?)?(?:[ \t]+#[^\n\r]*)?[ \t]*(?![^\n\r])/y;
const LINE = /(\r\n|\r|\n)([^\n\r]*)/y;
const OPENING_QUOTE = /(\\*)(["'])/y;
const PERCENT = /%[0-9A-Fa-f]{2}/;
const REFERENCE = /&(?:(quot|amp|lt|gt|apos)|#([0-9]{1,7})|#[xX]([0-9A-Fa-f]{1,6}));/g;
const NAMED_REFERENCES = { quot: '"', amp: '&', lt: '<', gt: '>', apos: "'" };
const UTF8 = new TextDecoder('utf-8', { fatal: true });
// H8: a percent-decoding is read with U+FFFD for bytes that are not UTF-8.
const UTF8_LOSSY = new TextDecoder('utf-8');
// H8: the spaces an XML element's text is trimmed of: U+0009 to U+000D and U+0020.
const XML_SPACES = /^[\t-\r ]*([^]*?)[\t-\r ]*$/;

/** H8: a base64 run that is replay material by its shape alone. */
export function isCiphertextShaped(run) {
  if (run.startsWith(FERNET_PREFIX) && run.length >= MIN_FERNET_CHARS) return true;
  return run.length >= MIN_LONG_RUN_CHARS && /[A-Z]/.test(run) && /[a-z]/.test(run) && /[0-9]/.test(run);
}

/** H6: what replaces a ciphertext-shaped run. */
export function ciphertextToken(size, digest) {
  return `[redacted encrypted_content bytes=${size} sha256=${digest}]`;
}

function stickyMatch(re, text, index) {
  re.lastIndex = index;
  return re.exec(text);
}

function nameOf(m) {
  if (m[1] !== undefined) {
    try {
      const decoded = JSON.parse(m[1]);
      return typeof decoded === 'string' ? decoded : m[1].slice(1, -1);
    } catch {
      return m[1].slice(1, -1);
    }
  }
  if (m[2] !== undefined) return m[2].slice(1, -1);
  return m[3] !== undefined ? m[3] : m[4];
}

/** H8: where a value quoted at an escape level ends, as a fragment's does: at a quote after its
 * backslashes (plus escaped pairs), or after none at every level. [value end, index after it]. */
export function quotedEnd(text, start, quote, backslashes) {
  let i = start;
  const end = text.length;
  const step = 2 * (backslashes + 1);
  while (i < end) {
    const ch = text[i];
    if (ch === '\\') {
      const runStart = i;
      while (i < end && text[i] === '\\') i++;
      const run = i - runStart;
      const closing = run >= backslashes && (run - backslashes) % step === 0;
      if (i < end && text[i] === quote && closing) return [i - backslashes, i + 1];
      i++;
    } else if (ch === quote) return [i, i + 1];
    else i++;
  }
  return [end, end];
}

function indentation(line) {
  return line.length - line.replace(/^ +/, '').length;
}

/** H8: where a block scalar's value ends: after the last line more indented than the
 * assignment's line (blank lines among them), or at the header's end. */
function blockScalarEnd(gap, nameStart, headerEnd) {
  const lineStart = Math.max(gap.lastIndexOf('\n', nameStart - 1), gap.lastIndexOf('\r', nameStart - 1)) + 1;
  const indent = indentation(gap.slice(lineStart, nameStart));
  let end = headerEnd;
  let position = headerEnd;
  let line;
  while ((line = stickyMatch(LINE, gap, position)) !== null) {
    position = LINE.lastIndex;
    if (line[2].replace(/[ \t]/g, '') === '') continue;
    if (indentation(line[2]) <= indent) break;
    end = position;
  }
  return end;
}

function valueSpan(gap, m) {
  let index = m.index + m[0].length;
  if (m[3] !== undefined) {
    const content = stickyMatch(XML_CONTENT, gap, index)[0];
    const trimmed = XML_SPACES.exec(content)[1];
    if (trimmed === '') return null;
    const start = index + content.length - content.replace(/^[\t-\r ]+/, '').length;
    return [start, start + trimmed.length, index + content.length];
  }
  const sep = stickyMatch(SEPARATOR, gap, index);
  if (sep === null) return null;
  const separator = sep[0];
  index += separator.length;
  if (!separator.includes(':') && !separator.includes('=')) {
    if (m[4] === undefined || !m[4].startsWith('-')) return null;
  }
  const opening = stickyMatch(OPENING_QUOTE, gap, index);
  if (opening !== null) {
    const start = index + opening[0].length;
    const [valueEnd, after] = quotedEnd(gap, start, opening[2], opening[1].length);
    return valueEnd > start ? [start, valueEnd, after] : null;
  }
  const header = separator.includes(':') ? stickyMatch(BLOCK_SCALAR_HEADER, gap, index) : null;
  if (header !== null) {
    const end = blockScalarEnd(gap, m.index, index + header[0].length);
    return [index, end, end];
  }
  const bare = stickyMatch(separator.includes(':') ? BARE_AFTER_COLON : BARE_AFTER_EQUALS, gap, index)[0];
  const value = bare.replace(/[ \t]+$/, '');
  return value ? [index, index + value.length, index + value.length] : null;
}

/** H8: the assignments of a sensitive name in a gap, left to right. */
export function* assignments(gap) {
  let position = 0;
  for (;;) {
    ASSIGNMENT_NAME.lastIndex = position;
    const m = ASSIGNMENT_NAME.exec(gap);
    if (m === null) return;
    const name = nameOf(m);
    const sensitive = isSensitiveName(name) && !VIEW_MEASURE_NAMES.has(normalName(name));
    const span = sensitive ? valueSpan(gap, m) : null;
    if (span === null) {
      position = m.index + 1;
      continue;
    }
    yield { name, valueStart: span[0], valueEnd: span[1], end: span[2] };
    position = span[2];
  }
}

/** H8: the base64 runs of a gap, as [index, run]. */
export function* base64Runs(gap) {
  BASE64_RUN.lastIndex = 0;
  for (const m of gap.matchAll(BASE64_RUN)) yield [m.index, m[0]];
}

/** H8: the UTF-8 text a base64 run of at least 16 characters decodes to, or null. */
export function base64Decoded(run) {
  if (run.length < MIN_DECODED_RUN_CHARS) return null;
  const body = run.replace(/=+$/, '');
  const standard = /[+/]/.test(body);
  const urlSafe = /[-_]/.test(body);
  if ((standard && urlSafe) || body.length % 4 === 1) return null;
  const bytes = Buffer.from(body, urlSafe ? 'base64url' : 'base64');
  try {
    return UTF8.decode(bytes);
  } catch {
    return null;
  }
}

/** H8: the text with its percent escapes decoded, or null when it has none: its UTF-8 (a lone
 * surrogate as U+FFFD) with each escape's byte in place, read with U+FFFD for what is not UTF-8. */
export function percentDecoded(text) {
  if (!PERCENT.test(text)) return null;
  const encoder = new TextEncoder();
  const bytes = [];
  let i = 0;
  while (i < text.length) {
    if (text[i] === '%' && /^[0-9A-Fa-f]{2}$/.test(text.slice(i + 1, i + 3))) {
      bytes.push(parseInt(text.slice(i + 1, i + 3), 16));
      i += 3;
    } else {
      const cp = text.codePointAt(i);
      const ch = String.fromCodePoint(cp);
      for (const b of encoder.encode(ch)) bytes.push(b);
      i += ch.length;
    }
  }
  return UTF8_LOSSY.decode(Uint8Array.from(bytes));
}

/** H8: the text with its HTML character references decoded, or null when it has none. */
export function referencesDecoded(text) {
  REFERENCE.lastIndex = 0;
  if (!REFERENCE.test(text)) return null;
  return text.replace(REFERENCE, (whole, named, decimal, hex) => {
    if (named !== undefined) return NAMED_REFERENCES[named];
    const code = decimal !== undefined ? parseInt(decimal, 10) : parseInt(hex, 16);
    if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return whole;
    return String.fromCodePoint(code);
  });
}

/** H8: the parts of `text` outside sorted, non-overlapping `spans`, as [start, part]. */
export function* gaps(text, spans) {
  let position = 0;
  for (const [start, end] of spans) {
    if (start > position) yield [position, text.slice(position, start)];
    position = Math.max(position, end);
  }
  if (position < text.length) yield [position, text.slice(position)];
}
