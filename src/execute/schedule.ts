import type { CallPhase } from '../calls';
import type { SeenIndices } from '../release/rules';

/**
 * Start decisions (SPEC §6.3–§6.5) as pure functions over the released calls.
 *
 * - A safe call starts as soon as it is released (ready), while the model still streams, unless
 *   an earlier unsafe call has not resulted, or the concurrency cap is reached.
 * - An unsafe call starts only after the stream ended with its finish (the format's terminal
 *   signal, SPEC §12: never from a stream that was cut) and every earlier call resulted; it runs
 *   alone, and every later call waits for its result.
 * - A call that needs approval never starts before it is approved; the request is raised as
 *   soon as the call is released.
 * - earlyStart 'none' holds every start until the stream ended (same rules otherwise);
 *   'all' lets an approved unsafe call start mid-stream when nothing else runs and every earlier
 *   call resulted.
 */

export type EarlyStart = 'safe' | 'none' | 'all';
export type Approval = 'not-needed' | 'unrequested' | 'pending' | 'granted' | 'denied';

export interface StartView {
  phase: CallPhase;
  safe: boolean;
  approval: Approval;
  /** Beyond the single-tool limit: not a call for scheduling. */
  suppressed?: boolean;
  /**
   * Its synthetic result is on its way: it is never started, later safe calls may go, and a later
   * unsafe call waits until the result is recorded (it counts as a running safe call).
   */
  settling?: boolean;
}

export interface StartContext {
  streamEnded: boolean;
  /**
   * The stream gave its finish (its terminal signal). An unsafe call needs it as well as the end
   * of the stream (SPEC §12); absent means finished (callers that judge the end themselves).
   */
  finished?: boolean;
  earlyStart: EarlyStart;
  maxConcurrent: number;
  /** Calls currently running. */
  running: number;
  /**
   * How many released calls still wait for their approval request (approval 'unrequested'), when
   * the caller knows. With 0 and the concurrency cap reached nothing more can happen, so the scan
   * stops early (keeps a turn with many calls linear).
   */
  unrequestedApprovals?: number;
  /** The indices seen so far: scans jump over indices that never appeared (O(calls seen)). */
  seen?: SeenIndices;
  /**
   * Decide as if `calls[assume.index]` were `assume.view` (the view the turn's pump will see once it
   * has released that call): how the controller asks, at a call's completion, whether the pump that
   * follows starts it (`readyCallStart`, machines/turn.machine.ts).
   */
  assume?: { index: number; view: StartView };
}

export interface StartDecision {
  start: number[];
  requestApproval: number[];
  /** First index that is not yet resulted (or settled); scanning can resume there. */
  frontier: number;
}

function settled(phase: CallPhase): boolean {
  return phase === 'resulted' || phase === 'discarded';
}

export function decideStarts(
  calls: ReadonlyArray<StartView | undefined>,
  frontier: number,
  ctx: StartContext,
): StartDecision {
  const start: number[] = [];
  const requestApproval: number[] = [];
  let running = ctx.running;
  let allEarlierSettled = true;
  const seen = ctx.seen;
  const assumed = ctx.assume === undefined ? -1 : ctx.assume.index;
  const assumedView = ctx.assume?.view;
  /** The next position to look at after `at`: the next seen index when known (skips gaps). */
  const step = (at: number): number => {
    if (seen === undefined) return at + 1;
    const n = seen.next(at + 1);
    return n === undefined ? calls.length : n;
  };
  let i = frontier;
  // Advance the frontier over the settled prefix. A gap stops it until the stream ends: the
  // missing index may still appear, and must not end up behind the frontier.
  while (i < calls.length) {
    const v = i === assumed ? assumedView : calls[i];
    if (v === undefined ? !ctx.streamEnded : !v.suppressed && !settled(v.phase)) break;
    i = ctx.streamEnded ? step(i) : i + 1; // before the end, stop on the next gap (O(1)), never jump it
  }
  const newFrontier = i;

  for (; i < calls.length; i = step(i)) {
    const raw = i === assumed ? assumedView : calls[i];
    if (raw === undefined || raw.suppressed || settled(raw.phase)) continue;
    const v: StartView = raw.settling ? { phase: 'running', safe: true, approval: raw.approval } : raw;
    if (v.phase !== 'released' && v.phase !== 'running') {
      // invalid calls wait for the executor's settle; anything not yet released ends the released prefix
      if (v.phase === 'invalid') {
        allEarlierSettled = false;
        continue;
      }
      break;
    }
    if (v.phase === 'released') {
      if (v.approval === 'unrequested') requestApproval.push(i);
      const approved = v.approval === 'not-needed' || v.approval === 'granted';
      if (v.safe) {
        const open = ctx.earlyStart !== 'none' || ctx.streamEnded;
        if (approved && open && running < ctx.maxConcurrent) {
          start.push(i);
          running++;
        }
      } else {
        const open = (ctx.streamEnded && ctx.finished !== false) || (ctx.earlyStart === 'all' && approved);
        if (approved && open && allEarlierSettled && running === 0) {
          start.push(i);
          running++;
        }
        // An unsafe call that has not resulted is a barrier for every later call.
        break;
      }
    } else if (!v.safe) {
      break; // an unsafe call is running: everything later waits
    }
    allEarlierSettled = false;
    if (running >= ctx.maxConcurrent && ctx.unrequestedApprovals === requestApproval.length) break;
  }
  return { start, requestApproval, frontier: newFrontier };
}
