/**
 * Scheduling (SPEC §9): how close the turn comes to the ideal schedule, and how fast a complete
 * call reaches its tool.
 *
 * Corpus: timed turns (`CORPUS`), synthesized in the four wire shapes (src/trace/synth.ts).
 * `idealMs` (src/trace/replay.ts): every safe call starts at its completion with unlimited
 * concurrency; unsafe calls start after the stream ended and every earlier call resulted. The
 * corpus stays within the default concurrency cap (10), where that ideal is reachable.
 *
 * - `virtual`: `replayTrace` on the virtual clock (deterministic; any ratio above 1.000 is a
 *   scheduling decision that lost time);
 * - `wall`: the same turns (times × `wallScale`) on the real clock, in-process: trace lines fed at
 *   their time with timers, simulated tools as real timers; ideal recomputed from the measured
 *   completion times. Includes timer lateness and everything the engine does on the way.
 * - dispatch latency: completion (the call's `completeMs`, taken inside `feed`) → `runTool`
 *   invoked, for every safe call, on the real clock: p50 / p99 / max. Measured over the wall
 *   runs and a burst of 2,000 calls fed as fast as possible.
 *
 * With a baseline (`--baseline <git-ref>`, bench/baseline.ts) the dispatch latency is measured
 * for the baseline's TurnController too, in the same run: each wall turn and each burst turn runs
 * on both controllers one after the other (the same inputs, this checkout's adapters).
 *
 * Run: `node dist/bench/scheduling.js [--json] [--baseline <git-ref>]` after `npm run build`.
 */
import type { CallResult } from '../machines/toolCall.machine';
import { CODING_TURN, EARLY_CALL } from '../scripts/make-examples';
import { demoScript } from '../src/demo/script';
import { realClock } from '../src/engine/clock';
import { TurnController } from '../src/engine/controller';
import { idealMs, replayTrace, simClassifier } from '../src/trace/replay';
import { SYNTH_FORMATS, synthesizeTrace, type TurnScript } from '../src/trace/synth';
import type { SimToolSpec, Trace } from '../src/trace/trace';
import { createAdapter } from '../src/wire';
import type { StreamEvent } from '../src/wire/events';
import { baselineModule, resolveBaseline } from './baseline';
import type { ControllerClass } from './lifecycle';
import { fullGc, percentile } from './throughput';

const tools = (read: number, search: number, edit: number, extra: SimToolSpec[] = []): SimToolSpec[] => [
  { name: 'read_file', kind: 'read', durationMs: read, result: 'contents' },
  { name: 'grep', kind: 'search', durationMs: search, result: 'matches' },
  { name: 'edit_file', kind: 'edit', durationMs: edit, result: 'edited' },
  ...extra,
];

/** The benchmark corpus: realistic agent turns with different shapes. */
export const CORPUS: Record<string, TurnScript> = {
  'coding-turn': CODING_TURN,
  'early-call': EARLY_CALL,
  demo: demoScript(1),
  'fan-out': {
    text: 'Reading the modules.',
    calls: Array.from({ length: 8 }, (_, i) => ({ name: 'read_file', args: { path: `src/m${i}.ts` }, openMs: 300 * i + 100, completeMs: 300 * i + 300 })),
    endMs: 2600,
    tools: tools(700, 900, 300),
  },
  barrier: {
    text: 'Edit first, then look again.',
    calls: [
      { name: 'read_file', args: { path: 'a.ts' }, openMs: 200, completeMs: 500 },
      { name: 'edit_file', args: { path: 'a.ts', old: 'x', new: 'y' }, openMs: 600, completeMs: 1000 },
      { name: 'read_file', args: { path: 'a.ts' }, openMs: 1100, completeMs: 1500 },
      { name: 'grep', args: { pattern: 'y', path: '.' }, openMs: 1600, completeMs: 2000 },
    ],
    endMs: 2500,
    tools: tools(400, 600, 300),
  },
  'slow-search': {
    text: 'Searching the whole repository while I explain the plan in detail.',
    calls: [{ name: 'grep', args: { pattern: 'TODO', path: '.' }, openMs: 200, completeMs: 400 }],
    endMs: 3000,
    tools: tools(400, 4000, 300),
  },
  'fetch-and-run': {
    text: 'Fetching the docs, then running the tests.',
    calls: [
      { name: 'fetch_url', args: { url: 'https://example.com/docs' }, openMs: 100, completeMs: 400 },
      { name: 'read_file', args: { path: 'package.json' }, openMs: 500, completeMs: 800 },
      { name: 'run_tests', args: { command: 'npm test' }, openMs: 900, completeMs: 1300 },
    ],
    endMs: 1600,
    tools: tools(300, 500, 300, [
      { name: 'fetch_url', kind: 'fetch', durationMs: 1500, result: 'docs' },
      { name: 'run_tests', kind: 'execute', durationMs: 2000, result: 'passed' },
    ]),
  },
};

export interface SchedulingRow {
  trace: string;
  format: string;
  clock: 'virtual' | 'wall';
  streamEndMs: number;
  turnDoneMs: number;
  idealMs: number;
  postStreamMs?: number;
  /** turnDoneMs ÷ idealMs */
  ratio: number;
}

export interface DispatchLatency {
  source: 'wall-corpus' | 'burst' | 'burst (CPU time)';
  calls: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** The same measurement on the baseline build, in the same run. */
  baseline?: { calls: number; p50Ms: number; p99Ms: number; maxMs: number };
}

export interface SchedulingResult {
  rows: SchedulingRow[];
  latency: DispatchLatency[];
}

function scaleScript(s: TurnScript, k: number): TurnScript {
  const t = (ms: number): number => Math.round(ms * k);
  return {
    ...s,
    calls: s.calls.map((c) => ({ ...c, openMs: t(c.openMs), completeMs: t(c.completeMs) })),
    endMs: t(s.endMs),
    tools: s.tools?.map((x) => ({ ...x, durationMs: t(x.durationMs) })),
  };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * One turn on the real clock: lines fed at their time, tools are timers. Dispatch latency is
 * taken for each safe call whose tool starts inside the `feed()` of its own completing event
 * (closing fragment or completion evidence): `runTool` invoked − that `feed()` began.
 */
export async function wallRun(
  trace: Trace,
  tools: SimToolSpec[],
  Ctor: ControllerClass = TurnController,
): Promise<{ row: Omit<SchedulingRow, 'trace'>; latencies: number[] }> {
  const byName = new Map(tools.map((t) => [t.name, t]));
  const clock = realClock();
  const latencies: number[] = [];
  let feeding: { index: number; at: number } | undefined;
  const c = new Ctor({
    mode: 'execute',
    clock,
    maxAttempts: 1,
    classify: simClassifier(tools),
    runTool: (call, signal) => {
      if (feeding && feeding.index === call.index) latencies.push(clock.now() - feeding.at);
      const spec = byName.get(call.name);
      return new Promise<CallResult>((resolve) => {
        const h = setTimeout(() => resolve({ ok: true, content: spec?.result ?? 'ok' }), spec?.durationMs ?? 0);
        signal.addEventListener('abort', () => clearTimeout(h), { once: true });
      });
    },
  });
  const adapter = createAdapter(trace.format);
  const feed = (evs: StreamEvent[]): void => {
    for (const e of evs) {
      feeding = e.type === 'call.fragment' || e.type === 'call.complete' ? { index: e.index, at: clock.now() } : undefined;
      c.feed(e);
      feeding = undefined;
    }
  };
  for (const l of trace.attempts[0]!.lines) {
    const wait = l.t - clock.now();
    if (wait > 1) await sleep(wait);
    if (l.kind === 'data') feed(adapter.push(l.data));
  }
  feed(adapter.end());
  const s = await c.done;
  const ideal = idealMs({ calls: s.calls, streamEndMs: s.streamEndMs }, tools);
  return {
    row: { format: trace.format, clock: 'wall', streamEndMs: s.streamEndMs ?? 0, turnDoneMs: s.turnDoneMs, idealMs: ideal, ratio: s.turnDoneMs / ideal },
    latencies,
  };
}

/**
 * Completion → runTool latency for many calls fed back to back (no timers in between), as wall
 * time and as this process's CPU time (the CPU time leaves out preemption by other processes).
 */
async function burst(totalCalls: number, perTurn: number, ctors: ControllerClass[]): Promise<Array<{ wall: number[]; cpu: number[] }>> {
  const out = ctors.map(() => ({ wall: [] as number[], cpu: [] as number[] }));
  for (let done = 0; done < totalCalls; done += perTurn) {
    // Alternate which controller goes first, so neither always inherits the other's garbage.
    for (let j = 0; j < ctors.length; j++) {
      const k = (j + done / perTurn) % ctors.length;
      await burstTurn(perTurn, ctors[k]!, out[k]!.wall, out[k]!.cpu);
    }
  }
  return out;
}

async function burstTurn(perTurn: number, Ctor: ControllerClass, wall: number[], cpu: number[]): Promise<void> {
  const clock = realClock();
  let at: { index: number; t: number; cpu: NodeJS.CpuUsage } | undefined;
  const c = new Ctor({
    mode: 'execute',
    clock,
    classify: () => ({ safe: true, needsApproval: false }),
    runTool: (call) => {
      if (at && at.index === call.index) {
        wall.push(clock.now() - at.t);
        const u = process.cpuUsage(at.cpu);
        cpu.push((u.user + u.system) / 1000);
      }
      return Promise.resolve({ ok: true, content: 'ok' });
    },
  });
  for (let i = 0; i < perTurn; i++) {
    c.feed({ type: 'call.identity', index: i, id: `c${i}`, name: 'read_file' });
    c.feed({ type: 'call.fragment', index: i, text: `{"path":"f${i}` });
    at = { index: i, t: clock.now(), cpu: process.cpuUsage() };
    c.feed({ type: 'call.fragment', index: i, text: '.ts"}' }); // the closing brace completes the call
    at = undefined;
  }
  c.feed({ type: 'finish', reason: 'tool_calls' });
  c.feed({ type: 'stream.end' });
  await c.done;
}

export async function benchScheduling(opts: { wallScale?: number; wall?: boolean; baselineDist?: string } = {}): Promise<SchedulingResult> {
  const Base = opts.baselineDist
    ? baselineModule<{ TurnController: ControllerClass }>(opts.baselineDist, 'src/engine/controller').TurnController
    : undefined;
  const rows: SchedulingRow[] = [];
  for (const [name, script] of Object.entries(CORPUS)) {
    for (const format of SYNTH_FORMATS) {
      const r = await replayTrace(synthesizeTrace(format, script));
      rows.push({
        trace: name,
        format,
        clock: 'virtual',
        streamEndMs: r.streamEndMs ?? 0,
        turnDoneMs: r.turnDoneMs,
        idealMs: r.idealMs ?? r.turnDoneMs,
        postStreamMs: r.postStreamMs,
        ratio: r.turnDoneMs / (r.idealMs ?? r.turnDoneMs),
      });
    }
  }
  const latency: DispatchLatency[] = [];
  const stats = (xs: number[]) => ({ calls: xs.length, p50Ms: percentile(xs, 50), p99Ms: percentile(xs, 99), maxMs: Math.max(...xs) });
  const summarize = (source: DispatchLatency['source'], xs: number[], base?: number[]): DispatchLatency => ({
    source,
    ...stats(xs),
    ...(base ? { baseline: stats(base) } : {}),
  });
  if (opts.wall !== false) {
    const k = opts.wallScale ?? 0.3;
    const lat: number[] = [];
    const baseLat: number[] = [];
    for (const [name, script] of Object.entries(CORPUS)) {
      for (const format of ['openai-chat', 'anthropic'] as const) {
        const scaled = scaleScript(script, k);
        const trace = synthesizeTrace(format, scaled);
        const { row, latencies } = await wallRun(trace, scaled.tools ?? []);
        rows.push({ trace: name, ...row });
        lat.push(...latencies);
        if (Base) baseLat.push(...(await wallRun(trace, scaled.tools ?? [], Base)).latencies);
      }
    }
    latency.push(summarize('wall-corpus', lat, Base ? baseLat : undefined));
  }
  fullGc();
  const [b, bb] = await burst(2000, 10, Base ? [TurnController, Base] : [TurnController]);
  latency.push(summarize('burst', b!.wall, bb?.wall), summarize('burst (CPU time)', b!.cpu, bb?.cpu));
  return { rows, latency };
}

const f = (x: number | undefined, d = 0): string => (x === undefined ? '' : x.toFixed(d));

export function formatScheduling(r: SchedulingResult): string {
  const lines = ['| trace | format | clock | stream end ms | turn done ms | ideal ms | post-stream ms | turn ÷ ideal |', '|---|---|---|---:|---:|---:|---:|---:|'];
  for (const x of r.rows) {
    lines.push(`| ${x.trace} | ${x.format} | ${x.clock} | ${f(x.streamEndMs, 1)} | ${f(x.turnDoneMs, 1)} | ${f(x.idealMs, 1)} | ${f(x.postStreamMs, 0)} | ${x.ratio.toFixed(4)} |`);
  }
  if (r.latency.some((l) => l.baseline)) {
    lines.push('', '| completion → tool invoked | calls | p50 ms | p99 ms | max ms | baseline p50 ms | baseline p99 ms | baseline max ms | p99 × baseline |', '|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const l of r.latency) {
      const b = l.baseline;
      lines.push(`| ${l.source} | ${l.calls} | ${l.p50Ms.toFixed(3)} | ${l.p99Ms.toFixed(3)} | ${l.maxMs.toFixed(3)} | ${f(b?.p50Ms, 3)} | ${f(b?.p99Ms, 3)} | ${f(b?.maxMs, 3)} | ${b ? (l.p99Ms / b.p99Ms).toFixed(2) : ''} |`);
    }
  } else {
    lines.push('', '| completion → tool invoked | calls | p50 ms | p99 ms | max ms |', '|---|---:|---:|---:|---:|');
    for (const l of r.latency) lines.push(`| ${l.source} | ${l.calls} | ${l.p50Ms.toFixed(3)} | ${l.p99Ms.toFixed(3)} | ${l.maxMs.toFixed(3)} |`);
  }
  return lines.join('\n') + '\n';
}

if (require.main === module) {
  const bi = process.argv.indexOf('--baseline');
  const ref = bi >= 0 ? process.argv[bi + 1] : undefined;
  (ref ? resolveBaseline(ref, (s) => process.stderr.write(s)) : Promise.resolve(undefined))
    .then((b) => benchScheduling({ baselineDist: b?.dist }))
    .then(
    (r) => process.stdout.write(process.argv.includes('--json') ? JSON.stringify(r, null, 2) + '\n' : formatScheduling(r)),
    (err: unknown) => {
      process.stderr.write(`scheduling: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
