/** A small deterministic PRNG (mulberry32): every run measures, and every test feeds, the same bytes. One implementation: the report's (src/report/stats.ts). */
import { seededRandom } from '../src/report/stats';

export function prng(seed: number): () => number {
  return seededRandom(seed);
}
