/**
 * `resumeTurn()`: finish a journaled turn in a new process after a crash (docs/durability.md).
 *
 *   const { messages, resumed } = await resumeTurn({ store, turn: 'turn-42', tools });
 *
 * The turn is rebuilt event-sourced: a fresh TurnController (its turn and call actors, visible in
 * the inspector like any turn) is fed the canonical events the journal recorded for the
 * interrupted attempt — its text, and for each released call its identity, input and completion —
 * so the actors reach the recorded states; then the stream ends (or, by policy, a new attempt
 * streams). As the machine starts calls, each one is decided from the journal:
 * - a recorded result is returned as is, never re-run ('kept');
 * - a call that never started runs now, with the usual write-ahead ('rerun');
 * - a call that started without a recorded result: a safe call, or a tool that declares itself
 *   idempotent, runs again ('rerun'); a tool with a `reconcile` hook is asked whether its effect
 *   happened ('reconciled', or 'rerun' when it did not); any other call gets a synthetic
 *   "outcome unknown" result the model can act on ('unknown-outcome') and is NOT run.
 * New facts go to the same journal; facts it already has are not written twice. A lease makes
 * sure two workers never resume one turn; it is renewed every TTL/3 while the resume works, and
 * when it is lost (taken over, or unrenewable past its expiry) the journal stops writing and the
 * resume rejects with `JournalError('lease_lost')`.
 *
 * Before anything runs the journal is checked (src/journal/check.ts): header turn id, every
 * record against the turn's lifecycle, and the MAC chain when a key is set. A journal that fails
 * is refused (`JournalRefusedError`, with the results recorded before the bad record).
 */
import * as os from 'node:os';
import type { InspectionEvent, Observer } from 'xstate';
import type { CallResult, Classification, RunToolFn, RunToolInput } from '../calls';
import { type AnyTool, createToolRegistry, runTool, type ToolRegistry } from '../execute/tools';
import { prepareSafety } from '../execute/safety';
import { checkHistory, checkTrace } from '../history/check';
import type { TurnTraceEntry } from '../history/trace';
import type { InvariantViolation } from '../history/types';
import { checkJournal } from '../journal/check';
import { type BeforeRun, recordKey, TurnJournal } from '../journal/journal';
import { leaseTtlMs } from '../journal/lease';
import { journalKey, type MacVerify, requireKeyForSigned } from '../journal/mac';
import { JournalError } from '../journal/records';
import type { JournalRecord, ResumedHow } from '../journal/records';
import { foldJournal, type JournalAttempt, journalTrace } from '../journal/state';
import type { JournalLease, JournalStore } from '../journal/store';
import type { StreamEvent } from '../wire/events';
import { type Clock, realClock } from './clock';
import { type ControllerEvents, TurnController } from './controller';
import { checkSharedTurnOptions } from './options';
import { type ApprovalRequest, classifierFor, runTurn, type RunTurnResult, type StreamSource, type TurnPolicy } from './runTurn';

/** What a tool may say about itself for resumes. */
export interface DurabilityHints {
  /** Running it twice has the effect of running it once: re-run it after a crash. */
  idempotent?: boolean;
  /** After a crash between its start and its recorded result: did the effect happen? */
  reconcile?: (call: ReconcileCall) => ReconcileOutcome | Promise<ReconcileOutcome>;
}

export interface ReconcileCall {
  id: string;
  name: string;
  input: Record<string, unknown>;
}

/** 'done': the effect is there (its result text); 'not-done': run it now; 'unknown': outcome-unknown result. */
export type ReconcileOutcome = { status: 'done'; content: string; ok?: boolean } | { status: 'not-done' } | { status: 'unknown' };

/** A tool with durability hints (read by `resumeTurn`). */
export function withDurability<T extends AnyTool>(tool: T, hints: DurabilityHints): T & { durability: DurabilityHints } {
  return { ...tool, durability: hints };
}

function hintsOf(tool: AnyTool | undefined): DurabilityHints {
  const h = (tool as { durability?: DurabilityHints } | undefined)?.durability;
  return h && typeof h === 'object' ? h : {};
}

/** The result of an unsafe call whose outcome the crash hid. */
export function unknownOutcomeResult(name: string): CallResult {
  return {
    ok: false,
    content: `The process running ${name} stopped before its result was recorded, so whether it took effect is unknown. It was not run again: check the current state before repeating it.`,
    synthetic: 'interrupted',
  };
}

export interface ResumeTurnOptions {
  store: JournalStore;
  turn: string;
  /** The tools (real runs). Or give `classify` + `runTool` (e.g. the CLI's simulated tools). */
  tools?: AnyTool[] | ToolRegistry;
  classify?: (name: string, input: Record<string, unknown>) => Classification;
  runTool?: RunToolFn;
  /** Durability hints by tool name (in addition to `withDurability` on the tools). */
  hints?: Record<string, DurabilityHints>;
  /**
   * The interrupted attempt's stream had not finished (SPEC §12: a stream that did not finish is
   * not a finished turn): 'retry' (the default when `stream` is given) discards the attempt and
   * streams a new one through `stream` when no unsafe call of it had started; 'end' (the default
   * without `stream`), or an unsafe call that had started, ends the turn there with what was
   * released (a side effect may have happened and the model must see it).
   */
  onInterruptedStream?: 'end' | 'retry';
  /** For 'retry': the model stream of a (journal-numbered) attempt. */
  stream?: (attempt: number) => StreamSource | Promise<StreamSource>;
  policy?: TurnPolicy;
  approve?: (call: ApprovalRequest) => boolean | Promise<boolean>;
  on?: Partial<{ [K in keyof ControllerEvents]: (e: ControllerEvents[K]) => void }>;
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
  clock?: Clock;
  signal?: AbortSignal;
  /** Called with the rebuilt controller before anything is fed (drive a virtual clock, attach UIs). */
  onController?: (c: TurnController) => void;
  /** Lease owner id (default host:pid:random) and time to live (default `SLUICE_LEASE_TTL_MS` or 60 s). */
  owner?: string;
  leaseMs?: number;
  /** MAC key (default `SLUICE_JOURNAL_KEY`): the journal must carry a valid MAC chain under it; new records get one. */
  journalKey?: string | Buffer;
  /**
   * A signed journal (one that carries a MAC chain) with no key to check it is refused
   * (`JournalError('refused')` naming SLUICE_JOURNAL_KEY) unless this is `'skip'`: read it
   * unchecked, on purpose (records this resume writes then carry no MAC). Default `'check'`.
   */
  verify?: MacVerify;
  /** Retry window for store failures while resuming (default 10 s, `SLUICE_JOURNAL_RETRY_MS`). */
  retryMs?: number;
}

export interface ResumedCall {
  /** Journal attempt and index. */
  attempt: number;
  index: number;
  id: string;
  name: string;
  resumed: ResumedHow;
}

export interface ResumeTurnResult extends RunTurnResult {
  /** How each call of the resumed attempt got its result. */
  resumed: ResumedCall[];
  /** The turn's trace from its journal, crash and resume included (src/journal/state.ts). */
  trace: TurnTraceEntry[];
  /** I1–I3 on the messages and I4–I6 on the journal's trace. */
  violations: InvariantViolation[];
  /** The journal already had a commit: nothing was run or written. */
  alreadyCommitted: boolean;
  /** The stream of the interrupted attempt continued as a new attempt. */
  retried: boolean;
  /** The journal's attempt number of the controller's attempt 1 (calls[].attempt is the controller's). */
  attemptBase: number;
  /** The journal's time when the resume began (the resumed controller's clock starts at 0 there). */
  resumedAtMs: number;
}

export class ResumeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ResumeError';
  }
}

export async function resumeTurn(opts: ResumeTurnOptions): Promise<ResumeTurnResult> {
  checkSharedTurnOptions(opts); // misuse fails before the journal is touched, as in runTurn
  const { store, turn } = opts;
  const ttl = leaseTtlMs(opts.leaseMs);
  const key = journalKey(opts.journalKey);
  const owner = opts.owner ?? `${os.hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
  const lease = await store.lease(turn, owner, ttl);
  if (!lease) throw new ResumeError(`turn ${turn} is being resumed by another worker (lease held)`);
  const keeper = keepLease(lease, ttl);
  try {
    return await resumeLeased(opts, owner, key, keeper);
  } finally {
    keeper.stop();
    // A store that is down cannot release: the lease then expires by itself.
    await lease.release().catch(() => undefined);
  }
}

interface LeaseKeeper {
  /** Called once if the lease is lost. */
  onLost(fn: (err: JournalError) => void): void;
  stop(): void;
}

/** Renew the lease every TTL/3; lost when a renewal is refused, or none succeeded for a whole TTL. */
function keepLease(lease: JournalLease, ttl: number): LeaseKeeper {
  let lost: JournalError | undefined;
  const listeners: Array<(err: JournalError) => void> = [];
  let lastOk = Date.now();
  const lose = (why: string): void => {
    if (lost) return;
    lost = new JournalError(`${lease.turn}: the lease was lost mid-turn (${why}); the journal stopped writing`, 'lease_lost');
    clearInterval(timer);
    for (const fn of listeners.splice(0)) fn(lost);
  };
  const timer = setInterval(() => {
    lease.renew(ttl).then(
      (ok) => (ok ? (lastOk = Date.now()) : lose('another worker holds it now')),
      () => {
        if (Date.now() - lastOk >= ttl) lose('it could not be renewed before it expired');
      },
    );
  }, Math.max(50, Math.floor(ttl / 3)));
  timer.unref();
  return {
    onLost: (fn) => (lost ? fn(lost) : listeners.push(fn)),
    stop: () => clearInterval(timer),
  };
}

async function resumeLeased(opts: ResumeTurnOptions, owner: string, key: Buffer | undefined, keeper: LeaseKeeper): Promise<ResumeTurnResult> {
  const { store, turn } = opts;
  const read = await store.read(turn);
  const records = read.records;
  requireKeyForSigned(records, key, opts.verify ?? 'check', `turn ${turn}`);
  checkJournal(records, { turn, key });
  const st = foldJournal(records);
  if (!st.header) throw new ResumeError(records.length === 0 ? `turn ${turn}: no journal` : `turn ${turn}: the journal has no header record`);
  const registry = opts.tools ? (Array.isArray(opts.tools) ? createToolRegistry(opts.tools) : (opts.tools as ToolRegistry)) : undefined;
  if (registry) await prepareSafety(registry); // the shell parser, when an execute tool needs it
  const classify = opts.classify ?? (registry ? classifierFor(registry, opts.policy?.structuredOutputTool) : undefined);
  const run: RunToolFn | undefined =
    opts.runTool ?? (registry ? (call, signal) => runTool(registry.get(call.name), call.input, { signal, callId: call.callId, name: call.name }) : undefined);
  if (!classify || !run) throw new ResumeError('resumeTurn needs `tools` (or `classify` and `runTool`)');
  const hints = (name: string): DurabilityHints => ({ ...hintsOf(registry?.get(name)), ...(opts.hints?.[name] ?? {}) });

  const committed = st.committed !== undefined;
  const A = Math.max(1, st.last);
  const att = st.attempts.get(A);
  const unsafeStarted = att ? [...att.calls.values()].some((c) => c.starts > 0 && c.released?.safe !== true) : false;
  const retry =
    !committed &&
    (opts.onInterruptedStream ?? 'retry') === 'retry' &&
    opts.stream !== undefined &&
    registry !== undefined && // a new attempt runs through runTurn, which needs the tools
    (!att || att.discarded || (!att.ended && !unsafeStarted));
  const skip = new Set(records.map((r) => recordKey(r)).filter((k): k is string => k !== undefined));
  const common = { nextSeq: records.length, tBase: st.lastT, readOnly: committed, skip, journalKey: key, prevMac: records.at(-1)?.m, retryMs: opts.retryMs };
  /** The journal of this resume: its first record says a new process took over. */
  const open = async (o: { attemptBase: number; textKnown?: Set<number> }): Promise<TurnJournal> => {
    const j = new TurnJournal(store, turn, { ...common, ...o });
    keeper.onLost((err) => j.halt(err));
    if (!committed) await j.write({ k: 'resume', t: st.lastT, owner, count: st.resumes + 1 });
    return j;
  };

  if (retry) {
    const base = att ? A + 1 : A;
    const journal = await open({ attemptBase: base });
    if (att && !att.discarded) await journal.write({ k: 'discarded', a: A, t: st.lastT });
    const maxAttempts = Math.max(1, (opts.policy?.maxAttempts ?? st.header.maxAttempts ?? 3) - base + 1);
    const stream = opts.stream!;
    const res = await runTurn({
      format: st.header.format ?? 'anthropic',
      stream: (a) => stream(a + base - 1),
      tools: registry ?? [],
      policy: { ...opts.policy, maxAttempts, earlyStart: st.header.earlyStart ?? opts.policy?.earlyStart },
      approve: opts.approve,
      on: opts.on,
      inspect: opts.inspect,
      clock: opts.clock,
      signal: opts.signal,
      journal,
    });
    return finish(store, turn, res, [], { alreadyCommitted: false, retried: true, attemptBase: base, resumedAtMs: st.lastT });
  }

  // Rebuild the interrupted attempt from its records.
  const journal = await open({ attemptBase: A, textKnown: new Set([A]) });
  const controller = new TurnController({
    mode: 'execute',
    clock: opts.clock ?? realClock(),
    inspect: opts.inspect,
    maxAttempts: 1,
    // 'shadow' runs like 'none' (runTurn's shadow mode only adds figures to the summary).
    earlyStart: st.header.earlyStart ?? (opts.policy?.earlyStart === 'shadow' ? 'none' : opts.policy?.earlyStart) ?? 'safe',
    maxConcurrent: opts.policy?.maxConcurrent ?? 10,
    onAbort: 'commit',
    classify,
    runTool: run,
    // A result the attempt reused (issue 20) is given again the same way: at the call's release.
    reuse: [...(att?.calls.values() ?? [])].flatMap((c) =>
      c.result?.reused && c.released ? [{ name: c.released.name, input: c.released.input, result: { ok: c.result.ok, content: c.result.content } }] : [],
    ),
  });
  const resumed = new Map<number, ResumedCall>();
  journal.beforeRun = (call) => decide(call, att, hints, resumed, committed);
  journal.attach(controller);
  for (const [name, fn] of Object.entries(opts.on ?? {})) controller.events.on(name as keyof ControllerEvents, fn as (e: unknown) => void);
  controller.events.on('approval.request', (req) => {
    const c = att?.calls.get(req.index);
    const recorded = c?.approval ?? (c && (c.starts > 0 || c.result) ? true : undefined);
    if (recorded === true) queueMicrotask(() => controller.approve(req.index));
    else if (recorded === false) queueMicrotask(() => controller.deny(req.index));
    else if (!opts.approve) queueMicrotask(() => controller.deny(req.index, `Tool ${req.name} needs approval and no approver is configured.`));
    else
      Promise.resolve()
        .then(() => opts.approve!({ index: req.index, id: req.id, name: req.name, input: req.input }))
        .then(
          (ok) => (ok ? controller.approve(req.index) : controller.deny(req.index)),
          () => controller.deny(req.index, `The approval check for ${req.name} failed, so the call was not run.`),
        );
  });
  const onAbort = () => controller.abort('commit');
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  opts.onController?.(controller);
  try {
    for (const e of replayEvents(records, A)) controller.feed(e);
    if (att?.discarded) controller.feed({ type: 'stream.error', error: { type: 'resumed_discarded', message: 'the interrupted attempt had been discarded' }, retryable: false });
    else if (att?.aborted) controller.abort('commit');
    else {
      // The replayed stream ends here: the recorded one finished (`end`), or policy 'end' ends the
      // turn with what was released. Either way it is a finished stream for the rebuilt controller,
      // which would otherwise take a stream.end without a finish for a cut one (SPEC §12).
      controller.feed({ type: 'finish', reason: att && att.calls.size > 0 ? 'tool_calls' : 'stop' });
      controller.feed({ type: 'stream.end' });
    }
    const summary = await controller.done;
    await journal.flush();
    // Calls settled without a run (denied, invalid) keep their recorded result too.
    for (const c of att?.calls.values() ?? []) {
      if (c.result && !resumed.has(c.index))
        resumed.set(c.index, { attempt: A, index: c.index, id: c.released?.id ?? '', name: c.released?.name ?? '', resumed: 'kept' });
    }
    const res: RunTurnResult = { messages: summary.history, calls: summary.calls, summary };
    return finish(store, turn, res, [...resumed.values()].sort((x, y) => x.index - y.index), { alreadyCommitted: committed, retried: false, attemptBase: A, resumedAtMs: st.lastT });
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
  }
}

/** The canonical events that bring a fresh controller to the recorded state of attempt `a`. */
export function replayEvents(records: readonly JournalRecord[], a: number): StreamEvent[] {
  const out: StreamEvent[] = [];
  for (const r of records) {
    if (!('a' in r) || r.a !== a) continue;
    if (r.k === 'text') {
      if (r.thinking) out.push({ type: 'thinking.delta', text: r.thinking });
      if (r.signature !== undefined) out.push({ type: 'thinking.signature', signature: r.signature });
      if (r.text) out.push({ type: 'text.delta', text: r.text });
    } else if (r.k === 'released') {
      out.push({ type: 'call.identity', index: r.i, id: r.id, name: r.name });
      out.push({ type: 'call.fragment', index: r.i, text: JSON.stringify(r.input) });
      out.push({ type: 'call.complete', index: r.i });
    } else if (r.k === 'invalid') {
      // Its arguments were not a JSON object: the rebuilt call is judged invalid at the end again.
      out.push({ type: 'call.fragment', index: r.i, text: 'null' });
      out.push({ type: 'call.complete', index: r.i });
    }
  }
  return out;
}

async function decide(
  call: RunToolInput,
  att: JournalAttempt | undefined,
  hints: (name: string) => DurabilityHints,
  resumed: Map<number, ResumedCall>,
  committed: boolean,
): Promise<BeforeRun> {
  const c = att?.calls.get(call.index);
  const note = (how: ResumedHow): void => {
    resumed.set(call.index, { attempt: att?.attempt ?? 1, index: call.index, id: call.callId, name: call.name, resumed: how });
  };
  if (c?.result) {
    note('kept');
    const r = c.result;
    return { run: false, resumed: 'kept', result: { ok: r.ok, content: r.content, ...(r.synthetic ? { synthetic: r.synthetic as CallResult['synthetic'] } : {}) } };
  }
  if (committed) {
    note('unknown-outcome');
    return { run: false, resumed: 'unknown-outcome', result: unknownOutcomeResult(call.name) };
  }
  if (!c || c.starts === 0) {
    note('rerun');
    return { run: true };
  }
  if (c.released?.safe === true) {
    note('rerun');
    return { run: true, rerun: 'safe' };
  }
  const h = hints(call.name);
  if (h.idempotent) {
    note('rerun');
    return { run: true, rerun: 'idempotent' };
  }
  if (h.reconcile) {
    let out: ReconcileOutcome;
    try {
      out = await h.reconcile({ id: call.callId, name: call.name, input: call.input });
    } catch {
      out = { status: 'unknown' };
    }
    if (out.status === 'done') {
      note('reconciled');
      return { run: false, resumed: 'reconciled', result: { ok: out.ok ?? true, content: out.content } };
    }
    if (out.status === 'not-done') {
      note('reconciled');
      return { run: true, rerun: 'reconciled' };
    }
  }
  note('unknown-outcome');
  return { run: false, resumed: 'unknown-outcome', result: unknownOutcomeResult(call.name) };
}

async function finish(
  store: JournalStore,
  turn: string,
  res: RunTurnResult,
  resumed: ResumedCall[],
  how: Pick<ResumeTurnResult, 'alreadyCommitted' | 'retried' | 'attemptBase' | 'resumedAtMs'>,
): Promise<ResumeTurnResult> {
  const after = await store.read(turn);
  const trace = journalTrace(after.records);
  const violations = [...checkHistory(res.messages).violations, ...checkTrace(trace, { earlyStart: foldJournal(after.records).header?.earlyStart ?? 'safe' }).violations];
  return { ...res, resumed, trace, violations, ...how };
}

