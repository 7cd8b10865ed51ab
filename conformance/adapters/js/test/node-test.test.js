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
