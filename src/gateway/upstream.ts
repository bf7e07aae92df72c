/**
 * The gateway's HTTP client to the backend (Node's http/https, keep-alive agent). What is sent
 * (URL, body, auth header style) is the upstream format module's business (upstream/*.ts).
 *
 * `open()` sends one request and resolves with the response as soon as
 * its headers arrive (any status). It rejects with a `GatewayError` when the backend cannot be
 * reached (refused, DNS, reset before headers → 502 api_error), does not connect within
 * `connectTimeoutMs` (504 timeout_error) or sends no response headers within `idleTimeoutMs`
 * (504 timeout_error), and with an `AbortError` when the caller's signal fires (client went away).
 * The idle timeout while the body streams is the caller's job (it sees the bytes).
 */
import * as http from 'node:http';
import * as https from 'node:https';
import { nextTurn, spendLoopShare } from './body';
import { GatewayError, upstreamErrorMessage } from './errors';
import type { Logger } from './log';

export interface UpstreamConfig {
  /** Backend base URL (the upstream format module builds each request's URL from it). */
  url: string;
  /** Fixed bearer token for the backend; when absent the client's key is passed through. */
  apiKey?: string;
  connectTimeoutMs: number;
  idleTimeoutMs: number;
  /** Extra headers sent to the backend on every request. */
  headers?: Record<string, string>;
  /** Where a backend's (capped) error body goes, at debug level. */
  logger?: Logger;
  /** Told the bytes of each backend response once it closes (the gateway's burst collector). */
  onResponseBytes?: (bytes: number) => void;
}

export class UpstreamClient {
  private readonly agent: http.Agent;
  private readonly mod: typeof http | typeof https;

  constructor(
    readonly config: UpstreamConfig,
    maxSockets = 256,
  ) {
    const protocol = new URL(config.url).protocol;
    const isHttps = protocol === 'https:';
    if (!isHttps && protocol !== 'http:') throw new Error(`upstream URL must be http(s): ${config.url}`);
    this.mod = isHttps ? https : http;
    // Every socket may wait for reuse (at most maxSockets in all; the backend closes the idle ones
    // at its keep-alive timeout). With fewer free slots (64) than concurrent streams, every turn
    // over the limit paid a new backend connection and a close (test/gateway/load.test.ts).
    const agentOpts = { keepAlive: true, maxSockets, maxFreeSockets: maxSockets };
    this.agent = isHttps ? new https.Agent(agentOpts) : new http.Agent(agentOpts);
  }

  /**
   * Send the request to `opts.url`; resolves with the response once headers are in. `opts.auth`
   * makes the auth headers from the key: the configured one, else `clientAuth` (what the client
   * presented).
   */
  open(
    /** The backend body, already JSON (exchange/parse.ts): text, or its UTF-8 bytes from a body worker. */
    payload: string | Uint8Array,
    opts: {
      signal: AbortSignal;
      url: URL;
      clientAuth?: string;
      auth?: (key: string | undefined) => Record<string, string>;
      /** Per-request extra headers (e.g. W3C `traceparent` from the request's observer). */
      headers?: Record<string, string>;
    },
  ): Promise<http.IncomingMessage> {
    // Sent as it is (a string is encoded while written) with its UTF-8 length: no second copy of a large body.
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      'content-length': String(typeof payload === 'string' ? Buffer.byteLength(payload, 'utf8') : payload.byteLength),
      ...this.config.headers,
      ...opts.headers,
    };
    const key = this.config.apiKey ?? opts.clientAuth;
    if (opts.auth) Object.assign(headers, opts.auth(key));
    else if (key) headers.authorization = `Bearer ${key}`;
    return new Promise((resolve, reject) => this.send(payload, opts, headers, resolve, reject, true));
  }

  /**
   * One try of `open`. A pooled keep-alive socket the backend closed just as the request went out
   * fails with ECONNRESET/EPIPE before any response: the backend never read that request, so it is
   * sent once more on a fresh connection (Node's documented `reusedSocket` pattern), logged as
   * `upstream_retry_reused_socket`. Any other failure, or the second one, is the 502. The second
   * try bypasses the pool (`agent: false`): another pooled socket may be just as stale (the
   * backend closes idle ones at its keep-alive timeout; a busy gateway sees the close late).
   */
  private send(
    payload: string | Uint8Array,
    opts: Parameters<UpstreamClient['open']>[1],
    headers: Record<string, string>,
    resolve: (res: http.IncomingMessage) => void,
    reject: (err: Error) => void,
    mayRetry: boolean,
  ): void {
    let settled = false;
    let connectTimer: NodeJS.Timeout | undefined;
    const clear = (): void => {
      if (connectTimer) clearTimeout(connectTimer);
      clearTimeout(headerTimer);
      opts.signal.removeEventListener('abort', onAbort);
    };
    const fail = (err: Error): void => {
      if (settled) return;
      settled = true;
      clear();
      req.destroy();
      reject(err);
    };
    const onAbort = (): void => {
      const e = new Error('client went away');
      e.name = 'AbortError';
      fail(e);
    };
    const headerTimer = setTimeout(
      () => fail(new GatewayError(504, `upstream: no response within ${this.config.idleTimeoutMs} ms`, 'timeout_error')),
      this.config.idleTimeoutMs,
    );
    const req = this.mod.request(opts.url, { method: 'POST', headers, agent: mayRetry ? this.agent : false }, (res) => {
      if (settled) {
        res.destroy();
        return;
      }
      settled = true;
      clear();
      // Bytes read on this (keep-alive) socket for this response, counted passively at close.
      const sock = res.socket;
      const from = sock?.bytesRead ?? 0;
      const note = this.config.onResponseBytes;
      if (note && sock) res.once('close', () => note(Math.max(0, sock.bytesRead - from)));
      resolve(res);
    });
    req.on('socket', (socket) => {
      if ((socket as { connecting?: boolean }).connecting) {
        connectTimer = setTimeout(
          () => fail(new GatewayError(504, `upstream: no connection within ${this.config.connectTimeoutMs} ms`, 'timeout_error')),
          this.config.connectTimeoutMs,
        );
        socket.once('connect', () => {
          if (connectTimer) clearTimeout(connectTimer);
          connectTimer = undefined;
        });
      }
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      const code = err.code ?? err.name;
      if (mayRetry && !settled && req.reusedSocket && (code === 'ECONNRESET' || code === 'EPIPE') && !opts.signal.aborted) {
        settled = true;
        clear();
        req.destroy();
        this.config.logger?.info('upstream_retry_reused_socket', { code });
        this.send(payload, opts, headers, resolve, reject, false);
        return;
      }
      fail(new GatewayError(502, `upstream unavailable (${code})`, 'api_error'));
    });
    if (opts.signal.aborted) {
      onAbort();
      return;
    }
    opts.signal.addEventListener('abort', onAbort, { once: true });
    writeBody(req, payload);
  }

  /**
   * Read a (non-2xx) response body — at most `cap` bytes, then the response is destroyed — and
   * turn it into a GatewayError with the same status and a bounded message (`upstreamErrorMessage`).
   * The capped text goes to the debug log only.
   */
  async errorFrom(res: http.IncomingMessage, cap = UPSTREAM_ERROR_READ_CAP): Promise<GatewayError> {
    const status = res.statusCode ?? 502;
    const { text, truncated } = await readCapped(res, cap, this.config.idleTimeoutMs);
    this.config.logger?.debug('upstream_error_body', { upstreamStatus: status, bytes: Buffer.byteLength(text), truncated, body: text });
    const retryAfter = res.headers['retry-after'];
    const headers = typeof retryAfter === 'string' && /^\d{1,6}$/.test(retryAfter.trim()) ? { 'retry-after': retryAfter.trim() } : undefined;
    // A backend 5xx stays a 5xx; 502/504-style statuses keep their meaning through the type map.
    return new GatewayError(status >= 400 ? status : 502, upstreamErrorMessage(status, text), undefined, headers);
  }

  close(): void {
    this.agent.destroy();
  }
}

/** A backend body larger than this goes out in slices of this size, within the event loop's share per turn (body.ts). */
export const WRITE_SLICE_BYTES = 64 * 1024;

/** Send the backend body; a large one in slices, within the loop's share per turn and per drain, so it never holds the loop. */
function writeBody(req: http.ClientRequest, payload: string | Uint8Array): void {
  if (typeof payload === 'string' || payload.byteLength <= WRITE_SLICE_BYTES) return void req.end(payload);
  let at = 0;
  const next = (): void => {
    if (req.destroyed) return;
    const end = Math.min(at + WRITE_SLICE_BYTES, payload.byteLength);
    const more = req.write(payload.subarray(at, end));
    const spent = spendLoopShare(end - at);
    at = end;
    if (at >= payload.byteLength) return void req.end();
    // A drain can come in the same turn (the socket took the slice at once): the share still counts.
    if (!more) req.once('drain', () => (spendLoopShare(0) ? nextTurn(next) : next()));
    else if (spent) nextTurn(next);
    else next();
  };
  next();
}

/** Bytes of a backend's error body the gateway reads (the rest is never read: the response is destroyed). */
export const UPSTREAM_ERROR_READ_CAP = 16_384;

/**
 * Read up to `cap` bytes of a response as text. At the cap (or after `timeoutMs`) the response is
 * destroyed: a 200 MB error body costs `cap` bytes and one socket, not a 200 MB read.
 */
export function readCapped(res: http.IncomingMessage, cap: number, timeoutMs: number): Promise<{ text: string; truncated: boolean }> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    let size = 0;
    let truncated = false;
    let settled = false;
    const done = (): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ text: Buffer.concat(parts, size).toString('utf8'), truncated });
    };
    const timer = setTimeout(() => {
      truncated = true;
      done();
      res.destroy();
    }, timeoutMs);
    res.on('data', (c: Buffer) => {
      if (settled) return;
      const take = c.subarray(0, cap - size);
      parts.push(take);
      size += take.length;
      if (size >= cap) {
        truncated = take.length < c.length || !res.complete;
        done();
        res.destroy();
      }
    });
    res.on('end', done);
    res.on('error', done);
    res.on('close', done);
  });
}
