/**
 * Journal files for the CLI, shared by `sluice replay --journal` (a new journal for the replayed
 * turn) and `sluice resume` (an existing one): below both, so neither imports the other for it.
 */
import * as fs from 'node:fs';
import { UsageError } from './args';
import { maxInputBytes } from './input';
import type { TurnController } from '../engine/controller';
import { FileJournalStore } from '../journal/fileStore';
import { createTurnJournal } from '../journal/journal';
import { JournalError } from '../journal/records';
import type { Dispatch } from '../trace/replay';
import type { SimToolSpec } from '../trace/trace';
import type { WireFormat } from '../wire/events';

/** `replay --journal FILE [--crash-at MS]`: a new journal for the replayed turn. */
export async function journalForReplay(
  file: string,
  o: { format: WireFormat; dispatch: Dispatch; tools?: SimToolSpec[]; crashAtMs?: number },
): Promise<{ attach(c: TurnController): void; close(): Promise<void> }> {
  if (fs.existsSync(file)) throw new UsageError(`--journal ${file}: the file exists (resume it with sluice resume, or choose a new file)`);
  const { store, turn } = openJournalFile(file);
  const journal = await createTurnJournal(store, turn, {
    format: o.format,
    earlyStart: o.dispatch === 'post-stream' ? 'none' : 'safe',
    ...(o.tools ? { meta: { tools: o.tools } } : {}),
  });
  let attached = false;
  return {
    attach(c) {
      if (attached) return; // only the first (reported) run of a replay is journaled
      attached = true;
      journal.attach(c);
      // A hard stop at virtual time MS: the journal has exactly what was written by then.
      if (o.crashAtMs !== undefined) c.clock.setTimeout(() => process.kill(process.pid, 'SIGKILL'), o.crashAtMs);
    },
    close: () => store.close(),
  };
}

/** Open a journal file (size-limited); a file that is not a journal is a one-line usage error. */
export function openJournalFile(file: string) {
  try {
    return FileJournalStore.forFile(file, { maxBytes: maxInputBytes() });
  } catch (err) {
    if (err instanceof JournalError) throw new UsageError(`${file}: ${err.message}`);
    throw err;
  }
}
