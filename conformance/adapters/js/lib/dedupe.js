// Deduplication of replay items (SPEC §6, D1–D6).
import { ReplayError } from './codes.js';
import { sha256Hex } from './bytes.js';
import { stringify } from './jsontext.js';
import { issuerOf } from './providers.js';

export const KEEP = 'keep';
export const DROP_DUPLICATE = 'drop_duplicate';
export const KEEP_CONFLICT = 'keep_conflict';

/**
 * Stateful dedupe over one request, fed items in input order. Determinism (D6) follows from the
 * state depending only on the sequence of (provider, item) fed in.
 */
export class Deduper {
  /** @param {{conflict_policy?: 'keep'|'reject'}} [options] */
  constructor(options = {}) {
    const policy = options?.conflict_policy ?? 'keep';
    if (policy !== 'keep' && policy !== 'reject') throw new TypeError(`unknown conflict_policy ${policy}`);
    this.rejectConflicts = policy === 'reject';
    this.identities = new Set(); // D1 identities of kept items
    this.providerIds = new Set(); // (provider, id) of kept items, for D3
    this.exactCount = 0;
    this.conflictCount = 0;
  }

  /**
   * Decide one item. Returns KEEP, DROP_DUPLICATE (D2) or KEEP_CONFLICT (D3); under the reject
   * policy a conflict throws ReplayError('dedupe_id_ciphertext_conflict') instead.
   */
  decide(provider, item) {
    const id = item?.id;
    // The pair is serialized as JSON so no separator choice can make two pairs collide.
    const providerId = stringify([provider ?? null, id ?? null]);
    const identity = providerId + ciphertextHash(item?.encrypted_content);
    if (this.identities.has(identity)) {
      this.exactCount++;
      return DROP_DUPLICATE; // D2: first kept, later ones dropped
    }
    let decision = KEEP;
    // D3: same provider and id as an earlier *kept* item, other ciphertext: kept, never dropped.
    // D4/D5 fall out of the key: other id or other provider is simply a new key.
    if (this.providerIds.has(providerId)) {
      if (this.rejectConflicts) {
        throw new ReplayError('dedupe_id_ciphertext_conflict', 'same provider and id, different ciphertext');
      }
      this.conflictCount++;
      decision = KEEP_CONFLICT;
    }
    this.identities.add(identity);
    this.providerIds.add(providerId);
    return decision;
  }

  counters() {
    return {
      replay_deduplicated_exact_count: this.exactCount,
      replay_id_ciphertext_conflict_count: this.conflictCount,
    };
  }
}

/**
 * D1: SHA-256 of the UTF-8 bytes of encrypted_content, lowercase hex. Replay items from the
 * reader always have a non-empty string; for anything else (direct callers) hash a tagged JSON
 * form so distinct values stay distinct and never equal a string's hash input.
 */
function ciphertextHash(ciphertext) {
  return typeof ciphertext === 'string' ? sha256Hex(ciphertext) : '!' + sha256Hex(stringify(ciphertext ?? null));
}

/**
 * The `dedupe` operation: one decision per {provider, item} entry, plus the two counters.
 * Throws ReplayError under the reject policy.
 */
export function dedupeEntries(entries, options) {
  const d = new Deduper(options);
  // D1: the identity's provider is the item's issuer: the registry maps each name (P4, §18.2).
  const decisions = entries.map((e) => d.decide(issuerOf(e.provider), e.item));
  return { decisions, counters: d.counters() };
}
