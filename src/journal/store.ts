/**
 * The journal store contract. A store keeps, per turn id, an append-only list of records and a
 * lease (who may write and resume the turn). Implementations: `FileJournalStore` (embedded
 * default, fsync'd append-only file per turn), `MemoryJournalStore` (tests; no durability).
 * Another store (a database) implements the same five methods; docs/durability.md says what each
 * must guarantee. Every method is async; none logs record contents.
 */
import type { JournalRecord } from './records';

/**
 * The default read limit of the stores (1 GiB): a journal larger than its store's `maxBytes` is
 * refused with `JournalError('too_large')` before it is read. Both stores measure a journal the
 * same way — its size as a file-store file, each record's JSON plus 10 bytes (CRC, space, newline)
 * — so one journal is within the limit on both or on neither.
 */
export const DEFAULT_MAX_JOURNAL_BYTES = 1024 ** 3;

export interface AppendOptions {
  /** Resolve only once the records survive a crash and a power loss (fsync, a committed transaction). */
  durable: boolean;
}

export interface JournalRead {
  /** Every intact record, in order (`n` = 0, 1, 2, …). */
  records: JournalRecord[];
  /** Bytes (or rows) of a torn last record that were ignored: what a crash mid-append leaves. */
  tornBytes: number;
}

export interface JournalListing {
  turn: string;
  records: number;
  /** The journal has a `committed` record: nothing left to resume. */
  committed: boolean;
}

export interface JournalLease {
  readonly turn: string;
  readonly owner: string;
  /** Extend the lease; false when it was lost (expired and taken by another owner). */
  renew(ttlMs?: number): Promise<boolean>;
  /** Give the lease up (idempotent). */
  release(): Promise<void>;
}

export interface JournalStore {
  /** For messages: 'file:<dir>', 'memory', 'postgres', … */
  readonly name: string;
  /**
   * Append records to a turn's journal, after every record appended before (same order as
   * calls). Records are numbered by the caller (`n`); a store may reject a gap or a duplicate.
   * With `durable: true` the promise resolves only when the records (and all before them)
   * survive a crash. A store must never leave a torn record in the middle: a crash mid-append
   * may leave a torn LAST record, which `read` must detect and ignore, and the next append
   * must not be corrupted by it.
   */
  append(turn: string, records: readonly JournalRecord[], opts: AppendOptions): Promise<void>;
  /**
   * Optional synchronous append with the same guarantees. When present the journal writes each
   * record at the exact point of the lifecycle event (no queue): deterministic under a virtual
   * clock, and nothing is ever lost in a queue when the process dies.
   */
  appendSync?(turn: string, records: readonly JournalRecord[], opts: AppendOptions): void;
  /** The turn's intact records; an unknown turn reads as no records. */
  read(turn: string): Promise<JournalRead>;
  /** The turns this store holds. */
  list(): Promise<JournalListing[]>;
  /**
   * Take the exclusive right to write/resume a turn for `ttlMs`. Resolves undefined when another
   * owner holds a live lease: of two workers racing for one turn exactly one gets it.
   */
  lease(turn: string, owner: string, ttlMs: number): Promise<JournalLease | undefined>;
  close(): Promise<void>;
}
