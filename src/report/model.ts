/**
 * The rollout report's data model: every input (gateway JSON logs, OTLP JSON, journals) is read
 * into `ReportTurn`s, and `summarize` groups them per provider format and model.
 *
 * Definitions (docs/observability.md "Rollout report"):
 * - a call is *early* when it was complete at least EARLY_MIN_MS (50 ms) before its stream ended (the gateway times the end at the backend's EOF; less than that is no head start worth having);
 * - its *head start* is how long before the end of the stream its work was out of the stream's
 *   way: for a gateway call, stream end − release (the client had it); for a library call,
 *   stream end − result (the tool had finished), 0 when it finished after; in shadow mode the
 *   same with the projected start (shadow start + the real duration);
 * - *time saved* per turn: library/journal turns only (the gateway's client runs the tools):
 *   real = the library's `sluice.turn.saved_ms`, or for journals the same simulation
 *   (src/execute/shadow.ts: every start held until the stream ended, real durations) − the real
 *   end; shadow = the library's `shadowSavedMs`;
 * - *violations*: SPEC §7 invariant violations found in the turn's own lifecycle (go/no-go: 0).
 */

import { type ShadowCall, simulateSafeStarts } from '../execute/shadow';

/** runTurn's default `policy.maxConcurrent` (journals and spans do not record it). */
const DEFAULT_MAX_CONCURRENT = 10;

/** Calls complete less than this before the end of the stream count as complete "at the end". */
export const EARLY_MIN_MS = 50;

export type TurnSource = 'gateway-log' | 'otlp-gateway' | 'otlp-turn' | 'journal';

export interface ReportCall {
  id?: string;
  name?: string;
  /** ms since the turn began (same base as the turn's streamEndMs). */
  completeMs?: number;
  releasedMs?: number;
  startedMs?: number;
  resultMs?: number;
  /** Shadow mode: when 'safe' would have started it. */
  shadowStartMs?: number;
  safe?: boolean;
  /** Why sluice made the result up (interrupted, suppressed, …). */
  synthetic?: string;
}

export interface ReportTurn {
  source: TurnSource;
  /** Where it came from (file:line or trace/span id), for error messages and dedupe. */
  ref: string;
  /** Provider wire format (`anthropic`, `openai-chat`, …). */
  format: string;
  model: string;
  /** Gateway: the client ran the tools (no time saved); shadow: projected; real: measured. */
  mode: 'gateway' | 'real' | 'shadow';
  outcome: string;
  attempts: number;
  aborted: boolean;
  /** The last attempt's stream ended normally at this time (ms since the turn began). */
  streamEndMs?: number;
  /** The last attempt's released calls. */
  calls: ReportCall[];
  /** Library/journal turns: the measured saving (real) or projection (shadow), ms. */
  savedMs?: number;
  violations: number;
}

export interface ReportRow {
  format: string;
  model: string;
  sources: TurnSource[];
  turns: number;
  /** Turns with more than one attempt (a retry of a failed stream). */
  retried: number;
  aborted: number;
  /** Turns whose last stream did not end normally (error, disconnect). */
  failed: number;
  calls: number;
  /** Calls with a known completion time and a stream that ended (the share's denominator). */
  timedCalls: number;
  earlyCalls: number;
  /** earlyCalls / timedCalls (undefined when no call could be timed). */
  earlyShare?: number;
  headStartP50Ms?: number;
  headStartP90Ms?: number;
  /** Sum of time saved over turns that have it; `savedKind` says how it was obtained. */
  savedMs?: number;
  savedPerTurnMs?: number;
  savedKind: 'real' | 'shadow' | 'mixed' | 'n/a';
  synthetic: Record<string, number>;
  violations: number;
}

export interface Report {
  rows: ReportRow[];
  totals: { turns: number; calls: number; violations: number; inputs: number };
  /** The go/no-go line: no invariant violation anywhere. */
  go: boolean;
}

/** Nearest-rank percentile of a sorted array (p in 0..100). */
export function percentile(sorted: readonly number[], p: number): number | undefined {
  if (sorted.length === 0) return undefined;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

const round = (x: number): number => Math.round(x * 10) / 10;

/** A call's head start (ms), or undefined when it cannot be told. */
export function headStartOf(turn: ReportTurn, c: ReportCall): number | undefined {
  const end = turn.streamEndMs;
  if (end === undefined) return undefined;
  if (turn.mode === 'gateway') return c.releasedMs === undefined ? undefined : Math.max(0, end - c.releasedMs);
  if (turn.mode === 'shadow') {
    if (c.shadowStartMs === undefined || c.startedMs === undefined || c.resultMs === undefined) return undefined;
    return Math.max(0, end - (c.shadowStartMs + (c.resultMs - c.startedMs)));
  }
  return c.resultMs === undefined ? undefined : Math.max(0, end - c.resultMs);
}

/** When the call's arguments were complete (journals have only the release time: an upper bound). */
function completeOf(c: ReportCall): number | undefined {
  return c.completeMs ?? c.releasedMs;
}

/**
 * Real time saved by early starts (ms, ≥ 0): src/execute/shadow.ts simulates the same turn with
 * every start held until the stream ended (the library's `postStreamOfTurn`), from the real
 * durations; undefined when a call's run was not recorded.
 */
export function realSavedMs(streamEndMs: number, calls: readonly ReportCall[], maxConcurrent = DEFAULT_MAX_CONCURRENT): number | undefined {
  const sim: ShadowCall[] = [];
  let actualEndMs = streamEndMs;
  for (let i = 0; i < calls.length; i++) {
    const c = calls[i]!;
    const ran = c.startedMs !== undefined && c.resultMs !== undefined;
    if (!ran && c.synthetic === undefined) return undefined;
    if (c.resultMs !== undefined) actualEndMs = Math.max(actualEndMs, c.resultMs);
    sim.push({ index: i, readyMs: Math.max(c.releasedMs ?? streamEndMs, streamEndMs), safe: c.safe ?? false, ...(ran ? { durationMs: c.resultMs! - c.startedMs! } : {}) });
  }
  const r = simulateSafeStarts({ calls: sim, streamEndMs, maxConcurrent, actualEndMs });
  return Math.max(0, r.endMs - actualEndMs);
}

export function summarize(turns: readonly ReportTurn[], inputs: number): Report {
  const groups = new Map<string, ReportTurn[]>();
  for (const t of turns) {
    const key = `${t.format}\u0000${t.model}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = []));
    g.push(t);
  }
  const rows: ReportRow[] = [];
  for (const g of groups.values()) {
    const heads: number[] = [];
    const synthetic: Record<string, number> = {};
    const sources = new Set<TurnSource>();
    const kinds = new Set<'real' | 'shadow'>();
    let calls = 0;
    let timed = 0;
    let early = 0;
    let saved = 0;
    let savedTurns = 0;
    let violations = 0;
    for (const t of g) {
      sources.add(t.source);
      violations += t.violations;
      calls += t.calls.length;
      for (const c of t.calls) {
        if (c.synthetic !== undefined) synthetic[c.synthetic] = (synthetic[c.synthetic] ?? 0) + 1;
        const done = completeOf(c);
        if (t.streamEndMs !== undefined && done !== undefined) {
          timed++;
          if (t.streamEndMs - done >= EARLY_MIN_MS) early++;
        }
        const h = headStartOf(t, c);
        if (h !== undefined) heads.push(h);
      }
      if (t.savedMs !== undefined && t.mode !== 'gateway') {
        saved += t.savedMs;
        savedTurns++;
        kinds.add(t.mode);
      }
    }
    heads.sort((a, b) => a - b);
    const first = g[0]!;
    const row: ReportRow = {
      format: first.format,
      model: first.model,
      sources: [...sources].sort(),
      turns: g.length,
      retried: g.filter((t) => t.attempts > 1).length,
      aborted: g.filter((t) => t.aborted).length,
      failed: g.filter((t) => t.streamEndMs === undefined).length,
      calls,
      timedCalls: timed,
      earlyCalls: early,
      savedKind: kinds.size === 0 ? 'n/a' : kinds.size > 1 ? 'mixed' : [...kinds][0]!,
      synthetic,
      violations,
    };
    if (timed > 0) row.earlyShare = early / timed;
    const p50 = percentile(heads, 50);
    const p90 = percentile(heads, 90);
    if (p50 !== undefined) row.headStartP50Ms = round(p50);
    if (p90 !== undefined) row.headStartP90Ms = round(p90);
    if (savedTurns > 0) {
      row.savedMs = round(saved);
      row.savedPerTurnMs = round(saved / savedTurns);
    }
    rows.push(row);
  }
  rows.sort((a, b) => (a.format === b.format ? a.model.localeCompare(b.model) : a.format.localeCompare(b.format)));
  const totals = {
    turns: turns.length,
    calls: rows.reduce((s, r) => s + r.calls, 0),
    violations: rows.reduce((s, r) => s + r.violations, 0),
    inputs,
  };
  return { rows, totals, go: totals.violations === 0 };
}
