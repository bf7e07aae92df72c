/**
 * Journal cost (issue 14, docs/durability.md):
 *
 * - `append`: one record appended to the embedded file store, with fdatasync (a durable record:
 *   `started` of an unsafe call, `result`, …) and without (a non-durable record, or a store opened
 *   with `fsync: false`). Wall µs per record: an fsync is I/O wait, not CPU.
 * - `turn`: the 20-call turn of bench/lifecycle.ts (execute mode, tools that resolve at once) with a
 *   journal on the file store (fsync), the file store without fsync and the memory store, next to
 *   the same turn without a journal. Unsafe tools write 2 durable records per call (the
 *   write-ahead `started` and the result); safe calls write none (a safe call simply runs again
 *   after a crash), so a safe turn pays one fsync, at the commit. Journal cost per call =
 *   (turn with journal − turn without) ÷ 20.
 * - PostgreSQL: when SLUICE_PG_URL is set and src/journal/pgStore.ts is present, the same turn on it.
 *
 * Files go to SLUICE_BENCH_DIR or the OS temp folder: fsync costs what that file system charges
 * (tmpfs: nothing). Run: `node dist/bench/journal.js [--json]` after `npm run build`, or
 * `npm run bench -- --only journal`.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { TurnController } from '../src/engine/controller';
import { FileJournalStore } from '../src/journal/fileStore';
import { TurnJournal } from '../src/journal/journal';
import { macSeed, recordMac } from '../src/journal/mac';
import { MemoryJournalStore } from '../src/journal/memoryStore';
import type { JournalRecord } from '../src/journal/records';
import type { JournalStore } from '../src/journal/store';
import { turnEvents } from './lifecycle';
import { fullGc, timeAsync } from './throughput';

export interface JournalRow {
  what: string;
  store: string;
  /** Median wall µs per record (append rows) or ms per turn (turn rows). */
  wallMs: number;
  cpuMs: number;
  /** Turn rows: (wall ms with journal − without) ÷ calls, in µs. */
  usPerCall?: number;
  durablePerCall?: number;
  samples: number;
}

const RESULT = { ok: true, content: 'x'.repeat(200) };

/** A MAC key for the keyed rows (docs/durability.md "Journal checks and the MAC"). */
const BENCH_KEY = 'bench-journal-key-0123456789';

async function oneTurn(safe: boolean, store: JournalStore | undefined, id: number, journalKey?: string): Promise<void> {
  const c = new TurnController({
    mode: 'execute',
    classify: () => ({ safe, needsApproval: false }),
    runTool: () => Promise.resolve(RESULT),
  });
  let j: TurnJournal | undefined;
  if (store) {
    j = new TurnJournal(store, `bench-${id}`, { journalKey });
    await j.write({ k: 'turn', v: 1, turn: `bench-${id}`, t: 0 });
    j.attach(c);
  }
  for (const e of turnEvents(20)) c.feed(e);
  const s = await c.done;
  await j?.flush();
  if (s.outcome !== 'done' || s.calls.length !== 20) throw new Error(`journal bench: turn ended ${s.outcome}`);
  if (j && j.errors.length) throw new Error(`journal bench: ${j.errors[0]}`);
}

export async function benchJournal(opts: { budgetMs?: number; dir?: string; pgUrl?: string } = {}): Promise<JournalRow[]> {
  const budgetMs = opts.budgetMs ?? 1500;
  const dir = fs.mkdtempSync(path.join(opts.dir ?? process.env.SLUICE_BENCH_DIR ?? os.tmpdir(), 'sluice-bench-journal-'));
  const rows: JournalRow[] = [];
  try {
    // Per-record appends.
    for (const fsync of [true, false]) {
      const store = new FileJournalStore(path.join(dir, fsync ? 'append-sync' : 'append-nosync'), { fsync });
      let n = 0;
      const rec = (): JournalRecord => ({ n: n++, k: 'result', a: 1, i: n, t: n, ok: true, content: RESULT.content });
      const batch = 20;
      const t = await timeAsync(
        () => {
          for (let i = 0; i < batch; i++) store.appendSync('t', [rec()], { durable: true });
        },
        { budgetMs, minSamples: 10, warmup: 2 },
      );
      rows.push({ what: 'append 1 record (~270 B)', store: fsync ? 'file, fdatasync' : 'file, no fsync', wallMs: (t.wallMs * 1000) / batch, cpuMs: (t.ms * 1000) / batch, samples: t.samples * batch });
      await store.close();
    }
    // The MAC of one record (keyed journals), the same record.
    {
      const key = Buffer.from(BENCH_KEY);
      let prev = macSeed(key, 't');
      let n = 0;
      const batch = 200;
      const t = await timeAsync(
        () => {
          for (let i = 0; i < batch; i++) prev = recordMac(key, prev, { n: n++, k: 'result', a: 1, i: n, t: n, ok: true, content: RESULT.content });
        },
        { budgetMs, minSamples: 10, warmup: 2 },
      );
      rows.push({ what: 'MAC 1 record (~270 B, HMAC-SHA256)', store: 'any, keyed', wallMs: (t.wallMs * 1000) / batch, cpuMs: (t.ms * 1000) / batch, samples: t.samples * batch });
    }
    // Whole turns.
    let id = 0;
    for (const safe of [true, false]) {
      fullGc();
      const none = await timeAsync(() => oneTurn(safe, undefined, 0), { budgetMs, minSamples: 20, warmup: 10 });
      rows.push({ what: `20-call turn, ${safe ? 'safe' : 'unsafe'} tools`, store: 'no journal', wallMs: none.wallMs, cpuMs: none.ms, samples: none.samples });
      const stores: Array<[string, () => JournalStore, string?]> = [
        ['file, fdatasync', () => new FileJournalStore(path.join(dir, `turns-sync`))],
        ['file, no fsync', () => new FileJournalStore(path.join(dir, `turns-nosync`), { fsync: false })],
        ['memory', () => new MemoryJournalStore()],
        ['memory, MAC', () => new MemoryJournalStore(), BENCH_KEY],
      ];
      if (opts.pgUrl) {
        try {
          const spec = '../src/journal/pgStore';
          const mod = (await import(spec)) as {
            PostgresJournalStore: { connect(o: { connectionString: string; tablePrefix: string }): Promise<JournalStore> };
          };
          // Fresh tables per run: the database outlives the bench, turn ids restart at 1.
          const tablePrefix = `bench_${process.pid}_${Date.now() % 1_000_000}_`;
          const pg = await mod.PostgresJournalStore.connect({ connectionString: opts.pgUrl, tablePrefix });
          stores.push(['postgres', () => pg]);
        } catch (err) {
          rows.push({ what: `postgres unavailable: ${err instanceof Error ? err.message : String(err)}`, store: 'postgres', wallMs: NaN, cpuMs: NaN, samples: 0 });
        }
      }
      for (const [name, make, key] of stores) {
        const store = make();
        fullGc();
        const t = await timeAsync(() => oneTurn(safe, store, ++id, key), { budgetMs, minSamples: 10, warmup: 3 });
        rows.push({
          what: `20-call turn, ${safe ? 'safe' : 'unsafe'} tools`,
          store: name,
          wallMs: t.wallMs,
          cpuMs: t.ms,
          usPerCall: ((t.wallMs - none.wallMs) * 1000) / 20,
          durablePerCall: safe ? 0 : 2,
          samples: t.samples,
        });
        await store.close();
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

const f = (x: number | undefined, d = 2): string => (x === undefined || !Number.isFinite(x) ? '' : x.toFixed(d));

export function formatJournal(rows: JournalRow[]): string {
  const lines = ['| what | store | wall (µs/record or ms/turn) | CPU (same unit) | journal µs/call (wall) | durable records/call | samples |', '|---|---|---:|---:|---:|---:|---:|'];
  for (const r of rows) lines.push(`| ${r.what} | ${r.store} | ${f(r.wallMs)} | ${f(r.cpuMs)} | ${f(r.usPerCall, 0)} | ${r.durablePerCall ?? ''} | ${r.samples} |`);
  return lines.join('\n') + '\n';
}

if (require.main === module) {
  benchJournal({ pgUrl: process.env.SLUICE_PG_URL }).then(
    (rows) => process.stdout.write(process.argv.includes('--json') ? JSON.stringify(rows, null, 2) + '\n' : formatJournal(rows)),
    (err: unknown) => {
      process.stderr.write(`journal bench: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
