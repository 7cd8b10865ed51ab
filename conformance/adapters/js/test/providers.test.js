import { test } from 'node:test';
import assert from 'node:assert/strict';
import { issuerOf, PROVIDER_NAME_REGISTRY } from '../lib/providers.js';
import { buildInput, REPLAY_CHANNEL } from '../lib/replay.js';
import { captureEnvelopeText } from '../lib/capture.js';
import { plan } from '../lib/plan.js';
import { item } from './helpers.js';

const block = (it) => ({ type: 'text', text: captureEnvelopeText(it, 'response.output_item.done') });
const recorded = (provider, it) => ({ role: 'assistant', provider, channels: { [REPLAY_CHANNEL]: [block(it)] }, items: [] });

test('P4: a listed name maps to its issuer, an unlisted name is its own issuer', () => {
  assert.equal(issuerOf('responses'), 'openai');
  assert.equal(issuerOf('codexresponses'), 'codex');
  assert.equal(issuerOf('azure'), 'azure');
  for (const issuer of new Set(Object.values(PROVIDER_NAME_REGISTRY))) assert.equal(issuerOf(issuer), issuer);
});

test('P4: a caller entry replaces the registry entry and is applied once', () => {
  const names = { responses: 'azure', gateway: 'responses' };
  assert.equal(issuerOf('responses', names), 'azure');
  assert.equal(issuerOf('gateway', names), 'responses');
  assert.equal(issuerOf('toString', names), 'toString'); // own members only, never the prototype's
});

test('P4: fast-agent\'s route name responses replays to target openai and codexresponses does not', () => {
  const r1 = item({ id: 'r1' });
  const r2 = item({ id: 'r2', encrypted_content: 'd' });
  const out = buildInput({ messages: [recorded('responses', r1), recorded('codexresponses', r2)] }, { provider: 'openai' });
  assert.deepEqual(out.input, [r1]);
  assert.deepEqual(out.diagnostics, [{ code: 'replay_provider_mismatch', message_index: 1, block_index: 0 }]);
});

test('F12: a plan to target responses is governed, its own-named mapping is not', () => {
  const history = { messages: [{ role: 'user', items: [{ type: 'message', role: 'user', content: 'u1' }] }] };
  const base = { history, model: 'gpt-6-astra', desired_effort: 'low', instance_key: '0123456789abcdef0123456789abcdef' };
  assert.notEqual(plan({ ...base, target_provider: 'responses' }).record, null);
  assert.equal(plan({ ...base, target_provider: 'responses', provider_names: { responses: 'azure' } }).record, null);
});

test('P5: a compact plan holds neither store nor include; reasoning_model false keeps store only', () => {
  const history = { messages: [] };
  const base = { history, model: 'gpt-5.4', desired_effort: null, instance_key: '0123456789abcdef0123456789abcdef' };
  const compact = plan({ ...base, endpoint: 'compact' }).request;
  const plain = plan({ ...base, reasoning_model: false }).request;
  assert.equal('store' in compact || 'include' in compact, false);
  assert.equal(plain.store, false);
  assert.equal('include' in plain, false);
});
