/**
 * startGateway's listener stage (server.ts): the main port's HTTP server (connection hygiene:
 * hygiene.ts), bound with its accept backlog, and, when asked, the operations listener — /health, /readyz and /metrics on a socket and a thread of
 * their own (ops.ts) — whose /metrics keeps the main port's client-key rule for its own address.
 */
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { type AuthConfig, keyMatches } from '../auth';
import { answerSocket, DEFAULT_DRAIN_LIMITS, type DrainLimits } from '../body';
import { clientErrorResponse, guardConnections, type HygieneLimits, httpServerOptions } from '../hygiene';
import { messagesApi } from '../inbound/messages';
import type { Logger } from '../log';
import type { GatewayMetrics } from '../metrics';
import { DEFAULT_STALL_MS, type OpsListener, type OpsListenerOptions, startOpsListener } from '../ops';

/** The URL a client uses for `host:port` (a wildcard bind address is reached on 127.0.0.1). */
export function urlOf(host: string, port: number): string {
  const h = host.includes(':') ? `[${host}]` : host;
  return `http://${h === '0.0.0.0' || h === '[::]' ? '127.0.0.1' : h}:${port}`;
}

/**
 * The main port's server (not yet listening): every request goes to `onRequest`, and `onEnd` runs
 * once its promise settles; open and idle sockets are tracked and capped (hygiene.ts
 * guardConnections, counted in the metrics); a malformed request line or header gets its 4xx, and
 * the rest of what that client sends is drained within `drain` (body.ts answerSocket).
 */
export function mainServer(
  limits: HygieneLimits,
  metrics: GatewayMetrics,
  onRequest: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>,
  onEnd: () => void,
  drain: DrainLimits = DEFAULT_DRAIN_LIMITS,
): { server: http.Server; sockets: Set<Socket>; idleSockets: Set<Socket> } {
  const server = http.createServer(httpServerOptions(limits), (req, res) => {
    void onRequest(req, res).finally(onEnd);
  });
  const { all: sockets, idle: idleSockets } = guardConnections(server, limits, {
    onCount: (n) => metrics.connections.set(n),
    onRejected: () => metrics.rejectedConnections.inc(),
    drain,
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    // A response already under way on this connection (a malformed request pipelined behind a
    // stream): an answer written now would land inside it (Node's own default checks the same).
    if ((socket as Socket & { _httpMessage?: http.ServerResponse | null })._httpMessage?.headersSent === true) return void socket.destroy();
    // The answer, then the rest of the upload read and discarded (bounded), never a reset.
    answerSocket(socket, clientErrorResponse(err), drain);
  });
  return { server, sockets, idleSockets };
}

/** Bind the main port; rejects with the listen error (EADDRINUSE, …). */
export async function listenMain(server: http.Server, o: { port: number; host: string; backlog: number }): Promise<{ port: number; url: string }> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: o.port, host: o.host, backlog: o.backlog }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return { port, url: urlOf(o.host, port) };
}

export interface OpsStageOptions {
  host: string;
  port: number;
  stallMs?: number;
  /** The client-key rule for this listener's address (undefined: no keys). */
  auth: AuthConfig | undefined;
  limits: HygieneLimits;
  maxConcurrent: number;
  state: OpsListenerOptions['state'];
  /** The gateway's metrics, or undefined when /metrics is off. */
  metrics: GatewayMetrics | undefined;
  logger: Logger;
}

/** Start the operations listener; rejects with the reason it could not (the caller closes the gateway). */
export async function startOps(o: OpsStageOptions): Promise<{ listener: OpsListener; url: string; port: number }> {
  const metrics = o.metrics;
  /** /metrics for the operations thread: the same key rule, the same registry. */
  const opsMetrics = async (key: string | undefined, head: boolean): Promise<{ status: number; headers: Record<string, string>; body: string }> => {
    if (o.auth && !keyMatches(o.auth, key)) {
      const body = JSON.stringify(messagesApi.errorBody('authentication_error', key === undefined ? 'missing API key: send x-api-key or Authorization: Bearer' : 'invalid API key'));
      return { status: 401, headers: { 'content-type': 'application/json' }, body };
    }
    const text = await metrics!.registry.metrics();
    return { status: 200, headers: { 'content-type': metrics!.registry.contentType, 'content-length': String(Buffer.byteLength(text)) }, body: head ? '' : text };
  };
  const listener = await startOpsListener({
    host: o.host,
    port: o.port,
    headersTimeoutMs: o.limits.headersTimeoutMs,
    requestTimeoutMs: o.limits.bodyTimeoutMs,
    keepAliveTimeoutMs: o.limits.keepAliveTimeoutMs,
    stallMs: o.stallMs ?? DEFAULT_STALL_MS,
    maxConcurrent: o.maxConcurrent,
    state: o.state,
    ...(metrics ? { metrics: opsMetrics } : {}),
    onFailure: (message) => o.logger.error('ops_listener_failed', { message }),
  });
  return { listener, url: urlOf(o.host, listener.port), port: listener.port };
}

/**
 * The operations listener when `ops` asks for one; if it cannot start, the gateway is closed
 * (`close`) and the reason thrown as `operations listener: …`.
 */
export async function listenOps(o: OpsStageOptions | undefined, close: () => Promise<void>): Promise<{ listener: OpsListener; url: string; port: number } | undefined> {
  if (!o) return undefined;
  try {
    return await startOps(o);
  } catch (err) {
    await close();
    throw new Error(`operations listener: ${(err as Error | undefined)?.message ?? String(err)}`);
  }
}
