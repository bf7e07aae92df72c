/**
 * Journal records: one per lifecycle boundary of a turn (docs/durability.md).
 *
 * A turn's journal is an ordered list of small records. Every record has a sequence number `n`
 * (from 0, no gaps), a kind `k`, and `t`, milliseconds since the turn began (a resumed process
 * continues from the last recorded `t`). Call records name the attempt `a` (from 1) and the call's
 * index `i` in that attempt's model output. Contents (call input, result text, assistant text)
 * live only in the store; logs and errors name kinds, ids, indices and sizes.
 *
 * | k          | written when                                              | durable (fsync) |
 * |------------|-----------------------------------------------------------|-----------------|
 * | turn       | the journal is created (header: format, policy, meta)     | yes             |
 * | attempt    | a model stream (attempt) begins                           | no              |
 * | text       | assistant text/thinking seen since the previous record    | no              |
 * | released   | a call is handed to the consumer (id, name, input)        | no              |
 * | invalid    | a call was judged invalid (answered with an error result) | no              |
 * | approval   | an approval was granted or denied                         | yes             |
 * | started    | BEFORE the tool is invoked (write-ahead)                  | yes, unless safe |
 * | result     | the call's result (real or synthetic)                     | yes, unless safe |
 * | end        | the attempt's model stream ended                          | no              |
 * | aborted    | the user aborted the turn                                 | yes             |
 * | discarded  | the attempt was thrown away (retry, drop)                 | yes             |
 * | resume     | a new process took the turn over from this journal        | yes             |
 * | committed  | the turn's messages were handed to the embedder           | yes             |
 *
 * A record that is not durable is still written (a process crash keeps it: the OS has it); it
 * becomes power-loss safe with the next durable record.
 */
import type { WireFormat } from '../wire/events';

export const JOURNAL_VERSION = 1;

/** How a call of a resumed turn got its result. */
export type ResumedHow = 'kept' | 'rerun' | 'unknown-outcome' | 'reconciled';

export type JournalBody =
  | {
      k: 'turn';
      v: number;
      turn: string;
      t: number;
      format?: WireFormat;
      earlyStart?: 'safe' | 'none' | 'all';
      maxAttempts?: number;
      /** Embedder data needed to resume (e.g. the CLI's simulated tool specs). */
      meta?: Record<string, unknown>;
    }
  | { k: 'attempt'; a: number; t: number }
  | { k: 'text'; a: number; t: number; text?: string; thinking?: string; signature?: string }
  | {
      k: 'released';
      a: number;
      i: number;
      t: number;
      id: string;
      name: string;
      input: Record<string, unknown>;
      safe: boolean;
      needsApproval?: boolean;
    }
  | { k: 'invalid'; a: number; i: number; t: number; id?: string; name?: string }
  | { k: 'approval'; a: number; i: number; t: number; granted: boolean }
  | {
      k: 'started';
      a: number;
      i: number;
      t: number;
      /** A safe call: it is re-run after a crash, so its start is not waited for. */
      safe?: boolean;
      /** A second start after a crash, and why it is allowed. */
      rerun?: 'safe' | 'idempotent' | 'reconciled';
    }
  | {
      k: 'result';
      a: number;
      i: number;
      t: number;
      ok: boolean;
      content: string;
      synthetic?: string;
      resumed?: ResumedHow;
      /** A discarded attempt's result reused by this repeated read-only call (it did not run); kept like any result. */
      reused?: boolean;
    }
  | { k: 'end'; a: number; t: number }
  | { k: 'aborted'; a: number; t: number }
  | { k: 'discarded'; a: number; t: number }
  | { k: 'resume'; t: number; owner: string; count: number }
  | { k: 'committed'; a: number; t: number; outcome: string; callIds: string[] };

export type JournalKind = JournalBody['k'];

/**
 * A stored record: the body plus its sequence number, and `m`, its chained MAC, when the journal
 * is keyed (src/journal/mac.ts). Readers ignore fields they do not know, so a later version may
 * add optional fields to any kind (the format stays `v: 1` while old readers can fold it).
 */
export type JournalRecord = JournalBody & { n: number; m?: string };

const DURABLE: ReadonlySet<JournalKind> = new Set([
  'turn',
  'approval',
  'started',
  'result',
  'aborted',
  'discarded',
  'resume',
  'committed',
]);

/** Must this record be on stable storage before the turn goes on? (`started` of a safe call: no.) */
export function isDurableKind(k: JournalKind): boolean {
  return DURABLE.has(k);
}

const KINDS: ReadonlySet<string> = new Set([...DURABLE, 'attempt', 'text', 'released', 'invalid', 'end']);

/** A structural check of a decoded record (a store hands back whatever it read). */
export function isJournalRecord(v: unknown): v is JournalRecord {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const r = v as Record<string, unknown>;
  if (typeof r.n !== 'number' || typeof r.k !== 'string' || !KINDS.has(r.k) || typeof r.t !== 'number') return false;
  if (r.k === 'turn' || r.k === 'resume') return true;
  if (typeof r.a !== 'number') return false;
  if (r.k === 'released') return typeof r.i === 'number' && typeof r.id === 'string' && typeof r.name === 'string' && typeof r.input === 'object' && r.input !== null;
  if (r.k === 'result') return typeof r.i === 'number' && typeof r.ok === 'boolean' && typeof r.content === 'string';
  if (r.k === 'started' || r.k === 'invalid' || r.k === 'approval') return typeof r.i === 'number';
  return true;
}

/** A turn id is also a file name in the file store: letters, digits, `.`, `_`, `-` (1–128). */
export const TURN_ID_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;

/**
 * Why a journal operation failed. Every store method rejects with a `JournalError` of one of
 * these codes (docs/durability.md "When the store fails"); `retryable` says whether trying the
 * same operation again later may succeed (the journal retries those with a bounded backoff).
 *
 * | code          | meaning                                                                   | retryable |
 * |---------------|---------------------------------------------------------------------------|-----------|
 * | `unavailable` | the store cannot be reached (connection refused/lost, server restarting)  | yes       |
 * | `no_space`    | the disk or quota is full (ENOSPC, EDQUOT)                                | yes       |
 * | `io`          | an I/O error (EIO, a failed fsync: durability unknown, never retried)     | no*       |
 * | `lease_lost`  | the lease expired or was taken by another worker mid-turn                 | no        |
 * | `corrupt`     | a stored record fails its checksum/format, or the sequence has a gap      | no        |
 * | `refused`     | the journal contradicts the turn's lifecycle or its MAC (`record` names it) | no      |
 * | `locked`      | another worker holds the lease                                            | no        |
 * | `bad_turn`    | a bad turn id, or the journal belongs to another turn                     | no        |
 * | `too_large`   | the journal is larger than the store's read limit                         | no        |
 * | `missing`     | no such journal                                                           | no        |
 * | `config`      | a bad option or environment value (a key too short, a bad TTL)            | no        |
 *
 * (*) `io` is retryable only for transient errno codes (EAGAIN, EINTR, EBUSY).
 */
export type JournalErrorCode =
  | 'unavailable'
  | 'no_space'
  | 'io'
  | 'lease_lost'
  | 'corrupt'
  | 'refused'
  | 'locked'
  | 'bad_turn'
  | 'too_large'
  | 'missing'
  | 'config';

export class JournalError extends Error {
  readonly retryable: boolean;
  /** For `refused`/`corrupt`: the number of the offending record. */
  readonly record?: number;
  constructor(
    message: string,
    readonly code: JournalErrorCode = 'io',
    opts: { retryable?: boolean; record?: number } = {},
  ) {
    super(message);
    this.name = 'JournalError';
    this.retryable = opts.retryable ?? (code === 'unavailable' || code === 'no_space');
    if (opts.record !== undefined) this.record = opts.record;
  }
}

const UNAVAILABLE_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ENOTCONN']);
const TRANSIENT_ERRNO = new Set(['EAGAIN', 'EINTR', 'EBUSY']);
// PostgreSQL SQLSTATEs that mean "try again later": class 08 (connection exception), admin/crash
// shutdown, cannot connect now, too many connections, serialization failure, deadlock.
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[123]|53300|40001|40P01)$/;

/**
 * Any error a store's backend threw, as a `JournalError` (one is returned as is). `what` names the
 * operation for the message ("append to turn-7"); the message never holds record contents.
 */
export function toJournalError(err: unknown, what: string): JournalError {
  if (err instanceof JournalError) return err;
  const e = (err ?? {}) as { code?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  const msg = typeof e.message === 'string' ? e.message.split('\n')[0]!.slice(0, 200) : String(err);
  if (code === 'ENOSPC' || code === 'EDQUOT') return new JournalError(`${what}: no space left (${code})`, 'no_space');
  if (UNAVAILABLE_ERRNO.has(code) || UNAVAILABLE_SQLSTATE.test(code)) return new JournalError(`${what}: store unavailable (${code}: ${msg})`, 'unavailable');
  // node-postgres reports a dropped connection without an errno.
  if (/Connection terminated|terminating connection|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended|not queryable/i.test(msg))
    return new JournalError(`${what}: store unavailable (${msg})`, 'unavailable');
  if (TRANSIENT_ERRNO.has(code)) return new JournalError(`${what}: ${code}`, 'io', { retryable: true });
  return new JournalError(`${what}: ${code ? `${code}: ` : ''}${msg}`, 'io');
}

export function checkTurnId(turn: string): void {
  if (!TURN_ID_PATTERN.test(turn))
    throw new JournalError(`invalid turn id ${JSON.stringify(turn.slice(0, 40))} (allowed: ${TURN_ID_PATTERN.source})`, 'bad_turn');
}
