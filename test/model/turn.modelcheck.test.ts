import { canReach, type ModelGraph } from './paths';
import { graphFor, report } from './run';
import {
  callCount,
  callPhase,
  type CallPhase,
  describeState,
  doneOutcome,
  enabledEvents,
  fullAlphabet,
  type ModelSnapshot,
  releasedSub,
  turnPhase,
} from './turnModel';

/**
 * Model checking: state invariants asserted on every reachable state of the turn model
 * (the adjacency map built by xstate/graph), N = 1..3. These check the model against SPEC §5–§7;
 * the replay tests then check the real actors against the model.
 */

type Invariant = { name: string; holds: (s: ModelSnapshot, g: ModelGraph, v: number) => boolean };

const pending = (p: CallPhase) => p === 'streaming' || p === 'complete' || p === 'emittable';
const range = (s: ModelSnapshot) => Array.from({ length: callCount(s) }, (_, i) => i);

const INVARIANTS: Invariant[] = [
  {
    name: 'ordered prefix: no call is released while an earlier one is still pending (§5.2)',
    holds: (s) =>
      range(s).every(
        (i) => !pending(callPhase(s, i)) || range(s).every((j) => j <= i || !['released', 'running', 'resulted'].includes(callPhase(s, j))),
      ),
  },
  {
    name: 'an unsafe tool runs only after the stream ended, after every earlier call resulted, alone (§6.4, I5)',
    holds: (s) =>
      range(s).every(
        (i) =>
          callPhase(s, i) !== 'running' ||
          s.context.calls[i]?.kind !== 'unsafe' ||
          (turnPhase(s) !== 'streaming' &&
            range(s).every((j) => (j < i ? callPhase(s, j) === 'resulted' : j === i || callPhase(s, j) !== 'running'))),
      ),
  },
  {
    name: 'a safe tool never runs while an earlier unsafe call has no result (§6.3)',
    holds: (s) =>
      range(s).every(
        (i) =>
          callPhase(s, i) !== 'running' ||
          s.context.calls[i]?.kind === 'unsafe' ||
          range(s).every((j) => j >= i || s.context.calls[j]?.kind !== 'unsafe' || callPhase(s, j) === 'resulted'),
      ),
  },
  {
    name: 'only calls that need approval wait for it (§6.5)',
    holds: (s) =>
      range(s).every((i) => {
        const sub = releasedSub(s, i);
        return (sub !== 'pending' && sub !== 'unrequested') || s.context.calls[i]?.kind === 'ask';
      }),
  },
  {
    name: 'a finished turn has nothing pending, released or running (I1)',
    holds: (s) => turnPhase(s) !== 'done' || range(s).every((i) => ['idle', 'resulted', 'discarded'].includes(callPhase(s, i))),
  },
  {
    name: 'end of stream releases everything that can be released; the rest is judged invalid (§5.3)',
    holds: (s) => turnPhase(s) !== 'draining' || range(s).every((i) => !pending(callPhase(s, i))),
  },
  {
    name: 'draining always waits on something external (a running tool or an approval): no stuck drain',
    holds: (s) =>
      turnPhase(s) !== 'draining' || range(s).some((i) => callPhase(s, i) === 'running' || releasedSub(s, i) === 'pending'),
  },
  {
    name: 'discarded calls exist only once the attempt was thrown away (§6.7, §6.8)',
    holds: (s) =>
      range(s).every((i) => callPhase(s, i) !== 'discarded' || turnPhase(s) === 'backoff' || turnPhase(s) === 'done'),
  },
  {
    name: 'a completed turn discarded nothing; a dropped or failed turn keeps no result (I4)',
    holds: (s) => {
      const o = doneOutcome(s);
      if (o === 'completed') return range(s).every((i) => callPhase(s, i) !== 'discarded');
      if (o === 'dropped' || o === 'failed') return range(s).every((i) => callPhase(s, i) !== 'resulted');
      return true;
    },
  },
  {
    name: 'at most one retry (the environment bound) and a second attempt starts clean',
    holds: (s) => s.context.attempt <= 2,
  },
  {
    name: 'no deadlock: every unfinished state has an enabled environment event',
    holds: (s, g, v) => turnPhase(s) === 'done' || g.out[v]!.length > 0,
  },
  {
    name: 'orphaned tool runs can always still deliver their (stale) result',
    holds: (s, g, v) => !s.context.orphans || g.out[v]!.some((e) => g.edges[e]!.event.type === 'STALE'),
  },
];

const NS = [1, 2, 3];
const lines: string[] = ['── model checking over the adjacency map ──────────────────────────────────'];

describe.each(NS)('turn model checking, N = %i calls', (n) => {
  let g: ModelGraph;
  beforeAll(() => {
    g = graphFor(n);
  });

  test('every reachable state satisfies the state invariants', () => {
    const failures: string[] = [];
    let evaluations = 0;
    for (let v = 0; v < g.states.length; v++) {
      const s = g.states[v]!;
      for (const inv of INVARIANTS) {
        evaluations++;
        if (!inv.holds(s, g, v) && failures.length < 10) failures.push(`${inv.name}: ${describeState(s)}`);
      }
    }
    expect(failures).toEqual([]);
    lines.push(
      `N=${n}: ${g.states.length} reachable states, ${g.edges.length} transitions, ${INVARIANTS.length} invariants, ` +
        `${evaluations} evaluations, 0 violations (graph ${(g.buildMs / 1000).toFixed(1)} s)`,
    );
  }, 300_000);

  test('liveness: from every reachable state the turn can still finish', () => {
    const ok = canReach(g, (s) => turnPhase(s) === 'done' && !s.context.orphans);
    const stuck = g.states.filter((_, v) => !ok[v]).map(describeState);
    expect(stuck.slice(0, 5)).toEqual([]);
  }, 300_000);

  test('every state node of the model is reachable as a stable state (except the transient ones of call 0)', () => {
    const ids = new Set<string>();
    for (const s of g.states) for (const node of s._nodes) ids.add(node.id);
    const all = new Set<string>();
    const walk = (node: (typeof g.model)['root']) => {
      all.add(node.id);
      for (const child of Object.values(node.states)) walk(child);
    };
    walk(g.model.root);
    // Call 0 has no earlier call to wait for: it passes through `emittable` and
    // `released.unrequested` within the step that makes it ready.
    // `turn.crashed` is reachable only in the crash model ({ crash: true }: turn.crash.test.ts).
    const unreached = [...all].filter((id) => !ids.has(id) && !id.startsWith('turnModel.turn.crashed'));
    expect(unreached).toEqual(['turnModel.c0.emittable', 'turnModel.c0.released.unrequested']);
  });

  if (n <= 2) {
    test('the event pre-selection misses nothing the full alphabet would enable', () => {
      const alphabet = fullAlphabet(n);
      const missed: string[] = [];
      for (const s of g.states) {
        const chosen = new Set(enabledEvents(s).map((e) => JSON.stringify(e)));
        for (const e of alphabet) if (s.can(e) && !chosen.has(JSON.stringify(e))) missed.push(`${JSON.stringify(e)} in ${describeState(s)}`);
      }
      expect(missed.slice(0, 5)).toEqual([]);
    }, 120_000);
  }
});

afterAll(() => report(lines));
