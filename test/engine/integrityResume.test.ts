/**
 * SPEC §12 in the journal: a resumed turn whose recorded stream never finished is a new attempt
 * (the default when a `stream` is given); `onInterruptedStream: 'end'` still ends it with what was
 * released, on request.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { resumeTurn } from '../../src/engine/resume';
import { runTurn } from '../../src/engine/runTurn';
import { createTurnJournal } from '../../src/journal/journal';
import { MemoryJournalStore } from '../../src/journal/memoryStore';
import type { JournalRecord } from '../../src/journal/records';
import { CRASH_TURN, chatStream, seedWorkspace, workspaceTools } from '../journal/workspaceTools';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-integrity-resume-'));

async function journalOfFullTurn(): Promise<JournalRecord[]> {
  const dir = tmp();
  seedWorkspace(dir);
  const store = new MemoryJournalStore();
  await runTurn({ format: 'openai-chat', stream: chatStream(CRASH_TURN, 0), tools: workspaceTools(dir, { ms: 1 }), journal: await createTurnJournal(store, 't', { format: 'openai-chat' }) });
  return (await store.read('t')).records;
}

/** A crash after the first read's result: the recorded stream had not finished (no `end` record). */
function crashedMidStream(full: JournalRecord[]): MemoryJournalStore {
  const k = full.findIndex((r) => r.k === 'result' && r.i === 0) + 1;
  expect(k).toBeGreaterThan(0);
  expect(full.slice(0, k).some((r) => r.k === 'end')).toBe(false);
  const s = new MemoryJournalStore();
  s.appendSync('t', full.slice(0, k));
  return s;
}

describe('a resumed turn whose recorded stream never finished', () => {
  test('is a new attempt by default when a stream is given', async () => {
    const full = await journalOfFullTurn();
    const store = crashedMidStream(full);
    const dir = tmp();
    seedWorkspace(dir);
    const asked: number[] = [];
    const out = await resumeTurn({ store, turn: 't', tools: workspaceTools(dir, { ms: 1 }), stream: (a) => (asked.push(a), chatStream(CRASH_TURN, 0)) });
    expect(asked).toEqual([2]);
    expect(out.retried).toBe(true);
    expect(out.summary.outcome).toBe('done');
    const after = (await store.read('t')).records;
    expect(after.some((r) => r.k === 'discarded' && r.a === 1)).toBe(true);
  });

  test("onInterruptedStream 'end' asks for no new attempt", async () => {
    const full = await journalOfFullTurn();
    const dir = tmp();
    seedWorkspace(dir);
    const asked: number[] = [];
    const out = await resumeTurn({ store: crashedMidStream(full), turn: 't', tools: workspaceTools(dir, { ms: 1 }), onInterruptedStream: 'end', stream: (a) => (asked.push(a), chatStream(CRASH_TURN, 0)) });
    expect(asked).toEqual([]);
    expect(out.retried).toBe(false);
  });
});
