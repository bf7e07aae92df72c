/**
 * Open a store from a spec string (CLI flags, child processes of the crash suite):
 * `file:<dir>` (the embedded store; `file-nosync:<dir>` without fsync), `memory`, or a PostgreSQL
 * URL `postgres://user@host:port/db` (also `postgresql://`; an optional `table_prefix=` query
 * parameter picks the tables, default `sluice_`; needs the optional `pg` package).
 * Other stores register an opener (`registerStoreOpener(scheme, …)`).
 */
import { FileJournalStore } from './fileStore';
import { MemoryJournalStore } from './memoryStore';
import { PostgresJournalStore } from './pgStore';
import { JournalError } from './records';
import type { JournalStore } from './store';

type Opener = (rest: string) => JournalStore | Promise<JournalStore>;

const OPENERS = new Map<string, Opener>([
  ['file', (dir) => new FileJournalStore(dir)],
  ['file-nosync', (dir) => new FileJournalStore(dir, { fsync: false })],
  ['memory', () => new MemoryJournalStore()],
  ['postgres', (rest) => openPostgres(`postgres:${rest}`)],
  ['postgresql', (rest) => openPostgres(`postgresql:${rest}`)],
]);

/** A PostgreSQL URL, with sluice's own `table_prefix` parameter taken out before `pg` sees it. */
function openPostgres(spec: string): Promise<JournalStore> {
  let url: URL;
  try {
    url = new URL(spec);
  } catch {
    throw new JournalError('a PostgreSQL journal store needs a URL like postgres://user@host:5432/db', 'bad_turn');
  }
  const tablePrefix = url.searchParams.get('table_prefix') ?? undefined;
  url.searchParams.delete('table_prefix');
  return PostgresJournalStore.connect({ connectionString: url.toString(), tablePrefix });
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
