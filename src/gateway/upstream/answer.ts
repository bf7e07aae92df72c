/**
 * A non-streaming backend answer read under the same rules as a request body: a size cap, the
 * JsonScanner's depth limit while the bytes arrive (nothing is parsed before the whole answer is
 * known to be one JSON value no deeper than the limit), and the gateway's memory budget (charged
 * as the bytes arrive, given back when the answer is parsed). A backend that answers 300 MiB, or
 * JSON nested a million levels deep, costs the gateway the cap and a quick 502 — not its memory
 * or its event loop.
 *
 * One reader (`AnswerReader`) for every such answer: the models list (`readAnswerJson`, a fetch
 * body) and a model request's whole JSON answer from a backend that ignored `stream: true`
 * (exchange/decode.ts, an IncomingMessage's chunks).
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
 * The reading core: one answer's bytes pushed as they arrive (a fetch body's reads, an
 * IncomingMessage's `data` events), checked at the byte that breaks a limit, charged to the budget
 * as they come and given back by `finish` or `release` (whichever comes first; both are safe to
 * call again). `push` throws GatewayError: 502 `api_error` too large or too deep, 503
 * `overloaded_error` (`retry-after: 1`) when the budget has no room; `NotJsonAnswer` at the first
 * byte that cannot be JSON. A throw has already released what the answer held.
 */
export class AnswerReader {
  private readonly scanner = new JsonScanner();
  private readonly decoder = new TextDecoder('utf-8', { fatal: false });
  private parts: string[] = [];
  private size = 0;
  private charged = 0;
  private released = false;

  constructor(private readonly limits: AnswerLimits) {}

  /** Bytes read so far. */
  get bytes(): number {
    return this.size;
  }

  /** One chunk of the answer. */
  push(chunk: Uint8Array): void {
    if (this.released) return;
    try {
      this.take(chunk);
    } catch (err) {
      this.release();
      throw err;
    }
  }

  private take(chunk: Uint8Array): void {
    const { maxBytes, maxDepth, budget, what } = this.limits;
    this.size += chunk.byteLength;
    if (this.size > maxBytes) throw bad(what, `larger than ${maxBytes} bytes`);
    if (budget) {
      if (!budget.take(chunk.byteLength)) throw new GatewayError(503, `${what}: the gateway's memory budget has no room for it now`, 'overloaded_error', { 'retry-after': '1' });
      this.charged += chunk.byteLength;
    }
    const text = this.decoder.decode(chunk, { stream: true });
    this.scanner.push(text);
    if (this.scanner.maxNesting > maxDepth) throw bad(what, `JSON nested deeper than ${maxDepth} levels`);
    if (this.scanner.status === 'invalid') throw new NotJsonAnswer(`${what}: not JSON`);
    this.parts.push(text);
  }

  /** The whole answer, parsed; what it held is released. Throws `NotJsonAnswer` when it is not one complete JSON value. */
  finish(): unknown {
    const { what } = this.limits;
    try {
      if (this.released) throw new NotJsonAnswer(`${what}: already released`);
      const rest = this.decoder.decode();
      this.scanner.push(rest);
      this.parts.push(rest);
      if (this.scanner.finish() !== 'closed') throw new NotJsonAnswer(`${what}: not one complete JSON value`);
      try {
        return JSON.parse(this.parts.join('')) as unknown;
      } catch {
        throw new NotJsonAnswer(`${what}: not JSON`);
      }
    } finally {
      this.release();
    }
  }

  /** Drop the text and give the budget back (an answer that failed or was abandoned). */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.parts = [];
    if (this.limits.budget && this.charged > 0) this.limits.budget.give(this.charged);
    this.charged = 0;
  }
}

/**
 * Read a fetch Response's body as JSON within `limits` (`AnswerReader`). Throws GatewayError: 502
 * `api_error` when it is too large or too deep (the rest is not read: the body is cancelled), 503
 * `overloaded_error` when the memory budget has no room for it; `NotJsonAnswer` when it is not one
 * JSON value.
 */
export async function readAnswerJson(res: Response, limits: AnswerLimits): Promise<unknown> {
  const body = res.body;
  if (!body) throw new NotJsonAnswer(`${limits.what}: empty`);
  const reader = body.getReader();
  const answer = new AnswerReader(limits);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      answer.push(value);
    }
    return answer.finish();
  } finally {
    answer.release();
    if (answer.bytes > 0) void reader.cancel().catch(() => undefined);
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
