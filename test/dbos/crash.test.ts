/**
 * The crash program (examples/dbos/crash-turn.mjs) as an outside checker runs it: a real DBOS
 * system database on the test PostgreSQL, real processes killed with SIGKILL, relaunched until the
 * workflow finishes. Every finished run is checked against the effect logs (harness.ts
 * `checkRun`): no unsafe call twice, every real unsafe result backed by exactly one effect line,
 * one result per call in model order, no model request after the stream was recorded as finished,
 * and a read-back identical to the line of the run that finished it.
 *
 * CI runs the uncrashed turn, kills at named boundaries (before the turn's step, after it was
 * recorded, right after effect lines: a model request, a safe read, the model's end, an unsafe
 * bump) and a few random points. `SLUICE_CRASH=1` (`npm run test:dbos-crash`) runs every effect
 * boundary of several seeds, a kill right after each journal append of two seeds, and random points
 * until SLUICE_DBOS_CRASH_KILLS kills (default 200).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildPackage } from './packageBuild';
import { checkRun, crashUntilDone, dropDb, parseLine, PG_URL, prng, readEffects, runProgram, scriptOf, systemDbUrl, type ProgramLine } from './harness';

const FULL = process.env.SLUICE_CRASH === '1';
const KILLS = Number(process.env.SLUICE_DBOS_CRASH_KILLS ?? 200);
const SEED = Number(process.env.SLUICE_CRASH_SEED ?? 31);
const d = PG_URL ? describe : describe.skip;
if (!PG_URL) process.stderr.write('\n[sluice tests] SLUICE_PG_URL is not set: the DBOS crash suite is SKIPPED (scripts/pg-test-server.sh start).\n');

/** Totals over every finished run, printed at the end. */
const tally = { points: 0, launches: 0, kills: 0, resumed: new Map<string, number>() };

function count(line: ProgramLine): void {
  for (const c of line.calls) tally.resumed.set(c.resumed, (tally.resumed.get(c.resumed) ?? 0) + 1);
}

d('crash-turn.mjs under SIGKILL and DBOS recovery', () => {
  let db: string;
  let effects: string;
  let spanMs = 3000;

  beforeAll(async () => {
    await buildPackage();
    db = systemDbUrl('crash');
    effects = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-dbos-effects-'));
  }, 120_000);

  afterAll(async () => {
    if (db) await dropDb(db).catch(() => undefined);
    const resumed = [...tally.resumed].map(([k, n]) => `${k} ${n}`).join(', ');
    process.stderr.write(`\n[dbos crash] ${tally.points} points, ${tally.launches} launches, ${tally.kills} kills; results: ${resumed}\n`);
  });

  /** Run to completion after the given kills, check, then read back once more: same line, no new effects. */
  async function finishAndCheck(workflow: string, seed: number, stats: { line: ProgramLine; launches: number; kills: number }): Promise<void> {
    const problems = checkRun(stats.line, readEffects(effects, workflow), await scriptOf(seed));
    expect(problems).toEqual([]);
    const before = readEffects(effects, workflow).length;
    const again = await runProgram(db, effects, { workflow, seed });
    expect(again.code).toBe(0);
    expect(parseLine(again.stdout)).toEqual(stats.line);
    expect(readEffects(effects, workflow)).toHaveLength(before);
    tally.points++;
    tally.launches += stats.launches + 1;
    tally.kills += stats.kills;
    count(stats.line);
  }

  test('uncrashed: a safe read starts before the model stream ends; every call fresh; a second run prints the same line and runs nothing', async () => {
    // Seed 5: read, read, bump, bump; no attempt fails.
    const workflow = 'clean-5';
    const r = await runProgram(db, effects, { workflow, seed: 5, eventMs: 30, toolMs: 60 });
    expect(r.stderr).not.toMatch(/crash-turn:/);
    expect(r.code).toBe(0);
    const line = parseLine(r.stdout);
    expect(line.calls.map((c) => [c.name, c.resumed, c.ok])).toEqual([
      ['read', 'fresh', true],
      ['read', 'fresh', true],
      ['bump', 'fresh', true],
      ['bump', 'fresh', true],
    ]);
    const fx = readEffects(effects, workflow);
    const end = fx.find((e) => e.file === 'model' && e.end);
    const firstRead = fx.find((e) => e.file === 'read' && e.ref === 'toolu_a1_0');
    expect(end).toBeDefined();
    expect(firstRead).toBeDefined();
    expect(firstRead!.ms).toBeLessThan(end!.ms); // early dispatch kept inside the workflow
    // Unsafe calls wait for the stream's end.
    for (const b of fx.filter((e) => e.file === 'bump')) expect(b.ms).toBeGreaterThanOrEqual(end!.ms);
    await finishAndCheck(workflow, 5, { line, launches: 1, kills: 0 });
    // Kill points are drawn over the length of a launch on a warm database (the first launch above
    // also created it, which takes seconds): a second uncrashed turn measures it.
    const warm = await runProgram(db, effects, { workflow: 'clean-5-warm', seed: 5 });
    expect(warm.code).toBe(0);
    spanMs = Math.max(1000, Math.min(8000, warm.ms));
  }, 60_000);

  const boundaries: Array<{ name: string; env: Record<string, string> }> = [
    { name: 'before the turn step', env: { SLUICE_TEST_DIE_AT: 'before-turn' } },
    { name: 'after the turn step was recorded', env: { SLUICE_TEST_DIE_AT: 'after-turn' } },
    ...(FULL ? [1, 2, 3, 4, 5, 6] : [5]).map((n) => ({ name: `right after effect line ${n}`, env: { SLUICE_TEST_DIE_AFTER_EFFECT: String(n) } })),
  ];
  const boundarySeeds = FULL ? [5, 2, 3, 12] : [5];

  test.each(boundarySeeds.flatMap((seed) => boundaries.map((b) => [seed, b.name, b.env] as const)))(
    'seed %i, killed %s: recovered, checked, read back',
    async (seed, name, env) => {
      const workflow = `b-${seed}-${name.replace(/[^a-z0-9]+/g, '-')}`;
      const first = await runProgram(db, effects, { workflow, seed, env });
      expect(first.signal).toBe('SIGKILL');
      const stats = await crashUntilDone(db, effects, { workflow, seed, spanMs, rand: prng(seed * 101 + name.length), maxLaunches: 1 });
      await finishAndCheck(workflow, seed, { ...stats, launches: stats.launches + 1, kills: stats.kills + 1 });
    },
    120_000,
  );

  // Full run: right after each journal append (a record boundary), until an append number is past the turn's end.
  (FULL ? test : test.skip)(
    'killed right after each journal append (seeds 5 and 12): recovered, checked, read back',
    async () => {
      for (const seed of [5, 12]) {
        for (let n = 1; n < 200; n++) {
          const workflow = `a-${seed}-${n}`;
          const first = await runProgram(db, effects, { workflow, seed, env: { SLUICE_TEST_DIE_AFTER_APPEND: String(n) } });
          if (first.signal !== 'SIGKILL') {
            expect(first.code).toBe(0); // the turn ended before its nth append
            break;
          }
          const stats = await crashUntilDone(db, effects, { workflow, seed, spanMs, rand: prng(seed * 7 + n), maxLaunches: 1 });
          await finishAndCheck(workflow, seed, { ...stats, launches: stats.launches + 1, kills: stats.kills + 1 });
        }
      }
    },
    3600_000,
  );

  test(
    FULL ? `random kills until ${KILLS} (seeded)` : 'random kills at a few points',
    async () => {
      const rand = prng(SEED);
      const points = FULL ? Infinity : 2;
      let kills = 0;
      for (let p = 0; p < points && (!FULL || kills < KILLS); p++) {
        const seed = SEED * 1000 + p;
        const workflow = `r-${SEED}-${p}`;
        const stats = await crashUntilDone(db, effects, { workflow, seed, spanMs: spanMs * 1.2, rand });
        kills += stats.kills;
        await finishAndCheck(workflow, seed, stats);
      }
    },
    FULL ? 6 * 3600_000 : 120_000,
  );
});
