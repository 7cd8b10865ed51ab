import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildInput, REPLAY_CHANNEL } from '../lib/replay.js';
import { captureEnvelopeText } from '../lib/capture.js';
import { item } from './helpers.js';

const block = (it) => ({ type: 'text', text: captureEnvelopeText(it, 'response.output_item.done') });
const user = (text, extra = {}) => ({ role: 'user', items: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text }] }], ...extra });
const assistant = (blocks, items = [], extra = {}) => ({ role: 'assistant', channels: { [REPLAY_CHANNEL]: blocks }, items, ...extra });
const amsg = (id, text) => ({ type: 'message', role: 'assistant', id, content: [{ type: 'output_text', text }] });
const OPENAI = { provider: 'openai', transport: 'sse' };

test('P2 order: replay items first, then own items; per-item summaries kept', () => {
  const r1 = item({ id: 'r1', summary: [{ type: 'summary_text', text: 'one' }, { type: 'summary_text', text: 'two' }] });
  const r2 = item({ id: 'r2', encrypted_content: 'd', summary: [{ type: 'summary_text', text: 'three' }] });
  const history = { messages: [
    user('hi'),
    assistant([block(r1), block(r2)], [amsg('msg_1', 'hello')], { channels: { [REPLAY_CHANNEL]: [block(r1), block(r2)], reasoning: [{ type: 'text', text: 'display only' }] } }),
    user('again'),
  ] };
  const out = buildInput(history, OPENAI);
  assert.deepEqual(out.input, [history.messages[0].items[0], r1, r2, amsg('msg_1', 'hello'), history.messages[2].items[0]]);
  assert.deepEqual(out.diagnostics, []);
  assert.equal(out.counters.reasoning_replay_item_count, 2);
  assert.equal(out.counters.reasoning_replay_summary_parts, 3);
  assert.equal(out.counters.canonical_schema_version, 1);
});

test('non-resumable blocks are skipped and reported with location; the rest replays', () => {
  const good = item({ id: 'g' });
  const history = { messages: [
    user('q'),
    assistant([
      { type: 'text', text: '{"type":"reasoning","id":"rs","encrypted_content":"c"}' },
      { type: 'image', data: 'x' },
      { type: 'text', text: 5 },
      'not a block',
      { type: 'text', text: '{"a":1,"a":2}' },
      block(good),
      { type: 'text', text: '' },
    ], [amsg('m', 'x')]),
  ] };
  const out = buildInput(history, OPENAI);
  assert.deepEqual(out.input, [history.messages[0].items[0], good, amsg('m', 'x')]);
  assert.deepEqual(out.diagnostics, [
    { code: 'legacy_minimal_record', message_index: 1, block_index: 0 },
    { code: 'block_not_text', message_index: 1, block_index: 1 },
    { code: 'block_not_text', message_index: 1, block_index: 2 },
    { code: 'block_not_text', message_index: 1, block_index: 3 },
    { code: 'json_duplicate_member', message_index: 1, block_index: 4 },
    { code: 'json_malformed', message_index: 1, block_index: 6 },
  ]);
});

test('a replay channel on a non-assistant message is not read; each block is misplaced', () => {
  const history = { messages: [
    { role: 'user', channels: { [REPLAY_CHANNEL]: [block(item()), { type: 'image' }] }, items: [{ type: 'message', role: 'user', content: [] }] },
    { role: 'tool', channels: { [REPLAY_CHANNEL]: [block(item())] } },
  ] };
  const out = buildInput(history, OPENAI);
  assert.deepEqual(out.input, [{ type: 'message', role: 'user', content: [] }]);
  assert.deepEqual(out.diagnostics.map((d) => [d.code, d.message_index, d.block_index]), [
    ['replay_channel_misplaced', 0, 0], ['replay_channel_misplaced', 0, 1], ['replay_channel_misplaced', 1, 0],
  ]);
  assert.equal(out.counters.reasoning_replay_item_count, 0);
});

test('dedupe across messages of the target issuer; another issuer\'s item is not sent (D1–D5, P4)', () => {
  const a = item({ id: 'a', encrypted_content: 'x' });
  const a2 = item({ id: 'a', encrypted_content: 'y' });
  const history = { messages: [
    assistant([block(a)]),
    assistant([block(a), block(a2)]),
    assistant([block(a)], [], { provider: 'azure' }),
    assistant([block(a)], [], { provider: 'openai' }),
  ] };
  const out = buildInput(history, OPENAI);
  assert.deepEqual(out.input, [a, a2]);
  assert.deepEqual(out.diagnostics, [
    { code: 'dedupe_exact_duplicate', message_index: 1, block_index: 0 },
    { code: 'dedupe_id_ciphertext_conflict', message_index: 1, block_index: 1 },
    { code: 'replay_provider_mismatch', message_index: 2, block_index: 0 },
    { code: 'dedupe_exact_duplicate', message_index: 3, block_index: 0 },
  ]);
  assert.equal(out.counters.replay_deduplicated_exact_count, 2);
  assert.equal(out.counters.replay_id_ciphertext_conflict_count, 1);
  assert.equal(out.counters.reasoning_replay_item_count, 2);
  assert.throws(() => buildInput(history, OPENAI, { conflict_policy: 'reject' }), { code: 'dedupe_id_ciphertext_conflict' });
});

test('P4: the issuer is the message\'s provider, else the history\'s, else the target; names never alias', () => {
  const a = item({ id: 'a', encrypted_content: 'x' });
  const b = item({ id: 'b', encrypted_content: 'y' });
  const history = { provider: 'xai', messages: [
    assistant([block(a)], [], { provider: 'openai' }),
    assistant([block(b)], [], { provider: '' }), // records none: the history's provider, xai
  ] };
  const toXai = buildInput(history, { provider: 'xai', transport: 'sse' });
  assert.deepEqual(toXai.input, [b]);
  assert.deepEqual(toXai.diagnostics, [{ code: 'replay_provider_mismatch', message_index: 0, block_index: 0 }]);
  const toCodex = buildInput(history, { provider: 'codex', transport: 'sse' });
  assert.deepEqual(toCodex.input, []);
  assert.equal(toCodex.diagnostics.length, 2);
  const unknown = buildInput({ messages: history.messages.slice(1) }, { provider: 'codex', transport: 'sse' });
  assert.deepEqual(unknown.input, [b]); // no recorded or history provider: the target's
});

test('D7 xai: assistant message items lose id; others unchanged; same input on both transports (P3)', () => {
  const r = item();
  const fc = { type: 'function_call', id: 'fc_1', call_id: 'c1', name: 'f', arguments: '{}' };
  const history = { messages: [
    user('q'),
    assistant([block(r), block(r)], [amsg('msg_1', 'a'), fc]),
    { role: 'user', items: [{ type: 'message', role: 'assistant', id: 'keep?', content: [] }, { type: 'message', role: 'user', id: 'u1', content: [] }] },
  ] };
  const sse = buildInput(history, { provider: 'xai', transport: 'sse' });
  const ws = buildInput(history, { provider: 'xai', transport: 'websocket' });
  assert.deepEqual(sse, ws);
  assert.deepEqual(sse.input.slice(1), [
    r,
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'a' }] },
    fc,
    { type: 'message', role: 'assistant', content: [] },
    { type: 'message', role: 'user', id: 'u1', content: [] },
  ]);
  assert.equal(sse.counters.replay_deduplicated_exact_count, 1);
  assert.equal(history.messages[1].items[0].id, 'msg_1', 'history is not mutated');
  // other providers: own items unchanged
  assert.equal(buildInput(history, OPENAI).input[2].id, 'msg_1');
});

test('display channel is never used to build items (ST2)', () => {
  const history = { messages: [{ role: 'assistant', channels: { reasoning: [{ type: 'text', text: 'summary' }] }, items: [] }] };
  assert.deepEqual(buildInput(history, OPENAI), buildInput({ messages: [{ role: 'assistant' }] }, OPENAI));
  assert.deepEqual(buildInput(history, OPENAI).input, []);
});

test('totality: junk histories never throw', () => {
  for (const h of [{}, { messages: null }, { messages: [null, 1, 'x', [], { role: 'assistant', channels: [] }, { role: 'assistant', channels: { [REPLAY_CHANNEL]: 'x' } }] }]) {
    assert.doesNotThrow(() => buildInput(h, OPENAI));
  }
});

// --- the items form (SPEC CL3) ------------------------------------------------------------------
const call = (id) => ({ type: 'function_call', call_id: id, name: 'f', arguments: '{}' });
const output = (id) => ({ type: 'function_call_output', call_id: id, output: 'ok' });

test('CL3: in the items form each reasoning item is sent where it stands among the calls', () => {
  const r1 = item({ id: 'r1' });
  const r2 = item({ id: 'r2', encrypted_content: 'd' });
  const history = { form: 'items', messages: [
    { role: 'user', items: [{ type: 'message', role: 'user', content: 'go' }] },
    { role: 'assistant', items: [r1, call('c1'), r2, call('c2')] },
    { role: 'user', items: [output('c1'), output('c2')] },
  ] };
  const out = buildInput(history, OPENAI);
  assert.deepEqual(out.input, [history.messages[0].items[0], r1, call('c1'), r2, call('c2'), output('c1'), output('c2')]);
  assert.deepEqual(out.diagnostics, []);
  assert.equal(out.counters.reasoning_replay_item_count, 2);
});

test('CL3: a dropped or foreign reasoning item is reported at its index among the items', () => {
  const r1 = item({ id: 'r1' });
  const history = { form: 'items', provider: 'openai', messages: [
    { role: 'assistant', items: [r1, amsg('m1', 'one')] },
    { role: 'assistant', items: [amsg('m2', 'two'), call('c1'), r1] },
    { role: 'assistant', provider: 'xai', items: [call('c2'), item({ id: 'rx' })] },
  ] };
  const out = buildInput(history, OPENAI);
  assert.deepEqual(out.input, [r1, amsg('m1', 'one'), amsg('m2', 'two'), call('c1'), call('c2')]);
  assert.deepEqual(out.diagnostics, [
    { code: 'dedupe_exact_duplicate', message_index: 1, block_index: 2 },
    { code: 'replay_provider_mismatch', message_index: 2, block_index: 1 },
  ]);
});

test('CL3: a reasoning item that is not a replay item is reported with its code, not sent', () => {
  const history = { form: 'items', messages: [{ role: 'assistant', items: [amsg('m1', 'x'), { type: 'reasoning', id: 'r', summary: [] }] }] };
  const out = buildInput(history, OPENAI);
  assert.deepEqual(out.input, [amsg('m1', 'x')]);
  assert.deepEqual(out.diagnostics, [{ code: 'item_ciphertext_invalid', message_index: 0, block_index: 1 }]);
});

test('CL3: only assistant messages hold reasoning items in the items form', () => {
  const history = { form: 'items', messages: [{ role: 'user', items: [item({ id: 'r1' })] }] };
  assert.throws(() => buildInput(history, OPENAI), /only assistant messages hold reasoning items/);
});
