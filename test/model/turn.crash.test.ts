import { canReach } from './paths';
import { DEEP, describeFailures, graphFor, pathSets, replaySet, report, type SetResult } from './run';
import { callCount, callPhase, describeState, enabledEvents, fullAlphabet, turnPhase } from './turnModel';

/**
 * Crash and resume in the flattened turn model (issue 14): the model may CRASH in any live state
 * (once per path) and RESUME from the journal (test/model/turnModel.ts, `{ crash: true }`). Paths
 * are replayed on the real system: a TurnController journaled by a TurnJournal; CRASH drops it
 * with its tool runs; RESUME is the real `resumeTurn()` on the journal. Every step compares the
 * real actors (or, while crashed, the journal) with the model and checks I1–I6, and a resumed
 * turn's journal trace must satisfy I4–I6 too (test/model/harness.ts).
 *
 * N = 1 and 2: edge-cover paths (100% of the transitions) and, for N = 1, shortest paths to every
 * state; N = 2 shortest paths with SLUICE_DEEP=1.
 */

const results: SetResult[] = [];

describe.each([1, 2])('turn model with crash and resume, N = %i calls', (n) => {
  const g = graphFor(n, { crash: true });
  const sets = pathSets(g);

  test('the model has crash and resume transitions, and its crashed states are all reached', () => {
    const kinds = new Set(g.edges.map((e) => e.event.type));
    expect(kinds.has('CRASH')).toBe(true);
    expect(kinds.has('RESUME')).toBe(true);
    const ids = new Set<string>();
    for (const st of g.states) for (const node of st._nodes) ids.add(node.id);
    expect(['turnModel.turn.crashed.live', 'turnModel.turn.crashed.backoff'].filter((id) => !ids.has(id))).toEqual([]);
  });

  test('model checking: a crashed turn can always be resumed to the end; while crashed nothing runs or changes', () => {
    const ok = canReach(g, (st) => turnPhase(st) === 'done' && !st.context.orphans);
    expect(g.states.filter((_, v) => !ok[v]).map(describeState).slice(0, 5)).toEqual([]);
    const bad: string[] = [];
    g.states.forEach((st, v) => {
      if (turnPhase(st) !== 'crashed') return;
      const evs = g.out[v]!.map((e) => g.edges[e]!.event.type);
      if (evs.join() !== 'RESUME') bad.push(`${describeState(st)}: ${evs.join()}`);
    });
    expect(bad.slice(0, 5)).toEqual([]);
    // After a resume nothing streams any more: no call of the resumed turn is still pending.
    const pendingAfterResume = g.states.filter(
      (st) => st.context.crashes > 0 && turnPhase(st) !== 'crashed' && Array.from({ length: callCount(st) }, (_, i) => callPhase(st, i)).some((p) => p === 'streaming' || p === 'complete' || p === 'emittable'),
    );
    expect(pendingAfterResume.map(describeState).slice(0, 5)).toEqual([]);
  });

  test('the event pre-selection misses nothing the full alphabet would enable', () => {
    const alphabet = fullAlphabet(n, { crash: true });
    const missed: string[] = [];
    for (const st of g.states) {
      const chosen = new Set(enabledEvents(st, { crash: true }).map((e) => JSON.stringify(e)));
      for (const e of alphabet) if (st.can(e) && !chosen.has(JSON.stringify(e))) missed.push(`${JSON.stringify(e)} in ${describeState(st)}`);
    }
    expect(missed.slice(0, 5)).toEqual([]);
  });

  test('edge-covering paths: every transition, crashes and resumes included, replayed on the real system', async () => {
    const r = await replaySet('edge-cover', g, sets.edges);
    results.push(r);
    expect(describeFailures(r.failures)).toBe('');
    expect(r.stats.violations).toBe(0);
    expect(r.stats.coveredEdges.size).toBe(g.edges.length);
  }, 600_000);

  (n === 1 || DEEP ? test : test.skip)('shortest paths: every reachable state replayed', async () => {
    const r = await replaySet('shortest', g, sets.shortest);
    results.push(r);
    expect(describeFailures(r.failures)).toBe('');
    expect(r.stats.violations).toBe(0);
  }, 600_000);
});

// The crash paths can fail: each mutation of the durability contract is caught.
describe('crash/resume mutations (N = 1 edge-cover paths)', () => {
  const g = graphFor(1, { crash: true });
  const paths = pathSets(g).edges;

  test('a journal without write-ahead `started` records is caught', async () => {
    const r = await replaySet('mutant', g, paths, { mutateLoseStarts: true });
    expect(r.failures.length).toBeGreaterThan(0);
    expect(describeFailures(r.failures, 1)).toMatch(/started \(write-ahead\)/);
  });

  test('re-running an unsafe tool whose outcome the crash hid is caught', async () => {
    const r = await replaySet('mutant', g, paths, { mutateAllIdempotent: true });
    expect(r.failures.length).toBeGreaterThan(0);
    expect(describeFailures(r.failures, 1)).toMatch(/SUT (running|draining), model (resulted|done)/);
  });
});

afterAll(() => {
  const lines = ['── crash/resume model paths on the real turn actor + resumeTurn ───────────'];
  for (const r of results) {
    const g = graphFor(r.n, { crash: true });
    lines.push(
      `N=${r.n} ${r.label.padEnd(10)} states ${g.states.length}, transitions ${g.edges.length}, covered ${r.stats.coveredEdges.size}, ` +
        `paths ${r.paths} (longest ${r.longest}), steps ${r.stats.steps}, comparisons ${r.stats.checks}, ` +
        `violations ${r.stats.violations}, mismatches ${r.stats.mismatches}, ${(r.ms / 1000).toFixed(1)} s`,
    );
  }
  report(lines);
});
