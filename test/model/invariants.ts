import type { TurnTraceEntry } from '../../src/history/trace';
import type { HistoryMessage, InvariantViolation } from '../../src/history/types';

/**
 * SPEC §7 invariants, written for the model-based tests: a second, independent implementation next
 * to the library's run-time `checkHistory` / `checkTrace` (src/history/check.ts). The harness runs
 * both after every step; they read only the appended history and the controller's lifecycle trace
 * (`TurnTraceEntry`, src/history/trace.ts). This one is stricter in one place: it also flags an
 * earlier call's result recorded after a later unsafe call started (SPEC §6.4), which a trace
 * cannot show at the start when the earlier call had no entry yet (an invalid call).
 */

/** I1–I3 on a history (a list of messages, possibly several turns). */
export function historyViolations(history: readonly HistoryMessage[]): InvariantViolation[] {
  const out: InvariantViolation[] = [];
  for (let m = 0; m < history.length; m++) {
    const msg = history[m]!;
    if (msg.role === 'tool') {
      const prev = history[m - 1];
      if (!prev || prev.role !== 'assistant') {
        out.push({ invariant: 'I2', at: m, message: 'a tool message that does not follow an assistant message' });
        continue;
      }
      const ids = prev.calls.map((c) => c.id);
      for (const r of msg.results) {
        if (!ids.includes(r.callId)) out.push({ invariant: 'I2', at: m, callId: r.callId, message: 'result without a call' });
      }
      continue;
    }
    if (msg.role !== 'assistant' || msg.calls.length === 0) continue;
    const next = history[m + 1];
    const results = next?.role === 'tool' ? next.results : [];
    const seen = new Set<string>();
    for (const c of msg.calls) {
      if (seen.has(c.id)) out.push({ invariant: 'I1', at: m, callId: c.id, message: 'two calls share an id' });
      seen.add(c.id);
      const n = results.filter((r) => r.callId === c.id).length;
      if (n !== 1) out.push({ invariant: 'I1', at: m, callId: c.id, message: `call has ${n} results in the next message` });
    }
    const order = results.map((r) => r.callId).filter((id) => seen.has(id));
    const expected = msg.calls.map((c) => c.id).filter((id) => order.includes(id));
    if (order.join('\u0000') !== expected.join('\u0000')) {
      out.push({ invariant: 'I3', at: m + 1, message: 'results are not in call order' });
    }
  }
  return out;
}

export interface TraceCheckOptions {
  /** Unsafe calls may start mid-stream (earlyStart 'all'). Default false. */
  earlyUnsafe?: boolean;
}

/**
 * I4–I6 on a controller trace (array order is authoritative), plus release order (SPEC §5.2):
 *
 * - I4: after an attempt is discarded nothing of it is released, started or resulted; after an
 *   abort nothing starts and only synthetic results (interrupted, …) are accepted; no attempt is
 *   both discarded and committed.
 * - I5: a tool starts only after its call was ready and released, after approval when it needed
 *   one (never after a denial); an unsafe one only after its attempt's stream ended, when every
 *   earlier call of the attempt has resulted and nothing else runs.
 * - I6: released, started and resulted at most once per (attempt, index); releases in index order.
 */
export function traceViolations(trace: readonly TurnTraceEntry[], options: TraceCheckOptions = {}): InvariantViolation[] {
  const out: InvariantViolation[] = [];
  const discarded = new Set<number>();
  const aborted = new Set<number>();
  const committed = new Set<number>();
  const streamEnded = new Set<number>();
  const key = (e: TurnTraceEntry) => `${e.attempt}:${e.index}`;
  const ready = new Map<string, TurnTraceEntry>();
  const count = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1).get(k)!;
  const released = new Map<string, number>();
  const started = new Map<string, number>();
  const resulted = new Map<string, number>();
  const approved = new Set<string>();
  const denied = new Set<string>();
  const running = new Set<string>();
  const seenIndices = new Map<number, Set<number>>();
  const lastReleased = new Map<number, number>();
  const unsafeStarted = new Map<number, number[]>();
  let lastT = -Infinity;

  let pos = 0;
  const v = (invariant: InvariantViolation['invariant'], e: TurnTraceEntry, message: string) =>
    out.push({ invariant, at: pos, message: `${message} (trace ${e.kind} a${e.attempt}${e.index !== undefined ? ` #${e.index}` : ''})` });

  for (pos = 0; pos < trace.length; pos++) {
    const e = trace[pos]!;
    if (e.t < lastT) v('I4', e, 'trace time went backwards');
    lastT = e.t;
    const k = key(e);
    if (e.index !== undefined) {
      let s = seenIndices.get(e.attempt);
      if (!s) seenIndices.set(e.attempt, (s = new Set()));
      s.add(e.index);
    }
    switch (e.kind) {
      case 'discarded':
        if (committed.has(e.attempt)) v('I4', e, 'an attempt was discarded after it was committed');
        if (e.index === undefined) {
          discarded.add(e.attempt);
          for (const r of [...running]) if (r.startsWith(`${e.attempt}:`)) running.delete(r);
        } else running.delete(k);
        break;
      case 'aborted':
        aborted.add(e.attempt);
        break;
      case 'committed':
        if (discarded.has(e.attempt)) v('I4', e, 'a discarded attempt was committed to history');
        committed.add(e.attempt);
        break;
      case 'stream.end':
        streamEnded.add(e.attempt);
        break;
      case 'ready':
        ready.set(k, e);
        break;
      case 'approved':
        approved.add(k);
        break;
      case 'denied':
        denied.add(k);
        break;
      case 'released': {
        if (discarded.has(e.attempt)) v('I4', e, 'released after its attempt was discarded');
        if (count(released, k) > 1) v('I6', e, 'released twice');
        if (!ready.has(k)) v('I5', e, 'released before it was ready');
        const last = lastReleased.get(e.attempt) ?? -1;
        if (e.index! <= last) v('I6', e, `released out of model order (after #${last})`);
        lastReleased.set(e.attempt, e.index!);
        break;
      }
      case 'started': {
        if (discarded.has(e.attempt)) v('I4', e, 'started after its attempt was discarded');
        if (aborted.has(e.attempt)) v('I4', e, 'started after the turn was aborted');
        if (count(started, k) > 1) v('I6', e, 'started twice');
        const r = ready.get(k);
        if (!r) v('I5', e, 'started before it was ready');
        if (!released.has(k)) v('I5', e, 'started before it was released');
        if (r?.needsApproval && !approved.has(k)) v('I5', e, 'started without approval');
        if (denied.has(k)) v('I5', e, 'started after a denial');
        const safe = r?.safe === true;
        if (!safe && !options.earlyUnsafe && !streamEnded.has(e.attempt)) v('I5', e, 'unsafe tool started before the stream ended');
        if (!safe) {
          for (const j of seenIndices.get(e.attempt) ?? []) {
            if (j < e.index! && !resulted.has(`${e.attempt}:${j}`)) {
              v('I5', e, `unsafe tool started before earlier call #${j} resulted${syntheticLater(trace, pos, e.attempt, j)}`);
            }
          }
          if (running.size > 0) v('I5', e, `unsafe tool started while ${[...running].join(',')} ran`);
        } else {
          for (const r2 of running) {
            const other = ready.get(r2);
            if (other && other.safe !== true) v('I5', e, `tool started while unsafe ${r2} ran`);
          }
        }
        running.add(k);
        if (!safe) {
          let us = unsafeStarted.get(e.attempt);
          if (!us) unsafeStarted.set(e.attempt, (us = []));
          us.push(e.index!);
        }
        break;
      }
      case 'resulted': {
        if (discarded.has(e.attempt)) v('I4', e, 'a result after its attempt was discarded');
        if (aborted.has(e.attempt) && !e.synthetic) v('I4', e, 'a real result accepted after the abort');
        if (count(resulted, k) > 1) v('I6', e, 'resulted twice');
        running.delete(k);
        // An earlier call must have its result before a later unsafe tool starts (SPEC §6.4).
        for (const u of unsafeStarted.get(e.attempt) ?? []) {
          if (u > e.index!) {
            const how = e.synthetic ? ` (a synthetic ${e.synthetic} result, recorded late)` : '';
            v('I5', e, `result recorded after the later unsafe call #${u} started${how}`);
          }
        }
        break;
      }
      default:
        break;
    }
  }
  return out;
}

/** When call (attempt, index) gets a synthetic result later in the trace, say so (for diagnosis). */
function syntheticLater(trace: readonly TurnTraceEntry[], from: number, attempt: number, index: number): string {
  for (let p = from + 1; p < trace.length; p++) {
    const e = trace[p]!;
    if (e.kind === 'resulted' && e.attempt === attempt && e.index === index) {
      return e.synthetic ? ` (its synthetic ${e.synthetic} result was recorded late)` : '';
    }
  }
  return '';
}
