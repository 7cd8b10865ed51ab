// lib/node-test.js: the vectors as node:test cases. This implementation plays the third-party one,
// through the same two calls the example in conformance/README.md uses.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AssertionError } from 'node:assert';
import { casesFor, checkCase, firstDifference, loadBundle, PARTS, PROFILES, verdictView } from '../lib/node-test.js';
import { IMPLEMENTATION, runCase } from '../lib/adapter.js';

test('every vector of the operations this implementation declares passes through casesFor', async (t) => {
  for (const c of casesFor({ operation: IMPLEMENTATION.operations })) {
    await t.test(c.id, () => checkCase(c, runCase(c.operation, c.input)));
  }
});

test('a part selects exactly its operations, and the parts cover the suite', () => {
  const every = new Set(loadBundle().cases.map((c) => c.operation));
  const covered = new Set();
  for (const [part, operations] of Object.entries(PARTS)) {
    const selected = new Set(casesFor({ part }).map((c) => c.operation));
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

test('an operation outside the part selects nothing', () => {
  assert.deepEqual(casesFor({ operation: 'read', part: 'stored-history' }), []);
});

test('an unknown operation, part or level is refused with the known names', () => {
  assert.throws(() => casesFor({ operation: 'raed' }), /not in the suite: raed .*operations: .*read/);
  assert.throws(() => casesFor({ part: 'records' }), /not in the suite: part records/);
  assert.throws(() => casesFor({ levels: ['must'] }), /not in the suite: must/);
  assert.throws(() => casesFor({ levels: 'M' }), /not in the suite: M .*levels: MUST/);
});

for (const [selector, one, several] of [
  ['levels', 'MUST', ['MUST', 'SHOULD']],
  ['operation', 'read', ['read', 'plan']],
  ['part', 'record', ['record', 'stored-history']],
]) {
  test(`${selector} takes one name as a string or several as an array`, () => {
    const byString = casesFor({ [selector]: one }).map((c) => c.id);
    assert.deepEqual(byString, casesFor({ [selector]: [one] }).map((c) => c.id));
    assert.ok(byString.length > 0 && byString.length < casesFor({ [selector]: several }).length);
  });
}

test("a level string is one level, not its characters", () => {
  const cases = casesFor({ operation: 'read', levels: 'MUST' });
  assert.deepEqual([...new Set(cases.map((c) => c.level))], ['MUST']);
});

test('the old profile selector still selects a part; a conformance profile there points to checkCase', () => {
  assert.equal(PROFILES, PARTS);
  assert.deepEqual(casesFor({ profile: 'stored-history' }).map((c) => c.id), casesFor({ part: 'stored-history' }).map((c) => c.id));
  assert.throws(() => casesFor({ profile: 'verdict' }), /conformance profile .*checkCase\(c, result, \{ profile \}\)/);
  assert.throws(() => casesFor({ part: 'record', profile: 'record' }), /give part only/);
});

test('checkCase names the case and rule of a wrong output, a wrong code and a missed rejection', () => {
  const cases = casesFor({ operation: 'read' });
  const accepts = cases.find((c) => c.expect.output !== undefined);
  const rejects = cases.find((c) => c.expect.reject !== undefined);
  const where = (c) => new RegExp(`${c.id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\[${c.spec}, ${c.level}, diagnostics\\]`);
  assert.throws(() => checkCase(accepts, { output: { item: {} } }), (e) => e instanceof AssertionError && where(accepts).test(e.message));
  assert.throws(() => checkCase(accepts, { reject: { code: 'json_malformed' } }), /expected an output, got reject 'json_malformed'/);
  assert.throws(() => checkCase(rejects, { reject: { code: 'not_a_code' } }), /got reject 'not_a_code'/);
  assert.throws(() => checkCase(rejects, { output: { item: {} } }), /got an output/);
  assert.doesNotThrow(() => checkCase(rejects, { reject: rejects.expect.reject }));
});

test('checkCase takes any code for a reject in the verdict profile, and only the expected one in diagnostics', () => {
  const rejects = casesFor({ operation: 'read', levels: 'MUST' }).find((c) => c.expect.reject !== undefined);
  assert.doesNotThrow(() => checkCase(rejects, { reject: { code: 'not_a_code' } }, { profile: 'verdict' }));
  assert.throws(() => checkCase(rejects, { reject: { code: 'not_a_code' } }), /, diagnostics\]: expected reject/);
  assert.throws(() => checkCase(rejects, { output: { item: {} } }, { profile: 'verdict' }), /, verdict\]: .*got an output/);
  assert.throws(() => checkCase(rejects, { reject: rejects.expect.reject }, { profile: 'verdicts' }), /profiles: verdict, diagnostics/);
});

test('checkCase leaves out the diagnostics members in the verdict profile', () => {
  const c = casesFor({ operation: 'replay', levels: 'MUST' }).find((x) => x.expect.output?.diagnostics?.length > 0);
  const result = { output: { ...c.expect.output, diagnostics: [] } };
  assert.doesNotThrow(() => checkCase(c, result, { profile: 'verdict' }));
  assert.throws(() => checkCase(c, result), /output differs at \/diagnostics/);
});

test('the verdict view drops the left-out members and the codes of coded findings', () => {
  assert.deepEqual(verdictView('replay', { input: [], counters: {}, diagnostics: [1] }), { input: [], counters: {} });
  assert.deepEqual(verdictView('scan', { findings: [{ code: 'x', line: 1 }] }), { findings: [{ line: 1 }] });
  assert.deepEqual(verdictView('read', { item: 1, other: 2 }), { item: 1, other: 2 });
});

test('the first difference is a JSON pointer, as the runner reports it', () => {
  assert.equal(firstDifference({ a: [1, { 'b/c': 2 }] }, { a: [1, { 'b/c': 2 }] }), null);
  assert.equal(firstDifference(1, 1.0), null);
  assert.deepEqual(firstDifference({ a: [1, { 'b/c': 2 }] }, { a: [1, { 'b/c': 3 }] }), { pointer: '/a/1/b~1c', reason: 'value differs' });
  assert.deepEqual(firstDifference({ a: 1 }, {}), { pointer: '/a', reason: 'member missing' });
  assert.deepEqual(firstDifference({}, { b: 1 }), { pointer: '/b', reason: 'unexpected member' });
  assert.deepEqual(firstDifference([1], [1, 2]), { pointer: '/1', reason: 'array has 2 items, expected 1' });
  assert.deepEqual(firstDifference(true, 1), { pointer: '', reason: 'expected boolean, got number' });
});

test("a failure's stack starts at the caller of checkCase, not in the helper", () => {
  const c = casesFor({ operation: 'read', levels: 'MUST' }).find((x) => x.expect.output !== undefined);
  let error;
  try {
    checkCase(c, { output: { item: {} } });
  } catch (e) {
    error = e;
  }
  assert.ok(error instanceof AssertionError);
  const frames = error.stack.split('\n').filter((line) => line.trimStart().startsWith('at '));
  assert.match(frames[0], /node-test\.test\.js/);
  assert.ok(!error.stack.includes('lib/node-test.js'), error.stack);
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

test('forms and history formats take one name as a string too', () => {
  const one = casesFor({ operation: 'replay', forms: 'neutral', historyFormats: 'items' }).map((c) => c.id);
  assert.deepEqual(one, casesFor({ operation: 'replay', forms: ['neutral'], historyFormats: ['items'] }).map((c) => c.id));
  assert.ok(one.length > 0);
});
