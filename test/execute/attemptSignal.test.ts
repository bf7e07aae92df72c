/**
 * The AbortSignal tool runs get (machines/toolCall.machine.ts `AttemptAbort`): one per attempt,
 * made when the attempt's first call opens (off the completion → runTool path), shared by every run
 * of the attempt, never aborted while they run, aborted when the turn is aborted or the attempt
 * discarded, and a fresh one for the next attempt.
 */
import type { CallResult, RunToolInput } from '../../src/calls';
import { VirtualClock } from '../../src/engine/clock';
import { TurnController } from '../../src/engine/controller';
import type { StreamEvent } from '../../src/wire/events';

interface Run {
  call: RunToolInput;
  signal: AbortSignal;
  abortedAtStart: boolean;
  finish: (r: CallResult) => void;
}

function controller(opts: { maxAttempts?: number; clock?: VirtualClock } = {}): { c: TurnController; runs: Run[] } {
  const runs: Run[] = [];
  const c = new TurnController({
    mode: 'execute',
    maxAttempts: opts.maxAttempts ?? 1,
    retryBaseMs: 10,
    clock: opts.clock,
    classify: () => ({ safe: true, needsApproval: false }),
    runTool: (call, signal) =>
      new Promise<CallResult>((resolve) => {
        runs.push({ call, signal, abortedAtStart: signal.aborted, finish: resolve });
      }),
  });
  return { c, runs };
}

/** A whole call: opened with its identity, arguments in two fragments (the second completes it). */
function call(index: number, path: string): StreamEvent[] {
  return [
    { type: 'call.identity', index, id: `call_${index}`, name: 'read_file' },
    { type: 'call.fragment', index, text: `{"path":` },
    { type: 'call.fragment', index, text: `"${path}"}` },
  ];
}

const feed = (c: TurnController, evs: StreamEvent[]): void => evs.forEach((e) => c.feed(e));

describe('tool runs share one AbortSignal per attempt', () => {
  test('every run of an attempt gets the same signal, live when it starts; calls opened after a run share it too', async () => {
    const { c, runs } = controller();
    feed(c, call(0, 'a.ts'));
    expect(runs).toHaveLength(1); // a safe call starts at its completion
    feed(c, [...call(1, 'b.ts'), { type: 'call.identity', index: 2, id: 'call_2', name: 'read_file' }]);
    runs[0]!.finish({ ok: true, content: 'a' }); // call 2 opened while 0 ran; 0 ends before 2 starts
    await Promise.resolve();
    feed(c, [{ type: 'call.fragment', index: 2, text: '{"path":"c.ts"}' }]);
    expect(runs.map((r) => r.call.index)).toEqual([0, 1, 2]);
    expect(runs.every((r) => r.signal === runs[0]!.signal)).toBe(true);
    expect(runs.some((r) => r.abortedAtStart)).toBe(false);
    feed(c, [{ type: 'finish', reason: 'tool_calls' }, { type: 'stream.end' }]);
    runs[1]!.finish({ ok: true, content: 'b' });
    runs[2]!.finish({ ok: true, content: 'c' });
    const s = await c.done;
    expect(s.outcome).toBe('done');
    expect(runs[0]!.signal.aborted).toBe(false); // nothing was stopped
  });

  test('aborting the turn aborts the running tools; an opened call that never ran leaves no live run', async () => {
    const { c, runs } = controller();
    feed(c, [...call(0, 'a.ts'), { type: 'call.identity', index: 1, id: 'call_1', name: 'read_file' }]);
    expect(runs).toHaveLength(1);
    c.abort('commit');
    expect(runs[0]!.signal.aborted).toBe(true);
    const s = await c.done;
    expect(s.outcome).toBe('aborted');
    expect(runs).toHaveLength(1); // call 1 never started
  });

  test('a discarded attempt aborts its runs; the retry runs with a new, live signal', async () => {
    const clock = new VirtualClock();
    const { c, runs } = controller({ maxAttempts: 2, clock });
    feed(c, call(0, 'a.ts'));
    expect(runs).toHaveLength(1);
    const first = runs[0]!.signal;
    c.feed({ type: 'stream.error', error: { type: 'overloaded', message: 'try again' }, retryable: true });
    expect(first.aborted).toBe(true);
    clock.advanceTo(clock.now() + 10); // the backoff
    expect(c.currentAttempt).toBe(2);
    feed(c, call(0, 'b.ts'));
    expect(runs).toHaveLength(2);
    expect(runs[1]!.signal).not.toBe(first);
    expect(runs[1]!.abortedAtStart).toBe(false);
    feed(c, [{ type: 'finish', reason: 'tool_calls' }, { type: 'stream.end' }]);
    runs[1]!.finish({ ok: true, content: 'b' });
    const s = await c.done;
    expect(s.outcome).toBe('done');
    expect(s.attempts).toBe(2);
  });
});
