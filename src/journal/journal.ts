/**
 * TurnJournal: writes a turn's lifecycle to a JournalStore as it happens.
 *
 *   const journal = await createTurnJournal(store, 'turn-42', { format: 'anthropic' });
 *   await runTurn({ ..., journal });        // or: journal.attach(controller) before feeding
 *
 * It listens to the controller's events (attempt begun, call released, approval, result, stream
 * end, discard, abort, turn done) and hooks the controller's tool runner so that the `started`
 * record is written BEFORE the tool is invoked: for an unsafe call the run waits until the record
 * is durable; when it cannot be written the tool is not run (error result). Safe calls do not
 * wait (they are re-run after a crash anyway); their record is still written first.
 *
 * Records carry the journal's attempt numbers and times: a resumed turn continues them
 * (`attemptBase`, `tBase`), and records the journal already has are not written twice (`skip`).
 *
 * When the store fails (docs/durability.md "When the store fails"): a retryable failure
 * (`unavailable`, `no_space`) is retried with exponential backoff for up to `retryMs` (default
 * 10 s, `SLUICE_JOURNAL_RETRY_MS`), records written meanwhile wait in order; an append that may
 * have landed before its failure was reported is not written twice. Past that, or on a failure
 * that is not retryable, the journal is FAILED: nothing more is written, no unsafe tool starts
 * (its write-ahead record cannot be made durable; it is not run and not answered — resume
 * decides it), and `flush()` — so `runTurn` — rejects with the `JournalError`. The turn's
 * messages are then not a result: `resumeTurn` finishes the turn from the journal once the
 * store is back, so every call gets exactly one result and no unsafe call runs twice.
 */
import type { CallResult, RunToolFn, RunToolInput } from '../calls';
import type { TurnController } from '../engine/controller';
import type { WireFormat } from '../wire/events';
import { journalKey, macSeed, recordMac } from './mac';
import {
  isDurableKind,
  JOURNAL_VERSION,
  JournalError,
  type JournalBody,
  type JournalRecord,
  type ResumedHow,
  checkTurnId,
  toJournalError,
} from './records';
import type { JournalStore } from './store';

export interface TurnJournalHeader {
  format?: WireFormat;
  earlyStart?: 'safe' | 'none' | 'all';
  maxAttempts?: number;
  meta?: Record<string, unknown>;
}

/** What a resume decided for a call about to start (see src/engine/resume.ts). */
export type BeforeRun =
  | { run: true; rerun?: 'safe' | 'idempotent' | 'reconciled' }
  | { run: false; result: CallResult; resumed: ResumedHow };

export interface TurnJournalOptions {
  /** Next record number (a resumed journal continues it). */
  nextSeq?: number;
  /** Added to the controller's clock (a resumed journal continues its times). */
  tBase?: number;
  /** Journal attempt number of the controller's attempt 1. */
  attemptBase?: number;
  /** Identities of records already in the journal (`recordKey`): not written again. */
  skip?: ReadonlySet<string>;
  /** Journal attempts whose text is already recorded. */
  textKnown?: ReadonlySet<number>;
  /** Write nothing (a committed turn read back). */
  readOnly?: boolean;
  /** MAC key (src/journal/mac.ts): default `SLUICE_JOURNAL_KEY`; every record written carries `m`. */
  journalKey?: string | Buffer;
  /** The MAC of the last record already in the journal (a resumed journal continues the chain). */
  prevMac?: string;
  /** How long retryable store failures are retried before the journal fails (default 10 s, `SLUICE_JOURNAL_RETRY_MS`). */
  retryMs?: number;
}

export const DEFAULT_JOURNAL_RETRY_MS = 10_000;

function retryWindow(option: number | undefined, env: NodeJS.ProcessEnv = process.env): number {
  const raw = option ?? (env.SLUICE_JOURNAL_RETRY_MS ? Number(env.SLUICE_JOURNAL_RETRY_MS) : DEFAULT_JOURNAL_RETRY_MS);
  if (!(Number.isFinite(raw) && raw >= 0))
    throw new JournalError(`the journal retry window (retryMs / SLUICE_JOURNAL_RETRY_MS) must be a number of ms ≥ 0 (got ${String(raw)})`, 'config');
  return raw;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The identity of a record for de-duplication on resume (undefined: never de-duplicated). */
export function recordKey(r: JournalBody): string | undefined {
  switch (r.k) {
    case 'attempt':
    case 'end':
    case 'aborted':
    case 'discarded':
    case 'committed':
      return `${r.k}:${r.a}`;
    case 'released':
    case 'invalid':
    case 'approval':
    case 'result':
      return `${r.k}:${r.a}:${r.i}`;
    default:
      return undefined;
  }
}

const RESOLVED = Promise.resolve();

/** Records that go to an async store in one append. */
interface Batch {
  recs: JournalRecord[];
  /** Any of them must be durable: the whole append is. */
  durable: boolean;
  done: Promise<void>;
}

export class TurnJournal {
  /** Set by a resume: decides, per call about to start, whether it runs. */
  beforeRun?: (call: RunToolInput, journalAttempt: number) => Promise<BeforeRun>;
  /** Store failures (kinds and messages, never record contents). */
  readonly errors: string[] = [];
  /** Appends that failed and were tried again (each retry counts). */
  retries = 0;
  private seq: number;
  private failed?: JournalError;
  private readonly failListeners: Array<(err: JournalError) => void> = [];
  /** A synchronous append failed with a retryable error: from then on appends are queued and retried. */
  private syncOff = false;
  /**
   * Records the store acknowledged since the last durable append. A durable append makes them
   * durable too (a synchronous commit flushes the WAL before it; an fdatasync the file); until
   * then a server crash may lose them, and `reconcile` writes them again.
   */
  private undurable: JournalRecord[] = [];
  private readonly key?: Buffer;
  private mac?: string;
  private readonly retryMs: number;
  private readonly tBase: number;
  private readonly attemptBase: number;
  private readonly skip: ReadonlySet<string>;
  private readonly textKnown: ReadonlySet<number>;
  private readonly readOnly: boolean;
  private chain: Promise<void> = RESOLVED;
  /** Records waiting for the append in flight to finish (async stores). */
  private batch?: Batch;
  private readonly resumed = new Map<string, ResumedHow>();
  private attached = false;

  constructor(
    readonly store: JournalStore,
    readonly turn: string,
    opts: TurnJournalOptions = {},
  ) {
    checkTurnId(turn);
    this.seq = opts.nextSeq ?? 0;
    this.tBase = opts.tBase ?? 0;
    this.attemptBase = opts.attemptBase ?? 1;
    this.skip = opts.skip ?? new Set();
    this.textKnown = opts.textKnown ?? new Set();
    this.readOnly = opts.readOnly ?? false;
    this.key = journalKey(opts.journalKey);
    if (this.key) this.mac = opts.prevMac ?? macSeed(this.key, turn);
    this.retryMs = retryWindow(opts.retryMs);
  }

  get records(): number {
    return this.seq;
  }

  /** The MAC of the last record written (keyed journals). */
  get lastMac(): string | undefined {
    return this.mac;
  }

  /** Why the journal failed (undefined while it works). */
  get failure(): JournalError | undefined {
    return this.failed;
  }

  /** Called once when the journal fails (the store gave up, or `halt`). */
  onFailure(fn: (err: JournalError) => void): void {
    if (this.failed) fn(this.failed);
    else this.failListeners.push(fn);
  }

  /** Stop writing: e.g. the lease was lost. Later writes reject with `err`; unsafe calls do not start. */
  halt(err: JournalError): void {
    if (this.failed) return;
    this.failed = err;
    this.errors.push(err.message);
    for (const fn of this.failListeners.splice(0)) fn(err);
  }

  /**
   * Append one record (numbered here). Resolves when written; for durable records when they are
   * durable (`durable` overrides the kind's default, src/journal/records.ts).
   */
  write(body: JournalBody, durableOverride?: boolean): Promise<void> {
    if (this.readOnly) return RESOLVED;
    const key = recordKey(body);
    if (key !== undefined && this.skip.has(key)) return RESOLVED;
    if (body.k === 'text' && this.textKnown.has(body.a)) return RESOLVED;
    if (this.failed) return Promise.reject(this.failed);
    const rec = { ...body, n: this.seq++ } as JournalRecord;
    if (this.key) rec.m = this.mac = recordMac(this.key, this.mac!, rec);
    const durable =
      durableOverride ?? (isDurableKind(body.k) && !(body.k === 'started' && body.safe === true));
    if (this.store.appendSync && !this.syncOff) {
      try {
        this.store.appendSync(this.turn, [rec], { durable });
        this.appended([rec], durable);
        return RESOLVED;
      } catch (err) {
        const je = toJournalError(err, `append to ${this.turn}`);
        if (!je.retryable || this.retryMs === 0) {
          this.fail(je);
          return Promise.reject(je);
        }
        this.syncOff = true; // this record and every later one go through the retrying queue
        this.errors.push(`${je.message} (retrying)`);
        this.retries++;
      }
    }
    // Group commit for async stores: records written while an append is in flight wait together
    // and go out as one append (one transaction, one fsync) right after it, in order.
    let b = this.batch;
    if (b === undefined) {
      const open: Batch = { recs: [], durable: false, done: RESOLVED };
      open.done = this.chain.then(() => {
        if (this.batch === open) this.batch = undefined; // later records start the next batch
        return this.failed ? Promise.reject(this.failed) : this.appendRetrying(open.recs, open.durable);
      });
      this.chain = open.done.catch((err: unknown) => this.fail(toJournalError(err, `append to ${this.turn}`)));
      this.batch = b = open;
    }
    b.recs.push(rec);
    b.durable ||= durable;
    return b.done;
  }

  /**
   * One append, retried with exponential backoff (20 ms doubling to 1 s) while the failure is
   * retryable and the window lasts. Before a retry the store is read back (`reconcile`): records
   * the failed attempt stored after all (a commit whose answer was lost) are not written twice,
   * and records the store had acknowledged but lost (see `undurable`) are written again.
   */
  private async appendRetrying(recs: JournalRecord[], durable: boolean): Promise<void> {
    const deadline = Date.now() + this.retryMs;
    let delay = 20;
    let reconcile = false;
    let sequenceChecks = 0;
    for (;;) {
      let err: JournalError;
      try {
        const { resend, todo } = reconcile ? await this.reconcile(recs) : { resend: [], todo: recs };
        if (resend.length + todo.length > 0) await this.store.append(this.turn, [...resend, ...todo], { durable });
        this.appended(todo, durable);
        return;
      } catch (e) {
        err = toJournalError(e, `append to ${this.turn}`);
      }
      if (this.failed) throw this.failed;
      if (err.code === 'corrupt' && sequenceChecks++ === 0 && !reconcile) {
        // A sequence gap on a first try: the store may have lost acknowledged records (a server
        // crash). Read it back once and see.
        reconcile = true;
        continue;
      }
      if (!err.retryable || Date.now() + delay > deadline) throw err;
      this.retries++;
      reconcile = true;
      await sleep(delay);
      delay = Math.min(delay * 2, 1000);
    }
  }

  /** Track records acknowledged but not yet durable: a durable append makes every earlier one durable. */
  private appended(recs: readonly JournalRecord[], durable: boolean): void {
    if (durable) this.undurable = [];
    else for (const r of recs) this.undurable.push(r);
  }

  /**
   * Compare the store with what this journal wrote: `todo` is the part of `recs` not stored yet
   * (identical records already there are dropped; a different one is corruption); `resend` are
   * records before `recs` that the store acknowledged without making them durable and has lost
   * since (PostgreSQL loses asynchronously committed transactions in a server crash) — this
   * journal still has them, so they are written again, in order.
   */
  private async reconcile(recs: JournalRecord[]): Promise<{ resend: JournalRecord[]; todo: JournalRecord[] }> {
    const stored = (await this.store.read(this.turn)).records;
    const first = recs[0]!.n;
    const last = recs[recs.length - 1]!.n;
    const corrupt = (msg: string, record: number) => new JournalError(`${this.turn}: ${msg}`, 'corrupt', { record });
    if (stored.length > last + 1) throw corrupt(`the store has ${stored.length} records, more than this journal wrote (${last + 1}): another writer?`, last + 1);
    let resend: JournalRecord[] = [];
    if (stored.length < first) {
      resend = this.undurable.filter((r) => r.n >= stored.length && r.n < first);
      if (resend.length !== first - stored.length) throw corrupt(`the store has ${stored.length} records, this journal continues at ${first}`, stored.length);
      this.errors.push(`${this.turn}: the store lost records ${stored.length}–${first - 1} it had acknowledged (not yet durable); written again`);
    }
    let k = 0;
    for (; k < recs.length && recs[k]!.n < stored.length; k++) {
      if (JSON.stringify(stored[recs[k]!.n]) !== JSON.stringify(recs[k])) throw corrupt(`record ${recs[k]!.n} in the store is not the one this journal wrote`, recs[k]!.n);
    }
    return { resend, todo: recs.slice(k) };
  }

  private fail(err: JournalError): void {
    this.halt(err);
  }

  /**
   * Wait for every record written so far (async stores). Rejects with the `JournalError` when
   * the journal failed: the turn is then not durably recorded — resume it (`resumeTurn`).
   */
  async flush(): Promise<void> {
    await this.chain;
    if (this.failed) throw this.failed;
  }

  /** Mark how a resumed call got its result (written on its `result` record). */
  markResumed(journalAttempt: number, index: number, how: ResumedHow): void {
    this.resumed.set(`${journalAttempt}:${index}`, how);
  }

  /** Journal the controller's turn from now on (call before feeding it). */
  attach(controller: TurnController): void {
    if (this.attached) throw new Error('TurnJournal.attach: already attached to a controller');
    this.attached = true;
    const A = (a: number): number => a + this.attemptBase - 1;
    const T = (): number => Math.round((this.tBase + controller.clock.now()) * 1000) / 1000;
    const flags = new Map<string, { safe: boolean; needsApproval: boolean }>();
    const soft = (p: Promise<void>): void => void p.catch(() => undefined); // failures land in `errors`
    let text = '';
    let thinking = '';
    let signature: string | undefined;
    const flushText = (a: number): void => {
      if (!text && !thinking && signature === undefined) return;
      soft(
        this.write({
          k: 'text',
          a,
          t: T(),
          ...(text ? { text } : {}),
          ...(thinking ? { thinking } : {}),
          ...(signature !== undefined ? { signature } : {}),
        }),
      );
      text = '';
      thinking = '';
      signature = undefined;
    };

    soft(this.write({ k: 'attempt', a: A(controller.currentAttempt), t: T() }));
    controller.events.on('output', (e) => {
      if (e.type === 'text') text += e.text;
      else if (e.type === 'thinking') thinking += e.text;
      else if (e.type === 'thinking.signature') signature = e.signature;
    });
    controller.events.on('trace', (e) => {
      const a = A(e.attempt);
      switch (e.kind) {
        case 'attempt.start':
          if (e.attempt !== 1) soft(this.write({ k: 'attempt', a, t: T() }));
          return;
        case 'ready':
          if (e.index !== undefined)
            flags.set(`${e.attempt}:${e.index}`, {
              safe: e.safe === true,
              needsApproval: e.needsApproval === true,
            });
          return;
        case 'approved':
        case 'denied':
          if (e.index !== undefined)
            soft(this.write({ k: 'approval', a, i: e.index, t: T(), granted: e.kind === 'approved' }));
          return;
        case 'stream.end':
          flushText(a);
          soft(this.write({ k: 'end', a, t: T() }));
          return;
        case 'aborted':
          soft(this.write({ k: 'aborted', a, t: T() }));
          return;
        case 'discarded':
          if (e.index === undefined) {
            text = thinking = '';
            signature = undefined;
            soft(this.write({ k: 'discarded', a, t: T() }));
          }
          return;
        default:
          return;
      }
    });
    controller.events.on('call.released', (c) => {
      const a = A(c.attempt);
      flushText(a);
      const f = flags.get(`${c.attempt}:${c.index}`);
      soft(
        this.write({
          k: 'released',
          a,
          i: c.index,
          t: T(),
          id: c.id ?? '',
          name: c.name ?? '',
          input: c.input ?? {},
          safe: f?.safe ?? false,
          ...(f?.needsApproval ? { needsApproval: true } : {}),
        }),
      );
    });
    controller.events.on('call.suppressed', (s) => {
      if (s.reason === 'invalid') soft(this.write({ k: 'invalid', a: A(s.attempt), i: s.index, t: T() }));
    });
    controller.events.on('tool.result', (c) => {
      if (!c.result) return;
      const a = A(c.attempt);
      const how = this.resumed.get(`${a}:${c.index}`);
      // A safe call's result need not survive a power loss (the call would simply run again).
      const safe = flags.get(`${c.attempt}:${c.index}`)?.safe === true;
      soft(
        this.write(
          {
            k: 'result',
            a,
            i: c.index,
            t: T(),
            ok: c.result.ok,
            content: c.result.content,
            ...(c.result.synthetic ? { synthetic: c.result.synthetic } : {}),
            ...(how ? { resumed: how } : {}),
            ...(c.reused ? { reused: true } : {}),
          },
          !safe,
        ),
      );
    });
    controller.events.on('turn.done', (s) => {
      const a = A(s.attempts);
      flushText(a);
      const first = s.history[0];
      const callIds = first && first.role === 'assistant' ? first.calls.map((c) => c.id) : [];
      soft(this.write({ k: 'committed', a, t: T(), outcome: s.outcome, callIds }));
    });

    controller.setRunHook(
      async (call: RunToolInput, signal: AbortSignal, run: RunToolFn): Promise<CallResult> => {
        const a = A(call.attempt);
        let rerun: 'safe' | 'idempotent' | 'reconciled' | undefined;
        if (this.beforeRun) {
          const d = await this.beforeRun(call, a);
          if (!d.run) {
            this.markResumed(a, call.index, d.resumed);
            return d.result;
          }
          rerun = d.rerun;
          this.markResumed(a, call.index, d.rerun === 'reconciled' ? 'reconciled' : 'rerun');
        }
        // Discarded while the decision was pending (a resumed attempt that had been discarded):
        // never started, so no `started` record; the call has left `running`, this result is dropped.
        if (signal.aborted) return { ok: false, content: 'Not run: the call was discarded before it started.', synthetic: 'interrupted' };
        const safe = flags.get(`${call.attempt}:${call.index}`)?.safe === true;
        const p = this.write({
          k: 'started',
          a,
          i: call.index,
          t: T(),
          ...(rerun ? { rerun } : {}),
          ...(safe ? { safe } : {}),
        });
        if (!safe) {
          try {
            await p;
          } catch {
            // Not run. This result never reaches a committed history: flush() rejects, and
            // resume runs the call (it has no `started` record) exactly once.
            return {
              ok: false,
              content: `Tool ${call.name} was not run: the turn journal could not record its start (${this.failed?.code ?? 'io'}).`,
            };
          }
        } else soft(p);
        return run(call, signal);
      },
    );
  }
}

/** A new journal for a turn (the header is written at once). A turn that already has records is an error. */
export async function createTurnJournal(
  store: JournalStore,
  turn: string,
  header: TurnJournalHeader = {},
  opts: Pick<TurnJournalOptions, 'journalKey' | 'retryMs'> = {},
): Promise<TurnJournal> {
  checkTurnId(turn);
  const existing = await store.read(turn);
  if (existing.records.length > 0)
    throw new JournalError(
      `turn ${turn} already has a journal (${existing.records.length} records): resume it instead`,
      'bad_turn',
    );
  const j = new TurnJournal(store, turn, opts);
  await j.write({ k: 'turn', v: JOURNAL_VERSION, turn, t: 0, ...header });
  return j;
}
