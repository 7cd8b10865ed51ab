import { test } from 'node:test';
import assert from 'node:assert/strict';
import { telemetryCounters } from '../lib/telemetry.js';

const zero = {
  reasoning_replay_item_count: 0, reasoning_replay_encrypted_bytes: 0, reasoning_replay_summary_parts: 0,
  reasoning_replay_summary_bytes: 0, reasoning_replay_content_parts: 0, reasoning_replay_content_bytes: 0,
  replay_deduplicated_exact_count: 0, replay_id_ciphertext_conflict_count: 0, canonical_schema_version: 1,
};

test('empty input: zeros and version 1', () => {
  assert.deepEqual(telemetryCounters([]), zero);
  assert.deepEqual(telemetryCounters(undefined), zero);
});

test('counts reasoning items only, UTF-8 bytes of unescaped strings', () => {
  const input = [
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'long user text' }] },
    { type: 'reasoning', id: 'a', encrypted_content: 'é€', summary: [{ type: 'summary_text', text: '😀' }, { type: 'summary_text', text: 'ab' }] },
    { type: 'reasoning', id: 'b', encrypted_content: 'xyz', summary: [], content: [{ type: 'reasoning_text', text: '\n' }] },
  ];
  assert.deepEqual(telemetryCounters(input, { replay_deduplicated_exact_count: 3, replay_id_ciphertext_conflict_count: 1 }), {
    ...zero,
    reasoning_replay_item_count: 2,
    reasoning_replay_encrypted_bytes: 2 + 3 + 3,
    reasoning_replay_summary_parts: 2,
    reasoning_replay_summary_bytes: 4 + 2,
    reasoning_replay_content_parts: 1,
    reasoning_replay_content_bytes: 1,
    replay_deduplicated_exact_count: 3,
    replay_id_ciphertext_conflict_count: 1,
  });
});

test('non-canonical reasoning items: missing/non-string values count 0 bytes, non-arrays 0 parts', () => {
  const input = [
    { type: 'reasoning', encrypted_content: 5, summary: 'text', content: null },
    { type: 'reasoning', summary: [{ type: 'summary_text', text: 7 }, 'x', null], content: [{ text: 'ab' }] },
    'reasoning', null, [{ type: 'reasoning' }],
  ];
  assert.deepEqual(telemetryCounters(input), {
    ...zero, reasoning_replay_item_count: 2, reasoning_replay_summary_parts: 3,
    reasoning_replay_content_parts: 1, reasoning_replay_content_bytes: 2,
  });
});

test('dedupe counters: only non-negative integers are taken', () => {
  const c = telemetryCounters([], { replay_deduplicated_exact_count: true, replay_id_ciphertext_conflict_count: '2' });
  assert.equal(c.replay_deduplicated_exact_count, 0);
  assert.equal(c.replay_id_ciphertext_conflict_count, 0);
});
