// Reasoning-effort configuration updates and prompt_cache_key continuity (SPEC §9: F1–F12, K1–K4, P5).
//
// plan() is a pure function of its inputs and runs in time linear in the history: one forward
// pass reads the records (baseline, key, per-assistant efforts), one backward pass precomputes
// each genuine user turn's look-ahead (F3/F5), and one forward pass runs the effort state machine
// of §9.3 while assembling the input.
import { isJsonObject } from './jsontext.js';
import { ReplayError } from './codes.js';
import { buildSegments, isItemsForm, isMessage } from './replay.js';
import { issuerOf } from './providers.js';
import {
  readCacheState, readRecordMembers, isAllowedEffort, DEFAULT_UPDATE_CAPABLE_MODELS, VALID, MALFORMED,
} from './cachestate.js';

/** §9.1: staged tool media; a user message carrying this channel is not a genuine turn. */
export const TOOL_MEDIA_CHANNEL = 'fast-agent-tool-media-message';

export const TRANSPORTS = Object.freeze(['sse', 'websocket', 'websocket_continuation']);
export const ENDPOINTS = Object.freeze(['responses', 'compact']);

const INSTANCE_KEY = /^[0-9a-f]{32}$/;
const TOOL_RESULT_TYPES = new Set(['function_call_output', 'custom_tool_call_output']);
const COMPACTION_TYPES = new Set(['compaction', 'compaction_trigger']);
const GOVERNED_PROVIDERS = ['openai', 'codex']; // F12: issuers (P4)
export const REPLAY_INCLUDE = 'reasoning.encrypted_content'; // P5

/** F2: the one item shape the plan inserts. */
export function configurationUpdate(effort) {
  return { type: 'configuration_update', reasoning: { effort } };
}

/** Present and not null (F8: an explicit null counts as absent). */
function given(obj, name) {
  return isJsonObject(obj) && Object.hasOwn(obj, name) && obj[name] !== null;
}

function isEmptyContainer(v) {
  return (Array.isArray(v) && v.length === 0) || (isJsonObject(v) && Object.keys(v).length === 0);
}

function reject(code) {
  throw new ReplayError(code);
}

/** §9.1: a user message with user text, no tool results and no staged tool media. */
export function isGenuineUserTurn(msg) {
  if (!isJsonObject(msg) || msg.role !== 'user') return false;
  // Staged tool media: the channel holding at least one block (an empty one stages nothing).
  if (isJsonObject(msg.channels) && stagesMedia(msg.channels[TOOL_MEDIA_CHANNEL])) return false;
  const items = Array.isArray(msg.items) ? msg.items : [];
  let userText = false;
  for (const it of items) {
    if (!isJsonObject(it)) continue;
    if (TOOL_RESULT_TYPES.has(it.type)) return false;
    if (isMessage(it, 'user')) {
      const c = it.content;
      if ((typeof c === 'string' && c.length > 0) || (Array.isArray(c) && c.length > 0)) userText = true;
    }
  }
  return userText;
}

function stagesMedia(channel) {
  return Array.isArray(channel) && channel.length > 0;
}

/** F7: the message carries an own item of native compaction. */
export function hasNativeCompaction(msg) {
  if (!isJsonObject(msg) || !Array.isArray(msg.items)) return false;
  return msg.items.some((it) => isJsonObject(it) && COMPACTION_TYPES.has(it.type));
}

/** F2: where the update goes: the first own user `message` item. */
function firstUserMessageIndex(own) {
  return own.findIndex((it) => isMessage(it, 'user'));
}

// Look-ahead outcomes of a genuine user turn (F3, F5); a string is a recorded effort.
const LOOK_END = 0; // nothing decisive follows: the new turn, gets the desired effort
const LOOK_KEEP = 1; // another genuine turn, or an assistant without a valid record: unchanged

/**
 * Check F8 rows 1–10 (row 11, compact with updates, needs the planned input). Returns the facts
 * later steps need.
 */
function checkRequest(p, registry, governed) {
  const meta = p.metadata;
  // Row 1: the requested model.
  const model = given(meta, 'model') ? meta.model : p.model;
  if (typeof model !== 'string') reject('plan_model_invalid');
  const capable = (m) => typeof m === 'string' && registry.has(m);
  // Row 2: the key override and the instance key.
  // A record needs a non-empty key (§9.1), so an empty explicit key is refused too.
  if (given(meta, 'prompt_cache_key') && (typeof meta.prompt_cache_key !== 'string' || meta.prompt_cache_key === '')) {
    reject('plan_cache_key_invalid');
  }
  // The instance key only where it can be the key sent: for a governed target when no explicit
  // key replaces it (K2), for any other target always (F12 sends it whatever metadata holds).
  const keyCanBeSent = !governed || !given(meta, 'prompt_cache_key');
  if (keyCanBeSent && (typeof p.instance_key !== 'string' || !INSTANCE_KEY.test(p.instance_key))) {
    reject('plan_cache_key_invalid');
  }
  // Row 3: extra_body.
  const extra = given(meta, 'extra_body') ? meta.extra_body : undefined;
  if (extra !== undefined && !isJsonObject(extra)) reject('plan_extra_body_invalid');
  // Row 4: a model switch through extra_body across the update-capable boundary.
  const updateCapable = capable(model);
  if (given(extra, 'model') && (capable(extra.model) || updateCapable)) reject('plan_model_boundary');

  const reasoning = isJsonObject(meta) && Object.hasOwn(meta, 'reasoning') ? meta.reasoning : undefined;
  // Desired effort (§9.1): metadata.reasoning.effort when set (null counts as absent), else
  // the configured one.
  const desired = isJsonObject(reasoning) && given(reasoning, 'effort') ? reasoning.effort : (p.desired_effort ?? null);

  if (updateCapable) {
    const sources = [meta, extra];
    // Row 5.
    if (given(extra, 'reasoning') || given(extra, 'prompt_cache_key')) reject('plan_extra_body_override');
    // Row 6.
    if (sources.some((s) => given(s, 'input') || given(s, 'previous_response_id'))) reject('plan_raw_input_override');
    // Row 7.
    for (const s of sources) {
      if (given(s, 'truncation') && s.truncation !== 'disabled') reject('plan_auto_context_management');
      if (given(s, 'context_management') && !isEmptyContainer(s.context_management)) reject('plan_auto_context_management');
    }
    // Row 8: reasoning.mode is looked up in metadata only.
    if (isJsonObject(reasoning) && given(reasoning, 'mode') && reasoning.mode !== 'standard') reject('plan_mode_unsupported');
    for (const s of sources) {
      if (!given(s, 'multi_agent')) continue;
      const ma = s.multi_agent;
      if (!isJsonObject(ma)) reject('plan_mode_unsupported');
      if (given(ma, 'enabled') && ma.enabled !== false) reject('plan_mode_unsupported');
    }
    // Row 9: metadata.reasoning: null is rejected here (it would erase the baseline).
    if (isJsonObject(meta) && Object.hasOwn(meta, 'reasoning') && !isJsonObject(reasoning)) reject('plan_effort_invalid');
    if (!isAllowedEffort(desired)) reject('plan_effort_invalid');
  } else if (reasoning !== undefined && reasoning !== null && !isJsonObject(reasoning)) {
    // Row 10 (other models): a non-object metadata.reasoning; null is absent here.
    reject('plan_effort_invalid');
  }
  return { model, updateCapable, reasoning: isJsonObject(reasoning) ? reasoning : undefined, desired };
}

/**
 * Plan one request (F11).
 *
 * @param {object} p
 * @param {{messages: object[], provider?: string}} p.history
 * @param {string} p.model the configured model
 * @param {string|null} p.desired_effort the configured desired effort
 * @param {string} p.instance_key 32 lowercase hex digits (K1)
 * @param {object} [p.metadata] the request's overrides
 * @param {'sse'|'websocket'|'websocket_continuation'} [p.transport='sse']
 * @param {'responses'|'compact'} [p.endpoint='responses']
 * @param {string} [p.target_provider='openai']
 * @param {string[]} [p.update_capable_models=['gpt-6-astra']]
 * @param {Record<string, string>} [p.provider_names] the caller's names → issuers (P4)
 * @param {boolean} [p.reasoning_model=true] false: the model returns no reasoning (P5)
 * @returns {{request: object, record: {model: string, key: string, effort: string|null}, diagnostics: object[]}}
 * @throws {ReplayError} one code of the F8 table
 */
export function plan(p) {
  const metadata = p.metadata ?? undefined;
  if (metadata !== undefined && !isJsonObject(metadata)) throw new TypeError('metadata must be an object');
  const transport = p.transport ?? 'sse';
  const endpoint = p.endpoint ?? 'responses';
  if (!TRANSPORTS.includes(transport)) throw new TypeError(`unknown transport ${String(transport)}`);
  if (!ENDPOINTS.includes(endpoint)) throw new TypeError(`unknown endpoint ${String(endpoint)}`);
  const targetProvider = p.target_provider ?? 'openai';
  // F12, decided on the target's issuer (P4): for a target §9 does not govern, no model is
  // update-capable and no record is read.
  const governed = GOVERNED_PROVIDERS.includes(issuerOf(targetProvider, p.provider_names));
  const registry = new Set(governed ? (p.update_capable_models ?? DEFAULT_UPDATE_CAPABLE_MODELS) : []);

  const { model, updateCapable, reasoning, desired } = checkRequest({ ...p, metadata }, registry, governed);

  const messages = Array.isArray(p.history?.messages) ? p.history.messages : [];
  const n = messages.length;
  // CL3: in the items form a message's record is its members model, effort, prompt_cache_key.
  const readRecord = isItemsForm(p.history) ? readRecordMembers : readCacheState;

  // Pass 1 (forward): records. F1 baseline = first valid record's effort; K2 key = last valid
  // record's key; F6 malformed records are reported and treated as absent.
  const recordEffort = new Array(n); // per assistant message: a valid record's effort, or undefined
  const recordDiagnostics = [];
  let firstValid = null;
  let lastValid = null;
  let lastAssistant = -1;
  for (let i = 0; i < n; i++) {
    const msg = messages[i];
    if (isJsonObject(msg) && msg.role === 'assistant') lastAssistant = i;
    if (!governed) continue; // F12: records are not read
    const r = readRecord(msg, model, updateCapable);
    if (r.verdict === VALID) {
      recordEffort[i] = r.effort;
      firstValid ??= r;
      lastValid = r;
    } else if (r.verdict === MALFORMED) {
      recordDiagnostics.push({ code: 'cache_state_invalid', message_index: i, block_index: 0 });
    }
  }
  const key = governed && given(metadata, 'prompt_cache_key') ? metadata.prompt_cache_key : (lastValid ? lastValid.key : p.instance_key);

  // P2: replay items and own items per message, diagnostics in block order.
  const built = buildSegments(p.history, { provider: targetProvider, transport }, { provider_names: p.provider_names });
  const replayDiagnostics = built.diagnostics;
  // F2: a configuration update stored among a message's own items is never sent; every update
  // of a plan is derived from the records.
  const segments = built.segments.map(({ replay, own }) => ({
    replay,
    own: own.filter((it) => !(isJsonObject(it) && it.type === 'configuration_update')),
  }));

  // Continuation (F9): possible when the last assistant message carries its response id, a
  // non-empty string ("" or any other value carries none). The standalone compact endpoint
  // always receives a full replay (F8), whatever the transport.
  const responseId = lastAssistant >= 0 ? messages[lastAssistant].response_id : undefined;
  const continuation =
    transport === 'websocket_continuation' && endpoint === 'responses' && typeof responseId === 'string' && responseId !== '';
  const firstSent = continuation ? lastAssistant + 1 : 0;

  const input = [];
  let effort = null; // the effective effort (or the remembered one while unknown)
  if (!updateCapable) {
    // F10: no configuration updates.
    for (let i = firstSent; i < n; i++) pushAll(input, segments[i].replay, segments[i].own);
  } else {
    const baseline = firstValid ? firstValid.effort : desired;
    // Pass 2 (backward): what decides each genuine turn's effort (F3, F5).
    const genuine = new Array(n);
    const lookAhead = new Array(n);
    let next = LOOK_END;
    for (let i = n - 1; i >= 0; i--) {
      genuine[i] = isGenuineUserTurn(messages[i]);
      lookAhead[i] = next;
      if (genuine[i]) next = LOOK_KEEP;
      else if (isJsonObject(messages[i]) && messages[i].role === 'assistant') next = recordEffort[i] ?? LOOK_KEEP;
    }
    // Pass 3 (forward): the state machine of §9.3.
    effort = baseline;
    let known = true;
    for (let i = 0; i < n; i++) {
      const { replay, own } = segments[i];
      const sent = i >= firstSent;
      if (sent) pushAll(input, replay);
      let insertAt = -1;
      if (genuine[i]) {
        const la = lookAhead[i];
        const turnEffort = la === LOOK_END ? desired : la === LOOK_KEEP ? effort : la;
        if (!known || turnEffort !== effort) {
          insertAt = firstUserMessageIndex(own);
          effort = turnEffort;
          known = true;
        }
      }
      if (sent) {
        for (let j = 0; j < own.length; j++) {
          if (j === insertAt) input.push(configurationUpdate(effort));
          input.push(own[j]);
        }
      }
      if (hasNativeCompaction(messages[i])) known = false; // F7: effective effort unknown
    }
    // Row 11 of F8, the one check that needs the planned input.
    if (endpoint === 'compact' && input.some((it) => isJsonObject(it) && it.type === 'configuration_update')) {
      reject('plan_compact_with_updates');
    }
  }

  const request = { model, ...stateFields(endpoint, p.reasoning_model ?? true) };
  const sentReasoning = requestReasoning(updateCapable, reasoning, updateCapable ? (firstValid ? firstValid.effort : desired) : desired);
  if (sentReasoning !== undefined) request.reasoning = sentReasoning;
  request.prompt_cache_key = key;
  request.input = input;
  if (continuation) request.previous_response_id = responseId;

  return {
    request,
    record: governed ? { model, key, effort: updateCapable ? effort : null } : null, // F12
    diagnostics: mergeDiagnostics(replayDiagnostics, recordDiagnostics),
  };
}

/**
 * P5: the responses endpoint gets store: false and asks for the ciphertext a later request
 * replays, unless the caller declares the model returns no reasoning (some models refuse the
 * entry); the compact endpoint takes neither parameter.
 */
function stateFields(endpoint, reasoningModel) {
  if (endpoint === 'compact') return {};
  return reasoningModel ? { store: false, include: [REPLAY_INCLUDE] } : { store: false };
}

function pushAll(out, ...lists) {
  for (const list of lists) for (const it of list) out.push(it);
}

/**
 * F11 request.reasoning. Update-capable: metadata.reasoning's other members as given, effort =
 * the baseline. Other models: metadata.reasoning's other members, effort = the desired effort
 * as given (unchecked) when there is one; absent when there is neither.
 */
function requestReasoning(updateCapable, reasoning, effort) {
  if (updateCapable) return { ...(reasoning ?? {}), effort };
  if (reasoning === undefined) return effort === null ? undefined : { effort };
  const out = { ...reasoning, effort };
  if (effort === null) delete out.effort; // reasoning.effort: null asks for nothing (F8)
  return Object.keys(out).length > 0 ? out : undefined; // F11: omit a reasoning with no member
}

/** F11: P2 diagnostics and record diagnostics in message order (a message's P2 ones first). */
function mergeDiagnostics(a, b) {
  if (b.length === 0) return a;
  const out = [];
  let j = 0;
  for (const d of a) {
    while (j < b.length && b[j].message_index < d.message_index) out.push(b[j++]);
    out.push(d);
  }
  while (j < b.length) out.push(b[j++]);
  return out;
}
