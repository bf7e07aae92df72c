/** The shadow-mode simulation (src/execute/shadow.ts): the 'safe' start rules over real durations. */
import { postStreamOfTurn, shadowOfTurn, simulateSafeStarts } from '../../src/execute/shadow';

const sim = (calls: Parameters<typeof simulateSafeStarts>[0]['calls'], streamEndMs: number, actualEndMs: number, maxConcurrent = 10) =>
  simulateSafeStarts({ calls, streamEndMs, actualEndMs, maxConcurrent });

describe('simulateSafeStarts', () => {
  test('safe calls start when ready; an unsafe call waits for the stream end and every earlier result', () => {
    const r = sim(
      [
        { index: 0, readyMs: 100, safe: true, durationMs: 300 },
        { index: 1, readyMs: 200, safe: true, durationMs: 1000 },
        { index: 2, readyMs: 300, safe: false, durationMs: 50 },
      ],
      500,
      2850, // post-stream: 500+300, then +1000 (concurrently: 500..1500), then 1500..1550 — whatever the real run took
    );
    expect([...r.startMs]).toEqual([
      [0, 100],
      [1, 200],
      [2, 1200],
    ]);
    expect(r.endMs).toBe(1250);
    expect(r.savedMs).toBe(1600);
  });

  test('a safe call after an unsafe one waits for its result (barrier); starts keep index order', () => {
    const r = sim(
      [
        { index: 0, readyMs: 10, safe: false, durationMs: 100 },
        { index: 1, readyMs: 20, safe: true, durationMs: 10 },
      ],
      50,
      0,
    );
    expect(r.startMs.get(0)).toBe(50);
    expect(r.startMs.get(1)).toBe(150);
    expect(r.savedMs).toBe(0); // never negative
  });

  test('the concurrency cap delays a safe call to the first free slot', () => {
    const r = sim(
      [
        { index: 0, readyMs: 0, safe: true, durationMs: 100 },
        { index: 1, readyMs: 0, safe: true, durationMs: 40 },
        { index: 2, readyMs: 10, safe: true, durationMs: 10 },
      ],
      500,
      600,
      2,
    );
    expect(r.startMs.get(2)).toBe(40);
  });

  test('a call that never ran (denied, unknown tool) holds nothing up and gets no start', () => {
    const r = sim(
      [
        { index: 0, readyMs: 5, safe: false },
        { index: 1, readyMs: 10, safe: true, durationMs: 20 },
      ],
      100,
      120,
    );
    expect(r.startMs.has(0)).toBe(false);
    expect(r.startMs.get(1)).toBe(10);
  });
});

describe('shadowOfTurn', () => {
  test('reads safety and approvals from the trace of the last attempt; a turn whose stream did not end has none', () => {
    const turn = {
      streamEndMs: 400,
      attempts: 2,
      calls: [
        { index: 0, attempt: 1, releasedMs: 5, startedMs: 6, resultMs: 7 }, // discarded attempt: ignored
        { index: 0, attempt: 2, releasedMs: 100, startedMs: 400, resultMs: 700 },
        { index: 1, attempt: 2, releasedMs: 150, startedMs: 700, resultMs: 720 },
      ],
      trace: [
        { t: 100, kind: 'released' as const, attempt: 2, index: 0, safe: true },
        { t: 150, kind: 'released' as const, attempt: 2, index: 1, safe: true },
        { t: 250, kind: 'approved' as const, attempt: 2, index: 1 },
      ],
    };
    const r = shadowOfTurn(turn, 10)!;
    expect(r.startMs.get(0)).toBe(100);
    expect(r.startMs.get(1)).toBe(250);
    expect(r.endMs).toBe(400);
    expect(r.savedMs).toBe(320);
    expect(shadowOfTurn({ ...turn, streamEndMs: undefined }, 10)).toBeUndefined();
  });

  test('postStreamOfTurn: an early-start turn, replayed with every start held to the stream end', () => {
    const turn = {
      streamEndMs: 400,
      attempts: 1,
      calls: [
        { index: 0, attempt: 1, releasedMs: 100, startedMs: 100, resultMs: 400 },
        { index: 1, attempt: 1, releasedMs: 150, startedMs: 400, resultMs: 450 },
      ],
      trace: [
        { t: 100, kind: 'released' as const, attempt: 1, index: 0, safe: true },
        { t: 150, kind: 'released' as const, attempt: 1, index: 1, safe: false },
      ],
    };
    // Post-stream: call 0 runs 400..700, the unsafe call 1 after it, 700..750; really it ended at 450.
    expect(postStreamOfTurn(turn, 10)).toEqual({ endMs: 750, savedMs: 300 });
  });
});
