import { DEEP, describeFailures, graphFor, KNOWN_BUGS, pathSets, replaySet, report, type SetResult } from './run';

/**
 * Model-based tests: paths generated from the flattened turn model (test/model/turnModel.ts) with
 * xstate/graph are replayed on the real turn actor (TurnController: real turn machine, spawned call
 * actors, scripted tools, virtual clock). Every step compares each call's real state with the model
 * and checks I1–I6 (test/model/harness.ts).
 *
 * N = 1 and 2 in every run; N = 3 with SLUICE_DEEP=1 (`npm run test:deep`).
 */

const NS = DEEP ? [1, 2, 3] : [1, 2];
const results: SetResult[] = [];

describe.each(NS)('turn model, N = %i calls', (n) => {
  const g = graphFor(n);
  const sets = pathSets(g);

  test(`edge-covering paths: every model transition replayed on the real turn actor`, async () => {
    const r = await replaySet('edge-cover', g, sets.edges);
    results.push(r);
    expect(describeFailures(r.failures)).toBe('');
    expect(r.stats.violations).toBe(0);
    // 100% transition coverage, measured from what was replayed (not assumed from the generator).
    expect(r.stats.coveredEdges.size).toBe(g.edges.length);
  }, 600_000);

  test(`shortest paths (xstate/graph getShortestPaths): every reachable model state replayed`, async () => {
    const r = await replaySet('shortest', g, sets.shortest);
    results.push(r);
    expect(describeFailures(r.failures)).toBe('');
    expect(r.stats.violations).toBe(0);
    const reached = new Set<number>([0]);
    for (const p of sets.shortest) for (const s of p.steps) reached.add(g.edges[s.edge]!.to);
    expect(reached.size).toBe(g.states.length);
  }, 600_000);
});

afterAll(() => {
  const lines = ['── model-based replay on the real turn actor ─────────────────────────────'];
  for (const n of NS) {
    const g = graphFor(n);
    const rs = results.filter((r) => r.n === n);
    const covered = new Set<number>();
    for (const r of rs) for (const e of r.stats.coveredEdges) covered.add(e);
    lines.push(
      `N=${n}: model states ${g.states.length}, transitions covered ${covered.size}/${g.edges.length} ` +
        `(${((100 * covered.size) / Math.max(1, g.edges.length)).toFixed(1)}%), graph built in ${(g.buildMs / 1000).toFixed(1)} s`,
    );
    for (const r of rs) {
      const known = [...r.stats.known].map(([id, k]) => `${id} on ${k} paths`).join(', ');
      lines.push(
        `  ${r.label.padEnd(10)} paths ${String(r.paths).padStart(6)} (longest ${r.longest} steps), steps ${r.stats.steps}, ` +
          `SUT/model comparisons ${r.stats.checks}, invariant checks ${r.stats.invariantChecks}, ` +
          `violations ${r.stats.violations}, mismatches ${r.stats.mismatches}, ${(r.ms / 1000).toFixed(1)} s` +
          (known ? `; known bugs tolerated: ${known}` : ''),
      );
    }
  }
  if (results.some((r) => r.stats.known.size > 0)) {
    for (const b of KNOWN_BUGS) lines.push(`  known bug ${b.id}: ${b.summary}`);
  }
  report(lines);
});
