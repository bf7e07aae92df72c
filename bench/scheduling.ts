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
 *   runs and a burst of 2,000 calls fed as fast as possible, each as wall time and as this
 *   process's CPU time (`process.cpuUsage`: every thread of the process, so a concurrent GC or
 *   compiler thread counts; preemption by other processes does not).
 *
 * The corpus has 40 safe calls, so one pass cannot give a p99 (it is the max). The wall corpus is
 * run `wallRounds` times (default 3: 120 calls, so p99 is the second slowest; `--rounds 5` gives
 * 200, ~1 min more with a baseline); the `wall-corpus` row is all rounds, and
 * `wall-corpus, round 1` is the first pass on its own (the engine's code has run only the virtual
 * replays before it: the cold start a new process pays on its first turns). Wall-clock turn rows
 * (turn ÷ ideal) are the first round's. Each sample also records whether a V8 GC ran inside its
 * window (`PerformanceObserver` 'gc' entries), so the slow samples can be told apart: GC,
 * preemption (wall − CPU), or work (CPU). `--samples` prints every corpus sample over 1 ms.
 * `alloc KiB`: the median V8 heap growth inside a window (`used_heap_size`, the probe's own
 * objects subtracted; windows with a GC inside left out): what one dispatch allocates.
 *
 * With a baseline (`--baseline <git-ref>`, bench/baseline.ts) the dispatch latency is measured
 * for the baseline's TurnController too, in the same run and the same way: each wall turn and
 * each burst turn runs on both controllers one after the other (the same inputs, this checkout's
 * adapters), which one goes first alternating.
 *
 * Run: `node dist/bench/scheduling.js [--json] [--baseline <git-ref>] [--rounds N] [--samples]`
 * after `npm run build`.
 */
import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import type { CallResult } from '../machines/toolCall.machine';
import { CODING_TURN, EARLY_CALL } from '../scripts/make-examples';
import { demoScript } from '../src/demo/script';
import { type Clock, realClock } from '../src/engine/clock';
import { TurnController } from '../src/engine/controller';
import { idealMs, replayTrace, simClassifier } from '../src/trace/replay';
import { SYNTH_FORMATS, synthesizeTrace, type TurnScript } from '../src/trace/synth';
import type { SimToolSpec, Trace } from '../src/trace/trace';
import { createAdapter } from '../src/wire';
import type { StreamEvent } from '../src/wire/events';
import { baselineModule, resolveBaseline } from './baseline';
import type { ControllerClass } from './lifecycle';
import { fullGc, median, percentile } from './throughput';

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

export type DispatchSource =
  | 'wall-corpus'
  | 'wall-corpus (CPU time)'
  | 'wall-corpus, round 1'
  | 'wall-corpus, round 1 (CPU time)'
  | 'burst'
  | 'burst (CPU time)';

/** One completion → runTool measurement on the real clock. */
export interface DispatchSample {
  trace: string;
  format: string;
  /** Pass over the corpus, from 1. */
  round: number;
  /** The call's index in its turn. */
  index: number;
  wallMs: number;
  cpuMs: number;
  /** V8 GC time that overlapped the window (0 when none ran inside it). */
  gcMs: number;
  /** KiB the V8 heap grew inside the window (NaN when a GC ran inside it). */
  allocKiB: number;
}

export interface DispatchLatency {
  source: DispatchSource;
  calls: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Median KiB allocated in a window (wall rows only). */
  allocKiB?: number;
  /** The same measurement on the baseline build, in the same run. */
  baseline?: { calls: number; p50Ms: number; p99Ms: number; maxMs: number; allocKiB?: number };
}

export interface SchedulingResult {
  rows: SchedulingRow[];
  latency: DispatchLatency[];
  /** Every wall-corpus sample of this build and of the baseline (when there is one). */
  samples?: { current: DispatchSample[]; baseline?: DispatchSample[] };
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

/** A wall-run sample before it is placed in the corpus (trace, format, round) and GCs are matched. */
export interface WallSample {
  index: number;
  wallMs: number;
  cpuMs: number;
  allocBytes: number;
  /** Window start on `performance.now()`'s time base (to match GC entries). */
  startAbs: number;
}

/** A dispatch window's start: CPU time, heap size, clock (the clock last, so the probes are outside the wall time). */
interface Window {
  cpu: NodeJS.CpuUsage;
  heap: number;
  t: number;
}

function openWindow(clock: Clock): Window {
  const cpu = process.cpuUsage();
  const heap = getHeapStatistics().used_heap_size;
  return { cpu, heap, t: clock.now() };
}

function closeWindow(clock: Clock, w: Window): { wallMs: number; cpuMs: number; allocBytes: number } {
  const wallMs = clock.now() - w.t;
  const u = process.cpuUsage(w.cpu);
  const allocBytes = getHeapStatistics().used_heap_size - w.heap - probeBytes();
  return { wallMs, cpuMs: (u.user + u.system) / 1000, allocBytes };
}

let probe: number | undefined;
/** What an empty window allocates itself (the probes' own objects): subtracted from every window. */
function probeBytes(): number {
  if (probe === undefined) {
    probe = 0;
    const clock = realClock();
    const xs: number[] = [];
    for (let i = 0; i < 51; i++) xs.push(closeWindow(clock, openWindow(clock)).allocBytes);
    probe = median(xs.filter((x) => x >= 0));
  }
  return probe;
}

/**
 * One turn on the real clock: lines fed at their time, tools are timers. Dispatch latency is
 * taken for each safe call whose tool starts inside the `feed()` of its own completing event
 * (closing fragment or completion evidence): `runTool` invoked − that `feed()` began.
 */
export async function wallRun(
  trace: Trace,
  tools: SimToolSpec[],
  Ctor: ControllerClass = TurnController,
): Promise<{ row: Omit<SchedulingRow, 'trace'>; samples: WallSample[] }> {
  const byName = new Map(tools.map((t) => [t.name, t]));
  const origin = performance.now();
  const clock = realClock(origin);
  const samples: WallSample[] = [];
  let feeding: { index: number; w: Window } | undefined;
  const c = new Ctor({
    mode: 'execute',
    clock,
    maxAttempts: 1,
    classify: simClassifier(tools),
    runTool: (call, signal) => {
      if (feeding && feeding.index === call.index) {
        samples.push({ index: call.index, ...closeWindow(clock, feeding.w), startAbs: origin + feeding.w.t });
      }
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
      feeding = e.type === 'call.fragment' || e.type === 'call.complete' ? { index: e.index, w: openWindow(clock) } : undefined;
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
    samples,
  };
}

/** V8 GC pauses (start on `performance.now()`'s time base, duration) from now until `stop()`. */
function gcWatch(): { stop(): Array<[number, number]> } {
  const seen: Array<[number, number]> = [];
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) seen.push([e.startTime, e.duration]);
  });
  obs.observe({ entryTypes: ['gc'] });
  return {
    stop() {
      // Entries are delivered asynchronously: take what is buffered, then disconnect.
      for (const e of obs.takeRecords()) seen.push([e.startTime, e.duration]);
      obs.disconnect();
      return seen;
    },
  };
}

/** GC time overlapping [start, start + ms]. */
function gcInside(gcs: Array<[number, number]>, start: number, ms: number): number {
  let t = 0;
  for (const [gs, gd] of gcs) {
    const from = Math.max(gs, start);
    const to = Math.min(gs + gd, start + ms);
    if (to > from) t += to - from;
  }
  return t;
}

/**
 * Completion → runTool latency for many calls fed back to back (no timers in between), as wall
 * time and as this process's CPU time (the CPU time leaves out preemption by other processes).
 */
interface BurstSamples {
  wall: number[];
  cpu: number[];
  /** KiB allocated per window (windows with a GC inside give less; the median is read). */
  alloc: number[];
}

async function burst(totalCalls: number, perTurn: number, ctors: ControllerClass[]): Promise<BurstSamples[]> {
  const out = ctors.map((): BurstSamples => ({ wall: [], cpu: [], alloc: [] }));
  for (let done = 0; done < totalCalls; done += perTurn) {
    // Alternate which controller goes first, so neither always inherits the other's garbage.
    for (let j = 0; j < ctors.length; j++) {
      const k = (j + done / perTurn) % ctors.length;
      await burstTurn(perTurn, ctors[k]!, out[k]!);
    }
  }
  return out;
}

async function burstTurn(perTurn: number, Ctor: ControllerClass, into: BurstSamples): Promise<void> {
  const clock = realClock();
  let at: { index: number; w: Window } | undefined;
  const c = new Ctor({
    mode: 'execute',
    clock,
    classify: () => ({ safe: true, needsApproval: false }),
    runTool: (call) => {
      if (at && at.index === call.index) {
        const x = closeWindow(clock, at.w);
        into.wall.push(x.wallMs);
        into.cpu.push(x.cpuMs);
        if (x.allocBytes >= 0) into.alloc.push(x.allocBytes / 1024);
      }
      return Promise.resolve({ ok: true, content: 'ok' });
    },
  });
  for (let i = 0; i < perTurn; i++) {
    c.feed({ type: 'call.identity', index: i, id: `c${i}`, name: 'read_file' });
    c.feed({ type: 'call.fragment', index: i, text: `{"path":"f${i}` });
    at = { index: i, w: openWindow(clock) };
    c.feed({ type: 'call.fragment', index: i, text: '.ts"}' }); // the closing brace completes the call
    at = undefined;
  }
  c.feed({ type: 'finish', reason: 'tool_calls' });
  c.feed({ type: 'stream.end' });
  await c.done;
}

export async function benchScheduling(
  opts: { wallScale?: number; wall?: boolean; wallRounds?: number; baselineDist?: string } = {},
): Promise<SchedulingResult> {
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
  const kib = (xs: number[] | undefined) => (xs === undefined ? {} : { allocKiB: median(xs.filter((x) => Number.isFinite(x))) });
  const summarize = (source: DispatchSource, xs: number[], base?: number[], alloc?: number[], baseAlloc?: number[]): DispatchLatency => ({
    source,
    ...stats(xs),
    ...kib(alloc),
    ...(base ? { baseline: { ...stats(base), ...kib(baseAlloc) } } : {}),
  });
  let samples: SchedulingResult['samples'];
  if (opts.wall !== false) {
    const k = opts.wallScale ?? 0.3;
    const rounds = Math.max(1, opts.wallRounds ?? 3);
    const cur: DispatchSample[] = [];
    const base: DispatchSample[] = [];
    const gc = gcWatch();
    const turns = Object.entries(CORPUS).flatMap(([name, script]) =>
      (['openai-chat', 'anthropic'] as const).map((format) => {
        const scaled = scaleScript(script, k);
        return { name, format, trace: synthesizeTrace(format, scaled), tools: scaled.tools ?? [] };
      }),
    );
    const pending: Array<{ into: DispatchSample[]; name: string; format: string; round: number; xs: WallSample[] }> = [];
    for (let round = 1; round <= rounds; round++) {
      for (const [t, turn] of turns.entries()) {
        // Both controllers run every turn, which one goes first alternating (neither always inherits the other's garbage).
        const order = Base && (round + t) % 2 === 1 ? ([Base, TurnController] as const) : ([TurnController, Base] as const);
        for (const Ctor of order) {
          if (Ctor === undefined) continue;
          const { row, samples: xs } = await wallRun(turn.trace, turn.tools, Ctor);
          if (Ctor === TurnController && round === 1) rows.push({ trace: turn.name, ...row });
          pending.push({ into: Ctor === TurnController ? cur : base, name: turn.name, format: turn.format, round, xs });
        }
      }
    }
    const gcs = gc.stop();
    for (const p of pending) {
      for (const x of p.xs) {
        const gcMs = gcInside(gcs, x.startAbs, x.wallMs);
        const allocKiB = gcMs > 0 || x.allocBytes < 0 ? NaN : x.allocBytes / 1024;
        p.into.push({ trace: p.name, format: p.format, round: p.round, index: x.index, wallMs: x.wallMs, cpuMs: x.cpuMs, gcMs, allocKiB });
      }
    }
    const wallOf = (xs: DispatchSample[]) => xs.map((x) => x.wallMs);
    const cpuOf = (xs: DispatchSample[]) => xs.map((x) => x.cpuMs);
    const allocOf = (xs: DispatchSample[]) => xs.map((x) => x.allocKiB);
    const first = (xs: DispatchSample[]) => xs.filter((x) => x.round === 1);
    latency.push(
      summarize('wall-corpus', wallOf(cur), Base ? wallOf(base) : undefined, allocOf(cur), Base ? allocOf(base) : undefined),
      summarize('wall-corpus (CPU time)', cpuOf(cur), Base ? cpuOf(base) : undefined),
    );
    if (rounds > 1) {
      latency.push(
        summarize('wall-corpus, round 1', wallOf(first(cur)), Base ? wallOf(first(base)) : undefined, allocOf(first(cur)), Base ? allocOf(first(base)) : undefined),
        summarize('wall-corpus, round 1 (CPU time)', cpuOf(first(cur)), Base ? cpuOf(first(base)) : undefined),
      );
    }
    samples = { current: cur, ...(Base ? { baseline: base } : {}) };
  }
  fullGc();
  const [b, bb] = await burst(2000, 10, Base ? [TurnController, Base] : [TurnController]);
  latency.push(summarize('burst', b!.wall, bb?.wall, b!.alloc, bb?.alloc), summarize('burst (CPU time)', b!.cpu, bb?.cpu));
  return { rows, latency, ...(samples ? { samples } : {}) };
}

/** What the corpus samples over 1 ms were: a GC inside the window, preemption (wall − CPU ≥ 0.25 ms), or neither (work). */
export function slowSampleSummary(xs: DispatchSample[], overMs = 1): string {
  const slow = xs.filter((x) => x.wallMs > overMs);
  const gc = slow.filter((x) => x.gcMs > 0).length;
  const pre = slow.filter((x) => x.gcMs === 0 && x.wallMs - x.cpuMs >= 0.25).length;
  const r1 = slow.filter((x) => x.round === 1).length;
  return `${slow.length} of ${xs.length} over ${overMs} ms (${r1} in round 1): ${gc} with a GC inside, ${pre} preempted (wall − CPU ≥ 0.25 ms, no GC), ${slow.length - gc - pre} CPU work`;
}

const f = (x: number | undefined, d = 0): string => (x === undefined ? '' : x.toFixed(d));

export function formatScheduling(r: SchedulingResult): string {
  const lines = ['| trace | format | clock | stream end ms | turn done ms | ideal ms | post-stream ms | turn ÷ ideal |', '|---|---|---|---:|---:|---:|---:|---:|'];
  for (const x of r.rows) {
    lines.push(`| ${x.trace} | ${x.format} | ${x.clock} | ${f(x.streamEndMs, 1)} | ${f(x.turnDoneMs, 1)} | ${f(x.idealMs, 1)} | ${f(x.postStreamMs, 0)} | ${x.ratio.toFixed(4)} |`);
  }
  if (r.latency.some((l) => l.baseline)) {
    lines.push(
      '',
      '| completion → tool invoked | calls | p50 ms | p99 ms | max ms | alloc KiB | baseline p50 ms | baseline p99 ms | baseline max ms | baseline alloc KiB | p99 × baseline |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    );
    for (const l of r.latency) {
      const b = l.baseline;
      lines.push(
        `| ${l.source} | ${l.calls} | ${l.p50Ms.toFixed(3)} | ${l.p99Ms.toFixed(3)} | ${l.maxMs.toFixed(3)} | ${f(l.allocKiB, 1)} | ${f(b?.p50Ms, 3)} | ${f(b?.p99Ms, 3)} | ${f(b?.maxMs, 3)} | ${f(b?.allocKiB, 1)} | ${b ? (l.p99Ms / b.p99Ms).toFixed(2) : ''} |`,
      );
    }
  } else {
    lines.push('', '| completion → tool invoked | calls | p50 ms | p99 ms | max ms | alloc KiB |', '|---|---:|---:|---:|---:|---:|');
    for (const l of r.latency) lines.push(`| ${l.source} | ${l.calls} | ${l.p50Ms.toFixed(3)} | ${l.p99Ms.toFixed(3)} | ${l.maxMs.toFixed(3)} | ${f(l.allocKiB, 1)} |`);
  }
  const sm = r.samples;
  if (sm) {
    lines.push('', `Corpus samples: ${slowSampleSummary(sm.current)}${sm.baseline ? `; baseline ${slowSampleSummary(sm.baseline)}` : ''}.`);
  }
  return lines.join('\n') + '\n';
}

if (require.main === module) {
  const arg = (name: string): string | undefined => {
    const i = process.argv.indexOf(name);
    return i >= 0 ? process.argv[i + 1] : undefined;
  };
  const ref = arg('--baseline');
  const rounds = arg('--rounds') === undefined ? undefined : Number(arg('--rounds'));
  if (rounds !== undefined && !(Number.isInteger(rounds) && rounds >= 1)) {
    process.stderr.write(`scheduling: --rounds wants a whole number ≥ 1, got ${arg('--rounds')}\n`);
    process.exit(2);
  }
  (ref ? resolveBaseline(ref, (s) => process.stderr.write(s)) : Promise.resolve(undefined))
    .then((b) => benchScheduling({ baselineDist: b?.dist, wallRounds: rounds }))
    .then(
    (r) => {
      if (process.argv.includes('--samples') && r.samples) {
        const line = (side: string, x: DispatchSample) =>
          `${side} round ${x.round} ${x.trace}/${x.format} call ${x.index}: wall ${x.wallMs.toFixed(3)} ms, CPU ${x.cpuMs.toFixed(3)} ms, ${x.gcMs > 0 ? `GC ${x.gcMs.toFixed(3)} ms inside` : `${x.allocKiB.toFixed(1)} KiB allocated`}\n`;
        for (const x of r.samples.current) if (x.wallMs > 1) process.stderr.write(line('current', x));
        for (const x of r.samples.baseline ?? []) if (x.wallMs > 1) process.stderr.write(line('baseline', x));
      }
      process.stdout.write(process.argv.includes('--json') ? JSON.stringify(r, null, 2) + '\n' : formatScheduling(r));
    },
    (err: unknown) => {
      process.stderr.write(`scheduling: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
