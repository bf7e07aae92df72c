/**
 * An in-memory store (tests, and the reference for the store contract). Nothing survives the
 * process; leases expire by wall time.
 */
import { JournalError, type JournalRecord } from './records';
import type { AppendOptions, JournalLease, JournalListing, JournalRead, JournalStore } from './store';

export class MemoryJournalStore implements JournalStore {
  readonly name = 'memory';
  private readonly turns = new Map<string, JournalRecord[]>();
  private readonly leases = new Map<string, { owner: string; expires: number }>();

  async append(turn: string, records: readonly JournalRecord[], opts: AppendOptions): Promise<void> {
    this.appendSync(turn, records, opts);
  }

  appendSync(turn: string, records: readonly JournalRecord[], _opts?: AppendOptions): void {
    const list = this.turns.get(turn) ?? [];
    for (const r of records) {
      if (r.n !== list.length) throw new JournalError(`${turn}: record ${r.n} appended where ${list.length} was expected`, 'corrupt');
      list.push(structuredClone(r));
    }
    this.turns.set(turn, list);
  }

  async read(turn: string): Promise<JournalRead> {
    return { records: structuredClone(this.turns.get(turn) ?? []), tornBytes: 0 };
  }

  async list(): Promise<JournalListing[]> {
    return [...this.turns].map(([turn, r]) => ({ turn, records: r.length, committed: r.some((x) => x.k === 'committed') }));
  }

  async lease(turn: string, owner: string, ttlMs: number): Promise<JournalLease | undefined> {
    const held = this.leases.get(turn);
    if (held && held.owner !== owner && held.expires > Date.now()) return undefined;
    this.leases.set(turn, { owner, expires: Date.now() + ttlMs });
    return {
      turn,
      owner,
      renew: async (ms = ttlMs) => {
        const h = this.leases.get(turn);
        if (!h || h.owner !== owner) return false;
        h.expires = Date.now() + ms;
        return true;
      },
      release: async () => {
        if (this.leases.get(turn)?.owner === owner) this.leases.delete(turn);
      },
    };
  }

  async close(): Promise<void> {}
}
