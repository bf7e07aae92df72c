import { checkTrace } from '../../src/history/check';
import { newStats, replayPath } from './harness';
import { traceViolations } from './invariants';
import { pathOfEvents } from './paths';
import type { ModelEvent } from './turnModel';

/**
 * Regression tests for SUT bugs found by the model-based tests. While a bug is open it is listed
 * in KNOWN_BUGS (run.ts: its failures are tolerated and counted) and reproduced here with
 * `test.failing`; once fixed, the reproduction becomes a plain test like the ones below.
 */

async function replayStrict(events: ModelEvent[]) {
  const { initial, path } = pathOfEvents(2, events);
  // No known-bug tolerance: every violation fails the replay.
  return replayPath(path, initial, newStats());
}

describe('settling-counts-as-resulted (machines/turn.machine.ts `pump`; fixed in b8c847f)', () => {
  // Was: `pump` built the start views with `phase: v.settling ? 'resulted' : v.phase`, so a call
  // whose synthetic result was only *sent* (call.settle for denied / invalid_input / problem /
  // suppressed) already counted as resulted, and a later unsafe tool started (tool.start, trace
  // `started`) before the earlier call's result was recorded (SPEC §6.4, I5). Found on 48 of the
  // 4,695 N = 2 edge-covering paths.

  test('denied approval: the later unsafe tool must not start before the denial is recorded', async () => {
    const f = await replayStrict([
      { type: 'OPEN', i: 0, kind: 'ask', late: false },
      { type: 'OPEN', i: 1, kind: 'unsafe', late: false },
      { type: 'FINISH' }, // the stream finished (SPEC §12: an END without it is a cut stream)
      { type: 'END' },
      { type: 'DENY', i: 0 },
    ]);
    expect(f).toBeUndefined();
  });

  test('invalid call (no identity by end of stream): the later unsafe tool must not start before its error result', async () => {
    const f = await replayStrict([
      { type: 'OPEN', i: 0, kind: 'safe', late: true },
      { type: 'OPEN', i: 1, kind: 'unsafe', late: false },
      { type: 'FINISH' }, // the stream finished (SPEC §12: an END without it is a cut stream)
      { type: 'END' },
    ]);
    expect(f).toBeUndefined();
  });

  test('both checkers agree the fixed trace is clean (the library checkTrace caught the denial form, the suite checker both)', async () => {
    const { TurnHarness } = await import('./harness');
    const h = new TurnHarness(newStats());
    const { initial, path } = pathOfEvents(2, [
      { type: 'OPEN', i: 0, kind: 'ask', late: false },
      { type: 'OPEN', i: 1, kind: 'unsafe', late: false },
      { type: 'FINISH' }, // the stream finished (SPEC §12: an END without it is a cut stream)
      { type: 'END' },
      { type: 'DENY', i: 0 },
    ]);
    let prev = initial;
    for (const st of path.steps) {
      await h.send(st.event, prev, st.state);
      prev = st.state;
    }
    const trace = h.controller.traceLog;
    expect(traceViolations(trace)).toEqual([]);
    expect(checkTrace(trace).violations).toEqual([]);
    // The unsafe call started after the denial was recorded.
    const kinds = trace.filter((e) => e.kind === 'resulted' || e.kind === 'started').map((e) => `${e.kind}#${e.index}`);
    expect(kinds.slice(0, 2)).toEqual(['resulted#0', 'started#1']);
  });
});
