/**
 * `openStore` specs: `?max_bytes=` on the file store and on PostgreSQL (the real server from
 * `SLUICE_PG_URL`; that half skips visibly without one), and one clear config error for a bad value.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Pool } from 'pg';
import { FileJournalStore } from '../../src/journal/fileStore';
import { openStore } from '../../src/journal/open';
import type { JournalRecord } from '../../src/journal/records';
import type { JournalStore } from '../../src/journal/store';

const PG = process.env.SLUICE_PG_URL;
if (!PG) process.stderr.write('\n[sluice tests] SLUICE_PG_URL is not set: openStore postgres:// max_bytes tests are SKIPPED (scripts/pg-test-server.sh start).\n');
const describePg: jest.Describe = PG ? describe : describe.skip;

const records: JournalRecord[] = Array.from({ length: 6 }, (_, n) => ({ n, k: 'attempt', a: 1, t: n * 10 }) as JournalRecord);

let dir: string;
/** The journal's size as the stores measure it (its file in the file store). */
let size: number;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-open-'));
  const files = new FileJournalStore(dir, { fsync: false });
  await files.append('t1', records, { durable: false });
  size = fs.statSync(files.fileOf('t1')).size;
  await files.close();
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Read `turn` through a store opened from `spec`; the error (if any). */
async function readThrough(spec: string, turn = 't1'): Promise<{ records?: JournalRecord[]; error?: unknown }> {
  const store: JournalStore = await openStore(spec);
  try {
    return { records: (await store.read(turn)).records };
  } catch (error) {
    return { error };
  } finally {
    await store.close();
  }
}

const BAD: [string, RegExp][] = [
  ['abc', /got "abc"/],
  ['0', /got "0"/],
  ['-5', /got "-5"/],
  ['1.5', /got "1\.5"/],
  ['', /got ""/],
  ['12x', /got "12x"/],
  ['99999999999999999', /got "99999999999999999"/],
];

describe('openStore file: ?max_bytes=', () => {
  test.each(['file', 'file-nosync'])('%s: a journal of exactly max_bytes is read, one byte over is too_large', async (scheme) => {
    expect(await readThrough(`${scheme}:${dir}?max_bytes=${size}`)).toEqual({ records });
    const { error } = await readThrough(`${scheme}:${dir}?max_bytes=${size - 1}`);
    expect(error).toMatchObject({ name: 'JournalError', code: 'too_large', message: `t1: the journal is ${size} bytes, over the limit of ${size - 1}` });
    // Without the parameter: the default limit (1 GiB), the same directory.
    expect(await readThrough(`${scheme}:${dir}`)).toEqual({ records });
  });

  test('k/m/g suffixes are 1024-based', async () => {
    expect(size).toBeLessThan(1024);
    expect(await readThrough(`file:${dir}?max_bytes=1k`)).toEqual({ records });
    expect(await readThrough(`file:${dir}?max_bytes=1M`)).toEqual({ records });
  });

  test.each(BAD)('max_bytes=%j is a one-line config error', async (value, got) => {
    const err = await openStore(`file:${dir}?max_bytes=${value}`).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'JournalError', code: 'config', message: expect.stringMatching(got) });
    expect((err as Error).message).toMatch(/^journal store: max_bytes must be one whole number of bytes like 1048576, 512k or 64m/);
    expect((err as Error).message).not.toContain('\n');
  });

  test('an unknown parameter or max_bytes twice is a config error, not part of the directory name', async () => {
    await expect(openStore(`file:${dir}?max_byte=10`)).rejects.toMatchObject({ code: 'config', message: 'journal store file: unknown parameter "max_byte" (known: max_bytes)' });
    await expect(openStore(`file:${dir}?max_bytes=10&max_bytes=20`)).rejects.toMatchObject({ code: 'config', message: expect.stringMatching(/got 2 values/) });
    expect(fs.readdirSync(path.dirname(dir)).filter((n) => n.startsWith(path.basename(dir) + '?'))).toEqual([]);
  });
});

describePg('openStore postgres:// ?max_bytes= (real PostgreSQL)', () => {
  const prefix = `o${process.pid}_${Date.now() % 100000}_`;
  const url = (params: string): string => `${PG}${PG!.includes('?') ? '&' : '?'}table_prefix=${prefix}${params}`;

  beforeAll(async () => {
    const store = await openStore(url(''));
    await store.append('t1', records, { durable: true });
    await store.close();
  });
  afterAll(async () => {
    const pool = new Pool({ connectionString: PG });
    await pool.query(`DROP TABLE IF EXISTS ${prefix}journal, ${prefix}lease`);
    await pool.end();
  });

  test('the same limit as the file store: exactly max_bytes is read, one byte over is too_large', async () => {
    expect(await readThrough(url(`&max_bytes=${size}`))).toEqual({ records });
    const { error } = await readThrough(url(`&max_bytes=${size - 1}`));
    expect(error).toMatchObject({ name: 'JournalError', code: 'too_large', message: `t1: the journal is ${size} bytes, over the limit of ${size - 1}` });
    // max_bytes first, table_prefix after: both are sluice's, neither reaches pg.
    expect(await readThrough(`${PG}${PG!.includes('?') ? '&' : '?'}max_bytes=1k&table_prefix=${prefix}`)).toEqual({ records });
  });

  test.each(BAD)('max_bytes=%j is a one-line config error (no connection is made)', async (value, got) => {
    const err = await openStore(url(`&max_bytes=${value}`)).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'JournalError', code: 'config', message: expect.stringMatching(got) });
    expect((err as Error).message).not.toContain('\n');
  });
});
