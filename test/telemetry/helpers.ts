import { context, type HrTime, metrics, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { AggregationTemporality, type DataPoint, type Histogram, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { z } from 'zod';
import { defineTool } from '../../src/execute/tools';

/** The real OpenTelemetry SDK, registered globally: async-hooks context, in-memory spans and metrics. */
export function registerOtel() {
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  context.setGlobalContextManager(contextManager);
  trace.setGlobalTracerProvider(tracerProvider);
  metrics.setGlobalMeterProvider(meterProvider);
  return {
    spans,
    tracerProvider,
    /** Every data point of one metric (cumulative since registration). */
    async points(name: string): Promise<Array<DataPoint<number | Histogram>>> {
      await reader.forceFlush();
      const all = metricExporter.getMetrics();
      const last = all[all.length - 1];
      const out: Array<DataPoint<number | Histogram>> = [];
      for (const sm of last?.scopeMetrics ?? []) for (const m of sm.metrics) if (m.descriptor.name === name) out.push(...(m.dataPoints as Array<DataPoint<number | Histogram>>));
      return out;
    },
    async shutdown() {
      await meterProvider.shutdown();
      await tracerProvider.shutdown();
      trace.disable();
      metrics.disable();
      context.disable();
    },
  };
}

export const hrMs = (t: HrTime): number => t[0] * 1000 + t[1] / 1e6;
export const parentOf = (s: ReadableSpan): string | undefined => s.parentSpanContext?.spanId;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Chunk = { delay: number; data: unknown };

const base = { id: 'x', object: 'chat.completion.chunk', created: 0, model: 'test-model' };
const chunk = (delta: unknown, finish_reason: string | null = null) => ({ ...base, choices: [{ index: 0, delta, finish_reason }] });

/** OpenAI-chat chunks: each call written in two halves `gap` ms apart, then `tail` ms to the finish. */
export function chatTurn(calls: Array<{ name: string; args: Record<string, unknown> }>, opts: { gap?: number; tail?: number; usage?: boolean } = {}): Chunk[] {
  const gap = opts.gap ?? 5;
  const out: Chunk[] = [{ delay: 0, data: chunk({ role: 'assistant', content: 'Working on it.' }) }];
  calls.forEach((c, i) => {
    out.push({ delay: gap, data: chunk({ tool_calls: [{ index: i, id: `call_${i}`, type: 'function', function: { name: c.name, arguments: '' } }] }) });
    const json = JSON.stringify(c.args);
    const mid = Math.floor(json.length / 2);
    out.push({ delay: gap, data: chunk({ tool_calls: [{ index: i, function: { arguments: json.slice(0, mid) } }] }) });
    out.push({ delay: gap, data: chunk({ tool_calls: [{ index: i, function: { arguments: json.slice(mid) } }] }) });
  });
  out.push({ delay: opts.tail ?? 20, data: chunk({}, 'tool_calls') });
  if (opts.usage) out.push({ delay: 0, data: { ...base, choices: [], usage: { prompt_tokens: 120, completion_tokens: 34, total_tokens: 154 } } });
  out.push({ delay: 0, data: '[DONE]' });
  return out;
}

export async function* play(chunks: Chunk[]) {
  for (const c of chunks) {
    await sleep(c.delay);
    yield c.data;
  }
}

/**
 * One timed stream delivered to several consumers at the same moments (one timer loop): two turns
 * run side by side on literally the same stream, so a delayed timer delays both alike.
 */
export function tee(chunks: Chunk[], n: number): Array<AsyncIterable<unknown>> {
  const queues = Array.from({ length: n }, () => ({ items: [] as unknown[], done: false, wake: undefined as (() => void) | undefined }));
  void (async () => {
    for (const c of chunks) {
      await sleep(c.delay);
      for (const q of queues) {
        q.items.push(c.data);
        q.wake?.();
      }
    }
    for (const q of queues) {
      q.done = true;
      q.wake?.();
    }
  })();
  return queues.map((q) => ({
    async *[Symbol.asyncIterator]() {
      for (;;) {
        if (q.items.length > 0) yield q.items.shift();
        else if (q.done) return;
        else await new Promise<void>((r) => (q.wake = r));
      }
    },
  }));
}

/** read_file (safe, `ms` long, opens a span of its own), edit_file (unsafe, 5 ms), fail (safe, throws). */
export function makeTools(ms = 30) {
  const read = defineTool({
    name: 'read_file',
    kind: 'read',
    input: z.object({ path: z.string() }),
    run: async ({ path }, { signal }) => {
      trace.getTracer('test-tool').startActiveSpan('tool.inner', (s) => s.end());
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(resolve, ms);
        signal.addEventListener('abort', () => {
          clearTimeout(t);
          reject(new Error('aborted'));
        });
      });
      return `contents of ${path}`;
    },
  });
  const edit = defineTool({
    name: 'edit_file',
    kind: 'edit',
    input: z.object({ path: z.string(), text: z.string() }),
    run: async ({ path }) => {
      await sleep(5);
      return `edited ${path}`;
    },
  });
  const fail = defineTool({
    name: 'fail',
    kind: 'read',
    input: z.object({}),
    run: () => {
      throw new Error('boom');
    },
  });
  return [read, edit, fail];
}
