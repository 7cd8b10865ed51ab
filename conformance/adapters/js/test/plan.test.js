import { test } from 'node:test';
import assert from 'node:assert/strict';
import { plan, isGenuineUserTurn } from '../lib/plan.js';
import { CACHE_STATE_CHANNEL, readCacheState, VALID, MALFORMED, OTHER_MODEL, ABSENT } from '../lib/cachestate.js';
import { REPLAY_CHANNEL } from '../lib/replay.js';
import { captureEnvelopeText } from '../lib/capture.js';
import { runCase, IMPLEMENTATION } from '../lib/adapter.js';
import { item } from './helpers.js';

const ASTRA = 'gpt-6-astra';
const KEY = '0123456789abcdef0123456789abcdef';
const KEY2 = 'fedcba9876543210fedcba9876543210';

// --- history builders -------------------------------------------------------------------------
const umsg = (text) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] });
const u = (text, extra = {}) => ({ role: 'user', items: [umsg(text)], ...extra });
const recText = (effort, { key = KEY, model = ASTRA } = {}) => JSON.stringify({ model, key, effort });
const recBlock = (effort, opts) => ({ type: 'text', text: recText(effort, opts) });
/** An assistant message; `effort` undefined means no record; `record` overrides the channel. */
const a = (name, effort, { record, items, response_id, replay } = {}) => {
  const channels = {};
  if (record !== undefined) channels[CACHE_STATE_CHANNEL] = record;
  else if (effort !== undefined) channels[CACHE_STATE_CHANNEL] = [recBlock(effort)];
  if (replay) channels[REPLAY_CHANNEL] = replay;
  const msg = { role: 'assistant', channels, items: items ?? [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: name }] }] };
  if (response_id !== undefined) msg.response_id = response_id;
  return msg;
};
const call = (id) => ({ type: 'function_call', call_id: id, name: 'f', arguments: '{}' });
const toolResult = (id) => ({ role: 'user', items: [{ type: 'function_call_output', call_id: id, output: 'r' }] });
const compaction = () => ({ role: 'assistant', items: [{ type: 'compaction', encrypted_content: 'z' }] });

/** A readable trace of an input: user/assistant texts, updates, other item types. */
function trace(input) {
  return input.map((it) => {
    if (it.type === 'configuration_update') return `update(${it.reasoning.effort})`;
    if (it.type === 'message') return it.content[0].text;
    return it.type;
  });
}
const updates = (input) => input.filter((it) => it.type === 'configuration_update').map((it) => it.reasoning.effort);

function run(messages, desired, extra = {}) {
  return plan({ history: { messages }, model: ASTRA, desired_effort: desired, instance_key: KEY, ...extra });
}
const rejects = (fn, code) => assert.throws(fn, (e) => e.code === code, `expected ${code}`);

// --- §9.4 examples ----------------------------------------------------------------------------
test('§9.4 example 1: u1, a1(low), u2, a2(high), u3 with desired low', () => {
  const r = run([u('u1'), a('a1', 'low'), u('u2'), a('a2', 'high'), u('u3')], 'low');
  assert.equal(r.request.reasoning.effort, 'low');
  assert.deepEqual(trace(r.request.input), ['u1', 'a1', 'update(high)', 'u2', 'a2', 'update(low)', 'u3']);
  assert.deepEqual(r.record, { model: ASTRA, key: KEY, effort: 'low' });
  assert.deepEqual(r.diagnostics, []);
  assert.equal(r.request.model, ASTRA);
  assert.equal(r.request.prompt_cache_key, KEY);
  assert.equal(Object.hasOwn(r.request, 'previous_response_id'), false);
});

test('§9.4 example 2: a tool loop gives no update and records low; the next genuine turn gets high (F4)', () => {
  const loop = [u('u1'), a('a1', 'low', { items: [call('c1')] }), toolResult('c1')];
  const r = run(loop, 'high');
  assert.deepEqual(updates(r.request.input), []);
  assert.equal(r.request.reasoning.effort, 'low');
  assert.equal(r.record.effort, 'low');
  const r2 = run([...loop, a('a2', 'low'), u('u2')], 'high');
  assert.deepEqual(trace(r2.request.input), ['u1', 'function_call', 'function_call_output', 'a2', 'update(high)', 'u2']);
  assert.equal(r2.record.effort, 'high');
});

test('§9.4 example 3: native compaction makes the effective effort unknown (F7)', () => {
  const r = run([u('u1'), a('a1', 'low'), compaction(), u('u2')], 'low');
  assert.deepEqual(trace(r.request.input), ['u1', 'a1', 'compaction', 'update(low)', 'u2']);
  assert.equal(r.record.effort, 'low');
  // compaction_trigger too, and on any message
  const r2 = run([u('u1'), a('a1', 'low'), { role: 'user', items: [{ type: 'compaction_trigger' }] }, u('u2')], 'low');
  assert.deepEqual(updates(r2.request.input), ['low']);
  // no genuine turn after compaction: no update, the record keeps the last known effort
  const r3 = run([u('u1'), a('a1', 'low'), u('u2'), a('a2', 'high'), compaction()], 'low');
  assert.deepEqual(updates(r3.request.input), ['high']);
  assert.equal(r3.record.effort, 'high');
  // unknown, then a turn that keeps the effective effort (followed by an unrecorded assistant):
  // it still gets an update, with the remembered effort
  const r4 = run([u('u1'), a('a1', 'medium'), compaction(), u('u2'), a('a2'), u('u3')], 'medium');
  assert.deepEqual(trace(r4.request.input), ['u1', 'a1', 'compaction', 'update(medium)', 'u2', 'a2', 'u3']);
});

// --- F9 -------------------------------------------------------------------------------------
test('F9: low → high → high (tool turn) → low over SSE and over a WebSocket continuation', () => {
  const histories = [
    [[u('u1')], 'low'],
    [[u('u1'), a('a1', 'low', { response_id: 'resp_1' }), u('u2')], 'high'],
    [[u('u1'), a('a1', 'low', { response_id: 'resp_1' }), u('u2'), a('a2', 'high', { items: [call('c1')], response_id: 'resp_2' }), toolResult('c1')], 'high'],
    [[u('u1'), a('a1', 'low', { response_id: 'resp_1' }), u('u2'), a('a2', 'high', { items: [call('c1')], response_id: 'resp_2' }), toolResult('c1'),
      a('a3', 'high', { response_id: 'resp_3' }), u('u3')], 'low'],
  ];
  const sse = histories.map(([m, d]) => run(m, d));
  const ws = histories.map(([m, d]) => run(m, d, { transport: 'websocket' }));
  const cont = histories.map(([m, d]) => run(m, d, { transport: 'websocket_continuation' }));
  assert.deepEqual(sse.map((r) => updates(r.request.input)), [[], ['high'], ['high'], ['high', 'low']]);
  assert.deepEqual(ws, sse, 'a WebSocket request without continuation sends the same input (P3)');
  assert.deepEqual(cont.map((r) => updates(r.request.input)), [[], ['high'], [], ['low']]);
  assert.deepEqual(cont.map((r) => r.request.previous_response_id), [undefined, 'resp_1', 'resp_2', 'resp_3']);
  assert.deepEqual(trace(cont[3].request.input), ['update(low)', 'u3']);
  assert.deepEqual(trace(cont[2].request.input), ['function_call_output']);
  assert.deepEqual(cont.map((r) => r.record), sse.map((r) => r.record));
  assert.deepEqual(sse.map((r) => r.record.effort), ['low', 'high', 'high', 'low']);
  assert.deepEqual(sse.map((r) => r.request.reasoning.effort), ['low', 'low', 'low', 'low']);
});

test('F9: continuation needs the last assistant message\'s response id; else a full replay', () => {
  for (const response_id of ['', null, 7, false]) {
    const e = run([u('u1'), a('a1', 'low', { response_id }), u('u2')], 'low', { transport: 'websocket_continuation' });
    assert.equal(Object.hasOwn(e.request, 'previous_response_id'), false, 'only a non-empty string is a response id');
    assert.deepEqual(trace(e.request.input), ['u1', 'a1', 'u2']);
  }
  const none = run([u('u1')], 'low', { transport: 'websocket_continuation' });
  assert.equal(Object.hasOwn(none.request, 'previous_response_id'), false);
  const m = [u('u1'), a('a1', 'low', { response_id: 'resp_1' }), u('u2'), a('a2', 'low'), u('u3')];
  const r = run(m, 'low', { transport: 'websocket_continuation' });
  assert.equal(Object.hasOwn(r.request, 'previous_response_id'), false);
  assert.deepEqual(trace(r.request.input), ['u1', 'a1', 'u2', 'a2', 'u3']);
});

// --- F1–F6 ----------------------------------------------------------------------------------
test('F1: baseline is the first valid record; other reasoning members are kept as given', () => {
  const r = run([u('u1'), a('a1', 'high'), u('u2'), a('a2', 'low'), u('u3')], 'medium',
    { metadata: { reasoning: { summary: 'auto', mode: 'standard', context: { x: 1 } } } });
  assert.deepEqual(r.request.reasoning, { summary: 'auto', mode: 'standard', context: { x: 1 }, effort: 'high' });
  assert.deepEqual(trace(r.request.input), ['u1', 'a1', 'update(low)', 'u2', 'a2', 'update(medium)', 'u3']);
  // metadata.reasoning.effort is the desired effort (and wins over the configured one)
  const r2 = run([u('u1')], 'low', { metadata: { reasoning: { effort: 'xhigh' } } });
  assert.deepEqual(r2.request.reasoning, { effort: 'xhigh' });
  // reasoning.effort: null is absent: the configured desired effort applies
  assert.deepEqual(run([u('u1')], 'max', { metadata: { reasoning: { effort: null } } }).request.reasoning, { effort: 'max' });
});

test('F5: missing record, another model\'s record, a user turn before any assistant: unchanged', () => {
  const other = a('a2', undefined, { record: [recBlock('high', { model: 'gpt-5' })] });
  const r = run([u('u1'), a('a1', 'low'), u('u2'), other, u('u3'), u('u4'), a('a4', 'high'), u('u5')], 'low');
  assert.deepEqual(trace(r.request.input), ['u1', 'a1', 'u2', 'a2', 'u3', 'update(high)', 'u4', 'a4', 'update(low)', 'u5']);
  assert.deepEqual(r.diagnostics, [], 'records of other models are not malformed');
  // an imported history with no records at all: baseline = desired, no updates but the new turn
  const r2 = run([u('u1'), a('a1'), u('u2'), a('a2'), u('u3')], 'high');
  assert.deepEqual(updates(r2.request.input), []);
  assert.equal(r2.request.reasoning.effort, 'high');
});

test('genuine user turns: tool results, tool media, empty content', () => {
  assert.equal(isGenuineUserTurn(u('x')), true);
  assert.equal(isGenuineUserTurn({ role: 'user', items: [{ type: 'message', role: 'user', content: 'hi' }] }), true);
  assert.equal(isGenuineUserTurn({ role: 'user', items: [{ type: 'message', role: 'user', content: '' }] }), false);
  assert.equal(isGenuineUserTurn({ role: 'user', items: [{ type: 'message', role: 'user', content: [] }] }), false);
  assert.equal(isGenuineUserTurn({ role: 'user', items: [umsg('x'), { type: 'custom_tool_call_output', call_id: 'c', output: 'e' }] }), false);
  assert.equal(isGenuineUserTurn({ role: 'user', items: [umsg('x'), { type: 'function_call_output', call_id: 'c', output: 'e' }] }), false);
  assert.equal(isGenuineUserTurn(u('x', { channels: { 'fast-agent-tool-media-message': [{ type: 'text', text: 'm' }] } })), false);
  assert.equal(isGenuineUserTurn({ role: 'assistant', items: [umsg('x')] }), false);
  assert.equal(isGenuineUserTurn({ role: 'user' }), false);
  // an empty tool-media channel is no channel (ST1)
  assert.equal(isGenuineUserTurn(u('x', { channels: { 'fast-agent-tool-media-message': [] } })), true);
  assert.equal(isGenuineUserTurn(u('x', { channels: { 'fast-agent-tool-media-message': null } })), true);
  // staged tool media gets no update; the update goes before the first user message item
  const media = u('media', { channels: { 'fast-agent-tool-media-message': [{ type: 'image', data: 'x', mimeType: 'image/png' }] } });
  const first = { role: 'user', items: [{ type: 'message', role: 'user', content: [] }, { type: 'item_reference', id: 'x' }, umsg('later')] };
  const r = run([u('u1'), a('a1', 'low'), media, first], 'high');
  assert.deepEqual(r.request.input.map((it) => it.type), ['message', 'message', 'message', 'configuration_update', 'message', 'item_reference', 'message']);
});

test('F6: malformed records are absent, reported, and their effort never sent', () => {
  const bad = [
    [{ type: 'text', text: 'not json' }],
    [{ type: 'text', text: '{"model":"gpt-6-astra","key":"k","effort":"high","model":"gpt-6-astra"}' }],
    [{ type: 'text', text: '{"model":"gpt-6-astra","key":"k"}' }],
    [{ type: 'text', text: '{"model":"gpt-6-astra","key":"k","effort":"high","x":1}' }],
    [{ type: 'text', text: '{"model":"gpt-6-astra","key":"","effort":"high"}' }],
    [{ type: 'text', text: '{"model":"gpt-6-astra","key":5,"effort":"high"}' }],
    [{ type: 'text', text: '{"model":7,"key":"k","effort":"high"}' }],
    [recBlock('minimal')],
    [recBlock('none')],
    [recBlock(null)],
    [recBlock('HIGH')],
    [recBlock('high'), recBlock('high')],
    [{ type: 'image', data: 'x' }],
    [{ type: 'text', text: 5 }],
    'not an array',
    [{ type: 'text', text: '[]' }],
    [{ type: 'text', text: '{"model":"gpt-6-astra","key":"k","effort":"hi\\ud800"}' }],
  ];
  for (const record of bad) {
    assert.equal(readCacheState(a('a', undefined, { record }), ASTRA, true).verdict, MALFORMED, JSON.stringify(record));
    const r = run([u('u1'), a('a1', undefined, { record }), u('u2')], 'medium');
    assert.deepEqual(r.diagnostics, [{ code: 'cache_state_invalid', message_index: 1, block_index: 0 }]);
    assert.deepEqual(updates(r.request.input), [], 'the turn keeps the effective effort');
    assert.equal(r.request.reasoning.effort, 'medium', 'baseline falls back to the desired effort');
    assert.equal(r.request.prompt_cache_key, KEY);
  }
  // not malformed: an empty channel, no channel, another model's record, a non-assistant's channel
  assert.equal(readCacheState(a('a', undefined, { record: [] }), ASTRA, true).verdict, ABSENT);
  assert.equal(readCacheState(a('a'), ASTRA, true).verdict, ABSENT);
  assert.equal(readCacheState(a('a', undefined, { record: [recBlock('bogus', { model: 'o' })] }), ASTRA, true).verdict, OTHER_MODEL);
  assert.equal(readCacheState({ role: 'user', channels: { [CACHE_STATE_CHANNEL]: 'x' } }, ASTRA, true).verdict, ABSENT);
  // member order and whitespace do not matter; extra block members are ignored
  const ok = readCacheState(a('a', undefined, { record: [{ type: 'text', text: ' {"effort":"max", "key":"k","model":"gpt-6-astra"} ', annotations: [] }] }), ASTRA, true);
  assert.deepEqual(ok, { verdict: VALID, key: 'k', effort: 'max' });
  // a non-update-capable model's records carry effort null; anything else is malformed
  assert.equal(readCacheState(a('a', undefined, { record: [recBlock(null, { model: 'gpt-5' })] }), 'gpt-5', false).verdict, VALID);
  assert.equal(readCacheState(a('a', undefined, { record: [recBlock('high', { model: 'gpt-5' })] }), 'gpt-5', false).verdict, MALFORMED);
});

test('F6/F11: diagnostics of P2 and records together, in message order', () => {
  const env = (it) => ({ type: 'text', text: captureEnvelopeText(it, 'response.output_item.done') });
  const r = run([
    u('u1', { channels: { [REPLAY_CHANNEL]: [env(item())] } }),
    a('a1', undefined, { record: ['x'], replay: [{ type: 'text', text: '{}' }, env(item()), env(item())] }),
    u('u2'),
    a('a2', undefined, { record: [recBlock('nope')] }),
    u('u3'),
  ], 'low');
  assert.deepEqual(r.diagnostics, [
    { code: 'replay_channel_misplaced', message_index: 0, block_index: 0 },
    { code: 'envelope_member_missing', message_index: 1, block_index: 0 },
    { code: 'dedupe_exact_duplicate', message_index: 1, block_index: 2 },
    { code: 'cache_state_invalid', message_index: 1, block_index: 0 },
    { code: 'cache_state_invalid', message_index: 3, block_index: 0 },
  ]);
  assert.deepEqual(r.request.input.map((it) => it.type), ['message', 'reasoning', 'message', 'message', 'message', 'message']);
});

test('xai target (F12): D7 applies inside the plan; no update, no record', () => {
  const env = { type: 'text', text: captureEnvelopeText(item(), 'response.output_item.done') };
  const asst = a('a1', 'low', { replay: [env], items: [{ type: 'message', role: 'assistant', id: 'msg_1', content: [{ type: 'output_text', text: 'a1' }] }] });
  const r = run([u('u1'), asst, u('u2')], 'high', { target_provider: 'xai' });
  assert.deepEqual(r.request.input.map((it) => it.type), ['message', 'reasoning', 'message', 'message']);
  assert.equal(Object.hasOwn(r.request.input[2], 'id'), false);
  assert.deepEqual(r.request.reasoning, { effort: 'high' });
  assert.equal(r.record, null);
});

// --- F8 -------------------------------------------------------------------------------------
test('F8: every row, and its null semantics', () => {
  const h = [u('u1')];
  const p = (metadata, extra = {}) => () => run(h, 'low', { metadata, ...extra });
  // row 1
  rejects(p({ model: 5 }), 'plan_model_invalid');
  rejects(() => plan({ history: { messages: [] }, model: null, desired_effort: 'low', instance_key: KEY }), 'plan_model_invalid');
  assert.equal(run(h, 'low', { metadata: { model: null } }).request.model, ASTRA);
  assert.equal(run(h, 'low', { metadata: { model: 'gpt-5' } }).request.model, 'gpt-5');
  // row 2
  rejects(p({ prompt_cache_key: 5 }), 'plan_cache_key_invalid');
  rejects(p({}, { instance_key: 'ABCDEF0123456789abcdef0123456789' }), 'plan_cache_key_invalid');
  rejects(p({}, { instance_key: KEY + '0' }), 'plan_cache_key_invalid');
  // an explicit key replaces the instance key on a governed target: it is not checked there
  assert.equal(run(h, 'low', { metadata: { prompt_cache_key: 'mine' }, instance_key: 'short' }).request.prompt_cache_key, 'mine');
  rejects(p({ prompt_cache_key: 'mine' }, { instance_key: 'short', target_provider: 'xai' }), 'plan_cache_key_invalid');
  rejects(p({ prompt_cache_key: null }, { instance_key: 'short' }), 'plan_cache_key_invalid');
  assert.equal(run(h, 'low', { metadata: { prompt_cache_key: null } }).request.prompt_cache_key, KEY);
  // row 3
  for (const eb of [5, 'x', [], true]) rejects(p({ extra_body: eb }), 'plan_extra_body_invalid');
  assert.doesNotThrow(p({ extra_body: null }));
  // row 4
  rejects(p({ extra_body: { model: 'gpt-5' } }), 'plan_model_boundary');
  rejects(p({ model: 'gpt-5', extra_body: { model: ASTRA } }), 'plan_model_boundary');
  assert.doesNotThrow(p({ model: 'gpt-5', extra_body: { model: 'gpt-5.1' } }));
  assert.doesNotThrow(p({ extra_body: { model: null } }));
  // row 5
  rejects(p({ extra_body: { reasoning: { effort: 'high' } } }), 'plan_extra_body_override');
  rejects(p({ extra_body: { prompt_cache_key: 'k' } }), 'plan_extra_body_override');
  // row 6
  for (const m of [{ input: [] }, { previous_response_id: 'r' }, { extra_body: { input: 'x' } }, { extra_body: { previous_response_id: 'r' } }]) {
    rejects(p(m), 'plan_raw_input_override');
  }
  assert.doesNotThrow(p({ input: null, previous_response_id: null, extra_body: { input: null, previous_response_id: null } }));
  // row 7
  for (const m of [{ truncation: 'auto' }, { extra_body: { truncation: 'auto' } }, { truncation: false },
    { context_management: [{ type: 'compaction' }] }, { extra_body: { context_management: { compact_threshold: 1 } } }, { context_management: 0 }]) {
    rejects(p(m), 'plan_auto_context_management');
  }
  assert.doesNotThrow(p({ truncation: 'disabled', context_management: [], extra_body: { truncation: null, context_management: {} } }));
  assert.doesNotThrow(p({ truncation: null, context_management: null }));
  // row 8
  for (const m of [{ reasoning: { effort: 'low', mode: 'pro' } }, { multi_agent: true }, { multi_agent: 'on' },
    { multi_agent: { enabled: true } }, { multi_agent: { enabled: 0 } }, { extra_body: { multi_agent: { enabled: true } } }]) {
    rejects(p(m), 'plan_mode_unsupported');
  }
  assert.doesNotThrow(p({ reasoning: { mode: null }, multi_agent: null, extra_body: { multi_agent: { enabled: false } } }));
  assert.doesNotThrow(p({ reasoning: { mode: 'standard' }, multi_agent: { enabled: null } }));
  assert.doesNotThrow(p({ multi_agent: {} }));
  // row 9
  rejects(p({ reasoning: null }), 'plan_effort_invalid');
  rejects(p({ reasoning: 'high' }), 'plan_effort_invalid');
  rejects(p({ reasoning: { effort: 'minimal' } }), 'plan_effort_invalid');
  rejects(p({ reasoning: { effort: 'none' } }), 'plan_effort_invalid');
  rejects(() => run(h, null), 'plan_effort_invalid');
  rejects(() => run(h, 'minimal'), 'plan_effort_invalid');
  rejects(() => run([u('u1'), a('a1', 'high'), u('u2')], null), 'plan_effort_invalid');
  // row 10: only when the planned input holds an update
  rejects(() => run([u('u1'), a('a1', 'low'), u('u2')], 'high', { endpoint: 'compact' }), 'plan_compact_with_updates');
  assert.doesNotThrow(() => run([u('u1'), a('a1', 'low'), u('u2')], 'low', { endpoint: 'compact' }));
  // a non-object metadata.reasoning is rejected for other models too; null is absent for them
  rejects(p({ model: 'gpt-5', reasoning: 'high' }), 'plan_effort_invalid');
  rejects(p({ model: 'gpt-5', reasoning: [] }), 'plan_effort_invalid');
  // the other rows 5–11 apply only to update-capable models
  const other = { model: 'gpt-5', extra_body: { reasoning: { effort: 'x' }, input: [], truncation: 'auto', multi_agent: true }, reasoning: null, truncation: 'auto' };
  assert.doesNotThrow(p(other));
  assert.doesNotThrow(() => run(h, 'minimal', { metadata: { model: 'gpt-5' } }));
});

test('F8: the first failing row in table order gives the code', () => {
  const h = { messages: [u('u1')] };
  const base = { history: h, model: ASTRA, desired_effort: null, instance_key: 'bad' };
  rejects(() => plan({ ...base, metadata: { model: 1, prompt_cache_key: 1 } }), 'plan_model_invalid');
  rejects(() => plan({ ...base, metadata: { extra_body: 1 } }), 'plan_cache_key_invalid');
  const ok = { ...base, instance_key: KEY };
  rejects(() => plan({ ...ok, metadata: { extra_body: 1, reasoning: null } }), 'plan_extra_body_invalid');
  rejects(() => plan({ ...ok, metadata: { extra_body: { model: 'm', reasoning: {} } } }), 'plan_model_boundary');
  rejects(() => plan({ ...ok, metadata: { input: [], extra_body: { reasoning: {} } } }), 'plan_extra_body_override');
  rejects(() => plan({ ...ok, metadata: { truncation: 'auto', input: [] } }), 'plan_raw_input_override');
  rejects(() => plan({ ...ok, metadata: { truncation: 'auto', multi_agent: true } }), 'plan_auto_context_management');
  rejects(() => plan({ ...ok, metadata: { multi_agent: true } }), 'plan_mode_unsupported');
  rejects(() => plan({ ...ok, metadata: {} }), 'plan_effort_invalid');
  // a malformed record is never a rejection
  assert.doesNotThrow(() => plan({ ...ok, desired_effort: 'low', history: { messages: [u('u1'), a('a1', undefined, { record: ['x'] })] } }));
});

test('F8 via a caller-supplied registry; membership is exact', () => {
  const h = [u('u1'), a('a1', 'low'), u('u2')];
  const r = plan({ history: { messages: h.map((m) => m.role === 'assistant' ? a('a1', undefined, { record: [recBlock('low', { model: 'm2' })] }) : m) },
    model: 'm2', desired_effort: 'high', instance_key: KEY, update_capable_models: ['m2'] });
  assert.deepEqual(updates(r.request.input), ['high']);
  const r2 = plan({ history: { messages: h }, model: ASTRA, desired_effort: 'high', instance_key: KEY, update_capable_models: ['m2'] });
  assert.deepEqual(updates(r2.request.input), [], 'gpt-6-astra is not update-capable under this registry');
  assert.deepEqual(r2.diagnostics, [{ code: 'cache_state_invalid', message_index: 1, block_index: 0 }]);
  assert.equal(run(h, 'high', { metadata: { model: 'GPT-6-ASTRA' } }).record.effort, null);
});

// --- F10 ------------------------------------------------------------------------------------
test('F10: other models get the desired effort per request, no updates, record effort null', () => {
  const g5 = (e) => a('a', undefined, { record: [recBlock(e, { model: 'gpt-5' })] });
  const h = [u('u1'), g5(null), u('u2'), g5(null), u('u3')];
  const r = run(h, 'high', { metadata: { model: 'gpt-5' } });
  assert.deepEqual(updates(r.request.input), []);
  assert.deepEqual(r.request.reasoning, { effort: 'high' });
  assert.deepEqual(r.record, { model: 'gpt-5', key: KEY, effort: null });
  // no desired effort and no metadata.reasoning: no reasoning member at all
  const r2 = run(h, null, { metadata: { model: 'gpt-5' } });
  assert.equal(Object.hasOwn(r2.request, 'reasoning'), false);
  // metadata.reasoning with the desired effort set on it
  const r3 = run(h, 'low', { metadata: { model: 'gpt-5', reasoning: { summary: 'auto' } } });
  assert.deepEqual(r3.request.reasoning, { summary: 'auto', effort: 'low' });
  const r3b = run(h, null, { metadata: { model: 'gpt-5', reasoning: { effort: null, summary: 'auto' } } });
  assert.deepEqual(r3b.request.reasoning, { summary: 'auto' }, 'effort: null asks for nothing');
  const r4 = run(h, 'low', { metadata: { model: 'gpt-5', reasoning: { effort: 'minimal' } } });
  assert.deepEqual(r4.request.reasoning, { effort: 'minimal' });
  // records of an update-capable model are another model's: ignored, not malformed
  const r5 = run([u('u1'), a('a1', 'high'), u('u2')], 'low', { metadata: { model: 'gpt-5' } });
  assert.deepEqual(r5.diagnostics, []);
});

// --- K1–K4 ----------------------------------------------------------------------------------
test('K1/K2: instance key without records; override; last valid record of the requested model', () => {
  assert.equal(run([u('u1')], 'low').request.prompt_cache_key, KEY);
  assert.equal(run([u('u1')], 'low', { instance_key: KEY2 }).request.prompt_cache_key, KEY2, 'independent instances differ');
  const h = [u('u1'), a('a1', undefined, { record: [recBlock('low', { key: 'A' })] }), u('u2'),
    a('a2', undefined, { record: [recBlock('low', { key: 'B' })] }), u('u3'),
    a('a3', undefined, { record: [recBlock('low', { key: 'C', model: 'gpt-5' })] }), u('u4'),
    a('a4', undefined, { record: [{ type: 'text', text: '{"model":"gpt-6-astra","key":"D","effort":"none"}' }] }), u('u5')];
  const r = run(h, 'low');
  assert.equal(r.request.prompt_cache_key, 'B');
  assert.deepEqual(r.record, { model: ASTRA, key: 'B', effort: 'low' });
  assert.equal(run(h, 'low', { metadata: { prompt_cache_key: 'X' } }).request.prompt_cache_key, 'X');
  assert.throws(() => run(h, 'low', { metadata: { prompt_cache_key: '' } }), { code: 'plan_cache_key_invalid' },
    'an empty key could not be read back from its record');
});

test('K3: keys A, B, then none give A, B, B; resuming gives B; clearing draws a new key', () => {
  const messages = [];
  const sent = [];
  for (const override of ['A', 'B', undefined]) {
    messages.push(u(`u${sent.length + 1}`));
    const metadata = override === undefined ? undefined : { prompt_cache_key: override };
    const r = run(messages, 'low', { metadata });
    sent.push(r.request.prompt_cache_key);
    messages.push(a(`a${sent.length}`, undefined, { record: [{ type: 'text', text: JSON.stringify(r.record) }] }));
  }
  assert.deepEqual(sent, ['A', 'B', 'B']);
  const resumed = JSON.parse(JSON.stringify(messages)); // save and load
  assert.equal(run([...resumed, u('next')], 'low', { instance_key: KEY2 }).request.prompt_cache_key, 'B');
  // clearing: empty history, new instance key, new baseline, no update
  const cleared = run([u('fresh')], 'high', { instance_key: KEY2 });
  assert.equal(cleared.request.prompt_cache_key, KEY2);
  assert.equal(cleared.request.reasoning.effort, 'high');
  assert.deepEqual(updates(cleared.request.input), []);
});

test('K4 / purity: nothing else is derived from the key, inputs are not mutated', () => {
  const h = [u('u1'), a('a1', 'low'), u('u2')];
  const before = JSON.stringify(h);
  const r = run(h, 'high');
  assert.deepEqual(Object.keys(r.request).sort(), ['include', 'input', 'model', 'prompt_cache_key', 'reasoning', 'store']);
  assert.equal(JSON.stringify(h), before);
  assert.deepEqual(run(h, 'high'), r);
});

// --- linear time ----------------------------------------------------------------------------
test('linear in history length: 60k messages of alternating turns plan quickly', () => {
  const efforts = ['low', 'medium', 'high', 'xhigh', 'max'];
  const messages = [];
  for (let i = 0; i < 20000; i++) {
    messages.push(u(`u${i}`));
    messages.push(a(`a${i}`, efforts[i % 5], { items: [call(`c${i}`)] }));
    messages.push(toolResult(`c${i}`));
  }
  messages.push(u('last'));
  const t = performance.now();
  const r = run(messages, 'low');
  const ms = performance.now() - t;
  assert.equal(updates(r.request.input).length, 20000);
  assert.ok(ms < 3000, `took ${ms} ms`);
});

// --- adapter --------------------------------------------------------------------------------
test('adapter: plan is in the handshake; output and reject shapes', () => {
  assert.ok(IMPLEMENTATION.operations.includes('plan'));
  const input = { history: { messages: [u('u1'), a('a1', 'low', { response_id: 'r1' }), u('u2')] }, model: ASTRA, desired_effort: 'high', instance_key: KEY, transport: 'websocket_continuation' };
  const out = runCase('plan', input);
  assert.deepEqual(out, { output: {
    request: { model: ASTRA, store: false, include: ['reasoning.encrypted_content'], reasoning: { effort: 'low' }, prompt_cache_key: KEY, input: [{ type: 'configuration_update', reasoning: { effort: 'high' } }, umsg('u2')], previous_response_id: 'r1' },
    record: { model: ASTRA, key: KEY, effort: 'high' },
    diagnostics: [],
  } });
  assert.deepEqual(runCase('plan', { ...input, metadata: { reasoning: null } }), { reject: { code: 'plan_effort_invalid' } });
  assert.ok(runCase('plan', { ...input, transport: 'carrier-pigeon' }).error);
  assert.ok(runCase('plan', { model: ASTRA }).error);
});

// --- the items form (SPEC CL3) ------------------------------------------------------------------
const itemsAssistant = (effort, items, extra = {}) => ({ role: 'assistant', model: ASTRA, effort, prompt_cache_key: KEY, items, ...extra });

test('CL3: an items-form history plans from the record members of its assistant messages', () => {
  const history = { form: 'items', messages: [
    u('u1'), itemsAssistant('low', [{ type: 'message', role: 'assistant', content: 'a1' }]),
    u('u2'), itemsAssistant('high', [{ type: 'message', role: 'assistant', content: 'a2' }]),
    u('u3'),
  ] };
  const out = plan({ history, model: ASTRA, desired_effort: 'low', instance_key: KEY2 });
  assert.deepEqual(out.request.reasoning, { effort: 'low' });
  assert.equal(out.request.prompt_cache_key, KEY);
  const updates = out.request.input.filter((it) => it.type === 'configuration_update').map((it) => it.reasoning.effort);
  assert.deepEqual(updates, ['high', 'low']);
  assert.deepEqual(out.record, { model: ASTRA, key: KEY, effort: 'low' });
});

test('CL3: record members of a user message are no record', () => {
  const history = { form: 'items', messages: [{ ...u('u1'), model: ASTRA, effort: 'high', prompt_cache_key: KEY2 }] };
  const out = plan({ history, model: ASTRA, desired_effort: 'low', instance_key: KEY });
  assert.deepEqual(out.request.reasoning, { effort: 'low' });
  assert.equal(out.request.prompt_cache_key, KEY);
});

test('CL3: an effort the model does not allow makes the record malformed, as stored', () => {
  const history = { form: 'items', messages: [u('u1'), itemsAssistant('none', []), u('u2')] };
  const out = plan({ history, model: ASTRA, desired_effort: 'low', instance_key: KEY });
  assert.deepEqual(out.diagnostics, [{ code: 'cache_state_invalid', message_index: 1, block_index: 0 }]);
});

test('CL3: model, effort and prompt_cache_key go together', () => {
  const history = { form: 'items', messages: [{ role: 'assistant', model: ASTRA, items: [] }] };
  assert.throws(() => plan({ history, model: ASTRA, desired_effort: 'low', instance_key: KEY }), /go together/);
});
