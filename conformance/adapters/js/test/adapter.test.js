import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { handleLine, runCase, IMPLEMENTATION } from '../lib/adapter.js';

const BIN = fileURLToPath(new URL('../bin/adapter.js', import.meta.url));
const GOLDEN = '{"schema":"fast-agent.openai-responses.reasoning-replay","version":1,"item":{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"é"}],"encrypted_content":"c"}}';

/** Run the adapter with the given stdin lines; resolve with stdout lines and exit code. */
function runAdapter(lines, args = []) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, lines: out.split('\n').filter(Boolean), stderr: err }));
    child.stdin.on('error', () => {}); // oneshot may exit before reading everything
    child.stdin.end(lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l)) + '\n').join(''));
  });
}

const run = (seq, operation, input) => ({ cmd: 'run', seq, id: `case-${seq}`, operation, input });

test('start handshake', () => {
  assert.deepEqual(JSON.parse(handleLine('{"cmd":"start","protocol":1}')), { protocol: 1, implementation: IMPLEMENTATION });
});

test('read: text, bytes via text_base64, lone surrogate text', () => {
  assert.deepEqual(runCase('read', { text: GOLDEN }).output.item.summary, [{ type: 'summary_text', text: 'é' }]);
  assert.deepEqual(runCase('read', { text_base64: Buffer.from(GOLDEN).toString('base64') }).output.item.id, 'rs_1');
  assert.deepEqual(runCase('read', { text_base64: Buffer.from([0xef, 0xbb, 0xbf, ...Buffer.from(GOLDEN)]).toString('base64') }),
    { reject: { code: 'json_malformed' } });
  assert.deepEqual(runCase('read', { text_base64: Buffer.from([0x7b, 0xc3, 0x7d]).toString('base64') }), { reject: { code: 'json_invalid_unicode' } });
  // The protocol line escapes the lone surrogate; the reader must still see it.
  const line = '{"cmd":"run","seq":7,"id":"x","operation":"read","input":{"text":"{\\"schema\\":\\"\\ud800\\"}"}}';
  assert.equal(handleLine(line), '{"seq":7,"reject":{"code":"json_invalid_unicode"}}');
});

test('capture, dedupe, telemetry, redact shapes', () => {
  assert.deepEqual(runCase('capture', { source: 'response.completed', output_item: { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'é' }], encrypted_content: 'c' } }),
    { output: { envelope_text: GOLDEN } });
  assert.deepEqual(runCase('capture', { source: 'response.output_item.added', output_item: {} }), { reject: { code: 'capture_not_completed' } });
  const it = { type: 'reasoning', id: 'a', summary: [], encrypted_content: 'x' };
  assert.deepEqual(runCase('dedupe', { entries: [{ provider: 'p', item: it }, { provider: 'p', item: { ...it, encrypted_content: 'y' } }] }).output.decisions,
    ['keep', 'keep_conflict']);
  assert.deepEqual(runCase('dedupe', { entries: [{ provider: 'p', item: it }, { provider: 'p', item: { ...it, encrypted_content: 'y' } }], options: { conflict_policy: 'reject' } }),
    { reject: { code: 'dedupe_id_ciphertext_conflict' } });
  assert.equal(runCase('telemetry', { request: { input: [it] } }).output.counters.reasoning_replay_encrypted_bytes, 1);
  assert.deepEqual(runCase('redact', { payload: [{ api_key: 'k' }] }), { output: { payload: [{ api_key: { redacted: 'api_key' } }] } });
});

test('unknown operations are skipped; bad input is an error reply, never a crash', () => {
  assert.ok(runCase('frobnicate', {}).skipped.reason);
  assert.ok(runCase('replay', { history: 5 }).error.message);
  assert.ok(runCase('redact', 'x').error.message);
  assert.ok(runCase('dedupe', { entries: [], options: { conflict_policy: 'maybe' } }).error.message);
  for (const provider of ['', 7, {}]) { // PROTOCOL: history.provider is a non-empty string (P4)
    assert.ok(runCase('replay', { history: { messages: [], provider }, target: { provider: 'openai' } }).error.message);
    assert.ok(runCase('plan', { history: { messages: [], provider }, model: 'm', desired_effort: null, instance_key: 'k' }).error.message);
  }
  assert.deepEqual(runCase('replay', { history: { messages: [], provider: null }, target: { provider: 'openai' } }).output.input, []);
  assert.deepEqual(JSON.parse(handleLine('{"cmd":"run","seq":3,')), JSON.parse(handleLine('{"cmd":"run","seq":3,')));
  assert.equal(JSON.parse(handleLine('{"cmd":"run","seq":3,')).seq, 3);
  assert.ok(JSON.parse(handleLine('{"cmd":"dance","seq":4}')).error);
});

test('pass-through values keep their exact JSON (big integers, U+2028 escaped in the line)', () => {
  const line = '{"cmd":"run","seq":18446744073709551615,"id":"x","operation":"redact","input":{"payload":{"n":123456789012345678901234567890,"f":1.0e-400,"s":"a\\u2028b"}}}';
  assert.equal(handleLine(line), '{"seq":18446744073709551615,"output":{"payload":{"n":123456789012345678901234567890,"f":1.0e-400,"s":"a\\u2028b"}}}');
});

test('persistent process: start, runs, stop → exit 0, one line per request', async () => {
  const { code, lines } = await runAdapter([
    { cmd: 'start', protocol: 1 },
    run(0, 'read', { text: GOLDEN }),
    '',
    run(1, 'read', { text: '{"a":1,"a":2}' }),
    run(2, 'unknown_op', {}),
    'not json',
    run(3, 'capture', { source: 'x', output_item: null }),
    { cmd: 'stop' },
    run(4, 'read', { text: GOLDEN }), // after stop: ignored
  ]);
  assert.equal(code, 0);
  assert.equal(lines.length, 6);
  assert.equal(JSON.parse(lines[0]).protocol, 1);
  assert.equal(JSON.parse(lines[1]).output.item.id, 'rs_1');
  assert.deepEqual(JSON.parse(lines[2]), { seq: 1, reject: { code: 'json_duplicate_member' } });
  assert.ok(JSON.parse(lines[3]).skipped);
  assert.ok(JSON.parse(lines[4]).error);
  assert.deepEqual(JSON.parse(lines[5]), { seq: 3, reject: { code: 'capture_source_unknown' } });
});

test('--oneshot answers exactly one line', async () => {
  const r1 = await runAdapter([{ cmd: 'start', protocol: 1 }, run(1, 'read', { text: '{}' })], ['--oneshot']);
  assert.equal(r1.code, 0);
  assert.equal(r1.lines.length, 1);
  assert.equal(JSON.parse(r1.lines[0]).implementation.name, 'reasoning-replay-js');
  const r2 = await runAdapter([run(9, 'read', { text: '{}' })], ['--oneshot']);
  assert.deepEqual(r2.lines.map((l) => JSON.parse(l)), [{ seq: 9, reject: { code: 'envelope_member_missing' } }]);
});

test('EOF without stop exits 0', async () => {
  const { code, lines } = await runAdapter([{ cmd: 'start', protocol: 1 }]);
  assert.equal(code, 0);
  assert.equal(lines.length, 1);
});

test('20,000 pipelined cases through the persistent protocol are all answered, in order', async () => {
  // Throughput is measured by tools/bench_suite.py, never asserted here (a shared machine is noisy).
  const N = 20000;
  const reqs = [{ cmd: 'start', protocol: 1 }];
  for (let i = 0; i < N; i++) {
    reqs.push(i % 2 ? run(i, 'read', { text: GOLDEN }) : run(i, 'capture', { source: 'response.completed', output_item: { type: 'reasoning', id: `rs_${i}`, summary: [], encrypted_content: 'c'.repeat(200) } }));
  }
  reqs.push({ cmd: 'stop' });
  const { code, lines } = await runAdapter(reqs);
  assert.equal(code, 0);
  assert.equal(lines.length, N + 1);
  assert.deepEqual(lines.slice(1).map((l) => JSON.parse(l).seq), [...Array(N).keys()]);
});

test('byte members: strict base64, never both X and X_base64', () => {
  assert.ok(runCase('read', { text: '{}', text_base64: 'e30=' }).error);
  assert.ok(runCase('read', { text_base64: 'e30' }).error);
  assert.ok(runCase('read', { text_base64: 'e3 0=' }).error);
  assert.ok(runCase('read', { text_base64: 5 }).error);
  assert.deepEqual(runCase('read', { text_base64: '' }), { reject: { code: 'json_malformed' } });
});

test('the handshake announces both history forms and provenance per message (SPEC CL3, CL4)', () => {
  const { implementation } = JSON.parse(handleLine('{"cmd":"start","protocol":1}'));
  assert.deepEqual(implementation.history_formats, ['channels', 'items']);
  assert.equal(implementation.provenance, 'message');
  assert.ok(implementation.operations.includes('defaults'));
});

test('defaults: store false, the P5 include and a fresh 32-hex key, no reasoning', () => {
  const first = runCase('defaults', { model: 'gpt-6-astra', target_provider: 'openai' }).output.request;
  const second = runCase('defaults', { model: 'gpt-6-astra', target_provider: 'openai' }).output.request;
  assert.equal(first.store, false);
  assert.deepEqual(first.include, ['reasoning.encrypted_content']);
  assert.match(first.prompt_cache_key, /^[0-9a-f]{32}$/);
  assert.notEqual(first.prompt_cache_key, second.prompt_cache_key); // K1: drawn at random
  assert.equal(Object.hasOwn(first, 'reasoning'), false);
  assert.ok(runCase('defaults', { target_provider: 'openai' }).error);
});
