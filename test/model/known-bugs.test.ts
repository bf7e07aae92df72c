import { checkTrace } from '../../src/history/check';
import { newStats, replayPath } from './harness';
import { traceViolations } from './invariants';
import type { ModelPath } from './paths';
import { graphFor } from './run';
import type { ModelEvent } from './turnModel';

/**
 * Minimal reproductions of SUT bugs found by the model-based tests (listed in KNOWN_BUGS in
 * run.ts, where their failures are tolerated until fixed). Each is `test.failing`: it passes while
 * the bug is there and starts failing once it is fixed — then make it a plain `test` and remove the
 * KNOWN_BUGS entry.
 */

/** The model path for `events` (each event must be enabled in turn). */
function pathOf(n: number, events: ModelEvent[]): ModelPath {
  const g = graphFor(n);
  let v = 0;
  const steps = events.map((ev) => {
    const e = g.out[v]!.find((x) => JSON.stringify(g.edges[x]!.event) === JSON.stringify(ev));
    if (e === undefined) throw new Error(`not enabled: ${JSON.stringify(ev)}`);
    v = g.edges[e]!.to;
    return { event: ev, state: g.states[v]!, edge: e };
  });
  return { steps };
}

async function replayStrict(events: ModelEvent[]) {
  const g = graphFor(2);
  // No known-bug tolerance: every violation fails the replay.
  return replayPath(pathOf(2, events), g.initial, newStats());
}

describe('settling-counts-as-resulted (machines/turn.machine.ts `pump`)', () => {
  // Expected (SPEC §6.4, I5): an unsafe call starts only after every earlier call has resulted.
  // Actual: `pump` builds the start views with `phase: v.settling ? 'resulted' : v.phase`, so a
  // call whose synthetic result was only *sent* (call.settle for denied / invalid_input / problem
  // / suppressed) already counts as resulted; the later unsafe tool starts (tool.start, trace
  // `started`) before the earlier call's result is recorded (tool.result, trace `resulted`).
  // Suggested fix: treat a settling call like an invalid one in the start views
  // (`phase: v.settling ? 'invalid' : v.phase`): not startable, holds later unsafe calls, and the
  // child's `resulted` report runs `pump` again.

  test.failing('denied approval: the later unsafe tool must not start before the denial is recorded', async () => {
    const f = await replayStrict([
      { type: 'OPEN', i: 0, kind: 'ask', late: false },
      { type: 'OPEN', i: 1, kind: 'unsafe', late: false },
      { type: 'END' },
      { type: 'DENY', i: 0 },
    ]);
    expect(f).toBeUndefined();
  });

  test.failing('invalid call (no identity by end of stream): the later unsafe tool must not start before its error result', async () => {
    const f = await replayStrict([
      { type: 'OPEN', i: 0, kind: 'safe', late: true },
      { type: 'OPEN', i: 1, kind: 'unsafe', late: false },
      { type: 'END' },
    ]);
    expect(f).toBeUndefined();
  });

  test('the checkers see it: the library checkTrace flags the denial case, the suite checker both', async () => {
    // Documents which checker catches which form (so a fix is verified by both).
    const { TurnHarness } = await import('./harness');
    const h = new TurnHarness(newStats());
    const path = pathOf(2, [
      { type: 'OPEN', i: 0, kind: 'ask', late: false },
      { type: 'OPEN', i: 1, kind: 'unsafe', late: false },
      { type: 'END' },
      { type: 'DENY', i: 0 },
    ]);
    let prev = graphFor(2).initial;
    for (const st of path.steps) {
      await h.send(st.event, prev, st.state);
      prev = st.state;
    }
    const trace = h.controller.traceLog;
    const mine = traceViolations(trace).map((v) => v.message);
    const lib = checkTrace(trace).violations.map((v) => v.message);
    if (mine.length === 0) {
      // Fixed: both must agree.
      expect(lib).toEqual([]);
    } else {
      expect(mine.join('\n')).toMatch(/synthetic denied result was recorded late/);
      expect(lib.join('\n')).toMatch(/unsafe call started before earlier call\(s\) 0 resulted/);
    }
  });
});
