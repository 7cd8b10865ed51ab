// Strict JSON text handling (SPEC §3, E4 / E4.1 / E6 steps 1–5) and a small serializer.
//
// Why our own parser: JSON.parse silently keeps the last of two duplicate members, accepts
// escaped lone surrogates, and cannot report *which* text rule failed first. E6 needs all of
// that with a fixed precedence, so this module scans the text itself.
//
// The parser is iterative (explicit stack), so a deeply nested text can never overflow the call
// stack (E4.2 totality), even when no depth limit is enforced.

/** A JSON syntax/text problem carrying a registry code. */
export class JsonTextError extends Error {
  constructor(code, message, offset) {
    super(message);
    this.name = 'JsonTextError';
    this.code = code;
    this.offset = offset;
  }
}

/**
 * A JSON number kept as its source text. Used only by the lenient protocol parse (rawNumbers),
 * so that values we pass through unchanged (big integers, 1e400, -0) are written back byte for
 * byte instead of being rounded through binary64.
 */
export class JsonNumber {
  constructor(source) {
    this.source = source;
  }
  valueOf() {
    return Number(this.source);
  }
  toString() {
    return this.source;
  }
}

/** True for a JSON object (not an array, not null, not a raw JsonNumber). */
export function isJsonObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof JsonNumber);
}

/** True for a JSON number in either representation. */
export function isJsonNumber(v) {
  return typeof v === 'number' || v instanceof JsonNumber;
}

// E4.1: the fixed limits; a reader accepts up to these and refuses anything beyond.
export const MAX_TEXT_BYTES = 16 * 1024 * 1024;
export const MAX_DEPTH = 32;

const Q = 0x22; // "
const BS = 0x5c; // \

/**
 * Nesting depth as E4.1 defines it for every text: lexically, outside string literals, a closer
 * with nothing open changing nothing. Works on malformed text too,
 * because the limit check precedes every other check (E6 step 1). `units` is a string (UTF-16
 * code units) or a byte array; the structural characters are ASCII in both, and in UTF-8 no byte
 * of a multi-byte sequence is below 0x80, so scanning raw bytes is exact.
 */
export function lexicalDepth(units) {
  // Bytes are viewed as latin1 (one char per byte) so one regex-driven scan serves both forms.
  const s = typeof units === 'string' ? units : Buffer.from(units.buffer, units.byteOffset, units.length).toString('latin1');
  const n = s.length;
  let depth = 0;
  let max = 0;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c === Q) {
      // Skip the string literal: runs of ordinary characters natively, escapes by two units.
      for (i++; i < n; ) {
        STRING_BODY.lastIndex = i;
        STRING_BODY.test(s);
        i = STRING_BODY.lastIndex;
        if (i >= n || s.charCodeAt(i) === Q) break;
        i += 2; // a backslash and the unit it escapes, whatever that is
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) max = depth;
    } else if ((c === 0x5d || c === 0x7d) && depth > 0) {
      depth--;
    }
  }
  return max;
}

const STRING_BODY = /[^"\\]*/y;

// Strict decoder: fatal on any ill-formed sequence (overlongs, surrogates, > U+10FFFF,
// truncation). ignoreBOM keeps a leading U+FEFF in the output so the grammar step can reject it.
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Decode bytes as strict UTF-8; throws JsonTextError json_invalid_unicode. */
export function decodeUtf8Strict(bytes) {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    throw new JsonTextError('json_invalid_unicode', 'bytes are not valid UTF-8', undefined);
  }
}

/**
 * Apply E6 steps 1–5 to a block text (string or bytes) and return its JSON value.
 * Throws JsonTextError with the first failing code.
 * @param {string|Uint8Array} input
 * @param {{maxBytes?: number, maxDepth?: number}} [limits] pass Infinity to disable a limit
 */
export function parseStrict(input, limits = {}) {
  const maxBytes = limits.maxBytes ?? MAX_TEXT_BYTES;
  const maxDepth = limits.maxDepth ?? MAX_DEPTH;
  const isBytes = typeof input !== 'string';

  // Step 1: limits.
  const byteLength = isBytes ? input.length : Buffer.byteLength(input, 'utf8');
  if (byteLength > maxBytes) {
    throw new JsonTextError('limit_exceeded', `text is ${byteLength} bytes`, undefined);
  }
  if (maxDepth !== Infinity && lexicalDepth(input) > maxDepth) {
    throw new JsonTextError('limit_exceeded', `nesting deeper than ${maxDepth}`, undefined);
  }

  // Step 2: encoding. A JS string can carry unpaired surrogate code units, which no UTF-8 byte
  // sequence can: such a string is the string-form equivalent of invalid UTF-8.
  let text;
  if (isBytes) {
    text = decodeUtf8Strict(input);
  } else {
    if (!input.isWellFormed()) {
      throw new JsonTextError('json_invalid_unicode', 'text holds a lone surrogate', undefined);
    }
    text = input;
  }

  // Steps 3–5: grammar first over the whole text, then the findings recorded along the way.
  const r = parseText(text, { rawNumbers: false });
  if (r.loneSurrogateAt >= 0) {
    throw new JsonTextError('json_invalid_unicode', 'escape of a lone surrogate', r.loneSurrogateAt);
  }
  if (r.duplicateAt >= 0) {
    throw new JsonTextError('json_duplicate_member', 'duplicate member name', r.duplicateAt);
  }
  return r.value;
}

/**
 * Parse one RFC 8259 JSON text. Grammar errors (including BOM, empty text, NaN, trailing data)
 * throw JsonTextError('json_malformed'). Lone-surrogate escapes and duplicate member names do not
 * throw: their first offsets are returned so the caller can apply E6 precedence (a grammar error
 * later in the text outranks them) or ignore them (lenient protocol parsing; duplicates then
 * resolve last-wins in the position of the first, as most parsers do).
 *
 * @returns {{value: any, loneSurrogateAt: number, duplicateAt: number, depth: number}}
 */
export function parseText(text, { rawNumbers = false } = {}) {
  return new Parser(text, rawNumbers).run();
}

// eslint-disable-next-line no-control-regex
const PLAIN_RUN = /[^"\\\u0000-\u001f]*/y;

class Parser {
  constructor(s, rawNumbers) {
    this.s = s;
    this.n = s.length;
    this.pos = 0;
    this.rawNumbers = rawNumbers;
    this.loneSurrogateAt = -1;
    this.duplicateAt = -1;
  }

  fail(what) {
    throw new JsonTextError('json_malformed', `${what} at offset ${this.pos}`, this.pos);
  }

  ws() {
    const s = this.s;
    let p = this.pos;
    for (;;) {
      const c = s.charCodeAt(p);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) p++;
      else break;
    }
    this.pos = p;
  }

  run() {
    const s = this.s;
    // A BOM is not whitespace in RFC 8259; it falls out as "unexpected character" below, but we
    // name it for a clearer message.
    if (s.charCodeAt(0) === 0xfeff) this.fail('byte-order mark');
    // Explicit stack of open containers: {arr} or {obj, key}.
    const stack = [];
    let maxDepth = 0;
    let value;
    this.ws();
    parseValue: for (;;) {
      // ---- parse one value start ----
      const c = s.charCodeAt(this.pos);
      if (c === 0x7b /* { */) {
        this.pos++;
        this.ws();
        const obj = {};
        if (s.charCodeAt(this.pos) === 0x7d) {
          this.pos++;
          value = obj;
          if (stack.length + 1 > maxDepth) maxDepth = stack.length + 1;
        } else {
          const frame = { obj, arr: null, key: this.memberName() };
          stack.push(frame);
          if (stack.length > maxDepth) maxDepth = stack.length;
          continue parseValue;
        }
      } else if (c === 0x5b /* [ */) {
        this.pos++;
        this.ws();
        const arr = [];
        if (s.charCodeAt(this.pos) === 0x5d) {
          this.pos++;
          value = arr;
          if (stack.length + 1 > maxDepth) maxDepth = stack.length + 1;
        } else {
          stack.push({ obj: null, arr, key: null });
          if (stack.length > maxDepth) maxDepth = stack.length;
          continue parseValue;
        }
      } else if (c === Q) {
        value = this.string();
      } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
        value = this.number();
      } else if (c === 0x74 && s.startsWith('true', this.pos)) {
        this.pos += 4;
        value = true;
      } else if (c === 0x66 && s.startsWith('false', this.pos)) {
        this.pos += 5;
        value = false;
      } else if (c === 0x6e && s.startsWith('null', this.pos)) {
        this.pos += 4;
        value = null;
      } else {
        this.fail(this.pos >= this.n ? 'unexpected end of text' : 'unexpected character');
      }

      // ---- hand the finished value to its container, closing containers as they end ----
      for (;;) {
        if (stack.length === 0) break parseValue;
        const top = stack[stack.length - 1];
        if (top.arr !== null) {
          top.arr.push(value);
        } else {
          this.setMember(top.obj, top.key, value);
        }
        this.ws();
        const d = s.charCodeAt(this.pos);
        if (d === 0x2c /* , */) {
          this.pos++;
          this.ws();
          if (top.obj !== null) top.key = this.memberName();
          continue parseValue;
        }
        if (top.arr !== null ? d === 0x5d : d === 0x7d) {
          this.pos++;
          stack.pop();
          value = top.arr !== null ? top.arr : top.obj;
          continue;
        }
        this.fail(top.arr !== null ? "expected ',' or ']'" : "expected ',' or '}'");
      }
    }
    this.ws();
    if (this.pos !== this.n) this.fail('trailing data');
    return { value, loneSurrogateAt: this.loneSurrogateAt, duplicateAt: this.duplicateAt, depth: maxDepth };
  }

  /** Parse `"name"` `:` and leave pos at the value. */
  memberName() {
    if (this.s.charCodeAt(this.pos) !== Q) this.fail('expected member name');
    const key = this.string();
    this.ws();
    if (this.s.charCodeAt(this.pos) !== 0x3a /* : */) this.fail("expected ':'");
    this.pos++;
    this.ws();
    return key;
  }

  setMember(obj, key, value) {
    // Names compare as code-point sequences after unescaping (§1.1), which is what own-property
    // lookup on the decoded string does.
    if (Object.hasOwn(obj, key)) {
      if (this.duplicateAt < 0) this.duplicateAt = this.pos;
    }
    if (key === '__proto__') {
      // Plain assignment would set the prototype; a JSON member must be an own data property.
      Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
    } else {
      obj[key] = value;
    }
  }

  string() {
    const s = this.s;
    let p = this.pos + 1; // past the opening quote
    let out = '';
    let chunkStart = p;
    for (;;) {
      if (p >= this.n) {
        this.pos = p;
        this.fail('unterminated string');
      }
      // Skip a run of ordinary characters in one native regex step (big ciphertexts are one run).
      PLAIN_RUN.lastIndex = p;
      PLAIN_RUN.test(s);
      p = PLAIN_RUN.lastIndex;
      if (p >= this.n) continue;
      const c = s.charCodeAt(p);
      if (c === Q) {
        out += s.slice(chunkStart, p);
        this.pos = p + 1;
        return out;
      }
      if (c < 0x20) {
        this.pos = p;
        this.fail('control character in string');
      }
      if (c !== BS) {
        p++;
        continue;
      }
      out += s.slice(chunkStart, p);
      const e = s.charCodeAt(p + 1);
      switch (e) {
        case 0x22: out += '"'; p += 2; break;
        case 0x5c: out += '\\'; p += 2; break;
        case 0x2f: out += '/'; p += 2; break;
        case 0x62: out += '\b'; p += 2; break;
        case 0x66: out += '\f'; p += 2; break;
        case 0x6e: out += '\n'; p += 2; break;
        case 0x72: out += '\r'; p += 2; break;
        case 0x74: out += '\t'; p += 2; break;
        case 0x75: { // \uXXXX
          const u = this.hex4(p + 2);
          p += 6;
          if (u >= 0xd800 && u <= 0xdbff) {
            // A high surrogate is only well-formed when the very next thing is an escaped low one.
            const lo = s.charCodeAt(p) === BS && s.charCodeAt(p + 1) === 0x75 ? this.hex4(p + 2) : -1;
            if (lo >= 0xdc00 && lo <= 0xdfff) {
              out += String.fromCharCode(u, lo);
              p += 6;
            } else {
              if (this.loneSurrogateAt < 0) this.loneSurrogateAt = p - 6;
              out += String.fromCharCode(u);
            }
          } else if (u >= 0xdc00 && u <= 0xdfff) {
            if (this.loneSurrogateAt < 0) this.loneSurrogateAt = p - 6;
            out += String.fromCharCode(u);
          } else {
            out += String.fromCharCode(u);
          }
          break;
        }
        default:
          this.pos = p;
          this.fail('invalid escape');
      }
      chunkStart = p;
    }
  }

  hex4(at) {
    let v = 0;
    for (let i = 0; i < 4; i++) {
      const c = this.s.charCodeAt(at + i);
      let d;
      if (c >= 0x30 && c <= 0x39) d = c - 0x30;
      else if (c >= 0x61 && c <= 0x66) d = c - 0x57;
      else if (c >= 0x41 && c <= 0x46) d = c - 0x37;
      else {
        this.pos = at + i;
        this.fail('invalid \\u escape');
      }
      v = v * 16 + d;
    }
    return v;
  }

  number() {
    const s = this.s;
    const start = this.pos;
    let p = start;
    const digit = (c) => c >= 0x30 && c <= 0x39;
    if (s.charCodeAt(p) === 0x2d) p++;
    const first = s.charCodeAt(p);
    if (first === 0x30) {
      p++; // a leading zero stands alone; "01" fails at the container level as trailing data
    } else if (digit(first)) {
      while (digit(s.charCodeAt(p))) p++;
    } else {
      this.pos = p;
      this.fail('invalid number');
    }
    if (s.charCodeAt(p) === 0x2e /* . */) {
      p++;
      if (!digit(s.charCodeAt(p))) {
        this.pos = p;
        this.fail('invalid number fraction');
      }
      while (digit(s.charCodeAt(p))) p++;
    }
    const e = s.charCodeAt(p);
    if (e === 0x65 || e === 0x45) {
      p++;
      const sign = s.charCodeAt(p);
      if (sign === 0x2b || sign === 0x2d) p++;
      if (!digit(s.charCodeAt(p))) {
        this.pos = p;
        this.fail('invalid number exponent');
      }
      while (digit(s.charCodeAt(p))) p++;
    }
    this.pos = p;
    const src = s.slice(start, p);
    // Number() of a grammar-valid literal is correctly rounded binary64 (E1: compare by value).
    return this.rawNumbers ? new JsonNumber(src) : Number(src);
  }
}

// ---------------------------------------------------------------------------------------------
// Serializer.
//
// String escaping is RFC 8785 §3.2.2.2 (what C3 requires): only '"', '\\' and U+0000–U+001F are
// escaped, with the short forms where they exist and lowercase \u00xx otherwise; everything else
// is raw UTF-8. Two opt-in extras serve the line protocol, never canonical bytes:
//  - lone surrogates (possible in pass-through data) become \udxxx escapes, so the output is
//    valid UTF-8; canonical output never contains them because the writer rejects them (C2);
//  - escapeLineSeparators writes U+2028/U+2029 as escapes, so line-splitting readers that treat
//    them as line breaks cannot cut a reply in two.

const SHORT_ESCAPES = { 0x08: '\\b', 0x09: '\\t', 0x0a: '\\n', 0x0c: '\\f', 0x0d: '\\r', 0x22: '\\"', 0x5c: '\\\\' };
// eslint-disable-next-line no-control-regex
const NEEDS_ESCAPE = /["\\\u0000-\u001f\u2028\u2029\ud800-\udfff]/;

function hex4(c) {
  return '\\u' + c.toString(16).padStart(4, '0');
}

export function quoteString(str, escapeLineSeparators = false) {
  if (!NEEDS_ESCAPE.test(str)) return '"' + str + '"';
  let out = '"';
  let chunk = 0;
  const n = str.length;
  for (let i = 0; i < n; i++) {
    const c = str.charCodeAt(i);
    let rep;
    if (c < 0x20 || c === 0x22 || c === 0x5c) {
      rep = SHORT_ESCAPES[c] ?? hex4(c);
    } else if (c >= 0xd800 && c <= 0xdfff) {
      const next = str.charCodeAt(i + 1);
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        i++; // a proper pair: raw
        continue;
      }
      rep = hex4(c);
    } else if ((c === 0x2028 || c === 0x2029) && escapeLineSeparators) {
      rep = hex4(c);
    } else {
      continue;
    }
    out += str.slice(chunk, i) + rep;
    chunk = i + 1;
  }
  return out + str.slice(chunk) + '"';
}

/**
 * Compact JSON text of a value, members in insertion order. Throws on values JSON cannot hold
 * (non-finite numbers, functions, ...) rather than writing something else silently.
 */
export function stringify(value, { escapeLineSeparators = false } = {}) {
  const parts = [];
  write(value);
  return parts.join('');

  function write(v) {
    if (v === null) parts.push('null');
    else if (v === true) parts.push('true');
    else if (v === false) parts.push('false');
    else if (typeof v === 'string') parts.push(quoteString(v, escapeLineSeparators));
    else if (typeof v === 'number') {
      if (!Number.isFinite(v)) throw new TypeError('non-finite number is not JSON');
      parts.push(Object.is(v, -0) ? '0' : String(v));
    } else if (v instanceof JsonNumber) parts.push(v.source);
    else if (Array.isArray(v)) {
      parts.push('[');
      for (let i = 0; i < v.length; i++) {
        if (i) parts.push(',');
        write(v[i]);
      }
      parts.push(']');
    } else if (typeof v === 'object') {
      parts.push('{');
      let first = true;
      for (const k of Object.keys(v)) {
        const m = v[k];
        if (m === undefined) continue;
        if (!first) parts.push(',');
        first = false;
        parts.push(quoteString(k, escapeLineSeparators), ':');
        write(m);
      }
      parts.push('}');
    } else {
      throw new TypeError(`${typeof v} is not a JSON value`);
    }
  }
}
