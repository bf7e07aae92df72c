/**
 * Reading a journal back: `foldJournal` (what each attempt and call had reached) and
 * `journalTrace` (the turn trace of src/history/trace.ts, with `crashed`/`resumed` entries where
 * a new process took over, for `checkTrace`).
 */
import type { TurnTraceEntry } from '../history/trace';
import type { JournalBody, JournalRecord } from './records';

type Rec<K extends JournalBody['k']> = Extract<JournalRecord, { k: K }>;

export interface JournalCall {
  index: number;
  released?: Rec<'released'>;
  invalid: boolean;
  approval?: boolean;
  /** `started` records (write-ahead) of this call. */
  starts: number;
  result?: Rec<'result'>;
}

export interface JournalAttempt {
  attempt: number;
  calls: Map<number, JournalCall>;
  /** Text/thinking records in order, interleaved with the calls (record order). */
  ended: boolean;
  aborted: boolean;
  discarded: boolean;
}

export interface JournalState {
  header?: Rec<'turn'>;
  attempts: Map<number, JournalAttempt>;
  /** The latest attempt number seen (0: none yet). */
  last: number;
  committed?: Rec<'committed'>;
  resumes: number;
  lastT: number;
  records: readonly JournalRecord[];
}

export function foldJournal(records: readonly JournalRecord[]): JournalState {
  const st: JournalState = { attempts: new Map(), last: 0, resumes: 0, lastT: 0, records };
  const att = (a: number): JournalAttempt => {
    let x = st.attempts.get(a);
    if (!x) {
      x = { attempt: a, calls: new Map(), ended: false, aborted: false, discarded: false };
      st.attempts.set(a, x);
      if (a > st.last) st.last = a;
    }
    return x;
  };
  const call = (a: number, i: number): JournalCall => {
    const x = att(a);
    let c = x.calls.get(i);
    if (!c) {
      c = { index: i, invalid: false, starts: 0 };
      x.calls.set(i, c);
    }
    return c;
  };
  for (const r of records) {
    if (r.t > st.lastT) st.lastT = r.t;
    switch (r.k) {
      case 'turn':
        st.header = r;
        break;
      case 'attempt':
        att(r.a);
        break;
      case 'text':
        att(r.a);
        break;
      case 'released':
        call(r.a, r.i).released = r;
        break;
      case 'invalid':
        call(r.a, r.i).invalid = true;
        break;
      case 'approval':
        call(r.a, r.i).approval = r.granted;
        break;
      case 'started':
        call(r.a, r.i).starts++;
        break;
      case 'result':
        call(r.a, r.i).result ??= r;
        break;
      case 'end':
        att(r.a).ended = true;
        break;
      case 'aborted':
        att(r.a).aborted = true;
        break;
      case 'discarded':
        att(r.a).discarded = true;
        break;
      case 'resume':
        st.resumes++;
        break;
      case 'committed':
        st.committed = r;
        break;
    }
  }
  return st;
}

/**
 * The turn trace a journal describes. A `resume` record becomes `crashed` (at the last time the
 * old process recorded) followed by `resumed`; `released` implies the call was `ready` just before.
 */
export function journalTrace(records: readonly JournalRecord[]): TurnTraceEntry[] {
  const out: TurnTraceEntry[] = [];
  const safeOf = new Map<string, boolean>();
  let lastT = 0;
  let lastA = 1;
  for (const r of records) {
    const t = Math.max(lastT, r.t);
    switch (r.k) {
      case 'attempt':
        lastA = r.a;
        out.push({ t, kind: 'attempt.start', attempt: r.a });
        break;
      case 'released':
        safeOf.set(`${r.a}:${r.i}`, r.safe);
        out.push({ t, kind: 'ready', attempt: r.a, index: r.i, callId: r.id, name: r.name, safe: r.safe, needsApproval: r.needsApproval === true });
        out.push({ t, kind: 'released', attempt: r.a, index: r.i, callId: r.id, safe: r.safe });
        break;
      case 'approval':
        out.push({ t, kind: r.granted ? 'approved' : 'denied', attempt: r.a, index: r.i });
        break;
      case 'started':
        out.push({ t, kind: 'started', attempt: r.a, index: r.i, safe: safeOf.get(`${r.a}:${r.i}`) ?? false, ...(r.rerun ? { rerun: r.rerun } : {}) });
        break;
      case 'result':
        out.push({ t, kind: 'resulted', attempt: r.a, index: r.i, ...(r.synthetic ? { synthetic: r.synthetic } : {}) });
        break;
      case 'end':
        out.push({ t, kind: 'stream.end', attempt: r.a });
        break;
      case 'aborted':
        out.push({ t, kind: 'aborted', attempt: r.a });
        break;
      case 'discarded':
        out.push({ t, kind: 'discarded', attempt: r.a });
        break;
      case 'resume':
        out.push({ t: lastT, kind: 'crashed', attempt: lastA });
        out.push({ t, kind: 'resumed', attempt: lastA });
        break;
      case 'committed':
        if (r.outcome === 'done' || r.outcome === 'aborted') out.push({ t, kind: 'committed', attempt: r.a, callIds: r.callIds });
        break;
      default:
        break;
    }
    lastT = t;
  }
  return out;
}
