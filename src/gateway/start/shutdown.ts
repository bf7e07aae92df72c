/**
 * startGateway's shutdown stage (server.ts): how the gateway stops. `close()` stops at once (requests
 * in flight are aborted, sockets destroyed); `drain()` is the graceful stop — readiness off (new
 * requests and `/readyz` answered 503 while the listener stays open), idle connections closed,
 * streams in flight given until the deadline (shutdown.ts `Drain`), then no new connections, their
 * last bytes flushed — and then `close()`.
 */
import type * as http from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { GatewayMetrics } from '../metrics';
import type { OpsListener } from '../ops';
import type { Drain } from '../shutdown';

export interface ShutdownParts {
  server: http.Server;
  /** Every open client socket, and those with no request in progress (hygiene.ts guardConnections). */
  sockets: Set<Socket>;
  idleSockets: Set<Socket>;
  /** Abort controllers of the model requests in flight. */
  inflight: Set<AbortController>;
  drain: Drain;
  metrics: GatewayMetrics;
  /** First thing `close()` does: the gateway refuses new requests from now on and stops its helpers (body budget, body workers). */
  stopAccepting(): void;
  /** After the sockets: the backend connections. */
  closeUpstream(): void;
  /** The operations listener, once it listens. */
  ops(): OpsListener | undefined;
  /** `drain()`'s deadline when none is given (ms). */
  drainTimeoutMs: number;
}

export interface Shutdown {
  close(): Promise<void>;
  /** Close every connection with no request in progress; how many sockets remain open. */
  closeIdle(): number;
  drain(deadlineMs?: number): Promise<number>;
}

export function shutdownStage(p: ShutdownParts): Shutdown {
  let closed: Promise<void> | undefined;
  let drained: Promise<number> | undefined;
  const close = (): Promise<void> => {
    closed ??= (async () => {
      p.stopAccepting();
      for (const ac of p.inflight) ac.abort();
      const done = new Promise<void>((r) => p.server.close(() => r()));
      for (const s of p.sockets) s.destroy();
      p.closeUpstream();
      await Promise.all([done, p.ops()?.close()]);
    })();
    return closed;
  };
  /**
   * Close every connection with no request in progress (written-out ones at once, one still
   * flushing its last response after it); returns how many sockets remain open.
   */
  const closeIdle = (): number => {
    p.server.closeIdleConnections();
    for (const s of p.idleSockets) {
      p.idleSockets.delete(s);
      if (s.writableLength === 0) s.destroy();
      else s.end(() => s.destroy());
    }
    return p.sockets.size;
  };
  const drain = (deadlineMs = p.drainTimeoutMs): Promise<number> => {
    drained ??= (async () => {
      p.metrics.draining.set(1);
      const started = p.drain.start(deadlineMs);
      p.ops()?.beat(); // /readyz on the operations listener says 503 from now on
      // The listener stays open while streams are in flight: a probe's `/readyz` and a new model
      // request are answered 503 (not refused at the TCP level, which clients and balancers read as
      // a dead instance). Connections with no request in progress are closed now (between
      // keep-alive requests, or one never sent: Node's closeIdleConnections leaves those open).
      closeIdle();
      const ended = await started;
      // Stop accepting once the streams have ended (or the deadline ended them).
      p.server.close();
      // Let the last responses flush: their connections close as they turn idle (close()
      // destroys sockets, which would drop bytes still buffered). Only connections with a
      // request still in progress are waited for (up to 2 s): an idle gateway exits at once.
      const until = performance.now() + 2_000;
      while (closeIdle() > 0 && performance.now() < until) await new Promise((r) => setTimeout(r, 20));
      await close();
      return ended;
    })();
    return drained;
  };
  return { close, closeIdle, drain };
}
