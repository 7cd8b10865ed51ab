import { test } from 'node:test';
import assert from 'node:assert/strict';
import { exportHistory, isHistory, redactedRecordText, EXPORT_MARKER, RESUMABLE_WARNING } from '../lib/export.js';
import { readEnvelope } from '../lib/envelope.js';
import { redact } from '../lib/redact.js';
import { runCase } from '../lib/adapter.js';
import { ReplayError } from '../lib/codes.js';
import { item, envText } from './helpers.js';

const REPLAY = 'openai-reasoning-encrypted';

function history() {
  return {
    title: 'demo',
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      {
        role: 'assistant',
        content: [{ type: 'text', text: 'hello' }],
        channels: {
          [REPLAY]: [
            { type: 'text', text: envText(item({ encrypted_content: 'gAAAA-secret-1' })) },
            { type: 'text', text: '{"type":"reasoning","id":"rs_old","encrypted_content":"gAAAA-legacy"}' },
            { type: 'image', data: 'gAAAA-image' },
          ],
          reasoning: [{ type: 'text', text: 's' }],
          'openai-compaction': [{ type: 'text', text: '{"type":"compaction","encrypted_content":"gAAAA-cmp"}' }],
        },
        tool_calls: { c1: { params: { arguments: { Encrypted_Content: 'gAAAA-arg' } } } },
      },
    ],
  };
}

/** Every string value of a member named encrypted_content (any ASCII case), anywhere. */
function ciphertextStrings(value, found = []) {
  if (Array.isArray(value)) value.forEach((v) => ciphertextStrings(v, found));
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k.toLowerCase() === 'encrypted_content' && typeof v === 'string') found.push(v);
      ciphertextStrings(v, found);
    }
  }
  return found;
}

test('H6 resumable: the history unchanged, the marker last', () => {
  const h = history();
  const out = exportHistory(h, 'resumable');
  assert.deepEqual(Object.keys(out), ['title', 'messages', EXPORT_MARKER]);
  assert.deepEqual(out[EXPORT_MARKER], { mode: 'resumable', warning: RESUMABLE_WARNING, display_reasoning: 'duplicated' });
  assert.deepEqual(Object.keys(out[EXPORT_MARKER]), ['mode', 'warning', 'display_reasoning']);
  assert.equal(Object.hasOwn(exportHistory(h, 'redacted')[EXPORT_MARKER], 'display_reasoning'), false);
  assert.deepEqual(out.messages, history().messages);
});

test('H6 redacted: no encrypted_content string left; every replay block reads redacted_record', () => {
  const out = exportHistory(history(), 'redacted');
  assert.deepEqual(ciphertextStrings(out), []);
  assert.ok(!JSON.stringify(out).includes('gAAAA-secret-1'));
  const blocks = out.messages[1].channels[REPLAY];
  assert.equal(blocks.length, 3);
  for (const block of blocks) {
    assert.equal(block.type, 'text');
    assert.deepEqual(readEnvelope(block.text), { ok: false, code: 'redacted_record' });
  }
  assert.deepEqual(JSON.parse(blocks[1].text).was, 'legacy_minimal_record');
  assert.deepEqual(JSON.parse(blocks[2].text), {
    schema: 'fast-agent.openai-responses.reasoning-replay.redacted', version: 1, was: 'block_not_text', view: null,
  });
  const compaction = JSON.parse(out.messages[1].channels['openai-compaction'][0].text);
  assert.equal(compaction.encrypted_content.redacted, 'encrypted_content');
  assert.deepEqual(out.messages[1].channels.reasoning, [{ type: 'text', text: 's' }]);
  assert.deepEqual(out[EXPORT_MARKER].mode, 'redacted');
});

test('H6 redacted export is idempotent', () => {
  const once = exportHistory(history(), 'redacted');
  assert.deepEqual(exportHistory(once, 'redacted'), once);
});

test('drop_display_reasoning removes the display channel in redacted mode', () => {
  const out = exportHistory(history(), 'redacted', { dropDisplayReasoning: true });
  assert.deepEqual(Object.keys(out.messages[1].channels), [REPLAY, 'openai-compaction']);
});

test('the input is not mutated', () => {
  const h = history();
  exportHistory(h, 'redacted', { dropDisplayReasoning: true });
  assert.deepEqual(h, history());
});

test('H1 shape: what is not a history is history_malformed', () => {
  assert.ok(isHistory({ messages: [] }));
  assert.ok(isHistory({ messages: [{ role: 'user', content: [], channels: null, tool_calls: null }] }));
  for (const bad of [[], null, {}, { messages: {} }, { messages: [{ role: 'system', content: [] }] },
    { messages: [{ role: 'user' }] }, { messages: [{ role: 'user', content: [], channels: { x: {} } }] }]) {
    assert.ok(!isHistory(bad), JSON.stringify(bad));
    assert.throws(() => exportHistory(bad, 'redacted'), (e) => e instanceof ReplayError && e.code === 'history_malformed');
  }
});

test('redacted record of a resumable block carries the diagnostic view', () => {
  const rec = JSON.parse(redactedRecordText(envText(item({ id: 'rs_9', encrypted_content: 'c' }))));
  assert.equal(rec.was, 'resumable');
  assert.equal(rec.view.id, 'rs_9');
  assert.equal(rec.view.encrypted_content_sha256, '2e7d2c03a9507ae265ecf5b5356885a53393a2029d241394997265a1a25aefc6');
});

test('R2 idempotence: views and replacement objects are left as they are', () => {
  const once = redact({ a: { type: 'reasoning', id: 'x', encrypted_content: 'c' }, encrypted_content: 'c', api_key: 'k' });
  assert.deepEqual(redact(once), once);
});

test('__proto__ member names are kept as data', () => {
  const h = JSON.parse('{"messages":[],"__proto__":{"encrypted_content":"gAAAA-p"}}');
  const out = exportHistory(h, 'redacted');
  assert.ok(Object.hasOwn(out, '__proto__'));
  assert.deepEqual(ciphertextStrings(out), []);
});

test('adapter: export operation, shapes and rejection', () => {
  assert.deepEqual(runCase('export', { history: { messages: [] }, mode: 'redacted' }).output.history[EXPORT_MARKER].mode, 'redacted');
  assert.deepEqual(runCase('export', { history: { messages: 1 }, mode: 'resumable' }), { reject: { code: 'history_malformed' } });
  assert.ok(runCase('export', { history: { messages: [] }, mode: 'other' }).error);
  assert.ok(runCase('export', { history: { messages: [] }, mode: 'redacted', drop_display_reasoning: 'yes' }).error);
});
