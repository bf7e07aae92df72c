/**
 * Journals that cannot lie (docs/durability.md "Journal checks"). Before a journal is folded for
 * a resume, every record is checked against the turn's own lifecycle, in order:
 *
 * - record 0 is the header (`turn`, a known version) and names THIS turn (a journal renamed or
 *   copied from another turn is refused); no second header;
 * - `attempt` records count up from 1 by one; every other attempt-scoped record names an attempt
 *   that has begun;
 * - call indices are integers in 0..maxCallIndex (the turn limit, default 100,000);
 * - a call is released (or judged invalid) once per attempt; an approval needs a released call
 *   that asked for one; a `started` needs a released, valid call (approved when it asked), no
 *   result yet, and a second start only after a `resume` and with its `rerun` reason;
 * - a `result` needs a released or invalid call and comes once; a real (non-synthetic) result
 *   needs a start, unless the record says how it was obtained without one (`resumed`, `reused`);
 * - `end`, `aborted`, `discarded` once per attempt; `resume` counts up by one; nothing after
 *   `committed`;
 * - with a key (`journalKey` / `SLUICE_JOURNAL_KEY`), every record's chained HMAC (src/journal/mac.ts).
 *
 * The first record that fails is refused with its number (`JournalRefusedError`), which carries
 * the results recorded before it: a refused journal never loses the kept results.
 */
import { nodeCrypto } from '../nodeCrypto';
import { DEFAULT_LIMITS } from '../engine/limits';
import { macSeed, recordMac } from './mac';
import { JOURNAL_VERSION, JournalError, type JournalRecord } from './records';

/** A result recorded before the refused record (its call's identity from its `released` record). */
export interface KeptResult {
  attempt: number;
  index: number;
  id: string;
  name: string;
  ok: boolean;
  content: string;
  synthetic?: string;
}

export class JournalRefusedError extends JournalError {
  constructor(
    readonly turn: string,
    override readonly record: number,
    readonly reason: string,
    readonly kept: KeptResult[],
  ) {
    super(`${turn}: journal refused at record ${record}: ${reason} (${kept.length} recorded result(s) kept before it)`, 'refused', { record });
    this.name = 'JournalRefusedError';
  }
}

export interface CheckOptions {
  /** The turn the journal must belong to. */
  turn: string;
  /** Verify the MAC chain with this key. */
  key?: Buffer;
  /** Highest call index accepted (default: the turn limit, 100,000). */
  maxCallIndex?: number;
}

interface CallState {
  released?: { id: string; name: string; needsApproval: boolean };
  invalid: boolean;
  approved?: boolean;
  starts: number;
  result: boolean;
}

const same = (a: string, b: string): boolean => a.length === b.length && nodeCrypto().timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** Check a whole journal; throws `JournalRefusedError` at the first record that fails. */
export function checkJournal(records: readonly JournalRecord[], opts: CheckOptions): void {
  const maxIndex = opts.maxCallIndex ?? DEFAULT_LIMITS.maxCallIndex;
  const calls = new Map<string, CallState>();
  const once = new Set<string>();
  const kept: KeptResult[] = [];
  let lastAttempt = 0;
  let resumes = 0;
  const resumesAtStart = new Map<string, number>();
  let committed = false;
  let mac = opts.key ? macSeed(opts.key, opts.turn) : '';

  for (let n = 0; n < records.length; n++) {
    const r = records[n]!;
    const refuse: (reason: string) => never = (reason) => {
      throw new JournalRefusedError(opts.turn, n, `${r.k}: ${reason}`, kept);
    };
    if (r.n !== n) refuse(`numbered ${r.n}`);
    if (opts.key) {
      const want = recordMac(opts.key, mac, r);
      if (typeof r.m !== 'string' || !same(r.m, want)) refuse(r.m === undefined ? 'no MAC (the journal was not written with this key)' : 'MAC mismatch (not written by sluice with this key, or changed)');
      mac = want;
    }
    if (!(Number.isFinite(r.t) && r.t >= 0)) refuse('bad time');
    if (committed) refuse('after the commit');
    if (n === 0) {
      if (r.k !== 'turn') refuse('the first record is not the header');
      if (r.k === 'turn') {
        if (r.v !== JOURNAL_VERSION) refuse(`unknown journal version ${String(r.v)}`);
        if (r.turn !== opts.turn) refuse(`the journal belongs to turn ${JSON.stringify(String(r.turn).slice(0, 128))}, not ${opts.turn}`);
      }
      continue;
    }
    if (r.k === 'turn') refuse('a second header');
    if (r.k === 'resume') {
      if (r.count !== resumes + 1) refuse(`resume number ${r.count} after ${resumes}`);
      resumes++;
      continue;
    }
    const a = r.a;
    if (r.k === 'attempt') {
      if (a !== lastAttempt + 1) refuse(`attempt ${a} after attempt ${lastAttempt}`);
      lastAttempt = a;
      continue;
    }
    if (!Number.isInteger(a) || a < 1 || a > lastAttempt) refuse(`attempt ${a} has not begun`);
    if (r.k === 'end' || r.k === 'aborted' || r.k === 'discarded') {
      if (once.has(`${r.k}:${a}`)) refuse(`a second ${r.k} of attempt ${a}`);
      once.add(`${r.k}:${a}`);
      continue;
    }
    if (r.k === 'committed') {
      committed = true;
      continue;
    }
    if (r.k === 'text') continue;
    const i = r.i;
    if (!Number.isInteger(i) || i < 0 || i > maxIndex) refuse(`call index ${i} (allowed 0..${maxIndex})`);
    const key = `${a}:${i}`;
    let c = calls.get(key);
    if (!c) calls.set(key, (c = { invalid: false, starts: 0, result: false }));
    switch (r.k) {
      case 'released':
        if (c.released || c.invalid) refuse(`call ${i} of attempt ${a} released twice`);
        if (!r.id) refuse(`call ${i} has no id`);
        c.released = { id: r.id, name: r.name, needsApproval: r.needsApproval === true };
        break;
      case 'invalid':
        if (c.released || c.invalid) refuse(`call ${i} of attempt ${a} judged after its release`);
        c.invalid = true;
        break;
      case 'approval':
        if (!c.released?.needsApproval) refuse(`approval of call ${i}, which did not ask for one`);
        if (c.approved !== undefined) refuse(`a second approval of call ${i}`);
        c.approved = r.granted;
        break;
      case 'started':
        if (!c.released) refuse(`start of call ${i}, which was never released`);
        if (c.released!.needsApproval && c.approved !== true) refuse(`start of call ${i}, which was not approved`);
        if (c.result) refuse(`start of call ${i} after its result`);
        if (c.starts > 0 && (r.rerun === undefined || (resumesAtStart.get(key) ?? 0) === resumes)) refuse(`a second start of call ${i} without a resume and a reason`);
        c.starts++;
        resumesAtStart.set(key, resumes);
        break;
      case 'result': {
        if (!c.released && !c.invalid) refuse(`result of call ${i}, which was never released`);
        if (c.result) refuse(`a second result of call ${i}`);
        const obtained = r.synthetic !== undefined || r.resumed !== undefined || 'reused' in r;
        if (c.starts === 0 && !c.invalid && !obtained) refuse(`result of call ${i}, which never started`);
        c.result = true;
        kept.push({
          attempt: a,
          index: i,
          id: c.released?.id ?? '',
          name: c.released?.name ?? '',
          ok: r.ok,
          content: r.content,
          ...(r.synthetic !== undefined ? { synthetic: r.synthetic } : {}),
        });
        break;
      }
    }
  }
}
