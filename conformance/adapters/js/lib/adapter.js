// The conformance adapter protocol (conformance/PROTOCOL.md): JSON lines over stdin/stdout.
//
// All per-case work is a synchronous function call; the only per-line costs are one parse and one
// serialize, so the persistent loop is limited by the pipe, not by setup.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseText, stringify, isJsonObject, decodeUtf8Strict, JsonTextError } from './jsontext.js';
import { ReplayError } from './codes.js';
import { readEnvelope } from './envelope.js';
import { captureEnvelopeText } from './capture.js';
import { buildInput } from './replay.js';
import { dedupeEntries } from './dedupe.js';
import { redact } from './redact.js';
import { telemetryCounters } from './telemetry.js';
import { plan, REPLAY_INCLUDE } from './plan.js';
import { exportHistory, EXPORT_MODES } from './export.js';

export const PROTOCOL_VERSION = 1;

// The package's own version (package.json, which versions.json at the repository root pins).
const PACKAGE_VERSION = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;

export const IMPLEMENTATION = Object.freeze({
  name: 'reasoning-replay-js',
  version: PACKAGE_VERSION,
  language: 'javascript',
  homepage: 'conformance/adapters/js',
  operations: ['read', 'capture', 'replay', 'dedupe', 'redact', 'telemetry', 'plan', 'defaults', 'export'],
  // SPEC CL3: both history forms; P4: an item's issuer is recorded per message.
  history_formats: ['channels', 'items'],
  provenance: 'message',
});

/** Bad protocol input (not a spec reject): reported as an `error` reply. */
class ProtocolError extends Error {}

const OPERATIONS = {
  read(input) {
    const text = input.text;
    if (typeof text !== 'string' && !(text instanceof Uint8Array)) {
      throw new ProtocolError('read needs input.text (string) or input.text_base64');
    }
    const verdict = readEnvelope(text);
    return verdict.ok ? { output: { item: verdict.item } } : { reject: { code: verdict.code } };
  },
  capture(input) {
    return { output: { envelope_text: captureEnvelopeText(asText(input.output_item), asText(input.source)) } };
  },
  replay(input) {
    if (!isJsonObject(input.history) || !isJsonObject(input.target)) {
      throw new ProtocolError('replay needs input.history and input.target objects');
    }
    checkHistoryProvider(input.history);
    const provider_names = providerNames(input.provider_names);
    return { output: buildInput(input.history, input.target, { ...options(input.options), provider_names }) };
  },
  dedupe(input) {
    if (!Array.isArray(input.entries)) throw new ProtocolError('dedupe needs input.entries (array)');
    return { output: dedupeEntries(input.entries, options(input.options)) };
  },
  redact(input) {
    if (!Object.hasOwn(input, 'payload')) throw new ProtocolError('redact needs input.payload');
    return { output: { payload: redact(input.payload) } };
  },
  telemetry(input) {
    return { output: { counters: telemetryCounters(input.request?.input, input.dedupe) } };
  },
  plan(input) {
    if (!isJsonObject(input.history)) throw new ProtocolError('plan needs input.history (object)');
    checkHistoryProvider(input.history);
    if (input.metadata !== undefined && input.metadata !== null && !isJsonObject(input.metadata)) {
      throw new ProtocolError('plan: metadata must be an object');
    }
    const registry = input.update_capable_models;
    if (registry !== undefined && !(Array.isArray(registry) && registry.every((m) => typeof m === 'string'))) {
      throw new ProtocolError('plan: update_capable_models must be an array of strings');
    }
    if (input.reasoning_model !== undefined && input.reasoning_model !== null && typeof input.reasoning_model !== 'boolean') {
      throw new ProtocolError('plan: reasoning_model must be a boolean');
    }
    for (const [name, allowed] of [['transport', ['sse', 'websocket', 'websocket_continuation']], ['endpoint', ['responses', 'compact']]]) {
      if (input[name] !== undefined && !allowed.includes(input[name])) throw new ProtocolError(`plan: unknown ${name}`);
    }
    return { output: plan({ ...input, provider_names: providerNames(input.provider_names), reasoning_model: input.reasoning_model ?? true }) };
  },
  defaults(input) {
    // P5 and K1: what this implementation sends with no configuration at all: store false, the
    // include P5 asks for, and a fresh instance key; no reasoning (no effort is configured).
    if (typeof input.model !== 'string') throw new ProtocolError('defaults needs input.model (string)');
    return {
      output: {
        request: { model: input.model, store: false, include: [REPLAY_INCLUDE], prompt_cache_key: randomBytes(16).toString('hex') },
      },
    };
  },
  export(input) {
    if (!Object.hasOwn(input, 'history')) throw new ProtocolError('export needs input.history');
    if (!EXPORT_MODES.includes(input.mode)) throw new ProtocolError('export: mode must be resumable or redacted');
    const drop = input.drop_display_reasoning ?? false;
    if (typeof drop !== 'boolean') throw new ProtocolError('export: drop_display_reasoning must be a boolean');
    // H6: a resumable export is the history as stored; the drop option applies to redacted mode.
    return { output: { history: exportHistory(input.history, input.mode, { dropDisplayReasoning: drop && input.mode === 'redacted' }) } };
  },
};

/** PROTOCOL: history.provider, when given and not null, is a non-empty string (SPEC P4). */
function checkHistoryProvider(history) {
  const p = history.provider;
  if (p !== undefined && p !== null && (typeof p !== 'string' || p === '')) {
    throw new ProtocolError('history.provider must be a non-empty string');
  }
}

/** PROTOCOL: provider_names, when given and not null, maps non-empty names to non-empty issuers (SPEC P4). */
function providerNames(value) {
  if (value === undefined || value === null) return undefined;
  if (!isJsonObject(value)) throw new ProtocolError('provider_names must be an object');
  for (const [name, issuer] of Object.entries(value)) {
    if (name === '' || typeof issuer !== 'string' || issuer === '') {
      throw new ProtocolError('provider_names maps non-empty names to non-empty issuers');
    }
  }
  return value;
}

function options(o) {
  if (o === undefined || o === null) return {};
  if (!isJsonObject(o)) throw new ProtocolError('options must be an object');
  return o;
}

/** Outside `read`, a member that arrived as X_base64 is only meaningful as UTF-8 text. */
function asText(v) {
  return v instanceof Uint8Array ? decodeUtf8Strict(v) : v;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * PROTOCOL: a top-level member X_base64 carries the raw bytes of member X (standard base64 with
 * padding). Malformed byte members are a broken case, reported as an error, never as a verdict.
 */
function decodeBase64Members(input) {
  let out = input;
  for (const k of Object.keys(input)) {
    if (!k.endsWith('_base64')) continue;
    const name = k.slice(0, -'_base64'.length);
    const b64 = input[k];
    if (Object.hasOwn(input, name)) throw new ProtocolError(`both ${name} and ${k} are given`);
    if (typeof b64 !== 'string' || !BASE64.test(b64)) throw new ProtocolError(`${k} is not standard base64`);
    if (out === input) out = { ...input };
    out[name] = new Uint8Array(Buffer.from(b64, 'base64'));
    delete out[k];
  }
  return out;
}

/**
 * Run one case. Returns exactly one of {output}, {reject}, {skipped}, {error}; never throws.
 */
export function runCase(operation, input) {
  const op = Object.hasOwn(OPERATIONS, operation) ? OPERATIONS[operation] : undefined;
  if (!op) return { skipped: { reason: `operation ${JSON.stringify(operation)} is not implemented` } };
  try {
    if (!isJsonObject(input)) throw new ProtocolError('input must be an object');
    return op(decodeBase64Members(input));
  } catch (err) {
    if (err instanceof ReplayError) return { reject: { code: err.code } };
    if (err instanceof JsonTextError && operation !== 'read') {
      // e.g. an X_base64 member outside `read` that is not UTF-8: a malformed case, not a verdict
      return { error: { message: `bad input: ${err.message}` } };
    }
    return { error: { message: String(err?.message ?? err), traceback: String(err?.stack ?? '') } };
  }
}

const STOP = Symbol('stop');

/**
 * Handle one request line. Returns the reply line (without newline), null for a blank line, or
 * STOP for a stop command.
 */
export function handleLine(line) {
  if (line.trim() === '') return null;
  let req;
  try {
    // Lenient parse: the runner's lines are JSON, but a `read` text may legitimately carry an
    // escaped lone surrogate that must reach the reader. Raw numbers keep pass-through values
    // (big integers) exact.
    req = parseText(line, { rawNumbers: true }).value;
  } catch (err) {
    return reply(guessSeq(line), { error: { message: `request is not JSON: ${err.message}` } });
  }
  if (!isJsonObject(req)) return reply(undefined, { error: { message: 'request is not an object' } });
  switch (req.cmd) {
    case 'start':
      return stringify({ protocol: PROTOCOL_VERSION, implementation: IMPLEMENTATION });
    case 'stop':
      return STOP;
    case 'run':
      return reply(req.seq, runCase(req.operation, req.input));
    default:
      return reply(req.seq, { error: { message: `unknown cmd ${JSON.stringify(String(req.cmd))}` } });
  }
}

function reply(seq, body) {
  const msg = seq === undefined ? body : { seq, ...body };
  try {
    return stringify(msg, { escapeLineSeparators: true });
  } catch (err) {
    // Only reachable if an output held a non-JSON value; still answer, still one line.
    return stringify({ seq, error: { message: `unserializable reply: ${err.message}` } });
  }
}

function guessSeq(line) {
  const m = /"seq"\s*:\s*(\d+)/.exec(line);
  return m ? Number(m[1]) : undefined;
}

/**
 * The stdin/stdout loop. With oneshot, answer a single request line and exit.
 * Exit happens naturally once stdin is released and pending stdout writes have flushed, so no
 * reply is ever cut off by process.exit().
 */
export function main(argv = process.argv.slice(2)) {
  const oneshot = argv.includes('--oneshot');
  const rl = createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
  let done = false;
  const finish = () => {
    done = true;
    rl.close();
    process.stdin.destroy();
  };
  process.stdout.on('error', (err) => {
    // The runner went away (EPIPE): nothing left to answer.
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
  rl.on('line', (line) => {
    if (done) return;
    let out;
    try {
      out = handleLine(line);
    } catch (err) {
      out = stringify({ error: { message: `adapter bug: ${err?.message ?? err}` } });
    }
    if (out === STOP) {
      finish();
      return;
    }
    if (out === null) return;
    process.stdout.write(out + '\n');
    if (oneshot) finish();
  });
  rl.on('close', () => {
    process.exitCode = 0;
  });
}
