import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { redact, diagnosticView, asciiLower, compareCodePoints } from '../lib/redact.js';

const sha = (s) => createHash('sha256').update(Buffer.from(s, 'utf8')).digest('hex');

test('R1 diagnostic view of a canonical item, members in spec order', () => {
  const v = diagnosticView({ type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'é' }], encrypted_content: 'c',
    content: [{ type: 'reasoning_text', text: 'abc' }, { type: 'reasoning_text', text: '' }] });
  assert.deepEqual(Object.keys(v), ['type', 'id', 'fields', 'encrypted_content_bytes', 'encrypted_content_sha256',
    'summary_parts', 'summary_bytes', 'content_parts', 'content_bytes']);
  assert.deepEqual(v, {
    type: 'reasoning', id: 'rs_1', fields: ['content', 'encrypted_content', 'id', 'summary', 'type'],
    encrypted_content_bytes: 1, encrypted_content_sha256: sha('c'),
    summary_parts: 1, summary_bytes: 2, content_parts: 2, content_bytes: 3,
  });
  assert.equal(sha('c'), '2e7d2c03a9507ae265ecf5b5356885a53393a2029d241394997265a1a25aefc6');
});

test('R1 view of a non-canonical object', () => {
  assert.deepEqual(diagnosticView({ type: 'reasoning', id: 5, encrypted_content: null, summary: 'x', content: [1, { text: 'ab' }] }), {
    type: 'reasoning', id: null, fields: ['content', 'encrypted_content', 'id', 'summary', 'type'],
    encrypted_content_bytes: null, encrypted_content_sha256: null,
    summary_parts: 0, summary_bytes: 0, content_parts: 2, content_bytes: 2,
  });
});

test('fields sort by code point, not UTF-16 unit', () => {
  const names = ['\u{1F600}', '\uFF21', 'b', 'B', 'a'];
  assert.deepEqual([...names].sort(compareCodePoints), ['B', 'a', 'b', '\uFF21', '\u{1F600}']);
  assert.ok(compareCodePoints('a', 'ab') < 0);
  assert.equal(compareCodePoints('x', 'x'), 0);
});

test('R2 sensitive names contain a fragment of their normal form; encrypted_content strings get size+digest', () => {
  const out = redact({
    api_key: 'k', Authorization: 'Bearer x', PASSWORD: { nested: 1 }, secret: null, client_secret: 1,
    access_token: 't', refresh_token: 't', id_token: 't', private_key: 't',
    encrypted_content: 'é', Encrypted_Content: 'abc', author: 'me', max_output_tokens: 5, secrets: 's', apikey: 'x',
  });
  assert.deepEqual(out, {
    api_key: { redacted: 'api_key' }, Authorization: { redacted: 'Authorization' }, PASSWORD: { redacted: 'PASSWORD' },
    secret: { redacted: 'secret' }, client_secret: { redacted: 'client_secret' }, access_token: { redacted: 'access_token' },
    refresh_token: { redacted: 'refresh_token' }, id_token: { redacted: 'id_token' }, private_key: { redacted: 'private_key' },
    encrypted_content: { redacted: 'encrypted_content', bytes: 2, sha256: sha('é') },
    Encrypted_Content: { redacted: 'encrypted_content', bytes: 3, sha256: sha('abc') },
    author: { redacted: 'author' }, max_output_tokens: { redacted: 'max_output_tokens' }, secrets: { redacted: 'secrets' },
    apikey: { redacted: 'apikey' },
  });
  assert.deepEqual(redact({ encrypted_content: null }), { encrypted_content: { redacted: 'encrypted_content' } });
  assert.deepEqual(redact({ encrypted_content: ['a'] }), { encrypted_content: { redacted: 'encrypted_content' } });
});

test('ASCII-only lowercasing: a non-ASCII letter is removed from the normal form, never folded', () => {
  assert.equal(asciiLower('API_KEY'), 'api_key');
  assert.deepEqual(redact({ '\u212Aey': 1, 'PR\u0130VATE_KEY': 2, 'api.key': 3, api1key: 4 }),
    { '\u212Aey': 1, 'PR\u0130VATE_KEY': 2, 'api.key': { redacted: 'api.key' }, api1key: 4 });
  // KELVIN SIGN removed, not folded to k: what is left spells secret.
  assert.deepEqual(redact({ 'SECR\u212AET': 3 }), { 'SECR\u212AET': { redacted: 'SECR\u212AET' } });
});

test('R2 name/value pairs: the value of a pair naming a sensitive name is replaced', () => {
  assert.deepEqual(redact([{ name: 'Authorization', value: 'Bearer x' }, { name: 'model', value: 'm' }]),
    [{ name: 'Authorization', value: { redacted: 'Authorization' } }, { name: 'model', value: 'm' }]);
});

test('R2 recursion: arrays, nesting, reasoning objects anywhere, order kept, scalars unchanged', () => {
  for (const v of [null, true, 0, -1.5, 'encrypted_content', []]) assert.deepEqual(redact(v), v);
  const input = { z: 1, input: [{ type: 'message', content: [{ password: 'p' }] },
    { type: 'reasoning', id: 'a', encrypted_content: 'c', summary: [] }], a: { type: 'Reasoning', secret: 's' } };
  const out = redact(input);
  assert.deepEqual(Object.keys(out), ['z', 'input', 'a']);
  assert.deepEqual(out.input[0], { type: 'message', content: [{ password: { redacted: 'password' } }] });
  assert.equal(out.input[1].encrypted_content_sha256, sha('c'));
  assert.deepEqual(out.a, { type: 'Reasoning', secret: { redacted: 'secret' } });
  assert.equal(JSON.stringify(out).includes('"c"'), false);
  // a reasoning object is replaced whole, even when nested under a sensitive-looking parent
  assert.equal(redact([{ type: 'reasoning', secret: 'x' }])[0].fields.join(), 'secret,type');
});

test('redact does not mutate its input and keeps __proto__ as data', () => {
  const input = JSON.parse('{"__proto__":{"api_key":"k"},"b":[{"encrypted_content":"x"}]}');
  const copy = structuredClone(input);
  const out = redact(input);
  assert.deepEqual(input, copy);
  assert.ok(Object.hasOwn(out, '__proto__'));
  assert.deepEqual(out.__proto__, { api_key: { redacted: 'api_key' } });
});
