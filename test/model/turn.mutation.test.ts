import fc from 'fast-check';
import { chatCheck, chatScenario } from '../property/bytePath';
import { MUTATIONS, type MutationId, mutation } from './mutations';
import type { ModelPath } from './paths';
import { DEEP, graphFor, pathSets, replaySet, report } from './run';

/**
 * Mutation check: seeded, realistic bugs (test/model/mutations.ts) are switched on one at a time
 * through test-only module wrappers, and the generated model paths are replayed against each.
 * A path "catches" a bug when its replay fails with a new failure (a known, reported SUT bug does
 * not count). The unmutated run through the same wrappers must stay clean.
 *
 * Path set: the N = 2 shortest paths (one per reachable model state) in every run; with
 * SLUICE_DEEP=1 also the N = 1 and N = 2 edge-covering sets. The byte-path property (OpenAI-chat bytes →
 * release, test/property) runs against each bug too, with a fixed seed; its shrunk counterexample
 * is printed.
 */

jest.mock('../../src/release/rules', () => jest.requireActual('./mutations').mockRules());
jest.mock('../../src/execute/schedule', () => jest.requireActual('./mutations').mockSchedule());
jest.mock('../../machines/turn.machine', () => jest.requireActual('./mutations').mockTurnMachine());

interface PathSet {
  label: string;
  n: number;
  paths: ModelPath[];
}

const s2 = pathSets(graphFor(2));
const SETS: PathSet[] = [
  { label: 'N=2 shortest', n: 2, paths: s2.shortest },
  ...(DEEP
    ? [
        { label: 'N=1 edge-cover', n: 1, paths: pathSets(graphFor(1)).edges },
        { label: 'N=2 edge-cover', n: 2, paths: s2.edges },
      ]
    : []),
];

const IDS = Object.keys(MUTATIONS) as MutationId[];
/** Mutants that no path can catch, with the reason (documented in docs/verification.md). */
const EQUIVALENT: Partial<Record<MutationId, string>> = {
  'stale-report-accepted':
    'equivalent: discarded call actors are stopped (stopChild) and interrupted ones are final, so no report of an old attempt ever reaches the guard',
};

const table = new Map<MutationId | 'none', Map<string, { failing: number; total: number; example?: string }>>();
const PROPERTY = 'chat property';

/** The chat byte-path property (150 runs, fixed seed): failed?, and the shrunk counterexample. */
function property(): { failing: number; total: number; example?: string } {
  const out = fc.check(
    fc.property(chatScenario, (s) => {
      const r = chatCheck(s);
      return r.problems.length === 0 && JSON.stringify(r.released) === JSON.stringify(r.expected);
    }),
    { numRuns: 150, seed: 20261129 },
  );
  if (!out.failed) return { failing: 0, total: 1 };
  const [s] = out.counterexample!;
  const r = chatCheck(s);
  return {
    failing: 1,
    total: 1,
    example:
      `property failed after ${out.numRuns} runs, shrunk ${out.numShrinks} times to ${fc.stringify(s)}
` +
      `released ${r.released.map((x) => x.index).join(',') || '-'} vs oracle ${r.expected.map((x) => x.index).join(',') || '-'}` +
      (r.problems.length ? `; ${r.problems.join('; ')}` : ''),
  };
}

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
    row.set(PROPERTY, property());
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
  const cols = [...SETS.map((s) => s.label), PROPERTY];
  const head = ['seeded bug'.padEnd(24), ...cols.map((c) => c.padStart(16))].join(' ');
  lines.push(head);
  for (const id of ['none' as const, ...IDS]) {
    const row = table.get(id);
    if (!row) continue;
    const cells = cols.map((label) => {
      const c = row.get(label);
      if (label === PROPERTY) return (c ? (c.failing ? 'fails' : 'holds') : '-').padStart(16);
      return (c ? `${c.failing}/${c.total}` : '-').padStart(16);
    });
    lines.push([(id === 'none' ? '(no mutation)' : id).padEnd(24), ...cells].join(' '));
  }
  for (const id of IDS) {
    const row = table.get(id);
    const ex = [...(row?.entries() ?? [])].find(([label, c]) => label !== PROPERTY && c.example)?.[1].example;
    lines.push(`  ${id}: ${MUTATIONS[id]}`);
    if (ex) lines.push(`    shortest catch: ${ex.split('\n').join('\n    ')}`);
    else if (EQUIVALENT[id]) lines.push(`    ${EQUIVALENT[id]}`);
    const prop = row?.get(PROPERTY)?.example;
    if (prop) lines.push(`    ${PROPERTY}: ${prop.split('\n').join('\n    ')}`);
  }
  report(lines);
});
