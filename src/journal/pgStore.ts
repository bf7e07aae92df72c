/**
 * A journal store on PostgreSQL (through `pg`, an optional peer dependency): several workers on
 * several machines share one database; a lease per turn makes sure two workers never write or
 * resume the same turn.
 *
 *   const store = await PostgresJournalStore.connect({ connectionString: process.env.DATABASE_URL });
 *
 * Tables (created on connect unless `createTables: false`; names prefixed by `tablePrefix`,
 * default `sluice_`):
 *
 *   sluice_journal (turn text, n integer, k text, body text, PRIMARY KEY (turn, n))
 *
 * `body` is the record's JSON as text, not jsonb: jsonb refuses `\u0000`, which tool input and
 * result text may hold.
 *   sluice_lease   (turn text PRIMARY KEY, owner text, expires_at timestamptz)
 *
 * Guarantees (the JournalStore contract, docs/durability.md):
 * - `append` writes its records in one transaction: all or none, so there is never a torn record
 *   (`tornBytes` is always 0). A durable append commits with `synchronous_commit = on` (the commit
 *   is on the server's disk — and on a synchronous standby when one is configured — before the
 *   promise resolves); a non-durable one sets `synchronous_commit = off` for its transaction
 *   (survives a client crash, may be lost with the server's power).
 * - Records must continue the turn's sequence (`n` = the number already stored): a gap or a
 *   duplicate is rejected with `JournalError('corrupt')` and nothing of that append is written.
 * - `read` refuses a journal over `maxBytes` (default 1 GiB) with `JournalError('too_large')`
 *   before fetching a row, measured as the file store measures its file (each record's JSON + 10
 *   bytes), so the same journal is within the limit on both stores or on neither; it then fetches
 *   the records in bounded pages (`pageBytes`, default 4 MiB; `pageRows`, default 1000).
 * - `lease` is one atomic upsert: of any number of workers racing for a turn, exactly one gets a
 *   live lease; an expired lease can be taken over, and so can one whose holder ran on this host
 *   and is gone (src/journal/lease.ts). Lease times are the database server's clock.
 * - Failures are values: every method rejects with a `JournalError` (`unavailable` when the server
 *   cannot be reached or the connection drops mid-query, retryable). The pool this store creates
 *   has an 'error' listener, and a client checked out for a transaction has one while it is out,
 *   so a server that goes away never surfaces as an unhandled 'error' event. (A pool you pass in
 *   is yours: give it `pool.on('error', …)`.)
 * Nothing here logs record contents.
 */
import { checkRecordDepth, LINE_OVERHEAD } from './codec';
import { holderIsDead, hostIdentity } from './lease';
import { JournalError, type JournalRecord, isJournalRecord, toJournalError } from './records';
import { type AppendOptions, DEFAULT_MAX_JOURNAL_BYTES, type JournalLease, type JournalListing, type JournalRead, type JournalStore } from './store';

/** The part of a `pg` result this store reads. */
interface PgResult {
  rows: Record<string, unknown>[];
  rowCount: number | null;
}

type ErrorListener = (err: Error) => void;

/** A connection checked out of the pool (`pg.PoolClient`). */
export interface PgClientLike {
  query(text: string, params?: unknown[]): Promise<PgResult>;
  /** `release(err)` with an error: the pool destroys the connection instead of reusing it. */
  release(err?: Error | boolean): void;
  on?(event: 'error', fn: ErrorListener): unknown;
  removeListener?(event: 'error', fn: ErrorListener): unknown;
}

/** The part of a `pg.Pool` this store uses (a real `pg.Pool` fits). */
export interface PgPoolLike {
  query(text: string, params?: unknown[]): Promise<PgResult>;
  connect(): Promise<PgClientLike>;
  end(): Promise<void>;
  on?(event: 'error', fn: ErrorListener): unknown;
}

export interface PostgresStoreOptions {
  /** `postgres://user:pass@host:port/db`; used when no `pool` is given. */
  connectionString?: string;
  /** Your own pool (it is not ended by `close()`). */
  pool?: PgPoolLike;
  /** Table name prefix (letters, digits, `_`). Default `sluice_`. */
  tablePrefix?: string;
  /** Create the tables if missing (default true). */
  createTables?: boolean;
  /** For the pool this store creates: give up connecting after this many ms (default 5000). */
  connectTimeoutMs?: number;
  /** For the pool this store creates: give up on a query after this many ms (default 30000). */
  queryTimeoutMs?: number;
  /**
   * Largest journal read (default 1 GiB, DEFAULT_MAX_JOURNAL_BYTES), counted as its file-store
   * size: each record's JSON plus 10 bytes. A larger one is `JournalError('too_large')`.
   */
  maxBytes?: number;
  /**
   * `read` fetches a journal in pages of at most this many bytes of record JSON (default 4 MiB,
   * DEFAULT_PAGE_BYTES; a record larger than that is a page of its own) and at most `pageRows`
   * records (default 1000), so the driver never holds more than one page of rows on top of the
   * records already decoded.
   */
  pageBytes?: number;
  pageRows?: number;
}

export const DEFAULT_PAGE_BYTES = 4 * 1024 * 1024;
export const DEFAULT_PAGE_ROWS = 1000;

interface PoolConfig {
  connectionString?: string;
  connectionTimeoutMillis?: number;
  query_timeout?: number;
  keepAlive?: boolean;
}

/**
 * Load `pg` lazily: it is an optional peer dependency, needed only for this store. A dynamic
 * import (works from the ESM and CommonJS builds) of a computed name, so bundlers leave it to be
 * resolved at run time instead of requiring it at build time (the comments keep webpack and Vite
 * from replacing it with an empty module context, which would never find an installed pg).
 */
async function loadPg(): Promise<{ Pool: new (cfg: PoolConfig) => PgPoolLike }> {
  const name = 'pg';
  try {
    const mod = (await import(/* webpackIgnore: true */ /* @vite-ignore */ name)) as { Pool?: new (cfg: PoolConfig) => PgPoolLike; default?: { Pool: new (cfg: PoolConfig) => PgPoolLike } };
    const Pool = mod.Pool ?? mod.default?.Pool;
    if (typeof Pool !== 'function') throw new Error('no Pool');
    return { Pool };
  } catch {
    throw new JournalError('the PostgreSQL journal store needs the "pg" package: npm install pg', 'io');
  }
}

export class PostgresJournalStore implements JournalStore {
  readonly name = 'postgres';
  private readonly journal: string;
  private readonly leaseTable: string;

  private constructor(
    private readonly pool: PgPoolLike,
    private readonly ownsPool: boolean,
    prefix: string,
    private readonly maxBytes: number,
    private readonly page: { bytes: number; rows: number },
  ) {
    this.journal = `${prefix}journal`;
    this.leaseTable = `${prefix}lease`;
  }

  static async connect(opts: PostgresStoreOptions = {}): Promise<PostgresJournalStore> {
    const prefix = opts.tablePrefix ?? 'sluice_';
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,40}$/.test(prefix)) throw new JournalError(`invalid table prefix ${JSON.stringify(prefix)}`, 'config');
    const maxBytes = opts.maxBytes ?? DEFAULT_MAX_JOURNAL_BYTES;
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) throw new JournalError(`maxBytes must be a whole number of bytes (got ${String(opts.maxBytes)})`, 'config');
    let pool = opts.pool;
    if (!pool) {
      pool = new (await loadPg()).Pool({
        connectionString: opts.connectionString,
        connectionTimeoutMillis: opts.connectTimeoutMs ?? 5000,
        query_timeout: opts.queryTimeoutMs ?? 30_000,
        keepAlive: true,
      });
      // An idle connection the server dropped: the pool discards it; the next query reconnects.
      pool.on?.('error', () => undefined);
    }
    const page = { bytes: opts.pageBytes ?? DEFAULT_PAGE_BYTES, rows: opts.pageRows ?? DEFAULT_PAGE_ROWS };
    if (!Number.isSafeInteger(page.bytes) || page.bytes < 1 || !Number.isSafeInteger(page.rows) || page.rows < 1)
      throw new JournalError(`pageBytes and pageRows must be whole numbers ≥ 1 (got ${String(opts.pageBytes)}, ${String(opts.pageRows)})`, 'config');
    const store = new PostgresJournalStore(pool, opts.pool === undefined, prefix, maxBytes, page);
    try {
      if (opts.createTables !== false) await store.createTables();
    } catch (err) {
      if (!opts.pool) await pool.end().catch(() => undefined);
      throw toJournalError(err, 'create the journal tables');
    }
    return store;
  }

  private async createTables(): Promise<void> {
    // Two workers may create the tables at once: IF NOT EXISTS can still race on the catalog, so
    // serialise with a transaction-scoped advisory lock.
    await this.transaction('create the journal tables', async (c) => {
      await c.query('SELECT pg_advisory_xact_lock(hashtext($1))', [this.journal]);
      await c.query(
        `CREATE TABLE IF NOT EXISTS ${this.journal} (turn text NOT NULL, n integer NOT NULL, k text NOT NULL, body text NOT NULL, PRIMARY KEY (turn, n))`,
      );
      await c.query(`CREATE TABLE IF NOT EXISTS ${this.leaseTable} (turn text PRIMARY KEY, owner text NOT NULL, expires_at timestamptz NOT NULL)`);
      // The holder's host identity and pid (tables created by earlier versions lack them).
      await c.query(`ALTER TABLE ${this.leaseTable} ADD COLUMN IF NOT EXISTS host text NOT NULL DEFAULT '', ADD COLUMN IF NOT EXISTS pid integer NOT NULL DEFAULT 0`);
    });
  }

  /** One statement on a pooled connection; any failure as a JournalError. */
  private async q(what: string, text: string, params?: unknown[]): Promise<PgResult> {
    try {
      return await this.pool.query(text, params);
    } catch (err) {
      throw toJournalError(err, what);
    }
  }

  private async transaction<T>(what: string, fn: (c: PgClientLike) => Promise<T>): Promise<T> {
    let c: PgClientLike;
    try {
      c = await this.pool.connect();
    } catch (err) {
      throw toJournalError(err, what);
    }
    // While the client is checked out the pool does not listen for its errors: a connection the
    // server drops between two statements would otherwise be an unhandled 'error' event.
    let lost: Error | undefined;
    const onError = (err: Error): void => {
      lost ??= err;
    };
    c.on?.('error', onError);
    try {
      await c.query('BEGIN');
      const out = await fn(c);
      await c.query('COMMIT');
      return out;
    } catch (err) {
      const je = toJournalError(err, what);
      if (je.code === 'unavailable') lost ??= je;
      else await c.query('ROLLBACK').catch(() => undefined);
      throw je;
    } finally {
      c.removeListener?.('error', onError);
      // A connection that failed is destroyed, not handed to the next transaction.
      c.release(lost ?? undefined);
    }
  }

  async append(turn: string, records: readonly JournalRecord[], opts: AppendOptions): Promise<void> {
    if (records.length === 0) return;
    await this.transaction(`append to ${turn}`, async (c) => {
      if (!opts.durable) await c.query('SET LOCAL synchronous_commit = off');
      // Lock the turn's sequence for this transaction so the gap check and the insert agree.
      await c.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`${this.journal}:${turn}`]);
      const { rows } = await c.query(`SELECT count(*)::int AS n FROM ${this.journal} WHERE turn = $1`, [turn]);
      let next = Number(rows[0]?.n ?? 0);
      const ns: number[] = [];
      const ks: string[] = [];
      const bodies: string[] = [];
      for (const r of records) {
        if (r.n !== next) throw new JournalError(`${turn}: record ${r.n} appended where ${next} was expected`, 'corrupt');
        next++;
        ns.push(r.n);
        ks.push(r.k);
        bodies.push(JSON.stringify(r));
      }
      await c.query(
        `INSERT INTO ${this.journal} (turn, n, k, body) SELECT $1, * FROM unnest($2::int[], $3::text[], $4::text[])`,
        [turn, ns, ks, bodies],
      );
    });
  }

  async read(turn: string): Promise<JournalRead> {
    const what = `read ${turn}`;
    // The size first, so that a journal over the limit is never fetched into memory.
    const size = await this.q(what, `SELECT coalesce(sum(octet_length(body) + ${LINE_OVERHEAD}), 0)::bigint AS bytes FROM ${this.journal} WHERE turn = $1`, [turn]);
    this.checkSize(turn, Number(size.rows[0]?.bytes ?? 0));
    const records: JournalRecord[] = [];
    let bytes = 0;
    // Bounded pages, keyset-paginated by n: from record `n` on, at most pageRows records whose
    // JSON adds up to at most pageBytes (the first always comes, alone when it is larger).
    const pageSql = `SELECT j.body FROM ${this.journal} j JOIN (
        SELECT n, sum(octet_length(body)) OVER (ORDER BY n) AS upto
        FROM ${this.journal} WHERE turn = $1 AND n >= $2 ORDER BY n LIMIT $3
      ) p ON j.turn = $1 AND j.n = p.n WHERE p.n = $2 OR p.upto <= $4 ORDER BY j.n`;
    for (;;) {
      const { rows } = await this.q(what, pageSql, [turn, records.length, this.page.rows, this.page.bytes]);
      if (rows.length === 0) break;
      for (const row of rows) {
        let r: unknown;
        const body = String(row.body);
        row.body = undefined; // the page's rows are let go of as they are decoded
        bytes += Buffer.byteLength(body) + LINE_OVERHEAD;
        this.checkSize(turn, bytes); // records appended between the statements
        checkRecordDepth(body, turn, records.length);
        try {
          r = JSON.parse(body);
        } catch {
          r = undefined;
        }
        if (!isJournalRecord(r) || r.n !== records.length)
          throw new JournalError(`${turn}: stored record ${records.length} is malformed`, 'corrupt', { record: records.length });
        records.push(r);
      }
    }
    return { records, tornBytes: 0 };
  }

  private checkSize(turn: string, bytes: number): void {
    if (bytes > this.maxBytes) throw new JournalError(`${turn}: the journal is ${bytes} bytes, over the limit of ${this.maxBytes}`, 'too_large');
  }

  async list(): Promise<JournalListing[]> {
    const { rows } = await this.q(
      'list turns',
      `SELECT turn, count(*)::int AS records, bool_or(k = 'committed') AS committed FROM ${this.journal} GROUP BY turn ORDER BY turn`,
    );
    return rows.map((r) => ({ turn: String(r.turn), records: Number(r.records), committed: r.committed === true }));
  }

  async lease(turn: string, owner: string, ttlMs: number): Promise<JournalLease | undefined> {
    const ms = Math.max(1, Math.round(ttlMs));
    const host = hostIdentity();
    const what = `lease ${turn}`;
    // One statement: insert, or take over a lease that expired or is already ours. Concurrent
    // upserts on one key serialise on the row, so exactly one racer sees its owner come back.
    const { rows } = await this.q(
      what,
      `INSERT INTO ${this.leaseTable} AS l (turn, owner, expires_at, host, pid) VALUES ($1, $2, now() + $3 * interval '1 millisecond', $4, $5)
       ON CONFLICT (turn) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at, host = EXCLUDED.host, pid = EXCLUDED.pid
       WHERE l.expires_at < now() OR l.owner = EXCLUDED.owner
       RETURNING owner`,
      [turn, owner, ms, host, process.pid],
    );
    if (rows[0]?.owner !== owner) {
      // Held and live by the clock: taken over at once only when its holder ran on this host and
      // is gone. The update names the dead holder, so of several racers exactly one wins.
      const held = (await this.q(what, `SELECT owner, host, pid FROM ${this.leaseTable} WHERE turn = $1`, [turn])).rows[0];
      if (!held || !holderIsDead(String(held.host), Number(held.pid))) return undefined;
      const took = await this.q(
        what,
        `UPDATE ${this.leaseTable} SET owner = $2, expires_at = now() + $3 * interval '1 millisecond', host = $4, pid = $5
         WHERE turn = $1 AND owner = $6 AND host = $7 AND pid = $8 RETURNING owner`,
        [turn, owner, ms, host, process.pid, String(held.owner), String(held.host), Number(held.pid)],
      );
      if (took.rows[0]?.owner !== owner) return undefined;
    }
    return {
      turn,
      owner,
      renew: async (next = ttlMs) => {
        const r = await this.q(
          `renew the lease of ${turn}`,
          `UPDATE ${this.leaseTable} SET expires_at = now() + $3 * interval '1 millisecond' WHERE turn = $1 AND owner = $2`,
          [turn, owner, Math.max(1, Math.round(next))],
        );
        return (r.rowCount ?? 0) > 0;
      },
      release: async () => {
        await this.q(`release the lease of ${turn}`, `DELETE FROM ${this.leaseTable} WHERE turn = $1 AND owner = $2`, [turn, owner]);
      },
    };
  }

  async close(): Promise<void> {
    if (this.ownsPool) await this.pool.end();
  }
}
