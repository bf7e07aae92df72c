/**
 * Resource limits of one turn (issue 11, SPEC §10 "Limits"). Every resource a stream can grow has
 * a default here; hitting one ends THAT turn with a `limit_exceeded` stream error (gateway: an
 * `error` event; `runTurn`: a rejected promise with a `SluiceLimitError`), never the process.
 *
 * Sizes are counted in UTF-16 code units ("chars": what `string.length` says; for ASCII JSON one
 * char is one byte). That is the unit V8 runs out of: a string cannot exceed 2^29 - 24 code units
 * (about 512 Mi), which is what used to kill the process with `RangeError: Invalid string length`.
 * Counting code units costs nothing per fragment (no UTF-8 byte count on the hot path).
 *
 * Defaults (docs/limits.md has the table):
 * - 64 Mi chars per call's arguments, 64 Mi of text, 64 Mi of thinking, 128 Mi in all per
 *   attempt: hundreds of times what any model emits in one response (a 128k-token output is
 *   about 0.5 MB), 8× below V8's string ceiling, and a bounded worst case for a gateway's memory
 *   (a 64 Mi-char string costs 64–128 MB; the whole turn is kept under roughly 0.5 GB).
 * - 10,000 calls per attempt (the lifecycle bench runs 1,000; real turns have tens).
 * - call index at most 100,000: indices are positions in the model output, so anything far above
 *   the call count is a broken or hostile producer. Release and start decisions cost O(calls
 *   seen), not O(highest index), so a larger configured limit is safe too.
 */

export interface TurnLimits {
  /** One call's argument text, in chars (UTF-16 code units). */
  maxArgChars: number;
  /** Assistant text of one attempt, in chars. */
  maxTextChars: number;
  /** Thinking text of one attempt, in chars. */
  maxThinkingChars: number;
  /** Arguments + text + thinking of one attempt, in chars. */
  maxTotalChars: number;
  /** Distinct calls in one attempt. */
  maxCalls: number;
  /** Highest accepted call index (indices start at 0). */
  maxCallIndex: number;
}

export type LimitName = keyof TurnLimits | 'maxEventChars' | 'maxFileBytes';

export const MiB = 1024 * 1024;

export const DEFAULT_LIMITS: Readonly<TurnLimits> = Object.freeze({
  maxArgChars: 64 * MiB,
  maxTextChars: 64 * MiB,
  maxThinkingChars: 64 * MiB,
  maxTotalChars: 128 * MiB,
  maxCalls: 10_000,
  maxCallIndex: 100_000,
});

/**
 * The longest string V8 can build (2^29 - 24 code units on 64-bit Node 20). A limit configured
 * above it (or `Infinity`) is still enforced at this length: the turn fails with the limit's name
 * instead of a `RangeError: Invalid string length` escaping from a string concatenation.
 */
export const MAX_STRING_CHARS = 2 ** 29 - 24;

/** The `StreamErrorInfo.type` of a turn ended by a limit. */
export const LIMIT_ERROR_TYPE = 'limit_exceeded';

/** Which limit was hit, its configured maximum and the value that crossed it (never contents). */
export interface LimitHit {
  limit: LimitName;
  max: number;
  /** The size or index that would have crossed the limit. */
  value: number;
  /** The call concerned, for per-call limits. */
  index?: number;
}

/** One line, e.g. "limit maxArgChars exceeded: call 0 arguments would reach 70000000 chars (max 67108864)". */
export function limitMessage(hit: LimitHit): string {
  const what: Record<LimitName, string> = {
    maxArgChars: `call ${hit.index ?? '?'} arguments would reach ${hit.value} chars`,
    maxTextChars: `text would reach ${hit.value} chars`,
    maxThinkingChars: `thinking would reach ${hit.value} chars`,
    maxTotalChars: `the turn would hold ${hit.value} chars`,
    maxCalls: `call ${hit.index ?? '?'} would be call number ${hit.value}`,
    maxCallIndex: `call index ${hit.value}`,
    maxEventChars: `an SSE event of more than ${hit.max} chars`,
    maxFileBytes: `input file of ${hit.value} bytes`,
  };
  return `limit ${hit.limit} exceeded: ${what[hit.limit]} (max ${hit.max})`;
}

/** A turn (or input) ended by a configured limit. `runTurn` rejects with it. */
export class SluiceLimitError extends Error {
  override readonly name = 'SluiceLimitError';
  readonly limit: LimitName;
  readonly max: number;
  readonly value: number;
  readonly index?: number;
  constructor(hit: LimitHit, message = limitMessage(hit)) {
    super(message);
    this.limit = hit.limit;
    this.max = hit.max;
    this.value = hit.value;
    if (hit.index !== undefined) this.index = hit.index;
  }
}

/** Defaults overridden by the given values; throws a one-line error for a value that is not a positive integer. */
export function resolveLimits(given: Partial<TurnLimits> | undefined): TurnLimits {
  const out: TurnLimits = { ...DEFAULT_LIMITS };
  if (given === undefined) return out;
  for (const key of Object.keys(DEFAULT_LIMITS) as Array<keyof TurnLimits>) {
    const v = given[key];
    if (v === undefined) continue;
    if (!(typeof v === 'number' && (Number.isSafeInteger(v) || v === Infinity) && v >= 0)) {
      throw new RangeError(`sluice: limits.${key} must be a non-negative integer (got ${String(v)})`);
    }
    out[key] = v;
  }
  return out;
}
