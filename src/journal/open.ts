/**
 * Open a store from a spec string (CLI flags, child processes of the crash suite):
 * `file:<dir>` (the embedded store; `file-nosync:<dir>` without fsync), `memory`, or a PostgreSQL
 * URL `postgres://user@host:port/db` (also `postgresql://`; an optional `table_prefix=` query
 * parameter picks the tables, default `sluice_`; needs the optional `pg` package).
 * Both the file and the PostgreSQL store take `?max_bytes=N` (also `512k`, `64m`, `1g`): the
 * largest journal the store reads (default 1 GiB, DEFAULT_MAX_JOURNAL_BYTES). In a `file:` spec
 * the first `?` starts the parameters (`max_bytes` is the only one); a bad or unknown parameter is
 * `JournalError('config')`.
 * Other stores register an opener (`registerStoreOpener(scheme, …)`).
 */
import { FileJournalStore } from './fileStore';
import { MemoryJournalStore } from './memoryStore';
import { PostgresJournalStore } from './pgStore';
import { JournalError } from './records';
import type { JournalStore } from './store';

type Opener = (rest: string) => JournalStore | Promise<JournalStore>;

const OPENERS = new Map<string, Opener>([
  ['file', (rest) => openFile(rest, true)],
  ['file-nosync', (rest) => openFile(rest, false)],
  ['memory', () => new MemoryJournalStore()],
  ['postgres', (rest) => openPostgres(`postgres:${rest}`)],
  ['postgresql', (rest) => openPostgres(`postgresql:${rest}`)],
]);

/** `<dir>` or `<dir>?max_bytes=N`. */
function openFile(rest: string, fsync: boolean): JournalStore {
  const q = rest.indexOf('?');
  if (q < 0) return new FileJournalStore(rest, { fsync });
  const params = new URLSearchParams(rest.slice(q + 1));
  const maxBytes = maxBytesOf(params);
  const unknown = [...params.keys()].filter((k) => k !== 'max_bytes');
  if (unknown.length > 0) throw new JournalError(`journal store file: unknown parameter "${unknown[0]}" (known: max_bytes)`, 'config');
  return new FileJournalStore(rest.slice(0, q), maxBytes === undefined ? { fsync } : { fsync, maxBytes });
}

/** The `max_bytes` parameter (taken out of `params`): bytes, or with a k/m/g suffix (1024-based). */
function maxBytesOf(params: URLSearchParams): number | undefined {
  const all = params.getAll('max_bytes');
  params.delete('max_bytes');
  if (all.length === 0) return undefined;
  const m = all.length === 1 ? /^(\d{1,15})([kmg]?)$/i.exec(all[0]!.trim()) : null;
  const n = m ? Number(m[1]) * { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[m[2]!.toLowerCase() as '' | 'k' | 'm' | 'g'] : NaN;
  if (!Number.isSafeInteger(n) || n < 1) {
    const got = all.length === 1 ? `"${all[0]}"` : `${all.length} values`;
    throw new JournalError(`journal store: max_bytes must be one whole number of bytes like 1048576, 512k or 64m (got ${got})`, 'config');
  }
  return n;
}

/** A PostgreSQL URL, with sluice's own `table_prefix` and `max_bytes` parameters taken out before `pg` sees them. */
function openPostgres(spec: string): Promise<JournalStore> {
  let url: URL;
  try {
    url = new URL(spec);
  } catch {
    throw new JournalError('a PostgreSQL journal store needs a URL like postgres://user@host:5432/db', 'bad_turn');
  }
  const tablePrefix = url.searchParams.get('table_prefix') ?? undefined;
  url.searchParams.delete('table_prefix');
  const maxBytes = maxBytesOf(url.searchParams);
  return PostgresJournalStore.connect({ connectionString: url.toString(), tablePrefix, ...(maxBytes === undefined ? {} : { maxBytes }) });
}

export function registerStoreOpener(scheme: string, open: Opener): void {
  OPENERS.set(scheme, open);
}

export async function openStore(spec: string): Promise<JournalStore> {
  const colon = spec.indexOf(':');
  const scheme = colon < 0 ? spec : spec.slice(0, colon);
  const open = OPENERS.get(scheme);
  if (!open) throw new JournalError(`unknown journal store "${scheme}" (known: ${[...OPENERS.keys()].join(', ')})`, 'bad_turn');
  return open(colon < 0 ? '' : spec.slice(colon + 1));
}
