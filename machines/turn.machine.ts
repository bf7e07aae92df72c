import { type ActorRefFrom, assign, createActor, enqueueActions, setup } from 'xstate';
import type { FinishReason, StreamErrorInfo } from '../src/wire/events';
import { CallIndexSet, decideReleases } from '../src/release/rules';
import { type Approval, decideStarts, type EarlyStart, type StartContext } from '../src/execute/schedule';
import { type ArgsOutcome, type CallPhase, type CallResult, type Classification, type ReuseResults, reuseKey, type RunToolFn, type RunToolInput } from '../src/calls';
import { computeRetryDelay, DEFAULT_RETRY_MAX_DELAY_MS, type RetryDelay, type RetryJitter } from '../src/engine/retry';
import { AttemptAbort, type CallDone, type CallStatusEvent, initialCallSnapshot, isCallReady, plainCallLogic, type ToolCallEvent, toolCallMachine } from './toolCall.machine';

/**
 * A turn: one model response and the tool work it causes, over one or more attempts.
 *
 *   streaming.open ──stream.finish──▶ streaming.finished ──stream.end──▶ draining ──all settled──▶ done
 *      │  └─stream.error [canRetry]──▶ backoff ──after retryDelay──▶ streaming.open (next attempt)
 *      └────stream.error [else]──────▶ failed
 *   stream.end in streaming.open (SPEC §12: a stream that did not finish is not a finished turn)
 *   is a `stream_truncated` error: backoff when another attempt is allowed, else failed.
 *   turn.abort (commit | drop) from streaming / draining / backoff ──▶ done
 *
 * These states are the turn's whole lifecycle: the controller keeps no flag of its own for it
 * (whether the finish came, the stream ended, a retry waits, the turn is closed): it reads them
 * here (`attemptOpen`, `finishSeen`, `streamEnded` in src/engine/controller.ts).
 *
 * One `toolCall` actor is spawned per call (`call.open`). The controller (src/engine) forwards
 * lifecycle boundaries only; children report what the turn cannot know itself (`call.status`
 * for emittable and invalid, their done event with a `CallDone` output when they end), and
 * `pump` asks the pure functions in src/release/rules.ts and src/execute/schedule.ts what to
 * release and start next. Phases the turn causes (complete, released, running, discarded) it
 * records as it sends the event.
 */

export type TurnMode = 'gateway' | 'execute';
export type AbortMode = 'commit' | 'drop';

export type { Classification } from '../src/calls';

export interface TurnSettings {
  mode: TurnMode;
  singleTool: boolean;
  maxAttempts: number;
  retryBaseMs: number;
  /** Longest wait before a retry (default DEFAULT_RETRY_MAX_DELAY_MS, src/engine/retry.ts). */
  retryMaxDelayMs?: number;
  /** Jitter of the backoff (default 'full'). */
  retryJitter?: RetryJitter;
  /** [0, 1) for the jitter (default Math.random; tests pass a seeded one). */
  random?: () => number;
  earlyStart: EarlyStart;
  maxConcurrent: number;
  onAbort: AbortMode;
  classify: (name: string, input: Record<string, unknown>) => Classification;
  /** Runs a started call (execute mode); handed to every call actor. */
  runTool?: RunToolFn;
  /**
   * 'safe': a retry reuses the result of a read-only call (safe, no approval, `reusable` not
   * false) of a discarded attempt when the new attempt repeats it (same name, same canonical
   * arguments): the call is answered at its release instead of run. 'none': every call runs.
   */
  reuseResults?: ReuseResults;
  /** The call actor logic (tests may pass a stub); default `toolCallMachine`. */
  callLogic?: typeof toolCallMachine;
  /**
   * Hears what the turn tells its embedder (`TurnEmitted`), called where the turn would emit it
   * (the controller sets it). Unset, the turn emits its events (`actor.on`). An emitted event costs
   * an action to resolve and execute, an inspection event and a copy of the listener list, and a
   * call causes 2–4 of them: about a tenth of a call's CPU.
   */
  notify?: (event: TurnEmitted) => void;
}

export interface CallView {
  /**
   * The call actor while it has work left. Dropped when the actor ended (its done event; on the
   * gateway a plain call's actor ends when it is ready) and, on the gateway, when a call is judged
   * invalid (its actor is left as it is: nothing more is sent to it): a finished call keeps only
   * this view.
   */
  ref?: CallRef;
  phase: CallPhase;
  id?: string;
  name?: string;
  input?: Record<string, unknown>;
  repaired?: boolean;
  result?: CallResult;
  safe: boolean;
  approval: Approval;
  problem?: CallResult;
  structuredOutput?: boolean;
  reusable?: boolean;
  /** A discarded attempt's result this call reuses (given at its release; the tool does not run). */
  reused?: CallResult;
  /** Ready but beyond the single-tool limit: never released. */
  suppressed?: boolean;
  /** Released into the assistant message (or, in execute mode, answered as invalid). */
  inMessage?: boolean;
  started?: boolean;
  /** A settle/interrupt was sent; waiting for the child to report `resulted`. */
  settling?: boolean;
  /**
   * Nothing more is sent to the call actor: it ended (resulted, discarded), or on the gateway it
   * was released (then stopped) or judged invalid.
   */
  retired?: boolean;
}

export type CallRef = ActorRefFrom<typeof toolCallMachine>;

export type TurnOutcome = 'done' | 'failed' | 'aborted' | 'dropped';

export interface TurnContext {
  settings: TurnSettings;
  attempt: number;
  /**
   * Calls of the current attempt by index. Mutated in place (it is this actor's private
   * registry): copying it on every event would make a 1,000-call turn quadratic.
   */
  calls: Array<CallView | undefined>;
  /**
   * The indices in `calls`, ascending. `calls` may be sparse (an index of 1e9 after 0): every scan
   * walks `seen`, never `calls` itself, so no decision costs O(highest index).
   */
  seen: CallIndexSet;
  releaseFrontier: number;
  startFrontier: number;
  released: number;
  running: number;
  streamEnded: boolean;
  finish?: FinishReason;
  error?: StreamErrorInfo;
  /** The wait before the next attempt, decided when a retryable error ends the attempt (`planRetry`). */
  retry?: RetryDelay;
  outcome?: TurnOutcome;
  /** Set on abort: nothing new is released or started. */
  closing: boolean;
  /** Calls that turned invalid and wait for the executor's error result (execute mode). */
  invalidQueue: number[];
  /** A structured-output call is in the assistant message (SPEC §6.10). */
  structuredReleased: boolean;
  /** Released calls whose approval has not been requested yet. */
  unrequestedApprovals: number;
  /**
   * After the end of the stream: every seen call below this index is settled (see `allSettled`).
   * Settled phases never change back and no call appears after the end, so the check resumes
   * here instead of walking every call after every event (which made draining quadratic).
   */
  settledFrom: number;
  /** The abort shared by this attempt's tool runs (given to every call actor of the attempt). */
  attemptAbort: AttemptAbort;
  /** Emitted events recorded by `recordStatus` / `recordDone`, sent by the `pump` that follows. */
  outbox: TurnEmitted[];
  /**
   * Results of discarded attempts' read-only calls, by `reuseKey` (name + canonical arguments),
   * waiting for a later attempt to repeat the call; each is used once.
   */
  reusable: Map<string, CallResult[]>;
}

/** A plain call actor's id (an inspected call's is `a<attempt>-c<index>`); its output says which call it is. */
export const PLAIN_CALL_ID = 'call';

/** A call actor ended (XState's done event for a child; the output names the call). */
export interface CallDoneEvent {
  type: `xstate.done.actor.${string}`;
  output: CallDone;
}

export type TurnEvent =
  | { type: 'call.open'; index: number; id?: string; name?: string }
  | { type: 'call.identity'; index: number; id?: string; name?: string }
  | {
      type: 'call.complete';
      index: number;
      outcome: ArgsOutcome;
      input?: Record<string, unknown>;
      repaired?: boolean;
    }
  | { type: 'stream.finish'; reason: FinishReason }
  /**
   * The attempt's stream ended. `complete`: the final outcome of every call whose payload was not
   * complete yet (the controller judges its buffer at the end, and repairs a max_tokens-truncated
   * last call, SPEC §5.7): given to those calls with the end itself, so the end is one step.
   */
  | { type: 'stream.end'; complete?: readonly EndCompletion[] }
  | { type: 'stream.error'; error: StreamErrorInfo; retryable: boolean }
  | { type: 'approval.granted'; index: number }
  | { type: 'approval.denied'; index: number; reason?: string }
  | { type: 'turn.abort'; mode?: AbortMode }
  | CallStatusEvent
  | CallDoneEvent;

/** A call's outcome given with `stream.end` (see there). */
export type EndCompletion = Omit<Extract<TurnEvent, { type: 'call.complete' }>, 'type'>;

export type TurnEmitted =
  | { type: 'call.ready'; index: number; attempt: number; safe: boolean; needsApproval: boolean }
  | { type: 'call.released'; index: number; attempt: number }
  | { type: 'call.suppressed'; index: number; attempt: number; reason: 'single_tool' | 'invalid' }
  | { type: 'approval.request'; index: number; attempt: number; id: string; name: string }
  | { type: 'tool.start'; index: number; attempt: number }
  | { type: 'tool.result'; index: number; attempt: number; result: CallResult; reused?: boolean }
  | { type: 'attempt.retry'; attempt: number; delayMs: number; error: StreamErrorInfo; reason: RetryDelay['reason']; retryAfterMs?: number }
  | { type: 'attempt.begin'; attempt: number }
  /** `error`: what ended the turn when it failed (the last attempt's error). */
  | { type: 'turn.done'; outcome: TurnOutcome; error?: StreamErrorInfo };

export interface TurnInput {
  settings: TurnSettings;
  /** Results to reuse from the start (a resumed attempt's reused results, src/engine/resume.ts). */
  reusable?: ReadonlyArray<{ name: string; input: Record<string, unknown>; result: CallResult }>;
}

/** Is this call finished with, for this mode? (Once true it stays true.) */
function isSettled(v: CallView | undefined, mode: TurnMode): boolean {
  if (v === undefined || v.suppressed || v.phase === 'discarded') return true;
  return mode === 'gateway' ? v.phase === 'released' || v.phase === 'invalid' : v.phase === 'resulted';
}

/**
 * Is every call of the attempt finished with, for this mode? Resumes at `settledFrom` and moves it
 * up to the first unsettled call: O(1) amortised per event over a turn (settled phases are final
 * for this check, and no call appears after the end of the stream).
 */
export function allSettled(ctx: Pick<TurnContext, 'calls' | 'seen' | 'settings' | 'streamEnded'> & { settledFrom?: number }): boolean {
  if (!ctx.streamEnded) return false;
  // `seen.next` rather than the `from` generator: this runs after every event while draining.
  for (let i = ctx.seen.next(ctx.settledFrom ?? 0); i !== undefined; i = ctx.seen.next(i + 1)) {
    if (!isSettled(ctx.calls[i], ctx.settings.mode)) {
      if (ctx.settledFrom !== undefined) ctx.settledFrom = i;
      return false;
    }
  }
  return true;
}

/** Does `test` hold for every call of the attempt? Walks the seen indices (O(calls seen)). */
export function everyCall(ctx: Pick<TurnContext, 'calls' | 'seen'>, test: (v: CallView, index: number) => boolean): boolean {
  for (const i of ctx.seen) {
    const v = ctx.calls[i];
    if (v !== undefined && !test(v, i)) return false;
  }
  return true;
}

function seedReusable(seeds: TurnInput['reusable']): Map<string, CallResult[]> {
  const m = new Map<string, CallResult[]>();
  for (const x of seeds ?? []) {
    const key = reuseKey(x.name, x.input);
    m.set(key, [...(m.get(key) ?? []), x.result]);
  }
  return m;
}

/** May this call's result be reused (or reuse one)? Read-only, no approval, its tool allows it, the policy on. */
function mayReuse(v: CallView, settings: TurnSettings): v is CallView & { name: string } {
  return (settings.reuseResults ?? 'safe') !== 'none' && v.safe && v.approval === 'not-needed' && v.reusable !== false && !v.problem && !!v.name;
}

/** A call is ready (its `emittable` report, or a gateway call's end): record and classify it, and tell the controller. */
function recordReady(
  context: TurnContext,
  v: CallView,
  r: { index: number; attempt: number; id?: string; name?: string; input?: Record<string, unknown>; repaired?: boolean },
): void {
  v.phase = 'emittable';
  if (r.id) v.id = r.id;
  if (r.name) v.name = r.name;
  v.input = r.input;
  v.repaired = r.repaired;
  if (context.settings.mode === 'execute' && v.name) {
    const c = context.settings.classify(v.name, v.input ?? {});
    v.safe = c.safe;
    v.approval = c.needsApproval ? 'unrequested' : 'not-needed';
    v.problem = c.problem;
    v.structuredOutput = c.structuredOutput;
    v.reusable = c.reusable;
    if (context.reusable.size > 0 && mayReuse(v, context.settings)) {
      const key = reuseKey(v.name, v.input ?? {});
      const kept = context.reusable.get(key);
      v.reused = kept?.shift();
      if (kept?.length === 0) context.reusable.delete(key);
    }
  }
  context.outbox.push({ type: 'call.ready', index: r.index, attempt: r.attempt, safe: v.safe, needsApproval: v.approval === 'unrequested' });
}

/** The wait after failed attempt `attempt` (src/engine/retry.ts); `previousDelayMs` for decorrelated jitter. */
/** What an attempt's stream ended with when it ended without its finish (SPEC §12). */
const TRUNCATED_ERROR: StreamErrorInfo = {
  type: 'stream_truncated',
  message: 'the stream ended before its finish (no finish reason / terminal event): the attempt is discarded',
};

/** The error a failing `stream.error` or an unfinished `stream.end` ends the attempt with. */
function attemptError(event: TurnEvent): StreamErrorInfo | undefined {
  return event.type === 'stream.error' ? event.error : event.type === 'stream.end' ? TRUNCATED_ERROR : undefined;
}

export function retryDelayOf(settings: TurnSettings, attempt: number, error: StreamErrorInfo | undefined, previousDelayMs?: number): RetryDelay {
  return computeRetryDelay(
    { baseMs: settings.retryBaseMs, maxDelayMs: settings.retryMaxDelayMs ?? DEFAULT_RETRY_MAX_DELAY_MS, jitter: settings.retryJitter ?? 'full' },
    attempt,
    { retryAfterMs: error?.retryAfterMs, previousDelayMs },
    settings.random,
  );
}

const INVALID_RESULT: CallResult = {
  ok: false,
  content: 'The tool call arguments were not a valid JSON object, so the tool was not run.',
  synthetic: 'invalid_input',
};
const SUPPRESSED_RESULT: CallResult = {
  ok: false,
  content: 'Not run: the structured output call in this turn replaces its sibling calls.',
  synthetic: 'suppressed',
};

/**
 * `complete` (payload final, not ready yet), `emittable` (with the parsed input: classify it) or
 * `invalid`. What it tells the controller goes to `outbox`.
 */
function recordStatus(context: TurnContext, event: CallStatusEvent): void {
  const v = context.calls[event.index];
  if (!v) return;
  if (event.phase === 'complete') {
    if (v.phase === 'streaming') v.phase = 'complete';
    return;
  }
  if (event.phase === 'emittable') {
    recordReady(context, v, event);
    return;
  }
  v.phase = event.phase;
  if (event.id) v.id = event.id;
  if (event.name) v.name = event.name;
  if (event.phase === 'invalid') {
    context.outbox.push({ type: 'call.suppressed', index: event.index, attempt: event.attempt, reason: 'invalid' });
    if (context.settings.mode === 'execute') context.invalidQueue.push(event.index);
    else {
      v.retired = true; // the gateway leaves an invalid call where it is, and drops a plain call's actor
      if (v.ref?.src === toolCallMachine) v.ref = undefined;
    }
  }
}

/**
 * A call actor ended (its final state ends the actor itself): resulted with its result,
 * discarded, or (a gateway call) ready, reporting what an `emittable` report would.
 */
function recordDone(context: TurnContext, done: CallDone): void {
  const v = context.calls[done.index];
  if (!v) return;
  v.ref = undefined; // the actor has ended: the view is all that is left of the call
  if (done.phase === 'emittable') {
    recordReady(context, v, done);
    return;
  }
  v.phase = done.phase;
  v.retired = true;
  if (done.phase !== 'resulted') return;
  v.result = done.result;
  v.settling = false;
  if (v.started) {
    v.started = false;
    context.running--;
  }
  if (done.result) {
    const reused = v.reused !== undefined && done.result === v.reused;
    context.outbox.push({ type: 'tool.result', index: done.index, attempt: done.attempt, result: done.result, ...(reused ? { reused } : {}) });
  }
}

/** What the pump sends to calls (the `enqueue` of an `enqueueActions` action). */
interface CallSender {
  sendTo(ref: CallRef, event: ToolCallEvent): void;
}

/**
 * Release what the ordered prefix allows, answer invalid and problem calls, then start what may
 * start (the `pump` action). What it tells the embedder goes to `outbox`, after what
 * `recordStatus` / `recordDone` put there.
 */
function pumpCalls(context: TurnContext, enqueue: CallSender): void {
  const outbox = context.outbox;
  if (context.closing) return;
  const s = context.settings;
  const calls = context.calls;
  // Indices 0..n-1 without a gap (the usual turn): the scans step by one instead of looking up each next index.
  const seen = context.seen.dense ? undefined : context.seen;
  const rel = decideReleases(calls, context.releaseFrontier, {
    singleTool: s.singleTool,
    released: context.released,
    streamEnded: context.streamEnded,
    seen,
  });
  context.releaseFrontier = rel.frontier;
  context.released += rel.release.length;
  for (const i of rel.release) {
    const v = calls[i]!;
    v.phase = 'released';
    v.inMessage = true;
    outbox.push({ type: 'call.released', index: i, attempt: context.attempt });
    // Released is the end of a call's life on the gateway: nothing more is sent to it.
    if (s.mode === 'gateway') v.retired = true;
    else if (v.problem || v.reused) v.settling = true;
  }
  for (const i of rel.suppress) {
    const v = calls[i]!;
    v.suppressed = true;
    v.retired = true;
    if (v.ref) enqueue.sendTo(v.ref, { type: 'call.discard' });
    outbox.push({ type: 'call.suppressed', index: i, attempt: context.attempt, reason: 'single_tool' });
  }
  if (s.mode !== 'execute') {
    // A plain call's actor ended when it was ready (`endsWhenReady`: sending it `call.release`
    // and stopping it would be two more macrosteps per call, seen by nobody); an inspected call
    // hears its release and rests in `released`, so the inspector sees every phase.
    for (const i of rel.release) {
      const ref = calls[i]!.ref;
      if (ref) enqueue.sendTo(ref, { type: 'call.release' });
    }
    return;
  }

  // Executor: answer invalid calls, apply structured-output suppression, then start what may start.
  const settle: Array<[number, CallResult]> = [];
  let unrequested = context.unrequestedApprovals;
  let structured = context.structuredReleased;
  for (const i of rel.release) {
    const v = calls[i]!;
    const answer = v.problem ?? v.reused;
    if (answer) settle.push([i, answer]);
    if (v.approval === 'unrequested') unrequested++;
    if (v.structuredOutput === true) structured = true;
  }
  const invalid = context.invalidQueue;
  for (let k = 0; k < invalid.length; k++) {
    const i = invalid[k]!;
    const v = calls[i];
    if (!v || v.settling || v.phase !== 'invalid') continue;
    v.inMessage = true;
    v.settling = true;
    settle.push([i, INVALID_RESULT]);
  }
  invalid.length = 0;
  context.structuredReleased = structured;
  if (structured && context.streamEnded) {
    // Rare path: sweep the released siblings once the batch is known to carry structured output.
    for (const i of context.seen.from(context.startFrontier)) {
      const v = calls[i];
      if (v && !v.settling && v.phase === 'released' && !v.structuredOutput) {
        if (v.approval === 'unrequested') unrequested--;
        v.settling = true;
        settle.push([i, SUPPRESSED_RESULT]);
      }
    }
  }
  const st = decideStarts(calls, context.startFrontier, startContext(context, unrequested));
  context.unrequestedApprovals = unrequested - st.requestApproval.length;
  context.startFrontier = st.frontier;
  context.running += st.start.length;
  for (const i of st.requestApproval) {
    const v = calls[i]!;
    v.approval = 'pending';
    outbox.push({ type: 'approval.request', index: i, attempt: context.attempt, id: v.id ?? '', name: v.name ?? '' });
  }
  for (const i of st.start) {
    const v = calls[i]!;
    v.phase = 'running';
    v.started = true;
    outbox.push({ type: 'tool.start', index: i, attempt: context.attempt });
  }
  // Per call, in order: its release (with `start` when it starts now), then a settle or a start.
  // (Released, invalid and started calls have not ended: their actors are there.)
  for (const i of rel.release) enqueue.sendTo(calls[i]!.ref!, { type: 'call.release', start: calls[i]!.phase === 'running' });
  for (const [i, result] of settle) enqueue.sendTo(calls[i]!.ref!, { type: 'call.settle', result });
  let r = 0; // both lists ascend: a merge tells which started calls were released earlier
  for (const i of st.start) {
    while (r < rel.release.length && rel.release[r]! < i) r++;
    if (rel.release[r] !== i) enqueue.sendTo(calls[i]!.ref!, { type: 'call.start' });
  }
}

/**
 * What `decideStarts` decides from, read from the turn: one place for the pump and for
 * `readyCallStart`, whose answer is exact only while both ask with the same inputs.
 */
function startContext(context: TurnContext, unrequestedApprovals: number): StartContext {
  const s = context.settings;
  return {
    streamEnded: context.streamEnded,
    finished: context.finish !== undefined,
    earlyStart: s.earlyStart,
    maxConcurrent: s.maxConcurrent,
    running: context.running,
    unrequestedApprovals,
    // Indices 0..n-1 without a gap (the usual turn): the scans step by one instead of looking up each next index.
    seen: context.seen.dense ? undefined : context.seen,
  };
}

/** Tell the embedder what `outbox` holds, in order: `settings.notify`, or emitted. */
function tellOutbox(context: TurnContext, enqueue: { emit(event: TurnEmitted): void }): void {
  const outbox = context.outbox;
  if (outbox.length === 0) return;
  const notify = context.settings.notify;
  for (let k = 0; k < outbox.length; k++) {
    if (notify) notify(outbox[k]!);
    else enqueue.emit(outbox[k]!);
  }
  outbox.length = 0;
}

export const turnMachine = setup({
  types: {
    context: {} as TurnContext,
    input: {} as TurnInput,
    events: {} as TurnEvent,
    emitted: {} as TurnEmitted,
  },
  delays: {
    retryDelay: ({ context }) => context.retry?.delayMs ?? 0,
  },
  guards: {
    canRetry: ({ context, event }) =>
      event.type === 'stream.error' && event.retryable && context.attempt < context.settings.maxAttempts,
    /** A stream that ended without its finish is retried like a retryable error (stream_truncated). */
    canRetryTruncated: ({ context }) => context.attempt < context.settings.maxAttempts,
    /** A done event of a call of the current attempt (a discarded attempt's calls are gone). */
    currentAttempt: ({ context, event }) => {
      const r = 'output' in event ? event.output : undefined;
      return r !== undefined && r.attempt === context.attempt && context.calls[r.index] !== undefined;
    },
    /**
     * A report the turn acts on (complete, emittable, invalid; the others reach it only when
     * inspected: state entries for the timeline) from a call of the current attempt. One guard, not
     * an `and` of two: it runs for every report.
     */
    actionableReport: ({ context, event }) =>
      event.type === 'call.status' &&
      (event.phase === 'emittable' || event.phase === 'invalid' || event.phase === 'complete') &&
      event.attempt === context.attempt &&
      context.calls[event.index] !== undefined,
    allSettled: ({ context }) => allSettled(context),
    allSettledAfterAbort: ({ context }) =>
      context.settings.mode === 'gateway' ||
      everyCall(context, (v) => v.suppressed === true || !v.inMessage || v.phase === 'resulted'),
    dropOnAbort: ({ context, event }) =>
      event.type === 'turn.abort' && (event.mode ?? context.settings.onAbort) === 'drop',
  },
  actions: {
    /**
     * One call actor per call, created with this turn as its parent (same actor system: the
     * inspector shows it under the turn, and its `sendParent` reports reach the turn). It is not
     * entered in the turn snapshot's `children` map on purpose: XState copies that map on every
     * spawn and stop, which made a turn with many live calls quadratic. A call actor ends itself
     * in its final states.
     */
    spawnCall: ({ context, event, self }) => {
      if (event.type !== 'call.open' || context.calls[event.index] !== undefined) return;
      const logic = context.settings.callLogic ?? toolCallMachine;
      // On the gateway a plain call's actor ends when it is ready (its done event is its report); an
      // inspected one lives through its release, so the inspector sees every phase.
      const endsWhenReady = context.settings.mode === 'gateway' && logic === toolCallMachine;
      const input = { index: event.index, attempt: context.attempt, run: context.settings.runTool, abort: context.attemptAbort, endsWhenReady, id: event.id, name: event.name };
      // A plain call starts from its first snapshot as it is (`plainCallLogic`) under one constant
      // id: its done event then has one type (`xstate.done.actor.call`), which XState memoises once
      // per state node instead of once per call index ever seen. An inspected call keeps a readable
      // id (`a<attempt>-c<index>`) for the inspector.
      const ref =
        logic === toolCallMachine
          ? createActor(plainCallLogic, { parent: self, id: PLAIN_CALL_ID, src: toolCallMachine, input, snapshot: initialCallSnapshot(input) })
          : createActor(logic, { parent: self, id: `a${context.attempt}-c${event.index}`, input });
      context.calls[event.index] = { ref, phase: 'streaming', safe: false, approval: 'not-needed' };
      context.seen.add(event.index);
      ref.start();
    },
    /** `call.identity`; `call.complete` when sent to the turn (the controller sends it to the call, `completeCall`). */
    forwardToCall: enqueueActions(({ context, event, enqueue }) => {
      if (event.type === 'call.identity') {
        const ref = context.calls[event.index]?.ref;
        if (ref) enqueue.sendTo(ref, { type: 'call.identity', id: event.id, name: event.name });
      } else if (event.type === 'call.complete') {
        const v = context.calls[event.index];
        // The child moves on to emittable or invalid from here and reports it; complete it keeps.
        if (v && v.phase === 'streaming') v.phase = 'complete';
        if (v?.ref)
          enqueue.sendTo(v.ref, {
            type: 'call.complete',
            outcome: event.outcome,
            input: event.input,
            repaired: event.repaired,
          });
      }
    }),
    recordFinish: assign(({ event }) => (event.type === 'stream.finish' ? { finish: event.reason } : {})),
    recordError: assign(({ event }) => {
      const error = attemptError(event);
      return error !== undefined ? { error } : {};
    }),
    /** Decide the wait before the next attempt once (the jitter is random): the delay and the event read it. */
    planRetry: assign(({ context, event }) => {
      const error = attemptError(event);
      return error !== undefined ? { retry: retryDelayOf(context.settings, context.attempt, error, context.retry?.delayMs) } : {};
    }),
    /**
     * The stream ended: every call whose payload may still be judged hears it (readiness of empty
     * arguments, invalid at the end; one released, running or finished ignores it), then the final
     * outcome the event carries for it, judged knowing the stream ended.
     *
     * `streamEnded` is set in place, like the pump's counters: the controller reads it while the
     * turn tells it of releases in this same step (`settings.notify`), before XState commits the
     * step's snapshot.
     */
    endStream: enqueueActions(({ context, event, enqueue }) => {
      context.streamEnded = true;
      const final = new Map<number, EndCompletion>();
      if (event.type === 'stream.end') for (const c of event.complete ?? []) final.set(c.index, c);
      for (const i of context.seen) {
        const v = context.calls[i];
        if (!v?.ref || v.retired || (v.phase !== 'streaming' && v.phase !== 'complete')) continue;
        enqueue.sendTo(v.ref, { type: 'stream.end' });
        const c = final.get(i);
        if (c === undefined) continue;
        v.phase = 'complete';
        enqueue.sendTo(v.ref, { type: 'call.complete', outcome: c.outcome, input: c.input, repaired: c.repaired });
      }
    }),
    /**
     * A call's report, then the pump (`pump`): one action instead of two, as every action XState runs
     * costs an argument object, an executor record and an inspection event, and this runs once or
     * twice per call.
     */
    recordStatusAndPump: enqueueActions(({ context, event, enqueue }) => {
      if (event.type === 'call.status') recordStatus(context, event);
      pumpCalls(context, enqueue);
      tellOutbox(context, enqueue);
    }),
    /** A call actor's end, then the pump (one action, as `recordStatusAndPump`). */
    recordDoneAndPump: enqueueActions(({ context, event, enqueue }) => {
      if ('output' in event) recordDone(context, event.output);
      pumpCalls(context, enqueue);
      tellOutbox(context, enqueue);
    }),
    /**
     * Release what the ordered prefix allows, answer invalid and problem calls, then start what may
     * start. Counters and cursors live in the context and are updated in place (like `calls`): an
     * `assign` would copy the whole context on every report. A call released and started in the
     * same pump gets one event (`call.release` with `start: true`). Then it tells the embedder what
     * `recordStatus` / `recordDone` and the pump recorded (`tellOutbox`).
     */
    pump: enqueueActions(({ context, enqueue }) => {
      pumpCalls(context, enqueue);
      tellOutbox(context, enqueue);
    }),
    grantApproval: assign(({ context, event }) => {
      const v = event.type === 'approval.granted' ? context.calls[event.index] : undefined;
      if (v && v.approval === 'pending') v.approval = 'granted';
      return {};
    }),
    denyApproval: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'approval.denied') return;
      const v = context.calls[event.index];
      if (!v?.ref || v.approval !== 'pending' || v.phase !== 'released') return;
      v.approval = 'denied';
      v.settling = true;
      enqueue.sendTo(v.ref, {
        type: 'call.settle',
        result: { ok: false, content: event.reason ?? 'The user denied this tool call.', synthetic: 'denied' },
      });
    }),
    /** Before a retry: keep the discarded attempt's finished read-only results for the next attempt. */
    keepReusable: ({ context }) => {
      for (const i of context.seen) {
        const v = context.calls[i];
        const r = v?.result;
        if (!v || v.phase !== 'resulted' || !r || !r.ok || r.synthetic || !mayReuse(v, context.settings)) continue;
        const key = reuseKey(v.name, v.input ?? {});
        const kept = context.reusable.get(key);
        if (kept) kept.push(r);
        else context.reusable.set(key, [r]);
      }
    },
    discardAttempt: enqueueActions(({ context, enqueue }) => {
      for (const i of context.seen) {
        const v = context.calls[i];
        if (!v) continue;
        v.phase = 'discarded';
        if (v.retired || !v.ref) continue;
        v.retired = true;
        enqueue.sendTo(v.ref, { type: 'call.discard' }); // discarded is final: the actor ends itself
      }
    }),
    resetAttempt: assign({
      calls: () => [],
      seen: () => new CallIndexSet(),
      invalidQueue: () => [],
      attemptAbort: () => new AttemptAbort(),
      structuredReleased: false,
      unrequestedApprovals: 0,
      releaseFrontier: 0,
      startFrontier: 0,
      released: 0,
      running: 0,
      streamEnded: false,
      finish: undefined,
      error: undefined,
      settledFrom: 0,
    }),
    nextAttempt: assign({ attempt: ({ context }) => context.attempt + 1 }),
    emitRetry: enqueueActions(({ context, enqueue }) => {
      context.outbox.push({
        type: 'attempt.retry',
        attempt: context.attempt + 1,
        delayMs: context.retry?.delayMs ?? 0,
        reason: context.retry?.reason ?? 'backoff',
        ...(context.retry?.retryAfterMs !== undefined ? { retryAfterMs: context.retry.retryAfterMs } : {}),
        error: context.error ?? { type: 'unknown', message: 'stream error' },
      });
      tellOutbox(context, enqueue);
    }),
    emitBegin: enqueueActions(({ context, enqueue }) => {
      context.outbox.push({ type: 'attempt.begin', attempt: context.attempt });
      tellOutbox(context, enqueue);
    }),
    /** onAbort 'commit': released calls keep their place with their real or an "interrupted" result. */
    commitOnAbort: enqueueActions(({ context, enqueue }) => {
      enqueue.assign({ closing: true });
      if (context.settings.mode === 'gateway') return; // nothing to answer on the gateway
      for (const i of context.seen) {
        const v = context.calls[i];
        if (!v?.ref || v.retired) continue;
        if ((v.phase === 'released' || v.phase === 'running') && v.inMessage) {
          enqueue.sendTo(v.ref, { type: 'call.interrupt' });
        } else if (v.phase === 'invalid' && v.inMessage) {
          enqueue.sendTo(v.ref, { type: 'call.settle', result: INVALID_RESULT });
        } else if (v.phase !== 'resulted') {
          v.inMessage = false;
          v.phase = 'discarded';
          enqueue.sendTo(v.ref, { type: 'call.discard' });
        }
      }
    }),
    setOutcome: assign((_, params: { outcome: TurnOutcome }) => ({ outcome: params.outcome })),
    emitDone: enqueueActions(({ context, enqueue }) => {
      const outcome = context.outcome ?? 'done';
      context.outbox.push({ type: 'turn.done', outcome, ...(outcome === 'failed' && context.error ? { error: context.error } : {}) });
      tellOutbox(context, enqueue);
    }),
  },
}).createMachine({
  id: 'turn',
  context: ({ input }) => ({
    settings: input.settings,
    attempt: 1,
    calls: [],
    seen: new CallIndexSet(),
    releaseFrontier: 0,
    startFrontier: 0,
    released: 0,
    running: 0,
    streamEnded: false,
    closing: false,
    invalidQueue: [],
    attemptAbort: new AttemptAbort(),
    structuredReleased: false,
    unrequestedApprovals: 0,
    settledFrom: 0,
    outbox: [],
    reusable: seedReusable(input.reusable),
  }),
  initial: 'streaming',
  on: {
    'call.status': { guard: 'actionableReport', actions: 'recordStatusAndPump' },
    'xstate.done.actor.*': { guard: 'currentAttempt', actions: 'recordDoneAndPump' },
    'approval.granted': { actions: ['grantApproval', 'pump'] },
    'approval.denied': { actions: ['denyApproval', 'pump'] },
  },
  states: {
    streaming: {
      initial: 'open',
      states: {
        /** No finish yet: an end now is a cut stream (`stream_truncated`, SPEC §12). */
        open: {
          on: {
            'stream.finish': { target: 'finished', actions: 'recordFinish' },
            'stream.end': [
              { guard: 'canRetryTruncated', target: '#turn.backoff', actions: ['recordError', 'planRetry'] },
              {
                target: '#turn.done',
                actions: ['recordError', 'discardAttempt', { type: 'setOutcome', params: { outcome: 'failed' } }],
              },
            ],
          },
        },
        /** The stream gave its finish (its format's terminal signal): its end is a finished turn. */
        finished: {
          on: {
            // A later finish (e.g. a usage chunk repeating it) replaces the reason.
            'stream.finish': { actions: 'recordFinish' },
            'stream.end': { target: '#turn.draining', actions: ['endStream', 'pump'] },
          },
        },
      },
      on: {
        'call.open': { actions: 'spawnCall' },
        'call.identity': { actions: 'forwardToCall' },
        'call.complete': { actions: 'forwardToCall' },
        'stream.error': [
          { guard: 'canRetry', target: 'backoff', actions: ['recordError', 'planRetry'] },
          {
            target: 'done',
            actions: ['recordError', 'discardAttempt', { type: 'setOutcome', params: { outcome: 'failed' } }],
          },
        ],
        'turn.abort': [
          {
            guard: 'dropOnAbort',
            target: 'done',
            actions: ['discardAttempt', { type: 'setOutcome', params: { outcome: 'dropped' } }],
          },
          { target: 'aborting', actions: ['commitOnAbort', { type: 'setOutcome', params: { outcome: 'aborted' } }] },
        ],
      },
    },
    draining: {
      always: { guard: 'allSettled', target: 'done', actions: { type: 'setOutcome', params: { outcome: 'done' } } },
      on: {
        'turn.abort': [
          {
            guard: 'dropOnAbort',
            target: 'done',
            actions: ['discardAttempt', { type: 'setOutcome', params: { outcome: 'dropped' } }],
          },
          { target: 'aborting', actions: ['commitOnAbort', { type: 'setOutcome', params: { outcome: 'aborted' } }] },
        ],
      },
    },
    backoff: {
      entry: ['emitRetry', 'keepReusable', 'discardAttempt', 'resetAttempt'],
      after: { retryDelay: { target: 'streaming', actions: ['nextAttempt', 'emitBegin'] } },
      on: {
        'turn.abort': { target: 'done', actions: { type: 'setOutcome', params: { outcome: 'dropped' } } },
      },
    },
    aborting: {
      // Interrupts were sent; wait for every committed call to report its result.
      always: { guard: 'allSettledAfterAbort', target: 'done' },
    },
    done: {
      type: 'final',
      entry: 'emitDone',
    },
  },
});

export type TurnMachine = typeof turnMachine;

/**
 * Is the turn in `streaming` (open or finished)? What `snapshot.matches('streaming')` answers,
 * without parsing a state path: the controller asks it for every event it is fed.
 */
export function isStreaming(snapshot: { value: unknown }): boolean {
  const v = snapshot.value;
  return typeof v === 'object' && v !== null && 'streaming' in v;
}

/**
 * `call.complete` straight to the call actor (what the controller does): one event instead of
 * two, as the turn only forwarded it. The call reports `complete` (waiting for its identity or
 * the end of the stream), `emittable` or `invalid` as usual. Dropped, as the turn would drop it,
 * outside `streaming` or for a call the turn is finished with.
 */
export function completeCall(turn: TurnActorRef, event: Extract<TurnEvent, { type: 'call.complete' }>): void {
  const snap = turn.getSnapshot();
  if (!isStreaming(snap)) return;
  const v = snap.context.calls[event.index];
  if (v?.ref === undefined || v.retired || (v.phase !== 'streaming' && v.phase !== 'complete')) return;
  v.ref.send(event); // the call's own event is this one without `index` (which it ignores): no copy
}

/**
 * A ready call's start, taken at its completion (before any machine step): what the controller
 * needs to invoke the tool itself when the turn, on hearing `event`, will release and start the
 * call in that same pump. The call actor then adopts that run when it enters `running` (its
 * `runTool` effect asks the runner, and the controller hands it the run it already started).
 *
 * Why: at stream pace every XState step of the way (the call's `call.complete`, the turn's report
 * and pump, the call's `call.release`) runs with cold CPU caches, 0.1–0.6 ms each; the pure
 * decisions below cost a small part of that. Exact, not a guess: everything the pump decides from
 * is read here from the turn's own view, and `decideStarts` runs on it with this call assumed
 * released; nothing else happens between this and the pump (the send is synchronous). Only the
 * plain case qualifies — otherwise `undefined` and the call takes the usual way: an executing turn
 * with a runner, streaming and not closing; the call is the release frontier (every earlier call
 * released or finished), not beyond the single-tool limit, still `streaming` with its identity
 * known (so `call.complete` makes it `emittable`); no invalid call waiting for its answer, no
 * reusable result of a discarded attempt; a plain call actor (an inspected turn keeps the usual
 * order); classified safe, without approval, problem or structured output.
 *
 * `classify` is `settings.classify` (the controller's, which keeps the answer for the turn's
 * `recordReady` that follows: the embedder's classifier runs once per call either way).
 */
export function readyCallStart(
  turn: TurnActorRef,
  event: { index: number; input: Record<string, unknown> },
): { call: RunToolInput; abort: AttemptAbort } | undefined {
  const snap = turn.getSnapshot();
  if (!isStreaming(snap)) return undefined;
  const ctx = snap.context;
  const s = ctx.settings;
  const index = event.index;
  if (s.mode !== 'execute' || s.runTool === undefined || s.callLogic !== undefined || ctx.closing) return undefined;
  // At the concurrency cap nothing starts (decideStarts starts a call only below it): a turn whose
  // calls complete faster than its tools finish asks no classifier and scans nothing here.
  if (ctx.running >= s.maxConcurrent) return undefined;
  if (ctx.releaseFrontier !== index || (s.singleTool && ctx.released >= 1) || ctx.invalidQueue.length > 0 || ctx.reusable.size > 0) return undefined;
  const v = ctx.calls[index];
  if (v?.ref === undefined || v.retired || v.phase !== 'streaming' || v.ref.src !== toolCallMachine) return undefined;
  const callSnap = v.ref.getSnapshot();
  const c = callSnap.context;
  if (callSnap.value !== 'streaming' || !isCallReady({ id: c.id, name: c.name, outcome: 'object', streamEnded: c.streamEnded })) return undefined;
  let k: Classification;
  try {
    k = s.classify(c.name!, event.input);
  } catch {
    return undefined; // the usual way: the turn's `recordReady` asks again, and fails as it always did
  }
  if (!k.safe || k.needsApproval || k.problem !== undefined || k.structuredOutput === true) return undefined;
  const st = decideStarts(ctx.calls, ctx.startFrontier, {
    ...startContext(ctx, ctx.unrequestedApprovals),
    assume: { index, view: { phase: 'released', safe: true, approval: 'not-needed' } },
  });
  if (!st.start.includes(index)) return undefined;
  return { call: { index, attempt: c.attempt, callId: c.id ?? '', name: c.name ?? '', input: event.input }, abort: c.abort };
}

export type TurnActorRef = ActorRefFrom<TurnMachine>;
