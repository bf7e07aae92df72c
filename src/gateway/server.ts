/**
 * `sluice serve`: one gateway for Anthropic Messages, OpenAI Responses and OpenAI Chat Completions
 * clients over an OpenAI Chat, OpenAI Responses, Anthropic Messages or Gemini backend.
 *
 * `startGateway` runs the start-up stages in start/, in order: options (`startOptions`: defaults
 * and checks; a configuration error throws before anything starts) → telemetry (the Prometheus
 * registry, the OTel observer) → exchange (backend client, body budget, slots, the exchange
 * context) → workers (the body worker pool) → listeners (the main port; routes.ts answers its
 * requests) → shutdown (`close`, `drain`) → the operations listener (which close() undoes on
 * failure).
 *
 * routes.ts routes a request; the per-request pipeline is exchange.ts, each inbound API is a module
 * in inbound/ (parse → canonical request; OutputEvents → that API's SSE / JSON), each backend API a
 * module in upstream/ (canonical request → backend request), and they meet at the canonical
 * request (canonical.ts) and the canonical event stream (src/wire/events.ts).
 *
 * Routes: `POST /v1/messages` (+ `/v1/messages/count_tokens`, an estimate), `POST /v1/responses`,
 * `POST /v1/chat/completions`, `GET /v1/models` and `/v1/models/{id}` (upstream/models.ts), `GET|HEAD /health`,
 * `/healthz`, `/`. Query strings are ignored (Claude Code sends `?beta=true`). Errors answered
 * before a response is committed use the route's API error shape (Anthropic for /v1/messages and unknown routes, OpenAI for the other two).
 */
import type * as http from 'node:http';
import type { Socket } from 'node:net';
import { createTextAdapter } from '../parsers/adapter';
import type { GatewayMetrics } from './metrics';
import type { OpsListener } from './ops';
import { type RouteContext, routeRequest } from './routes';
import { DEFAULT_DRAIN_MS } from './shutdown';
import { startExchange, type GatewayParts } from './start/exchange';
import { listenMain, listenOps, mainServer, type OpsStageOptions } from './start/listeners';
import { DEFAULT_BACKLOG, DEFAULTS, type GatewayOptions, type GatewayTextAdapterFactory, startOptions, type StartOptions } from './start/options';
import { type Shutdown, type ShutdownParts, shutdownStage } from './start/shutdown';
import { startTelemetry, type Telemetry } from './start/telemetry';
import { startWorkers } from './start/workers';
import { modelsCache } from './upstream/models';

export { completionToChunk } from './upstream/openaiChat';
export type { MalformedCallMode } from './exchange';
export { DEFAULT_BACKLOG, DEFAULT_MAX_BODY_BYTES, inferUpstreamFormat } from './start/options';
export type { GatewayOptions, GatewayTextAdapterFactory } from './start/options';

/**
 * The open-model text parsers (src/parsers) as the gateway's text adapter factory:
 * `createTextAdapter(family, {tools})`. A static import, so it works from the ESM and CommonJS
 * builds alike; the parsers come with `sluice/gateway` (and `sluice/parsers`), never with `sluice`.
 */
export function loadTextAdapterFactory(): GatewayTextAdapterFactory | undefined {
  return (family, ctx) => createTextAdapter(family, { tools: ctx.tools });
}

export interface Gateway {
  /** e.g. http://127.0.0.1:8787 (what ANTHROPIC_BASE_URL should be). */
  url: string;
  port: number;
  server: http.Server;
  /** The operations listener (`ops` option): its URL and port. */
  ops?: { url: string; port: number };
  /** Model requests in flight. */
  active(): number;
  /** Client sockets currently open. */
  openSockets(): number;
  /** Stop accepting, abort requests in flight, close every socket. Idempotent. */
  close(): Promise<void>;
  /**
   * Graceful shutdown: readiness false, stop accepting, let streams in flight finish for up to
   * `deadlineMs` (default 30 s), end the rest with an overloaded_error event, then close().
   * Resolves with the number of requests that had to be ended.
   */
  drain(deadlineMs?: number): Promise<number>;
  /** False while draining (what `/readyz` answers). */
  ready(): boolean;
  /** This gateway's metrics (its own prom-client Registry). */
  metrics: GatewayMetrics;
}

/** Start a gateway: its start-up stages (start/), in order. Rejects with a configuration error or a listen error. */
export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const o = startOptions(options);
  const telemetry = startTelemetry(options);
  const parts = startExchange(options, o, telemetry);
  startWorkers(options, o, parts);
  const rc = routeContext(o, telemetry, parts);
  // The operations thread, once it listens, is told when each request ends (its slot and body
  // memory given back), so its /health agrees with the main port's at once.
  const opsRef: { listener?: OpsListener } = {};
  const main = mainServer(o.limits, telemetry.metrics, (req, res) => routeRequest(rc, req, res), () => opsRef.listener?.beat(), o.drainLimits);
  const { port, url } = await listenMain(main.server, { port: o.opts.port ?? 0, host: o.opts.host, backlog: options.backlog ?? DEFAULT_BACKLOG });
  const shutdown = shutdownStage(shutdownParts(options, main, parts, telemetry.metrics, () => opsRef.listener));
  const ops = await listenOps(opsStage(options, o, telemetry, parts), shutdown.close);
  if (ops) opsRef.listener = ops.listener;
  return gateway(main, url, port, ops, parts, telemetry.metrics, shutdown);
}

/** What the routes read (routes.ts), from the earlier stages. */
function routeContext(o: StartOptions, telemetry: Telemetry, parts: GatewayParts): RouteContext {
  return {
    ctx: parts.ctx,
    auth: o.auth,
    budget: parts.budget,
    slots: parts.slots,
    maxConcurrent: o.opts.maxConcurrent,
    metrics: telemetry.metrics,
    serveMetrics: telemetry.serveMetrics,
    drain: parts.drain,
    inflight: parts.inflight,
    requestLimits: o.requestLimits,
    bodyLimits: { maxBytes: o.opts.maxBodyBytes, maxDepth: o.requestLimits.maxDepth },
    drainLimits: o.drainLimits,
    modelLists: modelsCache(),
  };
}

/** What close() and drain() act on (start/shutdown.ts). */
function shutdownParts(options: GatewayOptions, main: ReturnType<typeof mainServer>, parts: GatewayParts, metrics: GatewayMetrics, ops: () => OpsListener | undefined): ShutdownParts {
  return {
    ...main,
    inflight: parts.inflight,
    drain: parts.drain,
    metrics,
    stopAccepting: () => {
      parts.state.closing = true;
      parts.budget.stop();
      void parts.ctx.bodyWorker?.close();
    },
    closeUpstream: () => parts.upstream.close(),
    ops,
    drainTimeoutMs: options.drainTimeoutMs ?? DEFAULT_DRAIN_MS,
  };
}

/** The operations listener's options (start/listeners.ts), or undefined when `ops` asks for none. */
function opsStage(options: GatewayOptions, o: StartOptions, telemetry: Telemetry, parts: GatewayParts): OpsStageOptions | undefined {
  if (!options.ops) return undefined;
  const { slots, budget, drain, state } = parts;
  return {
    host: options.ops.host ?? DEFAULTS.host,
    port: options.ops.port,
    ...(options.ops.stallMs !== undefined ? { stallMs: options.ops.stallMs } : {}),
    auth: o.opsAuth,
    limits: o.limits,
    maxConcurrent: o.opts.maxConcurrent,
    state: () => ({ active: slots.active, bodyBudgetInUse: budget.inUse, ready: !drain.draining && !state.closing }),
    metrics: telemetry.serveMetrics ? telemetry.metrics : undefined,
    logger: o.logger,
  };
}

/** The running gateway's handle. */
function gateway(
  main: { server: http.Server; sockets: Set<Socket> },
  url: string,
  port: number,
  ops: { url: string; port: number } | undefined,
  parts: GatewayParts,
  metrics: GatewayMetrics,
  shutdown: Shutdown,
): Gateway {
  return {
    url,
    port,
    server: main.server,
    ...(ops ? { ops: { url: ops.url, port: ops.port } } : {}),
    active: () => parts.slots.active,
    openSockets: () => main.sockets.size,
    close: shutdown.close,
    metrics,
    ready: () => !parts.drain.draining && !parts.state.closing,
    drain: shutdown.drain,
  };
}
