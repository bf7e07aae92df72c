/**
 * The journal: record format (torn tail, corruption), the file store (append, fsync, leases),
 * what runTurn writes, and resume from EVERY prefix of a real turn's journal (each prefix is what
 * a crash after that record leaves): 0 invariant violations, no unsafe call run twice, every
 * recorded result kept.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import { runTurn } from '../../src/engine/runTurn';
import { defineTool } from '../../src/execute/tools';
import { resumeTurn } from '../../src/engine/resume';
import { checkTrace } from '../../src/history/check';
import { decodeJournal, encodeRecord } from '../../src/journal/codec';
import { FileJournalStore } from '../../src/journal/fileStore';
import { hostIdentity } from '../../src/journal/lease';
import { createTurnJournal } from '../../src/journal/journal';
import { MemoryJournalStore } from '../../src/journal/memoryStore';
import type { JournalRecord } from '../../src/journal/records';
import type { AppendOptions, JournalStore } from '../../src/journal/store';
import { journalTrace } from '../../src/journal/state';
import { CRASH_TURN, chatStream, lines, seedWorkspace, workspaceTools } from './workspaceTools';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-journal-'));

describe('record format', () => {
  const recs: JournalRecord[] = [
    { n: 0, k: 'turn', v: 1, turn: 't1', t: 0 },
    { n: 1, k: 'attempt', a: 1, t: 0 },
    { n: 2, k: 'started', a: 1, i: 0, t: 5 },
  ];
  const bytes = Buffer.concat(recs.map(encodeRecord));

  test('round trip', () => {
    const d = decodeJournal(bytes);
    expect(d.records).toEqual(recs);
    expect(d.tornBytes).toBe(0);
  });

  test('a torn last record (any cut inside it) is ignored, never a partial record', () => {
    const lastStart = bytes.length - encodeRecord(recs[2]!).length;
    for (let cut = lastStart + 1; cut < bytes.length; cut++) {
      const d = decodeJournal(bytes.subarray(0, cut));
      expect(d.records).toEqual(recs.slice(0, 2));
      expect(d.validBytes).toBe(lastStart);
    }
  });

  test('a flipped byte in the last record is torn; in an earlier one it is corruption', () => {
    const last = Buffer.from(bytes);
    last[last.length - 5] ^= 1;
    expect(decodeJournal(last).records).toHaveLength(2);
    const mid = Buffer.from(bytes);
    mid[encodeRecord(recs[0]!).length + 12] ^= 1;
    expect(() => decodeJournal(mid)).toThrow(/corrupt/);
  });
});

describe('FileJournalStore', () => {
  test('append, read back, cut a torn tail before the next append', async () => {
    const dir = tmp();
    const store = new FileJournalStore(dir);
    store.appendSync('t1', [{ n: 0, k: 'turn', v: 1, turn: 't1', t: 0 }], { durable: true });
    await store.append('t1', [{ n: 1, k: 'attempt', a: 1, t: 1 }], { durable: false });
    await store.close();
    // A crash mid-append: half a record at the end.
    const half = encodeRecord({ n: 2, k: 'end', a: 1, t: 2 });
    fs.appendFileSync(path.join(dir, 't1'), half.subarray(0, 9));
    const again = new FileJournalStore(dir);
    expect((await again.read('t1')).tornBytes).toBe(9);
    await again.append('t1', [{ n: 2, k: 'end', a: 1, t: 3 }], { durable: true });
    const r = await again.read('t1');
    expect(r.tornBytes).toBe(0);
    expect(r.records.map((x) => x.k)).toEqual(['turn', 'attempt', 'end']);
    expect(await again.list()).toEqual([{ turn: 't1', records: 3, committed: false }]);
    await expect(again.append('t1', [{ n: 7, k: 'end', a: 1, t: 3 }], { durable: true })).rejects.toThrow(/expected/);
    await again.close();
  });

  test('bad turn ids are refused', async () => {
    const store = new FileJournalStore(tmp());
    await expect(store.read('../etc/passwd')).rejects.toThrow(/invalid turn id/);
  });

  test('leases: two workers race for one turn, exactly one gets it; a dead holder is taken over', async () => {
    const dir = tmp();
    const a = new FileJournalStore(dir);
    const b = new FileJournalStore(dir);
    const [la, lb] = await Promise.all([a.lease('t1', 'A', 10_000), b.lease('t1', 'B', 10_000)]);
    expect([la, lb].filter(Boolean)).toHaveLength(1);
    await (la ?? lb)!.release();
    expect(await b.lease('t1', 'B', 10_000)).toBeDefined();
    // A lock left by a process that no longer exists.
    fs.writeFileSync(path.join(dir, 't2.lock'), JSON.stringify({ owner: 'X', pid: 2 ** 22 + 12345, host: hostIdentity(), expires: Date.now() + 60_000 }));
    expect(await a.lease('t2', 'A', 1000)).toBeDefined();
    // An expired lease.
    expect(await b.lease('t3', 'B', -1)).toBeDefined();
    expect(await a.lease('t3', 'A', 1000)).toBeDefined();
  });
});

async function fullTurn(store: MemoryJournalStore | FileJournalStore, dir: string, turn = 'turn-1') {
  seedWorkspace(dir);
  const journal = await createTurnJournal(store, turn, { format: 'openai-chat' });
  const res = await runTurn({ format: 'openai-chat', stream: chatStream(CRASH_TURN, 1), tools: workspaceTools(dir, { ms: 2 }), journal });
  return { res, records: (await store.read(turn)).records };
}

describe('runTurn with a journal', () => {
  test('records every boundary; started before its tool ran and after its release', async () => {
    const dir = tmp();
    const store = new FileJournalStore(path.join(dir, 'j'));
    const { res, records } = await fullTurn(store, dir);
    expect(res.summary.outcome).toBe('done');
    const kinds = records.map((r) => r.k);
    expect(kinds[0]).toBe('turn');
    expect(kinds.at(-1)).toBe('committed');
    for (let i = 0; i < CRASH_TURN.length; i++) {
      const at = (k: string) => records.findIndex((r) => r.k === k && 'i' in r && r.i === i);
      expect(at('released')).toBeGreaterThan(0);
      expect(at('started')).toBeGreaterThan(at('released'));
      expect(at('result')).toBeGreaterThan(at('started'));
    }
    expect(checkTrace(journalTrace(records)).violations).toEqual([]);
    expect(lines(dir, 'counter.txt')).toEqual(['call_3', 'call_4']);
  });

  test('a turn id that already has a journal is refused', async () => {
    const store = new MemoryJournalStore();
    await createTurnJournal(store, 'x');
    await expect(createTurnJournal(store, 'x')).rejects.toThrow(/already has a journal/);
  });
});

describe('resume from every prefix of the journal (a crash after each record)', () => {
  test.each(['memory', 'slow async'])('%s store: 0 violations, no unsafe call twice, recorded results kept', async (kind) => {
    const base = tmp();
    const ref = await fullTurn(new MemoryJournalStore(), path.join(base, 'ref'));
    const full = ref.records;
    const expected = ref.res.messages;
    const figures = { prefixes: 0, kept: 0, rerun: 0, unknown: 0, reconciled: 0 };
    for (let k = 1; k < full.length; k++) {
      const prefix = full.slice(0, k);
      const dir = path.join(base, `p${k}`);
      seedWorkspace(dir);
      // Replay the side effects the crashed process had done: each recorded `started` of a bump/edit ran.
      const starts = prefix.filter((r) => r.k === 'started');
      for (const s of starts) {
        const rel = prefix.find((r) => r.k === 'released' && r.i === (s as { i: number }).i) as Extract<JournalRecord, { k: 'released' }>;
        const hasResult = prefix.some((r) => r.k === 'result' && r.i === rel.i);
        // Crash between start and result: the effect may or may not have happened; alternate.
        if (hasResult || k % 2 === 0) {
          if (rel.name === 'bump') fs.appendFileSync(path.join(dir, 'counter.txt'), `${rel.id}\n`);
          if (rel.name === 'edit_file') fs.writeFileSync(path.join(dir, String(rel.input.path)), String(rel.input.text));
        }
      }
      const store: JournalStore = kind === 'memory' ? new MemoryJournalStore() : new SlowStore();
      await store.append('turn-1', prefix, { durable: true });
      const out = await resumeTurn({ store, turn: 'turn-1', tools: workspaceTools(dir, { ms: 1 }) });
      figures.prefixes++;
      expect(out.violations).toEqual([]);
      // No bump call id twice.
      const counter = lines(dir, 'counter.txt');
      expect(new Set(counter).size).toBe(counter.length);
      // Recorded results are kept verbatim and those tools did not run again.
      const recorded = prefix.filter((r): r is Extract<JournalRecord, { k: 'result' }> => r.k === 'result');
      const tool = out.messages.find((m) => m.role === 'tool');
      for (const r of recorded) {
        const id = `call_${r.i}`;
        const got = tool && tool.role === 'tool' ? tool.results.find((x) => x.callId === id) : undefined;
        if (!out.alreadyCommitted) expect(got?.content).toBe(r.content);
        expect(lines(dir, 'runs.log').filter((l) => l.endsWith(` ${id}`))).toEqual([]);
      }
      for (const c of out.resumed) {
        if (c.resumed === 'kept') figures.kept++;
        else if (c.resumed === 'rerun') figures.rerun++;
        else if (c.resumed === 'unknown-outcome') figures.unknown++;
        else figures.reconciled++;
      }
      // Once the stream had ended, the resumed turn has the same calls as the uncrashed one.
      if (prefix.some((r) => r.k === 'end')) {
        const a = out.messages[0];
        const e = expected[0];
        expect(a && a.role === 'assistant' ? a.calls.map((c) => c.id) : []).toEqual(e && e.role === 'assistant' ? e.calls.map((c) => c.id) : []);
      }
    }
    console.log(`resume from every prefix (${kind} store): ${JSON.stringify(figures)}`);
    expect(figures.unknown).toBeGreaterThan(0);
    expect(figures.reconciled).toBeGreaterThan(0);
    expect(figures.kept).toBeGreaterThan(0);
  });
});

describe('checkTrace sees crash and resume', () => {
  const before = [
    { t: 0, kind: 'attempt.start', attempt: 1 },
    { t: 1, kind: 'ready', attempt: 1, index: 0, callId: 'c0', name: 'bump', safe: false },
    { t: 1, kind: 'released', attempt: 1, index: 0, callId: 'c0' },
    { t: 2, kind: 'stream.end', attempt: 1 },
    { t: 3, kind: 'started', attempt: 1, index: 0, safe: false },
    { t: 4, kind: 'crashed', attempt: 1 },
    { t: 4, kind: 'resumed', attempt: 1 },
  ];
  test('an unsafe call started again after a crash without a reason is an I6 violation', () => {
    const v = checkTrace([...before, { t: 5, kind: 'started', attempt: 1, index: 0, safe: false }]).violations;
    expect(v.map((x) => x.invariant)).toEqual(['I6']);
    expect(v[0]!.message).toMatch(/after a crash/);
  });
  test('with a reason (idempotent, reconciled) it is allowed once; "safe" only for a safe call', () => {
    expect(checkTrace([...before, { t: 5, kind: 'started', attempt: 1, index: 0, safe: false, rerun: 'idempotent' }, { t: 6, kind: 'resulted', attempt: 1, index: 0 }]).violations).toEqual([]);
    expect(checkTrace([...before, { t: 5, kind: 'started', attempt: 1, index: 0, safe: false, rerun: 'safe' }]).violations).toHaveLength(1);
    expect(checkTrace([...before, { t: 5, kind: 'started', attempt: 1, index: 0, rerun: 'reconciled' }, { t: 6, kind: 'started', attempt: 1, index: 0, rerun: 'reconciled' }]).violations).toHaveLength(1);
  });
  test('a call that resulted before the crash never starts again', () => {
    const t = [...before.slice(0, 5), { t: 3.5, kind: 'resulted', attempt: 1, index: 0 }, ...before.slice(5), { t: 5, kind: 'started', attempt: 1, index: 0, rerun: 'idempotent' }];
    expect(checkTrace(t).violations.map((x) => x.invariant)).toEqual(['I6']);
  });
});

/** A store without appendSync whose appends take a few ms (a database): the journal's queued path. */
class SlowStore implements JournalStore {
  readonly name = 'slow';
  private readonly inner = new MemoryJournalStore();
  /** Sizes of the appends, and whether each was durable. */
  readonly appends: { size: number; durable: boolean }[] = [];
  async append(turn: string, records: readonly JournalRecord[], opts: AppendOptions): Promise<void> {
    this.appends.push({ size: records.length, durable: opts.durable });
    await new Promise((r) => setTimeout(r, 2));
    await this.inner.append(turn, records, opts);
  }
  read(turn: string) {
    return this.inner.read(turn);
  }
  list() {
    return this.inner.list();
  }
  lease(turn: string, owner: string, ttlMs: number) {
    return this.inner.lease(turn, owner, ttlMs);
  }
  close() {
    return this.inner.close();
  }
}

describe('group commit on an async store', () => {
  test('records written while an append is in flight go out together, in order; a batch is durable when any record is', async () => {
    const store = new SlowStore();
    const journal = await createTurnJournal(store, 'g'); // append 1: the header alone
    const done = [
      journal.write({ k: 'attempt', a: 1, t: 1 }), // append 2 starts with this one…
      journal.write({ k: 'text', a: 1, t: 2, text: 'x' }), // …and these join it before it starts
      journal.write({ k: 'end', a: 1, t: 3 }),
    ];
    await Promise.resolve();
    const late = journal.write({ k: 'committed', a: 1, t: 4, outcome: 'done', callIds: [] }); // next batch
    await Promise.all([...done, late]);
    await journal.flush();
    expect(store.appends).toEqual([
      { size: 1, durable: true },
      { size: 3, durable: false },
      { size: 1, durable: true },
    ]);
    expect((await store.read('g')).records.map((r) => [r.n, r.k])).toEqual([
      [0, 'turn'],
      [1, 'attempt'],
      [2, 'text'],
      [3, 'end'],
      [4, 'committed'],
    ]);
  });
});

describe('write-ahead: the tool itself finds its durable `started` record when it runs', () => {
  test.each([
    ['file store (synchronous appends)', () => new FileJournalStore(tmp())],
    ['a slow async store (queued appends)', () => new SlowStore()],
  ])('%s', async (_name, make) => {
    const store = make();
    const journal = await createTurnJournal(store, 'w');
    const seen: string[] = [];
    const probe = (name: string, kind: 'read' | 'edit') =>
      defineTool({
        name,
        kind,
        input: z.object({}),
        run: async (_i, { callId }) => {
          const recs = (await store.read('w')).records;
          const rel = recs.find((r) => r.k === 'released' && r.id === callId) as Extract<JournalRecord, { k: 'released' }> | undefined;
          const started = rel !== undefined && recs.some((r) => r.k === 'started' && r.i === rel.i);
          seen.push(`${name}:${started}`);
          return 'ok';
        },
      });
    const res = await runTurn({
      format: 'openai-chat',
      stream: chatStream([{ name: 'look', args: {} }, { name: 'change', args: {} }, { name: 'change', args: {} }], 1),
      tools: [probe('look', 'read'), probe('change', 'edit')],
      journal,
    });
    expect(res.summary.outcome).toBe('done');
    // The unsafe calls waited for their record; the safe one's record was at least queued first.
    expect(seen.filter((s) => s.startsWith('change'))).toEqual(['change:true', 'change:true']);
    const recs = (await store.read('w')).records;
    expect(recs.map((r) => r.n)).toEqual(recs.map((_r, i) => i));
    expect(recs.at(-1)?.k).toBe('committed');
    expect(checkTrace(journalTrace(recs)).violations).toEqual([]);
  });
});

describe('file store leases across processes', () => {
  const rounds = process.env.SLUICE_CRASH === '1' ? 6 : 1;
  let child = '';
  // The one-time transpile for child processes (shared with the crash suites) is not part of the
  // race: on a loaded machine it alone can take most of a minute.
  beforeAll(async () => {
    const { buildForChildren } = await import('./childBuild');
    child = path.join(buildForChildren(), 'test/journal/leaseChild.js');
  }, 180_000);
  test(`4 processes race for a turn whose lock a dead process left, ${rounds} round(s): exactly one gets it each round`, async () => {
    const { spawn } = await import('node:child_process');
    const { childEnv } = await import('./childBuild');
    const dir = tmp();
    // Each racer holds what it got until every racer has answered (then the round's processes are
    // killed): however late a loaded machine starts one, it must find the winner alive (a dead
    // winner's lock is rightly taken over at once).
    const race = async (round: number): Promise<string[]> => {
      const at = Date.now() + 700;
      const procs: ReturnType<typeof spawn>[] = [];
      try {
        return await Promise.all(
          [0, 1, 2, 3].map(
            (w) =>
              new Promise<string>((resolve, reject) => {
                const p = spawn(process.execPath, [child, dir, 'turn-x', `w${round}.${w}`, String(at), '50000'], { env: childEnv(), stdio: ['ignore', 'pipe', 'inherit'] });
                procs.push(p);
                let out = '';
                p.stdout!.on('data', (d: Buffer) => {
                  out += d.toString();
                  if (out.includes('\n')) resolve(out.trim());
                });
                p.on('error', reject);
                p.on('exit', () => resolve(out.trim()));
              }),
          ),
        );
      } finally {
        for (const p of procs) p.kill('SIGKILL');
      }
    };
    // A lock left by a process that no longer exists; later rounds find the previous winner's (dead by then).
    fs.writeFileSync(path.join(dir, 'turn-x.lock'), JSON.stringify({ owner: 'gone', pid: 2 ** 22 + 4321, host: hostIdentity(), expires: Date.now() + 60_000 }));
    for (let round = 0; round < rounds; round++) {
      const got = await race(round);
      expect(got.filter((x) => x === 'got')).toHaveLength(1);
      expect(got.filter((x) => x === 'none')).toHaveLength(3);
    }
  }, 30_000 + 30_000 * rounds); // a round starts 4 processes: ~7 s at load average 20
});
