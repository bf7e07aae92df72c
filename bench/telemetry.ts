/**
 * Telemetry cost (SPEC §11: telemetry off ≤ 3% CPU per chunk): `runTurn` CPU with no OpenTelemetry
 * registered against the same turn with the real SDK registered (BasicTracerProvider +
 * BatchSpanProcessor into an exporter that drops, MeterProvider with a reader that never exports
 * during the run), samples alternating between the two (bench/baseline.ts `timeSideBySide`), and —
 * with `--baseline <ref>` — the same turn on that commit's build with nothing registered.
 *
 * Two turns, both from in-memory OpenAI-chat chunk objects (no sockets, no timers):
 * - "1 call, 100 KB args": one read call whose arguments arrive in ~10-byte deltas (~10k chunks):
 *   the per-chunk path (telemetry adds nothing per chunk; the difference is per turn);
 * - "20 calls": twenty read calls, tools resolve at once: 21 spans per turn, so
 *   (on − off) / 21 is the cost of one span with its events and the turn's metrics.
 *
 *   npx ts-node --transpile-only bench/telemetry.ts [--baseline-dist DIR] [--budget-ms N]
 *   (or node dist/bench/telemetry.js; DIR from `node dist/bench/baseline.js <ref>`)
 */
import { context, metrics, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { MeterProvider, PeriodicExportingMetricReader, InMemoryMetricExporter, AggregationTemporality } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { z } from 'zod';
import { baselineModule, timeSideBySide } from './baseline';
import { deltas } from './throughput';
import { runTurn } from '../src/engine/runTurn';
import { defineTool } from '../src/execute/tools';

export interface TelemetryRow {
  turn: string;
  chunks: number;
  spans: number;
  /** Median CPU ms per turn. */
  offMs: number;
  onMs: number;
  /** SDK registered, turn inside an app span, but `telemetry: { enabled: false }`: what the application's OTel setup costs alone. */
  onDisabledMs: number;
  /** `on` again, alternated with `onDisabledMs` (the pair the per-span cost is read from). */
  onMs2: number;
  /** Fastest sample of each side of that pair (less sensitive to other load on a shared machine). */
  onDisabledMinMs: number;
  onMinMs: number;
  /** Same turn on the `--baseline` build, nothing registered (when given), and this build's off beside it. */
  baselineMs?: number;
  offVsBaselineMs?: number;
  samples: number;
}

/** Drops every span (the cost measured is sluice's and the SDK's, not an exporter's I/O). */
class DropExporter implements SpanExporter {
  export(_spans: ReadableSpan[], done: (r: { code: number }) => void): void {
    done({ code: 0 });
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

const base = { id: 'x', object: 'chat.completion.chunk', created: 0, model: 'bench-model' };
const chunk = (delta: unknown, finish_reason: string | null = null) => ({ ...base, choices: [{ index: 0, delta, finish_reason }] });

function turnChunks(calls: number, argChars: number): unknown[] {
  const out: unknown[] = [chunk({ role: 'assistant', content: 'Reading.' })];
  for (let i = 0; i < calls; i++) {
    out.push(chunk({ tool_calls: [{ index: i, id: `call_${i}`, type: 'function', function: { name: 'read_file', arguments: '' } }] }));
    const json = JSON.stringify({ path: `f${i}.ts`, pad: 'x'.repeat(Math.max(0, argChars - 30)) });
    for (const d of deltas(json, i + 1)) out.push(chunk({ tool_calls: [{ index: i, function: { arguments: d } }] }));
  }
  out.push(chunk({}, 'tool_calls'), '[DONE]');
  return out;
}

type RunTurnFn = typeof runTurn;
type DefineToolFn = typeof defineTool;

function turnFor(run: RunTurnFn, define: DefineToolFn, chunks: unknown[], telemetry?: { enabled: boolean }): () => Promise<void> {
  const read = define({ name: 'read_file', kind: 'read', input: z.object({ path: z.string(), pad: z.string() }), run: () => 'ok' });
  return async () => {
    const { summary } = await run({ format: 'openai-chat', stream: chunks, tools: [read], ...(telemetry ? { telemetry } : {}) });
    if (summary.outcome !== 'done') throw new Error(`bench telemetry: turn ended ${summary.outcome}`);
  };
}

export async function benchTelemetry(opts: { budgetMs?: number; baselineDist?: string } = {}): Promise<TelemetryRow[]> {
  const budgetMs = opts.budgetMs ?? 2000;
  const contextManager = new AsyncLocalStorageContextManager();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(new DropExporter(), { maxQueueSize: 100_000, scheduledDelayMillis: 1000 })] });
  const meterProvider = new MeterProvider({
    readers: [new PeriodicExportingMetricReader({ exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE), exportIntervalMillis: 3_600_000 })],
  });
  /** No OpenTelemetry at all (no context manager: no async hooks). */
  const off = () => {
    trace.disable();
    metrics.disable();
    context.disable();
  };
  /** An application with the SDK registered, calling runTurn inside its own active span. */
  const inApp = (fn: () => Promise<void>) => async () => {
    contextManager.enable();
    context.setGlobalContextManager(contextManager);
    trace.setGlobalTracerProvider(tracerProvider);
    metrics.setGlobalMeterProvider(meterProvider);
    await trace.getTracer('app').startActiveSpan('app.request', async (span) => {
      await fn();
      span.end();
    });
    off();
  };
  const bare = (fn: () => Promise<void>) => async () => {
    off();
    await fn();
  };
  const baseline = opts.baselineDist
    ? {
        run: baselineModule<{ runTurn: RunTurnFn }>(opts.baselineDist, 'src/engine/runTurn').runTurn,
        define: baselineModule<{ defineTool: DefineToolFn }>(opts.baselineDist, 'src/execute/tools').defineTool,
      }
    : undefined;
  const rows: TelemetryRow[] = [];
  for (const [name, calls, argChars] of [
    ['1 call, 100 KB args in ~10 B deltas', 1, 100_000],
    ['20 calls, 200 B args, tools resolve at once', 20, 200],
  ] as const) {
    const chunks = turnChunks(calls, argChars);
    const turn = turnFor(runTurn, defineTool, chunks);
    const quiet = turnFor(runTurn, defineTool, chunks, { enabled: false });
    const sample = { budgetMs, minSamples: 10, warmup: 3 };
    // off vs on, then on vs the same app with the turn's telemetry disabled (what sluice's spans and metrics cost).
    const t = await timeSideBySide(bare(turn), inApp(turn), sample);
    const d = await timeSideBySide(inApp(quiet), inApp(turn), sample);
    const row: TelemetryRow = { turn: name, chunks: chunks.length, spans: calls + 1, offMs: t.current.ms, onMs: t.baseline.ms, onDisabledMs: d.current.ms, onMs2: d.baseline.ms, onDisabledMinMs: d.current.min, onMinMs: d.baseline.min, samples: t.current.samples };
    if (baseline) {
      const old = turnFor(baseline.run, baseline.define, chunks);
      const b = await timeSideBySide(bare(turn), bare(old), sample);
      row.offVsBaselineMs = b.current.ms;
      row.baselineMs = b.baseline.ms;
    }
    rows.push(row);
  }
  off();
  await tracerProvider.shutdown();
  await meterProvider.shutdown();
  return rows;
}

const f = (x: number | undefined, d = 2): string => (x === undefined || !Number.isFinite(x) ? '—' : x.toFixed(d));

export function formatTelemetry(rows: TelemetryRow[]): string {
  const lines = [
    '| turn | chunks | spans | off: CPU ms/turn (µs/chunk) | on: ms/turn | on / off | app OTel only (turn `enabled: false`) | on (same pair) | sluice per span, µs (median; from fastest samples) | off vs baseline build |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    const perSpan = ((r.onMs2 - r.onDisabledMs) * 1000) / r.spans;
    const perSpanMin = ((r.onMinMs - r.onDisabledMinMs) * 1000) / r.spans;
    const vsBase = r.baselineMs ? `${f(r.offVsBaselineMs)} vs ${f(r.baselineMs)} (× ${f(r.offVsBaselineMs! / r.baselineMs, 3)})` : '—';
    lines.push(
      `| ${r.turn} | ${r.chunks} | ${r.spans} | ${f(r.offMs)} (${f((r.offMs * 1000) / r.chunks)}) | ${f(r.onMs)} | × ${f(r.onMs / r.offMs, 3)} | ${f(r.onDisabledMs)} | ${f(r.onMs2)} | ${f(perSpan, 1)}; ${f(perSpanMin, 1)} | ${vsBase} |`,
    );
  }
  return lines.join('\n') + '\n';
}

if (require.main === module) {
  const i = process.argv.indexOf('--baseline-dist');
  const b = process.argv.indexOf('--budget-ms');
  benchTelemetry({ baselineDist: i > 0 ? process.argv[i + 1] : undefined, budgetMs: b > 0 ? Number(process.argv[b + 1]) : undefined }).then(
    (rows) => process.stdout.write(formatTelemetry(rows)),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
