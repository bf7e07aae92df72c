/**
 * Micro-benchmark of the argument path: ArgBuffer (incremental JsonScanner + concatenation) plus
 * the one final JSON.parse, consuming one call's argument text in ~10-byte fragments.
 *
 * Shapes (as in ../shared/research/perf.md):
 * - `string`: a write_file call, `{"path":…,"content":"<one big string>"}` (source-like text with
 *   \n and \" escapes and some non-ASCII);
 * - `nested`: a list of depth-9 records with many small keys, numbers, booleans and short strings.
 *
 * Reported per size (10 KB, 100 KB, 1 MB): median ms per call, µs per fragment, and the growth
 * ratio per decade (µs/fragment at this size ÷ µs/fragment at a tenth of it; 1.0 = linear).
 * Reference rows in the same run: `floor` (string += and one JSON.parse, no scanner),
 * `scanner` (the scanner alone, same fragments) and `append:*` (the storage choice for ArgBuffer).
 *
 * Run: `npx ts-node bench/args.ts`, or `node dist/bench/args.js` after `npm run build`
 * (`node --expose-gc dist/bench/args.js` starts every cell on a collected heap).
 * No timed assertions live in the unit tests; this is the only place these numbers come from.
 */
import { ArgBuffer } from '../src/args/buffer';
import { JsonScanner } from '../src/args/scanner';
import { prng } from './prng';

export interface Row {
  /** What was measured: `argbuffer`, `scanner`, `floor`, `append:concat`, `append:array-join`. */
  bench: string;
  shape: 'string' | 'nested' | 'fragments';
  /** Argument size in bytes (UTF-16 code units; the payloads are almost all ASCII). */
  bytes: number;
  fragments: number;
  /** Median wall time for one call. */
  msPerCall: number;
  /** Fastest call (less sensitive to other load on the machine and to GC pauses). */
  msMin: number;
  usPerFragment: number;
  /** usPerFragment ÷ usPerFragment of the same bench at a tenth of the size (undefined for the smallest). */
  growthPerDecade?: number;
  /** The same ratio computed from the fastest calls (steadier on a busy machine). */
  growthPerDecadeMin?: number;
  /** msPerCall ÷ the `floor` bench's msPerCall for the same shape and size (same run). */
  vsFloor?: number;
  /** Timed repetitions behind the median. */
  samples: number;
}

export interface BenchArgsOptions {
  /** Sizes in bytes. Default 10 KB, 100 KB, 1 MB. */
  sizes?: number[];
  /** Fragment length in code units. Default 10. */
  fragment?: number;
  /** Time budget per (bench, size) cell in ms. Default 400. */
  budgetMs?: number;
}

// ---------------------------------------------------------------------------------------------
// Payloads (deterministic).


const WORDS = [
  'const',
  'value',
  'return',
  'function',
  'if',
  'else',
  '"quoted"',
  'naïve',
  '=>',
  '{',
  '}',
  'x + 1;',
];

export function stringPayload(bytes: number): string {
  const rnd = prng(1);
  const head = '{"path":"src/generated/file.ts","content":"';
  const tail = '"}';
  let content = '';
  // Build the JSON-escaped content directly, line by line, until the target size.
  const target = bytes - head.length - tail.length;
  while (content.length < target) {
    let line = '  ';
    const n = 4 + Math.floor(rnd() * 8);
    for (let i = 0; i < n; i++) line += WORDS[Math.floor(rnd() * WORDS.length)] + ' ';
    content += JSON.stringify(line).slice(1, -1) + '\\n';
  }
  content = content.slice(0, target);
  // Do not end inside an escape sequence.
  while (content.endsWith('\\') && !content.endsWith('\\\\')) content = content.slice(0, -1);
  return head + content + tail;
}

export function nestedPayload(bytes: number): string {
  const rnd = prng(2);
  const record = (depth: number): Record<string, unknown> => {
    const o: Record<string, unknown> = {};
    const keys = 3 + Math.floor(rnd() * 4);
    for (let k = 0; k < keys; k++) {
      const r = rnd();
      o['k' + k] =
        r < 0.3 ? Math.floor(rnd() * 100000) : r < 0.45 ? rnd() * 1000 : r < 0.55 ? rnd() < 0.5 : 'v' + k;
    }
    if (depth < 9) o.child = record(depth + 1);
    return o;
  };
  const items: string[] = [];
  let size = '{"items":[]}'.length;
  while (size < bytes) {
    const s = JSON.stringify(record(1));
    items.push(s);
    size += s.length + 1;
  }
  return '{"items":[' + items.join(',') + ']}';
}

function split(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Timing.

let sink = 0; // keeps results observable so the work is not optimised away

/** Start each cell with a clean heap when node runs with --expose-gc (optional). */
function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc) gc();
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function time(fn: () => void, budgetMs: number): { ms: number; min: number; samples: number } {
  // Warm-up: at least 3 runs or ~20% of the budget.
  const warmEnd = performance.now() + budgetMs * 0.2;
  for (let i = 0; i < 3 || performance.now() < warmEnd; i++) fn();
  const samples: number[] = [];
  const end = performance.now() + budgetMs;
  while (samples.length < 5 || (performance.now() < end && samples.length < 200)) {
    const t0 = performance.now();
    fn();
    samples.push(performance.now() - t0);
  }
  return { ms: median(samples), min: Math.min(...samples), samples: samples.length };
}

const consumers: Record<string, (frags: string[]) => void> = {
  argbuffer(frags) {
    const b = new ArgBuffer();
    for (let i = 0; i < frags.length; i++) b.append(frags[i]);
    const r = b.parse();
    if (r.kind !== 'object') throw new Error(`bench payload did not parse: ${r.kind}`);
    sink += b.length;
  },
  scanner(frags) {
    const s = new JsonScanner();
    for (let i = 0; i < frags.length; i++) s.push(frags[i]);
    if (s.status !== 'closed') throw new Error(`bench payload not closed: ${s.status}`);
    sink += s.length;
  },
  floor(frags) {
    let t = '';
    for (let i = 0; i < frags.length; i++) t += frags[i];
    sink += (JSON.parse(t) as object) ? t.length : 0;
  },
};

/** Storage strategies for ArgBuffer (why it uses +=): append, then read the whole text once. */
const appendStrategies: Record<string, (frags: string[]) => void> = {
  'append:concat'(frags) {
    let t = '';
    for (let i = 0; i < frags.length; i++) t += frags[i];
    sink += t.charCodeAt(t.length >> 1); // forces one flatten
  },
  'append:array-join'(frags) {
    const a: string[] = [];
    for (let i = 0; i < frags.length; i++) a.push(frags[i]);
    const t = a.join('');
    sink += t.charCodeAt(t.length >> 1);
  },
};

export async function benchArgs(opts: BenchArgsOptions = {}): Promise<Row[]> {
  const sizes = opts.sizes ?? [10_000, 100_000, 1_000_000];
  const fragment = opts.fragment ?? 10;
  const budgetMs = opts.budgetMs ?? 400;
  const rows: Row[] = [];

  for (const shape of ['string', 'nested'] as const) {
    for (const bench of Object.keys(consumers)) {
      let prev: Row | undefined;
      for (const bytes of sizes) {
        const text = shape === 'string' ? stringPayload(bytes) : nestedPayload(bytes);
        const frags = split(text, fragment);
        const consume = consumers[bench];
        collectGarbage();
        const { ms, min, samples } = time(() => consume(frags), budgetMs);
        const row: Row = {
          bench,
          shape,
          bytes: text.length,
          fragments: frags.length,
          msPerCall: ms,
          msMin: min,
          usPerFragment: (ms * 1000) / frags.length,
          samples,
        };
        if (prev && prev.bytes > 0) {
          row.growthPerDecade = row.usPerFragment / prev.usPerFragment;
          row.growthPerDecadeMin = row.msMin / row.fragments / (prev.msMin / prev.fragments);
        }
        rows.push(row);
        prev = row;
        await new Promise((r) => setImmediate(r)); // let the event loop breathe between cells
      }
    }
  }

  for (const r of rows) {
    const floor = rows.find((f) => f.bench === 'floor' && f.shape === r.shape && f.bytes === r.bytes);
    if (floor && r.bench !== 'floor') r.vsFloor = r.msPerCall / floor.msPerCall;
  }

  // Storage choice: 100k fragments of 10 bytes.
  const frags = split(stringPayload(1_000_000), fragment);
  for (const [bench, fn] of Object.entries(appendStrategies)) {
    collectGarbage();
    const { ms, min, samples } = time(() => fn(frags), budgetMs);
    rows.push({
      bench,
      shape: 'fragments',
      bytes: frags.length * fragment,
      fragments: frags.length,
      msPerCall: ms,
      msMin: min,
      usPerFragment: (ms * 1000) / frags.length,
      samples,
    });
  }
  if (sink === -1) console.log(sink);
  return rows;
}

const fmt = (x: number | undefined): string => (x === undefined ? '' : x.toFixed(2));

export function formatRows(rows: Row[]): string {
  const head =
    '| bench | shape | bytes | fragments | ms/call (median) | ms/call (min) | µs/fragment | growth/decade | growth/decade (min) | × floor | n |';
  const sep = '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|';
  const lines = rows.map(
    (r) =>
      `| ${r.bench} | ${r.shape} | ${r.bytes} | ${r.fragments} | ${r.msPerCall.toFixed(2)} | ${r.msMin.toFixed(2)} | ` +
      `${r.usPerFragment.toFixed(3)} | ${fmt(r.growthPerDecade)} | ${fmt(r.growthPerDecadeMin)} | ${fmt(r.vsFloor)} | ${r.samples} |`,
  );
  return [head, sep, ...lines].join('\n');
}

if (require.main === module) {
  benchArgs().then(
    (rows) => {
      console.log(`node ${process.version}, ${process.arch}`);
      console.log(formatRows(rows));
    },
    (err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    },
  );
}
