/**
 * `GET /metrics` for the gateway: Prometheus text format through prom-client, one Registry per
 * gateway (never prom-client's global registry, so two gateways in one process — tests, benches,
 * an embedder — keep separate counts).
 *
 * What is measured (names are stable; docs/gateway.md "Operations" lists them):
 * - requests by route and status, client errors by Anthropic error type, upstream errors by type;
 * - internal errors (an exception inside one request, contained to it) by pipeline stage;
 * - failed OpenTelemetry exports by signal (exportWatch.ts);
 * - streams in flight and open client connections;
 * - per released tool call: its head start (how long before the end of the backend stream the
 *   client had the call) and its release lag (completion evidence → release);
 * - the process defaults (RSS, heap, CPU, event-loop lag, open file descriptors).
 *
 * Nothing here sees a message, an argument or a key: labels are routes, statuses and error types.
 */
import type { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Emitter } from 'mitt';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ControllerEvents } from '../engine/controller';

/** Seconds; head starts reach tens of seconds on long turns, lags are milliseconds. */
const HEAD_START_BUCKETS = [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120];
const LAG_BUCKETS = [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1, 5];

export interface GatewayMetricsOptions {
  /** Include prom-client's process metrics (RSS, CPU, fds, event loop). Default true. */
  processMetrics?: boolean;
  /** Metric name prefix. Default `sluice_gateway_`. */
  prefix?: string;
}

export class GatewayMetrics {
  readonly registry = new Registry();
  readonly requests: Counter<'route' | 'status'>;
  readonly clientErrors: Counter<'type'>;
  readonly upstreamErrors: Counter<'type'>;
  readonly backendEnds: Counter<'end'>;
  readonly internalErrors: Counter<'stage'>;
  readonly otlpExportFailures: Counter<'signal'>;
  readonly activeStreams: Gauge;
  readonly connections: Gauge;
  readonly rejectedConnections: Counter;
  readonly toolUses: Counter;
  readonly headStart: Histogram;
  readonly releaseLag: Histogram;
  readonly draining: Gauge;

  constructor(options: GatewayMetricsOptions = {}) {
    const p = options.prefix ?? 'sluice_gateway_';
    const registers = [this.registry];
    this.requests = new Counter({
      name: `${p}requests_total`,
      help: 'Finished HTTP requests by route and response status (499: the client went away).',
      labelNames: ['route', 'status'],
      registers,
    });
    this.clientErrors = new Counter({
      name: `${p}client_errors_total`,
      help: 'Requests refused because of the client (4xx, 529 overload), by Anthropic error type.',
      labelNames: ['type'],
      registers,
    });
    this.upstreamErrors = new Counter({
      name: `${p}upstream_errors_total`,
      help: 'Backend failures (refused, timeout, HTTP error, error chunk, reset, not SSE), by error type.',
      labelNames: ['type'],
      registers,
    });
    this.backendEnds = new Counter({
      name: `${p}backend_stream_ends_total`,
      help: 'Backend streams by how they ended (SPEC §12): finished (terminal signal), truncated (ended without it), bad_stream (not an event stream of its format), error.',
      labelNames: ['end'],
      registers,
    });
    this.internalErrors = new Counter({
      name: `${p}internal_errors_total`,
      help: 'Exceptions inside one request (a bug in a stage, an encoder or a listener), each contained to its request, by stage: parse, open, decode, control, encode, finish (a model request), route (any other route).',
      labelNames: ['stage'],
      registers,
    });
    this.otlpExportFailures = new Counter({
      name: `${p}otlp_export_failures_total`,
      help: 'OpenTelemetry exports that failed (collector down, an error status, no answer in time), by signal: traces, metrics.',
      labelNames: ['signal'],
      registers,
    });
    this.activeStreams = new Gauge({ name: `${p}active_streams`, help: 'Model requests in flight (holding a concurrency slot).', registers });
    this.connections = new Gauge({ name: `${p}open_connections`, help: 'Open client TCP connections.', registers });
    this.rejectedConnections = new Counter({
      name: `${p}rejected_connections_total`,
      help: 'Client connections closed at once because the connection cap was reached.',
      registers,
    });
    this.toolUses = new Counter({ name: `${p}tool_uses_total`, help: 'Tool calls released to clients.', registers });
    this.headStart = new Histogram({
      name: `${p}tool_head_start_seconds`,
      help: 'Per released tool call: time between its release to the client and the end of the backend stream.',
      buckets: HEAD_START_BUCKETS,
      registers,
    });
    this.releaseLag = new Histogram({
      name: `${p}tool_release_lag_seconds`,
      help: 'Per released tool call: time between its completion (evidence or inference) and its release.',
      buckets: LAG_BUCKETS,
      registers,
    });
    this.draining = new Gauge({ name: `${p}draining`, help: '1 while the gateway drains for shutdown.', registers });
    if (options.processMetrics !== false) collectDefaultMetrics({ register: this.registry });
  }

  /** One finished request. Status ≥ 400 (other than upstream-caused 5xx) counts as a client error of `type`. */
  request(route: string, status: number, errorType?: string): void {
    this.requests.inc({ route, status: String(status) });
    if (errorType !== undefined && isClientError(status)) this.clientErrors.inc({ type: errorType });
  }

  internalError(stage: string): void {
    this.internalErrors.inc({ stage });
  }

  upstreamError(type: string): void {
    this.upstreamErrors.inc({ type });
  }

  /** One backend stream's end, by how it ended (`finished`, `truncated`, `bad_stream`, `error`). */
  backendEnd(end: string): void {
    this.backendEnds.inc({ end });
  }

  /**
   * Watch one turn's controller: every released call's release lag now, its head start when the
   * stream ends normally (a failed stream gives no head start: the client never got the end).
   */
  observeTurn(events: Emitter<ControllerEvents>): void {
    const released: number[] = [];
    events.on('call.released', (t) => {
      released.push(performance.now());
      this.toolUses.inc();
      if (t.completeMs !== undefined && t.releasedMs !== undefined)
        this.releaseLag.observe(Math.max(0, t.releasedMs - t.completeMs) / 1000);
    });
    events.on('output', (e) => {
      if (e.type !== 'end') return;
      const end = performance.now();
      for (const r of released) this.headStart.observe(Math.max(0, end - r) / 1000);
      released.length = 0;
    });
  }

  /** Answer a scrape. */
  async serve(res: ServerResponse, head = false): Promise<void> {
    const text = await this.registry.metrics();
    if (res.headersSent || res.destroyed) return;
    res.writeHead(200, { 'content-type': this.registry.contentType, 'content-length': String(Buffer.byteLength(text)) });
    res.end(head ? undefined : text);
  }
}

/** 4xx and the overload answers are the client's side of the ledger; 5xx/502/504 are the backend's. */
function isClientError(status: number): boolean {
  return (status >= 400 && status < 500 && status !== 499) || status === 529 || status === 503;
}
