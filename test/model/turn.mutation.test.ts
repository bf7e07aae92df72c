import { MUTATIONS, type MutationId, mutation } from './mutations';
import type { ModelPath } from './paths';
import { DEEP, graphFor, pathSets, replaySet, report } from './run';

/**
 * Mutation check: seeded, realistic bugs (test/model/mutations.ts) are switched on one at a time
 * through test-only module wrappers, and the generated model paths are replayed against each.
 * A path "catches" a bug when its replay fails with a new failure (a known, reported SUT bug does
 * not count). The unmutated run through the same wrappers must stay clean.
 *
 * Path set: every N = 1 edge-covering path plus the N = 2 shortest paths in every run; with
 * SLUICE_DEEP=1 also the full N = 2 edge-covering set.
 */

jest.mock('../../src/release/rules', () => jest.requireActual('./mutations').mockRules());
jest.mock('../../src/execute/schedule', () => jest.requireActual('./mutations').mockSchedule());
jest.mock('../../machines/turn.machine', () => jest.requireActual('./mutations').mockTurnMachine());

interface PathSet {
  label: string;
  n: number;
  paths: ModelPath[];
}

const g1 = graphFor(1);
const g2 = graphFor(2);
const s1 = pathSets(g1);
const s2 = pathSets(g2);
const SETS: PathSet[] = [
  { label: 'N=1 edge-cover', n: 1, paths: s1.edges },
  { label: 'N=2 shortest', n: 2, paths: s2.shortest },
  ...(DEEP ? [{ label: 'N=2 edge-cover', n: 2, paths: s2.edges }] : []),
];

const IDS = Object.keys(MUTATIONS) as MutationId[];
/** Mutants that no path can catch, with the reason (documented in docs/verification.md). */
const EQUIVALENT: Partial<Record<MutationId, string>> = {
  'stale-report-accepted':
    'equivalent: discarded call actors are stopped (stopChild) and interrupted ones are final, so no report of an old attempt ever reaches the guard',
};

const table = new Map<MutationId | 'none', Map<string, { failing: number; total: number; example?: string }>>();

async function run(id: MutationId | undefined): Promise<void> {
  mutation.active = id;
  const row = new Map<string, { failing: number; total: number; example?: string }>();
  try {
    for (const set of SETS) {
      const r = await replaySet(set.label, graphFor(set.n), set.paths);
      const shortest = [...r.failures].sort((a, b) => a.trail.length - b.trail.length)[0];
      row.set(set.label, {
        failing: r.failures.length,
        total: r.paths,
        example: shortest ? `${shortest.message}\n${shortest.trail}` : undefined,
      });
    }
  } finally {
    mutation.active = undefined;
  }
  table.set(id ?? 'none', row);
}

test('no mutation: the wrapped modules behave exactly like the real ones (0 failing paths)', async () => {
  await run(undefined);
  const row = table.get('none')!;
  const fails = [...row.values()].map((c) => c.example).filter(Boolean);
  expect(fails).toEqual([]);
}, 600_000);

describe.each(IDS)('seeded bug %s', (id) => {
  test(EQUIVALENT[id] ? `is not observable (${EQUIVALENT[id]})` : 'is caught by the generated paths', async () => {
    await run(id);
    const caught = [...table.get(id)!.values()].reduce((a, c) => a + c.failing, 0);
    if (EQUIVALENT[id]) expect(caught).toBe(0);
    else expect(caught).toBeGreaterThan(0);
  }, 600_000);
});

afterAll(() => {
  const lines = ['── mutation check: paths failing per seeded bug ───────────────────────────'];
  const head = ['seeded bug'.padEnd(24), ...SETS.map((s) => s.label.padStart(16))].join(' ');
  lines.push(head);
  for (const id of ['none' as const, ...IDS]) {
    const row = table.get(id);
    if (!row) continue;
    const cells = SETS.map((s) => {
      const c = row.get(s.label);
      return (c ? `${c.failing}/${c.total}` : '-').padStart(16);
    });
    lines.push([(id === 'none' ? '(no mutation)' : id).padEnd(24), ...cells].join(' '));
  }
  for (const id of IDS) {
    const ex = [...(table.get(id)?.values() ?? [])].find((c) => c.example)?.example;
    lines.push(`  ${id}: ${MUTATIONS[id]}`);
    if (ex) lines.push(`    shortest catch: ${ex.split('\n').join('\n    ')}`);
    else if (EQUIVALENT[id]) lines.push(`    ${EQUIVALENT[id]}`);
  }
  report(lines);
});
