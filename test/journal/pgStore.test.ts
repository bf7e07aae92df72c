/**
 * The PostgreSQL journal store against a real PostgreSQL server (`SLUICE_PG_URL`; `.ci/run` starts
 * one with scripts/pg-test-server.sh). Skips visibly when no server is configured.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Pool } from 'pg';
import { ResumeError, resumeTurn } from '../../src/engine/resume';
import { runTurn } from '../../src/engine/runTurn';
import { createTurnJournal } from '../../src/journal/journal';
import { PostgresJournalStore } from '../../src/journal/pgStore';
import type { JournalRecord } from '../../src/journal/records';
import { CRASH_TURN, chatStream, seedWorkspace, workspaceTools } from './workspaceTools';

const URL = process.env.SLUICE_PG_URL;
if (!URL) process.stderr.write('\n[sluice tests] SLUICE_PG_URL is not set: PostgreSQL journal tests are SKIPPED (scripts/pg-test-server.sh start).\n');
const describePg: jest.Describe = URL ? describe : describe.skip;

const rec = (n: number, extra: Partial<JournalRecord> = {}): JournalRecord =>
  ({ n, k: 'attempt', a: 1, t: n * 10, ...extra }) as JournalRecord;

describePg('PostgresJournalStore', () => {
  const prefix = `t${process.pid}_${Date.now() % 100000}_`;
  let store: PostgresJournalStore;

  beforeAll(async () => {
    store = await PostgresJournalStore.connect({ connectionString: URL, tablePrefix: prefix });
  });
  afterAll(async () => {
    const pool = new Pool({ connectionString: URL });
    await pool.query(`DROP TABLE IF EXISTS ${prefix}journal, ${prefix}lease`);
    await pool.end();
    await store?.close();
  });

  test('appends in order and reads the same records back (durable and not)', async () => {
    const released = { n: 1, k: 'released', a: 1, i: 0, t: 5, id: 'toolu_1', name: 'edit', input: { path: 'a.ts', text: 'é\u0000x' }, safe: false } as JournalRecord;
    await store.append('turn-a', [rec(0)], { durable: true });
    await store.append('turn-a', [released, rec(2)], { durable: false });
    const { records, tornBytes } = await store.read('turn-a');
    expect(tornBytes).toBe(0);
    expect(records).toEqual([rec(0), released, rec(2)]);
    expect(await store.read('no-such-turn')).toEqual({ records: [], tornBytes: 0 });
  });

  test('a gap or a duplicate is rejected and nothing of that append is written', async () => {
    await store.append('turn-b', [rec(0), rec(1)], { durable: true });
    await expect(store.append('turn-b', [rec(3)], { durable: true })).rejects.toMatchObject({ code: 'corrupt' });
    await expect(store.append('turn-b', [rec(2), rec(1)], { durable: true })).rejects.toMatchObject({ code: 'corrupt' });
    expect((await store.read('turn-b')).records.map((r) => r.n)).toEqual([0, 1]);
  });

  test('list reports record counts and committed turns', async () => {
    await store.append('turn-c', [rec(0), { n: 1, k: 'committed', a: 1, t: 9, outcome: 'completed', callIds: [] } as JournalRecord], { durable: true });
    const listing = await store.list();
    expect(listing).toEqual(
      expect.arrayContaining([
        { turn: 'turn-a', records: 3, committed: false },
        { turn: 'turn-c', records: 2, committed: true },
      ]),
    );
  });

  test('eight workers (separate pools, separate sessions) race for one lease: exactly one wins, every round', async () => {
    const pools = Array.from({ length: 8 }, () => new Pool({ connectionString: URL, max: 1 }));
    const stores = await Promise.all(pools.map((pool) => PostgresJournalStore.connect({ pool, tablePrefix: prefix })));
    try {
      for (let round = 0; round < 10; round++) {
        const turn = `race-${round}`;
        const got = await Promise.all(stores.map((s, w) => s.lease(turn, `worker-${w}`, 60_000)));
        expect(got.filter((l) => l !== undefined)).toHaveLength(1);
      }
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  });

  test('a lease is exclusive until it expires or is released; a lost lease cannot be renewed', async () => {
    const a = await store.lease('turn-l', 'A', 200);
    expect(a).toBeDefined();
    expect(await store.lease('turn-l', 'B', 200)).toBeUndefined();
    expect(await a!.renew(200)).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    const b = await store.lease('turn-l', 'B', 60_000);
    expect(b).toBeDefined();
    expect(await a!.renew()).toBe(false);
    await a!.release(); // not A's any more: a no-op
    expect(await store.lease('turn-l', 'C', 1000)).toBeUndefined();
    await b!.release();
    expect(await store.lease('turn-l', 'C', 1000)).toBeDefined();
  });

  test('eight workers (separate pools) race to resume one crashed turn: exactly one proceeds, the others get ResumeError', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-pg-resume-'));
    seedWorkspace(dir);
    // A turn journaled up to the end of its stream, then "crashed": everything after `end` removed.
    const journal = await createTurnJournal(store, 'race-resume');
    await runTurn({ format: 'openai-chat', stream: chatStream(CRASH_TURN, 0), tools: workspaceTools(dir, { ms: 1 }), journal });
    const pool = new Pool({ connectionString: URL });
    const { rows } = await pool.query(`SELECT min(n) AS n FROM ${prefix}journal WHERE turn = 'race-resume' AND k = 'end'`);
    await pool.query(`DELETE FROM ${prefix}journal WHERE turn = 'race-resume' AND n > $1`, [rows[0].n]);
    await pool.end();
    const pools = Array.from({ length: 8 }, () => new Pool({ connectionString: URL, max: 2 }));
    try {
      const stores = await Promise.all(pools.map((p) => PostgresJournalStore.connect({ pool: p, tablePrefix: prefix })));
      const all = await Promise.allSettled(stores.map((s, w) => resumeTurn({ store: s, turn: 'race-resume', tools: workspaceTools(dir, { ms: 5 }), owner: `w${w}` })));
      const won = all.filter((r) => r.status === 'fulfilled');
      expect(won).toHaveLength(1);
      for (const r of all) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(ResumeError);
      expect((won[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof resumeTurn>>>).value.violations).toEqual([]);
    } finally {
      await Promise.all(pools.map((p) => p.end()));
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a killed resumer on this host (pid gone) loses its lease at once; a live one or another host keeps it until it expires', async () => {
    const { hostIdentity } = await import('../../src/journal/lease');
    const { spawnSync } = await import('node:child_process');
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const deadPid = Number(dead.stdout); // exited: its pid is gone
    const pool = new Pool({ connectionString: URL });
    try {
      const hold = (turn: string, host: string, pid: number) =>
        pool.query(`INSERT INTO ${prefix}lease (turn, owner, expires_at, host, pid) VALUES ($1, 'old', now() + interval '60 seconds', $2, $3)`, [turn, host, pid]);
      await hold('dead-here', hostIdentity(), deadPid);
      await hold('live-here', hostIdentity(), process.ppid); // our parent: alive
      await hold('elsewhere', 'another-host/pid:[1]', deadPid);
      const t0 = Date.now();
      const l = await store.lease('dead-here', 'me', 60_000);
      expect(l).toBeDefined();
      expect(Date.now() - t0).toBeLessThan(5000);
      expect(await store.lease('live-here', 'me', 60_000)).toBeUndefined();
      expect(await store.lease('elsewhere', 'me', 60_000)).toBeUndefined();
      // Two racers for one dead holder's lease: exactly one takes it.
      await hold('dead-race', hostIdentity(), deadPid);
      const got = await Promise.all([store.lease('dead-race', 'r1', 60_000), store.lease('dead-race', 'r2', 60_000)]);
      expect(got.filter(Boolean)).toHaveLength(1);
    } finally {
      await pool.end();
    }
  });

  test('a journal copied under another turn id is refused (header turn id checked)', async () => {
    const { JournalRefusedError } = await import('../../src/journal/check');
    const pool = new Pool({ connectionString: URL });
    try {
      await store.append('orig', [{ n: 0, k: 'turn', v: 1, turn: 'orig', t: 0 } as JournalRecord, rec(1)], { durable: true });
      await pool.query(`INSERT INTO ${prefix}journal (turn, n, k, body) SELECT 'copy', n, k, body FROM ${prefix}journal WHERE turn = 'orig'`);
    } finally {
      await pool.end();
    }
    const err = await resumeTurn({ store, turn: 'copy', tools: [] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JournalRefusedError);
    expect((err as Error).message).toMatch(/record 0: turn: the journal belongs to turn "orig", not copy/);
  });

  test('the server dropping the pool\'s connections (pg_terminate_backend) is no unhandled error: the next append reconnects', async () => {
    const app = `sluice_drop_${process.pid}`;
    const sep = URL!.includes('?') ? '&' : '?';
    const own = await PostgresJournalStore.connect({ connectionString: `${URL}${sep}application_name=${app}`, tablePrefix: prefix });
    const admin = new Pool({ connectionString: URL });
    try {
      await own.append('drop', [rec(0)], { durable: true }); // leaves an idle connection in the pool
      const { rowCount } = await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [app]);
      expect(rowCount).toBeGreaterThan(0);
      await new Promise((r) => setTimeout(r, 300)); // the idle client's 'error' arrives now: handled
      await own.append('drop', [rec(1)], { durable: true });
      expect((await own.read('drop')).records).toHaveLength(2);
    } finally {
      await admin.end();
      await own.close();
    }
  });

  test('a server that is not there: connect and every method reject with JournalError unavailable (retryable)', async () => {
    const err = await PostgresJournalStore.connect({ connectionString: 'postgres://sluice@127.0.0.1:9/postgres', connectTimeoutMs: 2000 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'JournalError', code: 'unavailable', retryable: true });
  });

  test('a journal over the read limit is JournalError too_large, measured as its file-store size: the same limit on both stores', async () => {
    const { FileJournalStore } = await import('../../src/journal/fileStore');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-pg-limit-'));
    try {
      seedWorkspace(dir);
      const journal = await createTurnJournal(store, 'limit');
      await runTurn({ format: 'openai-chat', stream: chatStream(CRASH_TURN, 0), tools: workspaceTools(dir, { ms: 1 }), journal });
      const { records } = await store.read('limit');
      expect(records.length).toBeGreaterThan(5);
      // The same records in the file store: its file size is the journal's size on both stores.
      const files = new FileJournalStore(path.join(dir, 'journals'), { fsync: false });
      await files.append('limit', records, { durable: false });
      const size = fs.statSync(files.fileOf('limit')).size;
      const stores = async (maxBytes: number) => [
        await PostgresJournalStore.connect({ connectionString: URL, tablePrefix: prefix, maxBytes }),
        new FileJournalStore(files.dir, { maxBytes }),
      ];
      for (const s of await stores(size)) {
        expect((await s.read('limit')).records).toEqual(records);
        await s.close();
      }
      for (const s of await stores(size - 1)) {
        const err = await s.read('limit').catch((e: unknown) => e);
        expect(err).toMatchObject({ name: 'JournalError', code: 'too_large', retryable: false });
        expect((err as Error).message).toBe(`limit: the journal is ${size} bytes, over the limit of ${size - 1}`);
        // resumeTurn rejects with it too, before it runs anything or takes over the turn.
        await expect(resumeTurn({ store: s, turn: 'limit', tools: workspaceTools(dir, { ms: 1 }) })).rejects.toMatchObject({ code: 'too_large' });
        await s.close();
      }
      await expect(PostgresJournalStore.connect({ connectionString: URL, tablePrefix: prefix, maxBytes: -1 })).rejects.toMatchObject({ code: 'config' });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a bad table prefix is refused with a clear error', async () => {
    await expect(PostgresJournalStore.connect({ connectionString: URL, tablePrefix: 'x; drop' })).rejects.toThrow(/invalid table prefix/);
  });
});
