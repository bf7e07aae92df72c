/**
 * The optional journal MAC (docs/durability.md "Journal checks"): with a key, every record carries
 * `m`, an HMAC-SHA256 (node:crypto) chained over the records —
 *
 *   m(0) = HMAC(key, seed ‖ "\n" ‖ JSON(record 0 without m)),  seed = HMAC(key, "sluice-journal\0" ‖ turn id)
 *   m(n) = HMAC(key, m(n-1) ‖ "\n" ‖ JSON(record n without m))
 *
 * so a record cannot be forged, changed, reordered, dropped from the middle or moved to another
 * turn's journal without the key. (A tail cut off is indistinguishable from a crash and is
 * handled as one.) The key: the `journalKey` option or `SLUICE_JOURNAL_KEY`, at least 16 bytes.
 */
import { nodeCrypto } from '../nodeCrypto';
import { JournalError, type JournalRecord } from './records';

export const MIN_KEY_BYTES = 16;

/** The key to use: the option, else `SLUICE_JOURNAL_KEY`, else none. A short key throws (one line). */
export function journalKey(option?: string | Buffer, env: NodeJS.ProcessEnv = process.env): Buffer | undefined {
  const raw = option ?? (env.SLUICE_JOURNAL_KEY === '' ? undefined : env.SLUICE_JOURNAL_KEY);
  if (raw === undefined) return undefined;
  const key = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw;
  if (key.length < MIN_KEY_BYTES)
    throw new JournalError(`the journal key (journalKey / SLUICE_JOURNAL_KEY) must be at least ${MIN_KEY_BYTES} bytes (got ${key.length})`, 'config');
  return key;
}

/** The chain's start for a turn. */
export function macSeed(key: Buffer, turn: string): string {
  return nodeCrypto().createHmac('sha256', key).update(`sluice-journal\0${turn}`).digest('base64url');
}

/** The MAC of `rec` (its `m`, if any, is left out) after `prev`. */
export function recordMac(key: Buffer, prev: string, rec: JournalRecord): string {
  const { m: _m, ...rest } = rec;
  return nodeCrypto().createHmac('sha256', key).update(prev).update('\n').update(JSON.stringify(rest)).digest('base64url');
}

/** How a reader treats a journal's MAC chain: `check` (the default) or `skip` (read unchecked, on purpose). */
export type MacVerify = 'check' | 'skip';

/** The journal carries a MAC chain (its records have `m`). */
export function isSigned(records: readonly JournalRecord[]): boolean {
  return records.some((r) => typeof r.m === 'string');
}

/**
 * Signed means checked: a journal with a MAC chain and no key to check it is refused
 * (`JournalError('refused')`, one line naming SLUICE_JOURNAL_KEY) unless the reader asked to read
 * it unchecked (`verify: 'skip'`, the CLI's `--unchecked`). With a key, returns it (the caller
 * checks the chain, e.g. `checkJournal` or `macChainBreak`).
 */
export function requireKeyForSigned(records: readonly JournalRecord[], key: Buffer | undefined, verify: MacVerify, label: string): void {
  if (key !== undefined || verify === 'skip' || !isSigned(records)) return;
  throw new JournalError(
    `${label}: the journal is signed (MAC chain) and no key is set to check it: set SLUICE_JOURNAL_KEY (or journalKey), or read it unchecked on purpose (--unchecked / verify: 'skip')`,
    'refused',
  );
}

/** The first record whose MAC does not verify under `key` (number and reason), or undefined when the chain holds. */
export function macChainBreak(records: readonly JournalRecord[], key: Buffer, turn: string): { record: number; reason: string } | undefined {
  let mac = macSeed(key, turn);
  for (let n = 0; n < records.length; n++) {
    const r = records[n]!;
    const want = recordMac(key, mac, r);
    if (typeof r.m !== 'string') return { record: n, reason: 'no MAC (the journal was not written with this key)' };
    if (r.m !== want) return { record: n, reason: 'MAC mismatch (not written by sluice with this key, or changed)' };
    mac = want;
  }
  return undefined;
}
