/**
 * How long to wait before the next attempt of a turn (SPEC §12): a small pure function the turn
 * machine asks once per retry, plus the parsing of a provider's `retry-after` / `retry-after-ms`.
 *
 * - Exponential backoff from `baseMs` (doubling per failed attempt), capped at `maxDelayMs`.
 * - Jitter spreads clients that failed together: 'full' (default) waits a uniform random time in
 *   [0, the capped exponential delay]; 'decorrelated' a uniform time in [baseMs, 3 × the previous
 *   delay], capped; 'none' the exponential delay itself (deterministic, for tests and replays).
 * - A provider's `retry-after` is the floor: the delay is never shorter than what it asked for.
 *   A `retry-after` longer than `maxDelayMs` is not waited for: the attempt is not retried and the
 *   turn fails with the provider's error (`retryAfterExceedsMax`; runTurn says so in the message).
 */

/** 'full' (default), 'decorrelated' or 'none' (the plain exponential delay). */
export type RetryJitter = 'full' | 'decorrelated' | 'none';

export const RETRY_JITTERS: readonly RetryJitter[] = ['full', 'decorrelated', 'none'];

/** Default first retry delay (ms): the exponential delay doubles from here. */
export const DEFAULT_RETRY_BASE_MS = 500;
/** Default longest wait before a retry (ms), backoff and `retry-after` alike. */
export const DEFAULT_RETRY_MAX_DELAY_MS = 30_000;

export interface RetrySettings {
  baseMs: number;
  maxDelayMs: number;
  jitter: RetryJitter;
}

/** Why the turn waits what it waits: its own backoff, or the provider's `retry-after` (the floor). */
export type RetryReason = 'backoff' | 'retry-after';

export interface RetryDelay {
  delayMs: number;
  reason: RetryReason;
  /** What the provider asked for (`retry-after-ms`, else `retry-after`), when it asked. */
  retryAfterMs?: number;
}

/**
 * The wait before the attempt after `failedAttempt` (1-based). `random` returns [0, 1) (Math.random
 * by default; tests pass a seeded one); `previousDelayMs` is the last backoff ('decorrelated').
 */
export function computeRetryDelay(
  s: RetrySettings,
  failedAttempt: number,
  opts: { retryAfterMs?: number; previousDelayMs?: number } = {},
  random: () => number = Math.random,
): RetryDelay {
  const cap = Math.max(0, s.maxDelayMs);
  const exp = Math.min(cap, s.baseMs * 2 ** Math.max(0, failedAttempt - 1));
  let backoff: number;
  if (s.jitter === 'none') backoff = exp;
  else if (s.jitter === 'full') backoff = random() * exp;
  else {
    const prev = opts.previousDelayMs ?? s.baseMs;
    const hi = Math.max(s.baseMs, prev * 3);
    backoff = Math.min(cap, s.baseMs + random() * (hi - s.baseMs));
  }
  backoff = Math.round(backoff);
  const after = opts.retryAfterMs;
  if (after !== undefined && after >= backoff) return { delayMs: Math.min(cap, Math.ceil(after)), reason: 'retry-after', retryAfterMs: after };
  return { delayMs: backoff, reason: 'backoff', ...(after !== undefined ? { retryAfterMs: after } : {}) };
}

/** A provider's wait longer than the turn's longest: not retried (the turn fails with its error). */
export function retryAfterExceedsMax(s: Pick<RetrySettings, 'maxDelayMs'>, retryAfterMs: number | undefined): boolean {
  return retryAfterMs !== undefined && retryAfterMs > s.maxDelayMs;
}

/** Headers as a web `Headers` (fetch, the openai and Anthropic SDKs' `APIError.headers`) or a plain record (AI SDK `responseHeaders`, Node). */
export type HeadersLike = { get(name: string): string | null | undefined } | Record<string, unknown>;

function header(headers: HeadersLike, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    const v = (headers as { get(name: string): string | null | undefined }).get(name);
    return typeof v === 'string' ? v : undefined;
  }
  for (const [k, v] of Object.entries(headers)) {
    if (k.toLowerCase() !== name) continue;
    if (typeof v === 'string') return v;
    if (Array.isArray(v) && typeof v[0] === 'string') return v[0];
    if (typeof v === 'number') return String(v);
  }
  return undefined;
}

/**
 * The wait a provider asked for, in ms: `retry-after-ms` (milliseconds; OpenAI, Anthropic), else
 * `retry-after` (seconds, or an HTTP date relative to `now`). Undefined when absent or unreadable;
 * a date in the past reads 0.
 */
export function retryAfterMsOf(headers: unknown, now: number = Date.now()): number | undefined {
  if (typeof headers !== 'object' || headers === null) return undefined;
  const h = headers as HeadersLike;
  const ms = header(h, 'retry-after-ms')?.trim();
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Number(ms);
  const ra = header(h, 'retry-after')?.trim();
  if (!ra) return undefined;
  if (/^\d+(\.\d+)?$/.test(ra)) return Number(ra) * 1000;
  const date = Date.parse(ra);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
