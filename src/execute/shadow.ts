import type { TurnTraceEntry } from '../history/trace';

/**
 * Shadow mode (`policy.earlyStart: 'shadow'`): the turn ran with post-stream dispatch ('none'),
 * and this pure function replays its calls under the 'safe' start rules (src/execute/schedule.ts,
 * SPEC §6.3–§6.5) with the durations the tools really took:
 *
 * - a safe call starts when it is ready (released, and approved when it needs approval), unless
 *   an earlier unsafe call has not resulted or `maxConcurrent` calls are running (then at the
 *   first free slot); starts keep index order;
 * - an unsafe call starts after the stream ended and every earlier call resulted, and every
 *   later call waits for its result;
 * - a call that never ran (denied, unknown tool, invalid input, …) settles when it is ready and
 *   holds nothing up.
 *
 * Result: when 'safe' would have started each call, and how much earlier the last result would
 * have come (the turn time saved), never negative.
 */

export interface ShadowCall {
  index: number;
  /** When the call could start under 'safe' (release time, or approval time when later). */
  readyMs: number;
  safe: boolean;
  /** How long the tool really ran (ms); undefined when it never ran (a synthetic result). */
  durationMs?: number;
}

export interface ShadowInput {
  /** The calls of the committed attempt, in index order. */
  calls: readonly ShadowCall[];
  streamEndMs: number;
  maxConcurrent: number;
  /** When the real turn's last result came (or the stream end when later). */
  actualEndMs: number;
}

export interface ShadowResult {
  /** Simulated start per call index (calls that never ran have none). */
  startMs: Map<number, number>;
  /** When the last simulated result (or the stream end) would have come. */
  endMs: number;
  /** actualEndMs − endMs, at least 0. */
  savedMs: number;
}

export function simulateSafeStarts(input: ShadowInput): ShadowResult {
  const cap = Math.max(1, input.maxConcurrent);
  const startMs = new Map<number, number>();
  /** End times of simulated runs that may still be going. */
  let running: number[] = [];
  /** Every earlier call resulted by then. */
  let allEarlierEnd = 0;
  /** An earlier unsafe call's result: nothing later starts before it. */
  let barrier = 0;
  /** Starts keep index order (the scheduler scans in order and stops at a full cap). */
  let lastStart = 0;
  let endMs = input.streamEndMs;
  for (const c of input.calls) {
    if (c.durationMs === undefined) {
      allEarlierEnd = Math.max(allEarlierEnd, c.readyMs);
      continue;
    }
    let s: number;
    if (c.safe) {
      s = Math.max(c.readyMs, barrier, lastStart);
      for (;;) {
        const at = s;
        running = running.filter((e) => e > at);
        if (running.length < cap) break;
        s = Math.min(...running);
      }
    } else {
      s = Math.max(c.readyMs, barrier, lastStart, input.streamEndMs, allEarlierEnd);
    }
    const e = s + c.durationMs;
    startMs.set(c.index, s);
    lastStart = s;
    running.push(e);
    allEarlierEnd = Math.max(allEarlierEnd, e);
    if (!c.safe) barrier = e;
    endMs = Math.max(endMs, e);
  }
  return { startMs, endMs, savedMs: Math.max(0, input.actualEndMs - endMs) };
}

/** The per-call facts the simulations need, read from a finished turn's summary. */
export interface ShadowTurn {
  streamEndMs?: number;
  attempts: number;
  calls: ReadonlyArray<{ index: number; attempt: number; releasedMs?: number; startedMs?: number; resultMs?: number }>;
  trace: readonly TurnTraceEntry[];
}

/**
 * Shadow figures for a finished 'none' turn: per call index the simulated 'safe' start, and the
 * saving. Undefined when the stream did not end normally (nothing to compare).
 */
export function shadowOfTurn(turn: ShadowTurn, maxConcurrent: number): ShadowResult | undefined {
  const input = simulationInput(turn, maxConcurrent);
  return input && simulateSafeStarts(input);
}

/**
 * The other direction, for a turn that ran with early start ('safe' / 'all'): how much later its
 * last result would have come under post-stream dispatch ('none' = the same rules with every start
 * held until the stream ended), from the real durations. `savedMs` is that difference (≥ 0).
 */
export function postStreamOfTurn(turn: ShadowTurn, maxConcurrent: number): { endMs: number; savedMs: number } | undefined {
  const input = simulationInput(turn, maxConcurrent);
  if (input === undefined) return undefined;
  const end = input.streamEndMs;
  const r = simulateSafeStarts({ ...input, calls: input.calls.map((c) => ({ ...c, readyMs: Math.max(c.readyMs, end) })) });
  return { endMs: r.endMs, savedMs: Math.max(0, r.endMs - input.actualEndMs) };
}

function simulationInput(turn: ShadowTurn, maxConcurrent: number): ShadowInput | undefined {
  if (turn.streamEndMs === undefined) return undefined;
  const attempt = turn.attempts;
  const safe = new Map<number, boolean>();
  const approved = new Map<number, number>();
  for (const e of turn.trace) {
    if (e.attempt !== attempt || e.index === undefined) continue;
    if ((e.kind === 'released' || e.kind === 'ready') && e.safe !== undefined) safe.set(e.index, e.safe);
    else if (e.kind === 'approved') approved.set(e.index, e.t);
  }
  const calls: ShadowCall[] = [];
  let actualEndMs = turn.streamEndMs;
  for (const c of turn.calls) {
    if (c.attempt !== attempt || c.releasedMs === undefined) continue;
    const ran = c.startedMs !== undefined && c.resultMs !== undefined;
    if (c.resultMs !== undefined) actualEndMs = Math.max(actualEndMs, c.resultMs);
    calls.push({
      index: c.index,
      readyMs: Math.max(c.releasedMs, approved.get(c.index) ?? 0),
      safe: safe.get(c.index) ?? false,
      ...(ran ? { durationMs: c.resultMs! - c.startedMs! } : {}),
    });
  }
  calls.sort((a, b) => a.index - b.index);
  return { calls, streamEndMs: turn.streamEndMs, maxConcurrent, actualEndMs };
}
