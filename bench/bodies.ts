/**
 * What one large request body costs a real `sluice serve` child (docs/limits.md "Memory budget"):
 *
 *   npx ts-node --transpile-only bench/bodies.ts
 *
 * 1. one valid body of 4 / 16 / 31 MiB held while a slow upstream answers (a budget large enough
 *    not to interfere), translated on the event loop (--body-worker off) and in the body worker
 *    (the default), side by side: worst event-loop delay, slowest /health, peak RSS over idle;
 * 2. a 16 MiB body nested 8 million deep: time to the 400 and the child's worst event-loop delay;
 * 4. eight 31 MiB bodies at once under the default budget: statuses, peak RSS;
 * 5. idle RSS after the burst (every second, up to 20 s).
 * The child reports its own event loop (test/gateway/hostile/loopProbe.ts): the worst event-loop
 * delay (wall time: on a loaded machine mostly the main thread waiting for a core) and the worst
 * CPU time the main thread spent without reaching its timers ("held": the gateway's own work).
 * With SLUICE_BENCH_CLI=<built main.js> (e.g. dist/src/cli/main.js after `npm run build`) the child
 * is the built CLI (no ts-node: a start-up heap like production; the probe is preloaded transpiled). SLUICE_BENCH_SPIN=<n> runs n busy loops (other processes) during rows 1–3, so
 * that the modes are compared under the same CPU contention; SLUICE_BENCH_MODES=off,512k picks the
 * --body-worker modes of rows 1–3; SLUICE_BENCH_ROWS=1 stops after them.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { loopProbeFile } from '../test/gateway/hostile/loopProbeFile';
import { startHostileUpstream } from '../test/gateway/hostile/upstream';
import { type ChildGateway, post, sampleRss, spawnGateway, watchHealth } from '../test/gateway/hostile/clients';

const MiB = 1024 * 1024;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const mb = (n: number): string => (n / MiB).toFixed(0) + ' MiB';

function body(bytes: number, model: string): Buffer {
  const head = `{"model":"${model}","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"`;
  const tail = '"}]}';
  return Buffer.from(head + 'x'.repeat(bytes - head.length - tail.length) + tail);
}

const CLI = process.env.SLUICE_BENCH_CLI ? path.resolve(process.env.SLUICE_BENCH_CLI) : undefined;

interface Loop {
  /** Worst event-loop delay (ms, wall time). */
  maxMs: number;
  /** Worst main-thread CPU between two timer ticks (ms); NaN where the probe cannot read it. */
  heldMs: number;
}

/** The child's worst loop delay and held CPU since the mark. */
function loopMax(gw: ChildGateway, from: number): Loop {
  const r: Loop = { maxMs: 0, heldMs: NaN };
  for (const l of gw.stderr.slice(from)) {
    const m = /^sluice-loop-probe (\{.*\})$/.exec(l);
    if (!m) continue;
    const p = JSON.parse(m[1]!) as { maxMs: number; heldMs?: number };
    r.maxMs = Math.max(r.maxMs, p.maxMs);
    if (p.heldMs !== undefined) r.heldMs = Math.max(Number.isNaN(r.heldMs) ? 0 : r.heldMs, p.heldMs);
  }
  return r;
}

/** A mark for `loopMax`, after the probe's next line (what came before the mark is not counted). */
async function loopMark(gw: ChildGateway): Promise<number> {
  await sleep(250);
  return gw.stderr.length;
}

const show = (l: Loop): string => `worst loop delay ${l.maxMs} ms (held ${l.heldMs} ms CPU)`;

/** `n` busy loops in processes of their own (CPU contention like a loaded machine). */
function spin(n: number): () => void {
  const ps: ChildProcess[] = Array.from({ length: n }, () => spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }));
  return () => ps.forEach((p) => p.kill('SIGKILL'));
}

async function settle(gw: ChildGateway): Promise<number> {
  await sleep(1500);
  return gw.rss() ?? 0;
}

/** Row 2: a 16 MiB body nested 8 million deep. */
async function deepRow(gw: ChildGateway): Promise<void> {
  const depth = 8_000_000;
  const deep = Buffer.from('{"model":"ok","messages":' + '['.repeat(depth) + ']'.repeat(depth) + '}');
  const mark = await loopMark(gw);
  const t0 = performance.now();
  const r = await post(gw.url, '/v1/messages', deep, { timeoutMs: 60_000 });
  await sleep(500);
  console.log(`${mb(deep.length)} nested ${depth} deep: status ${r.status} after ${(performance.now() - t0).toFixed(0)} ms, ${show(loopMax(gw, mark))}`);
}

async function main(): Promise<void> {
  const up = await startHostileUpstream();
  const probe = { preload: [loopProbeFile(CLI !== undefined)], ...(CLI ? { cli: CLI } : {}) };
  const spinners = Number(process.env.SLUICE_BENCH_SPIN ?? 0);
  // SLUICE_BENCH_ROWS: `1` rows 1–3 only, `burst` rows 4–5 only.
  const rows = process.env.SLUICE_BENCH_ROWS ?? 'all';
  const modes = rows === 'burst' ? [] : (process.env.SLUICE_BENCH_MODES ?? 'off,512k').split(',');
  const args = ['--upstream', up.url, '--port', '0', '--log-level', 'warn'];

  // 1–3 with a budget that never refuses, side by side: bodies translated on the event loop
  // (--body-worker off) and in the body worker (the default).
  let gw!: ChildGateway;
  let startup = 0;
  for (const mode of modes) {
    if (gw) await gw.stop();
    gw = await spawnGateway([...args, '--body-memory', '8g', '--body-worker', mode], {}, probe);
    await post(gw.url, '/v1/messages', body(1024, 'ok'));
    await post(gw.url, '/v1/messages', body(MiB, 'ok')); // warm-up: the worker (and, from sources, its bundle)
    startup = await settle(gw);
    const unspin = spin(spinners);
    console.log(`--body-worker ${mode}: start-up RSS ${mb(startup)}${spinners ? `, ${spinners} busy loops` : ''}`);
    {
      // The floor on this machine: the same measurement with no request at all.
      const health = watchHealth(gw.url, 50);
      const mark = await loopMark(gw);
      await sleep(3000);
      const h = await health.stop();
      console.log(`  idle 3 s: ${show(loopMax(gw, mark))}, slowest /health ${h.maxMs.toFixed(0)} ms (${h.polls} polls, ${h.failures} failed)`);
    }
    for (const size of [4 * MiB, 16 * MiB, 31 * MiB]) {
      const idle = await settle(gw);
      const s = sampleRss(gw, 20);
      const health = watchHealth(gw.url, 50);
      const mark = await loopMark(gw);
      const r = await post(gw.url, '/v1/messages', body(size, 'ok-slow:300'), { timeoutMs: 120_000 });
      await sleep(300);
      const peak = s.stop();
      const h = await health.stop();
      console.log(
        `  one ${mb(size)} body: status ${r.status}, ${show(loopMax(gw, mark))}, slowest /health ${h.maxMs.toFixed(0)} ms (${h.polls} polls, ${h.failures} failed), ` +
          `peak RSS +${mb(peak - idle)} (${((peak - idle) / size).toFixed(1)}x the body), load ${os.loadavg()[0].toFixed(1)}`,
      );
    }
    unspin();
  }
  if (rows === '1') {
    await gw.stop();
    await up.close();
    return;
  }
  if (rows !== 'burst') await deepRow(gw);
  await gw?.stop();


  // 4–5 under the default budget.
  gw = await spawnGateway(args, {}, probe);
  await post(gw.url, '/v1/messages', body(1024, 'ok'));
  const base = await settle(gw);
  const big = body(31 * MiB, 'ok-slow:300');
  const s = sampleRss(gw, 20);
  const mark = await loopMark(gw);
  const t0 = performance.now();
  const rs = await Promise.all(Array.from({ length: 8 }, () => post(gw.url, '/v1/messages', big, { timeoutMs: 120_000 })));
  const peak = s.stop();
  const counts = new Map<number, number>();
  for (const x of rs) counts.set(x.status, (counts.get(x.status) ?? 0) + 1);
  console.log(
    `eight 31 MiB bodies at once (default budget): ${[...counts].map(([k, v]) => `${v}× ${k}`).join(', ')} in ${(performance.now() - t0).toFixed(0)} ms; ` +
      `peak RSS ${mb(peak)} (idle ${mb(base)}), ${show(loopMax(gw, mark))}`,
  );
  const after: string[] = [];
  for (let i = 1; i <= 20; i++) {
    await sleep(1000);
    if (i % 4 === 0 || i === 1) after.push(`${i} s: ${mb(gw.rss() ?? 0)}`);
  }
  console.log(`RSS after the burst: ${after.join(', ')} (bound: 2× start-up + 100 MiB = ${mb(2 * base + 100 * MiB)})`);
  const r = await post(gw.url, '/v1/messages', body(1024, 'ok'));
  console.log(`a small request afterwards: ${r.status}`);
  await gw.stop();
  await up.close();
}

void main();
