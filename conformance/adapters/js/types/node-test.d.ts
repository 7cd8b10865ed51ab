// TypeScript declarations of the node:test helper (lib/node-test.js).
import type { DiagnosticCode } from './index.js';

export type Level = 'MUST' | 'SHOULD' | 'MAY';
export type Profile = 'record' | 'configuration-update-ordering' | 'stored-history';
/** SPEC CL4: what a case's meaning needs of a history form (its form tag). */
export type Form = 'neutral' | 'items' | 'storage';
/** SPEC CL3: a history form an implementation reads. */
export type HistoryFormat = 'channels' | 'items';

/** One case of conformance/vectors.bundle.json. */
export interface VectorCase {
  id: string;
  aliases?: string[];
  description: string;
  /** The SPEC.md anchor of the rule the case tests. */
  spec: string;
  operation: string;
  level: Level;
  tags: string[];
  input: { [member: string]: unknown };
  expect: { output: { [member: string]: unknown } } | { reject: { code: DiagnosticCode } };
  comment?: string;
  file: string;
  /** Output members left out of the comparison for this selection (SPEC CL2). */
  unjudged?: string[];
}

export interface VectorsBundle {
  format: number;
  suite_version: string;
  sha256: string;
  cases: VectorCase[];
}

export declare const PROFILES: Readonly<Record<Profile, readonly string[]>>;
export declare const LEVELS: readonly Level[];
export declare const FORMS: readonly Form[];
export declare const HISTORY_FORMATS: readonly HistoryFormat[];
export declare function defaultBundlePath(): string;
export declare function loadBundle(path?: string): VectorsBundle;
/**
 * The cases of one or more operations, or of a profile's operations, at the given levels and
 * forms, that apply to an implementation reading `historyFormats`, each as it is sent to it.
 */
export declare function casesFor(selection?: {
  operation?: string | readonly string[];
  profile?: Profile;
  levels?: readonly Level[];
  forms?: readonly Form[];
  historyFormats?: readonly HistoryFormat[];
  telemetry?: boolean;
  bundle?: VectorsBundle;
}): VectorCase[];
/** An output as the case governs it (SPEC CL2), before the exact comparison. */
export declare function governedOutput(testCase: VectorCase, output: unknown): unknown;
/**
 * Throws an AssertionError unless `result` ({output} or {reject: {code}}, as runCase returns
 * them) is what the case expects.
 */
export declare function checkCase(testCase: VectorCase, result: unknown): void;
