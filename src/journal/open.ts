/**
 * Open a store from a spec string (CLI flags, child processes of the crash suite):
 * `file:<dir>` (the embedded store; `file-nosync:<dir>` without fsync) or `memory`.
 * Other stores register an opener (`registerStoreOpener('postgres', …)`).
 */
import { FileJournalStore } from './fileStore';
import { MemoryJournalStore } from './memoryStore';
import { JournalError } from './records';
import type { JournalStore } from './store';

type Opener = (rest: string) => JournalStore | Promise<JournalStore>;

const OPENERS = new Map<string, Opener>([
  ['file', (dir) => new FileJournalStore(dir)],
  ['file-nosync', (dir) => new FileJournalStore(dir, { fsync: false })],
  ['memory', () => new MemoryJournalStore()],
]);

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
