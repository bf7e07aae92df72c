import type { CallResult, RunToolInput } from '../../machines/toolCall.machine';
import type { Classification } from '../../machines/turn.machine';
import { settleMicrotasks, VirtualClock } from '../../src/engine/clock';
import { TurnController, type TurnSummary } from '../../src/engine/controller';
import { resumeTurn } from '../../src/engine/resume';
import { checkHistory, checkTrace } from '../../src/history/check';
import type { HistoryMessage } from '../../src/history/types';
import { TurnJournal } from '../../src/journal/journal';
import { MemoryJournalStore } from '../../src/journal/memoryStore';
import { JOURNAL_VERSION, type JournalRecord } from '../../src/journal/records';
import { foldJournal, journalTrace } from '../../src/journal/state';
import type { AppendOptions } from '../../src/journal/store';
import { historyViolations, traceViolations } from './invariants';
import type { ModelPath } from './paths';
import {
  callCount,
  callPhase,
  crashedFrom,
  describeEvent,
  describeState,
  doneOutcome,
  type Kind,
  type ModelEvent,
  type ModelSnapshot,
  releasedSub,
  streamFinished,
  turnPhase,
} from './turnModel';

/**
 * Replays model paths on the real turn actor: a `TurnController` (real turn machine, real spawned
 * call actors, real scheduling) in execute mode on a virtual clock, with scripted tools whose
 * results are model steps. After every step it compares each call's real state with the model
 * and checks I1–I6.
 *
 * With `{ crash: true }` the turn is journaled (a TurnJournal on an in-memory store) and the model
 * may CRASH and RESUME: CRASH drops the process (its controller and every tool run in flight are
 * never heard from again; while crashed the harness checks the journal against the model — a
 * running call must have its write-ahead `started` record, a released one its `released` record);
 * RESUME is the real `resumeTurn()` on that journal, whose fresh controller is then compared with
 * the model like the first one. At the end, the journal's own trace (crash and resume included)
 * must satisfy I4–I6 too.
 */

const TURN = 'model-turn';

/** The in-memory store, with a synchronous view of every record (the checks run synchronously). */
class RecordingStore extends MemoryJournalStore {
  readonly all: JournalRecord[] = [];
  /** Mutation: records of this kind are silently lost (e.g. a journal without write-ahead). */
  constructor(private readonly lose?: JournalRecord['k']) {
    super();
  }
  override appendSync(turn: string, records: readonly JournalRecord[], opts?: AppendOptions): void {
    const kept = records.filter((r) => r.k !== this.lose).map((r, k) => ({ ...r, n: this.all.length + k }));
    super.appendSync(turn, kept, opts);
    this.all.push(...kept);
  }
}

/** Crash options of a replay; the `mutate…` ones break the system on purpose (mutation tests). */
export interface CrashOptions {
  crash?: boolean;
  /** Mutation: the journal loses its `started` records (no write-ahead). */
  mutateLoseStarts?: boolean;
  /** Mutation: every tool claims to be idempotent (an unsafe run is repeated after a crash). */
  mutateAllIdempotent?: boolean;
}

export const TOOL_NAMES: Record<Kind, string> = { safe: 'read_file', unsafe: 'write_file', ask: 'web_fetch' };

function classify(name: string): Classification {
  switch (name) {
    case 'read_file':
      return { safe: true, needsApproval: false };
    case 'web_fetch':
      return { safe: true, needsApproval: true };
    default:
      return { safe: false, needsApproval: false };
  }
}

interface Run {
  key: string;
  calls: number;
  signal: AbortSignal;
  resolve: (r: CallResult) => void;
  reject: (e: Error) => void;
  settled: boolean;
}

type Expected = 'ok' | 'error' | 'denied' | 'interrupted' | 'invalid';

export class ModelMismatch extends Error {}

/** Counters shared by every replay in a run (for the report). */
export interface ReplayStats {
  paths: number;
  steps: number;
  /** SUT-vs-model comparisons performed. */
  checks: number;
  /** Invariant evaluations: trace entries checked for I4–I6 (each entry once per step) + histories checked for I1–I3. */
  invariantChecks: number;
  /** I1–I6 violations found. */
  violations: number;
  /** SUT-vs-model disagreements found. */
  mismatches: number;
  /** Edge ids of the model graph that a replayed path traversed. */
  coveredEdges: Set<number>;
  /** Known (reported, unfixed) SUT bugs: id → paths on which they showed. Tolerated, not failed. */
  known: Map<string, number>;
}

/** Classifies a violation message as a known, reported SUT bug (returns its id) or not. */
export type KnownBugs = (message: string) => string | undefined;

export function newStats(): ReplayStats {
  return { paths: 0, steps: 0, checks: 0, invariantChecks: 0, violations: 0, mismatches: 0, coveredEdges: new Set(), known: new Map() };
}

const callId = (attempt: number, i: number) => `call_a${attempt}_${i}`;

export class TurnHarness {
  clock = new VirtualClock();
  controller: TurnController;
  /** Process generation: 0 before a crash, 1 after the resume. Tool runs are keyed by it. */
  private gen = 0;
  private readonly store?: RecordingStore;
  private resumed = false;
  private resumeError?: unknown;
  /** Approvals the resumed turn asked for, answered by the model's APPROVE / DENY. */
  private readonly approvals = new Map<number, (ok: boolean) => void>();
  private readonly runs = new Map<string, Run>();
  /** Run keys of tool runs that were in flight when their call was discarded or interrupted. */
  private readonly orphans = new Set<string>();
  /** Per call of the current attempt: the kind it opened with, and its expected result. */
  private kinds: Array<Kind | undefined> = [];
  private expected: Array<Expected | undefined> = [];
  private summary?: TurnSummary;
  private doneCount = 0;

  /** Known bugs seen on this path. */
  readonly knownSeen = new Set<string>();

  constructor(
    private readonly stats: ReplayStats,
    private readonly known: KnownBugs = () => undefined,
    private readonly opts: CrashOptions = {},
  ) {
    this.controller = new TurnController({
      mode: 'execute',
      completion: 'evidence-only',
      clock: this.clock,
      retryBaseMs: 0,
      maxAttempts: 2,
      classify,
      runTool: (call, signal) => this.runTool(call, signal),
    });
    this.controller.events.on('turn.done', (s) => {
      this.summary = s;
      this.doneCount++;
    });
    if (opts.crash) {
      this.store = new RecordingStore(opts.mutateLoseStarts ? 'started' : undefined);
      const journal = new TurnJournal(this.store, TURN);
      void journal.write({ k: 'turn', v: JOURNAL_VERSION, turn: TURN, t: 0 });
      journal.attach(this.controller);
    }
  }

  /** The key of a tool run: process generation, the SUT's attempt, the call index. */
  private runKey(attempt: number, index: number): string {
    return `${this.gen}:${attempt}:${index}`;
  }

  /** The SUT's attempt for the model's: a resumed turn is attempt 1 of its new controller. */
  private sutAttempt(modelAttempt: number): number {
    return this.resumed ? 1 : modelAttempt;
  }

  private runTool(call: RunToolInput, signal: AbortSignal): Promise<CallResult> {
    const key = this.runKey(call.attempt, call.index);
    const prev = this.runs.get(key);
    return new Promise<CallResult>((resolve, reject) => {
      this.runs.set(key, { key, calls: (prev?.calls ?? 0) + 1, signal, resolve, reject, settled: false });
    });
  }

  private get attempt(): number {
    return this.controller.currentAttempt;
  }

  /** Execute one model event on the SUT. */
  async send(e: ModelEvent, before: ModelSnapshot, after: ModelSnapshot): Promise<void> {
    const c = this.controller;
    let settle = false;
    switch (e.type) {
      case 'OPEN': {
        this.kinds[e.i] = e.kind;
        if (!e.late) c.feed({ type: 'call.identity', index: e.i, id: callId(this.attempt, e.i), name: TOOL_NAMES[e.kind] });
        c.feed({ type: 'call.fragment', index: e.i, text: '{"path":"sr' });
        c.feed({ type: 'call.fragment', index: e.i, text: `c/é${e.i}.ts"}` });
        break;
      }
      case 'EVIDENCE':
        c.feed({ type: 'call.complete', index: e.i });
        break;
      case 'IDENTITY':
        c.feed({ type: 'call.identity', index: e.i, id: callId(this.attempt, e.i), name: TOOL_NAMES[this.kinds[e.i]!] });
        break;
      case 'FINISH':
        c.feed({ type: 'finish', reason: 'tool_calls' });
        break;
      case 'END':
        c.feed({ type: 'stream.end' });
        break;
      case 'ERROR':
        c.feed({
          type: 'stream.error',
          error: { type: e.retryable ? 'overloaded_error' : 'invalid_request_error', message: 'model error' },
          retryable: e.retryable,
        });
        break;
      case 'RETRY':
        this.clock.advanceTo(this.clock.nextTimerAt() ?? this.clock.now());
        break;
      case 'ABORT':
        c.abort(e.mode);
        break;
      case 'TOOL_OK':
      case 'TOOL_ERROR': {
        const run = this.runs.get(this.runKey(this.attempt, e.i));
        if (!run) throw new ModelMismatch(`no tool run for call ${e.i} of attempt ${this.attempt}`);
        run.settled = true;
        if (e.type === 'TOOL_OK') run.resolve({ ok: true, content: `ok ${run.key}` });
        else run.reject(new Error(`failed ${run.key}`));
        settle = true;
        break;
      }
      case 'APPROVE':
      case 'DENY': {
        const answer = this.approvals.get(e.i);
        if (answer) {
          this.approvals.delete(e.i);
          answer(e.type === 'APPROVE');
          settle = true;
        } else if (e.type === 'APPROVE') c.approve(e.i);
        else c.deny(e.i);
        break;
      }
      case 'CRASH':
        // kill -9: the controller and its tool runs are gone; only the journal is left.
        this.gen++;
        this.orphans.clear();
        break;
      case 'RESUME':
        await this.resume();
        break;
      case 'STALE':
        for (const key of this.orphans) {
          const run = this.runs.get(key)!;
          run.settled = true;
          run.resolve({ ok: true, content: `stale ${key}` });
        }
        this.orphans.clear();
        settle = true;
        break;
    }
    // A reuse answers a call inside this step: let its journal record land, as a tool result's does.
    if (before.context.reuse.some((r, i) => r && !after.context.reuse[i])) settle = true;
    if (settle) await settleMicrotasks();
    this.track(e, before, after);
  }

  /** A new process: resumeTurn on the journal, with this harness's tools and approvals. */
  private async resume(): Promise<void> {
    this.resumed = true;
    this.clock = new VirtualClock();
    this.summary = undefined;
    this.doneCount = 0;
    resumeTurn({
      store: this.store!,
      turn: TURN,
      classify,
      runTool: (call, signal) => this.runTool(call, signal),
      ...(this.opts.mutateAllIdempotent ? { hints: { [TOOL_NAMES.unsafe]: { idempotent: true } } } : {}),
      clock: this.clock,
      approve: (req) => new Promise<boolean>((resolve) => this.approvals.set(req.index, resolve)),
      onController: (controller) => {
        this.controller = controller;
        controller.events.on('turn.done', (s) => {
          this.summary = s;
          this.doneCount++;
        });
      },
    }).catch((err: unknown) => (this.resumeError = err));
    // The store is in memory and the clock virtual: everything resumeTurn does is microtasks.
    for (let k = 0; k < 3; k++) await settleMicrotasks();
    if (this.resumeError !== undefined) throw new ModelMismatch(`resumeTurn failed: ${String(this.resumeError)}`);
  }

  /** The harness's own bookkeeping: expected results, orphaned runs, the next attempt. */
  private track(e: ModelEvent, before: ModelSnapshot, after: ModelSnapshot): void {
    if (e.type === 'RETRY') {
      this.kinds = [];
      this.expected = [];
      return;
    }
    const attempt = this.sutAttempt(before.context.attempt);
    for (let i = 0; i < callCount(after); i++) {
      const p0 = callPhase(before, i);
      const p1 = callPhase(after, i);
      if (p0 === 'running' && (p1 === 'discarded' || (p1 === 'resulted' && e.type === 'ABORT'))) {
        this.orphans.add(this.runKey(attempt, i));
      }
      if (p1 === 'resulted' && p0 !== 'resulted') {
        // A retry's repeated safe call answered with the discarded attempt's ok result (M14).
        const reused = before.context.reuse[i] === true && after.context.reuse[i] !== true;
        this.expected[i] =
          reused || e.type === 'TOOL_OK'
            ? 'ok'
            : e.type === 'TOOL_ERROR'
              ? 'error'
              : e.type === 'DENY'
                ? 'denied'
                : e.type === 'ABORT' || e.type === 'RESUME' // RESUME: an unsafe run's outcome is unknown
                  ? 'interrupted'
                  : 'invalid';
      }
      if (p1 === 'discarded' || p1 === 'idle') this.expected[i] = undefined;
    }
  }

  private fail(msg: string, invariant = false): never {
    if (invariant) this.stats.violations++;
    else this.stats.mismatches++;
    throw new ModelMismatch(msg);
  }

  private expectEq<T>(what: string, actual: T, expected: T): void {
    this.stats.checks++;
    if (actual !== expected) this.fail(`${what}: SUT ${String(actual)}, model ${String(expected)}`);
  }

  /** Compare the SUT with the model state `s` and check the invariants. */
  check(s: ModelSnapshot): void {
    const turn = turnPhase(s);
    if (turn === 'crashed') {
      this.checkJournal(s);
      return;
    }
    const snap = this.controller.actor.getSnapshot();
    const ctx = snap.context;
    // `streaming` has two states in both: `open`, then `finished` once the stream gave its finish.
    const expected = turn === 'streaming' ? `streaming.${streamFinished(s) ? 'finished' : 'open'}` : turn;
    const actual = typeof snap.value === 'string' ? snap.value : Object.entries(snap.value).map(([k, v]) => `${k}.${String(v)}`).join();
    this.expectEq('turn state', actual, expected);
    this.expectEq('attempt', ctx.attempt, this.sutAttempt(s.context.attempt));
    this.expectEq('controller attempt', this.controller.currentAttempt, this.sutAttempt(s.context.attempt));
    if (turn === 'done') {
      const outcome = { completed: 'done', failed: 'failed', aborted: 'aborted', dropped: 'dropped' }[doneOutcome(s)!];
      this.expectEq('turn outcome', ctx.outcome, outcome);
    }
    this.expectEq('orphaned tool runs', this.orphans.size > 0, s.context.orphans);

    for (let i = 0; i < callCount(s); i++) this.checkCall(s, i);

    // Tool runs: at most one per call per attempt; every orphan's AbortSignal fired.
    for (const run of this.runs.values()) {
      this.expectEq(`tool runs of ${run.key}`, run.calls, 1);
    }
    for (const key of this.orphans) {
      this.expectEq(`AbortSignal of the interrupted/discarded run ${key} aborted`, this.runs.get(key)!.signal.aborted, true);
    }

    // I4–I6 on the trace so far.
    const trace = this.controller.traceLog;
    this.stats.invariantChecks += trace.length;
    // Both checkers: the suite's own (invariants.ts) and the library's run-time checkTrace.
    const mine = traceViolations(trace);
    const lib = checkTrace(trace).violations;
    const knownAt = new Set<number>();
    const tv = mine.filter((v) => {
      const id = this.known(`${v.invariant} ${v.message}`);
      if (id) {
        this.knownSeen.add(id);
        knownAt.add(v.at!);
      }
      return id === undefined;
    });
    // A library violation at an entry where the suite's checker diagnosed a known bug is that bug.
    for (const v of lib) if (v.at === undefined || !knownAt.has(v.at)) tv.push({ ...v, message: `(checkTrace) ${v.message}` });
    if (tv.length > 0) this.fail(`trace invariants: ${tv.map((v) => `${v.invariant} ${v.message}`).join('; ')}`, true);

    // The turn is done exactly when the model says so; then I1–I3 and the exact history.
    this.expectEq('turn.done emitted', this.doneCount, turn === 'done' ? 1 : 0);
    if (turn === 'done') this.checkHistory(s);
    // A resumed turn: the journal's trace (crash and resume included) satisfies I4–I6 as well.
    if (turn === 'done' && this.resumed) {
      const jt = journalTrace(this.store!.all);
      this.stats.invariantChecks += jt.length;
      const jv = checkTrace(jt).violations;
      if (jv.length > 0) this.fail(`journal trace invariants: ${jv.map((v) => `${v.invariant} ${v.message}`).join('; ')}`, true);
    }
  }

  /** While crashed: what the journal holds must be what the model says was reached (write-ahead). */
  private checkJournal(s: ModelSnapshot): void {
    const st = foldJournal(this.store!.all);
    const att = st.attempts.get(s.context.attempt);
    this.expectEq('journal: attempt discarded', att?.discarded === true, crashedFrom(s) === 'backoff');
    this.expectEq('journal: committed', st.committed !== undefined, false);
    for (let i = 0; i < callCount(s); i++) {
      const p = callPhase(s, i);
      const jc = att?.calls.get(i);
      const released = jc?.released !== undefined;
      switch (p) {
        case 'idle':
        case 'streaming':
        case 'complete':
        case 'emittable':
          this.expectEq(`journal: call ${i} released`, released, false);
          break;
        case 'released':
          this.expectEq(`journal: call ${i} released`, released, true);
          this.expectEq(`journal: call ${i} started`, (jc?.starts ?? 0) > 0, false);
          break;
        case 'running':
          // Write-ahead: a tool that may be running has its start on disk, and no result.
          this.expectEq(`journal: call ${i} released`, released, true);
          this.expectEq(`journal: call ${i} started (write-ahead)`, (jc?.starts ?? 0) > 0, true);
          this.expectEq(`journal: call ${i} result`, jc?.result !== undefined, false);
          break;
        case 'resulted':
          this.expectEq(`journal: call ${i} result or invalid`, jc?.result !== undefined || jc?.invalid === true, true);
          break;
        case 'discarded':
          break;
      }
    }
  }

  private checkCall(s: ModelSnapshot, i: number): void {
    const view = this.controller.actor.getSnapshot().context.calls[i];
    const p = callPhase(s, i);
    const turn = turnPhase(s);
    const attempt = s.context.attempt;
    if (p === 'idle') {
      this.expectEq(`call ${i} exists`, view !== undefined, false);
      return;
    }
    if (p === 'discarded') {
      // Backoff clears the attempt's calls (and a turn dropped in backoff keeps them cleared);
      // otherwise the view keeps them as discarded.
      if (turn === 'backoff') this.expectEq(`call ${i} exists in backoff`, view !== undefined, false);
      else if (view !== undefined) this.expectEq(`call ${i} phase`, view.phase, 'discarded');
      return;
    }
    if (!view) this.fail(`call ${i}: missing in the SUT, model ${p}`);
    this.expectEq(`call ${i} phase`, view.phase, p);
    if (view.ref) {
      const child = view.ref.getSnapshot();
      this.expectEq(`call ${i} actor state`, String(child.value), p);
      this.expectEq(`call ${i} actor attempt`, child.context.attempt, this.sutAttempt(attempt));
    } else {
      // The turn drops a call's actor once the actor has ended (execute mode: resulted).
      this.expectEq(`call ${i} actor dropped only when retired`, view.retired, true);
      this.expectEq(`call ${i} actor dropped only when resulted`, p, 'resulted');
    }
    const sub = releasedSub(s, i);
    if (sub === 'pending' || sub === 'unrequested') this.expectEq(`call ${i} approval`, view.approval, sub);
    else if (sub === 'waiting') {
      this.stats.checks++;
      if (view.approval !== 'not-needed' && view.approval !== 'granted') this.fail(`call ${i} approval: SUT ${view.approval}, model waiting`);
    }
    const run = this.runs.get(this.runKey(this.sutAttempt(attempt), i));
    if (p === 'running') {
      if (!run) this.fail(`call ${i} is running but its tool was never invoked`);
      this.expectEq(`call ${i} tool signal aborted`, run.signal.aborted, false);
    }
    if (p === 'released' || p === 'emittable' || p === 'complete' || p === 'streaming') {
      this.expectEq(`call ${i} tool invoked`, run !== undefined, false);
    }
  }

  private checkHistory(s: ModelSnapshot): void {
    const summary = this.summary;
    if (!summary) this.fail('turn.done without a summary');
    const history: HistoryMessage[] = summary.history;
    this.stats.invariantChecks++;
    const hv = [...historyViolations(history), ...checkHistory(history).violations.map((v) => ({ ...v, message: `(checkHistory) ${v.message}` }))];
    if (hv.length > 0) this.fail(`history invariants: ${hv.map((v) => `${v.invariant} ${v.message}`).join('; ')}`, true);
    const outcome = doneOutcome(s)!;
    const attempt = s.context.attempt;
    const expectedCalls: string[] = [];
    const expectedResults: string[] = [];
    if (outcome === 'completed' || outcome === 'aborted') {
      for (let i = 0; i < callCount(s); i++) {
        if (callPhase(s, i) !== 'resulted') continue;
        const exp = this.expected[i];
        // An invalid call (no identity by the end of the stream) is recorded under a minted id.
        const id = exp === 'invalid' ? `call_${i}` : callId(attempt, i);
        expectedCalls.push(id);
        expectedResults.push(`${id}:${exp}`);
      }
    }
    const assistant = history.find((m) => m.role === 'assistant');
    const tool = history.find((m) => m.role === 'tool');
    const actualCalls = assistant && assistant.role === 'assistant' ? assistant.calls.map((c) => c.id) : [];
    const actualResults =
      tool && tool.role === 'tool'
        ? tool.results.map((r) => {
            const kind = r.synthetic === 'interrupted' ? 'interrupted' : r.synthetic === 'denied' ? 'denied' : r.synthetic === 'invalid_input' ? 'invalid' : r.ok ? 'ok' : 'error';
            return `${r.callId}:${kind}`;
          })
        : [];
    this.expectEq('history calls', actualCalls.join(' '), expectedCalls.join(' '));
    this.expectEq('history results', actualResults.join(' '), expectedResults.join(' '));
    if (outcome === 'failed' || outcome === 'dropped') this.expectEq('history messages', history.length, 0);
  }

}

export interface ReplayFailure {
  /** 1-based step at which the SUT and the model disagreed. */
  step: number;
  message: string;
  /** The path up to the failing step, readable. */
  trail: string;
}

/** Replay one model path on a fresh SUT. Returns undefined when every step conformed. */
export async function replayPath(
  path: ModelPath,
  initial: ModelSnapshot,
  stats: ReplayStats,
  known?: KnownBugs,
  opts: CrashOptions = {},
): Promise<ReplayFailure | undefined> {
  stats.paths++;
  let h: TurnHarness;
  try {
    h = new TurnHarness(stats, known, opts);
    h.check(initial);
  } catch (err) {
    return { step: 0, message: (err as Error).message, trail: `init: ${describeState(initial)}` };
  }
  let prev = initial;
  for (let k = 0; k < path.steps.length; k++) {
    const st = path.steps[k]!;
    stats.steps++;
    try {
      await h.send(st.event, prev, st.state);
      h.check(st.state);
      stats.coveredEdges.add(st.edge);
    } catch (err) {
      if (!(err instanceof ModelMismatch)) stats.mismatches++;
      return { step: k + 1, message: (err as Error).message, trail: trail(path, k, initial) };
    }
    prev = st.state;
  }
  for (const id of h.knownSeen) stats.known.set(id, (stats.known.get(id) ?? 0) + 1);
  return undefined;
}

export function trail(path: ModelPath, upTo: number, initial: ModelSnapshot): string {
  const lines = [`  init → ${describeState(initial)}`];
  for (let k = 0; k <= upTo && k < path.steps.length; k++) {
    const st = path.steps[k]!;
    lines.push(`  ${k + 1}. ${describeEvent(st.event)} → ${describeState(st.state)}`);
  }
  return lines.join('\n');
}
