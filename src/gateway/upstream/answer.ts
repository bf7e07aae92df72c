/**
 * A non-streaming backend answer read under the same rules as a request body: a size cap, the
 * JsonScanner's depth limit while the bytes arrive (nothing is parsed before the whole answer is
 * known to be one JSON value no deeper than the limit), and the gateway's memory budget (charged
 * as the bytes arrive, given back when the answer is parsed). A backend that answers 300 MiB, or
 * JSON nested a million levels deep, costs the gateway the cap and a quick 502 — not its memory
 * or its event loop.
 */
import { JsonScanner } from '../../args/scanner';
import type { MemoryBudget } from '../body';
import { GatewayError } from '../errors';

export interface AnswerLimits {
  /** Bytes at most (then 502). */
  maxBytes: number;
  /** JSON nesting at most (then 502). */
  maxDepth: number;
  /** Charged per byte as it arrives (× its factor, like a request body); absent: not counted. */
  budget?: MemoryBudget;
  /** What the answer is, for the error message (`upstream models answer`). */
  what: string;
}

/** The default cap for a backend's models list (OpenRouter's ~350 models are about 1.5 MB). */
export const MODELS_ANSWER_MAX_BYTES = 8 * 1024 * 1024;
/** The default depth limit (the request bodies' default, `--max-json-depth`). */
export const ANSWER_MAX_DEPTH = 128;

const bad = (what: string, why: string): GatewayError => new GatewayError(502, `${what}: ${why}`, 'api_error');

/** The answer is not one JSON value (the caller decides: an error, or nothing learned). */
export class NotJsonAnswer extends Error {
  override name = 'NotJsonAnswer';
}

/**
 * Read a fetch Response's body as JSON within `limits`. Throws GatewayError: 502 `api_error` when
 * it is too large or too deep (the rest is not read: the body is cancelled), 503
 * `overloaded_error` when the memory budget has no room for it; `NotJsonAnswer` when it is not one
 * JSON value.
 */
export async function readAnswerJson(res: Response, limits: AnswerLimits): Promise<unknown> {
  const { maxBytes, maxDepth, budget, what } = limits;
  const body = res.body;
  if (!body) throw new NotJsonAnswer(`${what}: empty`);
  const reader = body.getReader();
  const scanner = new JsonScanner();
  const decoder = new TextDecoder('utf-8', { fatal: false });
  const parts: string[] = [];
  let size = 0;
  let charged = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) throw bad(what, `larger than ${maxBytes} bytes`);
      if (budget) {
        if (!budget.take(value.byteLength)) throw new GatewayError(503, `${what}: the gateway's memory budget has no room for it now`, 'overloaded_error', { 'retry-after': '1' });
        charged += value.byteLength;
      }
      const text = decoder.decode(value, { stream: true });
      scanner.push(text);
      if (scanner.maxNesting > maxDepth) throw bad(what, `JSON nested deeper than ${maxDepth} levels`);
      if (scanner.status === 'invalid') throw new NotJsonAnswer(`${what}: not JSON`);
      parts.push(text);
    }
    const rest = decoder.decode();
    scanner.push(rest);
    parts.push(rest);
    if (scanner.finish() !== 'closed') throw new NotJsonAnswer(`${what}: not one complete JSON value`);
    return JSON.parse(parts.join('')) as unknown;
  } finally {
    parts.length = 0;
    if (size > 0) void reader.cancel().catch(() => undefined);
    if (budget && charged > 0) budget.give(charged);
  }
}

/**
 * Answers kept for `ttlMs` and shared while one fetch is in flight: N clients asking at once cost
 * the backend one request. Failures are shared by the callers that waited for them, never kept.
 */
export class AnswerCache<T> {
  private readonly kept = new Map<string, { at: number; value: T }>();
  private readonly inflight = new Map<string, Promise<T>>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = () => Date.now(),
    /** Entries kept at most (oldest dropped first). */
    private readonly maxEntries = 64,
  ) {}

  get(key: string, fetch: () => Promise<T>): Promise<T> {
    const hit = this.kept.get(key);
    if (hit && this.now() - hit.at < this.ttlMs) return Promise.resolve(hit.value);
    const running = this.inflight.get(key);
    if (running) return running;
    const p = fetch().then(
      (value) => {
        this.inflight.delete(key);
        this.kept.delete(key);
        if (this.kept.size >= this.maxEntries) this.kept.delete(this.kept.keys().next().value as string);
        this.kept.set(key, { at: this.now(), value });
        return value;
      },
      (err: unknown) => {
        this.inflight.delete(key);
        throw err;
      },
    );
    this.inflight.set(key, p);
    return p;
  }
}
