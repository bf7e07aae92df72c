/**
 * The embedded default store: one append-only file per turn (`<dir>/<turn id>`), one
 * checksummed JSON line per record (src/journal/codec.ts), fdatasync'd for durable records.
 *
 * Why a file and not SQLite: Node 20 is the floor (`node:sqlite` needs ≥ 22.5), better-sqlite3
 * needs a native build, and a turn has one writer at a time (the lease), so an append-only file
 * with a per-record checksum gives the same crash semantics with no dependency. Writes are
 * synchronous (`appendSync`): the record is in the OS before the engine takes its next step, and
 * the cost (docs/durability.md) is a write and, for durable records, an fdatasync.
 *
 * Leases are lock files (`<file>.lock`, created atomically by a hard link) holding owner, pid, host
 * and expiry; an expired lock, or one whose process is gone on this host, may be taken over (see
 * `lease`). This is a single-machine lease: several machines need a database store.
 *
 * Failures are values (`JournalError`): a full disk is `no_space` (retryable: the journal tries
 * again with backoff), a failed write or fsync `io`. After any failed append the file is closed
 * and reopened on the next one, so a partly written record is cut off like a crash's torn tail. A
 * failed fsync is never retried on the same data (after one, Linux may have dropped the dirty
 * pages and a second fsync would report success for data that is not on disk): `io`, not retryable.
 * Journal files are read only if they are regular files within `maxBytes`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { decodeJournal, encodeRecord } from './codec';
import { holderIsDead, hostIdentity } from './lease';
import { checkTurnId, JournalError, type JournalRecord, toJournalError } from './records';
import { type AppendOptions, DEFAULT_MAX_JOURNAL_BYTES, type JournalLease, type JournalListing, type JournalRead, type JournalStore } from './store';

/** The write/fsync boundary of the file store (tests inject ENOSPC/EIO here). */
export interface FileStoreIO {
  writeSync(fd: number, buf: Buffer, offset: number, length: number): number;
  fdatasyncSync(fd: number): void;
}

export interface FileStoreOptions {
  /** fdatasync durable records (default true). false: measure the cost, or tmpfs tests. */
  fsync?: boolean;
  /** Largest journal file read (default 1 GiB, DEFAULT_MAX_JOURNAL_BYTES): a larger one is `JournalError('too_large')`. */
  maxBytes?: number;
  /** Replace the write/fsync calls (fault injection in tests). */
  io?: FileStoreIO;
}

const REAL_IO: FileStoreIO = {
  writeSync: (fd, buf, offset, length) => fs.writeSync(fd, buf, offset, length),
  fdatasyncSync: (fd) => fs.fdatasyncSync(fd),
};

interface OpenFile {
  fd: number;
  next: number; // the next expected record number
}

interface LockBody {
  owner: string;
  pid: number;
  host: string;
  expires: number;
}

export class FileJournalStore implements JournalStore {
  readonly name: string;
  private readonly fsync: boolean;
  private readonly maxBytes: number;
  private readonly io: FileStoreIO;
  private readonly open = new Map<string, OpenFile>();

  constructor(
    readonly dir: string,
    opts: FileStoreOptions = {},
  ) {
    this.name = `file:${dir}`;
    this.fsync = opts.fsync ?? true;
    this.maxBytes = opts.maxBytes ?? DEFAULT_MAX_JOURNAL_BYTES;
    this.io = opts.io ?? REAL_IO;
  }

  /** The store and turn id for one journal file path (`--journal FILE`). */
  static forFile(file: string, opts?: FileStoreOptions): { store: FileJournalStore; turn: string } {
    const abs = path.resolve(file);
    const turn = path.basename(abs);
    checkTurnId(turn);
    return { store: new FileJournalStore(path.dirname(abs), opts), turn };
  }

  fileOf(turn: string): string {
    checkTurnId(turn);
    return path.join(this.dir, turn);
  }

  async append(turn: string, records: readonly JournalRecord[], opts: AppendOptions): Promise<void> {
    this.appendSync(turn, records, opts);
  }

  appendSync(turn: string, records: readonly JournalRecord[], opts: AppendOptions): void {
    if (records.length === 0) return;
    const what = `append to ${turn}`;
    let f: OpenFile;
    try {
      f = this.openFile(turn);
    } catch (err) {
      throw toJournalError(err, what);
    }
    if (records[0]!.n !== f.next) {
      throw new JournalError(`${turn}: record ${records[0]!.n} appended where ${f.next} was expected`, 'corrupt');
    }
    const buf = records.length === 1 ? encodeRecord(records[0]!) : Buffer.concat(records.map(encodeRecord));
    try {
      let off = 0;
      while (off < buf.length) off += this.io.writeSync(f.fd, buf, off, buf.length - off);
    } catch (err) {
      this.forget(turn); // reopened next time: a partly written record is cut off as a torn tail
      throw toJournalError(err, what);
    }
    f.next += records.length;
    if (opts.durable && this.fsync) {
      try {
        this.io.fdatasyncSync(f.fd);
      } catch (err) {
        this.forget(turn);
        const code = (err as NodeJS.ErrnoException).code ?? 'error';
        throw new JournalError(`${what}: fsync failed (${code}); whether the records are on disk is unknown`, 'io', { retryable: false });
      }
    }
  }

  private forget(turn: string): void {
    const f = this.open.get(turn);
    if (!f) return;
    this.open.delete(turn);
    try {
      fs.closeSync(f.fd);
    } catch {
      /* already unusable */
    }
  }

  /** Open for appending; a torn tail from a crash is cut off first so the next record starts clean. */
  private openFile(turn: string): OpenFile {
    let f = this.open.get(turn);
    if (f) return f;
    const file = this.fileOf(turn);
    let created = false;
    let next = 0;
    const bytes = this.readFile(file, turn);
    if (bytes) {
      const d = decodeJournal(bytes, turn);
      next = d.records.length;
      if (d.tornBytes > 0) {
        fs.truncateSync(file, d.validBytes);
      }
    } else {
      fs.mkdirSync(this.dir, { recursive: true });
      created = true;
    }
    const fd = fs.openSync(file, 'a');
    if (created && this.fsync) syncDir(this.dir);
    f = { fd, next };
    this.open.set(turn, f);
    return f;
  }

  /**
   * A journal file's bytes (undefined when there is none): only a regular file, only up to
   * `maxBytes` — opened non-blocking and checked on the open descriptor, so a FIFO, a device or a
   * directory in its place is refused, never read.
   */
  private readFile(file: string, turn: string): Buffer | undefined {
    let fd: number;
    try {
      fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw toJournalError(err, `read ${turn}`);
    }
    try {
      const st = fs.fstatSync(fd);
      if (!st.isFile()) throw new JournalError(`${turn}: the journal is not a regular file`, 'bad_turn');
      if (st.size > this.maxBytes) throw new JournalError(`${turn}: the journal is ${st.size} bytes, over the limit of ${this.maxBytes}`, 'too_large');
      const buf = Buffer.allocUnsafe(st.size);
      let off = 0;
      while (off < buf.length) {
        const n = fs.readSync(fd, buf, off, buf.length - off, off);
        if (n === 0) break;
        off += n;
      }
      return buf.subarray(0, off);
    } catch (err) {
      throw toJournalError(err, `read ${turn}`);
    } finally {
      fs.closeSync(fd);
    }
  }

  async read(turn: string): Promise<JournalRead> {
    const bytes = this.readFile(this.fileOf(turn), turn);
    if (!bytes) return { records: [], tornBytes: 0 };
    const d = decodeJournal(bytes, turn);
    return { records: d.records, tornBytes: d.tornBytes };
  }

  async list(): Promise<JournalListing[]> {
    let names: string[];
    try {
      names = fs.readdirSync(this.dir).sort();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw toJournalError(err, `list ${this.dir}`);
    }
    const out: JournalListing[] = [];
    for (const name of names) {
      if (name.endsWith('.lock')) continue;
      try {
        checkTurnId(name);
        const r = await this.read(name);
        if (r.records[0]?.k !== 'turn') continue;
        out.push({ turn: name, records: r.records.length, committed: r.records.some((x) => x.k === 'committed') });
      } catch {
        continue; // not a journal (or corrupt): not listed
      }
    }
    return out;
  }

  /**
   * A lock file is created complete and atomically: written to a private temporary name, then
   * hard-linked to `<file>.lock` (link fails when the lock exists). A stale lock (expired, or its
   * process gone on this host) is removed only by the holder of `<file>.lock.break` (taken the
   * same way), after checking it is still the lock it judged stale; racers that find the breaker
   * taken give up. So no live lock is ever removed, and of any number of racers one wins.
   */
  async lease(turn: string, owner: string, ttlMs: number): Promise<JournalLease | undefined> {
    try {
      return this.leaseOrThrow(turn, owner, ttlMs);
    } catch (err) {
      throw toJournalError(err, `lease ${turn}`);
    }
  }

  private leaseOrThrow(turn: string, owner: string, ttlMs: number): JournalLease | undefined {
    const lock = this.fileOf(turn) + '.lock';
    const breaker = lock + '.break';
    fs.mkdirSync(this.dir, { recursive: true });
    const mine = `${lock}.${process.pid}.${Math.random().toString(36).slice(2, 10)}`;
    const take = (target: string): boolean => {
      fs.writeFileSync(mine, JSON.stringify({ owner, pid: process.pid, host: hostIdentity(), expires: Date.now() + ttlMs } satisfies LockBody));
      try {
        fs.linkSync(mine, target);
        return true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        return false;
      } finally {
        fs.rmSync(mine, { force: true });
      }
    };
    for (let tries = 0; tries < 3; tries++) {
      if (take(lock)) return this.leaseHandle(turn, owner, lock, ttlMs);
      const raw = readText(lock);
      if (raw === undefined) continue; // released meanwhile: try again
      const held = parseLock(raw);
      if (held && held.owner === owner && held.pid === process.pid) return this.leaseHandle(turn, owner, lock, ttlMs);
      if (held && !lockIsStale(held)) return undefined;
      if (!take(breaker)) {
        // Someone else is breaking it. A breaker left by a dead process goes after 10 s.
        const age = fileAgeMs(breaker);
        if (age !== undefined && age > 10_000) fs.rmSync(breaker, { force: true });
        return undefined;
      }
      try {
        if (readText(lock) === raw) fs.rmSync(lock, { force: true });
      } finally {
        fs.rmSync(breaker, { force: true });
      }
    }
    return undefined;
  }

  private leaseHandle(turn: string, owner: string, lock: string, ttlMs: number): JournalLease {
    let released = false;
    return {
      turn,
      owner,
      renew: async (ms = ttlMs) => {
        const held = readLock(lock);
        // An expired lease may already be broken by another worker: it is lost, not renewed.
        if (released || !held || held.owner !== owner || Date.now() > held.expires) return false;
        // Replace atomically: a reader never sees a half-written lock.
        const tmp = `${lock}.${process.pid}.renew`;
        fs.writeFileSync(tmp, JSON.stringify({ ...held, expires: Date.now() + ms }));
        fs.renameSync(tmp, lock);
        return true;
      },
      release: async () => {
        if (released) return;
        released = true;
        const held = readLock(lock);
        if (held && held.owner === owner) fs.rmSync(lock, { force: true });
      },
    };
  }

  async close(): Promise<void> {
    for (const turn of [...this.open.keys()]) this.forget(turn);
  }
}

function fileAgeMs(file: string): number | undefined {
  try {
    return Date.now() - fs.statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

function readText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

function parseLock(raw: string): LockBody | undefined {
  try {
    const v = JSON.parse(raw) as Partial<LockBody>;
    if (typeof v.owner === 'string' && typeof v.pid === 'number' && typeof v.expires === 'number')
      return { owner: v.owner, pid: v.pid, host: String(v.host ?? ''), expires: v.expires };
  } catch {
    /* not a lock body: treated as stale */
  }
  return undefined;
}

function readLock(file: string): LockBody | undefined {
  const raw = readText(file);
  return raw === undefined ? undefined : parseLock(raw);
}

function lockIsStale(l: LockBody): boolean {
  return Date.now() > l.expires || holderIsDead(l.host, l.pid);
}

function syncDir(dir: string): void {
  try {
    const fd = fs.openSync(dir, 'r');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    /* some file systems refuse to fsync a directory; the file's own fsync still holds */
  }
}
