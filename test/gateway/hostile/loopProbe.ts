/**
 * Preloaded into a child gateway (`spawnGateway(…, {}, { preload: [this file] })`, with or without
 * `cli`): a 5 ms timer in the gateway's main thread reports on stderr every 200 ms
 * `sluice-loop-probe {"maxMs":…,"heldMs":…}`, the maxima since the previous line:
 *
 * - `maxMs`: the event-loop delay, the wall time between two ticks beyond the 5 ms. It includes
 *   the time the main thread waited for a core: at load 8–11 on 2 cores a 160 ms delay was 4 ms of
 *   the thread's CPU and 158 ms in the run queue (/proc/thread-self/schedstat), idle or not.
 * - `heldMs` (Linux): the CPU time the main thread used between two ticks (schedstat's run time):
 *   how long the gateway's own work kept the loop from its timers, without the run-queue wait —
 *   what one request costs the loop, whatever the machine's load. Absent where
 *   /proc/thread-self/schedstat cannot be read.
 *
 * (Not perf_hooks monitorEventLoopDelay: its `reset()` also forgets the last tick's time, so a
 * block that ends just before a report is never recorded.)
 */
import * as fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';

const TICK_MS = 5;

/** The calling thread's CPU time so far (ns), or undefined where the kernel does not say. */
function threadCpuNs(): number | undefined {
  try {
    return Number(fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);
  } catch {
    return undefined;
  }
}

// The gateway's own loop only (a worker thread that inherited this preload has a loop of its own).
if (isMainThread) {
  let wall = performance.now();
  let cpu = threadCpuNs();
  let maxMs = 0;
  let heldNs = 0;
  setInterval(() => {
    const now = performance.now();
    maxMs = Math.max(maxMs, now - wall - TICK_MS);
    wall = now;
    if (cpu === undefined) return;
    const c = threadCpuNs()!;
    heldNs = Math.max(heldNs, c - cpu);
    cpu = c;
  }, TICK_MS).unref();
  setInterval(() => {
    const line: { maxMs: number; heldMs?: number } = { maxMs: Math.round(Math.max(0, maxMs) * 100) / 100 };
    if (cpu !== undefined) line.heldMs = Math.round(heldNs / 1e4) / 100;
    process.stderr.write(`sluice-loop-probe ${JSON.stringify(line)}\n`);
    maxMs = 0;
    heldNs = 0;
  }, 200).unref();
}
