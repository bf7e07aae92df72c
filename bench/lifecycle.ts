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
 * Run: `node dist/bench/lifecycle.js [--json]` after `npm run build`.
 */
import { TurnController } from '../src/engine/controller';
import type { StreamEvent } from '../src/wire/events';
import { fullGc, timeAsync } from './throughput';

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
  samples: number;
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

async function runTurn(mode: 'execute' | 'gateway', evs: StreamEvent[], expectCalls: number): Promise<void> {
  const c = new TurnController({
    mode,
    classify: () => ({ safe: true, needsApproval: false }),
    runTool: () => Promise.resolve(RESULT),
  });
  for (const e of evs) c.feed(e);
  const s = await c.done;
  if (s.outcome !== 'done' || s.calls.length !== expectCalls) throw new Error(`lifecycle: turn ended ${s.outcome} with ${s.calls.length} calls`);
  if (mode === 'execute' && s.history[1]?.role !== (expectCalls > 0 ? 'tool' : undefined)) throw new Error('lifecycle: missing tool results');
}

export async function benchLifecycle(opts: { sizes?: number[]; budgetMs?: number } = {}): Promise<LifecycleRow[]> {
  const sizes = opts.sizes ?? [20, 100, 1000];
  const budgetMs = opts.budgetMs ?? 1500;
  const rows: LifecycleRow[] = [];
  fullGc();
  const empty = await timeAsync(() => runTurn('gateway', turnEvents(0), 0), { budgetMs, minSamples: 20, warmup: 20 });
  rows.push({ mode: 'empty', calls: 0, msPerTurn: empty.ms, msMin: empty.min, wallMs: empty.wallMs, samples: empty.samples });
  for (const mode of ['execute', 'gateway'] as const) {
    for (const n of sizes) {
      const evs = turnEvents(n);
      fullGc();
      const t = await timeAsync(() => runTurn(mode, evs, n), { budgetMs, minSamples: n >= 1000 ? 5 : 20, warmup: n >= 1000 ? 2 : 10 });
      rows.push({ mode, calls: n, msPerTurn: t.ms, msMin: t.min, wallMs: t.wallMs, usPerCall: (t.ms * 1000) / n, samples: t.samples });
    }
  }
  for (const r of rows) {
    const base = rows.find((b) => b.mode === r.mode && b.calls === 20);
    if (base && r.usPerCall !== undefined && base.usPerCall) r.vs20 = r.usPerCall / base.usPerCall;
  }
  return rows;
}

const f2 = (x: number | undefined): string => (x === undefined ? '' : x.toFixed(2));

export function formatLifecycle(rows: LifecycleRow[]): string {
  const lines = ['| mode | calls | CPU ms/turn | µs/call | per-call × 20-call turn | wall ms | samples |', '|---|---:|---:|---:|---:|---:|---:|'];
  for (const r of rows) lines.push(`| ${r.mode} | ${r.calls} | ${f2(r.msPerTurn)} | ${f2(r.usPerCall)} | ${f2(r.vs20)} | ${f2(r.wallMs)} | ${r.samples} |`);
  return lines.join('\n') + '\n';
}

if (require.main === module) {
  benchLifecycle().then(
    (rows) => process.stdout.write(process.argv.includes('--json') ? JSON.stringify(rows, null, 2) + '\n' : formatLifecycle(rows)),
    (err: unknown) => {
      process.stderr.write(`lifecycle: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
