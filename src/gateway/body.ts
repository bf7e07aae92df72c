/**
 * Request bodies under bounds: one request cannot stall the gateway, and all requests together
 * cannot bloat it.
 *
 * - `MemoryBudget`: the bytes of request bodies in flight, process-wide. A body is charged
 *   `bytes × BODY_MEMORY_FACTOR` (what a body costs while it is decoded, parsed, translated and
 *   serialised for the backend; measured, see docs/limits.md) from its first byte until its
 *   request ends. A body that does not fit is refused at once (503 `overloaded_error`,
 *   `retry-after`), before its bytes are read when it declares a `content-length`.
 * - `readBodyBytes`: reads the body chunk by chunk into the O(n) `JsonScanner`, which checks the
 *   grammar and the nesting depth as the bytes arrive: an over-deep or invalid body is refused at
 *   the first byte that crosses the line (nothing is parsed, the rest is not read), an over-size
 *   body at the byte that crosses `maxBytes`. Only a complete, valid, shallow-enough body's bytes
 *   reach the parse stage (exchange/parse.ts: `JSON.parse` inline, or in a body worker for a large
 *   body, worker/pool.ts; count_tokens too).
 */
import type * as http from 'node:http';
import type { Socket } from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { JsonScanner } from '../args/scanner';
import { GatewayError, invalidRequest } from './errors';

/**
 * Memory one request body costs per byte while its request runs (the raw chunks, the decoded
 * text, the parsed object, the canonical request and the backend body). Measured with
 * `npx ts-node --transpile-only bench/bodyMemory.ts` (docs/limits.md): a conservative round-up.
 */
export const BODY_MEMORY_FACTOR = 8;

/** Default budget: bodies in flight may cost this much memory (sized for a 2 GB container). */
export const DEFAULT_BODY_BUDGET_BYTES = 768 * 1024 * 1024;

/**
 * Process-wide accounting of request-body memory. With `collectAfterBurst`, the first time the
 * budget is idle again (nothing charged, no backend response ended) for `COLLECT_IDLE_MS` after at
 * least `COLLECT_AFTER_BYTES` (or half the budget) were charged or received from backends, one full
 * garbage collection runs, and a second one `COLLECT_SHRINK_MS` later if still idle: V8 otherwise
 * keeps a burst's dead bodies, heap pages and grown young generation for good on an idle process
 * (measured: RSS 180 → 383 MiB after eight 31 MiB bodies, still 374 MiB 20 s later; a plain child
 * 62 → 125 MiB after a 24 MiB stream, unchanged 30 s later; the two collections bring it to 71).
 */
export class MemoryBudget {
  private used = 0;
  /** Reserved outside the bodies (live body workers: worker/pool.ts); not part of the idle test. */
  private fixed = 0;
  /** Charged bytes since the last collection. */
  private churn = 0;
  private collectTimer: NodeJS.Timeout | undefined;
  constructor(
    /** Memory (bytes) the bodies in flight may cost together. */
    readonly bytes: number,
    readonly factor: number = BODY_MEMORY_FACTOR,
    private readonly collectAfterBurst = false,
  ) {}

  /** Charged memory in use (bytes). */
  get inUse(): number {
    return this.used;
  }

  /** The largest body that could ever fit (bytes). */
  get largestBody(): number {
    return Math.floor(this.bytes / this.factor);
  }

  /** Charge `bodyBytes`; false (nothing charged) when it does not fit. */
  take(bodyBytes: number): boolean {
    const cost = bodyBytes * this.factor;
    if (this.used + this.fixed + cost > this.bytes) return false;
    this.used += cost;
    this.churn += cost;
    if (this.collectTimer) {
      clearTimeout(this.collectTimer);
      this.collectTimer = undefined;
    }
    return true;
  }

  /** Give back what `take(bodyBytes)` charged. */
  give(bodyBytes: number): void {
    this.used = Math.max(0, this.used - bodyBytes * this.factor);
    this.maybeCollect();
  }

  /** Reserve `bytes` of memory as they are (not a body: no factor); false when they do not fit. */
  reserve(bytes: number): boolean {
    if (this.used + this.fixed + bytes > this.bytes) return false;
    this.fixed += bytes;
    return true;
  }

  /** Give back what `reserve(bytes)` took. */
  release(bytes: number): void {
    this.fixed = Math.max(0, this.fixed - bytes);
  }

  /** Reserved by `reserve` (bytes). */
  get reserved(): number {
    return this.fixed;
  }

  /**
   * A backend response of `bytes` ended (its text, arguments and events are garbage now): it
   * counts toward the burst that earns a collection (2× its size: the bytes and the strings).
   */
  noteResponse(bytes: number): void {
    this.churn += 2 * bytes;
    this.maybeCollect();
  }

  private maybeCollect(): void {
    if (this.used === 0 && this.collectAfterBurst && this.churn >= Math.min(COLLECT_AFTER_BYTES, this.bytes / 2)) {
      // Re-armed by every new burst event: the collection runs after 1 s without one.
      if (this.collectTimer) clearTimeout(this.collectTimer);
      this.collectTimer = setTimeout(() => {
        this.collectTimer = undefined;
        if (this.used !== 0) return;
        this.churn = 0;
        const gc = fullCollection();
        if (!gc) return;
        gc();
        // V8 gives back the young generation a burst grew (up to 32 MiB, kept otherwise) only in a
        // full collection that sees a low allocation rate over its last 5 s: one more, once the
        // process has been idle that long after the first (a new body cancels it).
        this.collectTimer = setTimeout(() => {
          this.collectTimer = undefined;
          if (this.used === 0) gc();
        }, COLLECT_SHRINK_MS);
        this.collectTimer.unref();
      }, COLLECT_IDLE_MS);
      this.collectTimer.unref();
    }
  }

  /** Stop a pending collection (gateway close). */
  stop(): void {
    if (this.collectTimer) clearTimeout(this.collectTimer);
    this.collectTimer = undefined;
  }

  /**
   * The 503 for a body that does not fit now. The rest of the upload is read and discarded
   * (`drainRefused`, bounded), so a client still uploading gets this answer — closing while it
   * uploads makes the kernel reset the connection, which can destroy the 503 before the client
   * reads it.
   */
  overBudget(): GatewayError {
    return new GatewayError(
      503,
      `the gateway's memory budget for request bodies is in use by other requests (${Math.round(this.bytes / 1048576)} MiB); retry shortly`,
      'overloaded_error',
      { 'retry-after': '1' },
    );
  }
}

/**
 * A burst worth a collection: this much charged (8× the bodies, 2× the backend responses; or half
 * the budget if that is less) since the last one — a 16 MiB response is one.
 */
export const COLLECT_AFTER_BYTES = 32 * 1024 * 1024;
/** Idle time (no body charged) before the collection. */
export const COLLECT_IDLE_MS = 1000;
/** Idle time after it before the second collection, which shrinks the young generation (V8 measures the allocation rate over 5 s). */
export const COLLECT_SHRINK_MS = 6000;

let gcFn: (() => void) | null | undefined;
/** V8's full collection (`--expose-gc` set at run time, `gc` taken from a fresh context), or null. */
function fullCollection(): (() => void) | null {
  if (gcFn !== undefined) return gcFn;
  try {
    v8.setFlagsFromString('--expose-gc');
    gcFn = vm.runInNewContext('gc') as () => void;
  } catch {
    gcFn = null;
  }
  return gcFn;
}

/**
 * Bytes of request and backend bodies the event loop handles per turn, all requests together
 * (scanned and copied while reading, written to a backend): past it, a reader or writer waits for
 * the next turn (timers, other sockets and /health run in between).
 */
export const LOOP_SLICE_BYTES = 128 * 1024;

let turnBytes = 0;
let turnArmed = false;

/**
 * Count `bytes` against this turn's share (LOOP_SLICE_BYTES); true when the share is used up: the
 * caller pauses and continues with `nextTurn`.
 */
export function spendLoopShare(bytes: number): boolean {
  turnBytes += bytes;
  if (!turnArmed) {
    turnArmed = true;
    setImmediate(() => {
      turnBytes = 0;
      turnArmed = false;
    });
  }
  return turnBytes >= LOOP_SLICE_BYTES;
}

/** Run `fn` on the next turn of the event loop (after this turn's I/O and timers). */
export function nextTurn(fn: () => void): void {
  setImmediate(fn);
}

export interface BodyLimits {
  /** Largest body in bytes (413 above). */
  maxBytes: number;
  /** Deepest JSON nesting (400 above). */
  maxDepth: number;
}

/** A complete, checked body and the bytes it charged to the budget (give them back when the request ends). */
export interface BodyBytes {
  /** The body's UTF-8 bytes; for a declared `content-length`, a view on a buffer of its own (it can be transferred to a worker). */
  bytes: Uint8Array;
  charged: number;
}

/**
 * Read and check one JSON request body, without parsing it: the bytes go to the parse stage
 * (exchange/parse.ts), which parses them inline or in a body worker. Rejects with a GatewayError:
 * 400 (invalid JSON, too deep, empty, compressed), 413 (too large), 503 (over the memory budget),
 * 499 (the client left). On rejection nothing stays charged; on success the caller owns `charged`.
 */
export function readBodyBytes(req: http.IncomingMessage, limits: BodyLimits, budget: MemoryBudget): Promise<BodyBytes> {
  const enc = req.headers['content-encoding'];
  if (enc !== undefined && enc !== 'identity') {
    req.resume();
    return Promise.reject(invalidRequest(`content-encoding "${enc}" is not supported; send an uncompressed JSON body`));
  }
  const declared = Number(req.headers['content-length']);
  const known = req.headers['content-length'] !== undefined && Number.isFinite(declared);
  if (known && declared > limits.maxBytes) {
    req.resume();
    return Promise.reject(tooLarge(limits.maxBytes));
  }
  // A declared length is charged before a byte is read; a chunked body chunk by chunk.
  if (known && !budget.take(declared)) {
    req.resume();
    return Promise.reject(budget.overBudget());
  }
  let charged = known ? declared : 0;
  return new Promise((resolve, reject) => {
    const decoder = new StringDecoder('utf8');
    const scanner = new JsonScanner();
    // A declared length gets one buffer of its own, filled as chunks arrive; a chunked body's
    // chunks are joined at the end.
    let whole: Buffer | undefined = known ? Buffer.allocUnsafeSlow(declared) : undefined;
    let chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const cleanup = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      req.off('close', onGone);
      // An 'error' without a listener would be thrown: a socket reset after this point is not ours.
      req.on('error', () => undefined);
    };
    const fail = (err: GatewayError): void => {
      if (settled) return;
      settled = true;
      whole = undefined;
      chunks = [];
      budget.give(charged);
      charged = 0;
      cleanup();
      // The rest of the body is not kept: the server reads and discards it (`drainRefused`, bounded).
      reject(err);
    };
    const scan = (text: string): boolean => {
      if (text.length === 0) return true;
      scanner.push(text);
      if (scanner.maxNesting > limits.maxDepth) {
        fail(invalidRequest(`request body: JSON nested deeper than ${limits.maxDepth} levels is not accepted by this gateway`));
        return false;
      }
      if (scanner.status === 'invalid') {
        fail(invalidRequest(`request body is not valid JSON (${scanner.error ?? 'syntax error'} at character ${scanner.errorAt})`));
        return false;
      }
      return true;
    };
    const onData = (c: Buffer): void => {
      if (settled) return;
      const at = size;
      size += c.length;
      if (size > limits.maxBytes || (whole && size > whole.length)) return fail(tooLarge(limits.maxBytes));
      if (!known) {
        if (!budget.take(c.length)) return fail(budget.overBudget());
        charged += c.length;
      }
      if (!scan(decoder.write(c))) return;
      if (whole) c.copy(whole, at);
      else chunks.push(c);
      // Fast clients must not hold the loop: past this turn's share, pause until it has turned.
      if (spendLoopShare(c.length)) {
        req.pause();
        nextTurn(() => req.resume());
      }
    };
    const onEnd = (): void => {
      if (settled) return;
      if (!scan(decoder.end())) return;
      const status = scanner.finish();
      if (status === 'empty') return fail(invalidRequest('request body is empty; expected a JSON object'));
      if (status !== 'closed') return fail(invalidRequest('request body is not valid JSON (it ends before the value is complete)'));
      const bytes = whole ? whole.subarray(0, size) : Buffer.concat(chunks, size);
      whole = undefined;
      chunks = [];
      settled = true;
      cleanup();
      resolve({ bytes, charged });
    };
    const onGone = (): void => {
      if (settled || req.complete) return;
      fail(new GatewayError(499, 'the client closed the connection before the request body was complete', 'api_error'));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onGone);
    req.on('close', onGone);
  });
}

function tooLarge(limit: number): GatewayError {
  return new GatewayError(413, `request body is larger than the gateway limit of ${limit} bytes`, 'request_too_large');
}

/**
 * How much of an upload answered early (before its body was read: 503 memory budget, 529 full,
 * 413 too large, 400 at the first bad byte, 401, …) the gateway reads and discards, and for how
 * long, before it stops reading (docs/limits.md "Early answers").
 */
export interface DrainLimits {
  /** Bytes of the rest of the body read and discarded (never kept). */
  bytes: number;
  /** Time from the answer until the connection is closed if the upload has not ended. */
  ms: number;
}

export const DEFAULT_DRAIN_LIMITS: DrainLimits = { bytes: 64 * 1024 * 1024, ms: 10_000 };

/**
 * An answer sent before the request body was read must reach a client that is still uploading.
 * Closing the connection then makes the kernel answer the rest of the upload with a reset, and a
 * client whose write fails (EPIPE, ECONNRESET) before it read the answer — most clients send the
 * whole body before they read — never sees it. So the rest of the body is read and discarded
 * (memory: none kept; each chunk is dropped as it arrives) and the connection is kept:
 * - the upload ends within `limits.bytes` and `limits.ms`: the connection stays usable;
 * - past `limits.bytes`: the gateway half-closes (FIN after the answer), stops reading, and closes
 *   at `limits.ms` (a client reading concurrently has its answer; one that only reads after its
 *   upload is stopped by TCP flow control, not by a reset, until then);
 * - past `limits.ms`: closed.
 * Returns the answer to send: without `connection: close` (the connection is closed by the rules
 * above, not announced). A request already complete is left as it is.
 */
export function drainRefused(req: http.IncomingMessage, err: GatewayError, limits: DrainLimits = DEFAULT_DRAIN_LIMITS): GatewayError {
  if (req.complete || req.destroyed) return err;
  const socket = req.socket;
  discardRest(req, socket, limits, () => {
    req.pause();
    socket.pause();
    socket.end();
  });
  req.on('error', () => undefined);
  req.resume();
  if (err.headers?.connection !== 'close') return err;
  const { connection: _close, ...headers } = err.headers;
  return new GatewayError(err.status, err.message, err.type, headers);
}

/**
 * Read and discard what `from` still delivers, within `limits` (both drains' bounds): past
 * `limits.bytes`, `over` runs once (it stops reading); `limits.ms` from now the socket is
 * destroyed; the end of `from` or the socket's close ends the watch.
 */
function discardRest(from: NodeJS.ReadableStream, socket: Socket, limits: DrainLimits, over: () => void): void {
  let discarded = 0;
  let stopped = false;
  const close = (): void => {
    cleanup();
    socket.destroy();
  };
  const timer = setTimeout(close, limits.ms);
  timer.unref();
  const onData = (c: Buffer): void => {
    discarded += c.length;
    if (discarded <= limits.bytes || stopped) return;
    stopped = true;
    over();
  };
  const cleanup = (): void => {
    clearTimeout(timer);
    from.removeListener('data', onData);
    from.removeListener('end', cleanup);
    socket.removeListener('close', cleanup);
  };
  from.on('data', onData);
  from.once('end', cleanup);
  socket.once('close', cleanup);
}

/** Sockets `answerSocket` has taken (Node may report more errors on them: they are answered once). */
const answeredSockets = new WeakSet<Socket>();

/**
 * The raw-socket form of `drainRefused`, for an answer given before Node's HTTP parser produced a
 * request — its own `clientError` (a malformed request line, oversized headers, a header or request
 * timeout) and the connection cap's 503 (hygiene.ts `guardConnections`). The HTTP server's reader
 * is taken off the socket first: Node keeps feeding each later chunk to a parser in its error state
 * and reports every one as another `clientError`, and on a refused connection it would parse and
 * route a request. Then `answer` is written and the write side closed (its `connection: close`: no
 * further request can follow on this connection), and what the client still sends is read and
 * discarded, so a client mid-upload reads the answer instead of a reset: closed once the client
 * ends its side; past `limits.bytes` reading stops (TCP flow control holds the client, no reset);
 * closed `limits.ms` after the answer. A socket already taken is left alone; one that cannot be
 * written any more is destroyed.
 */
export function answerSocket(socket: Socket, answer: string, limits: DrainLimits = DEFAULT_DRAIN_LIMITS): void {
  if (answeredSockets.has(socket)) return;
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  answeredSockets.add(socket);
  socket.on('error', () => undefined);
  socket.removeAllListeners('data');
  discardRest(socket, socket, limits, () => socket.pause());
  // The client ended its side: close once the answer is out (both directions done, nothing unread: no reset).
  socket.once('end', () => {
    if (socket.writableFinished) socket.destroy();
    else socket.once('finish', () => socket.destroy());
  });
  socket.end(answer);
  socket.resume();
}
