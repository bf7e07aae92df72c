/**
 * Shared call types: what a call's argument text turned out to be, the phases of a call actor,
 * a call's result, the tool-runner contract and a ready call's classification.
 *
 * They live here, below `machines/`, `src/release` and `src/execute`, so that the pure decision
 * functions and the tool layer never import upward from the statecharts (machines/ re-exports
 * them for its own readers).
 */

/** What the argument text turned out to be once the payload was final. */
export type ArgsOutcome = 'object' | 'empty' | 'invalid' | 'incomplete' | 'non-object';

/** The states of a call actor (machines/toolCall.machine.ts). */
export type CallPhase =
  | 'streaming'
  | 'complete'
  | 'emittable'
  | 'released'
  | 'running'
  | 'resulted'
  | 'invalid'
  | 'discarded';

/** Exactly one per call: what the tool produced, or what sluice made up instead. */
export interface CallResult {
  ok: boolean;
  content: string;
  /** Set when sluice made the result up (see src/history/types.ts SyntheticReason). */
  synthetic?: 'interrupted' | 'suppressed' | 'invalid_input' | 'denied' | 'unknown_tool' | 'timeout';
}

/** One started call, as handed to the tool runner. */
export interface RunToolInput {
  index: number;
  attempt: number;
  callId: string;
  name: string;
  input: Record<string, unknown>;
}

/** Runs one tool call; the signal fires when the call leaves `running` (discard, interrupt). */
export type RunToolFn = (call: RunToolInput, signal: AbortSignal) => Promise<CallResult>;

/** How the executor sees a call once it is ready (computed by the controller from its tools). */
export interface Classification {
  /** May start while the model still streams (SPEC §6.2). */
  safe: boolean;
  needsApproval: boolean;
  /** An error result to give without running (unknown tool, schema-invalid input). */
  problem?: CallResult;
  /** This is the structured-output call: its siblings do not run (SPEC §6.10). */
  structuredOutput?: boolean;
  /** false: never reuse this call's result on a retry (a tool's `reusable: false`). Default true. */
  reusable?: boolean;
}

/** `policy.reuseResults`: 'safe' (default) lets a retry reuse finished read-only results; 'none' never. */
export type ReuseResults = 'safe' | 'none';

/** JSON with object keys sorted at every level: equal for equal values whatever the key order. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const o = value as Record<string, unknown>;
  const keys = Object.keys(o).filter((k) => o[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
}

/** What makes two calls "the same call" for result reuse: the tool name and the canonical arguments. */
export function reuseKey(name: string, input: Record<string, unknown>): string {
  return `${name}\u0000${canonicalJson(input)}`;
}
