/**
 * resumeTurn policies beyond the prefix sweep: idempotent tools, approvals replayed from the
 * journal, a retried attempt journaled and resumed, 'retry' of an interrupted stream through the
 * embedder's stream(attempt), two workers racing to resume one turn.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import { ResumeError, resumeTurn, withDurability } from '../../src/engine/resume';
import { runTurn } from '../../src/engine/runTurn';
import { defineTool } from '../../src/execute/tools';
import { checkTrace } from '../../src/history/check';
import { createTurnJournal } from '../../src/journal/journal';
import { MemoryJournalStore } from '../../src/journal/memoryStore';
import type { JournalRecord } from '../../src/journal/records';
import { journalTrace } from '../../src/journal/state';
import { CRASH_TURN, chatStream, lines, seedWorkspace, workspaceTools } from './workspaceTools';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-resume-'));

/** A prefix of a journal in a fresh store: what a crash after record k-1 leaves. */
function crashedStore(records: readonly JournalRecord[], k: number, turn = 't'): MemoryJournalStore {
  const s = new MemoryJournalStore();
  s.appendSync(turn, records.slice(0, k));
  return s;
}

function cutAfter(records: readonly JournalRecord[], pred: (r: JournalRecord) => boolean): number {
  const i = records.findIndex(pred);
  if (i < 0) throw new Error('no such record');
  return i + 1;
}

describe('resumeTurn policies', () => {
  test('an idempotent unsafe tool that started without a result runs again; a plain one does not', async () => {
    const runs: string[] = [];
    const mk = (name: string, idempotent: boolean) => {
      const t = defineTool({ name, kind: 'other', input: z.object({}), run: async (_i, { callId }) => (runs.push(callId), `${name} ok`) });
      return idempotent ? withDurability(t, { idempotent: true }) : t;
    };
    const tools = [mk('touch', true), mk('charge', false)];
    const store = new MemoryJournalStore();
    const journal = await createTurnJournal(store, 't');
    await runTurn({ format: 'openai-chat', stream: chatStream([{ name: 'touch', args: {} }, { name: 'charge', args: {} }], 0), tools, journal });
    const full = (await store.read('t')).records;
    for (const i of [0, 1]) {
      const k = cutAfter(full, (r) => r.k === 'started' && r.i === i);
      runs.length = 0;
      const out = await resumeTurn({ store: crashedStore(full, k), turn: 't', tools });
      expect(out.violations).toEqual([]);
      const how = out.resumed.find((c) => c.index === i)!.resumed;
      if (i === 0) {
        expect(how).toBe('rerun');
        expect(runs).toContain('call_0');
      } else {
        expect(how).toBe('unknown-outcome');
        expect(runs).not.toContain('call_1');
        const res = out.messages[1];
        expect(res && res.role === 'tool' ? res.results[1]!.content : '').toMatch(/whether it took effect is unknown/);
      }
    }
  });

  test('approvals given before the crash are replayed from the journal, not asked again', async () => {
    const deploy = defineTool({ name: 'deploy', kind: 'execute', needsApproval: true, input: z.object({ target: z.string() }), run: async () => 'deployed' });
    const store = new MemoryJournalStore();
    const journal = await createTurnJournal(store, 't');
    await runTurn({ format: 'openai-chat', stream: chatStream([{ name: 'deploy', args: { target: 'prod' } }], 0), tools: [deploy], approve: () => true, journal });
    const full = (await store.read('t')).records;
    const k = cutAfter(full, (r) => r.k === 'approval');
    let asked = 0;
    const out = await resumeTurn({ store: crashedStore(full, k), turn: 't', tools: [deploy], approve: () => (asked++, false) });
    expect(asked).toBe(0);
    expect(out.resumed.map((c) => c.resumed)).toEqual(['rerun']);
    expect(out.violations).toEqual([]);
  });

  test('a journaled retry (attempt 1 fails, attempt 2 succeeds) resumes from every prefix', async () => {
    const dir = tmp();
    seedWorkspace(dir);
    const store = new MemoryJournalStore();
    const journal = await createTurnJournal(store, 't', { format: 'openai-chat' });
    async function* failing() {
      const it = chatStream(CRASH_TURN.slice(0, 2), 0);
      yield (await it.next()).value;
      yield (await it.next()).value;
      throw Object.assign(new Error('overloaded'), { status: 529 });
    }
    const res = await runTurn({
      format: 'openai-chat',
      stream: (a) => (a === 1 ? failing() : chatStream(CRASH_TURN, 0)),
      tools: workspaceTools(dir, { ms: 1 }),
      policy: { retryBaseMs: 1 },
      journal,
    });
    expect(res.summary.attempts).toBe(2);
    const full = (await store.read('t')).records;
    expect(full.some((r) => r.k === 'discarded' && r.a === 1)).toBe(true);
    expect(checkTrace(journalTrace(full)).violations).toEqual([]);
    for (let k = 2; k < full.length; k++) {
      const d = path.join(dir, `p${k}`);
      seedWorkspace(d);
      const out = await resumeTurn({ store: crashedStore(full, k), turn: 't', tools: workspaceTools(d, { ms: 1 }) });
      expect(out.violations).toEqual([]);
    }
  });

  test("onInterruptedStream 'retry': the stream of the interrupted attempt is asked again as the next attempt", async () => {
    const dir = tmp();
    seedWorkspace(dir);
    const store = new MemoryJournalStore();
    const journal = await createTurnJournal(store, 't', { format: 'openai-chat' });
    await runTurn({ format: 'openai-chat', stream: chatStream(CRASH_TURN, 0), tools: workspaceTools(dir, { ms: 1 }), journal });
    const full = (await store.read('t')).records;
    // Crash after the first read's result: the stream had not ended, nothing unsafe had started.
    const k = cutAfter(full, (r) => r.k === 'result' && r.i === 0);
    expect(full.slice(0, k).some((r) => r.k === 'end')).toBe(false);
    const asked: number[] = [];
    const crashed = crashedStore(full, k);
    const d2 = tmp();
    seedWorkspace(d2);
    const out = await resumeTurn({
      store: crashed,
      turn: 't',
      tools: workspaceTools(d2, { ms: 1 }),
      onInterruptedStream: 'retry',
      stream: (a) => (asked.push(a), chatStream(CRASH_TURN, 0)),
    });
    expect(asked).toEqual([2]);
    expect(out.retried).toBe(true);
    expect(out.violations).toEqual([]);
    const a = out.messages[0];
    expect(a && a.role === 'assistant' ? a.calls.length : 0).toBe(CRASH_TURN.length);
    const after = (await crashed.read('t')).records;
    expect(after.some((r) => r.k === 'discarded' && r.a === 1)).toBe(true);
    expect(after.some((r) => r.k === 'committed' && r.a === 2)).toBe(true);
    expect(lines(d2, 'counter.txt')).toEqual(['call_3', 'call_4']);
  });

  test('the rebuilt turn and call actors are visible to an inspector like any turn', async () => {
    const dir = tmp();
    seedWorkspace(dir);
    const store = new MemoryJournalStore();
    await runTurn({ format: 'openai-chat', stream: chatStream(CRASH_TURN, 0), tools: workspaceTools(dir, { ms: 1 }), journal: await createTurnJournal(store, 't') });
    const full = (await store.read('t')).records;
    const ids = new Set<string>();
    await resumeTurn({
      store: crashedStore(full, cutAfter(full, (r) => r.k === 'end')),
      turn: 't',
      tools: workspaceTools(dir, { ms: 1 }),
      inspect: (e) => {
        if (e.type === '@xstate.actor') ids.add((e.actorRef as { id?: string }).id ?? '');
      },
    });
    for (let i = 0; i < CRASH_TURN.length; i++) expect(ids).toContain(`a1-c${i}`);
  });

  test('two workers racing to resume one turn: exactly one proceeds', async () => {
    const dir = tmp();
    seedWorkspace(dir);
    const store = new MemoryJournalStore();
    const journal = await createTurnJournal(store, 't');
    await runTurn({ format: 'openai-chat', stream: chatStream(CRASH_TURN, 0), tools: workspaceTools(dir, { ms: 1 }), journal });
    const full = (await store.read('t')).records;
    const crashed = crashedStore(full, cutAfter(full, (r) => r.k === 'end'));
    const both = await Promise.allSettled([
      resumeTurn({ store: crashed, turn: 't', tools: workspaceTools(dir, { ms: 5 }), owner: 'A' }),
      resumeTurn({ store: crashed, turn: 't', tools: workspaceTools(dir, { ms: 5 }), owner: 'B' }),
    ]);
    expect(both.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const lost = both.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(lost.reason).toBeInstanceOf(ResumeError);
    expect(String(lost.reason.message)).toMatch(/lease held/);
  });
});
