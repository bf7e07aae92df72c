/**
 * Turn trace: the ordered log of lifecycle facts that the turn controller records while it
 * runs a turn. `checkTrace()` (src/history/check.ts) verifies SPEC §7 I4–I6 against it; the
 * history alone cannot show them (a history does not say when a tool started).
 *
 * Contract for producers (the turn controller):
 * - Append entries in the order the facts happened. `t` is milliseconds since the request
 *   (any monotonic clock; the virtual clock in replay). Array order is authoritative; `t` is
 *   informational and must never decrease.
 * - `attempt` counts from 1 (SPEC §8 report). `index` is the call's position in the model
 *   output of that attempt (the StreamEvent `index`). A call is identified by `(attempt, index)`.
 * - Never put argument contents or results in a trace entry (ids, names, flags only).
 *
 * Entry kinds, and when to record them:
 *
 * | kind          | record when                                                                  | fields        |
 * |---------------|------------------------------------------------------------------------------|---------------|
 * | `attempt.start` | a model stream (attempt) begins                                            | attempt       |
 * | `ready`       | the call became ready (identity + complete payload + JSON object)            | index, callId?, name?, safe, needsApproval? |
 * | `approved`    | its approval was granted (only for calls that need approval)                 | index         |
 * | `denied`      | its approval was denied (it must then never start)                           | index         |
 * | `released`    | the call was handed to the consumer (SSE block / UI event / history draft)   | index         |
 * | `started`     | the tool's `run` was invoked                                                 | index, safe?  |
 * | `resulted`    | a result (real or synthetic) was accepted into the turn's result buffer      | index, synthetic? |
 * | `stream.end`  | the attempt's model stream ended (its byte stream is over)                   | attempt       |
 * | `discarded`   | the attempt was thrown away (retry/fallback; or onAbort 'drop'); without `index` the whole attempt, with `index` one call | attempt, index? |
 * | `aborted`     | the user aborted the turn while this attempt was current                     | attempt       |
 * | `committed`   | the assistant message and results of this attempt were appended to history  | attempt, callIds? |
 * | `crashed`     | the process running the turn died (derived from a journal, src/journal)      | attempt       |
 * | `resumed`     | a new process took the turn over from its journal                            | attempt       |
 *
 * A result that arrives after its attempt was discarded (or, for a non-synthetic result, after
 * an abort) must be dropped by the controller and must NOT be recorded as `resulted`; recording
 * it is exactly what `checkTrace` flags (I4).
 */

export type TurnTraceKind =
  | 'attempt.start'
  | 'ready'
  | 'approved'
  | 'denied'
  | 'released'
  | 'started'
  | 'resulted'
  | 'stream.end'
  | 'discarded'
  | 'aborted'
  | 'committed'
  | 'crashed'
  | 'resumed';

export interface TurnTraceEntry {
  /** Milliseconds since the request (monotonic, never decreasing). */
  t: number;
  kind: TurnTraceKind;
  /** Attempt number, from 1. */
  attempt: number;
  /** The call's position in the model output of this attempt (call-level kinds). */
  index?: number;
  /** The call id as the model wrote it (on `ready`; optional elsewhere). */
  callId?: string;
  /** Tool name (on `ready`; optional elsewhere). */
  name?: string;
  /**
   * Safety class at the time of the decision (SPEC §6.2). On `ready` it is the classification;
   * `started` may repeat it. A call whose safety was never recorded counts as unsafe.
   */
  safe?: boolean;
  /** On `ready`: the call needs approval before it may start. */
  needsApproval?: boolean;
  /** On `resulted`: the result was made up by sluice (e.g. 'interrupted', 'suppressed'). */
  synthetic?: string;
  /** On `committed`: the call ids that reached history with this commit. */
  callIds?: string[];
  /**
   * On `started` after a `crashed`: the call started before the crash without a recorded result
   * and runs again — allowed for a safe call ('safe'), a tool that declares itself idempotent
   * ('idempotent') or one whose reconcile hook found the effect absent ('reconciled').
   */
  rerun?: 'safe' | 'idempotent' | 'reconciled';
}

/** How early unsafe calls may start; mirrors the turn controller's `earlyStart` policy (SPEC §6.4). */
export type EarlyStartPolicy = 'safe' | 'none' | 'all';
