// The redaction of a text (SPEC H6), reading texts as the leak scan does (SPEC H8): one JSON
// value read leniently (duplicates, lone-surrogate escapes, NaN/Infinity, any depth), or else
// the values and `encrypted_content` fragments embedded in it. Values are redacted where they
// stand (R2, strings and names as texts again), fragment values replaced; every other character
// is kept. A result that a second pass would change again becomes the whole-text marker.
import { quoteString, stringify } from './jsontext.js';
import { utf8Length, sha256Hex } from './bytes.js';
import { compareCodePoints, isSensitiveName, normalName, isSha256Hex, PAIR_NAME_MEMBERS, VIEW_MEMBERS } from './redact.js';
import {
  MAX_DECODINGS, REDACTED_VALUE, assignments, base64Decoded, base64Runs, ciphertextToken, gaps,
  isCiphertextShaped, percentDecoded, referencesDecoded,
} from './textforms.js';

const SPACE = /[ \t\n\r]*/y;
const STRING = /"[^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*)*"/y;
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?/y;
const LITERALS = ['true', 'false', 'null', 'NaN', 'Infinity', '-Infinity'];
const NON_NUMBERS = new Set(LITERALS);
const FRAGMENT = String.raw`(\\*)"encrypted_content\1"[ \t\n\r\f\v]*:[ \t\n\r\f\v]*\1"`;
const MAX_DECODE_FAILURES = 64; // H8

function skipSpace(text, i) {
  SPACE.lastIndex = i;
  SPACE.exec(text);
  return SPACE.lastIndex;
}

function stringAt(text, i) {
  STRING.lastIndex = i;
  const m = STRING.exec(text);
  if (m === null) return null;
  const literal = m[0];
  return { kind: 'string', start: i, end: i + literal.length, value: literal.includes('\\') ? JSON.parse(literal) : literal.slice(1, -1) };
}

function scalarAt(text, i) {
  for (const lit of LITERALS) if (text.startsWith(lit, i)) return { kind: 'scalar', start: i, end: i + lit.length, lexeme: lit };
  NUMBER.lastIndex = i;
  const m = NUMBER.exec(text);
  return m === null ? null : { kind: 'scalar', start: i, end: i + m[0].length, lexeme: m[0] };
}

function nameAndColon(text, i) {
  const name = stringAt(text, i);
  if (name === null) return null;
  const j = skipSpace(text, name.end);
  if (text[j] !== ':') return null;
  return [name, skipSpace(text, j + 1)];
}

/** H8: the value starting exactly at `index` and the index after it, or null. Iterative. */
export function parseAt(text, index) {
  const stack = [];
  const names = [];
  for (;;) {
    let node;
    const ch = text[index];
    if (ch === '{' || ch === '[') {
      const after = skipSpace(text, index + 1);
      const container = ch === '{' ? { kind: 'object', start: index, end: -1, members: [] } : { kind: 'array', start: index, end: -1, elements: [] };
      if (text[after] === (ch === '{' ? '}' : ']')) {
        container.end = after + 1;
        node = container;
        index = after + 1;
      } else {
        stack.push(container);
        if (ch === '{') {
          const named = nameAndColon(text, after);
          if (named === null) return null;
          names.push(named[0]);
          index = named[1];
        } else index = after;
        continue;
      }
    } else {
      node = ch === '"' ? stringAt(text, index) : scalarAt(text, index);
      if (node === null) return null;
      index = node.end;
    }
    let next = false;
    while (stack.length) {
      const top = stack[stack.length - 1];
      if (top.kind === 'object') top.members.push({ name: names.pop(), value: node });
      else top.elements.push(node);
      index = skipSpace(text, index);
      const c = text[index];
      if (c === ',') {
        index = skipSpace(text, index + 1);
        if (top.kind === 'object') {
          const named = nameAndColon(text, index);
          if (named === null) return null;
          names.push(named[0]);
          index = named[1];
        }
        next = true;
        break;
      }
      if (c !== (top.kind === 'object' ? '}' : ']')) return null;
      stack.pop();
      top.end = index + 1;
      node = top;
      index += 1;
    }
    if (!next) return [node, index];
  }
}

function parseWhole(text) {
  const parsed = parseAt(text, skipSpace(text, 0));
  if (parsed === null) return null;
  return skipSpace(text, parsed[1]) === text.length ? parsed[0] : null;
}

function unescapeLevels(raw, backslashes) {
  const levels = 31 - Math.clz32(backslashes + 1);
  if ((1 << levels) - 1 !== backslashes) return null;
  let value = raw;
  for (let k = 0; k <= levels; k++) {
    try {
      value = JSON.parse('"' + value + '"');
    } catch {
      return null;
    }
  }
  return value;
}

function readFragment(text, start, backslashes) {
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
      if (i < end && text[i] === '"' && closing) {
        const valueEnd = i - backslashes;
        return { value: unescapeLevels(text.slice(start, valueEnd), backslashes), terminated: true, end: i + 1 };
      }
      i++;
    } else if (ch === '"') {
      return { value: backslashes === 0 ? unescapeLevels(text.slice(start, i), 0) : null, terminated: true, end: i + 1 };
    } else i++;
  }
  return { value: null, terminated: false, end };
}

/** H8: embedded values and fragments of a text that is not one JSON value, left to right. */
function* embeddedParts(text) {
  let position = 0;
  let failures = 0;
  let pattern = new RegExp('[{[]|' + FRAGMENT, 'gi');
  for (;;) {
    pattern.lastIndex = position;
    const m = pattern.exec(text);
    if (m === null) return;
    const start = m.index;
    if (m[1] === undefined) {
      const parsed = parseAt(text, start);
      if (parsed === null) {
        failures += 1;
        if (failures >= MAX_DECODE_FAILURES) pattern = new RegExp(FRAGMENT, 'gi');
        position = start + 1;
        continue;
      }
      yield { kind: 'value', start, end: parsed[1], node: parsed[0] };
      position = parsed[1];
      continue;
    }
    const backslashes = m[1].length;
    const valueStart = start + m[0].length;
    const fragment = readFragment(text, valueStart, backslashes);
    yield { kind: 'fragment', start, opening: valueStart - backslashes - 1, backslashes, fragment };
    position = fragment.end;
  }
}

function ciphertextReplacement(value) {
  return stringify({ redacted: 'encrypted_content', bytes: utf8Length(value), sha256: sha256Hex(value) });
}

function fragmentReplacement(part) {
  const { value, terminated } = part.fragment;
  let text = terminated && value !== null ? ciphertextReplacement(value) : stringify({ redacted: 'encrypted_content' });
  const levels = 31 - Math.clz32(part.backslashes + 1);
  for (let k = 0; k < levels; k++) text = quoteString(text).slice(1, -1);
  return text;
}

/** H6: the whole-text marker. */
export function textMarker(text) {
  return stringify({ redacted: 'text', bytes: utf8Length(text), sha256: sha256Hex(text) });
}

/** H6: the redaction of a text; the text itself when nothing in it is redacted. */
export function redactText(text) {
  return redactTextAt(text, 0);
}

function redactTextAt(text, decodings) {
  const once = redactOnce(text, decodings);
  if (once === text || redactOnce(once, decodings) === once) return once;
  return textMarker(text);
}

const changes = (text, decodings) => redactTextAt(text, decodings) !== text;

function redactOnce(text, decodings) {
  const edits = [];
  const whole = /["[{]/.test(text) ? parseWhole(text) : null;
  if (whole !== null) valueEdits(whole, edits, decodings);
  else {
    const spans = [];
    for (const part of embeddedParts(text)) {
      if (part.kind === 'value') {
        valueEdits(part.node, edits, decodings);
        spans.push([part.start, part.end]);
      } else {
        edits.push([part.opening, part.fragment.end, fragmentReplacement(part)]);
        spans.push([part.start, part.fragment.end]);
      }
    }
    for (const [start, gap] of gaps(text, spans)) gapEdits(gap, start, edits, decodings);
  }
  const redacted = apply(text, edits);
  if (decodings < MAX_DECODINGS) {
    for (const decode of [percentDecoded, referencesDecoded]) {
      const decoded = decode(redacted);
      if (decoded !== null && changes(decoded, decodings + 1)) return textMarker(text);
    }
  }
  return redacted;
}

function apply(text, edits) {
  if (!edits.length) return text;
  edits.sort((a, b) => a[0] - b[0]);
  let out = '';
  let copied = 0;
  for (const [start, end, rep] of edits) {
    out += text.slice(copied, start) + rep;
    copied = end;
  }
  return out + text.slice(copied);
}

function gapEdits(gap, offset, edits, decodings) {
  const values = [];
  for (const found of assignments(gap)) {
    if (gap.slice(found.valueStart, found.valueEnd) !== REDACTED_VALUE) {
      edits.push([offset + found.valueStart, offset + found.valueEnd, REDACTED_VALUE]);
    }
    values.push([found.valueStart, found.valueEnd]);
  }
  for (const [start, part] of gaps(gap, values)) {
    for (const [index, run] of base64Runs(part)) {
      const at = offset + start + index;
      const decoded = base64Decoded(run);
      if (decoded !== null) {
        if (decodings < MAX_DECODINGS && changes(decoded, decodings + 1)) edits.push([at, at + run.length, REDACTED_VALUE]);
      } else if (isCiphertextShaped(run)) {
        edits.push([at, at + run.length, ciphertextToken(utf8Length(run), sha256Hex(run))]);
      }
    }
  }
}

function last(node, name) {
  for (let i = node.members.length - 1; i >= 0; i--) if (node.members[i].name.value === name) return node.members[i].value;
  return null;
}

function pairNameNode(node) {
  let named = null;
  for (const m of node.members) {
    if (PAIR_NAME_MEMBERS.includes(normalName(redactText(m.name.value))) && m.value.kind === 'string') {
      const written = redactText(m.value.value);
      if (isSensitiveName(written)) named = written;
    }
  }
  return named;
}

function valueEdits(node, edits, decodings = 0) {
  const stack = [node];
  while (stack.length) {
    const cur = stack.pop();
    if (cur.kind === 'string') {
      const r = redactTextAt(cur.value, decodings);
      if (r !== cur.value) edits.push([cur.start, cur.end, quoteString(r)]);
    } else if (cur.kind === 'array') for (const e of cur.elements) stack.push(e);
    else if (cur.kind === 'object') {
      const kind = last(cur, 'type');
      if (kind !== null && kind.kind === 'string' && kind.value === 'reasoning') {
        if (isViewNode(cur)) {
          for (const m of cur.members) if (m.name.value === 'id' || m.name.value === 'fields') stack.push(m.value);
        } else edits.push([cur.start, cur.end, viewText(cur)]);
        continue;
      }
      const paired = pairNameNode(cur);
      for (const m of cur.members) {
        stack.push(m.name);
        let name = redactText(m.name.value); // the name as written out decides (H6)
        const v = m.value;
        if (!isSensitiveName(name) && paired !== null && normalName(name) === 'value') name = paired; // R2 pairs
        else if (!isSensitiveName(name)) {
          stack.push(v);
          continue;
        }
        if (isReplacementNode(v, name)) stack.push(v);
        else if (normalName(name) === 'encryptedcontent' && v.kind === 'string') edits.push([v.start, v.end, ciphertextReplacement(v.value)]);
        else edits.push([v.start, v.end, stringify({ redacted: name })]);
      }
    }
  }
}

function isCountNode(n) {
  if (n.kind !== 'scalar' || NON_NUMBERS.has(n.lexeme)) return false;
  const x = Number(n.lexeme);
  return x >= 0 && Number.isInteger(x);
}

const isNull = (n) => n.kind === 'scalar' && n.lexeme === 'null';

function distinctMembers(node) {
  const map = new Map();
  for (const m of node.members) map.set(m.name.value, m.value);
  return map.size === node.members.length ? map : null;
}

function isViewNode(node) {
  const members = distinctMembers(node);
  if (members === null || members.size !== VIEW_MEMBERS.length || !VIEW_MEMBERS.every((n) => members.has(n))) return false;
  const id = members.get('id');
  const fields = members.get('fields');
  const size = members.get('encrypted_content_bytes');
  const digest = members.get('encrypted_content_sha256');
  return (isNull(id) || id.kind === 'string') &&
    fields.kind === 'array' && fields.elements.every((f) => f.kind === 'string') &&
    (isNull(size) || isCountNode(size)) &&
    (isNull(digest) || (digest.kind === 'string' && isSha256Hex(digest.value))) &&
    VIEW_MEMBERS.slice(5).every((n) => isCountNode(members.get(n)));
}

function isReplacementNode(node, name) {
  if (node.kind !== 'object') return false;
  const members = distinctMembers(node);
  if (members === null) return false;
  if (members.size === 1 && members.has('redacted')) {
    const label = members.get('redacted');
    return label.kind === 'string' && label.value === name;
  }
  if (members.size !== 3 || !['redacted', 'bytes', 'sha256'].every((n) => members.has(n))) return false;
  const label = members.get('redacted');
  const digest = members.get('sha256');
  return label.kind === 'string' && label.value === 'encrypted_content' && isCountNode(members.get('bytes')) &&
    digest.kind === 'string' && isSha256Hex(digest.value);
}

function parts(node) {
  if (node === null || node.kind !== 'array') return [0, 0];
  let size = 0;
  for (const p of node.elements) {
    const t = p.kind === 'object' ? last(p, 'text') : null;
    if (t !== null && t.kind === 'string') size += utf8Length(t.value);
  }
  return [node.elements.length, size];
}

function viewText(node) {
  const id = last(node, 'id');
  const ct = last(node, 'encrypted_content');
  const secret = ct !== null && ct.kind === 'string' ? ct.value : null;
  const [summaryParts, summaryBytes] = parts(last(node, 'summary'));
  const [contentParts, contentBytes] = parts(last(node, 'content'));
  const names = [...new Set(node.members.map((m) => m.name.value))].sort(compareCodePoints);
  return stringify({
    type: 'reasoning',
    id: id !== null && id.kind === 'string' ? redactText(id.value) : null,
    fields: names.map(redactText),
    encrypted_content_bytes: secret === null ? null : utf8Length(secret),
    encrypted_content_sha256: secret === null ? null : sha256Hex(secret),
    summary_parts: summaryParts,
    summary_bytes: summaryBytes,
    content_parts: contentParts,
    content_bytes: contentBytes,
  });
}
