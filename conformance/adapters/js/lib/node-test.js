// The conformance vectors as node:test cases, for another JavaScript implementation's own tests:
//
//   import { test } from 'node:test';
//   import { casesFor, checkCase } from 'reasoning-replay-conformance/node-test';
//   for (const c of casesFor({ operation: 'read' })) {
//     test(c.id, () => checkCase(c, myRead(c.input)));   // {output} or {reject: {code}}
//   }
//
// Cases come from vectors.bundle.json (conformance/README.md); results are judged as
// `conformance run` judges them: an output equal as a JSON value (with the members SPEC CL2
// leaves to the implementation narrowed first), or exactly the expected code. A framework that
// reads histories in the items form asks for `historyFormats: ['items']` (SPEC CL3, CL4).
import { existsSync, readFileSync } from 'node:fs';
import { AssertionError, deepStrictEqual } from 'node:assert';
import { fileURLToPath } from 'node:url';
import { FORMS, HISTORY_FORMATS, applicability, caseForm, preparedCase, unjudgedMembers } from './forms.js';

export { FORMS, HISTORY_FORMATS } from './forms.js';

/** The operations of each part of the specification (SPEC §13); a profile selects them all. */
export const PROFILES = Object.freeze({
  record: Object.freeze(['read', 'capture', 'replay', 'dedupe', 'redact', 'telemetry', 'defaults']),
  'configuration-update-ordering': Object.freeze(['plan']),
  'stored-history': Object.freeze(['validate', 'export', 'scan']),
});

export const LEVELS = Object.freeze(['MUST', 'SHOULD', 'MAY']);

// Packed, the bundle sits beside package.json; in the repository it is conformance/'s own.
const PACKED_BUNDLE = fileURLToPath(new URL('../vectors.bundle.json', import.meta.url));
const REPOSITORY_BUNDLE = fileURLToPath(new URL('../../../vectors.bundle.json', import.meta.url));

/** The path of the vectors bundle this package reads by default. */
export function defaultBundlePath() {
  return existsSync(PACKED_BUNDLE) ? PACKED_BUNDLE : REPOSITORY_BUNDLE;
}

/** The parsed bundle: {format, suite_version, sha256, cases}. */
export function loadBundle(path = defaultBundlePath()) {
  return JSON.parse(readFileSync(path, 'utf8'));
}

/**
 * The cases of one or more operations, or of a profile's operations, at the given levels and forms
 * (`neutral`, `items`, `storage`: SPEC CL4), in the suite's order, that apply to an implementation
 * reading `historyFormats` (as its handshake would announce them; SPEC CL3), each as it is sent to
 * such an implementation: a neutral history in the items form when the channels form is not read,
 * and what SPEC CL2 leaves unjudged (a plan's `record` in the items form, a replay's `counters`
 * when `telemetry` is false) left out. An unknown name throws a TypeError.
 */
export function casesFor({ operation, profile, levels = LEVELS, forms = FORMS, historyFormats = ['channels'], telemetry = true, bundle } = {}) {
  const cases = (bundle ?? loadBundle()).cases;
  const known = new Set(cases.map((c) => c.operation));
  const named = operation === undefined ? [] : [operation].flat();
  const unknown = [...named.filter((name) => !known.has(name)), ...levels.filter((l) => !LEVELS.includes(l))];
  if (profile !== undefined && !Object.hasOwn(PROFILES, profile)) unknown.push(`profile ${profile}`);
  unknown.push(...forms.filter((f) => !FORMS.includes(f)).map((f) => `form ${f}`));
  unknown.push(...historyFormats.filter((f) => !HISTORY_FORMATS.includes(f)).map((f) => `history format ${f}`));
  if (unknown.length > 0) {
    throw new TypeError(`not in the suite: ${unknown.join(', ')} (operations: ${[...known].sort().join(', ')}; levels: ${LEVELS.join(', ')}; forms: ${FORMS.join(', ')}; history formats: ${HISTORY_FORMATS.join(', ')})`);
  }
  let operations = named;
  if (profile !== undefined) {
    const inProfile = PROFILES[profile];
    operations = named.length > 0 ? named.filter((name) => inProfile.includes(name)) : [...inProfile];
    if (operations.length === 0) return [];
  }
  const out = [];
  for (const c of cases) {
    if (operations.length > 0 && !operations.includes(c.operation)) continue;
    if (!levels.includes(c.level) || !forms.includes(caseForm(c))) continue;
    const { applies, historyFormat } = applicability(c, historyFormats);
    if (applies) out.push(preparedCase(c, historyFormat, unjudgedMembers(c, historyFormat, telemetry)));
  }
  return out;
}

/**
 * SPEC CL2: the output as the case governs it: unjudged members left out; a plan's
 * request.reasoning narrowed as F11 governs it and request.include as P5 does; a defaults'
 * request narrowed to store and include. Anything of another shape is left for the exact
 * comparison to report.
 */
export function governedOutput(testCase, output) {
  if (!isObject(output)) return output;
  let out = output;
  const unjudged = testCase.unjudged ?? [];
  if (unjudged.length > 0) out = Object.fromEntries(Object.entries(out).filter(([name]) => !unjudged.includes(name)));
  const wanted = testCase.expect.output?.request;
  const request = out.request;
  if (!isObject(wanted) || !isObject(request)) return out;
  if (testCase.operation === 'defaults') {
    const narrowed = {};
    for (const name of ['store', 'include']) if (Object.hasOwn(request, name)) narrowed[name] = request[name];
    narrowed.include = governedInclude(wanted.include, request.include) ?? narrowed.include;
    if (narrowed.include === undefined) delete narrowed.include;
    return { ...out, request: narrowed };
  }
  if (testCase.operation !== 'plan') return out;
  const wantedReasoning = wanted.reasoning ?? {};
  const reasoning = request.reasoning ?? {};
  if (!isObject(wantedReasoning) || !isObject(reasoning)) return out;
  // F11: a reasoning with no member SHOULD be omitted; a SHOULD case holds to that.
  const emptySent = Object.keys(reasoning).length === 0 && Object.hasOwn(request, 'reasoning');
  if (emptySent && !Object.hasOwn(wanted, 'reasoning') && testCase.level === 'SHOULD') return out;
  const kept = Object.fromEntries(Object.entries(reasoning).filter(([name]) => name === 'effort' || Object.hasOwn(wantedReasoning, name)));
  const narrowed = Object.fromEntries(Object.entries(request).filter(([name]) => name !== 'reasoning'));
  if (Object.keys(kept).length > 0 || Object.hasOwn(wanted, 'reasoning')) narrowed.reasoning = kept;
  const include = governedInclude(wanted.include, request.include);
  if (include !== undefined) narrowed.include = include;
  return { ...out, request: narrowed };
}

/** P5: include passes when it contains every expected entry; undefined leaves it as it is. */
function governedInclude(wanted, include) {
  if (!Array.isArray(wanted) || !Array.isArray(include)) return undefined;
  return wanted.every((entry) => include.includes(entry)) ? [...wanted] : undefined;
}

function isObject(v) {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Passes when `result` ({output: object} or {reject: {code}}) is what the case expects; otherwise
 * throws an AssertionError naming the case, its rule and level.
 */
export function checkCase(testCase, result) {
  const where = `${testCase.id} [${testCase.spec}, ${testCase.level}]`;
  const expect = testCase.expect;
  const gotCode = result?.reject?.code;
  if (expect.reject !== undefined) {
    if (gotCode === undefined) {
      throw new AssertionError({ message: `${where}: expected reject '${expect.reject.code}', got an output`, actual: result, expected: expect });
    }
    if (gotCode !== expect.reject.code) {
      throw new AssertionError({ message: `${where}: expected reject '${expect.reject.code}', got reject '${gotCode}'`, actual: gotCode, expected: expect.reject.code });
    }
    return;
  }
  if (gotCode !== undefined) {
    throw new AssertionError({ message: `${where}: expected an output, got reject '${gotCode}'`, actual: result, expected: expect });
  }
  deepStrictEqual(governedOutput(testCase, result?.output), expect.output, `${where}: output differs`);
}
