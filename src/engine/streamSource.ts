/**
 * The stream inputs `runTurn` reads, turned into one iterator: SDK async iterables (Anthropic,
 * OpenAI and Gemini SDK streams, AI SDK `fullStream`), a fetch `Response` (its body), a web
 * `ReadableStream` (`res.body`), a Node `Readable`, arrays and other iterables, or a Promise of
 * any of these. Items are SDK event objects or raw SSE text/bytes (runTurn decides which from the
 * first item).
 */

/** A web `ReadableStream` (Node ≥ 18, browsers, polyfills): only what sluice uses of it. */
export interface ReadableStreamLike<T = unknown> {
  getReader(): { read(): Promise<{ done: boolean; value?: T }>; cancel(reason?: unknown): Promise<void>; releaseLock(): void };
}

/** A fetch `Response` (global fetch, undici, node-fetch): only what sluice uses of it. */
export interface FetchResponseLike {
  readonly ok: boolean;
  readonly status: number;
  readonly body: ReadableStreamLike | AsyncIterable<unknown> | null;
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

/** An HTTP error answer given as the stream: retryable by status like an SDK's APIError. */
export class HttpStreamError extends Error {
  constructor(readonly status: number) {
    super(`the model request failed with HTTP ${status}`);
  }
}

function isObj(v: unknown): v is Record<string | symbol, unknown> {
  return (typeof v === 'object' || typeof v === 'function') && v !== null;
}

function isResponse(v: Record<string | symbol, unknown>): v is Record<string | symbol, unknown> & FetchResponseLike {
  return typeof v.ok === 'boolean' && typeof v.status === 'number' && 'body' in v && typeof v.headers === 'object';
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (isObj(v)) return `an object${v.constructor && typeof v.constructor === 'function' && v.constructor.name ? ` (${v.constructor.name})` : ''}`;
  return typeof v;
}

/** An iterator over a stream input. Throws `BadStreamSource` / `HttpStreamError` for unusable inputs. */
export async function openStream(input: StreamInput | unknown): Promise<AsyncIterator<StreamItem> | Iterator<StreamItem>> {
  let src: unknown = input;
  if (isObj(src) && typeof (src as { then?: unknown }).then === 'function' && !(Symbol.asyncIterator in src)) src = await (src as unknown as PromiseLike<unknown>);
  if (isObj(src) && isResponse(src)) {
    if (!src.ok) throw new HttpStreamError(src.status);
    if (src.body === null || src.body === undefined) throw new BadStreamSource('the fetch Response has no body to read');
    src = src.body;
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
