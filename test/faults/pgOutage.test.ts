/**
 * Store outage on a real PostgreSQL (issue 18 item 1). A private cluster of its own (another
 * port and data folder than the server the other suites use: crashing it disturbs no one) is
 * started with scripts/pg-test-server.sh. At seeded points spread over a journaled turn with
 * unsafe tools, running in a child process, the server is stopped with `pg_ctl stop -m
 * immediate` and started again:
 *
 * - odd points: the child's journal retry window (8 s) outlasts the restart: the turn rides the
 *   outage through (`done`), nothing lost;
 * - even points: the window is short (300 ms): the journal gives up, the turn ends with a typed
 *   `JournalError` (`failed unavailable`), and after the restart `resumeTurn` finishes it.
 *
 * Always: the child ends by itself, exit 0, nothing on stderr (no unhandled 'error' event), and
 * after resume no unsafe call ran twice and every call has exactly one result.
 * CI: 8 points; `npm run test:faults` (SLUICE_FAULTS=1): points are drawn until 50 outages hit the
 * turn (the child retried or failed; an outage after its last write does not count), at most 150
 * (SLUICE_FAULT_POINTS, SLUICE_FAULT_SEED).
 */
import { execFile, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { prng } from '../../bench/prng';
import { resumeTurn } from '../../src/engine/resume';
import { openStore } from '../../src/journal/open';
import { buildForChildren, childEnv } from '../journal/childBuild';
import { lines, seedWorkspace, workspaceTools } from '../journal/workspaceTools';
import { checkResumed, emptyTally } from './properties';

const run = promisify(execFile);
const FULL = process.env.SLUICE_FAULTS === '1';
const POINTS = Number(process.env.SLUICE_FAULT_POINTS ?? (FULL ? 50 : 8));
const SEED = Number(process.env.SLUICE_FAULT_SEED ?? 18);
const SCRIPT = path.resolve(__dirname, '../../scripts/pg-test-server.sh');
const hasPostgres = fs.existsSync('/usr/lib/postgresql') && fs.readdirSync('/usr/lib/postgresql').some((v) => fs.existsSync(`/usr/lib/postgresql/${v}/bin/pg_ctl`));
if (!hasPostgres) process.stderr.write('\n[sluice tests] no PostgreSQL binaries (/usr/lib/postgresql/*/bin): the store-outage fault suite is SKIPPED (scripts/pg-test-server.sh start installs them).\n');
const describePg: jest.Describe = hasPostgres ? describe : describe.skip;

describePg(`store outage: PostgreSQL stopped (-m immediate) and restarted at ${POINTS} points of a turn (seed ${SEED}${FULL ? '' : '; SLUICE_FAULTS=1 for 50'})`, () => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-faults-pg-'));
  // Not under `base` (mode 0700, root's): the cluster runs as the postgres user.
  const clusterDir = path.join(os.tmpdir(), `sluice-pg-faults-${process.pid}`);
  const env = { ...process.env, SLUICE_PG_DIR: clusterDir, SLUICE_PG_PORT: String(54300 + (process.pid % 90)) };
  const pg = (cmd: string) => run('bash', [SCRIPT, cmd], { env });
  let url = '';
  let root = '';

  beforeAll(async () => {
    root = buildForChildren();
    const { stdout } = await pg('start');
    url = /SLUICE_PG_URL=(\S+)/.exec(stdout)![1]!;
  }, 120_000);
  afterAll(async () => {
    await pg('stop').catch(() => undefined);
    fs.rmSync(base, { recursive: true, force: true });
  }, 60_000);

  interface ChildEnd {
    code: number | null;
    stdout: string;
    stderr: string;
    ms: number;
  }
  /** Run the child; `onReady` fires when its turn starts. Never killed: it must end by itself. */
  const child = (spec: string, turn: string, dir: string, retryMs: number, onReady: () => void): Promise<ChildEnd> =>
    new Promise((resolve, reject) => {
      const p = spawn(process.execPath, [path.join(root, 'test/faults/outageChild.js'), spec, turn, dir, String(retryMs)], { env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      let t0 = 0;
      const guard = setTimeout(() => p.kill('SIGKILL'), 90_000); // a hang fails the point (code null)
      p.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
        if (t0 === 0 && stdout.includes('ready')) {
          t0 = performance.now();
          onReady();
        }
      });
      p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      p.on('error', reject);
      p.on('exit', (code) => {
        clearTimeout(guard);
        resolve({ code, stdout, stderr, ms: t0 ? performance.now() - t0 : 0 });
      });
    });

  test('the process never dies unhandled; after resume: no unsafe call twice, every call exactly one result', async () => {
    const prefix = `faults${process.pid}_`;
    const specOf = () => `${url}${url.includes('?') ? '&' : '?'}table_prefix=${prefix}`;
    // An uncrashed turn's length, to spread the outage points over it.
    const refDir = path.join(base, 'ref');
    seedWorkspace(refDir);
    const ref = await child(specOf(), 'turn-ref', refDir, 500, () => undefined);
    expect(ref.stderr).toBe('');
    expect(ref.stdout).toMatch(/done done/);
    // How long `crash` takes to cut the server off (the script runs pg_ctl through su): the
    // outage points are spread over the part of the turn it can still reach.
    const c0 = performance.now();
    await pg('crash');
    const crashMs = performance.now() - c0;
    await pg('up');
    const rand = prng(SEED);
    const tally = emptyTally();
    const ends = { rodeThrough: 0, failedTyped: 0, finishedBeforeOutage: 0 };
    const t0 = performance.now();
    let p = 0;
    for (; (FULL ? ends.rodeThrough + ends.failedTyped < POINTS : p < POINTS) && p < POINTS * 3; p++) {
      const dir = path.join(base, `p${p}`);
      seedWorkspace(dir);
      const turn = `turn-${p}`;
      const longWindow = p % 2 === 1;
      const at = rand() * Math.max(50, ref.ms - crashMs);
      let outage: Promise<unknown> = Promise.resolve();
      const end = await child(specOf(), turn, dir, longWindow ? 8000 : 300, () => {
        outage = new Promise((r) => setTimeout(r, at)).then(async () => {
          await pg('crash');
          if (longWindow) await pg('up'); // back while the journal is still retrying
        });
      });
      await outage;
      if (!longWindow) await pg('up');
      // Never an unhandled error: exit 0, a typed outcome on stdout, nothing on stderr.
      expect(end.stderr).toBe('');
      expect(end.code).toBe(0);
      expect(end.stdout).toMatch(/^(done done|failed (unavailable|io|no_space)) retries=\d+$/m);
      if (/failed/.test(end.stdout)) ends.failedTyped++;
      else if (/retries=0/.test(end.stdout)) ends.finishedBeforeOutage++;
      else ends.rodeThrough++;

      const store = await openStore(specOf());
      const before = (await store.read(turn)).records;
      const runsBefore = lines(dir, 'runs.log');
      const out = await resumeTurn({ store, turn, tools: workspaceTools(dir, { ms: 2 }) });
      await store.close();
      checkResumed(dir, before, runsBefore, out, tally);
    }
    const per = (performance.now() - t0) / p;
    console.log(`store outage (postgres): turn ${ref.ms.toFixed(0)} ms uncrashed, crash takes ${crashMs.toFixed(0)} ms; ${JSON.stringify({ ...ends, ...tally })}; ${per.toFixed(0)} ms per point`);
    expect(tally.unsafeTwice).toBe(0);
    expect(tally.callsWithoutOneResult).toBe(0);
    expect(ends.failedTyped).toBeGreaterThan(0);
    if (FULL) expect(ends.rodeThrough + ends.failedTyped).toBeGreaterThanOrEqual(POINTS);
  }, 120_000 + POINTS * (FULL ? 3 : 1) * 20_000);
});
