import type { CallPhase } from '../calls';

/**
 * Release decisions (SPEC §5.2, §5.5, §5.6) as pure functions over a view of the calls, so tests
 * can call them directly and the turn machine stays a readable statechart.
 *
 * The frontier is the index of the first call the ordered prefix has not passed yet; everything
 * before it is released, suppressed or judged invalid. Scanning resumes from the frontier, so a
 * turn with n calls costs O(n) over its whole life, not O(n) per event.
 */

/**
 * The call indices seen in one attempt, ascending. Call indices come from the wire and may be
 * sparse (`index: 1000000000` after `index: 0`): every scan walks this set instead of counting up
 * to the highest index, so release and start decisions cost O(calls seen), never O(highest index).
 * Adding is O(1) for the usual ascending arrival and O(n) for a lower index that arrives late.
 */
export class CallIndexSet implements Iterable<number> {
  private readonly sorted: number[] = [];

  get size(): number {
    return this.sorted.length;
  }

  /** Every index from 0 to the highest one seen is there (no gap to jump: a scan may step by one). */
  get dense(): boolean {
    const n = this.sorted.length;
    return n === 0 || this.sorted[n - 1] === n - 1;
  }

  add(index: number): void {
    const a = this.sorted;
    const n = a.length;
    if (n === 0 || a[n - 1]! < index) {
      a.push(index);
      return;
    }
    const at = this.lowerBound(index);
    if (a[at] !== index) a.splice(at, 0, index);
  }

  /** The smallest seen index ≥ `index`, or undefined when there is none. */
  next(index: number): number | undefined {
    return this.sorted[this.lowerBound(index)];
  }

  [Symbol.iterator](): Iterator<number> {
    return this.sorted[Symbol.iterator]();
  }

  /** Seen indices ≥ `from`, ascending. */
  *from(from: number): IterableIterator<number> {
    const a = this.sorted;
    for (let k = this.lowerBound(from); k < a.length; k++) yield a[k]!;
  }

  /** First position whose value is ≥ index. */
  private lowerBound(index: number): number {
    const a = this.sorted;
    let lo = 0;
    let hi = a.length;
    if (hi > 0 && a[0]! >= index) return 0;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (a[mid]! < index) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** What the scans need from a `CallIndexSet`: the next seen index at or after a position. */
export interface SeenIndices {
  next(index: number): number | undefined;
}

export interface ReleaseView {
  phase: CallPhase;
  /** Already suppressed by the single-tool limit. */
  suppressed?: boolean;
}

export interface ReleaseContext {
  /**
   * The stream has ended. Until then an index that has not appeared yet (a gap, or a lower index
   * that arrives after a higher one) is a barrier too; at the end of the stream it is no call.
   */
  streamEnded: boolean;
  /** `disable_parallel_tool_use` / `parallel_tool_calls: false`: at most one released call. */
  singleTool: boolean;
  /** Calls released so far in this attempt. */
  released: number;
  /**
   * The indices seen so far. With it a scan jumps over indices that never appeared (after the
   * end of the stream) instead of walking them one by one: O(calls seen), not O(highest index).
   */
  seen?: SeenIndices;
}

export interface ReleaseDecision {
  /** Indices to release now, in order. */
  release: number[];
  /** Indices that are ready but fall beyond the single-tool limit. */
  suppress: number[];
  /** The new frontier. */
  frontier: number;
}

/** Phases that no longer hold the ordered-prefix barrier. */
export function passesBarrier(v: ReleaseView | undefined, streamEnded = false): boolean {
  if (v === undefined) return streamEnded; // a missing index may still appear until the stream ends
  if (v.suppressed) return true;
  switch (v.phase) {
    case 'released':
    case 'running':
    case 'resulted':
    case 'invalid':
    case 'discarded':
      return true;
    default:
      return false;
  }
}

export function decideReleases(
  calls: ReadonlyArray<ReleaseView | undefined>,
  frontier: number,
  ctx: ReleaseContext,
): ReleaseDecision {
  const release: number[] = [];
  const suppress: number[] = [];
  let released = ctx.released;
  let i = frontier;
  for (; i < calls.length; i++) {
    const v = calls[i];
    if (v !== undefined && v.phase === 'emittable' && !v.suppressed) {
      if (ctx.singleTool && released >= 1) {
        suppress.push(i);
      } else {
        release.push(i);
        released++;
      }
      continue;
    }
    if (!passesBarrier(v, ctx.streamEnded)) break; // a pending earlier call is a barrier for every later one
    if (v === undefined && ctx.seen !== undefined) {
      // A gap after the end of the stream: jump to the next index that appeared.
      const n = ctx.seen.next(i + 1);
      i = (n === undefined ? calls.length : n) - 1;
    }
  }
  return { release, suppress, frontier: i };
}
