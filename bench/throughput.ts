/**
 * Throughput (SPEC §9): consuming ONE tool call whose argument JSON is N bytes, streamed as
 * Anthropic SSE in ~10-byte `input_json_delta`s (4–16 bytes, seeded), one SSE event per chunk,
 * the same Uint8Array chunks for every consumer (method: ../shared/research/perf.md §2):
 *
 * - `min-sse`   the floor a correct consumer cannot go below by much: eventsource-parser +
 *               JSON.parse of each event + concatenation + one JSON.parse of the arguments;
 * - `sluice`    the whole sluice path: createStreamReader('anthropic') (SSE decoder + adapter)
 *               → TurnController.feed (ArgBuffer + incremental scanner + call/turn actors), until
 *               the call is released;
 * - `sluice-reader`  the SSE decoder + adapter alone (where the time goes);
 * - `anthropic-sdk`  @anthropic-ai/sdk `messages.stream()` (MessageStream) → finalMessage(), fed
 *               through the client's `fetch` option with an in-memory Response;
 * - `ai-sdk`    AI SDK `streamText` with @ai-sdk/anthropic on the same bytes → `fullStream` until
 *               the `tool-call` part.
 *
 * Sizes 10 KB, 100 KB, 1 MB; shapes `string` (write_file with a big content string) and `nested`
 * (depth-9 records). Every consumer's result is checked against JSON.parse of the arguments.
 *
 * Run: `node dist/bench/throughput.js [--quick] [--json]` after `npm run build`.
 */
import Anthropic from '@anthropic-ai/sdk';
import { createAnthropic } from '@ai-sdk/anthropic';
import { jsonSchema, streamText, tool } from 'ai';
import { createParser } from 'eventsource-parser';
import { TurnController } from '../src/engine/controller';
import { createStreamReader } from '../src/wire';
import { nestedPayload, stringPayload } from './args';
import { prng } from './prng';

export type Consumer = 'min-sse' | 'sluice' | 'sluice-reader' | 'anthropic-sdk' | 'ai-sdk';
export const CONSUMERS: readonly Consumer[] = ['min-sse', 'sluice', 'sluice-reader', 'anthropic-sdk', 'ai-sdk'];

export interface ThroughputRow {
  consumer: Consumer;
  shape: 'string' | 'nested';
  bytes: number;
  deltas: number;
  /** SSE bytes fed (all events). */
  sseBytes: number;
  /** Median CPU ms per call (see timeAsync). */
  msPerCall: number;
  msMin: number;
  /** Median wall ms per call (inflated when the machine is busy). */
  wallMs: number;
  usPerDelta: number;
  samples: number;
  /** msPerCall ÷ min-sse msPerCall at the same size and shape (same run). */
  vsMinSse?: number;
  /**
   * Cost per delta ÷ cost per delta at a tenth of the size (1.0 = linear), from the fastest
   * sample of each cell (least disturbed by other load and by GC timing).
   */
  growthPerDecade?: number;
  /** The same from the medians. */
  growthPerDecadeMedian?: number;
}

export interface ThroughputOptions {
  sizes?: number[];
  shapes?: Array<'string' | 'nested'>;
  consumers?: Consumer[];
  /** Time budget per cell (ms). Default 1500. */
  budgetMs?: number;
  /** Slow consumers (the SDKs) get one sample above this size. Default 200 KB. */
  singleSampleAbove?: number;
}

// ------------------------------------------------------------------------------------ timing

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

/**
 * Median / min CPU time of `fn` (this process's user + system time, from `process.cpuUsage()`),
 * after a warm-up, within a wall-time budget (at least `minSamples`). CPU time, not wall time: the
 * benchmark machine may be shared, and other processes' load inflates wall time but not ours.
 * The median wall time is reported next to it.
 */
export async function timeAsync(
  fn: () => Promise<void> | void,
  opts: { budgetMs: number; minSamples?: number; maxSamples?: number; warmup?: number },
): Promise<{ ms: number; min: number; wallMs: number; samples: number }> {
  const warm = opts.warmup ?? 2;
  for (let i = 0; i < warm; i++) await fn();
  const cpu: number[] = [];
  const wall: number[] = [];
  const end = performance.now() + opts.budgetMs;
  const minS = opts.minSamples ?? 5;
  const maxS = opts.maxSamples ?? 200;
  while (cpu.length < minS || (performance.now() < end && cpu.length < maxS)) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await fn();
    wall.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  return { ms: median(cpu), min: Math.min(...cpu), wallMs: median(wall), samples: cpu.length };
}

// ------------------------------------------------------------------------------------ payload


/** 4–16 code-unit pieces (about 10 on average), seeded; never splits a surrogate pair. */
export function deltas(text: string, seed = 7): string[] {
  const rnd = prng(seed);
  const out: string[] = [];
  let i = 0;
  while (i < text.length) {
    let end = Math.min(text.length, i + 4 + Math.floor(rnd() * 13));
    const c = text.charCodeAt(end - 1);
    if (c >= 0xd800 && c <= 0xdbff && end < text.length) end++;
    out.push(text.slice(i, end));
    i = end;
  }
  return out;
}

const enc = new TextEncoder();
const ev = (name: string, data: unknown): string => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

/** Anthropic Messages SSE for one tool_use call with these argument deltas: one event per chunk. */
export function anthropicChunks(pieces: string[]): Uint8Array[] {
  const out: string[] = [
    ev('message_start', {
      type: 'message_start',
      message: { id: 'msg_bench', type: 'message', role: 'assistant', content: [], model: 'claude-bench', stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } },
    }),
    ev('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_bench', name: 'write_file', input: {} } }),
  ];
  for (const p of pieces) out.push(ev('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: p } }));
  out.push(ev('content_block_stop', { type: 'content_block_stop', index: 0 }));
  out.push(ev('message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 100 } }));
  out.push(ev('message_stop', { type: 'message_stop' }));
  return out.map((s) => enc.encode(s));
}

// ------------------------------------------------------------------------------------ consumers

type Check = (input: unknown) => void;

/**
 * An in-memory `fetch` answering with these chunks, one per pull (as a socket delivers them).
 * Enqueuing all chunks up front instead makes Node's web-stream queue superlinear for the SDKs
 * (measured: @anthropic-ai/sdk 0.7 s → 4.3 s CPU at 1 MB), which would be unfair to them.
 */
function fetchOf(chunks: Uint8Array[]): typeof fetch {
  return (async () => {
    let i = 0;
    return new Response(
      new ReadableStream<Uint8Array>({
        pull(ctl) {
          if (i < chunks.length) ctl.enqueue(chunks[i++]!);
          else ctl.close();
        },
      }),
      { status: 200, headers: { 'content-type': 'text/event-stream', 'request-id': 'req_bench' } },
    );
  }) as typeof fetch;
}

const RUN: Record<Consumer, (chunks: Uint8Array[], check: Check) => Promise<void> | void> = {
  'min-sse'(chunks, check) {
    const dec = new TextDecoder();
    let args = '';
    let input: unknown;
    const parser = createParser({
      onEvent(e) {
        const d = JSON.parse(e.data) as { type: string; delta?: { type: string; partial_json?: string } };
        if (d.type === 'content_block_delta' && d.delta?.type === 'input_json_delta') args += d.delta.partial_json;
        else if (d.type === 'content_block_stop') input = JSON.parse(args);
      },
    });
    for (const c of chunks) parser.feed(dec.decode(c, { stream: true }));
    check(input);
  },
  sluice(chunks, check) {
    const reader = createStreamReader('anthropic');
    const c = new TurnController({ mode: 'gateway' });
    let input: unknown;
    c.events.on('call.released', (t) => (input = t.input));
    for (const ch of chunks) for (const e of reader.write(ch)) c.feed(e);
    for (const e of reader.end()) c.feed(e);
    check(input);
  },
  'sluice-reader'(chunks, check) {
    const reader = createStreamReader('anthropic');
    let n = 0;
    for (const ch of chunks) n += reader.write(ch).length;
    n += reader.end().length;
    if (n < chunks.length - 3) throw new Error('sluice-reader: too few events');
    check(undefined);
  },
  async 'anthropic-sdk'(chunks, check) {
    const client = new Anthropic({ apiKey: 'bench', fetch: fetchOf(chunks), maxRetries: 0 });
    const msg = await client.messages.stream({ model: 'claude-bench', max_tokens: 1024, messages: [{ role: 'user', content: 'x' }] }).finalMessage();
    const block = msg.content[0];
    check(block && block.type === 'tool_use' ? block.input : undefined);
  },
  async 'ai-sdk'(chunks, check) {
    const provider = createAnthropic({ apiKey: 'bench', fetch: fetchOf(chunks) });
    const result = streamText({
      model: provider('claude-bench'),
      prompt: 'x',
      maxRetries: 0,
      tools: { write_file: tool({ inputSchema: jsonSchema<Record<string, unknown>>({ type: 'object' }) }) },
    });
    let input: unknown;
    for await (const part of result.fullStream) {
      if (part.type === 'tool-call') input = part.input;
      else if (part.type === 'error') throw part.error instanceof Error ? part.error : new Error(String(part.error));
    }
    check(input);
  },
};

const SLOW: ReadonlySet<Consumer> = new Set(['anthropic-sdk', 'ai-sdk']);

/**
 * A full garbage collection, also without --expose-gc (the flag can be set at run time; the
 * function is then reachable from a fresh context). Run between cells so one consumer's garbage
 * is not collected on the next one's time.
 */
export function fullGc(): void {
  let gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- node built-ins loaded only when needed
    require('node:v8').setFlagsFromString('--expose-gc');
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    gc = require('node:vm').runInNewContext('gc') as () => void;
    (globalThis as { gc?: () => void }).gc = gc;
  }
  gc();
}

export async function benchThroughput(opts: ThroughputOptions = {}): Promise<ThroughputRow[]> {
  (globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;
  const sizes = opts.sizes ?? [10_000, 100_000, 1_000_000];
  const shapes = opts.shapes ?? ['string', 'nested'];
  const consumers = opts.consumers ?? [...CONSUMERS];
  const budgetMs = opts.budgetMs ?? 1500;
  const singleAbove = opts.singleSampleAbove ?? 200_000;
  const rows: ThroughputRow[] = [];
  for (const shape of shapes) {
    for (const bytes of sizes) {
      const text = shape === 'string' ? stringPayload(bytes) : nestedPayload(bytes);
      const expected = JSON.stringify(JSON.parse(text));
      const pieces = deltas(text);
      const chunks = anthropicChunks(pieces);
      const sseBytes = chunks.reduce((a, c) => a + c.length, 0);
      const row = (consumer: Consumer): Promise<ThroughputRow> => {
        // Correctness is checked on the first run of each cell (outside the timed samples' cost).
        let checked = false;
        const check: Check = (input) => {
          if (consumer === 'sluice-reader' || checked) return;
          checked = true;
          if (JSON.stringify(input) !== expected) throw new Error(`${consumer} returned a wrong input (${shape}, ${bytes} B)`);
        };
        fullGc();
        const slow = SLOW.has(consumer) && bytes > singleAbove;
        return timeAsync(() => RUN[consumer](chunks, check), {
          budgetMs: slow ? 0 : budgetMs,
          // Medians of few samples swing with GC timing: fast consumers get at least 9 at 1 MB.
          minSamples: slow ? 1 : SLOW.has(consumer) ? 3 : bytes >= 500_000 ? 9 : 5,
          warmup: slow ? 0 : 2,
        }).then(({ ms, min, wallMs, samples }) => ({
          consumer,
          shape,
          bytes: text.length,
          deltas: pieces.length,
          sseBytes,
          msPerCall: ms,
          msMin: min,
          wallMs,
          usPerDelta: (ms * 1000) / pieces.length,
          samples,
        }));
      };
      // Interleave: one cell per consumer, in order, so drift hits all of them alike.
      for (const consumer of consumers) {
        rows.push(await row(consumer));
        await new Promise((r) => setImmediate(r));
      }
    }
  }
  for (const r of rows) {
    const floor = rows.find((f) => f.consumer === 'min-sse' && f.shape === r.shape && f.bytes === r.bytes);
    if (floor && r.consumer !== 'min-sse') r.vsMinSse = r.msPerCall / floor.msPerCall;
    const prev = rows.find((f) => f.consumer === r.consumer && f.shape === r.shape && Math.abs(f.bytes * 10 - r.bytes) / r.bytes < 0.05);
    if (prev) {
      r.growthPerDecade = r.msMin / r.deltas / (prev.msMin / prev.deltas);
      r.growthPerDecadeMedian = r.usPerDelta / prev.usPerDelta;
    }
  }
  return rows;
}

const f2 = (x: number | undefined): string => (x === undefined ? '' : x.toFixed(2));
const kb = (b: number): string => (b >= 1_000_000 ? `${(b / 1_000_000).toFixed(0)} MB` : `${Math.round(b / 1000)} KB`);

export function formatThroughput(rows: ThroughputRow[]): string {
  const lines = [
    '| consumer | shape | size | deltas | CPU ms/call | µs/delta | × min-SSE | growth/decade (min) | growth (median) | wall ms | samples |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.consumer} | ${r.shape} | ${kb(r.bytes)} | ${r.deltas} | ${f2(r.msPerCall)} | ${f2(r.usPerDelta)} | ${f2(r.vsMinSse)} | ${f2(r.growthPerDecade)} | ${f2(r.growthPerDecadeMedian)} | ${f2(r.wallMs)} | ${r.samples} |`,
    );
  }
  return lines.join('\n') + '\n';
}

if (require.main === module) {
  const quick = process.argv.includes('--quick');
  const only = process.argv.find((a) => a.startsWith('--consumers='))?.slice('--consumers='.length).split(',') as Consumer[] | undefined;
  const sizes = process.argv.find((a) => a.startsWith('--sizes='))?.slice('--sizes='.length).split(',').map(Number);
  benchThroughput({ ...(quick ? { sizes: [10_000, 100_000], budgetMs: 500 } : {}), ...(only ? { consumers: only } : {}), ...(sizes ? { sizes } : {}) }).then(
    (rows) => process.stdout.write(process.argv.includes('--json') ? JSON.stringify(rows, null, 2) + '\n' : formatThroughput(rows)),
    (err: unknown) => {
      process.stderr.write(`throughput: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
