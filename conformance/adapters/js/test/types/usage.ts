// Compiled (never run) by test/types.test.js with `tsc --strict`: the declarations describe the
// package as a TypeScript user imports it, by its own name through "exports".
import {
  CODES,
  ReplayError,
  buildInput,
  captureEnvelopeText,
  dedupeEntries,
  exportHistory,
  plan,
  readEnvelope,
  redact,
  telemetryCounters,
  type DiagnosticCode,
  type ReasoningItem,
} from 'reasoning-replay-conformance';
import { runCase, type CaseResult } from 'reasoning-replay-conformance/adapter';
import { casesFor, checkCase, type VectorCase } from 'reasoning-replay-conformance/node-test';

const codes: readonly DiagnosticCode[] = CODES;
const verdict = readEnvelope('{}');
const item: ReasoningItem | DiagnosticCode = verdict.ok ? verdict.item : verdict.code;
const text: string = captureEnvelopeText({ type: 'reasoning' }, 'response.output_item.done');
const built = buildInput({ messages: [] }, { provider: 'openai' }, { conflict_policy: 'keep' });
const firstCode: DiagnosticCode | undefined = built.diagnostics[0]?.code;
const exact: number = dedupeEntries([]).counters.replay_deduplicated_exact_count;
const planned = plan({ history: { messages: [] }, model: 'gpt-6-astra', desired_effort: 'low', instance_key: '0'.repeat(32) });
const effort: string | null = planned.record === null ? null : planned.record.effort; // F12: null for xai
const exported = exportHistory({ messages: [] }, 'redacted', { dropDisplayReasoning: true });
const counters: number = telemetryCounters(built.input).reasoning_replay_item_count;
const error = new ReplayError('json_malformed');
const result: CaseResult = runCase('read', { text: '{}' });
const cases: VectorCase[] = casesFor({ part: 'record', levels: ['MUST'] });
const one: VectorCase[] = casesFor({ operation: 'read', part: ['record'], levels: 'MUST' });
for (const c of [...cases, ...one]) checkCase(c, result, { profile: 'verdict' });

export { codes, item, text, firstCode, exact, effort, exported, counters, error, redact };
