/**
 * Invariant checks (SPEC §7).
 *
 * - `checkHistory(messages)` — I1–I3 on a history (neutral, or any provider shape with `format`).
 * - `checkTrace(trace)` — I4–I6 on a turn trace (src/history/trace.ts), which records when
 *   things happened; a history alone cannot show them.
 *
 * A call id used again by a later assistant message is a warning (providers match a result to the
 * call in the message right before it, so it breaks no invariant, but an id should name one
 * call: runTurn renames repeats, see `knownCallIds`); twice in one message it is an I1 violation.
 *
 * Both never throw: malformed input produces warnings (and, where it breaks an invariant,
 * violations). Messages name ids, names and positions only, never arguments or results.
 */
import { type HistoryFormat, fromProviderHistory } from './shapes';
import type { EarlyStartPolicy, TurnTraceEntry } from './trace';
import type { HistoryMessage, InvariantViolation, ToolCallRecord } from './types';

export interface CheckResult {
  ok: boolean;
  violations: InvariantViolation[];
  /** Oddities that break no invariant (e.g. a result whose name differs from its call's). */
  warnings: string[];
}

export interface CheckHistoryOptions {
  /** Shape of `messages` (default 'neutral'); provider shapes are converted first (src/history/shapes.ts). */
  format?: HistoryFormat;
  /**
   * Accept an assistant message with calls at the very end (a turn whose results are still
   * pending). Default false: a stored history that ends there is broken (I1).
   */
  allowPendingCalls?: boolean;
}

type Assistant = Extract<HistoryMessage, { role: 'assistant' }>;
type Tool = Extract<HistoryMessage, { role: 'tool' }>;

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Calls of an assistant message ([] for anything else or malformed calls). */
export function callsOf(m: unknown): ToolCallRecord[] {
  if (!isObj(m) || m.role !== 'assistant' || !Array.isArray(m.calls)) return [];
  return (m.calls as unknown[]).filter((c): c is ToolCallRecord => isObj(c) && typeof c.id === 'string');
}

function resultsOf(m: unknown): Tool['results'] {
  if (!isObj(m) || m.role !== 'tool' || !Array.isArray(m.results)) return [];
  return (m.results as unknown[]).filter((r): r is Tool['results'][number] => isObj(r) && typeof r.callId === 'string');
}

function roleOf(m: unknown): string {
  return isObj(m) && typeof m.role === 'string' ? m.role : 'malformed';
}

/** Check I1 (one result per call, in the next message), I2 (no result without its call) and I3 (call order). */
export function checkHistory(messages: readonly unknown[], opts: CheckHistoryOptions = {}): CheckResult {
  const warnings: string[] = [];
  const violations: InvariantViolation[] = [];
  const list: readonly unknown[] = Array.isArray(messages)
    ? opts.format && opts.format !== 'neutral'
      ? fromProviderHistory(opts.format, messages, { onWarning: (w) => warnings.push(w) })
      : messages
    : [];
  if (!Array.isArray(messages)) warnings.push('history is not an array');
  const earlier = new Map<string, number>(); // call id → message that first used it

  list.forEach((m, i) => {
    const role = roleOf(m);
    if (role !== 'user' && role !== 'assistant' && role !== 'tool') warnings.push(`message ${i}: unknown role ${role}`);
    if (role === 'assistant' && !Array.isArray((m as Assistant).calls)) warnings.push(`message ${i}: assistant message without a calls array`);

    if (role === 'tool') {
      const results = resultsOf(m);
      if (results.length === 0) warnings.push(`message ${i}: tool message without results`);
      const prevCalls = callsOf(list[i - 1]);
      const ids = new Set(prevCalls.map((c) => c.id));
      for (const r of results) {
        if (!ids.has(r.callId)) {
          violations.push({
            invariant: 'I2',
            at: i,
            callId: r.callId,
            message: `message ${i}: result for ${r.callId} has no call in the preceding ${i > 0 ? roleOf(list[i - 1]) : 'start of history'} message`,
          });
        }
      }
    }

    const calls = callsOf(m);
    if (calls.length === 0) return;
    const seen = new Set<string>();
    for (const c of calls) {
      if (seen.has(c.id)) violations.push({ invariant: 'I1', at: i, callId: c.id, message: `message ${i}: call id ${c.id} appears twice` });
      else if (earlier.has(c.id)) warnings.push(`message ${i}: call id ${c.id} was already used in message ${earlier.get(c.id)}`);
      seen.add(c.id);
    }
    for (const id of seen) if (!earlier.has(id)) earlier.set(id, i);
    const next = list[i + 1];
    if (roleOf(next) !== 'tool') {
      if (i === list.length - 1 && opts.allowPendingCalls) return;
      for (const c of calls) {
        violations.push({
          invariant: 'I1',
          at: i,
          callId: c.id,
          message: `message ${i}: call ${c.id} (${c.name}) has no result: the next message is ${i === list.length - 1 ? 'the end of history' : roleOf(next)}`,
        });
      }
      return;
    }
    const results = resultsOf(next);
    const order = new Map(calls.map((c, k) => [c.id, k]));
    for (const c of calls) {
      const mine = results.filter((r) => r.callId === c.id);
      if (mine.length === 0) {
        violations.push({ invariant: 'I1', at: i, callId: c.id, message: `message ${i}: call ${c.id} (${c.name}) has no result in message ${i + 1}` });
      } else if (mine.length > 1) {
        violations.push({ invariant: 'I1', at: i, callId: c.id, message: `message ${i}: call ${c.id} (${c.name}) has ${mine.length} results in message ${i + 1}` });
      }
      for (const r of mine) {
        if (r.name !== c.name) warnings.push(`message ${i + 1}: result for ${c.id} is named ${r.name}, its call ${c.name}`);
      }
    }
    // I3: first results of the calls, in message order, must follow call order.
    let lastPos = -1;
    const firstSeen = new Set<string>();
    for (const r of results) {
      const pos = order.get(r.callId);
      if (pos === undefined || firstSeen.has(r.callId)) continue;
      firstSeen.add(r.callId);
      if (pos < lastPos) {
        violations.push({ invariant: 'I3', at: i + 1, callId: r.callId, message: `message ${i + 1}: result for ${r.callId} comes after the result of a later call` });
        break;
      }
      lastPos = pos;
    }
  });
  return { ok: violations.length === 0, violations, warnings };
}

// ---------------------------------------------------------------------------------------------
// Trace checks

export interface CheckTraceOptions {
  /** The policy the turn ran with (default 'safe'). */
  earlyStart?: EarlyStartPolicy;
}

interface CallState {
  ready: boolean;
  safe?: boolean;
  needsApproval: boolean;
  approved: boolean;
  denied: boolean;
  discarded: boolean;
  released: number;
  started: number;
  resulted: number;
  running: boolean;
  /** Started, and a crash came before its result (a `rerun` may start it once more). */
  crashed: boolean;
  callId?: string;
}

interface AttemptState {
  streamEnded: boolean;
  discarded: boolean;
  aborted: boolean;
  calls: Map<number, CallState>;
}

const CALL_KINDS = new Set(['ready', 'approved', 'denied', 'released', 'started', 'resulted']);
const KNOWN_KINDS = new Set([...CALL_KINDS, 'attempt.start', 'stream.end', 'discarded', 'aborted', 'committed', 'crashed', 'resumed']);

/**
 * Check I4–I6 on a turn trace:
 * - I4: after an attempt is discarded nothing of it starts, results, is released or is
 *   committed (also a single discarded call); after an abort nothing starts and only synthetic
 *   results are recorded; a commit lists no call id that belongs only to discarded calls.
 * - I5: no start before `ready`, before approval (when needed) or after denial; under
 *   earlyStart 'none' no start before the stream ended; an unsafe call starts only after the
 *   stream ended ('all': or when approved), every earlier call has resulted and nothing else runs;
 *   no call starts while an earlier unsafe call has not resulted.
 * - I6: at most one `started`, one `released` and one `resulted` per call and attempt. After a
 *   `crashed` entry, a call that started without a result may start once more only with a
 *   `rerun` reason ('safe' for a safe call, 'idempotent', 'reconciled').
 * A call's safety is `started.safe ?? ready.safe ?? released.safe`; unknown counts as unsafe.
 * `at` in a violation is the trace entry index.
 */
export function checkTrace(trace: readonly unknown[], opts: CheckTraceOptions = {}): CheckResult {
  const policy = opts.earlyStart ?? 'safe';
  const violations: InvariantViolation[] = [];
  const warnings: string[] = [];
  const attempts = new Map<number, AttemptState>();
  const discardedIds = new Set<string>();
  let lastT = -Infinity;

  const attemptOf = (n: number): AttemptState => {
    let a = attempts.get(n);
    if (!a) {
      a = { streamEnded: false, discarded: false, aborted: false, calls: new Map() };
      attempts.set(n, a);
    }
    return a;
  };
  const callOf = (a: AttemptState, index: number): CallState => {
    let c = a.calls.get(index);
    if (!c) {
      c = { ready: false, needsApproval: false, approved: false, denied: false, discarded: false, released: 0, started: 0, resulted: 0, running: false, crashed: false };
      a.calls.set(index, c);
    }
    return c;
  };

  if (!Array.isArray(trace)) return { ok: true, violations, warnings: ['trace is not an array'] };

  trace.forEach((raw, at) => {
    if (!isObj(raw) || typeof raw.kind !== 'string' || typeof raw.attempt !== 'number') {
      warnings.push(`entry ${at}: malformed; skipped`);
      return;
    }
    const e = raw as unknown as TurnTraceEntry;
    if (!KNOWN_KINDS.has(e.kind)) {
      warnings.push(`entry ${at}: unknown kind ${String(e.kind)}; skipped`);
      return;
    }
    if (typeof e.t === 'number') {
      if (e.t < lastT) warnings.push(`entry ${at}: t decreases`);
      lastT = e.t;
    }
    const v = (invariant: InvariantViolation['invariant'], message: string, callId?: string): void => {
      violations.push({ invariant, at, ...(callId ? { callId } : {}), message: `trace entry ${at} (attempt ${e.attempt}${e.index !== undefined ? `, call ${e.index}` : ''}): ${message}` });
    };
    const a = attemptOf(e.attempt);

    if (!CALL_KINDS.has(e.kind)) {
      switch (e.kind) {
        case 'stream.end':
          a.streamEnded = true;
          break;
        case 'aborted':
          a.aborted = true;
          break;
        case 'crashed':
          // Everything the dead process was running stopped; what started without a result may
          // start once more after the resume, if its `started` entry says why that is allowed.
          for (const att of attempts.values())
            for (const c of att.calls.values()) {
              c.running = false;
              if (c.started > 0 && c.resulted === 0) c.crashed = true;
            }
          break;
        case 'discarded':
          if (typeof e.index === 'number') {
            const c = callOf(a, e.index);
            c.discarded = true;
            c.running = false;
            if (c.callId) discardedIds.add(c.callId);
          } else {
            a.discarded = true;
            for (const c of a.calls.values()) {
              c.running = false;
              if (c.callId) discardedIds.add(c.callId);
            }
          }
          break;
        case 'committed': {
          if (a.discarded) v('I4', 'a discarded attempt was committed to history');
          const live = new Set([...a.calls.values()].filter((c) => !c.discarded && c.callId).map((c) => c.callId as string));
          for (const id of Array.isArray(e.callIds) ? e.callIds : []) {
            if (discardedIds.has(id) && !live.has(id)) v('I4', `committed call ${id} belongs to a discarded call`, id);
          }
          break;
        }
        default:
          break;
      }
      return;
    }

    if (typeof e.index !== 'number') {
      warnings.push(`entry ${at}: ${e.kind} without index; skipped`);
      return;
    }
    const c = callOf(a, e.index);
    if (e.callId && !c.callId) c.callId = e.callId;
    const gone = a.discarded || c.discarded;

    switch (e.kind) {
      case 'ready':
        c.ready = true;
        if (typeof e.safe === 'boolean') c.safe = e.safe;
        c.needsApproval = e.needsApproval === true;
        break;
      case 'approved':
        c.approved = true;
        break;
      case 'denied':
        c.denied = true;
        break;
      case 'released':
        if (c.safe === undefined && typeof e.safe === 'boolean') c.safe = e.safe;
        if (gone) v('I4', 'released after its attempt/call was discarded', c.callId);
        c.released++;
        if (c.released > 1) v('I6', `released ${c.released} times`, c.callId);
        break;
      case 'started': {
        if (gone) v('I4', 'started after its attempt/call was discarded', c.callId);
        if (a.aborted) v('I4', 'started after the turn was aborted', c.callId);
        const safeNow = typeof e.safe === 'boolean' ? e.safe : c.safe === true;
        const rerunOk = c.crashed && e.rerun !== undefined && (e.rerun !== 'safe' || safeNow);
        if (!rerunOk) {
          c.started++;
          if (c.started > 1)
            v('I6', c.crashed ? 'started again after a crash without a reason that allows it (unsafe, not idempotent, not reconciled)' : `started ${c.started} times`, c.callId);
        }
        c.crashed = false;
        if (!c.ready) v('I5', 'started before it was ready', c.callId);
        if (c.denied) v('I5', 'started after approval was denied', c.callId);
        else if (c.needsApproval && !c.approved) v('I5', 'started before it was approved', c.callId);
        const safe = typeof e.safe === 'boolean' ? e.safe : c.safe === true;
        if (policy === 'none' && !a.streamEnded) v('I5', "started before the stream ended (earlyStart 'none')", c.callId);
        const earlier = [...a.calls.entries()].filter(([k, x]) => k < (e.index as number) && !x.discarded);
        if (!safe) {
          if (!a.streamEnded && policy !== 'all') v('I5', 'unsafe call started before the stream ended', c.callId);
          const pending = earlier.filter(([, x]) => x.resulted === 0).map(([k]) => k);
          if (pending.length) v('I5', `unsafe call started before earlier call(s) ${pending.join(', ')} resulted`, c.callId);
          const running = [...a.calls.entries()].filter(([k, x]) => k !== e.index && x.running).map(([k]) => k);
          if (running.length) v('I5', `unsafe call started while call(s) ${running.join(', ')} were running`, c.callId);
        } else {
          const blocking = earlier.filter(([, x]) => x.ready && x.safe === false && x.resulted === 0).map(([k]) => k);
          if (blocking.length) v('I5', `started while earlier unsafe call(s) ${blocking.join(', ')} had not resulted`, c.callId);
        }
        c.running = true;
        break;
      }
      case 'resulted':
        if (gone) v('I4', 'result recorded after its attempt/call was discarded', c.callId);
        else if (a.aborted && !e.synthetic) v('I4', 'real result recorded after the turn was aborted', c.callId);
        c.resulted++;
        if (c.resulted > 1) v('I6', `resulted ${c.resulted} times`, c.callId);
        c.running = false;
        break;
      default:
        break;
    }
  });
  return { ok: violations.length === 0, violations, warnings };
}
