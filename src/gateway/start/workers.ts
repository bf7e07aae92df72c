/**
 * startGateway's worker stage (server.ts): bodies of at least `bodyWorker.aboveBytes` are parsed,
 * validated and translated on a small pool of worker threads (worker/pool.ts; its threads start on
 * first use), so one large request never blocks the event loop. `bodyWorker: false`: none.
 */
import { BodyWorkerPool } from '../worker/pool';
import type { GatewayParts } from './exchange';
import type { GatewayOptions, StartOptions } from './options';

export function startWorkers(options: GatewayOptions, o: StartOptions, parts: GatewayParts): void {
  if (options.bodyWorker === false) return;
  const { ctx } = parts;
  ctx.bodyWorker = new BodyWorkerPool(
    { upstreamFormat: o.upstreamFormat.name, models: ctx.models, bodyOptions: ctx.bodyOptions, limits: o.requestLimits },
    parts.budget,
    o.logger,
    o.opts.maxBodyBytes,
    options.bodyWorker,
  );
}
