/**
 * The stream inputs `runTurn` reads, turned into one iterator: SDK async iterables (Anthropic,
 * OpenAI and Gemini SDK streams, AI SDK `fullStream`), a fetch `Response` (its body), a web
 * `ReadableStream` (`res.body`), a Node `Readable`, arrays and other iterables, or a Promise of
 * any of these. Items are SDK event objects or raw SSE text/bytes (runTurn decides which from the
 * first item).
 *
 * `classifyStreamError` decides, in one place, what a failed attempt was and whether it is worth
 * another attempt, across the Anthropic SDK, the OpenAI SDK, AI SDK clients and fetch:
 * - an HTTP status (SDK `APIError.status`, AI SDK `APICallError.statusCode`, a fetch `Response`
 *   given as the stream): 408, 409, 429 and 5xx are retryable, other 4xx are not; the type is the
 *   provider's own error type from the body (`{error: {type}}`, Anthropic's `{type: "error",
 *   error: {type}}`), else the status's (`not_found_error`, `rate_limit_error`, …, else `http_<status>`);
 * - no response at all — `APIConnectionError` / `APIConnectionTimeoutError` (both SDKs), a Node
 *   socket error code (ECONNRESET, ECONNREFUSED, ETIMEDOUT, EPIPE, EAI_AGAIN, undici's
 *   UND_ERR_*; also on `cause`), fetch's `TypeError: fetch failed` — is `connection_error` (or
 *   `timeout_error`), retryable; an AI SDK error's own `isRetryable` is taken as it is;
 * - an abort (`AbortError`) is not retryable; anything else falls back to its type's name.
 * A fetch `Response` with a non-2xx status keeps the first 2 KB of its body in the error message.
 */

import { STATUS_ERROR_TYPES } from '../wire/common';
import { isRetryableErrorType } from '../wire/events';
import { unaryCompletion } from '../wire/integrity';
import { retryAfterMsOf } from './retry';

/** A web `ReadableStream` (Node ≥ 18, browsers, polyfills): only what sluice uses of it. */
export interface ReadableStreamLike<T = unknown> {
  getReader(): { read(): Promise<{ done: boolean; value?: T }>; cancel(reason?: unknown): Promise<void>; releaseLock(): void };
}

/** A fetch `Response` (global fetch, undici, node-fetch): only what sluice uses of it. */
export interface FetchResponseLike {
  readonly ok: boolean;
  readonly status: number;
  readonly body: ReadableStreamLike | AsyncIterable<unknown> | null;
  /** `retry-after` / `retry-after-ms` are read from it (the floor of the next retry's delay). */
  readonly headers?: unknown;
}

export type StreamItem = unknown;

/** One attempt's model stream. */
export type StreamInput =
  | AsyncIterable<StreamItem>
  | Iterable<StreamItem>
  | ReadableStreamLike
  | FetchResponseLike
  | PromiseLike<AsyncIterable<StreamItem> | Iterable<StreamItem> | ReadableStreamLike | FetchResponseLike>;

/** A stream source that is no stream (a programming error): the turn fails with this message. */
export class BadStreamSource extends Error {
  override readonly name = 'bad_stream';
}

/** Bytes of a failed fetch Response's body kept in the error (the rest is not read). */
export const ERROR_BODY_EXCERPT_BYTES = 2048;

/** An HTTP error answer given as the stream: retryable by status like an SDK's APIError. */
export class HttpStreamError extends Error {
  override readonly name = 'HttpStreamError';
  constructor(
    readonly status: number,
    /** The start of the response body (at most ERROR_BODY_EXCERPT_BYTES, UTF-8), '' when none. */
    readonly body = '',
    /** The response's `retry-after-ms` / `retry-after`, in ms (src/engine/retry.ts). */
    readonly retryAfterMs?: number,
  ) {
    super(`the model request failed with HTTP ${status}${body ? `: ${body}` : ''}`);
  }
}

/** What a failed stream attempt was (runTurn turns it into `stream.error`). */
export interface ClassifiedStreamError {
  type: string;
  message: string;
  retryable: boolean;
  /** The HTTP status, when there was a response. */
  status?: number;
  /** The wait the provider asked for (`retry-after-ms` / `retry-after` on the error's `headers` or `responseHeaders`), in ms. */
  retryAfterMs?: number;
}

/** Socket-level failures worth another attempt (Node net/http, undici). ENOTFOUND is not: a wrong host stays wrong. */
const RETRYABLE_CODES = /^(ECONNRESET|ECONNREFUSED|ECONNABORTED|ETIMEDOUT|EPIPE|EAI_AGAIN|ENETUNREACH|EHOSTUNREACH|ENETDOWN|UND_ERR_SOCKET|UND_ERR_CONNECT_TIMEOUT|UND_ERR_HEADERS_TIMEOUT|UND_ERR_BODY_TIMEOUT|UND_ERR_CLOSED)$/;

/** The longest error message kept (a provider's error text can be a whole HTML page). */
const MAX_MESSAGE_CHARS = 4096;

export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

/** The first socket error code on the error or its `cause` chain. */
function errorCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && isObj(e); depth++) {
    const code = str(e.code) ?? str(e.errno);
    if (code !== undefined && RETRYABLE_CODES.test(code)) return code;
    e = e.cause;
  }
  return undefined;
}

export function classifyStreamError(err: unknown): ClassifiedStreamError {
  const e = isObj(err) ? err : {};
  const name = sdkClassName(err) ?? str(e.name) ?? '';
  const raw = str(e.message) ?? (typeof err === 'string' ? err : 'the model stream failed');
  const message = raw.length > MAX_MESSAGE_CHARS ? `${raw.slice(0, MAX_MESSAGE_CHARS)}…` : raw;
  const status = typeof e.status === 'number' ? e.status : typeof e.statusCode === 'number' ? e.statusCode : undefined;
  if (status !== undefined) {
    // OpenAI SDK: `error` is the body's error object; Anthropic SDK: the whole body {type:'error', error:{type}}.
    const body = isObj(e.error) ? e.error : undefined;
    const own = (isObj(body?.error) ? str(body.error.type) : undefined) ?? (body?.type !== 'error' ? str(body?.type) : undefined);
    const type = own ?? STATUS_ERROR_TYPES[status] ?? `http_${status}`;
    const retryable = typeof e.isRetryable === 'boolean' ? e.isRetryable : isRetryableStatus(status);
    // SDK APIError `headers` (web Headers), AI SDK `responseHeaders` (a record), HttpStreamError's own.
    const retryAfterMs = typeof e.retryAfterMs === 'number' ? e.retryAfterMs : retryAfterMsOf(e.headers ?? e.responseHeaders);
    return { type, message, retryable, status, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
  }
  if (name === 'AbortError' || name === 'APIUserAbortError') return { type: 'aborted', message, retryable: false };
  const code = errorCode(err);
  if (name === 'APIConnectionTimeoutError' || (code !== undefined && /TIMEDOUT|TIMEOUT/.test(code))) return { type: 'timeout_error', message, retryable: true };
  if (name === 'APIConnectionError' || code !== undefined || (name === 'TypeError' && /fetch failed|network/i.test(raw)))
    return { type: 'connection_error', message, retryable: true };
  const type = name && name !== 'Error' ? name : 'stream_error';
  const retryable = typeof e.isRetryable === 'boolean' ? e.isRetryable : isRetryableErrorType(type) || /ECONNRESET|socket hang up|network|terminated/i.test(raw);
  return { type, message, retryable };
}

/**
 * The OpenAI SDK's connection errors keep `name === 'Error'` (the Anthropic SDK's set their own
 * name), so without their class name a refusal with no socket code on its cause (undici's
 * "bad port") would not count as a connection error.
 */
function sdkClassName(err: unknown): string | undefined {
  const ctor = isObj(err) ? (err as { constructor?: { name?: unknown } }).constructor : undefined;
  const n = typeof ctor?.name === 'string' ? ctor.name : undefined;
  return n === 'APIConnectionError' || n === 'APIConnectionTimeoutError' || n === 'APIUserAbortError' ? n : undefined;
}

/** The start of a failed Response's body (at most `max` bytes), without reading the rest. */
async function bodyExcerpt(body: FetchResponseLike['body'], max = ERROR_BODY_EXCERPT_BYTES): Promise<string> {
  if (!body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  const add = (v: unknown): void => {
    const bytes = typeof v === 'string' ? Buffer.from(v, 'utf8') : v instanceof Uint8Array ? v : undefined;
    if (bytes) {
      chunks.push(bytes);
      size += bytes.length;
    }
  };
  try {
    if (typeof (body as ReadableStreamLike).getReader === 'function') {
      const reader = (body as ReadableStreamLike).getReader();
      while (size < max) {
        const r = await reader.read();
        if (r.done) break;
        add(r.value);
      }
      await reader.cancel().catch(() => undefined);
    } else {
      const it = (body as AsyncIterable<unknown>)[Symbol.asyncIterator]();
      while (size < max) {
        const r = await it.next();
        if (r.done) break;
        add(r.value);
      }
      await it.return?.();
    }
  } catch {
    // a body that fails while read still leaves what arrived
  }
  // Cut at `max` bytes; a split multi-byte character at the cut decodes as U+FFFD.
  return Buffer.concat(chunks).subarray(0, max).toString('utf8').trim();
}

function isObj(v: unknown): v is Record<string | symbol, unknown> {
  return (typeof v === 'object' || typeof v === 'function') && v !== null;
}

function isResponse(v: Record<string | symbol, unknown>): v is Record<string | symbol, unknown> & FetchResponseLike {
  return typeof v.ok === 'boolean' && typeof v.status === 'number' && 'body' in v && typeof v.headers === 'object';
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  // SPEC §12: a whole completion where a stream was expected.
  const unary = unaryCompletion(v);
  if (unary !== undefined) return `${unary}: looks like a non-streaming completion: did you forget stream: true?`;
  if (Array.isArray(v)) return 'an array';
  if (isObj(v)) return `an object${v.constructor && typeof v.constructor === 'function' && v.constructor.name ? ` (${v.constructor.name})` : ''}`;
  return typeof v;
}

/** An iterator over a stream input. Throws `BadStreamSource` / `HttpStreamError` for unusable inputs. */
export async function openStream(input: StreamInput | unknown): Promise<AsyncIterator<StreamItem> | Iterator<StreamItem>> {
  let src: unknown = input;
  if (isObj(src) && typeof (src as { then?: unknown }).then === 'function' && !(Symbol.asyncIterator in src)) src = await (src as unknown as PromiseLike<unknown>);
  if (isObj(src) && isResponse(src)) {
    if (!src.ok) throw new HttpStreamError(src.status, await bodyExcerpt(src.body), retryAfterMsOf(src.headers));
    if (src.body === null || src.body === undefined) throw new BadStreamSource('the fetch Response has no body to read');
    const contentType = headerOf(src.headers, 'content-type');
    src = src.body;
    if (contentType !== undefined && isObj(src)) {
      const it = await openStream(src);
      CONTENT_TYPES.set(it, contentType);
      return it;
    }
  }
  if (isObj(src)) {
    if (typeof src[Symbol.asyncIterator] === 'function') return (src as unknown as AsyncIterable<StreamItem>)[Symbol.asyncIterator]();
    if (typeof src[Symbol.iterator] === 'function' && typeof src !== 'string') return (src as unknown as Iterable<StreamItem>)[Symbol.iterator]();
    if (typeof src.getReader === 'function') return readerIterator((src as unknown as ReadableStreamLike).getReader());
  }
  throw new BadStreamSource(
    `runTurn: stream must be an async iterable (SDK stream, Node Readable), an iterable, a ReadableStream or a fetch Response, got ${describe(src)}`,
  );
}

/** The content type of the fetch Response an iterator reads (named in a `bad_stream` error, SPEC §12). */
const CONTENT_TYPES = new WeakMap<object, string>();

export function contentTypeOf(iterator: object | undefined): string | undefined {
  return iterator === undefined ? undefined : CONTENT_TYPES.get(iterator);
}

function headerOf(headers: unknown, name: string): string | undefined {
  if (!isObj(headers)) return undefined;
  const v = typeof headers.get === 'function' ? (headers.get as (n: string) => unknown).call(headers, name) : headers[name];
  return typeof v === 'string' && v.length > 0 ? v.slice(0, 120) : undefined;
}

function readerIterator(reader: ReturnType<ReadableStreamLike['getReader']>): AsyncIterator<StreamItem> {
  return {
    next: async () => {
      const r = await reader.read();
      return r.done ? { done: true, value: undefined } : { done: false, value: r.value };
    },
    return: async () => {
      await reader.cancel().catch(() => undefined);
      return { done: true, value: undefined };
    },
  };
}
