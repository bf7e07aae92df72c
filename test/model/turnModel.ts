import { and, assign, type EventObject, not, or, setup, stateIn, type SnapshotFrom } from 'xstate';

/**
 * The flattened turn model: a pure statechart (no spawn, no invoke, no delays) of one turn with
 * `n` tool calls, written from SPEC §5–§7 and independently of machines/turn.machine.ts (it must
 * not share code with the system under test, or a bug in the SUT's decisions would be copied into
 * the oracle).
 *
 * Regions (parallel):
 *   turn   streaming{open, finished} → draining → done{completed | failed | aborted | dropped},
 *          backoff (a retryable stream error on the first attempt; RETRY starts attempt 2)
 *   c0..c{n-1}, one per call of the current attempt:
 *          idle → streaming → complete → emittable → released{unrequested | pending | waiting}
 *               → running → resulted,   and discarded (its attempt was thrown away)
 *
 * Events are the environment only (what the model stream, the tools and the user do). Everything
 * the engine decides by itself (release, approval request, start, invalid at end of stream, turn
 * done) is an eventless `always` transition guarded by the rules below, so the Stately visualizer
 * shows the barriers by name.
 *
 * Bounds that keep the state space finite: exactly the call indices 0..n-1 (they open in index
 * order), at most one retry (two attempts), FINISH at most once per attempt, the arguments arrive
 * whole with the open (the byte path is covered by the property tests), completion is
 * evidence-only (EVIDENCE, FINISH or END completes a call).
 *
 * Canonical context: what a state no longer needs is forgotten (kind after a result, identity
 * after readiness), so states that behave the same are one vertex.
 *
 * Crash and resume (`{ crash: true }`, issue 14; SPEC-level contract in docs/durability.md): CRASH
 * stops the process in any live state (streaming, draining, backoff) — at most once per path — and
 * the turn waits in `crashed` (`live` or `backoff`) with every call where the journal left it;
 * nothing but RESUME can happen there. RESUME is `resumeTurn()` in a new process with the default
 * `onInterruptedStream: 'end'`:
 *   - the turn: from `crashed.live` the stream counts as ended (draining); from `crashed.backoff`
 *     (the attempt was discarded, no new one began) the turn fails;
 *   - calls never released (streaming, complete, emittable) are lost: idle;
 *   - released calls are released again (an approval that was asked but not answered is asked
 *     again; a recorded approval stands);
 *   - a running call (its `started` record is on disk, its result is not): a safe one runs again,
 *     an unsafe one gets the synthetic "outcome unknown" result and is NOT run again;
 *   - results are kept; tool runs of the crashed process never come back (no orphans).
 *
 * Result reuse on a retry (issue 20, M14; `policy.reuseResults: 'safe'`, the default): a `safe`
 * call (read-only, no approval) whose tool returned ok (TOOL_OK) in an attempt that a retry then
 * discards leaves its result behind (`reuse[i]`). In the next attempt the call at the same index
 * with the same kind is the same call (the harness writes a call's arguments from its index and
 * its tool name from its kind): once ready and past the release barrier it is answered with that
 * result (emittable → resulted, no tool run). A call of another kind drops the leftover.
 */

export type Kind = 'safe' | 'unsafe' | 'ask';
/** `ask` = a safe (read-only) tool that needs the user's approval. */
export const KINDS: readonly Kind[] = ['safe', 'unsafe', 'ask'];

export interface ModelCall {
  kind?: Kind;
  /** Identity (id + name) known. */
  id?: boolean;
}

export interface ModelContext {
  attempt: number;
  calls: ModelCall[];
  /**
   * Some tool run was in flight when its call was discarded or interrupted, and its result has
   * not come back yet. One flag, not a set: which runs they are does not change what the model
   * may do next (the harness keeps the set), and a set would multiply the state space.
   */
  orphans: boolean;
  /** Crashes so far (0 or 1: at most one per path). */
  crashes: number;
  /** Per call index: a discarded attempt's ok result of a safe call, not used yet (see above). */
  reuse: boolean[];
}

export type ModelEvent =
  | { type: 'OPEN'; i: number; kind: Kind; late: boolean }
  | { type: 'EVIDENCE'; i: number }
  | { type: 'IDENTITY'; i: number }
  | { type: 'FINISH' }
  | { type: 'END' }
  | { type: 'ERROR'; retryable: boolean }
  | { type: 'RETRY' }
  | { type: 'ABORT'; mode: 'commit' | 'drop' }
  | { type: 'TOOL_OK'; i: number }
  | { type: 'TOOL_ERROR'; i: number }
  | { type: 'APPROVE'; i: number }
  | { type: 'DENY'; i: number }
  /** Every orphaned tool run returns its (stale) result now; the engine must drop them. */
  | { type: 'STALE' }
  /** The process dies (kill -9): only the journal survives. */
  | { type: 'CRASH' }
  /** A new process resumes the turn from its journal. */
  | { type: 'RESUME' };

export type CallPhase =
  | 'idle'
  | 'streaming'
  | 'complete'
  | 'emittable'
  | 'released'
  | 'running'
  | 'resulted'
  | 'discarded';
export type ReleasedSub = 'unrequested' | 'pending' | 'waiting';
export type TurnPhase = 'streaming' | 'draining' | 'backoff' | 'done' | 'crashed';
export type DoneOutcome = 'completed' | 'failed' | 'aborted' | 'dropped';

export interface ModelOptions {
  /** Attempts allowed (1 = no retry). Default 2: at most one retry. */
  maxAttempts?: number;
  /** Call kinds the environment may open. Default all three. */
  kinds?: readonly Kind[];
  /** Offer calls whose identity arrives late. Default true. */
  lateIdentity?: boolean;
  /** Offer CRASH (once per path) and RESUME. Default false. */
  crash?: boolean;
}

const callEvent = (e: EventObject): number | undefined => (e as { i?: number }).i;

function setFlag(flags: boolean[], i: number, v: boolean): boolean[] {
  const out = flags.slice();
  out[i] = v;
  return out;
}

function setCall(ctx: ModelContext, i: number, c: ModelCall): ModelCall[] {
  const calls = ctx.calls.slice();
  calls[i] = c;
  return calls;
}

const machineSetup = setup({
  types: {
    context: {} as ModelContext,
    events: {} as ModelEvent,
  },
  guards: {
    forCall: ({ event }, p: { i: number }) => callEvent(event) === p.i,
    kindIs: ({ context }, p: { i: number; kind: Kind }) => context.calls[p.i]?.kind === p.kind,
    hasIdentity: ({ context }, p: { i: number }) => context.calls[p.i]?.id === true,
    canRetry: ({ context, event }, p: { maxAttempts: number }) =>
      event.type === 'ERROR' && event.retryable && context.attempt < p.maxAttempts,
    canRetryCut: ({ context }, p: { maxAttempts: number }) => context.attempt < p.maxAttempts,
    abortIs: ({ event }, p: { mode: 'commit' | 'drop' }) => event.type === 'ABORT' && event.mode === p.mode,
    hasOrphans: ({ context }) => context.orphans,
    canCrash: ({ context }) => context.crashes < 1,
    hasReuse: ({ context }, p: { i: number }) => context.reuse[p.i] === true,
  },
  actions: {
    openCall: assign(({ context, event }, p: { i: number }) =>
      event.type === 'OPEN'
        ? {
            calls: setCall(context, p.i, { kind: event.kind, id: !event.late }),
            // Another kind is another tool: the leftover result is not this call's.
            ...(context.reuse[p.i] && event.kind !== 'safe' ? { reuse: setFlag(context.reuse, p.i, false) } : {}),
          }
        : {},
    ),
    /** A safe call's tool returned ok: a retry may reuse the result (only while a retry can still come). */
    keepResult: assign(({ context }, p: { i: number; maxAttempts: number }) =>
      context.calls[p.i]?.kind === 'safe' && context.attempt < p.maxAttempts ? { reuse: setFlag(context.reuse, p.i, true) } : {},
    ),
    useResult: assign(({ context }, p: { i: number }) => ({ reuse: setFlag(context.reuse, p.i, false) })),
    giveIdentity: assign(({ context }, p: { i: number }) => ({
      calls: setCall(context, p.i, { ...context.calls[p.i], id: true }),
    })),
    /** Ready: identity no longer matters, only the kind. */
    keepKind: assign(({ context }, p: { i: number }) => ({ calls: setCall(context, p.i, { kind: context.calls[p.i]?.kind }) })),
    forget: assign(({ context }, p: { i: number }) =>
      Object.keys(context.calls[p.i] ?? {}).length === 0 ? {} : { calls: setCall(context, p.i, {}) },
    ),
    addOrphan: assign({ orphans: true }),
    clearOrphans: assign({ orphans: false }),
    nextAttempt: assign(({ context }) => ({ attempt: context.attempt + 1, calls: context.calls.map(() => ({})) })),
    /** The process died: its tool runs never come back. */
    crash: assign(({ context }) => ({ crashes: context.crashes + 1, orphans: false })),
  },
});

/**
 * Guards of the generated config. The config is built in a loop for any n, so guards are plain
 * values here; `and`/`or`/`not` get them through these casts, and the config is checked by the
 * model tests (reachability, invariants, replay), not by the type system.
 */
type Guard = unknown;
const AND = (gs: Guard[]): Guard => and(gs as Parameters<typeof and>[0]);
const OR = (gs: Guard[]): Guard => or(gs as Parameters<typeof or>[0]);
const NOT = (g: Guard): Guard => not(g as Parameters<typeof not>[0]);

/** The machine for `n` calls. */
export function createTurnModel(n: number, options: ModelOptions = {}) {
  const maxAttempts = options.maxAttempts ?? 2;
  const c = (j: number) => `c${j}`;
  const inPhase = (j: number, phase: CallPhase): Guard => stateIn({ [c(j)]: phase });
  const forCall = (i: number): Guard => ({ type: 'forCall', params: { i } });
  const kindIs = (i: number, kind: Kind): Guard => ({ type: 'kindIs', params: { i, kind } });
  const all = (gs: Guard[]): Guard => (gs.length === 1 ? gs[0]! : AND(gs));
  const range = (k: number) => Array.from({ length: k }, (_, j) => j);

  const turnStreaming: Guard = stateIn({ turn: 'streaming' });
  /** Streaming and no FINISH yet: an END now is a cut stream (SPEC §12), a retryable error. */
  const turnOpen: Guard = stateIn({ turn: { streaming: 'open' } });
  const notCrashed: Guard = NOT(stateIn({ turn: 'crashed' }));
  const crashedLive: Guard = stateIn({ turn: { crashed: 'live' } });
  const turnLive: Guard = OR([stateIn({ turn: 'streaming' }), stateIn({ turn: 'draining' })]);
  const streamEnded: Guard = stateIn({ turn: 'draining' });

  /** SPEC §5.2 ordered prefix: every earlier call is released (or beyond). */
  const releaseBarrier = (i: number): Guard | undefined =>
    i === 0
      ? undefined
      : all(range(i).map((j) => OR([inPhase(j, 'released'), inPhase(j, 'running'), inPhase(j, 'resulted')])));
  /** SPEC §6.3: a safe call may start unless an earlier unsafe call has not resulted. */
  const noEarlierUnsafePending = (i: number): Guard | undefined =>
    i === 0 ? undefined : all(range(i).map((j) => OR([NOT(kindIs(j, 'unsafe')), inPhase(j, 'resulted')])));
  /** SPEC §6.4: unsafe only after the stream ended and every earlier call resulted; one at a time. */
  const unsafeMayStart = (i: number): Guard =>
    all([
      streamEnded,
      ...range(i).map((j) => inPhase(j, 'resulted')),
      ...range(n)
        .filter((j) => j !== i)
        .map((j) => NOT(inPhase(j, 'running'))),
    ]);
  const withGuard = <T extends object>(t: T, g: Guard | undefined) => (g === undefined ? t : { ...t, guard: g });
  const act = (type: string, i: number) => ({ type, params: { i } });

  // Environment transitions shared by several phases of a call.
  const onError = (i: number, orphan = false) => ({
    guard: turnStreaming,
    target: 'discarded',
    actions: orphan ? [act('addOrphan', i)] : [],
  });
  /** END before FINISH: the stream was cut (stream_truncated), the call goes as on a retryable ERROR. */
  const onCut = (i: number, orphan = false) => ({
    guard: turnOpen,
    target: 'discarded',
    actions: orphan ? [act('addOrphan', i)] : [],
  });
  const onAbort = (i: number, commitTarget: CallPhase | undefined, orphan = false) => [
    {
      guard: AND([turnLive, { type: 'abortIs', params: { mode: 'drop' } }]),
      target: 'discarded',
      actions: orphan ? [act('addOrphan', i)] : [],
    },
    ...(commitTarget
      ? [
          {
            guard: AND([turnLive, { type: 'abortIs', params: { mode: 'commit' } }]),
            target: commitTarget,
            actions: orphan ? [act('addOrphan', i)] : [],
          },
        ]
      : []),
  ];
  const identity = (i: number) => ({
    guard: AND([forCall(i), NOT({ type: 'hasIdentity', params: { i } }), turnStreaming]),
    actions: act('giveIdentity', i),
  });

  const callRegion = (i: number) => ({
    initial: 'idle',
    states: {
      idle: {
        entry: act('forget', i),
        on: {
          OPEN: {
            guard: all([
              forCall(i),
              stateIn({ turn: { streaming: 'open' } }),
              ...(i > 0 ? [NOT(inPhase(i - 1, 'idle'))] : []),
            ]),
            target: 'streaming',
            actions: act('openCall', i),
          },
        },
      },
      streaming: {
        on: {
          RESUME: { guard: crashedLive, target: 'idle' },
          EVIDENCE: { guard: AND([forCall(i), notCrashed]), target: 'complete' },
          FINISH: { guard: notCrashed, target: 'complete' },
          IDENTITY: identity(i),
          ERROR: onError(i), END: onCut(i),
          ABORT: onAbort(i, 'discarded'),
        },
      },
      complete: {
        always: [
          { guard: { type: 'hasIdentity', params: { i } }, target: 'emittable', actions: act('keepKind', i) },
          // Judged invalid at end of stream; the executor answers it with an error result at once.
          { guard: streamEnded, target: 'resulted' },
        ],
        on: { RESUME: { guard: crashedLive, target: 'idle' }, IDENTITY: identity(i), ERROR: onError(i), END: onCut(i), ABORT: onAbort(i, 'discarded') },
      },
      emittable: {
        always: [
          // A retry repeats a call whose ok result a discarded attempt left: answered at its release.
          withGuard(
            { target: 'resulted', actions: act('useResult', i) },
            all([{ type: 'hasReuse', params: { i } }, kindIs(i, 'safe'), ...(i > 0 ? [releaseBarrier(i)!] : [])]),
          ),
          withGuard({ target: 'released.unrequested' }, all([kindIs(i, 'ask'), ...(i > 0 ? [releaseBarrier(i)!] : [])])),
          withGuard({ target: 'released.waiting' }, releaseBarrier(i)),
        ],
        on: { RESUME: { guard: crashedLive, target: 'idle' }, ERROR: onError(i), END: onCut(i), ABORT: onAbort(i, 'discarded') },
      },
      released: {
        // Always entered through an explicit child (`unrequested` or `waiting`).
        initial: 'waiting',
        states: {
          unrequested: {
            always: withGuard({ target: 'pending' }, noEarlierUnsafePending(i)),
          },
          pending: {
            on: {
              APPROVE: { guard: AND([forCall(i), notCrashed]), target: 'waiting' },
              DENY: { guard: AND([forCall(i), notCrashed]), target: `#turnModel.${c(i)}.resulted` },
              // Asked, not answered: the new process asks again.
              RESUME: { guard: crashedLive, target: 'unrequested' },
            },
          },
          waiting: {
            always: [
              { guard: AND([kindIs(i, 'unsafe'), unsafeMayStart(i)]), target: `#turnModel.${c(i)}.running` },
              withGuard(
                { target: `#turnModel.${c(i)}.running` },
                all([NOT(kindIs(i, 'unsafe')), ...(i > 0 ? [noEarlierUnsafePending(i)!] : [])]),
              ),
            ],
          },
        },
        on: { ERROR: onError(i), END: onCut(i), ABORT: onAbort(i, 'resulted') },
      },
      running: {
        on: {
          // Started, no result on disk: an unsafe tool is not run again (outcome unknown); a safe one is.
          RESUME: [
            { guard: AND([crashedLive, kindIs(i, 'unsafe')]), target: 'resulted' },
            { guard: crashedLive, target: 'running', reenter: true },
          ],
          TOOL_OK: { guard: AND([forCall(i), notCrashed]), target: 'resulted', actions: { type: 'keepResult', params: { i, maxAttempts } } },
          TOOL_ERROR: { guard: AND([forCall(i), notCrashed]), target: 'resulted' },
          ERROR: onError(i, true), END: onCut(i, true),
          ABORT: onAbort(i, 'resulted', true),
        },
      },
      resulted: {
        entry: act('forget', i),
        on: { ERROR: onError(i), END: onCut(i), ABORT: onAbort(i, undefined) },
      },
      discarded: {
        entry: act('forget', i),
        on: { RETRY: { guard: stateIn({ turn: 'backoff' }), target: 'idle' } },
      },
    },
  });

  const allSettled = all(range(n).map((j) => OR([inPhase(j, 'idle'), inPhase(j, 'resulted')])));
  const crash = (where: 'live' | 'backoff') => ({
    guard: 'canCrash',
    target: `#turnModel.turn.crashed.${where}`,
    actions: 'crash',
  });
  const abortTurn = [
    { guard: { type: 'abortIs', params: { mode: 'drop' } }, target: '#turnModel.turn.done.dropped' },
    { target: '#turnModel.turn.done.aborted' },
  ];

  const regions: Record<string, unknown> = {
    turn: {
      initial: 'streaming',
      states: {
        streaming: {
          initial: 'open',
          states: {
            // END before FINISH: the stream ended without its terminal signal (SPEC §12) — a
            // retryable error (stream_truncated): backoff while a retry may come, else failed.
            open: {
              on: {
                FINISH: 'finished',
                END: [{ guard: { type: 'canRetryCut', params: { maxAttempts } }, target: '#turnModel.turn.backoff' }, { target: '#turnModel.turn.done.failed' }],
              },
            },
            finished: { on: { END: '#turnModel.turn.draining' } },
          },
          on: {
            CRASH: crash('live'),
            ERROR: [
              { guard: { type: 'canRetry', params: { maxAttempts } }, target: 'backoff' },
              { target: 'done.failed' },
            ],
            ABORT: abortTurn,
          },
        },
        draining: {
          always: { guard: allSettled, target: 'done.completed' },
          on: { ABORT: abortTurn, CRASH: crash('live') },
        },
        backoff: {
          on: { RETRY: { target: 'streaming', actions: 'nextAttempt' }, ABORT: 'done.dropped', CRASH: crash('backoff') },
        },
        crashed: {
          initial: 'live',
          states: {
            live: { on: { RESUME: '#turnModel.turn.draining' } },
            // The discarded attempt's retry never began: the resumed turn fails.
            backoff: { on: { RESUME: '#turnModel.turn.done.failed' } },
          },
        },
        done: { initial: 'completed', states: { completed: {}, failed: {}, aborted: {}, dropped: {} } },
      },
    },
  };
  for (const i of range(n)) regions[c(i)] = callRegion(i);

  return machineSetup.createMachine({
    id: 'turnModel',
    type: 'parallel',
    context: { attempt: 1, calls: range(n).map(() => ({})), orphans: false, crashes: 0, reuse: range(n).map(() => false) },
    on: { STALE: { guard: 'hasOrphans', actions: 'clearOrphans' } },
    // The config is generated for any n; its shape is checked by the model tests (reachability,
    // invariants), not by the type system.
    states: regions as Parameters<typeof machineSetup.createMachine>[0]['states'],
  });
}

export type TurnModel = ReturnType<typeof createTurnModel>;
export type ModelSnapshot = SnapshotFrom<TurnModel>;

// ---------------------------------------------------------------- reading a model snapshot

type StateValueObj = { [k: string]: string | StateValueObj };

export function turnPhase(s: ModelSnapshot): TurnPhase {
  const v = (s.value as StateValueObj).turn;
  return (typeof v === 'string' ? v : Object.keys(v)[0]) as TurnPhase;
}

export function doneOutcome(s: ModelSnapshot): DoneOutcome | undefined {
  const v = (s.value as StateValueObj).turn;
  return typeof v === 'object' && 'done' in v ? ((v as { done: string }).done as DoneOutcome) : undefined;
}

export function streamFinished(s: ModelSnapshot): boolean {
  const v = (s.value as StateValueObj).turn;
  return typeof v === 'object' && (v as { streaming?: string }).streaming === 'finished';
}

/** Where a crashed turn was: 'live' (streaming or draining) or 'backoff'. */
export function crashedFrom(s: ModelSnapshot): 'live' | 'backoff' | undefined {
  const v = (s.value as StateValueObj).turn;
  return typeof v === 'object' && 'crashed' in v ? ((v as { crashed: string }).crashed as 'live' | 'backoff') : undefined;
}

export function callPhase(s: ModelSnapshot, i: number): CallPhase {
  const v = (s.value as StateValueObj)[`c${i}`];
  return (typeof v === 'string' ? v : Object.keys(v!)[0]) as CallPhase;
}

export function releasedSub(s: ModelSnapshot, i: number): ReleasedSub | undefined {
  const v = (s.value as StateValueObj)[`c${i}`];
  return typeof v === 'object' && 'released' in v ? ((v as { released: string }).released as ReleasedSub) : undefined;
}

export function callCount(s: ModelSnapshot): number {
  return s.context.calls.length;
}

/** A short readable form of a model state, e.g. `streaming/open a1 [released.waiting(safe), streaming(unsafe,late)]`. */
export function describeState(s: ModelSnapshot): string {
  const n = callCount(s);
  const turn = turnPhase(s);
  const sub =
    turn === 'done'
      ? `.${doneOutcome(s)}`
      : turn === 'streaming'
        ? streamFinished(s)
          ? '/finished'
          : '/open'
        : turn === 'crashed'
          ? `.${crashedFrom(s)}`
          : '';
  const calls = Array.from({ length: n }, (_, i) => {
    const p = callPhase(s, i);
    const r = releasedSub(s, i);
    const ci = s.context.calls[i] ?? {};
    const tags = [ci.kind, ci.id === false ? 'late' : undefined].filter(Boolean).join(',');
    return `${p}${r ? `.${r}` : ''}${tags ? `(${tags})` : ''}`;
  });
  const orphans = (s.context.orphans ? ' +orphans' : '') + (s.context.reuse.some(Boolean) ? ` +reuse(${s.context.reuse.flatMap((r, i) => (r ? [i] : [])).join(',')})` : '');
  const crashed = s.context.crashes > 0 && turn !== 'crashed' ? ' (resumed)' : '';
  return `${turn}${sub} a${s.context.attempt} [${calls.join(', ')}]${orphans}${crashed}`;
}

export function describeEvent(e: ModelEvent): string {
  switch (e.type) {
    case 'OPEN':
      return `OPEN(${e.i},${e.kind}${e.late ? ',late' : ''})`;
    case 'ERROR':
      return `ERROR(${e.retryable ? 'retryable' : 'fatal'})`;
    case 'ABORT':
      return `ABORT(${e.mode})`;
    case 'STALE':
    case 'CRASH':
    case 'RESUME':
    case 'FINISH':
    case 'END':
    case 'RETRY':
      return e.type;
    default:
      return `${e.type}(${e.i})`;
  }
}

// ---------------------------------------------------------------- the environment alphabet

/**
 * The environment events worth trying in `s`: a cheap pre-selection by phase (e.g. TOOL_OK only
 * for a running call). The model decides what is really enabled (`enabledEvents` filters with
 * `s.can`), so this list may be generous but must never miss an enabled event; the model tests
 * check that against the full alphabet (`fullAlphabet`).
 */
export function candidateEvents(s: ModelSnapshot, options: ModelOptions = {}): ModelEvent[] {
  const kinds = options.kinds ?? KINDS;
  const late = options.lateIdentity ?? true;
  const n = callCount(s);
  const out: ModelEvent[] = [];
  const turn = turnPhase(s);
  if (turn === 'crashed') return [{ type: 'RESUME' }];
  if (options.crash && turn !== 'done' && s.context.crashes < 1) out.push({ type: 'CRASH' });
  if (turn === 'streaming') {
    for (let i = 0; i < n; i++) {
      if (callPhase(s, i) !== 'idle') continue;
      for (const kind of kinds) {
        out.push({ type: 'OPEN', i, kind, late: false });
        if (late) out.push({ type: 'OPEN', i, kind, late: true });
      }
      break; // calls open in index order
    }
    for (let i = 0; i < n; i++) {
      const p = callPhase(s, i);
      if (p === 'streaming') out.push({ type: 'EVIDENCE', i });
      if ((p === 'streaming' || p === 'complete') && s.context.calls[i]?.id === false) out.push({ type: 'IDENTITY', i });
    }
    out.push({ type: 'FINISH' }, { type: 'END' }, { type: 'ERROR', retryable: true }, { type: 'ERROR', retryable: false });
  }
  if (turn === 'backoff') out.push({ type: 'RETRY' });
  if (turn !== 'done') out.push({ type: 'ABORT', mode: 'commit' }, { type: 'ABORT', mode: 'drop' });
  for (let i = 0; i < n; i++) {
    const p = callPhase(s, i);
    if (p === 'running') out.push({ type: 'TOOL_OK', i }, { type: 'TOOL_ERROR', i });
    if (p === 'released') out.push({ type: 'APPROVE', i }, { type: 'DENY', i });
  }
  if (s.context.orphans) out.push({ type: 'STALE' });
  return out;
}

/** Every event of the environment alphabet for `n` calls, in every state (for checking `candidateEvents`). */
export function fullAlphabet(n: number, options: ModelOptions = {}): ModelEvent[] {
  const out: ModelEvent[] = [];
  for (let i = 0; i < n; i++) {
    for (const kind of options.kinds ?? KINDS) {
      out.push({ type: 'OPEN', i, kind, late: false }, { type: 'OPEN', i, kind, late: true });
    }
    for (const type of ['EVIDENCE', 'IDENTITY', 'TOOL_OK', 'TOOL_ERROR', 'APPROVE', 'DENY'] as const) out.push({ type, i });
  }
  out.push(
    { type: 'FINISH' },
    { type: 'END' },
    { type: 'ERROR', retryable: true },
    { type: 'ERROR', retryable: false },
    { type: 'RETRY' },
    { type: 'ABORT', mode: 'commit' },
    { type: 'ABORT', mode: 'drop' },
    { type: 'STALE' },
  );
  if (options.crash) out.push({ type: 'CRASH' }, { type: 'RESUME' });
  return out;
}

/** The events enabled in `s` (a transition would be taken). */
export function enabledEvents(s: ModelSnapshot, options: ModelOptions = {}): ModelEvent[] {
  return candidateEvents(s, options).filter((e) => s.can(e));
}
