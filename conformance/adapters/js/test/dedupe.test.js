import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dedupeEntries, Deduper } from '../lib/dedupe.js';
import { item } from './helpers.js';

const e = (provider, id, ct) => ({ provider, item: item({ id, encrypted_content: ct }) });

test('D2 exact duplicates: first kept, later dropped and counted', () => {
  const r = dedupeEntries([e('openai', 'a', 'x'), e('openai', 'a', 'x'), e('openai', 'a', 'x')]);
  assert.deepEqual(r.decisions, ['keep', 'drop_duplicate', 'drop_duplicate']);
  assert.deepEqual(r.counters, { replay_deduplicated_exact_count: 2, replay_id_ciphertext_conflict_count: 0 });
});

test('identity ignores summary and content (D1 is provider, id, ciphertext hash)', () => {
  const a = { provider: 'p', item: item({ summary: [] }) };
  const b = { provider: 'p', item: item({ content: [{ type: 'reasoning_text', text: 'x' }] }) };
  assert.deepEqual(dedupeEntries([a, b]).decisions, ['keep', 'drop_duplicate']);
});

test('D3 same id, new ciphertext: kept and counted; later repeats of either are duplicates', () => {
  const r = dedupeEntries([e('p', 'a', 'x'), e('p', 'a', 'y'), e('p', 'a', 'y'), e('p', 'a', 'x'), e('p', 'a', 'z')]);
  assert.deepEqual(r.decisions, ['keep', 'keep_conflict', 'drop_duplicate', 'drop_duplicate', 'keep_conflict']);
  assert.deepEqual(r.counters, { replay_deduplicated_exact_count: 2, replay_id_ciphertext_conflict_count: 2 });
});

test('D3 strict policy rejects with the code', () => {
  assert.throws(() => dedupeEntries([e('p', 'a', 'x'), e('p', 'a', 'y')], { conflict_policy: 'reject' }),
    { name: 'ReplayError', code: 'dedupe_id_ciphertext_conflict' });
  // duplicates are still just dropped under the strict policy
  assert.deepEqual(dedupeEntries([e('p', 'a', 'x'), e('p', 'a', 'x')], { conflict_policy: 'reject' }).decisions,
    ['keep', 'drop_duplicate']);
  assert.throws(() => new Deduper({ conflict_policy: 'maybe' }), TypeError);
});

test('D4 same ciphertext, different ids: both kept', () => {
  assert.deepEqual(dedupeEntries([e('p', 'a', 'x'), e('p', 'b', 'x')]).decisions, ['keep', 'keep']);
});

test('D5 different providers never collide', () => {
  const r = dedupeEntries([e('openai', 'a', 'x'), e('xai', 'a', 'x'), e('xai', 'a', 'y'), e('azure', 'a', 'y')]);
  assert.deepEqual(r.decisions, ['keep', 'keep', 'keep_conflict', 'keep']);
});

test('no separator ambiguity in the identity key', () => {
  assert.deepEqual(dedupeEntries([e('p\u0000a', 'b', 'x'), e('p', 'a\u0000b', 'x')]).decisions, ['keep', 'keep']);
  assert.deepEqual(dedupeEntries([e('p|', 'a', 'x'), e('p', '|a', 'x')]).decisions, ['keep', 'keep']);
});

test('D6 deterministic', () => {
  const entries = [e('p', 'a', 'x'), e('p', 'a', 'y'), e('q', 'a', 'x'), e('p', 'a', 'x')];
  assert.deepEqual(dedupeEntries(entries), dedupeEntries(structuredClone(entries)));
});

test('robust on non-canonical entries: missing provider, non-string ids stay distinct', () => {
  const r = dedupeEntries([
    { item: item({ id: '5' }) }, { item: item({ id: 5 }) }, { provider: null, item: item({ id: '5' }) }, { provider: 'p', item: {} }, { provider: 'p', item: {} },
  ]);
  assert.deepEqual(r.decisions, ['keep', 'keep', 'drop_duplicate', 'keep', 'drop_duplicate']);
});
