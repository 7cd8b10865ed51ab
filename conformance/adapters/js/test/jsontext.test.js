import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseStrict, parseText, lexicalDepth, stringify, quoteString, JsonNumber } from '../lib/jsontext.js';

const codeOf = (input, limits) => {
  try {
    parseStrict(input, limits);
    return null;
  } catch (e) {
    return e.code;
  }
};
const bytes = (...b) => new Uint8Array(b);
const utf8 = (s) => new Uint8Array(Buffer.from(s, 'utf8'));

test('parses every JSON value kind', () => {
  assert.deepEqual(parseStrict(' {"a":[1,-2.5e3,true,false,null,"x"],"b":{}} '), {
    a: [1, -2500, true, false, null, 'x'],
    b: {},
  });
  assert.equal(parseStrict('0'), 0);
  assert.equal(parseStrict('"\\u00e9\\ud83d\\ude00\\/\\b\\f\\n\\r\\t"'), 'é😀/\b\f\n\r\t');
  assert.deepEqual(parseStrict('[[],[[]]]'), [[], [[]]]);
});

test('grammar errors are json_malformed', () => {
  for (const t of ['', '   ', 'NaN', 'Infinity', '-Infinity', '{"a":NaN}', '[1,]', '{"a":1,}', '{a:1}',
    "'x'", '01', '1.', '.5', '1e', '+1', '-', '[1 2]', '{"a" 1}', '"\\x"', '"\\u12"', '"a\nb"',
    '"unterminated', '{"a":1}x', '{} {}', 'tru', 'nul', '[', '{"a":', '\u00a0{}', '{}\u0000']) {
    assert.equal(codeOf(t), 'json_malformed', JSON.stringify(t));
  }
});

test('a byte-order mark is json_malformed, as text or bytes', () => {
  assert.equal(codeOf('\ufeff{}'), 'json_malformed');
  assert.equal(codeOf(bytes(0xef, 0xbb, 0xbf, 0x7b, 0x7d)), 'json_malformed');
});

test('invalid UTF-8 bytes are json_invalid_unicode and outrank grammar', () => {
  assert.equal(codeOf(bytes(0x22, 0xff, 0x22)), 'json_invalid_unicode');
  assert.equal(codeOf(bytes(0x22, 0xc0, 0xaf, 0x22)), 'json_invalid_unicode'); // overlong "/"
  assert.equal(codeOf(bytes(0x22, 0xed, 0xa0, 0x80, 0x22)), 'json_invalid_unicode'); // CESU surrogate
  assert.equal(codeOf(bytes(0x22, 0xf4, 0x90, 0x80, 0x80, 0x22)), 'json_invalid_unicode'); // > U+10FFFF
  assert.equal(codeOf(bytes(0x22, 0xe2, 0x82)), 'json_invalid_unicode'); // truncated, also malformed
  assert.equal(codeOf(bytes(0xef, 0xbb, 0xbf, 0xff)), 'json_invalid_unicode'); // BOM + bad byte
  assert.equal(codeOf(bytes(0xff, 0xfe, 0x7b, 0x00, 0x7d, 0x00)), 'json_invalid_unicode'); // UTF-16LE
  assert.deepEqual(parseStrict(utf8('{"é":"😀"}')), { 'é': '😀' });
});

test('a raw lone surrogate in a JS string is json_invalid_unicode (not representable in UTF-8)', () => {
  assert.equal(codeOf('"\ud800"'), 'json_invalid_unicode');
  assert.equal(codeOf('"\udc00" trailing'), 'json_invalid_unicode');
  assert.equal(codeOf('"\\ud800\udc00"'), 'json_invalid_unicode'); // escape + raw low: raw is lone
});

test('escaped lone surrogates are json_invalid_unicode; escaped pairs are fine', () => {
  assert.equal(codeOf('"\\ud800"'), 'json_invalid_unicode');
  assert.equal(codeOf('"\\udc00"'), 'json_invalid_unicode');
  assert.equal(codeOf('"\\ud800\\u0041"'), 'json_invalid_unicode');
  assert.equal(codeOf('"\\udc00\\ud800"'), 'json_invalid_unicode');
  assert.equal(codeOf('{"\\ud800":1}'), 'json_invalid_unicode'); // in a member name too
  assert.equal(codeOf('"\\uD83D\\uDE00"'), null);
});

test('precedence: grammar > lone surrogate > duplicate, regardless of position', () => {
  assert.equal(codeOf('{"a":"\\ud800","a":1'), 'json_malformed');
  assert.equal(codeOf('["\\ud800"] x'), 'json_malformed');
  assert.equal(codeOf('{"a":1,"a":2,"b":"\\udfff"}'), 'json_invalid_unicode');
  assert.equal(codeOf('{"a":1,"a":2} NaN'), 'json_malformed');
});

test('duplicate member names at any depth, compared after unescaping', () => {
  assert.equal(codeOf('{"a":1,"a":1}'), 'json_duplicate_member');
  assert.equal(codeOf('{"a":1,"\\u0061":2}'), 'json_duplicate_member');
  assert.equal(codeOf('[{"x":{"y":[{"k":1,"k":2}]}}]'), 'json_duplicate_member');
  assert.equal(codeOf('{"__proto__":1,"__proto__":2}'), 'json_duplicate_member');
  assert.equal(codeOf('{"a":{"a":1},"b":{"a":1}}'), null); // same name in different objects
  assert.equal(codeOf('{"é":1,"e\\u0301":2}'), null); // no normalisation (§1.1)
});

test('__proto__ is an own data member, not a prototype', () => {
  const v = parseStrict('{"__proto__":{"polluted":1}}');
  assert.ok(Object.hasOwn(v, '__proto__'));
  assert.equal(Object.getPrototypeOf(v), Object.prototype);
  assert.equal(v.polluted, undefined);
});

test('nesting depth is counted lexically, outside strings (E4.1)', () => {
  assert.equal(lexicalDepth('1'), 0);
  assert.equal(lexicalDepth('{}'), 1);
  assert.equal(lexicalDepth('{"item":{"summary":[{"type":"summary_text"}]}}'), 4);
  assert.equal(lexicalDepth('"[[[[\\"[[["'), 0);
  assert.equal(lexicalDepth('[[[ ]]] [['), 3);
  assert.equal(lexicalDepth(utf8('[["é[",[{}]]]')), 4);
  assert.equal(parseText('[[],[[{}]]]').depth, 4);
});

test('limits: depth 32 and 16 MiB accepted, beyond refused with limit_exceeded first', () => {
  assert.equal(codeOf('['.repeat(32) + ']'.repeat(32)), null);
  assert.equal(codeOf('['.repeat(33) + ']'.repeat(33)), 'limit_exceeded');
  // limit_exceeded replaces every other code, even on malformed or non-UTF-8 input
  assert.equal(codeOf('['.repeat(33)), 'limit_exceeded');
  assert.equal(codeOf(new Uint8Array([...Buffer.from('['.repeat(40)), 0xff])), 'limit_exceeded');
  const big = '"' + 'a'.repeat(16 * 1024 * 1024 - 2) + '"';
  assert.equal(codeOf(big), null);
  assert.equal(codeOf(big + ' '), 'limit_exceeded');
  // disabling the depth limit: deep text parses without overflowing the stack
  assert.equal(codeOf('['.repeat(100000) + ']'.repeat(100000), { maxDepth: Infinity }), null);
});

test('numbers are read as binary64 values', () => {
  assert.equal(parseStrict('1.0'), 1);
  assert.equal(parseStrict('1e0'), 1);
  assert.equal(parseStrict('10E-1'), 1);
  assert.equal(parseStrict('1.0000000000000000001'), 1);
  assert.equal(parseStrict('1e400'), Infinity);
  assert.ok(Object.is(parseStrict('-0'), -0));
});

test('lenient parse: keeps lone surrogates, duplicates last-wins, raw numbers', () => {
  const r = parseText('{"t":"\\ud800","n":18446744073709551616,"a":1,"a":2}', { rawNumbers: true });
  assert.equal(r.value.t, '\ud800');
  assert.ok(r.value.n instanceof JsonNumber);
  assert.equal(String(r.value.a), '2');
  assert.ok(r.loneSurrogateAt >= 0 && r.duplicateAt >= 0);
  assert.equal(stringify(r.value), '{"t":"\\ud800","n":18446744073709551616,"a":2}');
});

test('serializer escapes per RFC 8785 §3.2.2.2', () => {
  assert.equal(quoteString('"\\\b\t\n\f\r\u0000\u001f\u007f\u2028é😀/'),
    '"\\"\\\\\\b\\t\\n\\f\\r\\u0000\\u001f\u007f\u2028é😀/"');
  assert.equal(quoteString('\u000b'), '"\\u000b"'); // lowercase hex
  assert.equal(quoteString('\u2028\u2029', true), '"\\u2028\\u2029"');
  assert.equal(stringify({ a: [1, null, true, 'x'], b: undefined, c: -0 }), '{"a":[1,null,true,"x"],"c":0}');
  assert.throws(() => stringify(NaN), TypeError);
});

test('serializer round-trips through the strict parser', () => {
  const v = { s: 'a\u0000"\\\u2028\ud83d\ude00', n: [0, -1.5, 1e21], o: { '': {} } };
  assert.deepEqual(parseStrict(stringify(v)), v);
  assert.deepEqual(JSON.parse(stringify(v)), v);
});
