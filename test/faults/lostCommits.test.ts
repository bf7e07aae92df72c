/**
 * A server crash loses acknowledged but not yet durable records (PostgreSQL with
 * `synchronous_commit = off` — the journal's non-durable appends — loses the last asynchronously
 * committed transactions when it is stopped with `-m immediate`; the full store-outage run found
 * it). The journal keeps such records until a durable append covers them, and after the outage
 * writes them again before its own: the journal ends complete, in order, every record once.
 */
import { createTurnJournal } from '../../src/journal/journal';
import { MemoryJournalStore } from '../../src/journal/memoryStore';
import { JournalError, type JournalRecord } from '../../src/journal/records';
import type { AppendOptions, JournalStore } from '../../src/journal/store';

/** A memory store that "crashes": it forgets every record after the last durable append, then refuses two appends. */
class CrashingStore implements JournalStore {
  readonly name = 'crashing';
  inner = new MemoryJournalStore();
  private durableUpTo = 0;
  private down = 0;
  async append(turn: string, records: readonly JournalRecord[], opts: AppendOptions): Promise<void> {
    if (this.down > 0) {
      this.down--;
      throw new JournalError('connection lost (injected)', 'unavailable');
    }
    await this.inner.append(turn, records, opts);
    if (opts.durable) this.durableUpTo = records[records.length - 1]!.n + 1;
  }
  read(turn: string) {
    return this.inner.read(turn);
  }
  list() {
    return this.inner.list();
  }
  lease(turn: string, owner: string, ttl: number) {
    return this.inner.lease(turn, owner, ttl);
  }
  async close() {}
  /** Keep the first `upTo` records (default: the durable ones); the next two appends fail. */
  async crash(turn: string, upTo = this.durableUpTo): Promise<number> {
    const all = (await this.inner.read(turn)).records;
    this.inner = new MemoryJournalStore();
    this.inner.appendSync(turn, all.slice(0, upTo));
    this.down = 2;
    return all.length - upTo;
  }
}

test('records lost by a server crash after they were acknowledged are written again, in order, once', async () => {
  const store = new CrashingStore();
  const j = await createTurnJournal(store, 'lc', {}, { retryMs: 2000 }); // header: durable
  await j.write({ k: 'attempt', a: 1, t: 1 }); // not durable
  await j.write({ k: 'released', a: 1, i: 0, t: 2, id: 'c0', name: 'read', input: {}, safe: true });
  await j.write({ k: 'started', a: 1, i: 0, t: 3, safe: true });
  expect(await store.crash('lc')).toBe(3); // the three acknowledged records are gone
  await j.write({ k: 'result', a: 1, i: 0, t: 4, ok: true, content: 'x' }, true); // durable: fails twice, then reconciles
  await j.flush();
  const recs = (await store.read('lc')).records;
  expect(recs.map((r) => `${r.n}:${r.k}`)).toEqual(['0:turn', '1:attempt', '2:released', '3:started', '4:result']);
  expect(j.retries).toBe(2);
  expect(j.errors.some((e) => /lost records 1–3/.test(e))).toBe(true);
});

test('a gap the journal cannot fill (records it never had) is corruption, not papered over', async () => {
  const store = new CrashingStore();
  const j = await createTurnJournal(store, 'gap', {}, { retryMs: 500 });
  await j.write({ k: 'attempt', a: 1, t: 1 });
  await j.write({ k: 'end', a: 1, t: 2 }, true); // durable: records 1–2 are safe
  // Durable records removed behind the journal's back.
  await store.crash('gap', 1);
  await expect(j.write({ k: 'aborted', a: 1, t: 3 })).rejects.toMatchObject({ code: 'corrupt' });
  await expect(j.flush()).rejects.toMatchObject({ code: 'corrupt' });
});
