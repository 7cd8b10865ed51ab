// TypeScript declarations of the package's public API (lib/index.js). The specification is
// SPEC.md; each declaration names the rule it implements.

/** A JSON value as JSON.parse returns it. */
export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
export type JsonObject = { [member: string]: JsonValue };

/** A code of the closed registry, SPEC.md §12 (also schema/diagnostic-codes.v1.json). */
export type DiagnosticCode = string;

/** A provider input item of type "reasoning" (SPEC E2, P1). */
export interface ReasoningItem {
  type: 'reasoning';
  id: string;
  summary: { type: 'summary_text'; text: string }[];
  encrypted_content: string;
  content?: { type: 'reasoning_text'; text: string }[];
}

/** A diagnostic reported while building a request (SPEC §12), at the block it concerns. */
export interface Diagnostic {
  code: DiagnosticCode;
  message_index: number;
  block_index: number;
}

/** The nine counters of SPEC T1. */
export interface TelemetryCounters {
  reasoning_replay_item_count: number;
  reasoning_replay_encrypted_bytes: number;
  reasoning_replay_summary_parts: number;
  reasoning_replay_summary_bytes: number;
  reasoning_replay_content_parts: number;
  reasoning_replay_content_bytes: number;
  replay_deduplicated_exact_count: number;
  replay_id_ciphertext_conflict_count: number;
  canonical_schema_version: number;
}

export interface DedupeCounters {
  replay_deduplicated_exact_count: number;
  replay_id_ciphertext_conflict_count: number;
}

export interface HistoryMessage {
  role: string;
  items?: JsonValue[];
  channels?: { [channel: string]: JsonValue[] };
  [member: string]: unknown;
}

/**
 * A history in the channels form, or with `form: 'items'` in the items form (SPEC CL3: each
 * message's items in output order, its reasoning items among them, its record as the members
 * model, effort and prompt_cache_key).
 */
export interface History {
  form?: 'items';
  messages: HistoryMessage[];
  [member: string]: unknown;
}

/** SPEC D3: keep a same-id conflict and report it, or refuse the request. */
export interface ConflictOptions {
  conflict_policy?: 'keep' | 'reject';
}

// codes.js
export declare const CODES: readonly DiagnosticCode[];
export declare function isRegistryCode(code: unknown): code is DiagnosticCode;
/** An expected, specified refusal carrying a registry code. */
export declare class ReplayError extends Error {
  constructor(code: DiagnosticCode, message?: string);
  readonly code: DiagnosticCode;
}

// jsontext.js (SPEC E4, E4.1, C3)
export interface TextLimits {
  /** Default 16 MiB (SPEC E4.1); Infinity disables. */
  maxBytes?: number;
  /** Default 32 (SPEC E4.1); Infinity disables. */
  maxDepth?: number;
}
export declare class JsonTextError extends Error {
  constructor(code: DiagnosticCode, message: string, offset?: number);
  readonly code: DiagnosticCode;
  readonly offset: number | undefined;
}
export declare const MAX_TEXT_BYTES: number;
export declare const MAX_DEPTH: number;
/** SPEC E6 steps 1–5: the JSON value of a block text; throws JsonTextError with the first code. */
export declare function parseStrict(input: string | Uint8Array, limits?: TextLimits): JsonValue;
/** One RFC 8259 text; grammar errors throw, lone surrogates and duplicates are located. */
export declare function parseText(
  text: string,
  options?: { rawNumbers?: boolean },
): { value: unknown; loneSurrogateAt: number; duplicateAt: number; depth: number };
/** Canonical JSON text (SPEC C3 escaping). */
export declare function stringify(value: unknown, options?: { escapeLineSeparators?: boolean }): string;
/** Nesting depth counted outside string literals (SPEC E4.1), on malformed text too. */
export declare function lexicalDepth(units: string | Uint8Array): number;

// envelope.js (SPEC E1–E6)
export declare const ENVELOPE_SCHEMA: 'fast-agent.openai-responses.reasoning-replay';
/** A block's verdict: the replay item, or the one code of SPEC E6. */
export declare function readEnvelope(
  text: string | Uint8Array,
  limits?: TextLimits,
): { ok: true; item: ReasoningItem } | { ok: false; code: DiagnosticCode };
/** E6 steps 6–13 on a parsed value: null for a canonical envelope, else its code. */
export declare function envelopeValueCode(value: unknown): DiagnosticCode | null;
/** E6 steps 11–13 on a replay item: null when canonical, else its code. */
export declare function itemCode(item: unknown): DiagnosticCode | null;

// capture.js (SPEC C1–C4)
export declare const FINAL_SOURCES: readonly string[];
/** The canonical envelope text of a completed output item; throws ReplayError. */
export declare function captureEnvelopeText(outputItem: unknown, source: string): string;
/** The allowlisted replay item (C1, C2); throws ReplayError. */
export declare function captureItem(outputItem: unknown, source: string): ReasoningItem;
/** The canonical bytes of an envelope holding `item`, as a string (C3, checked as C4 says). */
export declare function canonicalEnvelopeText(item: ReasoningItem): string;

// replay.js (SPEC P1–P3, D7)
export declare const REPLAY_CHANNEL: 'openai-reasoning-encrypted';
/** SPEC CL3: the `form` member of a history in the items form. */
export declare const ITEMS_FORM: 'items';
/** SPEC CL3: whether a history is in the items form. */
export declare function isItemsForm(history: unknown): boolean;
export interface ReplayTarget {
  provider: string;
  transport?: 'sse' | 'websocket';
}
/** Replay options: D3's conflict policy, and the caller's provider names → issuers (P4). */
export interface ReplayOptions extends ConflictOptions {
  provider_names?: { [name: string]: string };
}
/** The request input of a history; throws ReplayError under the reject policy (D3). */
export declare function buildInput(
  history: History,
  target: ReplayTarget,
  options?: ReplayOptions,
): { input: JsonValue[]; diagnostics: Diagnostic[]; counters: TelemetryCounters };
/** P2 per message: replay and own items of each history entry, index for index. */
export declare function buildSegments(
  history: History,
  target: ReplayTarget,
  options?: ReplayOptions,
): {
  segments: { replay: JsonValue[]; own: JsonValue[] }[];
  diagnostics: Diagnostic[];
  dedupe: Deduper;
};

// providers.js (SPEC P4, §18.2)
/** The provider-name registry: name → issuer. */
export declare const PROVIDER_NAME_REGISTRY: { readonly [name: string]: string };
/** P4: a name's issuer, the caller's mapping first, then the registry, else the name itself. */
export declare function issuerOf(name: string, providerNames?: { [name: string]: string }): string;

// dedupe.js (SPEC D1–D6)
export type DedupeDecision = 'keep' | 'drop_duplicate' | 'keep_conflict';
export declare class Deduper {
  constructor(options?: ConflictOptions);
  /** One item, in input order; throws ReplayError for a conflict under the reject policy. */
  decide(provider: string, item: unknown): DedupeDecision;
  counters(): DedupeCounters;
}
export declare function dedupeEntries(
  entries: { provider: string; item: unknown }[],
  options?: ConflictOptions,
): { decisions: DedupeDecision[]; counters: DedupeCounters };

// redact.js (SPEC R1, R2)
/** R2: whether a member name is sensitive (its normal form holds a listed fragment or suffix). */
export declare function isSensitiveName(name: string): boolean;
/** R1: sizes and a SHA-256 of a reasoning object, never its ciphertext or text. */
export declare function diagnosticView(item: { [member: string]: unknown }): JsonObject;
/** R2: redact any JSON value (idempotent). */
export declare function redact(value: unknown): unknown;

// telemetry.js (SPEC T1)
export declare function telemetryCounters(
  input: unknown,
  dedupe?: Partial<DedupeCounters>,
): TelemetryCounters;

// plan.js (SPEC §9: F1–F12, K1–K4)
export declare const TOOL_MEDIA_CHANNEL: 'fast-agent-tool-media-message';
export interface PlanParameters {
  history: History;
  model: string;
  desired_effort: string | null;
  /** 32 lowercase hex digits (K1). */
  instance_key: string;
  metadata?: { [member: string]: unknown };
  transport?: 'sse' | 'websocket' | 'websocket_continuation';
  endpoint?: 'responses' | 'compact';
  target_provider?: string;
  update_capable_models?: string[];
  /** The caller's provider names → issuers, extending the registry (P4). */
  provider_names?: { [name: string]: string };
  /** False when the requested model returns no reasoning: no include entry (P5). */
  reasoning_model?: boolean;
}
export interface CacheStateRecord {
  model: string;
  key: string;
  effort: string | null;
}
/** F11: the request fields and the record; throws ReplayError with one code of the F8 table. */
export declare function plan(parameters: PlanParameters): {
  request: JsonObject;
  /** null for a target provider §9 does not govern (F12). */
  record: CacheStateRecord | null;
  diagnostics: Diagnostic[];
};
/** F2: the configuration update item. */
export declare function configurationUpdate(effort: string): {
  type: 'configuration_update';
  reasoning: { effort: string };
};
/** §9.1: a user message with user text, no tool results and no staged tool media. */
export declare function isGenuineUserTurn(message: unknown): boolean;
/** F7: the message carries an own item of native compaction. */
export declare function hasNativeCompaction(message: unknown): boolean;

// cachestate.js (SPEC §9.1, F5, F6)
export declare const CACHE_STATE_CHANNEL: 'fast-agent-responses-cache-state';
export declare const ALLOWED_EFFORTS: readonly string[];
export declare const DEFAULT_UPDATE_CAPABLE_MODELS: readonly string[];
export declare function readCacheState(
  message: unknown,
  model: string,
  updateCapable: boolean,
): { verdict: 'absent' | 'malformed' | 'other_model' | 'valid'; key?: string; effort?: string | null };
/** SPEC CL3: the record of an items-form message (its members model, effort, prompt_cache_key). */
export declare function readRecordMembers(
  message: unknown,
  model: string,
  updateCapable: boolean,
): { verdict: 'absent' | 'malformed' | 'other_model' | 'valid'; key?: string; effort?: string | null };
/** The record text a writer stores with a response. */
export declare function cacheStateText(record: CacheStateRecord): string;

// export.js (SPEC H1, H2, H6)
export declare const EXPORT_MARKER: 'reasoning_replay_export';
export declare const EXPORT_MODES: readonly ['resumable', 'redacted'];
/** H6: export a history; throws ReplayError('history_malformed') for a value that is not H1. */
export declare function exportHistory(
  history: unknown,
  mode: 'resumable' | 'redacted',
  options?: { dropDisplayReasoning?: boolean },
): JsonObject;
/** H1: the shape of a history file. */
export declare function isHistory(value: unknown): value is History;
/** H2: the redacted record object. */
export declare function redactedRecord(
  was: string,
  view: JsonObject | null,
): { schema: string; version: 1; was: string; view: JsonObject | null };
/** H2: the text that replaces a replay block whose text is `text`. */
export declare function redactedRecordText(text: string): string;
/** H6: the marker value of a mode; `displayReasoning` is the resumable marker's own member. */
export declare function exportMarker(
  mode: 'resumable' | 'redacted',
  displayReasoning?: 'duplicated' | 'none',
): JsonObject;

// textredact.js (SPEC H6, H8)
/** H6: a text with every part H8 would report replaced; an unchanged text is returned as is. */
export declare function redactText(text: string): string;
