// lib/node-test.js: the vectors as node:test cases. This implementation plays the third-party one,
// through the same two calls the example in conformance/README.md uses.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AssertionError } from 'node:assert';
import { casesFor, checkCase, loadBundle, PROFILES } from '../lib/node-test.js';
import { IMPLEMENTATION, runCase } from '../lib/adapter.js';

test('every vector of the operations this implementation declares passes through casesFor', async (t) => {
  for (const c of casesFor({ operation: IMPLEMENTATION.operations })) {
    await t.test(c.id, () => checkCase(c, runCase(c.operation, c.input)));
  }
});

test('a profile selects exactly its operations, and the profiles cover the suite', () => {
  const every = new Set(loadBundle().cases.map((c) => c.operation));
  const covered = new Set();
  for (const [profile, operations] of Object.entries(PROFILES)) {
    const selected = new Set(casesFor({ profile }).map((c) => c.operation));
    assert.deepEqual([...selected].sort(), [...operations].sort());
    for (const op of operations) covered.add(op);
  }
  assert.deepEqual([...covered].sort(), [...every].sort());
});

test('operations and levels filter together, in suite order', () => {
  const cases = casesFor({ operation: ['read', 'capture'], levels: ['MUST'] });
  const ids = loadBundle().cases.filter((c) => ['read', 'capture'].includes(c.operation) && c.level === 'MUST').map((c) => c.id);
  assert.deepEqual(cases.map((c) => c.id), ids);
  assert.ok(cases.length > 0);
});

test('an operation outside the profile selects nothing', () => {
  assert.deepEqual(casesFor({ operation: 'read', profile: 'stored-history' }), []);
});

test('an unknown operation, profile or level is refused with the known names', () => {
  assert.throws(() => casesFor({ operation: 'raed' }), /not in the suite: raed .*operations: .*read/);
  assert.throws(() => casesFor({ profile: 'records' }), /not in the suite: profile records/);
  assert.throws(() => casesFor({ levels: ['must'] }), /not in the suite: must/);
});

test('checkCase names the case and rule of a wrong output, a wrong code and a missed rejection', () => {
  const cases = casesFor({ operation: 'read' });
  const accepts = cases.find((c) => c.expect.output !== undefined);
  const rejects = cases.find((c) => c.expect.reject !== undefined);
  const where = (c) => new RegExp(`${c.id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\[${c.spec}, ${c.level}\\]`);
  assert.throws(() => checkCase(accepts, { output: { item: {} } }), (e) => e instanceof AssertionError && where(accepts).test(e.message));
  assert.throws(() => checkCase(accepts, { reject: { code: 'json_malformed' } }), /expected an output, got reject 'json_malformed'/);
  assert.throws(() => checkCase(rejects, { reject: { code: 'not_a_code' } }), /got reject 'not_a_code'/);
  assert.throws(() => checkCase(rejects, { output: { item: {} } }), /got an output/);
  assert.doesNotThrow(() => checkCase(rejects, { reject: rejects.expect.reject }));
});

test('every case that applies to an items-only implementation passes in the items form', async (t) => {
  for (const c of casesFor({ operation: IMPLEMENTATION.operations, historyFormats: ['items'] })) {
    await t.test(c.id, () => checkCase(c, runCase(c.operation, c.input)));
  }
});

test('an items-only selection leaves storage cases out and converts every neutral history', () => {
  const items = casesFor({ operation: ['replay', 'plan'], historyFormats: ['items'] });
  const all = loadBundle().cases.filter((c) => ['replay', 'plan'].includes(c.operation));
  const storage = all.filter((c) => c.tags.includes('form:storage'));
  assert.equal(items.length, all.length - storage.length);
  assert.ok(items.every((c) => c.input.history.form === 'items'));
  assert.ok(items.filter((c) => c.operation === 'plan').every((c) => !Object.hasOwn(c.expect.output ?? {}, 'record')));
});

test('a channels-only selection leaves items cases out and sends every other case as written', () => {
  const channels = casesFor({ operation: ['replay', 'plan'] });
  assert.ok(channels.every((c) => !c.tags.includes('form:items')));
  assert.ok(channels.every((c) => c.input.history?.form === undefined));
});

test('forms select by tag, and telemetry: false leaves replay counters unjudged', () => {
  const neutral = casesFor({ operation: 'replay', forms: ['neutral'], telemetry: false });
  assert.ok(neutral.length > 0 && neutral.every((c) => c.tags.includes('form:neutral')));
  const accepted = neutral.find((c) => c.expect.output !== undefined);
  const result = runCase(accepted.operation, accepted.input);
  assert.doesNotThrow(() => checkCase(accepted, { output: { ...result.output, counters: { bogus: 1 } } }));
  assert.throws(() => casesFor({ forms: ['neutrall'] }), /not in the suite: form neutrall/);
  assert.throws(() => casesFor({ historyFormats: ['item'] }), /not in the suite: history format item/);
});

test('a defaults case is judged on store and include only', () => {
  const c = casesFor({ operation: 'defaults' })[0];
  const request = { model: 'm', store: false, include: ['reasoning.encrypted_content', 'other'], prompt_cache_key: 'k' };
  assert.doesNotThrow(() => checkCase(c, { output: { request } }));
  assert.throws(() => checkCase(c, { output: { request: { ...request, store: true } } }), /output differs/);
  const { store: _omitted, ...noStore } = request;
  assert.throws(() => checkCase(c, { output: { request: noStore } }), /output differs/);
});
