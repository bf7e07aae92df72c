/**
 * The retry delay (src/engine/retry.ts): exponential backoff with jitter, a maximum, and a
 * provider's `retry-after` / `retry-after-ms` as the floor. Pure functions, a seeded random.
 */
import { computeRetryDelay, retryAfterExceedsMax, retryAfterMsOf, type RetrySettings } from '../../src/engine/retry';
import { streamErrorEvent } from '../../src/engine/runTurn';
import { classifyStreamError, HttpStreamError } from '../../src/engine/streamSource';
import { prng as seeded } from '../../bench/prng';

const S = (over: Partial<RetrySettings> = {}): RetrySettings => ({ baseMs: 500, maxDelayMs: 30_000, jitter: 'full', ...over });

describe('computeRetryDelay', () => {
  test("'none': the plain exponential backoff, capped", () => {
    const s = S({ jitter: 'none', maxDelayMs: 3000 });
    expect([1, 2, 3, 4, 5].map((a) => computeRetryDelay(s, a).delayMs)).toEqual([500, 1000, 2000, 3000, 3000]);
    expect(computeRetryDelay(s, 1).reason).toBe('backoff');
  });

  test("'full' jitter: spread over [0, backoff] across repeated runs", () => {
    const random = seeded(42);
    for (const attempt of [1, 2, 3]) {
      const cap = 500 * 2 ** (attempt - 1);
      const delays = Array.from({ length: 200 }, () => computeRetryDelay(S(), attempt, {}, random).delayMs);
      expect(Math.min(...delays)).toBeGreaterThanOrEqual(0);
      expect(Math.max(...delays)).toBeLessThanOrEqual(cap);
      expect(new Set(delays).size).toBeGreaterThan(100); // visibly random, not one value
      const mean = delays.reduce((a, b) => a + b, 0) / delays.length;
      expect(mean).toBeGreaterThan(cap * 0.35);
      expect(mean).toBeLessThan(cap * 0.65);
    }
  });

  test('the same seed gives the same delays; another seed others', () => {
    const run = (seed: number) => {
      const r = seeded(seed);
      return [1, 2, 3].map((a) => computeRetryDelay(S(), a, {}, r).delayMs);
    };
    expect(run(7)).toEqual(run(7));
    expect(run(7)).not.toEqual(run(8));
  });

  test("'decorrelated': within [base, 3 × previous], capped", () => {
    const random = seeded(3);
    const s = S({ jitter: 'decorrelated', maxDelayMs: 4000 });
    let prev: number | undefined;
    const seen: number[] = [];
    for (let i = 0; i < 100; i++) {
      const d = computeRetryDelay(s, 2, { previousDelayMs: prev }, random).delayMs;
      expect(d).toBeGreaterThanOrEqual(500);
      expect(d).toBeLessThanOrEqual(Math.min(4000, Math.max(500, (prev ?? 500) * 3)));
      seen.push(d);
      prev = d;
    }
    expect(new Set(seen).size).toBeGreaterThan(20);
  });

  test('retry-after is the floor of the delay, and the reason says so', () => {
    const random = seeded(1);
    for (let i = 0; i < 50; i++) {
      const d = computeRetryDelay(S(), 1, { retryAfterMs: 2000 }, random);
      expect(d).toEqual({ delayMs: 2000, reason: 'retry-after', retryAfterMs: 2000 });
    }
    // A backoff already longer than the provider's wait is kept (jitter above the floor).
    const long = computeRetryDelay(S({ jitter: 'none' }), 4, { retryAfterMs: 1000 });
    expect(long).toEqual({ delayMs: 4000, reason: 'backoff', retryAfterMs: 1000 });
  });

  test('a retry-after above the maximum: capped, and flagged as not to be waited for', () => {
    const s = S({ maxDelayMs: 30_000 });
    expect(computeRetryDelay(s, 1, { retryAfterMs: 3_600_000 }, seeded(1)).delayMs).toBe(30_000);
    expect(retryAfterExceedsMax(s, 3_600_000)).toBe(true);
    expect(retryAfterExceedsMax(s, 30_000)).toBe(false);
    expect(retryAfterExceedsMax(s, undefined)).toBe(false);
    expect(retryAfterExceedsMax({ maxDelayMs: Infinity }, 3_600_000)).toBe(false);
  });
});

describe('retryAfterMsOf', () => {
  test('retry-after-ms wins over retry-after; seconds; an HTTP date; web Headers and plain records', () => {
    expect(retryAfterMsOf(new Headers({ 'retry-after': '2' }))).toBe(2000);
    expect(retryAfterMsOf(new Headers({ 'retry-after-ms': '250', 'retry-after': '2' }))).toBe(250);
    expect(retryAfterMsOf({ 'Retry-After': '1.5' })).toBe(1500);
    expect(retryAfterMsOf({ 'retry-after': ['3'] })).toBe(3000);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMsOf({ 'retry-after': 'Thu, 01 Jan 2026 00:00:05 GMT' }, now)).toBe(5000);
    expect(retryAfterMsOf({ 'retry-after': 'Wed, 31 Dec 2025 23:00:00 GMT' }, now)).toBe(0);
    expect(retryAfterMsOf({ 'retry-after': 'soon' })).toBeUndefined();
    expect(retryAfterMsOf({})).toBeUndefined();
    expect(retryAfterMsOf(undefined)).toBeUndefined();
  });

  test('classifyStreamError reads it from SDK errors (headers), AI SDK errors (responseHeaders) and fetch answers', () => {
    expect(classifyStreamError({ status: 429, headers: new Headers({ 'retry-after': '2' }), message: 'rate' }).retryAfterMs).toBe(2000);
    expect(classifyStreamError({ statusCode: 503, responseHeaders: { 'retry-after-ms': '40' }, message: 'x' }).retryAfterMs).toBe(40);
    expect(classifyStreamError(new HttpStreamError(429, '', 1000)).retryAfterMs).toBe(1000);
    expect(classifyStreamError({ status: 500, headers: new Headers(), message: 'x' }).retryAfterMs).toBeUndefined();
  });
});

describe('streamErrorEvent', () => {
  test('a provider wait above retryMaxDelayMs is not retried, and the message says why', () => {
    const e = streamErrorEvent({ type: 'rate_limit_error', message: 'slow down', retryable: true, retryAfterMs: 120_000 }, 30_000);
    expect(e.retryable).toBe(false);
    expect(e.error.message).toBe('slow down (not retried: the provider asked to wait 120000 ms, more than policy.retryMaxDelayMs 30000)');
    expect(e.error.retryAfterMs).toBe(120_000);
    const ok = streamErrorEvent({ type: 'rate_limit_error', message: 'slow down', retryable: true, retryAfterMs: 2000 }, 30_000);
    expect(ok).toEqual({ type: 'stream.error', error: { type: 'rate_limit_error', message: 'slow down', retryAfterMs: 2000 }, retryable: true });
  });
});
