// TypeScript declarations of the conformance adapter (lib/adapter.js; conformance/PROTOCOL.md).
import type { DiagnosticCode } from './index.js';

export declare const PROTOCOL_VERSION: number;
export declare const IMPLEMENTATION: Readonly<{
  name: string;
  version: string;
  language: string;
  homepage: string;
  operations: readonly string[];
  history_formats: readonly ('channels' | 'items')[];
  provenance: 'message' | 'item' | 'none';
}>;

/** One case's result, exactly one member, as a protocol reply carries it. */
export type CaseResult =
  | { output: { [member: string]: unknown } }
  | { reject: { code: DiagnosticCode } }
  | { skipped: { reason: string } }
  | { error: { message: string; traceback?: string } };

/** Run one case of an operation; never throws. */
export declare function runCase(operation: string, input: unknown): CaseResult;
/** One request line in, its reply line out (null for a blank line; a symbol for `stop`). */
export declare function handleLine(line: string): string | null | symbol;
/** The stdin/stdout loop; `--oneshot` answers one request line and exits. */
export declare function main(argv?: string[]): void;
