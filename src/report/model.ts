/**
 * The rollout report's data model: every input (gateway JSON logs, OTLP JSON, journals) is read
 * into `ReportTurn`s (and, from the gateway's A/B log fields, `ReportContinuation`s), and a
 * `ReportBuilder` folds them, one at a time, into one row per kind (gateway or library), provider
 * format and model. The builder keeps counters and number arrays only (never the turns), so a
 * long log is summarised in bounded memory.
 *
 * Definitions (docs/observability.md "Rollout report"):
 * - a call is *early* when it was complete at least EARLY_MIN_MS (50 ms) before its stream ended;
 * - its *head start* is how much of its work was done while the stream still ran: for a gateway
 *   call, stream end − release (the client had it that long before the end); for a library call,
 *   the part of the tool's run that overlapped the stream, min(stream end, result) − start,
 *   clipped at 0 (a 300 ms read started 200 ms before the end has a 200 ms head start, whether
 *   it finished before or after the end); in shadow mode the same with the projected start;
 * - *saving per turn* (`savedPerTurnMs`): the median over turns of the time saved.
 *   Library/journal turns: real = the library's `sluice.turn.saved_ms`, or for journals the same
 *   simulation (src/execute/shadow.ts: every start held until the stream ended, real durations)
 *   − the real end; shadow = the library's `shadowSavedMs`. Gateway turns (the client runs the
 *   tools): from the A/B arms of `sluice serve --release-holdout`, the median gap between the
 *   end of a response's stream and the client's next request, holdout − early;
 * - *savedShare*: the saving ÷ the turn's duration without early dispatch — library: median saving
 *   ÷ median (turn end + saving) (shadow: the real end, the turn ran without early starts);
 *   gateway: ÷ the holdout arm's median (turn + gap);
 * - the *interval*: a 95% percentile bootstrap of the saving (src/report/stats.ts, fixed seed);
 * - *violations*: SPEC §7 invariant violations found in the turn's own lifecycle;
 * - *decision* (`decide`): no-go (any violation), more-data (too few turns, or a material saving
 *   whose interval still reaches 0), keep-off (the saving is under the thresholds), enable.
 */

import { type ShadowCall, simulateSafeStarts } from '../execute/shadow';
import { bootstrapMedians, type Interval, medianSorted, sortedCopy } from './stats';

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
  /** Gateway: the client ran the tools (saving from the A/B arms); shadow: projected; real: measured. */
  mode: 'gateway' | 'real' | 'shadow';
  outcome: string;
  attempts: number;
  aborted: boolean;
  /** The backend's stream was cut short or was not that format's stream (SPEC §12). */
  truncated?: boolean;
  /** The last attempt's stream ended normally at this time (ms since the turn began). */
  streamEndMs?: number;
  /** The last attempt's released calls. */
  calls: ReportCall[];
  /** Library/journal turns: the measured saving (real) or projection (shadow), ms. */
  savedMs?: number;
  /** Library/journal turns: the turn's duration without early dispatch, ms. */
  baselineMs?: number;
  violations: number;
}

/** Gateway A/B: a request that answered the tool calls of an earlier response (`continues` on its log record). */
export interface ReportContinuation {
  /** The answering request (for dedupe). */
  ref: string;
  /** Format, model and arm of the EARLIER response. */
  format: string;
  model: string;
  arm: 'early' | 'holdout';
  /** The earlier request's arrival → its backend stream end. */
  turnMs: number;
  /** That stream end → this request's arrival. */
  gapMs: number;
}

export type Decision = 'enable' | 'keep-off' | 'more-data' | 'no-go';

export interface Thresholds {
  /** Fewest turns with a measured saving (gateway: in each arm) before a row is decided. */
  minTurns: number;
  /** Smallest median saving per turn that matters (ms). */
  minSavingMs: number;
  /** Smallest saving as a share of the turn without early dispatch (0–1). */
  minShare: number;
}

export const DEFAULT_THRESHOLDS: Readonly<Thresholds> = { minTurns: 20, minSavingMs: 50, minShare: 0.03 };

export interface ReportRow {
  /** gateway: `sluice serve` requests; library: runTurn turns (spans, journals). */
  kind: 'gateway' | 'library';
  format: string;
  model: string;
  sources: TurnSource[];
  turns: number;
  /** Turns with more than one attempt (a retry of a failed stream). */
  retried: number;
  aborted: number;
  /** Turns whose last stream did not end normally (error, disconnect). */
  failed: number;
  /** Turns whose backend stream was truncated or not a stream (SPEC §12). */
  truncated: number;
  calls: number;
  /** Calls with a known completion time and a stream that ended (the share's denominator). */
  timedCalls: number;
  earlyCalls: number;
  /** earlyCalls / timedCalls (undefined when no call could be timed). */
  earlyShare?: number;
  headStartP50Ms?: number;
  headStartP90Ms?: number;
  /** How the saving was obtained: measured, shadow-projected, from the gateway's A/B arms. */
  savedKind: 'real' | 'shadow' | 'mixed' | 'ab' | 'n/a';
  /** Turns the saving is measured on (gateway: answering requests, both arms). */
  savedTurns: number;
  /** Gateway A/B: answering requests per arm of the response they continued. */
  arms?: { early: number; holdout: number };
  /** Median saving per turn (ms). */
  savedPerTurnMs?: number;
  /** savedPerTurnMs ÷ the median turn duration without early dispatch (0–1; may be < 0 for a loss). */
  savedShare?: number;
  /** 95% bootstrap interval of savedPerTurnMs (ms). */
  savedInterval?: { low: number; high: number; level: number };
  synthetic: Record<string, number>;
  violations: number;
  decision: Decision;
  /** One line: why this decision. */
  reason: string;
}

export interface Report {
  rows: ReportRow[];
  totals: { turns: number; calls: number; violations: number; inputs: number };
  thresholds: Thresholds;
  /** The go/no-go line: no invariant violation anywhere. */
  go: boolean;
}

/** Nearest-rank percentile of a sorted array (p in 0..100). */
export function percentile(sorted: ArrayLike<number>, p: number): number | undefined {
  if (sorted.length === 0) return undefined;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

const round = (x: number): number => Math.round(x * 10) / 10;
const round3 = (x: number): number => Math.round(x * 1000) / 1000;

/** A call's head start (ms), or undefined when it cannot be told (definitions above). */
export function headStartOf(turn: ReportTurn, c: ReportCall): number | undefined {
  const end = turn.streamEndMs;
  if (end === undefined) return undefined;
  if (turn.mode === 'gateway') return c.releasedMs === undefined ? undefined : Math.max(0, end - c.releasedMs);
  if (c.startedMs === undefined || c.resultMs === undefined) return undefined;
  const start = turn.mode === 'shadow' ? c.shadowStartMs : c.startedMs;
  if (start === undefined) return undefined;
  const runEnd = start + (c.resultMs - c.startedMs);
  return Math.max(0, Math.min(end, runEnd) - start);
}

/** When the call's arguments were complete (journals have only the release time: an upper bound). */
function completeOf(c: ReportCall): number | undefined {
  return c.completeMs ?? c.releasedMs;
}

/** When the turn's work was done: the stream end or the last result, whichever is later. */
export function turnEndOf(streamEndMs: number, calls: readonly ReportCall[]): number {
  let end = streamEndMs;
  for (const c of calls) if (c.resultMs !== undefined) end = Math.max(end, c.resultMs);
  return end;
}

/**
 * Real time saved by early starts (ms, ≥ 0): src/execute/shadow.ts simulates the same turn with
 * every start held until the stream ended (the library's `postStreamOfTurn`), from the real
 * durations; undefined when a call's run was not recorded.
 */
export function realSavedMs(streamEndMs: number, calls: readonly ReportCall[], maxConcurrent = DEFAULT_MAX_CONCURRENT): number | undefined {
  const sim: ShadowCall[] = [];
  for (let i = 0; i < calls.length; i++) {
    const c = calls[i]!;
    const ran = c.startedMs !== undefined && c.resultMs !== undefined;
    if (!ran && c.synthetic === undefined) return undefined;
    sim.push({ index: i, readyMs: Math.max(c.releasedMs ?? streamEndMs, streamEndMs), safe: c.safe ?? false, ...(ran ? { durationMs: c.resultMs! - c.startedMs! } : {}) });
  }
  const actualEndMs = turnEndOf(streamEndMs, calls);
  const r = simulateSafeStarts({ calls: sim, streamEndMs, maxConcurrent, actualEndMs });
  return Math.max(0, r.endMs - actualEndMs);
}

const ms = (v: number): string => `${Math.round(v)} ms`;
const pct = (v: number): string => `${(v * 100).toFixed(v !== 0 && Math.abs(v) < 0.1 ? 1 : 0)}%`;

/** The decision for one row and its one-line reason (a pure function of the row's numbers). */
export function decide(
  r: Pick<ReportRow, 'kind' | 'violations' | 'savedTurns' | 'arms' | 'savedPerTurnMs' | 'savedShare' | 'savedInterval'>,
  th: Thresholds,
): { decision: Decision; reason: string } {
  if (r.violations > 0)
    return { decision: 'no-go', reason: `${r.violations} invariant violation${r.violations === 1 ? '' : 's'}: keep early dispatch off and report them` };
  if (r.kind === 'gateway' && r.arms === undefined)
    return { decision: 'more-data', reason: 'no A/B data: run sluice serve --release-holdout to measure the gateway saving' };
  const n = r.arms ? Math.min(r.arms.early, r.arms.holdout) : r.savedTurns;
  if (n < th.minTurns || r.savedPerTurnMs === undefined || r.savedShare === undefined) {
    const what = r.arms ? `${r.arms.early} early / ${r.arms.holdout} holdout turns` : `${r.savedTurns} turn${r.savedTurns === 1 ? '' : 's'} with a measured saving`;
    return { decision: 'more-data', reason: `${what}; at least ${th.minTurns}${r.arms ? ' per arm' : ''} are needed to tell` };
  }
  const saved = r.savedPerTurnMs;
  const share = r.savedShare;
  const iv = r.savedInterval;
  const range = iv ? `, 95% interval ${ms(iv.low)} to ${ms(iv.high)}` : '';
  if (saved < th.minSavingMs || share < th.minShare)
    return { decision: 'keep-off', reason: `saves ${ms(saved)} per turn (${pct(share)})${range}: under the ${ms(th.minSavingMs)} and ${pct(th.minShare)} bar` };
  if (iv && iv.low <= 0) return { decision: 'more-data', reason: `saves ${ms(saved)} per turn (${pct(share)}) but not clearly${range}` };
  return { decision: 'enable', reason: `saves ${ms(saved)} per turn (${pct(share)})${range}, 0 violations` };
}

/** Everything one row needs, kept while inputs are read (counters and numbers, never turns). */
class RowAcc {
  readonly sources = new Set<TurnSource>();
  readonly kinds = new Set<'real' | 'shadow'>();
  readonly synthetic: Record<string, number> = {};
  readonly heads: number[] = [];
  readonly saved: number[] = [];
  readonly baseline: number[] = [];
  /** A/B: gaps and turn+gap per arm. */
  readonly gap = { early: [] as number[], holdout: [] as number[] };
  readonly holdoutCycle: number[] = [];
  turns = 0;
  retried = 0;
  aborted = 0;
  failed = 0;
  truncated = 0;
  calls = 0;
  timed = 0;
  early = 0;
  violations = 0;
  constructor(
    readonly kind: 'gateway' | 'library',
    readonly format: string,
    readonly model: string,
  ) {}
}

/** Folds turns and continuations into rows as they are read. */
export class ReportBuilder {
  private readonly rows = new Map<string, RowAcc>();
  private turns = 0;

  private acc(kind: 'gateway' | 'library', format: string, model: string): RowAcc {
    const key = `${kind}\u0000${format}\u0000${model}`;
    let a = this.rows.get(key);
    if (!a) this.rows.set(key, (a = new RowAcc(kind, format, model)));
    return a;
  }

  addTurn(t: ReportTurn): void {
    this.turns++;
    const a = this.acc(t.mode === 'gateway' ? 'gateway' : 'library', t.format, t.model);
    a.sources.add(t.source);
    a.turns++;
    if (t.attempts > 1) a.retried++;
    if (t.aborted) a.aborted++;
    if (t.streamEndMs === undefined) a.failed++;
    if (t.truncated === true) a.truncated++;
    a.violations += t.violations;
    a.calls += t.calls.length;
    for (const c of t.calls) {
      if (c.synthetic !== undefined) a.synthetic[c.synthetic] = (a.synthetic[c.synthetic] ?? 0) + 1;
      const done = completeOf(c);
      if (t.streamEndMs !== undefined && done !== undefined) {
        a.timed++;
        if (t.streamEndMs - done >= EARLY_MIN_MS) a.early++;
      }
      const h = headStartOf(t, c);
      if (h !== undefined) a.heads.push(h);
    }
    if (t.mode !== 'gateway' && t.savedMs !== undefined && t.baselineMs !== undefined) {
      a.saved.push(t.savedMs);
      a.baseline.push(t.baselineMs);
      a.kinds.add(t.mode);
    }
  }

  addContinuation(c: ReportContinuation): void {
    const a = this.acc('gateway', c.format, c.model);
    a.gap[c.arm].push(c.gapMs);
    if (c.arm === 'holdout') a.holdoutCycle.push(c.turnMs + c.gapMs);
  }

  build(inputs: number, th: Thresholds = DEFAULT_THRESHOLDS): Report {
    const rows = [...this.rows.values()].map((a) => rowOf(a, th));
    rows.sort((x, y) => x.kind.localeCompare(y.kind) || x.format.localeCompare(y.format) || x.model.localeCompare(y.model));
    const totals = {
      turns: this.turns,
      calls: rows.reduce((s, r) => s + r.calls, 0),
      violations: rows.reduce((s, r) => s + r.violations, 0),
      inputs,
    };
    return { rows, totals, thresholds: { ...th }, go: totals.violations === 0 };
  }
}

function rowOf(a: RowAcc, th: Thresholds): ReportRow {
  const heads = sortedCopy(a.heads);
  const ab = a.gap.early.length + a.gap.holdout.length > 0;
  const row: Omit<ReportRow, 'decision' | 'reason'> & Partial<Pick<ReportRow, 'decision' | 'reason'>> = {
    kind: a.kind,
    format: a.format,
    model: a.model,
    sources: [...a.sources].sort(),
    turns: a.turns,
    retried: a.retried,
    aborted: a.aborted,
    failed: a.failed,
    truncated: a.truncated,
    calls: a.calls,
    timedCalls: a.timed,
    earlyCalls: a.early,
    savedKind: ab ? 'ab' : a.kinds.size === 0 ? 'n/a' : a.kinds.size > 1 ? 'mixed' : [...a.kinds][0]!,
    savedTurns: ab ? a.gap.early.length + a.gap.holdout.length : a.saved.length,
    synthetic: a.synthetic,
    violations: a.violations,
  };
  if (a.timed > 0) row.earlyShare = a.early / a.timed;
  const p50 = percentile(heads, 50);
  const p90 = percentile(heads, 90);
  if (p50 !== undefined) row.headStartP50Ms = round(p50);
  if (p90 !== undefined) row.headStartP90Ms = round(p90);
  let interval: Interval | undefined;
  if (ab) {
    row.arms = { early: a.gap.early.length, holdout: a.gap.holdout.length };
    const early = sortedCopy(a.gap.early);
    const holdout = sortedCopy(a.gap.holdout);
    const me = medianSorted(early);
    const mh = medianSorted(holdout);
    const cycle = medianSorted(sortedCopy(a.holdoutCycle));
    if (me !== undefined && mh !== undefined && cycle !== undefined) {
      row.savedPerTurnMs = round(mh - me);
      if (cycle > 0) row.savedShare = round3((mh - me) / cycle);
      interval = bootstrapMedians([holdout, early], ([h, e]) => h! - e!);
    }
  } else if (a.saved.length > 0) {
    const saved = sortedCopy(a.saved);
    const m = medianSorted(saved)!;
    const base = medianSorted(sortedCopy(a.baseline))!;
    row.savedPerTurnMs = round(m);
    if (base > 0) row.savedShare = round3(m / base);
    interval = bootstrapMedians([saved], ([x]) => x!);
  }
  if (interval) row.savedInterval = { low: round(interval.low), high: round(interval.high), level: interval.level };
  const d = decide(row as ReportRow, th);
  return { ...row, ...d };
}

/** All at once (tests, small inputs): the builder over a list. */
export function summarize(turns: readonly ReportTurn[], inputs: number, th: Thresholds = DEFAULT_THRESHOLDS, continuations: readonly ReportContinuation[] = []): Report {
  const b = new ReportBuilder();
  for (const t of turns) b.addTurn(t);
  for (const c of continuations) b.addContinuation(c);
  return b.build(inputs, th);
}
