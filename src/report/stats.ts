/**
 * The report's statistics: medians and a percentile bootstrap with a fixed seed, so the same
 * inputs give the same interval on every run and every machine.
 *
 * A bootstrap resample of n sorted values is drawn as n counts over their indices (no copy, no
 * sort): its median is found by walking the counts, O(n) per resample. The number of resamples
 * shrinks for very large groups (at least 200) so that a day of logs is summarised in seconds.
 */

/** Resamples for a group of n values: 1000, fewer when n is large (never under 200). */
export function resamplesFor(n: number): number {
  return Math.max(200, Math.min(1000, Math.floor(50_000_000 / Math.max(1, n))));
}

/** The seed of every interval in the report (any fixed value does; this one is documented). */
export const BOOTSTRAP_SEED = 0x5eed_2026;

/** mulberry32: a small, fast, seeded generator of uniform numbers in [0, 1). */
export function seededRandom(seed = BOOTSTRAP_SEED): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The median of sorted values (the mean of the middle two for an even count). */
export function medianSorted(sorted: ArrayLike<number>): number | undefined {
  const n = sorted.length;
  if (n === 0) return undefined;
  const mid = n >> 1;
  return n % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function sortedCopy(values: readonly number[]): Float64Array {
  return Float64Array.from(values).sort();
}

/** The median of one resample of `sorted` (drawn with `rand`), using `counts` as scratch. */
function resampleMedian(sorted: Float64Array, counts: Uint32Array, rand: () => number): number {
  const n = sorted.length;
  counts.fill(0);
  for (let i = 0; i < n; i++) counts[Math.floor(rand() * n)]!++;
  // Ranks (0-based) of the middle value(s) of the resample.
  const lo = (n - 1) >> 1;
  const hi = n >> 1;
  let seen = 0;
  let loValue: number | undefined;
  for (let i = 0; i < n; i++) {
    seen += counts[i]!;
    if (loValue === undefined && seen > lo) loValue = sorted[i]!;
    if (seen > hi) return (loValue! + sorted[i]!) / 2;
  }
  return sorted[n - 1]!;
}

export interface Interval {
  low: number;
  high: number;
  /** The interval's coverage (0.95). */
  level: number;
  resamples: number;
}

function percentileOf(sorted: Float64Array, q: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.round(q * (sorted.length - 1))));
  return sorted[i]!;
}

/**
 * A percentile bootstrap interval (level 0.95) of `stat` over resamples of one or more groups:
 * each group is resampled on its own, `stat` gets the resample's median of each group.
 */
export function bootstrapMedians(groups: readonly Float64Array[], stat: (medians: number[]) => number, level = 0.95): Interval | undefined {
  if (groups.some((g) => g.length === 0)) return undefined;
  const rand = seededRandom();
  const b = resamplesFor(Math.max(...groups.map((g) => g.length)));
  const scratch = groups.map((g) => new Uint32Array(g.length));
  const out = new Float64Array(b);
  for (let k = 0; k < b; k++) out[k] = stat(groups.map((g, i) => resampleMedian(g, scratch[i]!, rand)));
  out.sort();
  return { low: percentileOf(out, (1 - level) / 2), high: percentileOf(out, 1 - (1 - level) / 2), level, resamples: b };
}
