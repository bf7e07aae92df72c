/**
 * `durableTurn()`: one sluice turn inside the current DBOS workflow (docs/durability.md "Inside
 * DBOS").
 *
 *   const agent = DBOS.registerWorkflow(async (task: string) => {
 *     const turn = await durableTurn({ format: 'anthropic', stream: (attempt) => model(task, attempt), tools });
 *     return turn.messages;
 *   }, { name: 'agent' });
 *
 * Design (the "journal keyed by the workflow id" milestone): the turn is ONE DBOS step,
 * `sluice.turn[.<turnKey>]`. Its body runs the turn with sluice's own write-ahead journal in a
 * PostgreSQL store (by default the DBOS system database, tables `sluice_journal` / `sluice_lease`),
 * under the turn id `<workflow id>.<turnKey>` (turnKey default: `s<step id>`, which DBOS numbers
 * deterministically). So:
 * - early dispatch is kept: safe tools start while the model streams (nothing waits for a DBOS
 *   checkpoint inside the turn);
 * - a crash inside the step makes DBOS run the body again on recovery; the body then finds the
 *   journal and RESUMES it (`resumeTurn`): recorded results kept, an unsafe call that started
 *   without a result is not run again (unless idempotent / reconciled), a finished model stream is
 *   replayed from the journal, an unfinished one is a new attempt (`onInterruptedStream: 'retry'`);
 * - once the step is recorded, a replay returns its recorded output: nothing runs, no model request;
 * - the body holds the store's lease on the turn for its whole run, so two processes executing the
 *   same workflow never both run the turn's tools: the second waits for the lease and then reads
 *   the committed turn back.
 *
 * This module imports `@dbos-inc/dbos-sdk` (an optional peer dependency). Only the `sluice/dbos`
 * entry reaches it; the core `sluice` entry never loads it.
 */
import * as crypto from 'node:crypto';
import * as os from 'node:os';
import { DBOS } from '@dbos-inc/dbos-sdk';
import { type AnyTool, createToolRegistry, type ToolRegistry } from '../execute/tools';
import { type DurabilityHints, resumeTurn, type ResumedCall } from '../engine/resume';
import { checkRunTurnOptions, runTurn, type RunTurnOptions, type RunTurnResult, type StreamSource } from '../engine/runTurn';
import { createTurnJournal } from '../journal/journal';
import { leaseTtlMs } from '../journal/lease';
import { openStore } from '../journal/open';
import { JournalError, type JournalRecord, type ResumedHow } from '../journal/records';
import type { JournalLease, JournalStore } from '../journal/store';
import type { InvariantViolation } from '../history/types';
import type { CallTiming } from '../engine/controller';

/** How a call got its result in this execution: 'fresh' (run by an uncrashed turn) or a resume's answer. */
export type DurableResumedHow = 'fresh' | ResumedHow;

export interface DurableCall {
  /** The journal's attempt number of the call's attempt. */
  attempt: number;
  index: number;
  id: string;
  name: string;
  resumed: DurableResumedHow;
}

export interface DurableTurnOptions extends Omit<RunTurnOptions, 'journal'> {
  /**
   * Names the turn within its workflow: letters, digits, `_`, `-` (≤ 40). Default `s<n>`, the
   * DBOS step number of the turn's step (deterministic in a workflow). Give one when the workflow
   * may change between a crash and its recovery: it is part of the step name, so a turn that
   * moved is DBOS's unexpected-step error instead of another turn's journal.
   */
  turnKey?: string;
  /**
   * Where the journal lives: a `JournalStore`, or an `openStore` spec. Default: `SLUICE_DBOS_JOURNAL_URL`,
   * else `DBOS_SYSTEM_DATABASE_URL` (the journal's tables beside DBOS's own). The store must be
   * shared by every process that may run the workflow (PostgreSQL): the lease lives there.
   */
  store?: JournalStore | string;
  /** Durability hints by tool name (besides `withDurability` on the tools). */
  hints?: Record<string, DurabilityHints>;
  /** Lease time to live (default `SLUICE_LEASE_TTL_MS` or 60 s). */
  leaseMs?: number;
  /** How long to wait for another executor that holds the turn's lease (default two TTLs). */
  leaseWaitMs?: number;
  /** MAC key for the journal (default `SLUICE_JOURNAL_KEY`). */
  journalKey?: string | Buffer;
}

export interface DurableTurnResult extends RunTurnResult {
  /** The journal's turn id (`<workflow id>.<turnKey>`, or a hash of a workflow id that is not a valid turn id). */
  turn: string;
  /** One per call of the result, in index order: how it got its result. */
  resumed: DurableCall[];
  /** Model requests THIS execution made (0 when the turn was replayed from DBOS or the journal). */
  modelRequests: number;
  /** The turn's step had been recorded by DBOS: its output was returned, nothing ran. */
  replayed: boolean;
  /** I1–I6 violations a resume found (empty for a fresh turn: runTurn checks its own). */
  violations: InvariantViolation[];
}

export type DurableTurnErrorCode = 'context' | 'config' | 'changed' | 'lease';

/** Misuse, a turn recorded by different code, or a lease held too long by another executor. */
export class DurableTurnError extends Error {
  constructor(
    message: string,
    readonly code: DurableTurnErrorCode,
  ) {
    super(message);
    this.name = 'DurableTurnError';
  }
}

/** The DBOS step name of a turn. */
export function turnStepName(turnKey?: string): string {
  return turnKey === undefined ? 'sluice.turn' : `sluice.turn.${turnKey}`;
}

const TURN_ID = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;
const TURN_KEY = /^[A-Za-z0-9_-]{1,40}$/;

/** The journal turn id of a workflow's turn. */
export function durableTurnId(workflowID: string, turnKey: string): string {
  const direct = `${workflowID}.${turnKey}`;
  if (TURN_ID.test(direct)) return direct;
  return `wf_${crypto.createHash('sha256').update(workflowID).digest('hex').slice(0, 40)}.${turnKey}`;
}

/** Refuse to run anywhere but directly in a workflow function (one line each). */
export function assertWorkflowContext(): string {
  if (!DBOS.isWithinWorkflow())
    throw new DurableTurnError(
      'sluice/dbos: durableTurn() must be called from a DBOS workflow function (DBOS.registerWorkflow or @DBOS.workflow()); it was called outside any workflow',
      'context',
    );
  if (DBOS.isInStep() || DBOS.isInTransaction())
    throw new DurableTurnError(
      'sluice/dbos: durableTurn() was called inside a DBOS step or transaction, where DBOS records nothing of what it does; call it from the workflow function itself',
      'context',
    );
  const id = DBOS.workflowID;
  if (!id) throw new DurableTurnError('sluice/dbos: durableTurn() found no workflow id in the DBOS context', 'context');
  return id;
}

const stores = new Map<string, Promise<JournalStore>>();

/** A store opened from a spec is kept for the process (one pool per spec); `closeDurableTurnStores()` ends them. */
function storeFor(given: JournalStore | string | undefined): Promise<JournalStore> {
  if (given !== undefined && typeof given !== 'string') return Promise.resolve(given);
  const spec = given ?? process.env.SLUICE_DBOS_JOURNAL_URL ?? process.env.DBOS_SYSTEM_DATABASE_URL;
  if (!spec)
    throw new DurableTurnError(
      'sluice/dbos: durableTurn() needs a journal store: pass `store`, or set SLUICE_DBOS_JOURNAL_URL or DBOS_SYSTEM_DATABASE_URL to a postgres:// URL',
      'config',
    );
  let p = stores.get(spec);
  if (!p) {
    p = openStore(spec);
    p.catch(() => stores.delete(spec));
    stores.set(spec, p);
  }
  return p;
}

/** Close the stores `durableTurn` opened from specs (before `DBOS.shutdown()`, so the process can exit). */
export async function closeDurableTurnStores(): Promise<void> {
  const all = [...stores.values()];
  stores.clear();
  await Promise.all(all.map((p) => p.then((s) => s.close()).catch(() => undefined)));
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Take the turn's lease, waiting (polling) while another live executor holds it. */
async function acquireLease(store: JournalStore, turn: string, owner: string, ttl: number, waitMs: number): Promise<JournalLease> {
  const until = Date.now() + waitMs;
  for (let delay = 25; ; delay = Math.min(500, delay * 2)) {
    const lease = await store.lease(turn, owner, ttl);
    if (lease) return lease;
    if (Date.now() >= until)
      throw new DurableTurnError(`sluice/dbos: turn ${turn} is held by another executor (lease held for over ${waitMs} ms)`, 'lease');
    await sleep(delay);
  }
}

/** What the journal header says about the code that wrote the turn. */
interface Fingerprint {
  format: string;
  tools: string[];
}

function fingerprintOf(format: string, registry: ToolRegistry): Fingerprint {
  return { format, tools: registry.list().map((t) => t.name).sort() };
}

function checkFingerprint(turn: string, header: JournalRecord | undefined, now: Fingerprint): void {
  const meta = header && header.k === 'turn' ? (header.meta?.dbos as Partial<Fingerprint> | undefined) : undefined;
  if (!meta) return; // not written by durableTurn: nothing to compare
  const was = JSON.stringify({ format: meta.format, tools: meta.tools });
  if (was !== JSON.stringify(now))
    throw new DurableTurnError(
      `sluice/dbos: turn ${turn} was recorded by different code (format and tools ${was}, now ${JSON.stringify(now)}); recover it with the code that started it (pin DBOS applicationVersion)`,
      'changed',
    );
}

/** What the turn's DBOS step records (plain JSON). */
interface StepOutput extends RunTurnResult {
  turn: string;
  resumed: DurableCall[];
  violations: InvariantViolation[];
}

/** The calls of the turn's result (its assistant message), in index order; a discarded attempt's are not. */
function finalCalls(res: RunTurnResult): CallTiming[] {
  const first = res.messages[0];
  const ids = new Set(first && first.role === 'assistant' ? first.calls.map((c) => c.id) : []);
  return res.calls.filter((c) => c.id !== undefined && ids.has(c.id)).sort((a, b) => a.index - b.index);
}

/** Journal errors worth another try of the step body (a resume: nothing runs twice). */
function retryable(err: unknown): boolean {
  if (err instanceof JournalError) return err.code === 'unavailable' || err.code === 'no_space' || err.code === 'lease_lost';
  return err instanceof DurableTurnError && err.code === 'lease';
}

/**
 * Run one turn inside the current DBOS workflow. Same options as `runTurn` minus `journal`, plus
 * the store and lease options above. Throws `DurableTurnError('context')` outside a workflow or
 * inside a step.
 */
export async function durableTurn(opts: DurableTurnOptions): Promise<DurableTurnResult> {
  const workflowID = assertWorkflowContext();
  if (opts.turnKey !== undefined && !TURN_KEY.test(opts.turnKey))
    throw new DurableTurnError(`sluice/dbos: turnKey must be 1–40 letters, digits, _ or - (got ${JSON.stringify(opts.turnKey).slice(0, 60)})`, 'config');
  const { turnKey, store: storeOpt, hints, leaseMs, leaseWaitMs, journalKey, ...runOpts } = opts;
  const ttl = leaseTtlMs(leaseMs);
  // Misuse fails here, before DBOS records anything (inside the step it would be the step's recorded error).
  checkRunTurnOptions(runOpts);
  const registry: ToolRegistry = Array.isArray(runOpts.tools) ? createToolRegistry(runOpts.tools as AnyTool[]) : (runOpts.tools as ToolRegistry);
  const streamOpt = runOpts.stream;
  let modelRequests = 0;
  const stream = (attempt: number): StreamSource | Promise<StreamSource> => {
    modelRequests++;
    return typeof streamOpt === 'function' ? streamOpt(attempt) : streamOpt;
  };
  let ran = false;

  const body = async (): Promise<StepOutput> => {
    ran = true;
    const key = turnKey ?? `s${DBOS.stepID ?? 0}`;
    const turn = durableTurnId(workflowID, key);
    const store = await storeFor(storeOpt);
    const owner = `${os.hostname()}:${process.pid}:${crypto.randomBytes(4).toString('hex')}`;
    const lease = await acquireLease(store, turn, owner, ttl, leaseWaitMs ?? 2 * ttl);
    const print = fingerprintOf(String(runOpts.format), registry);
    let handedOver = false;
    try {
      const existing = await store.read(turn);
      if (existing.records.length > 0) {
        checkFingerprint(turn, existing.records[0], print);
        // Keep the lease: resumeTurn takes it again under the same owner and releases it.
        handedOver = true;
        const res = await resumeTurn({
          store,
          turn,
          tools: registry,
          hints,
          onInterruptedStream: 'retry',
          stream,
          policy: runOpts.policy,
          approve: runOpts.approve,
          on: runOpts.on,
          inspect: runOpts.inspect,
          clock: runOpts.clock,
          signal: runOpts.signal,
          owner,
          leaseMs: ttl,
          journalKey,
        });
        const how = new Map(res.resumed.map((r) => [r.index, r] as const));
        const resumed = finalCalls(res).map((c): DurableCall => {
          const r: ResumedCall | undefined = res.retried ? undefined : how.get(c.index);
          return { attempt: c.attempt + res.attemptBase - 1, index: c.index, id: c.id ?? '', name: c.name ?? '', resumed: r?.resumed ?? 'fresh' };
        });
        return { messages: res.messages, calls: res.calls, summary: res.summary, turn, resumed, violations: res.violations };
      }
      const journal = await createTurnJournal(
        store,
        turn,
        {
          format: runOpts.format,
          ...(runOpts.policy?.earlyStart && runOpts.policy.earlyStart !== 'shadow' ? { earlyStart: runOpts.policy.earlyStart } : {}),
          ...(runOpts.policy?.maxAttempts ? { maxAttempts: runOpts.policy.maxAttempts } : {}),
          meta: { dbos: { workflow: workflowID, turnKey: key, format: print.format, tools: print.tools } },
        },
        { journalKey },
      );
      const renew = setInterval(() => {
        lease.renew(ttl).then(
          (ok) => (ok ? undefined : journal.halt(new JournalError(`${turn}: the lease was taken over mid-turn; the journal stopped writing`, 'lease_lost'))),
          () => undefined,
        );
      }, Math.max(50, Math.floor(ttl / 3)));
      renew.unref();
      try {
        const res = await runTurn({ ...runOpts, tools: registry, stream, journal });
        const resumed = finalCalls(res).map((c): DurableCall => ({ attempt: c.attempt, index: c.index, id: c.id ?? '', name: c.name ?? '', resumed: 'fresh' }));
        return { ...res, turn, resumed, violations: [] };
      } finally {
        clearInterval(renew);
      }
    } finally {
      if (!handedOver) await lease.release().catch(() => undefined);
    }
  };

  const out = await DBOS.runStep(body, {
    name: turnStepName(turnKey),
    retriesAllowed: true,
    maxAttempts: 3,
    intervalSeconds: 1,
    shouldRetry: retryable,
  });
  return { ...out, modelRequests, replayed: !ran };
}
