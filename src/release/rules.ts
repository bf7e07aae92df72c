import type { CallPhase } from '../calls';

/**
 * Release decisions (SPEC §5.2, §5.5, §5.6) as pure functions over a view of the calls, so tests
 * can call them directly and the turn machine stays a readable statechart.
 *
 * The frontier is the index of the first call the ordered prefix has not passed yet; everything
 * before it is released, suppressed or judged invalid. Scanning resumes from the frontier, so a
 * turn with n calls costs O(n) over its whole life, not O(n) per event.
 */

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
  }
  return { release, suppress, frontier: i };
}
