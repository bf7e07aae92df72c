/**
 * Issue 11 measurements (not a test): run with plain node from the repository root.
 *
 *   node -r ts-node/register/transpile-only test/hostile/measure.ts index [INDEX] [raised]
 *     feeds calls at index 0 and INDEX (default 1e9) to a gateway-mode TurnController and prints
 *     the wall time to turn.done; `raised` sets maxCallIndex to 2e9 (else the default limit ends
 *     the turn at once).
 *   /usr/bin/time -v node --expose-gc -r ts-node/register/transpile-only test/hostile/measure.ts arg [MiB] [limitMiB]
 *     feeds a MiB-sized argument (default 200) in 64 KiB fragments (a fresh string each, as from
 *     the wire) and prints the heap/RSS baseline, the peak and the RSS after GC; `limitMiB` raises
 *     maxArgChars and maxTotalChars.
 *
 * `ROOT=/path/to/another/checkout` measures that checkout's controller instead (before/after).
 */
import * as path from 'node:path';
import type { TurnController as Controller } from '../../src/engine/controller';

const root = process.env.ROOT ?? path.resolve(__dirname, '..', '..');
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the checkout to measure is chosen at run time
const { TurnController } = require(path.join(root, 'src', 'engine', 'controller')) as { TurnController: typeof Controller };
const gc = (globalThis as { gc?: () => void }).gc;

async function index(at: number, raised: boolean): Promise<void> {
  const c = new TurnController(raised ? { limits: { maxCallIndex: 2e9 } } : {});
  const t0 = Date.now();
  c.feed({ type: 'call.identity', index: 0, id: 'a', name: 'read_file' });
  c.feed({ type: 'call.fragment', index: 0, text: '{"path":"a"}' });
  c.feed({ type: 'call.identity', index: at, id: 'b', name: 'read_file' });
  c.feed({ type: 'call.fragment', index: at, text: '{"path":"b"}' });
  c.feed({ type: 'finish', reason: 'tool_calls' });
  c.feed({ type: 'stream.end' });
  const s = await c.done;
  console.log(JSON.stringify({ index: at, raised, ms: Date.now() - t0, outcome: s.outcome, error: s.error?.message }));
}

async function arg(mib: number, limitMib: number | undefined): Promise<void> {
  const limit = limitMib === undefined ? undefined : limitMib * 1024 * 1024;
  const c = new TurnController(limit === undefined ? {} : { limits: { maxArgChars: limit, maxTotalChars: limit } });
  const mb = () => Math.round(process.memoryUsage().rss / 1e6);
  const base = mb();
  const piece = 'x'.repeat(64 * 1024);
  const t0 = Date.now();
  let peak = base;
  c.feed({ type: 'call.identity', index: 0, id: 'a', name: 'read_file' });
  c.feed({ type: 'call.fragment', index: 0, text: '{"path":"' });
  const n = (mib * 1024 * 1024) / piece.length;
  for (let i = 0; i < n; i++) {
    c.feed({ type: 'call.fragment', index: 0, text: piece.slice(1) + String.fromCharCode(97 + (i % 26)) });
    if (i % 256 === 0) peak = Math.max(peak, mb());
  }
  c.feed({ type: 'call.fragment', index: 0, text: '"}' });
  c.feed({ type: 'stream.end' });
  const s = await c.done;
  peak = Math.max(peak, mb());
  gc?.();
  await new Promise((r) => setTimeout(r, 100));
  gc?.();
  console.log(
    JSON.stringify({ mib, limitMib, ms: Date.now() - t0, outcome: s.outcome, error: s.error?.message, rssBaseMB: base, rssPeakMB: peak, rssAfterGcMB: mb(), gc: gc !== undefined }),
  );
}

const [what, a, b] = process.argv.slice(2);
if (what === 'index') void index(Number(a ?? 1e9), b === 'raised');
else if (what === 'arg') void arg(Number(a ?? 200), b === undefined ? undefined : Number(b));
else {
  console.error('usage: measure.ts index [INDEX] [raised] | arg [MiB] [limitMiB]');
  process.exitCode = 2;
}
