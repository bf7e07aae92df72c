/**
 * Disk faults on the file store (issue 18 item 1): ENOSPC and EIO injected at the store's
 * write/fsync boundary (`FileStoreOptions.io`, an fs shim) at EVERY write or fsync of a journaled
 * turn with unsafe tools, and a real ENOSPC from a tiny tmpfs where `mount` is allowed.
 *
 * - ENOSPC that clears within the retry window: the turn finishes (`done`), nothing lost.
 * - ENOSPC that lasts (a short half-written record first, as a real full disk leaves it), or an
 *   EIO from fdatasync: runTurn rejects with the typed `JournalError` (`no_space` / `io`), no unsafe
 *   tool starts after the failure; once the disk is back, `resumeTurn` (a fresh store) finishes
 *   the turn: no unsafe call twice, every call exactly one result, recorded results kept.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { resumeTurn } from '../../src/engine/resume';
import { runTurn } from '../../src/engine/runTurn';
import { FileJournalStore, type FileStoreIO } from '../../src/journal/fileStore';
import { createTurnJournal } from '../../src/journal/journal';
import { JournalError } from '../../src/journal/records';
import { CRASH_TURN, chatStream, lines, seedWorkspace, workspaceTools } from '../journal/workspaceTools';
import { checkResumed, emptyTally, type FaultTally } from './properties';

const FULL = process.env.SLUICE_FAULTS === '1';
const errno = (code: string): NodeJS.ErrnoException => Object.assign(new Error(`${code}: injected`), { code });

/** Real fs, with a fault from the `at`-th call on: ENOSPC on write (after a short write), or EIO on fsync. */
class FaultyIO implements FileStoreIO {
  writes = 0;
  syncs = 0;
  /** How many calls fail once the fault began (Infinity: until `heal()`). */
  constructor(
    private readonly fault: { on: 'write' | 'fsync'; at: number; times: number },
  ) {}
  private failed = 0;
  private healed = false;
  heal(): void {
    this.healed = true;
  }
  private hit(n: number): boolean {
    if (this.healed || n < this.fault.at || this.failed >= this.fault.times) return false;
    this.failed++;
    return true;
  }
  writeSync(fd: number, buf: Buffer, offset: number, length: number): number {
    this.writes++;
    if (this.fault.on === 'write' && this.hit(this.writes)) {
      // A full disk takes part of a record first: the store must cut it off, never build on it.
      if (this.failed === 1 && length > 8) return fs.writeSync(fd, buf, offset, Math.floor(length / 2));
      throw errno('ENOSPC');
    }
    return fs.writeSync(fd, buf, offset, length);
  }
  fdatasyncSync(fd: number): void {
    this.syncs++;
    if (this.fault.on === 'fsync' && this.hit(this.syncs)) throw errno('EIO');
    fs.fdatasyncSync(fd);
  }
}

async function faultPoint(base: string, name: string, io: FaultyIO, retryMs: number, tally: FaultTally) {
  const dir = path.join(base, name);
  seedWorkspace(dir);
  const jdir = path.join(dir, 'journal');
  const store = new FileJournalStore(jdir, { io });
  let journal;
  try {
    journal = await createTurnJournal(store, 'turn', { format: 'openai-chat' }, { retryMs });
  } catch (err) {
    // The header could not be written: the turn never began (nothing to resume).
    expect(err).toBeInstanceOf(JournalError);
    await store.close();
    return `refused-at-create:${(err as JournalError).code}`;
  }
  let outcome: string;
  try {
    const res = await runTurn({ format: 'openai-chat', stream: chatStream(CRASH_TURN, 1), tools: workspaceTools(dir, { ms: 1 }), journal });
    outcome = `done:${res.summary.outcome}`;
  } catch (err) {
    expect(err).toBeInstanceOf(JournalError);
    outcome = `failed:${(err as JournalError).code}`;
    // After the failure no unsafe tool started: every bump that ran has a durable `started`.
  }
  await store.close();
  io.heal();
  const fresh = new FileJournalStore(jdir);
  const before = (await fresh.read('turn')).records;
  const startedBumps = new Set(before.filter((r) => r.k === 'started').map((r) => (r as { i: number }).i));
  const released = before.filter((r): r is Extract<typeof r, { k: 'released' }> => r.k === 'released');
  for (const id of lines(dir, 'counter.txt')) {
    const rel = released.find((r) => r.id === id);
    expect(rel !== undefined && startedBumps.has(rel.i)).toBe(true);
  }
  const runsBefore = lines(dir, 'runs.log');
  const out = await resumeTurn({ store: fresh, turn: 'turn', tools: workspaceTools(dir, { ms: 1 }) });
  await fresh.close();
  checkResumed(dir, before, runsBefore, out, tally);
  return outcome;
}

describe('file store: ENOSPC / EIO at every write and fsync of a turn', () => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-faults-file-'));
  afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

  // How many writes and fsyncs one turn makes.
  let writes = 0;
  let syncs = 0;
  beforeAll(async () => {
    const io = new FaultyIO({ on: 'write', at: Infinity, times: 0 });
    await faultPoint(base, 'ref', io, 0, emptyTally());
    writes = io.writes;
    syncs = io.syncs;
  });

  const every = (n: number): number[] => {
    const all = Array.from({ length: n }, (_, k) => k + 1);
    return FULL ? all : all.filter((k) => k % 3 === 1 || k === n);
  };

  test('ENOSPC that lasts (a half-written record first): typed no_space, resume finishes the turn', async () => {
    const tally = emptyTally();
    const outcomes = new Map<string, number>();
    for (const at of every(writes)) {
      const o = await faultPoint(base, `w${at}`, new FaultyIO({ on: 'write', at, times: Infinity }), 30, tally);
      outcomes.set(o, (outcomes.get(o) ?? 0) + 1);
    }
    console.log(`file store, lasting ENOSPC at ${tally.points} of ${writes} writes: ${JSON.stringify(Object.fromEntries(outcomes))} ${JSON.stringify(tally)}`);
    expect(outcomes.get('failed:no_space')).toBeGreaterThan(0);
    expect([...outcomes.keys()].every((o) => /^(failed:no_space|done:done|refused-at-create:no_space)$/.test(o))).toBe(true);
    expect(tally.unsafeTwice).toBe(0);
  }, 120_000);

  test('ENOSPC that clears within the retry window: the turn finishes, nothing lost', async () => {
    const tally = emptyTally();
    for (const at of every(writes)) {
      const o = await faultPoint(base, `t${at}`, new FaultyIO({ on: 'write', at, times: 3 }), 5_000, tally);
      expect(o).toBe('done:done');
    }
    expect(tally.kept).toBe(tally.recordedResults);
    expect(tally.rerun + tally.unknownOutcome).toBe(0); // every call's result was recorded
  }, 120_000);

  test('EIO from fdatasync: typed io (never retried: durability unknown), resume finishes the turn', async () => {
    const tally = emptyTally();
    for (const at of every(syncs)) {
      const o = await faultPoint(base, `s${at}`, new FaultyIO({ on: 'fsync', at, times: Infinity }), 5_000, tally);
      expect(o).toMatch(at === 1 ? /^(refused-at-create:io|failed:io)$/ : /^failed:io$/);
    }
    expect(tally.unsafeTwice).toBe(0);
  }, 120_000);
});

/** A real full disk: a 64 KiB tmpfs, filled so the journal runs out of space mid-turn. */
const canMount = (() => {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return false;
  const probe = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-mount-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { stdio: 'ignore' });
    execFileSync('umount', [probe], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  } finally {
    fs.rmSync(probe, { recursive: true, force: true });
  }
})();
if (!canMount) process.stderr.write('\n[sluice tests] cannot mount a tmpfs here (needs root and CAP_SYS_ADMIN): the real-ENOSPC file store test is SKIPPED (the fs-shim tests still run).\n');

(canMount ? describe : describe.skip)('file store on a real full tmpfs', () => {
  test('ENOSPC from the kernel: typed no_space, then resume on the freed disk finishes the turn', async () => {
    const mnt = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-tmpfs-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', mnt]);
    try {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-tmpfs-ws-'));
      seedWorkspace(dir);
      fs.writeFileSync(path.join(dir, 'b.txt'), 'beta '.repeat(2000)); // a 10 KB result: more than the space left
      const jdir = path.join(mnt, 'journal');
      fs.mkdirSync(jdir);
      // Leave one 4 KiB page: the header and the first records fit, the big result does not.
      const filler = path.join(mnt, 'filler');
      fs.writeFileSync(filler, Buffer.alloc(60 * 1024));
      const store = new FileJournalStore(jdir);
      const journal = await createTurnJournal(store, 'turn', { format: 'openai-chat' }, { retryMs: 50 });
      const err = await runTurn({ format: 'openai-chat', stream: chatStream(CRASH_TURN, 1), tools: workspaceTools(dir, { ms: 1 }), journal }).then(
        () => undefined,
        (e: unknown) => e,
      );
      await store.close();
      expect(err).toBeInstanceOf(JournalError);
      expect((err as JournalError).code).toBe('no_space');
      fs.rmSync(filler); // the disk is back
      const fresh = new FileJournalStore(jdir);
      const before = (await fresh.read('turn')).records;
      const runsBefore = lines(dir, 'runs.log');
      const out = await resumeTurn({ store: fresh, turn: 'turn', tools: workspaceTools(dir, { ms: 1 }) });
      await fresh.close();
      const tally = emptyTally();
      checkResumed(dir, before, runsBefore, out, tally);
      console.log(`file store on a full tmpfs: ${before.length} records before ENOSPC; ${JSON.stringify(tally)}`);
    } finally {
      execFileSync('umount', [mnt]);
      fs.rmSync(mnt, { recursive: true, force: true });
    }
  }, 60_000);
});
