/**
 * Lifecycle cost (SPEC §9): controller CPU time for a whole turn of N calls, fed as canonical
 * events (no SSE: this isolates the engine — ArgBuffers, call actors, turn machine, release and
 * start decisions, history). Each call: identity, two argument fragments, completion evidence;
 * then finish and end of stream.
 *
 * - `execute`: safe tools that resolve at once (the controller's own time, including the promise
 *   hops of each tool result), until `done`;
 * - `gateway`: release only (synchronous), until `done`;
 * - `empty`: a turn with no calls (construction + stream end: the fixed cost per turn).
 *
 * Targets: a 20-call turn ≤ 5 ms; 1,000 calls stay linear (µs per call at 1,000 ÷ at 20 ≤ 1.5).
 *
 * Linearity (`linear` on the 1,000-call rows) is measured on its own, this build only: blocks of
 * 1,000 calls — one 1,000-call turn, or 50 turns of 20 — alternating, the event loop let run
 * after each turn (as in a server), and no forced GC. The per-size rows force a full GC before
 * each 100/1,000-call sample (so neither side pays for the other's old garbage), and a forced GC
 * makes V8 drop XState's optimised code; comparing those rows with the 20-call rows (no forced
 * GC) mixes two conditions, which is why `vs20` reads higher than `linear`.
 *
 * With a baseline (`--baseline <git-ref>`, bench/baseline.ts) every row is measured for the
 * baseline's TurnController too, samples alternating, and the row shows current ÷ baseline.
 *
 * Run: `node dist/bench/lifecycle.js [--json] [--baseline <git-ref>]` after `npm run build`.
 */
import { TurnController } from '../src/engine/controller';
import type { StreamEvent } from '../src/wire/events';
import { baselineModule, resolveBaseline, timeSideBySide } from './baseline';
import { fullGc, timeAsync } from './throughput';

/** The controller class under test: this checkout's or a baseline build's (same constructor options). */
export type ControllerClass = typeof TurnController;

export interface LifecycleRow {
  mode: 'execute' | 'gateway' | 'empty';
  calls: number;
  /** Median CPU ms per turn. */
  msPerTurn: number;
  msMin: number;
  wallMs: number;
  usPerCall?: number;
  /** µs per call ÷ µs per call of the 20-call turn in the same mode (1.0 = linear). */
  vs20?: number;
  /** 1,000-call rows: the same ratio measured in equal blocks of 1,000 calls with no forced GC (see the header). */
  linear?: number;
  samples: number;
  /** The same row measured on the baseline build in the same run (alternating samples). */
  baseline?: { msPerTurn: number; msMin: number; usPerCall?: number; vs20?: number; samples: number };
  /** Current CPU per turn ÷ baseline CPU per turn (< 1 = faster than the baseline). */
  vsBaseline?: number;
}

export function turnEvents(n: number): StreamEvent[] {
  const evs: StreamEvent[] = [{ type: 'message.start', id: 'msg_bench', model: 'bench' }];
  for (let i = 0; i < n; i++) {
    evs.push({ type: 'call.identity', index: i, id: `call_${i}`, name: 'read_file' });
    evs.push({ type: 'call.fragment', index: i, text: '{"path":"src/' });
    evs.push({ type: 'call.fragment', index: i, text: `file${i}.ts"}` });
    evs.push({ type: 'call.complete', index: i });
  }
  evs.push({ type: 'finish', reason: 'tool_calls' }, { type: 'stream.end' });
  return evs;
}

const RESULT = { ok: true, content: 'ok' };

async function runTurn(Ctor: ControllerClass, mode: 'execute' | 'gateway', evs: StreamEvent[], expectCalls: number): Promise<void> {
  const c = new Ctor({
    mode,
    classify: () => ({ safe: true, needsApproval: false }),
    runTool: () => Promise.resolve(RESULT),
  });
  for (const e of evs) c.feed(e);
  const s = await c.done;
  if (s.outcome !== 'done' || s.calls.length !== expectCalls) throw new Error(`lifecycle: turn ended ${s.outcome} with ${s.calls.length} calls`);
  if (mode === 'execute' && s.history[1]?.role !== (expectCalls > 0 ? 'tool' : undefined)) throw new Error('lifecycle: missing tool results');
}

export async function benchLifecycle(opts: { sizes?: number[]; budgetMs?: number; baselineDist?: string } = {}): Promise<LifecycleRow[]> {
  const sizes = opts.sizes ?? [20, 100, 1000];
  const budgetMs = opts.budgetMs ?? 1500;
  const Base = opts.baselineDist
    ? baselineModule<{ TurnController: ControllerClass }>(opts.baselineDist, 'src/engine/controller').TurnController
    : undefined;
  const rows: LifecycleRow[] = [];
  const measure = async (mode: LifecycleRow['mode'], n: number, o: { minSamples: number; warmup: number }): Promise<void> => {
    const evs = turnEvents(n);
    const m = mode === 'empty' ? 'gateway' : mode;
    fullGc();
    const row: LifecycleRow = { mode, calls: n, msPerTurn: 0, msMin: 0, wallMs: 0, samples: 0 };
    const perCall = (ms: number): number | undefined => (n > 0 ? (ms * 1000) / n : undefined);
    if (Base) {
      const t = await timeSideBySide(() => runTurn(TurnController, m, evs, n), () => runTurn(Base, m, evs, n), { budgetMs: budgetMs * 2, gcBetween: n >= 100, ...o });
      Object.assign(row, { msPerTurn: t.current.ms, msMin: t.current.min, wallMs: t.current.wallMs, samples: t.current.samples });
      row.baseline = { msPerTurn: t.baseline.ms, msMin: t.baseline.min, usPerCall: perCall(t.baseline.ms), samples: t.baseline.samples };
      row.vsBaseline = t.current.ms / t.baseline.ms;
    } else {
      const t = await timeAsync(() => runTurn(TurnController, m, evs, n), { budgetMs, ...o });
      Object.assign(row, { msPerTurn: t.ms, msMin: t.min, wallMs: t.wallMs, samples: t.samples });
    }
    row.usPerCall = perCall(row.msPerTurn);
    rows.push(row);
  };
  await measure('empty', 0, { minSamples: 20, warmup: 20 });
  for (const mode of ['execute', 'gateway'] as const) {
    // 11 alternating samples of the 1,000-call turns (was 5: on the shared 2-core machine the median of 5 moved the ratio by ±0.06 between runs).
    for (const n of sizes) await measure(mode, n, { minSamples: n >= 1000 ? 11 : 20, warmup: n >= 1000 ? 2 : 10 });
  }
  if (sizes.includes(20) && sizes.includes(1000)) {
    for (const mode of ['execute', 'gateway'] as const) {
      const big = rows.find((r) => r.mode === mode && r.calls === 1000);
      if (big) big.linear = await linearity(mode, budgetMs);
    }
  }
  for (const r of rows) {
    const base = rows.find((b) => b.mode === r.mode && b.calls === 20);
    if (base && r.usPerCall !== undefined && base.usPerCall) r.vs20 = r.usPerCall / base.usPerCall;
    if (base?.baseline?.usPerCall && r.baseline?.usPerCall !== undefined) r.baseline.vs20 = r.baseline.usPerCall / base.baseline.usPerCall;
  }
  return rows;
}

/** CPU of one 1,000-call turn ÷ CPU of 50 turns of 20 calls, alternating blocks (see the header). */
async function linearity(mode: 'execute' | 'gateway', budgetMs: number): Promise<number> {
  const small = turnEvents(20);
  const big = turnEvents(1000);
  const block = async (evs: StreamEvent[], n: number, turns: number): Promise<void> => {
    for (let i = 0; i < turns; i++) {
      await runTurn(TurnController, mode, evs, n);
      await new Promise<void>((r) => setImmediate(r));
    }
  };
  const t = await timeSideBySide(() => block(big, 1000, 1), () => block(small, 20, 50), { budgetMs: budgetMs * 2, minSamples: 7, warmup: 2, gcBetween: false });
  return t.current.ms / t.baseline.ms;
}

const f2 = (x: number | undefined): string => (x === undefined ? '' : x.toFixed(2));

export function formatLifecycle(rows: LifecycleRow[]): string {
  if (rows.some((r) => r.baseline)) {
    const lines = [
      '| mode | calls | CPU ms/turn | µs/call | per-call × 20-call turn | baseline CPU ms/turn | baseline µs/call | baseline per-call × 20 | × baseline | samples (each) |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ];
    for (const r of rows) {
      const b = r.baseline;
      lines.push(`| ${r.mode} | ${r.calls} | ${f2(r.msPerTurn)} | ${f2(r.usPerCall)} | ${f2(r.vs20)} | ${f2(b?.msPerTurn)} | ${f2(b?.usPerCall)} | ${f2(b?.vs20)} | ${f2(r.vsBaseline)} | ${r.samples} |`);
    }
    return lines.join('\n') + '\n';
  }
  const lines = ['| mode | calls | CPU ms/turn | µs/call | per-call × 20-call turn | wall ms | samples |', '|---|---:|---:|---:|---:|---:|---:|'];
  for (const r of rows) lines.push(`| ${r.mode} | ${r.calls} | ${f2(r.msPerTurn)} | ${f2(r.usPerCall)} | ${f2(r.vs20)} | ${f2(r.wallMs)} | ${r.samples} |`);
  return lines.join('\n') + '\n';
}

if (require.main === module) {
  const bi = process.argv.indexOf('--baseline');
  const ref = bi >= 0 ? process.argv[bi + 1] : undefined;
  (ref ? resolveBaseline(ref, (s) => process.stderr.write(s)) : Promise.resolve(undefined))
    .then((b) => benchLifecycle({ baselineDist: b?.dist }))
    .then(
    (rows) => process.stdout.write(process.argv.includes('--json') ? JSON.stringify(rows, null, 2) + '\n' : formatLifecycle(rows)),
    (err: unknown) => {
      process.stderr.write(`lifecycle: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
