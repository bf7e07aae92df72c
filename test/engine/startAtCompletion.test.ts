import type { CallResult, Classification, RunToolInput } from '../../src/calls';
import { settleMicrotasks, VirtualClock } from '../../src/engine/clock';
import { type ControllerOptions, TurnController } from '../../src/engine/controller';
import { checkTrace } from '../../src/history/check';
import type { StreamEvent } from '../../src/wire/events';
import { end, finish, frag, id } from './helpers';

/**
 * Issue 20 goal 2: a ready call that the turn's pump releases and starts as it hears of it has its
 * tool invoked inside the `feed()` of its completing event, before the machine steps that follow
 * (`readyCallStart`, TurnController.startAtCompletion); the call actor adopts that run. Everything
 * else (barriers, approvals, unsafe calls, run hooks, inspected turns) keeps the usual order.
 */

const SAFE: Classification = { safe: true, needsApproval: false };
const byName: Record<string, Classification> = {
  read_file: SAFE,
  edit_file: { safe: false, needsApproval: false },
  ask: { safe: true, needsApproval: true },
};

/** A turn whose log interleaves controller events and tool invocations, in the order they happen. */
function turn(opts: ControllerOptions = {}) {
  const log: string[] = [];
  const runs: RunToolInput[] = [];
  const classified: string[] = [];
  const resolvers: Array<(r: CallResult) => void> = [];
  const c = new TurnController({
    mode: 'execute',
    clock: new VirtualClock(),
    classify: (name) => {
      classified.push(name);
      return byName[name] ?? SAFE;
    },
    runTool: (call) => {
      log.push(`run ${call.index}`);
      runs.push(call);
      return new Promise((resolve) => resolvers.push(resolve));
    },
    ...opts,
  });
  c.events.on('call.released', (t) => log.push(`released ${t.index}`));
  c.events.on('tool.start', (t) => log.push(`start ${t.index}`));
  c.events.on('warning', (w) => log.push(`warning ${w.code}`));
  const feed = (evs: StreamEvent[]) => {
    for (const e of evs) c.feed(e);
  };
  const finishAll = async () => {
    for (const r of resolvers) r({ ok: true, content: 'ok' });
    await settleMicrotasks();
  };
  return { c, log, runs, classified, feed, finishAll };
}

const call = (i: number, name: string): StreamEvent[] => [id(i, `c${i}`, name), frag(i, `{"path":"f${i}"}`)];

test('a safe call ready at the frontier runs inside its completing feed, before the turn tells the controller', async () => {
  const t = turn();
  t.feed([id(0, 'c0', 'read_file'), frag(0, '{"path":')]);
  expect(t.log).toEqual([]);
  t.c.feed(frag(0, '"a.ts"}')); // closes the object: completion is inferred here
  expect(t.log).toEqual(['run 0', 'released 0', 'start 0']);
  expect(t.runs).toEqual([{ index: 0, attempt: 1, callId: 'c0', name: 'read_file', input: { path: 'a.ts' } }]);
  expect(t.classified).toEqual(['read_file']); // the embedder's classifier runs once per call
  t.feed(call(1, 'read_file'));
  t.feed([finish(), end]);
  await t.finishAll();
  const s = await t.c.done;
  expect(s.outcome).toBe('done');
  expect(t.runs.map((r) => r.index)).toEqual([0, 1]); // each tool ran once
  expect(s.calls.map((x) => x.state)).toEqual(['resulted', 'resulted']);
  expect(s.history[1]).toMatchObject({ role: 'tool', results: [{ callId: 'c0', ok: true }, { callId: 'c1', ok: true }] });
  expect(t.log.filter((l) => l.startsWith('warning'))).toEqual([]);
});

test('the abort signal is the attempt\'s: discarding the attempt aborts a run started at completion', async () => {
  const signals: AbortSignal[] = [];
  const t = turn({
    maxAttempts: 2,
    retryBaseMs: 0,
    runTool: (_call, signal) => {
      signals.push(signal);
      return new Promise(() => undefined);
    },
  });
  t.feed(call(0, 'read_file'));
  expect(signals).toHaveLength(1);
  expect(signals[0]!.aborted).toBe(false);
  t.c.feed({ type: 'stream.error', error: { type: 'overloaded', message: 'busy' }, retryable: true });
  expect(signals[0]!.aborted).toBe(true);
});

test('behind a pending earlier call, an unsafe call or an approval the call takes the usual way', async () => {
  // Call 1 completes while call 0 is still streaming: released only with call 0, not at its completion.
  const a = turn();
  a.feed([id(0, 'c0', 'read_file'), frag(0, '{"path":'), ...call(1, 'read_file')]);
  expect(a.log).toEqual([]);
  a.c.feed(frag(0, '"x"}'));
  expect(a.log).toEqual(['run 0', 'released 0', 'released 1', 'start 0', 'start 1', 'run 1']); // call 0 at its completion, call 1 the usual way

  // An unsafe call released before: nothing later starts mid-stream.
  const b = turn();
  b.feed([...call(0, 'edit_file'), ...call(1, 'read_file')]);
  expect(b.log).toEqual(['released 0', 'released 1']);

  // A call that needs approval is released, never started before its approval.
  const c = turn();
  c.feed(call(0, 'ask'));
  expect(c.log).toEqual(['released 0']);
  c.c.approve(0);
  expect(c.log).toEqual(['released 0', 'start 0', 'run 0']);
  expect(c.classified).toEqual(['ask']);
});

test('at the concurrency cap the next call waits for a result', async () => {
  const t = turn({ maxConcurrent: 1 });
  t.feed(call(0, 'read_file'));
  t.feed(call(1, 'read_file'));
  expect(t.log).toEqual(['run 0', 'released 0', 'start 0', 'released 1']);
  await t.finishAll();
  expect(t.log.slice(4)).toEqual(['start 1', 'run 1']);
});

test('with a run hook (a journaled turn) the hook still runs after the release and the start are told', () => {
  const t = turn();
  t.c.setRunHook((c, signal, run) => {
    t.log.push(`hook ${c.index}`);
    return run(c, signal);
  });
  t.feed(call(0, 'read_file'));
  expect(t.log).toEqual(['released 0', 'start 0', 'hook 0', 'run 0']);
});

test('an inspected turn keeps the usual order (the inspector sees every step before the run)', () => {
  const t = turn({ inspect: () => undefined });
  t.feed(call(0, 'read_file'));
  expect(t.log).toEqual(['released 0', 'start 0', 'run 0']);
});

test('earlyStart none holds the start until the stream ended', () => {
  const t = turn({ earlyStart: 'none' });
  t.feed(call(0, 'read_file'));
  expect(t.log).toEqual(['released 0']);
  t.feed([finish(), end]);
  expect(t.log).toEqual(['released 0', 'start 0', 'run 0']);
});

test('a runner that throws at once gives an error result, as on the usual way', async () => {
  const t = turn({
    runTool: () => {
      throw new Error('boom');
    },
  });
  t.feed([...call(0, 'read_file'), finish(), end]);
  await settleMicrotasks();
  const s = await t.c.done;
  expect(s.calls[0]!.result).toEqual({ ok: false, content: 'boom' });
});

describe('a tool that calls back into the controller as it is invoked gets what it got on the usual way', () => {
  /** The same turn started at completion and the usual way (an inspected turn takes the usual way). */
  async function both(act: (c: TurnController, call: RunToolInput) => void) {
    const out = [];
    for (const inspect of [undefined, () => undefined]) {
      const signals: AbortSignal[] = [];
      const c: TurnController = new TurnController({
        mode: 'execute',
        clock: new VirtualClock(),
        classify: () => SAFE,
        ...(inspect ? { inspect } : {}),
        runTool: (call, signal) => {
          signals.push(signal);
          act(c, call);
          return new Promise((resolve) => signal.addEventListener('abort', () => resolve({ ok: false, content: 'aborted' })));
        },
      });
      const warnings: string[] = [];
      c.events.on('warning', (w) => warnings.push(w.code));
      c.feed(call(0, 'read_file')[0]!);
      c.feed(call(0, 'read_file')[1]!);
      c.feed(finish());
      c.feed(end);
      await settleMicrotasks();
      const s = await c.done;
      out.push({ outcome: s.outcome, history: s.history, states: s.calls.map((x) => x.state), aborted: signals.map((x) => x.aborted), warnings, trace: s.trace.map((e) => e.kind) });
    }
    expect(out[0]).toEqual(out[1]);
    return out[0]!;
  }

  test('abort (commit): the call is in the message with its interrupted result, its signal fired', async () => {
    const r = await both((c) => c.abort('commit'));
    expect(r.outcome).toBe('aborted');
    expect(r.aborted).toEqual([true]);
    expect(r.history[1]).toMatchObject({ results: [{ callId: 'c0', synthetic: 'interrupted' }] });
  });

  test('abort (drop): nothing of the turn is left, the signal fired', async () => {
    const r = await both((c) => c.abort('drop'));
    expect(r.outcome).toBe('dropped');
    expect(r.aborted).toEqual([true]);
  });

  test('a stream error fed from the tool: the turn fails and the run is aborted', async () => {
    const r = await both((c, x) => {
      if (x.attempt === 1) c.feed({ type: 'stream.error', error: { type: 'overloaded', message: 'busy' }, retryable: false });
    });
    expect(r.outcome).toBe('failed');
    expect(r.aborted).toEqual([true]);
  });
});

test('ready, released and started are when the tool was invoked (the turn decided all three then), not when the turn told of them', async () => {
  const clock = new VirtualClock();
  const c = new TurnController({
    mode: 'execute',
    clock,
    classify: () => SAFE,
    runTool: () => {
      clock.advanceTo(clock.now() + 7); // the tool's own synchronous part takes 7 ms
      return Promise.resolve({ ok: true, content: 'ok' });
    },
  });
  clock.advanceTo(100);
  for (const e of [...call(0, 'read_file'), finish(), end]) c.feed(e);
  await settleMicrotasks();
  const s = await c.done;
  expect(s.calls[0]).toMatchObject({ completeMs: 100, readyMs: 100, releasedMs: 100, startedMs: 100, resultMs: 107 });
  expect(s.trace.filter((e) => e.index === 0).map((e) => [e.kind, e.t])).toEqual([['ready', 100], ['released', 100], ['started', 100], ['resulted', 107]]);
  expect(checkTrace(s.trace).warnings).toEqual([]); // times never decrease
});

test('a classifier that throws fails the way it always did (inside the turn), not out of feed()', () => {
  const seen: Array<{ threw: boolean; runs: number; status: string }> = [];
  for (const inspect of [undefined, () => undefined]) {
    let runs = 0;
    const c = new TurnController({
      mode: 'execute',
      clock: new VirtualClock(),
      classify: () => {
        throw new Error('classifier bug');
      },
      ...(inspect ? { inspect } : {}),
      runTool: () => {
        runs++;
        return Promise.resolve({ ok: true, content: 'ok' });
      },
    });
    c.actor.subscribe({ error: () => undefined }); // the turn actor's error is observed, not thrown globally
    let threw = false;
    try {
      for (const e of call(0, 'read_file')) c.feed(e);
    } catch {
      threw = true;
    }
    seen.push({ threw, runs, status: c.actor.getSnapshot().status });
  }
  expect(seen[0]).toEqual(seen[1]);
  expect(seen[0]!.runs).toBe(0);
});

test('a tool started inside a machine step that feeds a completion: that call takes the usual way and runs once', async () => {
  const runs: number[] = [];
  const clock = new VirtualClock();
  const c: TurnController = new TurnController({
    mode: 'execute',
    clock,
    classify: (name) => byName[name] ?? SAFE,
    runTool: (x) => {
      runs.push(x.index);
      // Call 0 starts when it is approved (inside the turn's step): it feeds call 1's closing fragment.
      if (x.index === 0) c.feed(frag(1, '"b"}'));
      return Promise.resolve({ ok: true, content: 'ok' });
    },
  });
  const warnings: string[] = [];
  c.events.on('warning', (w) => warnings.push(w.code));
  for (const e of [...call(0, 'ask'), id(1, 'c1', 'read_file'), frag(1, '{"path":')]) c.feed(e);
  c.approve(0);
  for (const e of [finish(), end]) c.feed(e);
  await settleMicrotasks();
  const s = await c.done;
  expect(runs).toEqual([0, 1]);
  expect(s.calls.map((x) => x.state)).toEqual(['resulted', 'resulted']);
  expect(warnings).toEqual([]);
});
