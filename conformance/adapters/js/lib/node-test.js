// The conformance vectors as node:test cases, for another JavaScript implementation's own tests:
//
//   import { test } from 'node:test';
//   import { casesFor, checkCase } from 'reasoning-replay-conformance/node-test';
//   for (const c of casesFor({ operation: 'read', levels: 'MUST' })) {
//     test(c.id, () => checkCase(c, myRead(c.input)));   // {output} or {reject: {code}}
//   }
//
// Cases come from vectors.bundle.json (conformance/README.md); results are judged as
// `conformance run` judges them, in either profile of SPEC CL2 (SPEC.md#profiles): `diagnostics`
// (the default) compares an output exactly as a JSON value and a reject by its code, `verdict`
// takes a reject of any code and leaves out the output members that carry diagnostics only.
// An output is narrowed first to the members SPEC CL2 leaves to the implementation. A framework
// that reads histories in the items form asks for `historyFormats: 'items'` (SPEC CL3, CL4).
// Every selector takes one name or an array of names. A failure is an AssertionError whose stack
// starts at the caller of checkCase, with the first difference as a JSON pointer.
import { existsSync, readFileSync } from 'node:fs';
import { AssertionError } from 'node:assert';
import { fileURLToPath } from 'node:url';
import { FORMS, HISTORY_FORMATS, applicability, caseForm, preparedCase, unjudgedMembers } from './forms.js';

export { FORMS, HISTORY_FORMATS } from './forms.js';

/** The operations of each part of the specification (SPEC §13); a part selects them all. */
export const PARTS = Object.freeze({
  record: Object.freeze(['read', 'capture', 'replay', 'dedupe', 'redact', 'telemetry', 'defaults']),
  'configuration-update-ordering': Object.freeze(['plan']),
  'stored-history': Object.freeze(['validate', 'export', 'scan']),
});

/** @deprecated The earlier name of PARTS, from when a part was called a profile. */
export const PROFILES = PARTS;

export const LEVELS = Object.freeze(['MUST', 'SHOULD', 'MAY']);

/** The conformance profiles of SPEC CL2, for checkCase's `profile`. */
export const CONFORMANCE_PROFILES = Object.freeze(['verdict', 'diagnostics']);

// SPEC CL2's table (SPEC.md#profiles): the output members the verdict profile leaves out, and
// the arrays of findings it compares without each entry's `code`. The reference's
// suite/profiles.py holds the same table; tests/test_js_implementation.py keeps the two equal.
export const VERDICT_PROFILE = Object.freeze({
  leftOut: Object.freeze({
    replay: Object.freeze(['diagnostics']),
    plan: Object.freeze(['diagnostics']),
    validate: Object.freeze(['findings']),
  }),
  codedFindings: Object.freeze({ scan: 'findings' }),
});

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

/** A selector's names: a string is one name ('MUST', never 'M', 'U', 'S', 'T'). */
function names(selector) {
  if (selector === undefined || selector === null) return [];
  if (typeof selector === 'string') return [selector];
  return [...selector];
}

let warnedProfile = false;

/** `part`, or the deprecated `profile` selector's value when `part` is not given. */
function partOfOldName(part, profile) {
  if (profile === undefined) return part;
  if (part !== undefined) throw new TypeError('give part only (profile is its deprecated name)');
  const conformance = names(profile).find((name) => CONFORMANCE_PROFILES.includes(name));
  if (conformance !== undefined) {
    throw new TypeError(`profile ${conformance} is a conformance profile (SPEC CL2): pass it to checkCase(c, result, { profile }); a part of the specification is selected by part`);
  }
  if (!warnedProfile) {
    warnedProfile = true;
    process.emitWarning('casesFor({ profile }) selects a part of the specification: call it part (profile now names the conformance profile of checkCase)', 'DeprecationWarning');
  }
  return profile;
}

/**
 * The cases of one or more operations, or of the operations of one or more parts, at the given
 * levels and forms (`neutral`, `items`, `storage`: SPEC CL4), in the suite's order, that apply to
 * an implementation reading `historyFormats` (as its handshake would announce them; SPEC CL3),
 * each as it is sent to such an implementation: a neutral history in the items form when the
 * channels form is not read, and what SPEC CL2 leaves unjudged (a plan's `record` in the items
 * form, a replay's `counters` when `telemetry` is false) left out. Each selector is a name or an
 * array of names; an unknown name throws a TypeError. `profile` is the deprecated name of `part`.
 */
export function casesFor({ operation, part, profile, levels = LEVELS, forms = FORMS, historyFormats = ['channels'], telemetry = true, bundle } = {}) {
  const cases = (bundle ?? loadBundle()).cases;
  const known = new Set(cases.map((c) => c.operation));
  const named = names(operation);
  const parts = names(partOfOldName(part, profile));
  const wantedLevels = names(levels);
  const wantedForms = names(forms);
  const formats = names(historyFormats);
  const unknown = [
    ...named.filter((name) => !known.has(name)),
    ...wantedLevels.filter((l) => !LEVELS.includes(l)),
    ...parts.filter((p) => !Object.hasOwn(PARTS, p)).map((p) => `part ${p}`),
    ...wantedForms.filter((f) => !FORMS.includes(f)).map((f) => `form ${f}`),
    ...formats.filter((f) => !HISTORY_FORMATS.includes(f)).map((f) => `history format ${f}`),
  ];
  if (unknown.length > 0) {
    throw new TypeError(`not in the suite: ${unknown.join(', ')} (operations: ${[...known].sort().join(', ')}; levels: ${LEVELS.join(', ')}; parts: ${Object.keys(PARTS).join(', ')}; forms: ${FORMS.join(', ')}; history formats: ${HISTORY_FORMATS.join(', ')})`);
  }
  let operations = named;
  if (parts.length > 0) {
    const inParts = parts.flatMap((p) => PARTS[p]);
    operations = named.length > 0 ? named.filter((name) => inParts.includes(name)) : inParts;
    if (operations.length === 0) return [];
  }
  const out = [];
  for (const c of cases) {
    if (operations.length > 0 && !operations.includes(c.operation)) continue;
    if ((wantedLevels.length > 0 && !wantedLevels.includes(c.level)) || !wantedForms.includes(caseForm(c))) continue;
    const { applies, historyFormat } = applicability(c, formats);
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

/**
 * `output` as the verdict profile compares it (SPEC CL2): without the members the operation's
 * row leaves out, and its coded findings without their codes. Any other member is kept.
 */
export function verdictView(operation, output) {
  if (!isObject(output)) return output;
  const leftOut = VERDICT_PROFILE.leftOut[operation] ?? [];
  const view = Object.fromEntries(Object.entries(output).filter(([name]) => !leftOut.includes(name)));
  const coded = VERDICT_PROFILE.codedFindings[operation];
  if (coded !== undefined && Array.isArray(view[coded])) {
    view[coded] = view[coded].map((f) => (isObject(f) ? Object.fromEntries(Object.entries(f).filter(([name]) => name !== 'code')) : f));
  }
  return view;
}

/**
 * The first difference of two JSON values in document order, as the runner finds it
 * (suite/compare.py): {pointer, reason}, or null when they are equal as JSON values.
 */
export function firstDifference(expected, actual, pointer = '') {
  const ek = kind(expected);
  const ak = kind(actual);
  if (ek !== ak) return { pointer, reason: `expected ${ek}, got ${ak}` };
  if (ek === 'object') {
    for (const [key, value] of Object.entries(expected)) {
      if (!Object.hasOwn(actual, key)) return { pointer: pointer + token(key), reason: 'member missing' };
      const found = firstDifference(value, actual[key], pointer + token(key));
      if (found !== null) return found;
    }
    for (const key of Object.keys(actual)) {
      if (!Object.hasOwn(expected, key)) return { pointer: pointer + token(key), reason: 'unexpected member' };
    }
    return null;
  }
  if (ek === 'array') {
    const common = Math.min(expected.length, actual.length);
    for (let i = 0; i < common; i++) {
      const found = firstDifference(expected[i], actual[i], pointer + token(i));
      if (found !== null) return found;
    }
    if (expected.length !== actual.length) {
      return { pointer: pointer + token(common), reason: `array has ${actual.length} items, expected ${expected.length}` };
    }
    return null;
  }
  return expected === actual ? null : { pointer, reason: 'value differs' };
}

/**
 * Passes when `result` ({output: object} or {reject: {code}}, as runCase returns them), narrowed
 * as the case governs it (governedOutput), is what the case expects in `profile` ('diagnostics' by default, or 'verdict'; SPEC CL2); otherwise
 * throws an AssertionError naming the case, its rule, level and profile, and the first
 * difference. The error's stack starts at the caller.
 */
export function checkCase(testCase, result, { profile = 'diagnostics' } = {}) {
  if (!CONFORMANCE_PROFILES.includes(profile)) {
    throw new TypeError(`not a conformance profile: ${profile} (profiles: ${CONFORMANCE_PROFILES.join(', ')})`);
  }
  const where = `${testCase.id} [${testCase.spec}, ${testCase.level}, ${profile}]`;
  const fail = (message, actual, expected) => {
    throw new AssertionError({ message: `${where}: ${message}`, actual, expected, operator: 'checkCase', stackStartFn: checkCase });
  };
  const expect = testCase.expect;
  const gotCode = result?.reject?.code;
  const gotOutput = isObject(result) && Object.hasOwn(result, 'output');
  if (gotCode === undefined && !gotOutput) {
    fail(`expected {output} or {reject: {code}}, got ${JSON.stringify(result)}`, result, expect);
  }
  if (expect.reject !== undefined) {
    if (gotCode === undefined) fail(`expected reject '${expect.reject.code}', got an output`, result, expect);
    if (gotCode !== expect.reject.code && profile === 'diagnostics') {
      fail(`expected reject '${expect.reject.code}', got reject '${gotCode}'`, gotCode, expect.reject.code);
    }
    return; // the verdict profile: a reject of any code is the verdict "not accepted"
  }
  if (gotCode !== undefined) fail(`expected an output, got reject '${gotCode}'`, result, expect);
  const view = profile === 'verdict' ? (output) => verdictView(testCase.operation, output) : (output) => output;
  const expected = view(expect.output);
  const actual = view(governedOutput(testCase, result.output));
  const mismatch = firstDifference(expected, actual);
  if (mismatch !== null) fail(`output differs at ${mismatch.pointer || '/'} (${mismatch.reason})`, actual, expected);
}

function kind(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'object') return 'object';
  return typeof v; // boolean, string, or what no JSON value is (undefined, bigint, function)
}

function token(key) {
  return `/${String(key).replaceAll('~', '~0').replaceAll('/', '~1')}`;
}

function isObject(v) {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
