/**
 * `sluice/dbos` unit behaviour on a real DBOS system database (the test PostgreSQL):
 * - `durableTurn` refuses to run outside a workflow and inside a step (one clear line);
 * - the core entry never loads DBOS (the built ESM entry, in a fresh process);
 * - two executors of one workflow never both run an unsafe tool (the turn's lease);
 * - a changed program fails loudly on recovery: DBOS's unexpected-step error when the turn's step
 *   moved, sluice's own `DurableTurnError('changed')` when the tools changed under a journal.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DBOS } from '@dbos-inc/dbos-sdk';
import { z } from 'zod';
import { defineTool } from '../../src/execute/tools';
import { durableTurn, DurableTurnError, durableTurnId, closeDurableTurnStores } from '../../src/dbos/durableTurn';
import { buildPackage } from './packageBuild';
import { checkRun, dropDb, parseLine, PG_URL, readEffects, runProgram, scriptOf, systemDbUrl } from './harness';

const d = PG_URL ? describe : describe.skip;
if (!PG_URL) process.stderr.write('\n[sluice tests] SLUICE_PG_URL is not set: the DBOS adapter tests are SKIPPED (scripts/pg-test-server.sh start).\n');

const echo = defineTool({ name: 'echo', kind: 'read', input: z.object({ text: z.string() }), run: async ({ text }) => text });
const noStream = () => [] as never[];
/** An Anthropic stream with one echo call. */
const echoStream = () => [
  { type: 'message_start', message: { id: 'm1', type: 'message', role: 'assistant', model: 'scripted', content: [], stop_reason: null, usage: { input_tokens: 1, output_tokens: 0 } } },
  { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'echo', input: {} } },
  { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"text":"hi"}' } },
  { type: 'content_block_stop', index: 0 },
  { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 5 } },
  { type: 'message_stop' },
];

test('outside any workflow: DurableTurnError("context"), one line', async () => {
  const err = await durableTurn({ format: 'anthropic', stream: noStream, tools: [echo] }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(DurableTurnError);
  expect((err as DurableTurnError).code).toBe('context');
  expect((err as Error).message).toMatch(/^sluice\/dbos: durableTurn\(\) must be called from a DBOS workflow function .*outside any workflow$/);
  expect((err as Error).message).not.toContain('\n');
});

test('turn ids: a workflow id that is not a valid turn id is hashed, deterministically', () => {
  expect(durableTurnId('wf-1', 't0')).toBe('wf-1.t0');
  const odd = durableTurnId('user 7 / task: deploy', 't0');
  expect(odd).toMatch(/^wf_[0-9a-f]{40}\.t0$/);
  expect(durableTurnId('user 7 / task: deploy', 't0')).toBe(odd);
});

d('inside DBOS', () => {
  let db: string;
  let effects: string;

  beforeAll(async () => {
    await buildPackage();
    db = systemDbUrl('unit');
    effects = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-dbos-unit-'));
  }, 120_000);

  afterAll(async () => {
    await closeDurableTurnStores();
    await DBOS.shutdown().catch(() => undefined);
    if (db) await dropDb(db).catch(() => undefined);
  }, 60_000);

  let ran = 0;
  const counted = defineTool({ name: 'echo', kind: 'read', input: z.object({ text: z.string() }), run: async ({ text }) => (ran++, text) });
  const insideStep = DBOS.registerWorkflow(
    async () => DBOS.runStep(() => durableTurn({ format: 'anthropic', stream: noStream, tools: [counted], store: 'memory' }).then(() => 'ran'), { name: 'outer' }),
    { name: 'turnInsideStep' },
  );
  /** One turn: an echo call; the workflow returns what durableTurn says about itself. */
  const oneTurn = DBOS.registerWorkflow(
    async () => {
      const turn = await durableTurn({ format: 'anthropic', stream: () => echoStream(), tools: [counted], turnKey: 't0', store: db });
      return { modelRequests: turn.modelRequests, replayed: turn.replayed, resumed: turn.resumed.map((r) => r.resumed), messages: turn.messages };
    },
    { name: 'oneTurn' },
  );

  const misuse = DBOS.registerWorkflow(async () => durableTurn({ format: 'nope' as never, stream: noStream, tools: [counted], store: 'memory' }), { name: 'misuse' });

  test('inside a step: DurableTurnError("context") names the step, and nothing runs', async () => {
    DBOS.setConfig({ name: 'sluice-dbos-unit', systemDatabaseUrl: db, logger: { info: () => undefined, debug: () => undefined, warn: () => undefined, error: () => undefined } });
    await DBOS.launch();
    const h = await DBOS.startWorkflow(insideStep, { workflowID: 'inside-step-1' })();
    const err = await h.getResult().catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/^sluice\/dbos: durableTurn\(\) was called inside a DBOS step or transaction/);
    expect(ran).toBe(0);
  }, 60_000);

  test('misuse fails before the turn\'s step: runTurn\'s one-line error, no step recorded', async () => {
    const h = await DBOS.startWorkflow(misuse, { workflowID: 'misuse-1' })();
    const err = await h.getResult().catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/^sluice: unknown format "nope"/);
    expect(await DBOS.listWorkflowSteps('misuse-1')).toEqual([]);
  }, 60_000);

  test('a recorded turn is replayed by DBOS: no model request, no tool run, the same messages', async () => {
    const first = await (await DBOS.startWorkflow(oneTurn, { workflowID: 'one-turn-1' })()).getResult();
    expect(first).toMatchObject({ modelRequests: 1, replayed: false, resumed: ['fresh'] });
    expect(ran).toBe(1);
    // A fork from step 1 copies the turn's step (step 0) and replays it.
    const fork = await (await DBOS.forkWorkflow<typeof first>('one-turn-1', 1)).getResult();
    expect(fork).toEqual({ ...first, modelRequests: 0, replayed: true });
    expect(ran).toBe(1);
  }, 60_000);

  test('the core entry does not load DBOS; sluice/dbos does', async () => {
    const { dir } = await buildPackage();
    const probe = (entry: string) =>
      spawnSync(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `import { createRequire } from 'node:module'; await import(${JSON.stringify(entry)}); const r = createRequire(import.meta.url); console.log(Object.keys(r.cache).filter((k) => k.includes('@dbos-inc')).length);`,
        ],
        { cwd: dir, encoding: 'utf8' },
      );
    const core = probe('sluice');
    expect(core.stderr).toBe('');
    expect(core.stdout.trim()).toBe('0');
    const adapter = probe('sluice/dbos');
    expect(Number(adapter.stdout.trim())).toBeGreaterThan(0);
  }, 60_000);

  test('two executors of one workflow: the unsafe tools run once, both see one result', async () => {
    // Seed 8: read, bump, bump, bump. A runs slowly; B starts the same workflow while A is in the
    // turn (its DBOS.launch recovers the pending workflow too), waits for the turn's lease, then
    // reads the committed turn back.
    const workflow = 'two-executors-8';
    const a = runProgram(db, effects, { workflow, seed: 8, toolMs: 600 });
    for (let i = 0; i < 400 && !readEffects(effects, workflow).some((e) => e.file === 'model'); i++) await new Promise((r) => setTimeout(r, 50));
    const b = runProgram(db, effects, { workflow, seed: 8, toolMs: 600 });
    const [ra, rb] = await Promise.all([a, b]);
    expect(ra.code).toBe(0);
    const line = parseLine(ra.stdout);
    expect(checkRun(line, readEffects(effects, workflow), await scriptOf(8))).toEqual([]);
    // Every bump got its real result. (Its `resumed` is the one of the execution whose step
    // record DBOS kept: 'fresh' from A, or 'kept' when B's read-back was recorded first.)
    expect(line.calls.filter((c) => c.name === 'bump').every((c) => c.ok && (c.resumed === 'fresh' || c.resumed === 'kept'))).toBe(true);
    // B never ran an unsafe tool; whatever it printed is the same result.
    const bumpPids = new Set(readEffects(effects, workflow).filter((e) => e.file === 'bump').map((e) => e.pid));
    expect(bumpPids.size).toBe(1);
    if (rb.code === 0) expect(parseLine(rb.stdout)).toEqual(line);
    else expect(rb.stdout).toBe('');
  }, 120_000);

  test('the executor holding the lease is killed while a second one is attached: the next launch takes the turn over at once, no unsafe call twice', async () => {
    // DBOS recovers a pending workflow at launch only: a process that attached to the workflow while
    // the first one ran keeps waiting for its result when the first dies. The next launch recovers
    // it, and the turn's lease (its holder dead on this host) is taken over without waiting a TTL.
    const workflow = 'two-executors-kill-8';
    const a = runProgram(db, effects, { workflow, seed: 8, toolMs: 600, env: { SLUICE_TEST_DIE_AFTER_EFFECT: '4' } });
    for (let i = 0; i < 400 && !readEffects(effects, workflow).some((e) => e.file === 'model'); i++) await new Promise((r) => setTimeout(r, 50));
    const b = runProgram(db, effects, { workflow, seed: 8, toolMs: 600 });
    const ra = await a;
    expect(ra.signal).toBe('SIGKILL');
    const t0 = Date.now();
    const c = await runProgram(db, effects, { workflow, seed: 8, toolMs: 600 });
    expect(c.code).toBe(0);
    expect(Date.now() - t0).toBeLessThan(30_000); // well under the lease's 60 s TTL: the dead holder's lease was taken over
    const line = parseLine(c.stdout);
    expect(checkRun(line, readEffects(effects, workflow), await scriptOf(8))).toEqual([]);
    const rb = await b; // the attached process gets the recovered workflow's result
    expect(rb.code).toBe(0);
    expect(parseLine(rb.stdout)).toEqual(line);
  }, 120_000);

  test("a changed program: the turn's step moved → DBOS's unexpected-step error, nothing runs", async () => {
    const workflow = 'changed-step-5';
    const first = await runProgram(db, effects, { workflow, seed: 5, env: { SLUICE_TEST_DIE_AT: 'after-turn' } });
    expect(first.signal).toBe('SIGKILL');
    const before = readEffects(effects, workflow).length;
    const changed = await runProgram(db, effects, { workflow, seed: 5, env: { SLUICE_TEST_TURN_KEY: 't9' } });
    expect(changed.code).toBe(1);
    expect(changed.stdout).toBe('');
    expect(changed.stderr).toMatch(/sluice\.turn\.t0 was recorded when sluice\.turn\.t9 was expected/);
    expect(readEffects(effects, workflow)).toHaveLength(before);
  }, 60_000);

  test('a changed program: other tools under an unfinished turn → DurableTurnError("changed"), nothing runs', async () => {
    const workflow = 'changed-tools-5';
    const first = await runProgram(db, effects, { workflow, seed: 5, env: { SLUICE_TEST_DIE_AFTER_EFFECT: '3' } });
    expect(first.signal).toBe('SIGKILL');
    const before = readEffects(effects, workflow).length;
    const changed = await runProgram(db, effects, { workflow, seed: 5, env: { SLUICE_TEST_EXTRA_TOOL: '1' } });
    expect(changed.code).toBe(1);
    expect(changed.stdout).toBe('');
    expect(changed.stderr).toMatch(/turn changed-tools-5\.t0 was recorded by different code/);
    expect(readEffects(effects, workflow)).toHaveLength(before);
  }, 60_000);
});
