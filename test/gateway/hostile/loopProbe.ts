/**
 * Preloaded into a child gateway (`spawnGateway(…, {}, { preload: [this file] })`): reports the
 * process's own event-loop delay (perf_hooks monitorEventLoopDelay, 10 ms resolution) on stderr
 * every 200 ms as `sluice-loop-probe {"maxMs":…}`, the maximum since the previous line.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';

// The gateway's own loop only (a worker thread that inherited this preload has a loop of its own).
const h = monitorEventLoopDelay({ resolution: 10 });
if (isMainThread) h.enable();
if (isMainThread) setInterval(() => {
  process.stderr.write(`sluice-loop-probe ${JSON.stringify({ maxMs: Math.round(h.max / 1e4) / 100 })}\n`);
  h.reset();
}, 200).unref();
