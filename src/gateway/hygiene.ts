/**
 * Connection hygiene for the gateway: every resource a client or a backend can hold has a bound.
 *
 * - Client sockets: a header timeout, a body timeout (Node's `requestTimeout`: the whole request
 *   must arrive in time, else 408 and the socket closes), a keep-alive timeout between requests,
 *   and a connection cap (connections over it get a one-line 503, their upload drained, then closed).
 * - Concurrency slots: taken only after the request body is complete and valid (`Slots`), so slow
 *   bodies cost a socket, never a slot.
 * - Backend streams: an idle timer that counts only while the gateway is actually reading (it is
 *   paused while the client applies backpressure) and is re-armed only by bytes that carry events
 *   (SSE comments and keep-alive blank lines do not count), plus an overall request deadline.
 * - The stream fence (`StreamFence`): nothing the backend sends after its finish is released, and
 *   a stream without a finish and without one valid event is an upstream error, not a success.
 *
 * Defaults are in `HYGIENE_DEFAULTS` and docs/limits.md "## Gateway".
 */
import type * as http from 'node:http';
import type { Socket } from 'node:net';
import type { StreamEvent } from '../wire/events';
import { answerSocket, DEFAULT_DRAIN_LIMITS, type DrainLimits } from './body';
import { GatewayError } from './errors';

export interface HygieneLimits {
  /** Time for a client to send the request line and headers. Default 30 s. */
  headersTimeoutMs: number;
  /** Time for a client to send the whole request, body included (408 after). Default 120 s. */
  bodyTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. Default 5 s. */
  keepAliveTimeoutMs: number;
  /** Open client connections; more are refused with 503 and closed. Default 1024. */
  maxConnections: number;
  /** One model request from body read to the last byte. Default 30 min. */
  requestDeadlineMs: number;
}

export const HYGIENE_DEFAULTS: HygieneLimits = {
  headersTimeoutMs: 30_000,
  bodyTimeoutMs: 120_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 1024,
  requestDeadlineMs: 30 * 60_000,
};

/**
 * Options for `http.createServer`. Node checks header/body timeouts on a sweep every
 * `connectionsCheckingInterval`; it is set to a fraction of the smallest timeout so a small
 * configured limit is enforced promptly (default limits: every 1 s).
 */
export function httpServerOptions(l: HygieneLimits): http.ServerOptions {
  const smallest = Math.min(l.headersTimeoutMs, l.bodyTimeoutMs);
  return {
    noDelay: true,
    headersTimeout: l.headersTimeoutMs,
    requestTimeout: l.bodyTimeoutMs,
    keepAliveTimeout: l.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(smallest / 4))),
  };
}

/** Connections refused at the cap that drain their upload at once (more: `REFUSED_FLOOD_DRAIN`). */
export const REFUSED_DRAINING_MAX = 64;
/** A refused connection past REFUSED_DRAINING_MAX: nothing read, closed 1 s after its answer. */
const REFUSED_FLOOD_DRAIN: DrainLimits = { bytes: 0, ms: 1000 };

const OVER_CAP =
  'HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nconnection: close\r\nretry-after: 1\r\ncontent-length: ';

/**
 * Track client sockets and enforce the connection cap. At the cap, a new connection first evicts
 * the longest-idle socket (one with no request in progress: a keep-alive connection between
 * requests, or one that never sent a request line); only when every socket is busy is the new
 * one refused (503 overloaded_error, `connection: close`; what it still sends is drained within
 * `hooks.drain`, body.ts answerSocket). So sockets that send nothing cannot
 * lock out `/health` or real clients. `onCount`/`onRejected` feed metrics.
 * Returns the live sockets (the gateway destroys them on close) and, among them, those with no
 * request in progress (a drain closes them at once).
 */
export function guardConnections(
  server: http.Server,
  l: HygieneLimits,
  hooks: { onCount?: (n: number) => void; onRejected?: () => void; drain?: DrainLimits } = {},
): { all: Set<Socket>; idle: Set<Socket> } {
  const sockets = new Set<Socket>();
  /** Sockets without a request in progress, oldest first (a Set keeps insertion order). */
  const idle = new Set<Socket>();
  // Node's own timeouts, set again on the instance (older option handling ignores some of them).
  server.headersTimeout = l.headersTimeoutMs;
  server.requestTimeout = l.bodyTimeoutMs;
  server.keepAliveTimeout = l.keepAliveTimeoutMs;
  const body = JSON.stringify({
    type: 'error',
    error: { type: 'overloaded_error', message: `too many open connections (limit ${l.maxConnections})` },
  });
  const refusal = OVER_CAP + Buffer.byteLength(body) + '\r\n\r\n' + body;
  /** Refused sockets still open (each is past the cap: their number is bounded too). */
  let refusing = 0;
  server.on('connection', (s: Socket) => {
    if (sockets.size >= l.maxConnections) {
      const victim = idle.values().next();
      if (!victim.done) {
        idle.delete(victim.value);
        victim.value.destroy();
      } else {
        hooks.onRejected?.();
        // The 503, then what the client still sends read and discarded (an uploading client
        // reads the answer, not a reset). At most REFUSED_DRAINING_MAX refused sockets drain at
        // once; past that (a flood of connections) each is closed 1 s after its answer, unread.
        refusing++;
        s.once('close', () => refusing--);
        answerSocket(s, refusal, refusing <= REFUSED_DRAINING_MAX ? (hooks.drain ?? DEFAULT_DRAIN_LIMITS) : REFUSED_FLOOD_DRAIN);
        return;
      }
    }
    sockets.add(s);
    idle.add(s);
    hooks.onCount?.(sockets.size);
    s.on('close', () => {
      sockets.delete(s);
      idle.delete(s);
      hooks.onCount?.(sockets.size);
    });
  });
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const s = req.socket;
    idle.delete(s);
    res.on('close', () => {
      if (!s.destroyed && sockets.has(s)) idle.add(s);
    });
  });
  return { all: sockets, idle };
}

/** Concurrency slots. `take()` returns a release function (idempotent), or undefined when full. */
export class Slots {
  private n = 0;
  constructor(readonly max: number) {}
  get active(): number {
    return this.n;
  }
  take(): (() => void) | undefined {
    if (this.n >= this.max) return undefined;
    this.n++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.n--;
    };
  }
  /** The 529 answer for a full gateway (`close`: the request's body was not read). */
  static overloaded(max: number, close = false): GatewayError {
    return new GatewayError(529, `too many concurrent requests (limit ${max})`, 'overloaded_error', { 'retry-after': '1', ...(close ? { connection: 'close' } : {}) });
  }
}

/**
 * The backend idle timer. `touch()` re-arms it; `pause()` stops the clock while the gateway is not
 * reading (client backpressure); `resume()` re-arms it with the full window.
 */
export class IdleTimer {
  private timer: NodeJS.Timeout | undefined;
  private paused = false;
  private stopped = false;
  constructor(
    private readonly ms: number,
    private readonly onIdle: () => void,
  ) {
    this.touch();
  }
  touch(): void {
    if (this.stopped || this.paused) return;
    if (this.timer) this.timer.refresh();
    else this.timer = setTimeout(() => this.fire(), this.ms);
  }
  pause(): void {
    if (this.stopped) return;
    this.paused = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
  resume(): void {
    if (this.stopped || !this.paused) return;
    this.paused = false;
    this.touch();
  }
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
  private fire(): void {
    this.timer = undefined;
    if (this.stopped || this.paused) return;
    this.stopped = true;
    this.onIdle();
  }
}

/** True when an event carries something from the model (not a ping or a warning). */
export function isSubstantive(e: StreamEvent): boolean {
  return e.type !== 'ping' && e.type !== 'warning';
}

/**
 * The stream fence: what the backend says after its terminal marker is not released, and a
 * stream that never said anything is not a success.
 *
 * - After the `finish` event (the backend's finish / `stop_reason` / `response.completed`, which
 *   every API sends before `[DONE]` or `message_stop`), only `usage`, `ping`, `warning`,
 *   `stream.end` and `call.complete` of calls already open pass. Text, thinking, new calls,
 *   fragments, errors — anything a client could see — are dropped, with one `after_finish`
 *   warning per stream (it names what was dropped by event type and count only).
 * - A stream that ends (`stream.end`) without a `finish` and without a single event from the
 *   model (text, thinking, a call, usage, a message start) gets a `stream.error` (`api_error`,
 *   "upstream … no valid event") in front of its end: random bytes, HTML or an empty body under
 *   200 `text/event-stream` (or no content type) is an upstream failure — 502 before the
 *   response is committed, one `error` event after — never an empty `end_turn`.
 */
export class StreamFence {
  private finished = false;
  private errored = false;
  private valid = false;
  private readonly known = new Set<number>();
  private warned = false;

  /** True once the stream has carried at least one event from the model (or an error). */
  get sawValidEvent(): boolean {
    return this.valid || this.errored;
  }

  filter(evs: StreamEvent[]): StreamEvent[] {
    let out: StreamEvent[] | undefined;
    for (let i = 0; i < evs.length; i++) {
      const e = evs[i]!;
      const keep = this.admit(e);
      if (keep === 'garbage') {
        out ??= evs.slice(0, i);
        out.push({ type: 'stream.error', error: { type: 'api_error', message: GARBAGE_MESSAGE }, retryable: false }, e);
        continue;
      }
      if (!keep && out === undefined) out = evs.slice(0, i);
      if (keep && out !== undefined) out.push(e);
      if (!keep && !this.warned) {
        this.warned = true;
        out!.push({ type: 'warning', code: 'after_finish', message: `the backend sent ${describe(e)} after its finish; dropped (and anything else after it)` });
      }
    }
    return out ?? evs;
  }

  /** Whether `e` may pass; 'garbage' for the end of a stream that carried nothing. */
  private admit(e: StreamEvent): boolean | 'garbage' {
    switch (e.type) {
      case 'ping':
      case 'warning':
        return true;
      case 'stream.end':
        return this.finished || this.valid || this.errored ? true : 'garbage';
      case 'usage':
        this.valid = true;
        return true;
      case 'finish':
        if (this.finished) return false;
        this.finished = true;
        return true;
      case 'stream.error':
        // A stream that gave its finish may still be cut before its terminal signal (Anthropic's
        // message_stop comes after message_delta's stop_reason): that error passes (SPEC §12).
        if (this.finished && e.error.type !== 'stream_truncated') return false;
        this.errored = true;
        return true;
      case 'call.complete':
        return this.known.has(e.index) || !this.finished;
      case 'call.identity':
      case 'call.fragment':
        if (this.finished) return false;
        this.known.add(e.index);
        this.valid = true;
        return true;
      default:
        if (this.finished) return false;
        this.valid = true;
        return true;
    }
  }
}

/** The message of the error a fence puts in front of the end of a stream that carried nothing. */
export const GARBAGE_MESSAGE = 'upstream: the stream ended without a finish and without a single valid event (not an event stream the gateway can read)';

function describe(e: StreamEvent): string {
  return e.type === 'call.identity' || e.type === 'call.fragment' ? `${e.type} (tool call index ${e.index})` : e.type;
}

/**
 * A backend 2xx answer the gateway can read: SSE (`text/event-stream`) or one JSON completion
 * (`application/json`, for backends that ignore `stream`). Anything else — an HTML page from a
 * proxy, `text/plain` — is a 502 `api_error` before the client's response is committed.
 */
export function checkUpstreamContentType(res: http.IncomingMessage): GatewayError | undefined {
  const ct = String(res.headers['content-type'] ?? '').toLowerCase();
  if (ct === '' || ct.includes('text/event-stream') || ct.includes('application/json') || ct.includes('+json')) return undefined;
  const shown = ct.split(';')[0]!.trim().slice(0, 80);
  return new GatewayError(502, `upstream: answered 2xx with content-type ${shown}, not an event stream`, 'api_error');
}

/**
 * True when a chunk of backend SSE bytes carries something other than comment lines (`: …`) and
 * blank lines — i.e. progress for the idle timer. Scans only until the first such line.
 */
export function sseProgress(chunk: Buffer): boolean {
  let lineStart = true;
  let comment = false;
  for (let i = 0; i < chunk.length; i++) {
    const b = chunk[i]!;
    if (b === 0x0a || b === 0x0d) {
      lineStart = true;
      comment = false;
      continue;
    }
    if (lineStart) {
      lineStart = false;
      if (b === 0x3a /* : */) {
        comment = true;
        continue;
      }
      return true;
    }
    if (!comment) return true;
  }
  return false;
}

/**
 * The raw answer for a client-side protocol error (Node's `clientError`): 408 when the request did
 * not arrive within the header/body timeout, 431 for oversized headers, 400 otherwise; the body is
 * an Anthropic-shaped error and the connection closes.
 */
export function clientErrorResponse(err: NodeJS.ErrnoException): string {
  const code = err.code ?? '';
  const [status, reason, type, message] =
    code === 'ERR_HTTP_REQUEST_TIMEOUT' || code === 'ERR_HTTP_HEADERS_TIMEOUT'
      ? [408, 'Request Timeout', 'timeout_error', 'the request did not arrive within the gateway\'s timeout']
      : code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request Header Fields Too Large', 'invalid_request_error', 'request headers are too large']
        : [400, 'Bad Request', 'invalid_request_error', 'malformed HTTP request'];
  const body = JSON.stringify({ type: 'error', error: { type, message } });
  return `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}
