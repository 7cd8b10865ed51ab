// Building a request's provider input from a stored history (SPEC §5, P1–P4, with §6 dedupe).
import { isJsonObject } from './jsontext.js';
import { readEnvelope, itemCode } from './envelope.js';
import { Deduper, DROP_DUPLICATE, KEEP_CONFLICT } from './dedupe.js';
import { telemetryCounters } from './telemetry.js';
import { issuerOf } from './providers.js';

/** ST1: the replay channel's name. */
export const REPLAY_CHANNEL = 'openai-reasoning-encrypted';

/** SPEC CL3: the `form` member of a history in the items form. */
export const ITEMS_FORM = 'items';

/** SPEC CL3: whether a history is in the items form (its reasoning items among its items). */
export function isItemsForm(history) {
  return isJsonObject(history) && history.form === ITEMS_FORM;
}

/**
 * Build the request input.
 * @param {{messages: object[], provider?: string}} history
 * @param {{provider: string, transport?: 'sse'|'websocket'}} target
 * @param {{conflict_policy?: 'keep'|'reject', provider_names?: Record<string, string>}} [options]
 *   provider_names: the caller's names → issuers, extending the registry (P4)
 * @returns {{input: unknown[], diagnostics: {code: string, message_index: number, block_index: number}[], counters: object}}
 * @throws {ReplayError} dedupe_id_ciphertext_conflict under the reject policy
 */
export function buildInput(history, target, options) {
  const { segments, diagnostics, dedupe } = buildSegments(history, target, options);
  const input = [];
  for (const seg of segments) {
    for (const it of seg.replay) input.push(it);
    for (const it of seg.own) input.push(it);
  }
  return { input, diagnostics, counters: telemetryCounters(input, dedupe.counters()) };
}

/**
 * P2 per message: the replay items (after dedupe) and the own items (after D7) of every history
 * entry, index for index with `history.messages`, so a caller can insert items between them
 * (the planner of §9 does). Concatenating replay then own items, message by message, is the
 * input of buildInput.
 * @returns {{segments: {replay: unknown[], own: unknown[]}[], diagnostics: object[], dedupe: Deduper}}
 */
export function buildSegments(history, target, options) {
  // P3: the transport changes framing, never items, so it is deliberately not consulted.
  // P4: every provider name is mapped once to its issuer; issuers are compared exactly.
  const names = options?.provider_names;
  const targetIssuer = issuerOf(target?.provider, names);
  const xai = targetIssuer === 'xai'; // D7 is the xAI issuer's policy
  const dedupe = new Deduper(options);
  const diagnostics = [];
  const report = (code, mi, bi) => diagnostics.push({ code, message_index: mi, block_index: bi });

  const messages = Array.isArray(history?.messages) ? history.messages : [];
  const historyProvider = recordedProvider(history?.provider);
  const historyIssuer = historyProvider === undefined ? undefined : issuerOf(historyProvider, names);
  const itemsForm = isItemsForm(history);
  // P4: the issuer is that of the provider recorded with the message, else of the history's
  // provider, else (unknown) the target's; issuers are compared exactly.
  const issuerOfMessage = (msg) => {
    const recorded = recordedProvider(msg.provider);
    return recorded !== undefined ? issuerOf(recorded, names) : historyIssuer ?? targetIssuer;
  };
  const segments = messages.map((msg, mi) => {
    const replay = [];
    const own = [];
    if (!isJsonObject(msg)) return { replay, own }; // totality: a junk entry contributes nothing
    if (itemsForm) {
      // CL3: reasoning items are already read and sit among the message's items, in output
      // order; each is sent where it stands, after the issuer check (P4) and dedupe (§6), and a
      // diagnostic names its index among the items.
      const issuer = issuerOfMessage(msg);
      const items = Array.isArray(msg.items) ? msg.items : [];
      items.forEach((item, ii) => {
        if (!isJsonObject(item) || item.type !== 'reasoning') {
          own.push(xai ? withoutAssistantMessageId(item) : item);
          return;
        }
        if (msg.role !== 'assistant') throw new TypeError(`message ${mi}: only assistant messages hold reasoning items`);
        const code = itemCode(item);
        if (code !== null) {
          report(code, mi, ii); // not a replay item (P1): not sent
          return;
        }
        if (issuer !== targetIssuer) {
          report('replay_provider_mismatch', mi, ii);
          return;
        }
        const decision = dedupe.decide(issuer, item);
        if (decision === DROP_DUPLICATE) {
          report('dedupe_exact_duplicate', mi, ii);
          return;
        }
        if (decision === KEEP_CONFLICT) report('dedupe_id_ciphertext_conflict', mi, ii);
        own.push(item);
      });
      return { replay, own };
    }
    const channels = isJsonObject(msg.channels) ? msg.channels : null;
    const blocks = channels && Array.isArray(channels[REPLAY_CHANNEL]) ? channels[REPLAY_CHANNEL] : [];

    if (msg.role !== 'assistant') {
      // P2: not read at all; every block is reported where it sits.
      blocks.forEach((_, bi) => report('replay_channel_misplaced', mi, bi));
    } else {
      const issuer = issuerOfMessage(msg);
      blocks.forEach((block, bi) => {
        if (!isJsonObject(block) || block.type !== 'text' || typeof block.text !== 'string') {
          report('block_not_text', mi, bi);
          return;
        }
        const verdict = readEnvelope(block.text);
        if (!verdict.ok) {
          report(verdict.code, mi, bi); // skipped; the rest of the message replays
          return;
        }
        if (issuer !== targetIssuer) {
          report('replay_provider_mismatch', mi, bi); // P4: not sent, so never deduplicated
          return;
        }
        const decision = dedupe.decide(issuer, verdict.item); // may throw under "reject"
        if (decision === DROP_DUPLICATE) {
          report('dedupe_exact_duplicate', mi, bi);
          return;
        }
        if (decision === KEEP_CONFLICT) report('dedupe_id_ciphertext_conflict', mi, bi);
        replay.push(verdict.item); // P1: the stored item exactly, nothing added
      });
    }

    // P2 step 2: the message's own items, in order; D7 strips assistant-message ids for xai.
    for (const item of Array.isArray(msg.items) ? msg.items : []) {
      own.push(xai ? withoutAssistantMessageId(item) : item);
    }
    return { replay, own };
  });

  return { segments, diagnostics, dedupe };
}

/** P4: a provider is recorded by a non-empty string only; any other value records none. */
function recordedProvider(value) {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * SPEC §1.2: an item of type `message` with this role; an item with no `type` and a `role` is a
 * message too (the Responses API's short form, `{"role": "user", "content": "hi"}`).
 */
export function isMessage(item, role) {
  if (!isJsonObject(item) || item.role !== role) return false;
  return !Object.hasOwn(item, 'type') || item.type === 'message';
}

/** D7: xAI reuses assistant-message ids across turns, so they are not sent. */
function withoutAssistantMessageId(item) {
  if (!isMessage(item, 'assistant') || !Object.hasOwn(item, 'id')) {
    return item;
  }
  const copy = { ...item }; // spread keeps a "__proto__" member as an own data property
  delete copy.id;
  return copy;
}
