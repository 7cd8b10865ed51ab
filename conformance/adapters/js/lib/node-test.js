// The conformance vectors as node:test cases, for another JavaScript implementation's own tests:
//
//   import { test } from 'node:test';
//   import { casesFor, checkCase } from 'reasoning-replay-conformance/node-test';
//   for (const c of casesFor({ operation: 'read' })) {
//     test(c.id, () => checkCase(c, myRead(c.input)));   // {output} or {reject: {code}}
//   }
//
// Cases come from vectors.bundle.json (conformance/README.md); results are judged as
// `conformance run` judges them: an output equal as a JSON value, or exactly the expected code.
import { existsSync, readFileSync } from 'node:fs';
import { AssertionError, deepStrictEqual } from 'node:assert';
import { fileURLToPath } from 'node:url';

/** The operations of each part of the specification (SPEC §13); a profile selects them all. */
export const PROFILES = Object.freeze({
  record: Object.freeze(['read', 'capture', 'replay', 'dedupe', 'redact', 'telemetry']),
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
 * The cases of one or more operations, or of a profile's operations, at the given levels, in the
 * suite's order. An operation, profile or level the suite does not have throws a TypeError.
 */
export function casesFor({ operation, profile, levels = LEVELS, bundle } = {}) {
  const cases = (bundle ?? loadBundle()).cases;
  const known = new Set(cases.map((c) => c.operation));
  const named = operation === undefined ? [] : [operation].flat();
  const unknown = [...named.filter((name) => !known.has(name)), ...levels.filter((l) => !LEVELS.includes(l))];
  if (profile !== undefined && !Object.hasOwn(PROFILES, profile)) unknown.push(`profile ${profile}`);
  if (unknown.length > 0) {
    throw new TypeError(`not in the suite: ${unknown.join(', ')} (operations: ${[...known].sort().join(', ')}; levels: ${LEVELS.join(', ')})`);
  }
  let operations = named;
  if (profile !== undefined) {
    const inProfile = PROFILES[profile];
    operations = named.length > 0 ? named.filter((name) => inProfile.includes(name)) : [...inProfile];
    if (operations.length === 0) return [];
  }
  return cases.filter(
    (c) => (operations.length === 0 || operations.includes(c.operation)) && levels.includes(c.level),
  );
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
  deepStrictEqual(result?.output, expect.output, `${where}: output differs`);
}
