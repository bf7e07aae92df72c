import { SAFE_KINDS } from '../execute/safety';
import type { CallResult, RunToolInput } from '../../machines/toolCall.machine';
import type { Classification } from '../../machines/turn.machine';
import {
  type CallTiming,
  type CompletionMode,
  completionFor,
  type ControllerWarning,
  TurnController,
} from '../engine/controller';
import { settleMicrotasks, VirtualClock } from '../engine/clock';
import type { HistoryMessage, InvariantViolation } from '../history/types';
import type { OutputEvent } from '../release/output';
import { createAdapter } from '../wire';
import { FormatCheck } from '../wire/detect';
import { type Adapter, isRetryableErrorType, type StreamErrorInfo, type StreamEvent, type WireFormat } from '../wire/events';
import type { SimToolSpec, Trace, TraceLine } from './trace';
import { checkTurn } from './invariants';

/**
 * Deterministic replay of a trace on a virtual clock: provider payloads are fed at their `t`,
 * simulated tools take `durationMs` of virtual time, and the report (SPEC §8) says when each call
 * was complete, released, started and resulted.
 */

export type Dispatch = 'streaming' | 'post-stream';

export interface ReplayOptions {
  dispatch?: Dispatch;
  completion?: CompletionMode;
  /** A user abort at this time (virtual ms). */
  abortAtMs?: number;
  onAbort?: 'commit' | 'drop';
  /** Tool specs (override the trace header's). */
  tools?: SimToolSpec[];
  /** Gateway mode: release only, run no tools (used by `convert`). */
  mode?: 'gateway' | 'execute';
  singleTool?: boolean;
  maxAttempts?: number;
  /** Give up when virtual time passes this (a tool that never resolves). Default 10 minutes. */
  horizonMs?: number;
  /** Spend real time: wait on the wall clock before each virtual step (same schedule, real pacing). */
  realtime?: boolean;
  /** Replace the simulated tools' behaviour (tests: throwing or hanging tools). */
  runTool?: (call: RunToolInput, signal: AbortSignal, clock: VirtualClock) => Promise<CallResult>;
  /** Receives every output event (in order). */
  onOutput?: (e: OutputEvent) => void;
  /** Receives controller events for live timelines. */
  onController?: (c: TurnController) => void;
}

export interface ReportCall {
  index: number;
  attempt: number;
  id?: string;
  name?: string;
  kind?: string;
  input?: Record<string, unknown>;
  state: string;
  argsChars: number;
  openMs?: number;
  completeMs?: number;
  releasedMs?: number;
  startedMs?: number;
  resultMs?: number;
  result?: CallResult;
}

export interface ReplayReport {
  format: WireFormat;
  dispatch: Dispatch;
  completion: CompletionMode;
  outcome: string;
  /**
   * Why a failed turn failed: `stream_truncated` when the trace's stream ended (`{"end":true}` or
   * its last line) without its format's terminal event (SPEC §12), `bad_stream`, or the recorded error.
   */
  error?: StreamErrorInfo;
  attempts: number;
  streamEndMs?: number;
  turnDoneMs: number;
  postStreamMs?: number;
  idealMs?: number;
  savedMs?: number;
  calls: ReportCall[];
  history: HistoryMessage[];
  warnings: ControllerWarning[];
  invariants: { ok: boolean; violations: InvariantViolation[] };
}

export function simClassifier(tools: SimToolSpec[] | undefined): (name: string) => Classification {
  const byName = new Map((tools ?? []).map((t) => [t.name, t]));
  return (name) => {
    const t = byName.get(name);
    if (!t) {
      if (tools === undefined) return { safe: false, needsApproval: false }; // no specs: every call is a plain unsafe no-op
      return {
        safe: false,
        needsApproval: false,
        problem: { ok: false, content: `Unknown tool "${name}".`, synthetic: 'unknown_tool' },
      };
    }
    return {
      safe: SAFE_KINDS.has(t.kind),
      needsApproval: t.needsApproval === true,
      structuredOutput: name === 'structured_output',
    };
  };
}

export async function replayTrace(trace: Trace, opts: ReplayOptions = {}): Promise<ReplayReport> {
  const report = await runOnce(trace, opts);
  if (opts.mode === 'gateway' || opts.abortAtMs !== undefined) return report;
  // The same turn under the classic post-stream scheduler, and the ideal schedule.
  const other =
    opts.dispatch === 'post-stream'
      ? report
      : await runOnce(trace, {
          ...opts,
          dispatch: 'post-stream',
          realtime: false,
          onOutput: undefined,
          onController: undefined,
        });
  report.postStreamMs = other.turnDoneMs;
  report.idealMs = idealMs(report, opts.tools ?? trace.tools);
  report.savedMs = report.postStreamMs - report.turnDoneMs;
  return report;
}

async function runOnce(trace: Trace, opts: ReplayOptions): Promise<ReplayReport> {
  const clock = new VirtualClock();
  const tools = opts.tools ?? trace.tools;
  const byName = new Map((tools ?? []).map((t) => [t.name, t]));
  const mode = opts.mode ?? 'execute';
  const dispatch: Dispatch = opts.dispatch ?? 'streaming';
  const completion = completionFor(trace.format, opts.completion);
  const controller = new TurnController({
    mode,
    format: trace.format,
    clock,
    completion,
    singleTool: opts.singleTool,
    maxAttempts: opts.maxAttempts ?? Math.max(1, trace.attempts.length),
    retryBaseMs: 0,
    earlyStart: dispatch === 'post-stream' ? 'none' : 'safe',
    onAbort: opts.onAbort,
    classify: simClassifier(tools),
    runTool: (call, signal) =>
      opts.runTool
        ? opts.runTool(call, signal, clock)
        : new Promise<CallResult>((resolve) => {
            const spec = byName.get(call.name);
            const ms = spec?.durationMs ?? 0;
            const h = clock.setTimeout(() => {
              resolve(
                spec?.error !== undefined
                  ? { ok: false, content: spec.error }
                  : { ok: true, content: spec?.result ?? 'ok' },
              );
            }, ms);
            signal.addEventListener('abort', () => clock.clearTimeout(h), { once: true });
          }),
  });
  if (opts.onOutput) controller.events.on('output', opts.onOutput);
  // Replays have no one to ask: approvals are granted when requested (and recorded in the trace).
  controller.events.on('approval.request', (r) => queueMicrotask(() => controller.approve(r.index)));
  opts.onController?.(controller);

  let finished = false;
  void controller.done.then(() => (finished = true));

  let attemptIdx = 0;
  let lineIdx = 0;
  let adapter: Adapter = createAdapter(trace.format);
  let formatCheck = new FormatCheck(trace.format);
  let adapterEnded = false;
  let waitingForAttempt = false;
  controller.events.on('attempt.retry', () => {
    waitingForAttempt = true;
  });
  controller.events.on('attempt.begin', () => {
    waitingForAttempt = false;
    attemptIdx++;
    lineIdx = 0;
    adapter = createAdapter(trace.format);
    formatCheck = new FormatCheck(trace.format);
    adapterEnded = false;
  });

  const feedAll = (events: StreamEvent[]) => {
    for (const e of events) controller.feed(e);
  };
  const feedLine = (l: TraceLine) => {
    if (adapterEnded) return;
    const mismatch = l.kind === 'data' && !formatCheck.done ? formatCheck.check(l.data) : undefined;
    if (mismatch !== undefined) {
      adapterEnded = true; // another provider's payloads: the attempt fails with format_mismatch
      controller.feed(mismatch);
    } else if (l.kind === 'data') feedAll(adapter.push(l.data));
    else if (l.kind === 'error') {
      const retryable = l.retryable ?? isRetryableErrorType(l.error.type);
      adapterEnded = true;
      controller.feed({ type: 'stream.error', error: l.error, retryable });
    } else {
      adapterEnded = true;
      feedAll(adapter.end());
    }
  };

  const horizon = opts.horizonMs ?? 600_000;
  let aborted = opts.abortAtMs === undefined;
  for (let guard = 0; guard < 10_000_000 && !finished; guard++) {
    const attempt = trace.attempts[attemptIdx];
    const nextLine = !waitingForAttempt && attempt && !adapterEnded ? attempt.lines[lineIdx] : undefined;
    const lineT = nextLine ? Math.max(nextLine.t, clock.now()) : undefined;
    const timerT = clock.nextTimerAt();
    const abortT = aborted ? undefined : opts.abortAtMs;
    const candidates = [lineT, timerT, abortT].filter((x): x is number => x !== undefined);
    if (candidates.length === 0) {
      // The attempt's lines are exhausted without a terminal line: EOF.
      if (attempt && !adapterEnded && !waitingForAttempt) {
        adapterEnded = true;
        feedAll(adapter.end());
        await settleMicrotasks();
        continue;
      }
      await settleMicrotasks();
      if (finished) break;
      if (clock.nextTimerAt() !== undefined) continue;
      controller.feed({ type: 'stream.end' });
      await settleMicrotasks();
      if (!finished) {
        controller.abort('commit');
        await settleMicrotasks();
      }
      break;
    }
    const t = Math.min(...candidates);
    if (opts.realtime && t > clock.now()) await new Promise((r) => setTimeout(r, t - clock.now()));
    if (t > horizon) {
      controller.abort('commit');
      await settleMicrotasks();
      break;
    }
    if (
      abortT !== undefined &&
      t === abortT &&
      (lineT === undefined || abortT <= lineT) &&
      (timerT === undefined || abortT <= timerT)
    ) {
      clock.advanceTo(t);
      aborted = true;
      controller.abort(opts.onAbort);
    } else if (timerT !== undefined && t === timerT && (lineT === undefined || timerT <= lineT)) {
      clock.advanceTo(t);
    } else if (nextLine) {
      clock.advanceTo(t);
      lineIdx++;
      feedLine(nextLine);
      // The attempt's last line: the byte stream ends here (EOF) unless a terminal line ended it.
      if (attempt && lineIdx >= attempt.lines.length && !adapterEnded && !waitingForAttempt) {
        adapterEnded = true;
        feedAll(adapter.end());
      }
    }
    await settleMicrotasks();
  }
  const summary = await Promise.race([controller.done, settleMicrotasks().then(() => undefined)]);
  if (!summary) throw new Error('replay: the turn did not finish (internal error)');

  const calls: ReportCall[] = summary.calls.map((c) => reportCall(c, byName));
  const violations =
    mode === 'execute'
      ? checkTurn(summary.history, summary.trace, dispatch === 'post-stream' ? 'none' : 'safe')
      : [];
  return {
    format: trace.format,
    dispatch,
    completion,
    outcome: summary.outcome,
    ...(summary.outcome === 'failed' && summary.error !== undefined ? { error: { type: summary.error.type, message: summary.error.message } } : {}),
    attempts: summary.attempts,
    streamEndMs: summary.streamEndMs,
    turnDoneMs: summary.turnDoneMs,
    calls,
    history: summary.history,
    warnings: summary.warnings,
    invariants: { ok: violations.length === 0, violations },
  };
}

/** One call of the report (SPEC §8 fields) from its timings; `attemptBase` shifts attempt numbers (a resumed turn). */
export function reportCall(c: CallTiming, byName: ReadonlyMap<string, SimToolSpec>, attemptBase = 1): ReportCall {
  const spec = c.name !== undefined ? byName.get(c.name) : undefined;
  return {
    index: c.index,
    attempt: c.attempt + attemptBase - 1,
    ...(c.id !== undefined ? { id: c.id } : {}),
    ...(c.name !== undefined ? { name: c.name } : {}),
    ...(spec ? { kind: spec.kind } : {}),
    ...(c.input !== undefined ? { input: c.input } : {}),
    state: c.state,
    argsChars: c.argsChars,
    openMs: c.openMs,
    completeMs: c.completeMs,
    releasedMs: c.releasedMs,
    startedMs: c.startedMs,
    resultMs: c.resultMs,
    ...(c.result ? { result: c.result } : {}),
  };
}

/**
 * The ideal schedule (SPEC §8 `idealMs`): every safe call starts at its completion evidence with
 * unlimited concurrency; unsafe calls start after the stream ended and every earlier call
 * resulted, one at a time.
 */
export function idealMs(
  report: Pick<ReplayReport, 'calls' | 'streamEndMs'>,
  tools: SimToolSpec[] | undefined,
): number {
  const byName = new Map((tools ?? []).map((t) => [t.name, t]));
  const last = Math.max(...report.calls.map((c) => c.attempt), 1);
  const calls = report.calls
    .filter((c) => c.attempt === last && c.releasedMs !== undefined)
    .sort((a, b) => a.index - b.index);
  const streamEnd = report.streamEndMs ?? 0;
  let allDone = 0; // every earlier call has resulted by then
  let unsafeDone = 0; // the latest unsafe call's result: nothing later starts before it
  for (const c of calls) {
    const spec = c.name ? byName.get(c.name) : undefined;
    const safe = spec ? SAFE_KINDS.has(spec.kind) : false;
    const complete = c.completeMs ?? streamEnd;
    const start = safe ? Math.max(complete, unsafeDone) : Math.max(streamEnd, allDone, complete);
    const done = start + (spec?.durationMs ?? 0);
    allDone = Math.max(allDone, done);
    if (!safe) unsafeDone = done;
  }
  return Math.max(streamEnd, allDone);
}
