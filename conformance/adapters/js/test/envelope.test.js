import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readEnvelope } from '../lib/envelope.js';
import { SCHEMA, item, envText } from './helpers.js';

const code = (text) => {
  const v = readEnvelope(text);
  return v.ok ? null : v.code;
};

test('§13 example replays exactly the stored item (P1)', () => {
  const text = '{"schema":"fast-agent.openai-responses.reasoning-replay","version":1,"item":{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"é"}],"encrypted_content":"c"}}';
  const v = readEnvelope(text);
  assert.ok(v.ok);
  assert.equal(JSON.stringify(v.item), '{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"é"}],"encrypted_content":"c"}');
  assert.ok(readEnvelope(Buffer.from(text, 'utf8')).ok); // same verdict from bytes
});

test('member order and whitespace do not matter to a reader (E3)', () => {
  const t = ' {\n "item" : {"encrypted_content":"c","summary":[],"id":"x","type":"reasoning",'
    + '"content":[{"text":"t","type":"reasoning_text"}]} , "version":1.0, "schema":"' + SCHEMA + '"}\t';
  const v = readEnvelope(t);
  assert.ok(v.ok);
  assert.deepEqual(v.item.content, [{ text: 't', type: 'reasoning_text' }]);
});

test('version is compared by binary64 value; booleans and strings are not numbers (E1)', () => {
  for (const ver of ['1', '1.0', '1e0', '0.1e1', '100e-2']) {
    assert.equal(code(`{"schema":"${SCHEMA}","version":${ver},"item":${JSON.stringify(item())}}`), null, ver);
  }
  for (const [ver, c] of [['true', 'envelope_version_invalid'], ['"1"', 'envelope_version_invalid'],
    ['null', 'envelope_version_invalid'], ['[1]', 'envelope_version_invalid'], ['2', 'envelope_version_unsupported'],
    ['1.5', 'envelope_version_unsupported'], ['0', 'envelope_version_unsupported'], ['-1', 'envelope_version_unsupported']]) {
    assert.equal(code(`{"schema":"${SCHEMA}","version":${ver},"item":${JSON.stringify(item())}}`), c, ver);
  }
});

test('E6 steps 6-10: value kind, legacy, schema, version, envelope members', () => {
  const cases = [
    ['[]', 'json_not_object'],
    ['"x"', 'json_not_object'],
    ['null', 'json_not_object'],
    ['{}', 'envelope_member_missing'],
    ['{"encrypted_content":"c"}', 'legacy_minimal_record'],
    ['{"type":"reasoning","id":"rs","encrypted_content":"c"}', 'legacy_minimal_record'],
    ['{"type":"reasoning","id":"rs","encrypted_content":null}', 'legacy_minimal_record'],
    ['{"type":"reasoning","id":"rs","encrypted_content":"c","summary":[]}', 'raw_sdk_snapshot'],
    ['{"encrypted_content":"c","status":"completed"}', 'raw_sdk_snapshot'],
    ['{"encrypted_content":"c","version":1,"item":{}}', 'raw_sdk_snapshot'],
    ['{"type":"reasoning","id":"rs"}', 'envelope_member_missing'],
    ['{"schema":"other","version":1,"item":{}}', 'envelope_schema_unknown'],
    ['{"schema":null,"encrypted_content":"c"}', 'envelope_schema_unknown'],
    [`{"schema":"${SCHEMA} ","version":1}`, 'envelope_schema_unknown'],
    [`{"schema":"${SCHEMA}"}`, 'envelope_member_missing'],
    [`{"schema":"${SCHEMA}","version":1}`, 'envelope_member_missing'],
    [`{"schema":"${SCHEMA}","version":2,"extra":1}`, 'envelope_version_unsupported'],
    [`{"schema":"${SCHEMA}","version":1,"extra":1}`, 'envelope_member_missing'],
    [`{"schema":"${SCHEMA}","version":1,"item":"x","extra":1}`, 'envelope_member_unknown'],
    [`{"schema":"${SCHEMA}","version":1,"item":{},"status":"completed"}`, 'envelope_member_unknown'],
  ];
  for (const [t, c] of cases) assert.equal(code(t), c, t);
});

test('E6 steps 11-13: item kind, members, then fields in order', () => {
  const cases = [
    ['x', 'item_not_object'],
    [null, 'item_not_object'],
    [[item()], 'item_not_object'],
    [item({ status: 'completed' }), 'item_member_unknown'],
    [item({ type: 'message', extra: 1 }), 'item_member_unknown'],
    [item({ type: 'message' }), 'item_type_invalid'],
    [{ id: 'x', summary: [], encrypted_content: 'c' }, 'item_type_invalid'],
    [item({ id: '' }), 'item_id_invalid'],
    [item({ id: 5, summary: 'bad' }), 'item_id_invalid'],
    [item({ summary: null }), 'item_summary_invalid'],
    [item({ summary: [{ type: 'summary_text' }] }), 'item_summary_invalid'],
    [item({ summary: [{ type: 'summary_text', text: 1 }] }), 'item_summary_invalid'],
    [item({ summary: [{ type: 'reasoning_text', text: '' }] }), 'item_summary_invalid'],
    [item({ summary: [{ type: 'summary_text', text: '', annotations: [] }] }), 'item_summary_invalid'],
    [item({ summary: ['x'] }), 'item_summary_invalid'],
    [item({ summary: 5, encrypted_content: '' }), 'item_summary_invalid'],
    [item({ encrypted_content: '' }), 'item_ciphertext_invalid'],
    [item({ encrypted_content: ['c'] }), 'item_ciphertext_invalid'],
    [item({ content: null }), 'item_content_invalid'],
    [item({ content: [] }), 'item_content_invalid'],
    [item({ content: {} }), 'item_content_invalid'],
    [item({ content: [{ type: 'summary_text', text: 'x' }] }), 'item_content_invalid'],
    [item({ content: [{ type: 'reasoning_text', text: 'x', extra: 1 }] }), 'item_content_invalid'],
  ];
  for (const [it, c] of cases) assert.equal(code(envText(it)), c, JSON.stringify(it));
  // valid edge cases
  assert.equal(code(envText(item({ summary: [] }))), null);
  assert.equal(code(envText(item({ summary: [{ type: 'summary_text', text: '' }, { text: 'b', type: 'summary_text' }] }))), null);
  assert.equal(code(envText(item({ content: [{ type: 'reasoning_text', text: '' }] }))), null);
  assert.equal(code(envText(item({ id: ' ' }))), null);
});

test('text-level codes come first (E6 steps 1-5), then value checks', () => {
  assert.equal(code('{"schema":"x","schema":"y"}'), 'json_duplicate_member');
  assert.equal(code(envText(item()).replace('"c"', '"\\ud800"')), 'json_invalid_unicode');
  assert.equal(code(envText(item()) + ','), 'json_malformed');
  assert.equal(code('\ufeff' + envText(item())), 'json_malformed');
  assert.equal(code(new Uint8Array([0x80])), 'json_invalid_unicode');
  assert.equal(code(''), 'json_malformed');
  const nested = { a: JSON.parse('['.repeat(30) + ']'.repeat(30)) }; // 2 + 1 + 30 = depth 33
  assert.equal(code(envText(item({ x: nested }))), 'limit_exceeded');
  assert.equal(code(envText(item({ x: JSON.parse('['.repeat(28) + ']'.repeat(28)) }))), 'item_member_unknown');
});

test('the reader is total: arbitrary input never throws (E4.2)', () => {
  const samples = ['', '{', '}', '"', '\\', '[{]}', '{"schema":' , '\u0000', 'x'.repeat(1000), '[1,2,{"a":[]}]'];
  for (const s of samples) assert.doesNotThrow(() => readEnvelope(s));
  for (let i = 0; i < 2000; i++) {
    const b = new Uint8Array(1 + (i % 17)).map(() => Math.floor(Math.random() * 256));
    const v = readEnvelope(b);
    assert.equal(typeof v.ok, 'boolean');
  }
});

test('a resumable item is returned as stored, never repaired (E3)', () => {
  const v = readEnvelope(envText(item({ summary: [{ type: 'summary_text', text: ' a ' }, { type: 'summary_text', text: 'b' }] })));
  assert.deepEqual(v.item.summary, [{ type: 'summary_text', text: ' a ' }, { type: 'summary_text', text: 'b' }]);
  assert.deepEqual(Object.keys(v.item), ['type', 'id', 'summary', 'encrypted_content']);
});
