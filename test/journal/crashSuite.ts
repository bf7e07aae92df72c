/**
 * The crash suite, pluggable by store: a child process runs a journaled turn with real tools
 * (test/journal/crashChild.ts: safe reads, an edit that writes a file, a `bump` that appends to a
 * counter file) and is killed with SIGKILL at seeded random points spread over the whole turn;
 * this process then resumes the turn from the journal — a new process — and checks:
 * 0 history/trace violations, 0 unsafe calls executed twice (the counter file), every result the
 * journal recorded reused verbatim and not run again, the edit's effect present when its result
 * says so. Figures are printed.
 *
 * Another store runs the same suite with `defineCrashSuite({ name, spec, open })`, where `spec`
 * is a string the child hands to `openStore` (register the store's opener in src/journal/open.ts).
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { prng } from '../../bench/prng';
import { resumeTurn } from '../../src/engine/resume';
import type { JournalRecord } from '../../src/journal/records';
import type { JournalStore } from '../../src/journal/store';
import { buildForChildren, childEnv } from './childBuild';
import { CRASH_TURN, lines, seedWorkspace, workspaceTools } from './workspaceTools';

export interface StoreCase {
  name: string;
  /** The store spec for a fresh store (one per point), e.g. `file:/tmp/x`. */
  spec(pointDir: string, point: number): string;
  open(spec: string): Promise<JournalStore>;
}

export const FULL_RUN = process.env.SLUICE_CRASH === '1';
// CI: 8 points per store (the every-prefix resume in journal.test.ts covers each record boundary).
const POINTS = FULL_RUN ? Number(process.env.SLUICE_CRASH_POINTS ?? 240) : Number(process.env.SLUICE_CRASH_POINTS ?? 8);
const SEED = Number(process.env.SLUICE_CRASH_SEED ?? 14);

interface ChildRun {
  killed: boolean;
  /** ms from `ready` to exit. */
  ms: number;
  stderr: string;
}

function runChild(root: string, spec: string, turn: string, dir: string, killAfterMs: number | undefined): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'test/journal/crashChild.js'), spec, turn, dir], { env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let readyAt = 0;
    let timer: NodeJS.Timeout | undefined;
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      if (readyAt === 0 && d.toString().includes('ready')) {
        readyAt = performance.now();
        if (killAfterMs !== undefined) timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
      }
    });
    child.on('error', reject);
    child.on('exit', (_code, signal) => {
      if (timer) clearTimeout(timer);
      resolve({ killed: signal === 'SIGKILL', ms: readyAt ? performance.now() - readyAt : 0, stderr });
    });
  });
}

type Result = Extract<JournalRecord, { k: 'result' }>;
type Released = Extract<JournalRecord, { k: 'released' }>;

export function defineCrashSuite(sc: StoreCase): void {
  describe(`crash suite on the ${sc.name} store (${POINTS} SIGKILL points, seed ${SEED}${FULL_RUN ? '' : '; SLUICE_CRASH=1 for the full run'})`, () => {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), `sluice-crash-${sc.name}-`));
    let root = '';
    beforeAll(() => {
      root = buildForChildren();
    }, 180_000);

    test('kill -9 anywhere in the turn, resume in a new process: at most once, I1–I6, results reused', async () => {
      // The length of an uncrashed turn, to spread the points over it.
      const refDir = path.join(base, 'ref');
      seedWorkspace(refDir);
      const ref = await runChild(root, sc.spec(refDir, -1), 'turn-ref', refDir, undefined);
      expect(ref.stderr).toBe('');
      // Kill points are spread over the turn's length, estimated from the uncrashed runs so far
      // (the machine's load changes it); points are drawn until POINTS kills landed mid-turn.
      const durations = [ref.ms];
      const median = () => [...durations].sort((a, b) => a - b)[Math.floor(durations.length / 2)]!;
      const rand = prng(SEED);
      const f = { points: 0, killedMidTurn: 0, finishedFirst: 0, recordedResults: 0, kept: 0, rerun: 0, unknownOutcome: 0, reconciled: 0, unsafeTwice: 0, violations: 0, maxRecords: 0 };
      const t0 = performance.now();
      for (let p = 0; f.killedMidTurn < POINTS && p < POINTS * 3; p++) {
        const dir = path.join(base, `p${p}`);
        seedWorkspace(dir);
        const spec = sc.spec(dir, p);
        const killAt = rand() * median();
        const run = await runChild(root, spec, `turn-${p}`, dir, killAt);
        expect(run.stderr).toBe('');
        f.points++;
        if (run.killed) f.killedMidTurn++;
        else {
          f.finishedFirst++;
          durations.push(run.ms);
        }

        const store = await sc.open(spec);
        const before = (await store.read(`turn-${p}`)).records;
        f.maxRecords = Math.max(f.maxRecords, before.length);
        const recorded = before.filter((r): r is Result => r.k === 'result');
        const released = new Map(before.filter((r): r is Released => r.k === 'released').map((r) => [r.i, r]));
        f.recordedResults += recorded.length;
        const runsBefore = lines(dir, 'runs.log');

        const out = await resumeTurn({ store, turn: `turn-${p}`, tools: workspaceTools(dir, { ms: 2 }) });
        await store.close();

        f.violations += out.violations.length;
        expect(out.violations).toEqual([]);
        // The counter file: no bump ran twice (each call id at most once, in the file and in the run log).
        const counter = lines(dir, 'counter.txt');
        const bumps = lines(dir, 'runs.log').filter((l) => l.startsWith('bump '));
        const twice = counter.length - new Set(counter).size + (bumps.length - new Set(bumps).size);
        f.unsafeTwice += twice;
        expect(twice).toBe(0);
        // Every recorded result is reused verbatim, and that call did not run again.
        const runsAfter = lines(dir, 'runs.log');
        const tool = out.messages.find((m) => m.role === 'tool');
        for (const r of recorded) {
          const id = released.get(r.i)?.id ?? '';
          const got = tool && tool.role === 'tool' ? tool.results.find((x) => x.callId === id) : undefined;
          expect(got?.content).toBe(r.content);
          expect(runsAfter.filter((l) => l.endsWith(` ${id}`))).toEqual(runsBefore.filter((l) => l.endsWith(` ${id}`)));
        }
        // A successful edit result means the file has the edit.
        const edit = out.messages[0]?.role === 'assistant' ? out.messages[0].calls.find((c) => c.name === 'edit_file') : undefined;
        const editResult = edit && tool && tool.role === 'tool' ? tool.results.find((r) => r.callId === edit.id) : undefined;
        if (editResult?.ok) expect(fs.readFileSync(path.join(dir, 'a.txt'), 'utf8')).toBe(String(CRASH_TURN[2]!.args.text));
        for (const c of out.resumed) {
          if (c.resumed === 'kept') f.kept++;
          else if (c.resumed === 'rerun') f.rerun++;
          else if (c.resumed === 'unknown-outcome') f.unknownOutcome++;
          else f.reconciled++;
        }
      }
      const perPoint = (performance.now() - t0) / f.points;
      console.log(`crash suite (${sc.name}): turn ${median().toFixed(0)} ms uncrashed (median); ${JSON.stringify(f)}; ${perPoint.toFixed(0)} ms per point`);
      expect(f.unsafeTwice).toBe(0);
      expect(f.violations).toBe(0);
      expect(f.killedMidTurn).toBe(POINTS);
    }, 60_000 + POINTS * 10_000);
  });
}
