// TypeScript declarations of the node:test helper (lib/node-test.js).
import type { DiagnosticCode } from './index.js';

export type Level = 'MUST' | 'SHOULD' | 'MAY';
/** A part of the specification (SPEC §13). */
export type Part = 'record' | 'configuration-update-ordering' | 'stored-history';
/** @deprecated The earlier name of Part. */
export type Profile = Part;
/** A conformance profile (SPEC CL2). */
export type ConformanceProfile = 'verdict' | 'diagnostics';
/** SPEC CL4: what a case's meaning needs of a history form (its form tag). */
export type Form = 'neutral' | 'items' | 'storage';
/** SPEC CL3: a history form an implementation reads. */
export type HistoryFormat = 'channels' | 'items';
/** One name, or several. */
export type Names<T extends string> = T | readonly T[];

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

/** The first difference of two JSON values: a JSON pointer and why. */
export interface Difference {
  pointer: string;
  reason: string;
}

export declare const PARTS: Readonly<Record<Part, readonly string[]>>;
/** @deprecated The earlier name of PARTS. */
export declare const PROFILES: Readonly<Record<Part, readonly string[]>>;
export declare const LEVELS: readonly Level[];
export declare const CONFORMANCE_PROFILES: readonly ConformanceProfile[];
/** SPEC CL2's table: the output members the verdict profile leaves out, and coded findings. */
export declare const VERDICT_PROFILE: {
  readonly leftOut: Readonly<Record<string, readonly string[]>>;
  readonly codedFindings: Readonly<Record<string, string>>;
};
export declare const FORMS: readonly Form[];
export declare const HISTORY_FORMATS: readonly HistoryFormat[];
export declare function defaultBundlePath(): string;
export declare function loadBundle(path?: string): VectorsBundle;
/**
 * The cases of one or more operations, or of the operations of one or more parts, at the given
 * levels and forms, that apply to an implementation reading `historyFormats`, each as it is sent
 * to it; each selector is one name or an array of names.
 */
export declare function casesFor(selection?: {
  operation?: Names<string>;
  part?: Names<Part>;
  /** @deprecated The earlier name of `part`. */
  profile?: Names<Part>;
  levels?: Names<Level>;
  forms?: Names<Form>;
  historyFormats?: Names<HistoryFormat>;
  telemetry?: boolean;
  bundle?: VectorsBundle;
}): VectorCase[];
/** An output as the case governs it (SPEC CL2), before the exact comparison. */
export declare function governedOutput(testCase: VectorCase, output: unknown): unknown;
/** An output as the verdict profile compares it (SPEC CL2). */
export declare function verdictView(operation: string, output: unknown): unknown;
/** The first difference of two JSON values, or null when they are equal as JSON values. */
export declare function firstDifference(expected: unknown, actual: unknown, pointer?: string): Difference | null;
/**
 * Throws an AssertionError, whose stack starts at the caller, unless `result` ({output} or
 * {reject: {code}}, as runCase returns them) is what the case expects in `profile`
 * ('diagnostics' by default).
 */
export declare function checkCase(
  testCase: VectorCase,
  result: unknown,
  options?: { profile?: ConformanceProfile },
): void;
