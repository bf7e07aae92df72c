/**
 * The PostgreSQL journal store reads a journal in bounded pages (real PostgreSQL, SLUICE_PG_URL;
 * skips visibly without one): no query returns more than `pageBytes` of record JSON (beyond one
 * record) or more than `pageRows` rows, and the records come back whole and in order.
 */
import { Pool } from 'pg';
import { PostgresJournalStore, type PgPoolLike } from '../../src/journal/pgStore';
import type { JournalRecord } from '../../src/journal/records';

const URL = process.env.SLUICE_PG_URL;
if (!URL) process.stderr.write('\n[sluice tests] SLUICE_PG_URL is not set: PostgreSQL page tests are SKIPPED (scripts/pg-test-server.sh start).\n');
const describePg: jest.Describe = URL ? describe : describe.skip;

/** The real pool, watched: rows and body bytes of every read query. */
function watched(pool: Pool): { pool: PgPoolLike; pages: { rows: number; bytes: number }[] } {
  const pages: { rows: number; bytes: number }[] = [];
  return {
    pages,
    pool: {
      query: async (text: string, params?: unknown[]) => {
        const r = await pool.query(text, params);
        if (/SELECT j\.body/.test(text)) pages.push({ rows: r.rows.length, bytes: r.rows.reduce((s: number, x: Record<string, unknown>) => s + Buffer.byteLength(String(x.body)), 0) });
        return r as never;
      },
      connect: () => pool.connect() as never,
      end: () => pool.end(),
    },
  };
}

describePg('PostgresJournalStore: bounded pages', () => {
  const prefix = `pg${process.pid}_${Date.now() % 100000}_`;
  const real = new Pool({ connectionString: URL });

  afterAll(async () => {
    await real.query(`DROP TABLE IF EXISTS ${prefix}journal, ${prefix}lease`);
    await real.end();
  });

  test('a journal of 200 records of ~10 KB in pages of ≤ 64 KB (and one larger record alone)', async () => {
    const w = watched(real);
    const store = await PostgresJournalStore.connect({ pool: w.pool, tablePrefix: prefix, pageBytes: 64 * 1024, pageRows: 50 });
    const records: JournalRecord[] = Array.from({ length: 200 }, (_, n) => ({ n, k: 'text', a: 1, t: n, text: `${n}:`.padEnd(n === 120 ? 200_000 : 10_000, 'x') }) as unknown as JournalRecord);
    for (let i = 0; i < records.length; i += 40) await store.append('big', records.slice(i, i + 40), { durable: false });
    const got = await store.read('big');
    expect(got.records).toEqual(records);
    expect(w.pages.length).toBeGreaterThan(30);
    for (const p of w.pages) {
      expect(p.rows).toBeLessThanOrEqual(50);
      // Under the page size, or one record larger than it on its own.
      expect(p.bytes <= 64 * 1024 || p.rows === 1).toBe(true);
    }
    expect(w.pages.some((p) => p.rows === 1 && p.bytes > 200_000)).toBe(true);
    // Rows-bound pages: 1-byte page size still reads every record, one per page.
    w.pages.length = 0;
    const tiny = await PostgresJournalStore.connect({ pool: w.pool, tablePrefix: prefix, pageBytes: 1, createTables: false });
    expect((await tiny.read('big')).records).toHaveLength(200);
    expect(w.pages.filter((p) => p.rows > 0).every((p) => p.rows === 1)).toBe(true);
    // An unknown turn: one empty page.
    expect(await store.read('none')).toEqual({ records: [], tornBytes: 0 });
  });

  test('a gap in the stored sequence is corrupt, found across pages', async () => {
    const store = await PostgresJournalStore.connect({ pool: watched(real).pool, tablePrefix: prefix, pageRows: 3 });
    const recs = Array.from({ length: 8 }, (_, n) => ({ n, k: 'attempt', a: 1, t: n }) as JournalRecord);
    await store.append('gap', recs, { durable: false });
    await real.query(`DELETE FROM ${prefix}journal WHERE turn = 'gap' AND n = 5`);
    await expect(store.read('gap')).rejects.toMatchObject({ code: 'corrupt', record: 5 });
  });
});
