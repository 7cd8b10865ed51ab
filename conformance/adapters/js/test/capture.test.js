import { test } from 'node:test';
import assert from 'node:assert/strict';
import { captureEnvelopeText } from '../lib/capture.js';
import { readEnvelope } from '../lib/envelope.js';

const DONE = 'response.output_item.done';
const rejectCode = (it, src = DONE) => {
  try {
    captureEnvelopeText(it, src);
    return null;
  } catch (e) {
    assert.equal(e.name, 'ReplayError', e.stack);
    return e.code;
  }
};
const base = () => ({ type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'c' });

test('§13 golden bytes: exactly 181 bytes', () => {
  const sdkItem = {
    id: 'rs_1', type: 'reasoning', status: 'completed', content: null,
    summary: [{ type: 'summary_text', text: 'é', annotations: [] }],
    encrypted_content: 'c', new_sdk_field: 7,
  };
  const golden = '{"schema":"fast-agent.openai-responses.reasoning-replay","version":1,"item":{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"é"}],"encrypted_content":"c"}}';
  for (const src of ['response.output_item.done', 'response.completed', 'response.incomplete']) {
    const text = captureEnvelopeText(sdkItem, src);
    assert.equal(text, golden);
    assert.equal(Buffer.byteLength(text, 'utf8'), 181);
  }
});

test('C3 member order and escaping, with content', () => {
  const text = captureEnvelopeText({
    content: [{ text: 'r\u0001\u007f\u2028"\\/', type: 'reasoning_text', extra: 1 }],
    encrypted_content: 'gAAA==',
    summary: [{ text: 'a\tb', type: 'summary_text' }, { type: 'summary_text', text: '' }],
    id: 'rs_\u{1F600}',
    type: 'reasoning',
  }, DONE);
  assert.equal(text, '{"schema":"fast-agent.openai-responses.reasoning-replay","version":1,"item":{"type":"reasoning","id":"rs_\u{1F600}","summary":[{"type":"summary_text","text":"a\\tb"},{"type":"summary_text","text":""}],"encrypted_content":"gAAA==","content":[{"type":"reasoning_text","text":"r\\u0001\u007f\u2028\\"\\\\/"}]}}');
  assert.ok(readEnvelope(text).ok);
});

test('content absent, null or [] is omitted; parts are never merged or trimmed', () => {
  for (const content of [undefined, null, []]) {
    const it = { ...base(), content, summary: [{ type: 'summary_text', text: ' a ' }, { type: 'summary_text', text: ' b' }] };
    const stored = readEnvelope(captureEnvelopeText(it, DONE)).item;
    assert.equal(Object.hasOwn(stored, 'content'), false);
    assert.deepEqual(stored.summary, it.summary);
  }
});

test('C1 sources and status', () => {
  assert.equal(rejectCode(base(), 'response.output_item.added'), 'capture_not_completed');
  for (const s of ['response.created', 'response.output_item', '', null, 5, 'RESPONSE.COMPLETED']) {
    assert.equal(rejectCode(base(), s), 'capture_source_unknown', String(s));
  }
  assert.equal(rejectCode({ ...base(), status: null }), null);
  assert.equal(rejectCode({ ...base(), status: 'completed' }), null);
  for (const status of ['in_progress', 'incomplete', 'Completed', '', 1, false]) {
    assert.equal(rejectCode({ ...base(), status }), 'capture_not_completed', String(status));
  }
});

test('C2 checks and their order: source, not reasoning, status, then E6 field order', () => {
  assert.equal(rejectCode('x', 'bogus'), 'capture_source_unknown');
  assert.equal(rejectCode({ type: 'message' }, 'response.output_item.added'), 'capture_not_completed');
  for (const v of [null, [], 'reasoning', 1, { type: 'message', status: 'in_progress' }, { id: 'x' }]) {
    assert.equal(rejectCode(v), 'capture_not_reasoning', JSON.stringify(v));
  }
  assert.equal(rejectCode({ type: 'reasoning', status: 'in_progress' }), 'capture_not_completed');
  assert.equal(rejectCode({ type: 'reasoning' }), 'item_id_invalid');
  assert.equal(rejectCode({ ...base(), id: '' }), 'item_id_invalid');
  assert.equal(rejectCode({ ...base(), id: 1, summary: null }), 'item_id_invalid');
  assert.equal(rejectCode({ ...base(), summary: undefined }), 'item_summary_invalid');
  assert.equal(rejectCode({ ...base(), summary: null, encrypted_content: '' }), 'item_summary_invalid');
  assert.equal(rejectCode({ ...base(), summary: [{ type: 'summary_text' }] }), 'item_summary_invalid');
  assert.equal(rejectCode({ ...base(), summary: [{ type: 'x', text: 'a' }] }), 'item_summary_invalid');
  assert.equal(rejectCode({ ...base(), summary: ['a'] }), 'item_summary_invalid');
  assert.equal(rejectCode({ ...base(), encrypted_content: undefined }), 'item_ciphertext_invalid');
  assert.equal(rejectCode({ ...base(), encrypted_content: '', content: 5 }), 'item_ciphertext_invalid');
  assert.equal(rejectCode({ ...base(), content: 5 }), 'item_content_invalid');
  assert.equal(rejectCode({ ...base(), content: {} }), 'item_content_invalid');
  assert.equal(rejectCode({ ...base(), content: [{ type: 'summary_text', text: 'x' }] }), 'item_content_invalid');
  assert.equal(rejectCode({ ...base(), content: [null] }), 'item_content_invalid');
});

test('kept strings must be Unicode scalar values (C2)', () => {
  assert.equal(rejectCode({ ...base(), id: 'a\ud800' }), 'item_id_invalid');
  assert.equal(rejectCode({ ...base(), summary: [{ type: 'summary_text', text: '\udc00' }] }), 'item_summary_invalid');
  assert.equal(rejectCode({ ...base(), encrypted_content: '\ud83d' }), 'item_ciphertext_invalid');
  assert.equal(rejectCode({ ...base(), content: [{ type: 'reasoning_text', text: 'x\ud800y' }] }), 'item_content_invalid');
  // dropped members are not inspected
  assert.equal(rejectCode({ ...base(), junk: '\ud800', summary: [{ type: 'summary_text', text: '', x: '\ud800' }] }), null);
  assert.equal(rejectCode({ ...base(), id: '\ud83d\ude00' }), null); // a proper pair is fine
});

test('C4: an SDK-style object with toJSON() is accepted', () => {
  class SdkItem {
    toJSON() {
      return { ...base(), status: 'completed', extra_sdk: { nested: true } };
    }
  }
  assert.equal(captureEnvelopeText(new SdkItem(), DONE),
    '{"schema":"fast-agent.openai-responses.reasoning-replay","version":1,"item":{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"c"}}');
});
