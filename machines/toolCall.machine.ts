import { setMaxListeners } from 'node:events';
import { enqueueActions, sendParent, setup, type SnapshotFrom } from 'xstate';
import type { ArgsOutcome, CallPhase, CallResult, RunToolFn, RunToolInput } from '../src/calls';

/**
 * One tool call of one attempt. Spawned by the turn machine; sees lifecycle boundaries only
 * (never argument fragments: those live in a plain ArgBuffer owned by the controller,
 * src/engine/controller.ts).
 *
 *   streaming ──call.complete──▶ complete ──ready──▶ emittable ──call.release──▶ released
 *                                   │                                             │ call.start
 *                                   └─stream ended, not ready─▶ invalid            ▼
 *                                                    │ call.settle             running ──done/error──▶ resulted
 *                                                    └──────────────▶ resulted ◀─call.settle / call.interrupt
 *   any non-final state ──call.discard──▶ discarded
 *   gateway (`endsWhenReady`): streaming / complete ──ready──▶ ready (final; the turn releases the view)
 *
 * The turn keeps a small view of all calls and decides releases and starts with pure functions
 * (src/release/rules.ts, src/execute/schedule.ts). It hears from a call only what it cannot know
 * itself: `emittable` (with the parsed input) and `invalid` as `call.status` reports, and the end
 * (`resulted` with its result, `discarded`, or a gateway call's `ready`) as the actor's done event (`CallDone` output). The
 * phases the turn causes (complete, released, running) it records when it sends the event.
 * `announce` reports every other state entry too, for inspectors only: it is a no-op in
 * `toolCallMachine` and a `call.status` report in `inspectedToolCallMachine()`, which the
 * controller uses when someone inspects the turn (src/demo's timeline, `--inspect`).
 */

export type { ArgsOutcome, CallPhase, CallResult, RunToolFn, RunToolInput } from '../src/calls';

export interface ToolCallInput {
  index: number;
  attempt: number;
  /** The embedder's tool runner, used by the default `runTool` actor (tests may `.provide()` another). */
  run?: RunToolFn;
  /** The abort shared by the tool runs of the call's attempt (the turn gives one per attempt); a call on its own gets its own. */
  abort?: AttemptAbort;
  /**
   * A gateway call: its actor's work ends when it is ready (final state `ready`, the done event
   * carrying what an `emittable` report would); the turn releases it from its view.
   */
  endsWhenReady?: boolean;
  /** Identity known when the call opened (the usual case: the wire names a call as it opens it). */
  id?: string;
  name?: string;
}

export interface ToolCallContext {
  index: number;
  attempt: number;
  run?: RunToolFn;
  abort: AttemptAbort;
  endsWhenReady: boolean;
  id?: string;
  name?: string;
  outcome?: ArgsOutcome;
  input?: Record<string, unknown>;
  repaired: boolean;
  streamEnded: boolean;
  /** The tool run in progress (set on entering `running`). */
  toolRun?: ToolRun;
  result?: CallResult;
}

export type ToolCallEvent =
  | { type: 'call.identity'; id?: string; name?: string }
  | { type: 'call.complete'; outcome: ArgsOutcome; input?: Record<string, unknown>; repaired?: boolean }
  | { type: 'stream.end' }
  /** `start: true` when the turn starts the call as it releases it (one event instead of two). */
  | { type: 'call.release'; start?: boolean }
  | { type: 'call.start' }
  | { type: 'call.settle'; result: CallResult }
  | { type: 'call.interrupt' }
  | { type: 'call.discard' }
  /** From the tool run this actor started (`runTool`): its result, or what it threw. */
  | { type: 'tool.done'; run: ToolRun; result: CallResult }
  | { type: 'tool.error'; run: ToolRun; error: unknown };

/**
 * The AbortController of one attempt's tool runs, shared by all of them: an AbortSignal costs more
 * to make than the rest of a tool start (about a tenth of a call in execute mode). It is made when
 * the attempt's first call that has a runner opens (`initialCallContext`), not at its first run: at
 * stream pace a cold AbortController cost 0.04–0.18 ms (median 0.07) of the first dispatch of every
 * turn (completion → runTool), off that path when it opens. Sharing it changes nothing a tool can
 * see: a call leaves `running` unsettled only when its attempt is discarded or the turn is aborted,
 * and either stops every run of the attempt, so aborting the shared signal for one run aborts it
 * exactly for the runs that are stopped anyway.
 */
export class AttemptAbort {
  /*
   * A private field: XState walks a restored snapshot's context (`reviveContext`, every new call
   * actor starts from one) through enumerable properties, and an AbortController and its signal
   * have a dozen (getters) to read per call.
   */
  #controller?: AbortController;

  /** The controller for a new run: the attempt's, or a new one when there is none yet or it was aborted. */
  forRun(): AbortController {
    let abort = this.#controller;
    if (abort === undefined || abort.signal.aborted) {
      abort = this.#controller = new AbortController();
      setMaxListeners(0, abort.signal); // every run of the attempt may listen to it (Node warns past 10)
    }
    return abort;
  }
}

/** The tool run of a `running` call: its (attempt's) abort controller, and whether it has settled. */
export interface ToolRun {
  abort: AbortController;
  settled: boolean;
}

/** A report to the turn machine (`emittable`, `invalid`; every state entry when inspected). */
export interface CallStatusEvent {
  type: 'call.status';
  index: number;
  attempt: number;
  phase: CallPhase;
  id?: string;
  name?: string;
  input?: Record<string, unknown>;
  repaired?: boolean;
  result?: CallResult;
}

/**
 * The call actor's output when it ends (its done event's `output`): how it ended. `emittable`: a
 * gateway call ended ready (`endsWhenReady`), with what an `emittable` report carries.
 */
export interface CallDone {
  index: number;
  attempt: number;
  phase: 'resulted' | 'discarded' | 'emittable';
  result?: CallResult;
  id?: string;
  name?: string;
  input?: Record<string, unknown>;
  repaired?: boolean;
}

export function errorText(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return typeof error === 'string' ? error : 'tool failed';
}

/** Pure readiness check (SPEC §1 "ready", §5.1, §5.4). */
export function isCallReady(c: Pick<ToolCallContext, 'id' | 'name' | 'outcome' | 'streamEnded'>): boolean {
  if (!c.id || !c.name) return false;
  if (c.outcome === 'object') return true;
  return c.outcome === 'empty' && c.streamEnded;
}

function initialCallContext(input: ToolCallInput): ToolCallContext {
  const abort = input.abort ?? new AttemptAbort();
  if (input.run) abort.forRun(); // the attempt's controller now, not on the call's way to its tool (see AttemptAbort)
  return { index: input.index, attempt: input.attempt, run: input.run, abort, endsWhenReady: input.endsWhenReady ?? false, id: input.id, name: input.name, repaired: false, streamEnded: false };
}

/** Would the call be ready with this `call.complete`'s outcome? (Then it goes straight to `emittable`.) */
function readyWith(context: ToolCallContext, event: ToolCallEvent): boolean {
  return event.type === 'call.complete' && isCallReady({ id: context.id, name: context.name, outcome: event.outcome, streamEnded: context.streamEnded });
}

const INTERRUPTED: CallResult = { ok: false, content: 'Tool execution was interrupted by the user.', synthetic: 'interrupted' };

/*
 * Cost per call (issue 20): the context is this actor's own record and its actions update it in
 * place (an `assign` copies the whole context for every field it sets), and a transition goes
 * straight to the state it ends in when it can (`call.complete` of a ready call → emittable,
 * `call.release {start}` → running): every extra microstep is a snapshot, sets and closures.
 */
export const toolCallMachine = setup({
  types: {
    context: {} as ToolCallContext,
    input: {} as ToolCallInput,
    events: {} as ToolCallEvent,
  },
  guards: {
    readyOnComplete: ({ context, event }) => readyWith(context, event),
    endsReadyOnComplete: ({ context, event }) => context.endsWhenReady && readyWith(context, event),
    endsReady: ({ context }) => context.endsWhenReady && isCallReady(context),
    startOnRelease: ({ event }) => event.type === 'call.release' && event.start === true,
    isReady: ({ context }) => isCallReady(context),
    judgedInvalid: ({ context }) => context.streamEnded && !isCallReady(context),
  },
  actions: {
    report: sendParent(statusReport),
    /**
     * Entering `complete` (payload final, not ready): the turn hears it, as it does not send
     * `call.complete` itself (the controller sends it straight to the call). Not when the stream
     * has ended: then the call is judged invalid at once and reports that.
     */
    reportWaiting: enqueueActions(({ context, enqueue }) => {
      if (!context.streamEnded) enqueue.sendParent(statusReport({ context }, { phase: 'complete' }));
    }),
    /** A state entry the turn does not act on: reported only in `inspectedToolCallMachine()`. */
    announce: (_, _params: { phase: CallPhase }) => undefined,
    /**
     * Entering `running` runs the tool (the runner the turn was given; fails loudly without one).
     * Its outcome comes back as `tool.done` / `tool.error`; leaving `running` before that aborts it
     * (`stopTool` on `call.interrupt` and `call.discard`), and an outcome that arrives after that is dropped (the actor has ended or
     * moved on). A plain effect rather than an invoked promise actor: one actor per call, not two.
     * The signal is the attempt's (`AttemptAbort`). The runner may hand back a run that already
     * began: the controller invokes a ready safe call's tool at its completion when the turn will
     * start it in the pump that follows (`readyCallStart`, turn.machine.ts), and this adopts it.
     */
    runTool: ({ context, self }) => {
      const run: ToolRun = { abort: context.abort.forRun(), settled: false };
      context.toolRun = run;
      const call: RunToolInput = {
        index: context.index,
        attempt: context.attempt,
        callId: context.id ?? '',
        name: context.name ?? '',
        input: context.input ?? {},
      };
      const runner = context.run;
      let p: Promise<CallResult>;
      try {
        p = runner ? runner(call, run.abort.signal) : Promise.reject(new Error('no tool runner configured'));
      } catch (error) {
        p = Promise.reject(error);
      }
      p.then(
        (result) => {
          run.settled = true;
          self.send({ type: 'tool.done', run, result });
        },
        (error: unknown) => {
          run.settled = true;
          self.send({ type: 'tool.error', run, error });
        },
      );
    },
    stopTool: ({ context }) => {
      if (context.toolRun && !context.toolRun.settled) context.toolRun.abort.abort();
    },
    assignIdentity: ({ context, event }) => {
      if (event.type !== 'call.identity') return;
      // An empty or missing id/name never overwrites a known one (SPEC §5.1).
      if (event.id) context.id = event.id;
      if (event.name) context.name = event.name;
    },
    assignOutcome: ({ context, event }) => {
      if (event.type !== 'call.complete') return;
      context.outcome = event.outcome;
      context.input = event.input;
      context.repaired = event.repaired ?? false;
    },
    markStreamEnded: ({ context }) => {
      context.streamEnded = true;
    },
    assignResult: ({ context, event }) => {
      if (event.type === 'call.settle' || event.type === 'tool.done') context.result = event.result;
      else if (event.type === 'tool.error') context.result = { ok: false, content: errorText(event.error) };
      else if (event.type === 'call.interrupt') context.result = INTERRUPTED;
    },
  },
}).createMachine({
  id: 'toolCall',
  context: ({ input }) => initialCallContext(input),
  output: ({ context, event }): CallDone => {
    const phase = (event as { output?: { phase?: CallDone['phase'] } }).output?.phase ?? 'discarded';
    const c = context;
    return phase === 'emittable'
      ? { index: c.index, attempt: c.attempt, phase, id: c.id, name: c.name, input: c.input, repaired: c.repaired }
      : { index: c.index, attempt: c.attempt, phase, result: c.result };
  },
  initial: 'streaming',
  on: {
    'call.identity': { actions: 'assignIdentity' },
    'stream.end': { actions: 'markStreamEnded' },
  },
  states: {
    streaming: {
      entry: { type: 'announce', params: { phase: 'streaming' } },
      on: {
        'call.complete': [
          // A gateway call ready at once ends here (its done event is its report).
          { guard: 'endsReadyOnComplete', target: 'ready', actions: 'assignOutcome' },
          // Passing `complete` on the way: only an inspector hears of it (`announce`).
          { guard: 'readyOnComplete', target: 'emittable', actions: ['assignOutcome', { type: 'announce', params: { phase: 'complete' } }] },
          { target: 'complete', actions: 'assignOutcome' },
        ],
        'call.discard': 'discarded',
      },
    },
    complete: {
      // Payload final but not ready yet (identity missing, empty arguments before the end of the stream).
      entry: 'reportWaiting',
      always: [
        { guard: 'endsReady', target: 'ready' },
        { guard: 'isReady', target: 'emittable' },
        { guard: 'judgedInvalid', target: 'invalid' },
      ],
      on: {
        // A later outcome (end-of-stream repair) replaces the earlier one.
        'call.complete': { actions: 'assignOutcome' },
        'call.discard': 'discarded',
      },
    },
    emittable: {
      entry: { type: 'report', params: { phase: 'emittable' } },
      on: {
        'call.release': [
          // Released and started at once: `released` is announced on the way (inspectors only).
          { guard: 'startOnRelease', target: 'running', actions: { type: 'announce', params: { phase: 'released' } } },
          { target: 'released' },
        ],
        'call.discard': 'discarded',
      },
    },
    released: {
      entry: { type: 'announce', params: { phase: 'released' } },
      on: {
        'call.start': 'running',
        'call.settle': { target: 'resulted', actions: 'assignResult' },
        'call.interrupt': { target: 'resulted', actions: 'assignResult' },
        'call.discard': 'discarded',
      },
    },
    running: {
      entry: [{ type: 'announce', params: { phase: 'running' } }, 'runTool'],
      on: {
        'tool.done': { target: 'resulted', actions: 'assignResult' },
        'tool.error': { target: 'resulted', actions: 'assignResult' },
        // Leaving `running` any other way stops the tool: its AbortSignal fires and a late result is
        // dropped. (On these two transitions, not as an exit action: the tool's own outcome, the
        // usual way out, needs no stopping, and an action costs even when it does nothing.)
        'call.interrupt': { target: 'resulted', actions: ['stopTool', 'assignResult'] },
        'call.discard': { target: 'discarded', actions: 'stopTool' },
      },
    },
    invalid: {
      entry: { type: 'report', params: { phase: 'invalid' } },
      on: {
        // The executor answers an invalid call with an error result; the gateway leaves it here.
        'call.settle': { target: 'resulted', actions: 'assignResult' },
        'call.discard': 'discarded',
      },
    },
    ready: {
      // A gateway call's actor ends ready: releasing it is the turn's act on its view (the actor
      // would only be stopped right after). Ending here unregisters it from the actor system.
      type: 'final',
      output: { phase: 'emittable' },
    },
    resulted: {
      type: 'final',
      entry: { type: 'announce', params: { phase: 'resulted' } },
      output: { phase: 'resulted' },
    },
    discarded: {
      type: 'final',
      entry: { type: 'announce', params: { phase: 'discarded' } },
      output: { phase: 'discarded' },
    },
  },
});

export type ToolCallMachine = typeof toolCallMachine;

/**
 * A plain call actor starts as `createActor(plainCallLogic, { src: toolCallMachine, snapshot:
 * initialCallSnapshot(input) })`.
 *
 * Its first snapshot is `streaming` with the context from its input: the state `toolCallMachine`
 * starts in, as `streaming` has no entry effect there (`announce` is a no-op;
 * `inspectedToolCallMachine()` starts the usual way, so an inspector sees its entry). It is a copy
 * of one snapshot resolved once (`resolveState`) with the call's own context and children.
 * Computing the initial state (a pre-initial snapshot, a context assign, the initial microstep and
 * macrostep) cost about a quarter of a gateway call; restoring a persisted one (state nodes, state
 * value, tags, a walk of the context) still about a tenth.
 *
 * `plainCallLogic` is `toolCallMachine` without `restoreSnapshot`: XState starts an actor whose
 * logic has none from the snapshot it is given, as it is. Everything else — transitions, the
 * snapshot's `machine` — is `toolCallMachine`'s, and `src` names it.
 */
export const plainCallLogic: ToolCallMachine = Object.create(toolCallMachine, { restoreSnapshot: { value: undefined } }) as ToolCallMachine;

let streamingSnapshot: SnapshotFrom<ToolCallMachine> | undefined;

export function initialCallSnapshot(input: ToolCallInput): SnapshotFrom<ToolCallMachine> {
  // XState never changes a snapshot in place: the copies may share the template's state nodes, tags and history.
  streamingSnapshot ??= toolCallMachine.resolveState({ value: 'streaming', context: initialCallContext({ index: -1, attempt: 0 }) });
  return { ...streamingSnapshot, context: initialCallContext(input), children: {} };
}

function statusReport({ context }: { context: ToolCallContext }, params: { phase: CallPhase }): CallStatusEvent {
  return {
    type: 'call.status',
    index: context.index,
    attempt: context.attempt,
    phase: params.phase,
    id: context.id,
    name: context.name,
    input: context.input,
    repaired: context.repaired,
    result: context.result,
  };
}

let inspected: ToolCallMachine | undefined;

/**
 * The call actor with every state entry reported to the turn (`call.status`), for inspectors:
 * the controller uses it when an `inspect` observer is given. The turn ignores the reports it
 * does not act on. Built on first use (`provide` copies the whole machine: about a tenth of
 * loading the library, which a process that never inspects a turn should not pay).
 */
export function inspectedToolCallMachine(): ToolCallMachine {
  inspected ??= toolCallMachine.provide({
    actions: {
      announce: sendParent(statusReport),
      reportWaiting: sendParent(({ context }) => statusReport({ context }, { phase: 'complete' })),
    },
  });
  return inspected;
}
