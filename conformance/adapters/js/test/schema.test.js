// S1/S2 cross-check: on JSON values (no text rules involved), the envelope schema's verdict must
// equal this reader's verdict; diagnostic views and counters must validate against their schemas.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import Ajv2020 from 'ajv/dist/2020.js';
import { envelopeValueCode, itemCode } from '../lib/envelope.js';
import { diagnosticView } from '../lib/redact.js';
import { telemetryCounters } from '../lib/telemetry.js';
import { SCHEMA, item, envelope } from './helpers.js';

const SCHEMA_DIR = fileURLToPath(new URL('../../../../schema/', import.meta.url));
const NS = 'urn:reasoning-replay:schema:';

const ajv = new Ajv2020({ strict: false, allErrors: false });
for (const f of readdirSync(SCHEMA_DIR).filter((n) => n.endsWith('.schema.json'))) {
  ajv.addSchema(JSON.parse(readFileSync(SCHEMA_DIR + f, 'utf8'))); // registered by $id, no network
}
const validate = (id) => ajv.getSchema(NS + id);

// A small deterministic PRNG so failures reproduce.
function rng(seed) {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

/** Random near-canonical envelopes: mutate one or two places of a valid one. */
function* samples(n) {
  const r = rng(12345);
  const pick = (xs) => xs[Math.floor(r() * xs.length)];
  const odd = [null, true, false, 0, 1, 1.5, 2, '', 'x', '1', [], {}, [1], { a: 1 }, 'reasoning', 'summary_text', 'reasoning_text', SCHEMA];
  const partsOf = (t) => [[], [{ type: t, text: '' }], [{ type: t, text: 'a' }, { type: t, text: 'b' }]];
  for (let i = 0; i < n; i++) {
    const it = item({ summary: pick(partsOf('summary_text')) });
    if (r() < 0.4) it.content = pick(partsOf('reasoning_text'));
    const env = envelope(it);
    const targets = [env, it, ...(Array.isArray(it.summary) ? it.summary : []), ...(Array.isArray(it.content) ? it.content : [])];
    const keys = ['schema', 'version', 'item', 'type', 'id', 'summary', 'encrypted_content', 'content', 'text', 'status', 'extra'];
    for (let m = r() < 0.5 ? 1 : 2; m > 0; m--) {
      const t = pick(targets);
      const k = pick(keys);
      if (r() < 0.25) delete t[k];
      else t[k] = pick(odd);
    }
    yield r() < 0.03 ? pick(odd) : env;
  }
}

test('envelope schema verdict equals reader verdict on JSON values (S2)', () => {
  const v = validate('reasoning-replay.v1');
  assert.ok(v);
  let accepted = 0;
  for (const value of samples(5000)) {
    const readerOk = envelopeValueCode(value) === null;
    assert.equal(v(value), readerOk, JSON.stringify(value));
    if (readerOk) accepted++;
  }
  assert.ok(accepted > 100, 'the sample exercises both verdicts');
});

test('the schema bundle alone, compiled by Ajv, gives the reader verdict too (S1)', () => {
  const alone = new Ajv2020({ strict: false, allErrors: false }); // no other schema registered
  const v = alone.compile(JSON.parse(readFileSync(SCHEMA_DIR + 'reasoning-replay.v1.bundle.json', 'utf8')));
  for (const value of samples(2000)) {
    assert.equal(v(value), envelopeValueCode(value) === null, JSON.stringify(value));
  }
});

test('replay item schema accepts exactly the items the reader accepts', () => {
  const v = validate('reasoning-item.v1');
  for (const value of samples(2000)) {
    if (!value || typeof value !== 'object' || !Object.hasOwn(value, 'item')) continue;
    const it = value.item;
    assert.equal(v(it), itemCode(it) === null, JSON.stringify(it));
  }
});

test('diagnostic views and telemetry counters validate against their schemas', () => {
  const view = validate('reasoning-diagnostic-view.v1');
  const tel = validate('replay-telemetry.v1');
  const inputs = [];
  for (const value of samples(1000)) {
    const it = value?.item;
    if (it && typeof it === 'object' && !Array.isArray(it)) {
      const obj = { ...it, type: 'reasoning' };
      assert.ok(view(diagnosticView(obj)), JSON.stringify(view.errors));
      inputs.push(obj);
    }
  }
  assert.ok(tel(telemetryCounters(inputs, { replay_deduplicated_exact_count: 2 })), JSON.stringify(tel.errors));
});
