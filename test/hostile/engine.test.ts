/**
 * Hostile input and overload on the engine (issue 11, engine half): nothing crashes, nothing
 * freezes, nothing hangs. Sizes are scaled down here (small configured limits); the real sizes
 * (a 512 MB argument, index 1e9 through runTurn) run in `npm run test:hostile-heavy`
 * (engine-heavy.test.ts, SLUICE_HEAVY=1).
 */
import { z } from 'zod';
import { TurnController, type TurnSummary } from '../../src/engine/controller';
import { SluiceLimitError } from '../../src/engine/limits';
import { limitErrorOf, runTurn, TurnLimitError } from '../../src/engine/runTurn';
import { defineTool } from '../../src/execute/tools';
import type { OutputEvent } from '../../src/release/output';
import type { StreamEvent } from '../../src/wire/events';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const base = { id: 'x', object: 'chat.completion.chunk', created: 0, model: 'm' };
const chunk = (delta: unknown, finish_reason: string | null = null) => ({ ...base, choices: [{ index: 0, delta, finish_reason }] });
const callChunk = (index: number, args: string, name?: string) =>
  chunk({ tool_calls: [{ index, ...(name ? { id: `call_${index}`, type: 'function' } : {}), function: { ...(name ? { name } : {}), arguments: args } }] });

function readTool(onRun?: (path: string) => void) {
  return defineTool({
    name: 'read_file',
    kind: 'read',
    input: z.object({ path: z.string() }),
    run: async ({ path }) => {
      onRun?.(path);
      return `contents of ${path}`;
    },
  });
}

function driveController(events: StreamEvent[], limits?: ConstructorParameters<typeof TurnController>[0]) {
  const c = new TurnController(limits);
  const out: OutputEvent[] = [];
  c.events.on('output', (e) => out.push(e));
  for (const e of events) c.feed(e);
  return { c, out };
}

const ident = (index: number, name = 'read_file'): StreamEvent => ({ type: 'call.identity', index, id: `call_${index}`, name });
const frag = (index: number, text: string): StreamEvent => ({ type: 'call.fragment', index, text });
const end: StreamEvent = { type: 'stream.end' };

describe('call index 1e9: O(calls seen), never O(highest index)', () => {
  test('controller with a raised index limit: both calls released in order, fast', async () => {
    const t0 = Date.now();
    const { c, out } = driveController(
      [ident(0), frag(0, '{"path":"a"}'), ident(1e9), frag(1e9, '{"path":"b"}'), { type: 'finish', reason: 'tool_calls' }, end],
      { limits: { maxCallIndex: 2e9 } },
    );
    const summary = await c.done;
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(summary.outcome).toBe('done');
    expect(out.filter((e) => e.type === 'tool_use').map((e) => (e.type === 'tool_use' ? e.index : -1))).toEqual([0, 1e9]);
    expect(out.at(-1)).toMatchObject({ type: 'end', released: 2 });
  });

  test('the gap is a barrier until the stream ends', () => {
    const { out } = driveController([ident(1e9), frag(1e9, '{"path":"b"}'), { type: 'call.complete', index: 1e9 }], {
      limits: { maxCallIndex: 2e9 },
    });
    expect(out.some((e) => e.type === 'tool_use')).toBe(false);
  });

  test('default limit: index 1e9 ends the turn with a limit_exceeded error, at once', async () => {
    const { c, out } = driveController([ident(0), frag(0, '{"path":"a"}'), ident(1e9), frag(1e9, '{}'), end]);
    const summary = await c.done;
    expect(summary.outcome).toBe('failed');
    expect(summary.limit).toMatchObject({ limit: 'maxCallIndex', value: 1e9, max: 100_000 });
    const err = out.find((e) => e.type === 'error');
    expect(err).toMatchObject({ type: 'error', error: { type: 'limit_exceeded' } });
    expect(err?.type === 'error' && err.error.message).toMatch(/^limit maxCallIndex exceeded: call index 1000000000 \(max 100000\)$/);
  });

  test('runTurn with a raised index limit: calls at 0 and 1e9 run, history in order, fast', async () => {
    const ran: string[] = [];
    const t0 = Date.now();
    const { messages, summary } = await runTurn({
      format: 'openai-chat',
      stream: [callChunk(0, '{"path":"a"}', 'read_file'), callChunk(1e9, '{"path":"b"}', 'read_file'), chunk({}, 'tool_calls'), '[DONE]'],
      tools: [readTool((p) => ran.push(p))],
      limits: { maxCallIndex: 2e9 },
    });
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(summary.outcome).toBe('done');
    expect(ran.sort()).toEqual(['a', 'b']);
    const tool = messages[1];
    expect(tool?.role === 'tool' && tool.results.map((r) => r.callId)).toEqual(['call_0', 'call_1000000000']);
  });

  test('runTurn, default limits: index 1e9 fails the turn (resolves) naming maxCallIndex', async () => {
    const { summary } = await runTurn({
      format: 'openai-chat',
      stream: [callChunk(1e9, '{"path":"b"}', 'read_file'), chunk({}, 'tool_calls'), '[DONE]'],
      tools: [readTool()],
    });
    expect(summary.outcome).toBe('failed');
    expect(summary.error?.type).toBe('limit_exceeded');
    expect(summary.limit).toMatchObject({ limit: 'maxCallIndex', value: 1e9 });
    const err = limitErrorOf(summary);
    expect(err).toBeInstanceOf(TurnLimitError);
    expect(err).toBeInstanceOf(SluiceLimitError);
  });

  test('negative and fractional indices end the turn with maxCallIndex too', async () => {
    for (const bad of [-1, 1.5, Number.NaN]) {
      const { c } = driveController([ident(bad), end]);
      expect((await c.done).limit?.limit).toBe('maxCallIndex');
    }
  });
});

describe('size limits end that turn with a clean error; the controller lives on', () => {
  async function overArg(limits: Record<string, number>, events: StreamEvent[]): Promise<{ summary: TurnSummary; out: OutputEvent[]; c: TurnController }> {
    const { c, out } = driveController(events, { limits });
    return { summary: await c.done, out, c };
  }
  const piece = 'x'.repeat(64 * 1024);
  const bigArg = (index: number, kib: number): StreamEvent[] => {
    const ev: StreamEvent[] = [ident(index), frag(index, '{"path":"')];
    for (let i = 0; i < kib / 64; i++) ev.push(frag(index, piece));
    ev.push(frag(index, '"}'));
    return ev;
  };

  test('per-call arguments (maxArgChars)', async () => {
    const { summary, out, c } = await overArg({ maxArgChars: 1024 * 1024 }, [...bigArg(0, 2048), end]);
    expect(summary.outcome).toBe('failed');
    expect(summary.limit).toMatchObject({ limit: 'maxArgChars', max: 1024 * 1024, index: 0 });
    expect(summary.error).toEqual({ type: 'limit_exceeded', message: expect.stringMatching(/^limit maxArgChars exceeded: call 0 arguments would reach \d+ chars \(max 1048576\)$/) });
    expect(out.filter((e) => e.type === 'error')).toHaveLength(1);
    expect(out.some((e) => e.type === 'tool_use' || e.type === 'end')).toBe(false);
    // Nothing of the giant argument is kept: the summary reports sizes, never contents, and the
    // controller released the attempt's buffers at the hit (memory returns to baseline).
    expect(JSON.stringify(summary).length).toBeLessThan(10_000);
    const internals = c as unknown as { slots: Map<number, { buf: { length: number } }>; text: string; heldChars: number };
    expect([...internals.slots.values()].map((s) => s.buf.length)).toEqual([0]);
    expect(internals.heldChars).toBe(0);
    // Later input is ignored without a throw.
    expect(() => c.feed(frag(0, 'more'))).not.toThrow();
  });

  test('text, thinking and the per-attempt total', async () => {
    const text = (t: string): StreamEvent => ({ type: 'text.delta', text: t });
    const think = (t: string): StreamEvent => ({ type: 'thinking.delta', text: t });
    const a = await overArg({ maxTextChars: 100 }, [text('a'.repeat(60)), text('b'.repeat(60)), end]);
    expect(a.summary.limit).toMatchObject({ limit: 'maxTextChars', value: 120, max: 100 });
    expect(a.out.filter((e) => e.type === 'text')).toHaveLength(1);
    const b = await overArg({ maxThinkingChars: 100 }, [think('a'.repeat(101)), end]);
    expect(b.summary.limit).toMatchObject({ limit: 'maxThinkingChars' });
    const t = await overArg({ maxTotalChars: 150 }, [text('a'.repeat(60)), think('b'.repeat(60)), ident(0), frag(0, '{"path":"' + 'c'.repeat(40) + '"}'), end]);
    expect(t.summary.limit).toMatchObject({ limit: 'maxTotalChars', max: 150 });
  });

  test('call count (maxCalls)', async () => {
    const ev: StreamEvent[] = [];
    for (let i = 0; i < 5; i++) ev.push(ident(i), frag(i, '{"path":"p"}'));
    const { summary } = await overArg({ maxCalls: 3 }, [...ev, end]);
    expect(summary.limit).toMatchObject({ limit: 'maxCalls', max: 3, value: 4, index: 3 });
  });

  test('under the limits nothing changes', async () => {
    const { summary, out } = await overArg({ maxArgChars: 4 * 1024 * 1024 }, [...bigArg(0, 1024), { type: 'finish', reason: 'tool_calls' }, end]);
    expect(summary.outcome).toBe('done');
    expect(out.some((e) => e.type === 'tool_use')).toBe(true);
  });

  test('runTurn resolves with the limit as a failed turn; the next turn runs normally', async () => {
    const args = '{"path":"' + 'x'.repeat(300_000) + '"}';
    const stream = [callChunk(0, '', 'read_file'), ...Array.from({ length: 10 }, (_, i) => callChunk(0, args.slice(i * 30_001, (i + 1) * 30_001))), chunk({}, 'tool_calls'), '[DONE]'];
    const failed = await runTurn({ format: 'openai-chat', stream, tools: [readTool()], limits: { maxArgChars: 100_000 } });
    expect(failed.summary).toMatchObject({ outcome: 'failed', limit: { limit: 'maxArgChars' }, error: { type: 'limit_exceeded', message: expect.stringMatching(/^limit maxArgChars exceeded/) } });
    expect(failed.messages).toEqual([]);
    const ok = await runTurn({ format: 'openai-chat', stream, tools: [readTool()] });
    expect(ok.summary.outcome).toBe('done');
  });

  test('a bad limit value is a one-line RangeError', () => {
    expect(() => new TurnController({ limits: { maxArgChars: -1 } })).toThrow(/^sluice: limits.maxArgChars must be a non-negative integer \(got -1\)$/);
  });
});

describe('abort wins over every pending await', () => {
  /** A stream that sends one chunk, then never another (and ignores return()). */
  function stalled(first: unknown[]): AsyncIterable<unknown> {
    return {
      [Symbol.asyncIterator]() {
        let i = 0;
        return {
          next: () => (i < first.length ? Promise.resolve({ value: first[i++], done: false }) : new Promise<IteratorResult<unknown>>(() => undefined)),
        };
      },
    };
  }

  test('a stalled stream: runTurn returns promptly after the abort', async () => {
    const ac = new AbortController();
    const p = runTurn({ format: 'openai-chat', stream: stalled([chunk({ content: 'hi' })]), tools: [readTool()], signal: ac.signal });
    await sleep(30);
    const t0 = Date.now();
    ac.abort();
    const r = await p;
    expect(Date.now() - t0).toBeLessThan(500);
    expect(r.summary.outcome).toBe('aborted');
  });

  test('a stalled stream after a released call: the call gets an interrupted result (commit)', async () => {
    const ac = new AbortController();
    const hang = defineTool({ name: 'read_file', kind: 'read', input: z.object({ path: z.string() }), run: () => new Promise<string>(() => undefined) });
    const p = runTurn({ format: 'openai-chat', stream: stalled([callChunk(0, '{"path":"a"}', 'read_file'), callChunk(1, '{"pa', 'read_file')]), tools: [hang], signal: ac.signal });
    await sleep(50);
    const t0 = Date.now();
    ac.abort();
    const { messages } = await p;
    expect(Date.now() - t0).toBeLessThan(500);
    const tool = messages[1];
    expect(tool?.role === 'tool' && tool.results.map((r) => r.synthetic)).toEqual(['interrupted']);
  });

  test('a stream factory that never resolves', async () => {
    const ac = new AbortController();
    const p = runTurn({ format: 'openai-chat', stream: () => new Promise<never>(() => undefined), tools: [], signal: ac.signal });
    await sleep(20);
    const t0 = Date.now();
    ac.abort();
    await p;
    expect(Date.now() - t0).toBeLessThan(500);
  });

  test('an approval callback that never answers', async () => {
    const ac = new AbortController();
    const deploy = defineTool({ name: 'deploy', kind: 'execute', needsApproval: true, input: z.object({}), run: async () => 'deployed' });
    let asked = 0;
    const p = runTurn({
      format: 'openai-chat',
      stream: [callChunk(0, '{}', 'deploy'), chunk({}, 'tool_calls'), '[DONE]'],
      tools: [deploy],
      approve: () => {
        asked++;
        return new Promise<boolean>(() => undefined);
      },
      signal: ac.signal,
    });
    await sleep(50);
    expect(asked).toBe(1);
    const t0 = Date.now();
    ac.abort();
    const { messages } = await p;
    expect(Date.now() - t0).toBeLessThan(500);
    const tool = messages[1];
    expect(tool?.role === 'tool' && tool.results[0]?.synthetic).toBe('interrupted');
  });

  test('retry backoff', async () => {
    const ac = new AbortController();
    const p = runTurn({
      format: 'openai-chat',
      stream: () => ({
        [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(Object.assign(new Error('overloaded'), { status: 529 })) }),
      }),
      tools: [],
      policy: { retryBaseMs: 60_000, maxAttempts: 3 },
      signal: ac.signal,
    });
    await sleep(30);
    const t0 = Date.now();
    ac.abort();
    const r = await p;
    expect(Date.now() - t0).toBeLessThan(500);
    expect(r.summary.outcome).toBe('dropped');
  });
});

describe('default tool timeout', () => {
  const never = defineTool({ name: 'read_file', kind: 'read', input: z.object({ path: z.string() }), run: () => new Promise<string>(() => undefined) });
  const stream = () => [callChunk(0, '{"path":"a"}', 'read_file'), chunk({}, 'tool_calls'), '[DONE]'];

  test('a tool that never settles gets a timeout result (policy.toolTimeoutMs)', async () => {
    const t0 = Date.now();
    const { messages } = await runTurn({ format: 'openai-chat', stream: stream(), tools: [never], policy: { toolTimeoutMs: 80 } });
    expect(Date.now() - t0).toBeLessThan(1000);
    const tool = messages[1];
    expect(tool?.role === 'tool' && tool.results[0]).toMatchObject({ ok: false, synthetic: 'timeout', content: 'Tool read_file timed out after 80 ms.' });
  });

  test("a tool's own timeoutMs wins over the turn's", async () => {
    const own = defineTool({ name: 'read_file', kind: 'read', timeoutMs: 40, input: z.object({ path: z.string() }), run: () => new Promise<string>(() => undefined) });
    const { messages } = await runTurn({ format: 'openai-chat', stream: stream(), tools: [own], policy: { toolTimeoutMs: 60_000 } });
    const tool = messages[1];
    expect(tool?.role === 'tool' && tool.results[0]?.content).toBe('Tool read_file timed out after 40 ms.');
  });

  test('toolTimeoutMs: a bad value is a one-line RangeError', async () => {
    await expect(runTurn({ format: 'openai-chat', stream: stream(), tools: [never], policy: { toolTimeoutMs: -5 } })).rejects.toThrow(
      /^sluice: policy.toolTimeoutMs must be a non-negative number of ms \(got -5\)$/,
    );
  });
});

describe('the pure decisions over sparse indices (CallIndexSet)', () => {
  // Imported here so the describe blocks above read as the user-level cases.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { CallIndexSet, decideReleases } = require('../../src/release/rules') as typeof import('../../src/release/rules');
  const { decideStarts } = require('../../src/execute/schedule') as typeof import('../../src/execute/schedule');
  /* eslint-enable @typescript-eslint/no-require-imports */

  test('CallIndexSet keeps indices ascending and answers next() for seen and unseen positions', () => {
    const s = new CallIndexSet();
    for (const i of [5, 1e9, 0, 7, 5, 3]) s.add(i);
    expect([...s]).toEqual([0, 3, 5, 7, 1e9]);
    expect(s.size).toBe(5);
    expect(s.next(0)).toBe(0);
    expect(s.next(1)).toBe(3);
    expect(s.next(8)).toBe(1e9);
    expect(s.next(1e9 + 1)).toBeUndefined();
    expect([...s.from(4)]).toEqual([5, 7, 1e9]);
  });

  test('decideReleases / decideStarts on indices 0 and 1e9: fast, and the gap holds until the stream ends', () => {
    const calls: Array<{ phase: 'emittable' | 'released'; safe: boolean; approval: 'not-needed' } | undefined> = [];
    calls[0] = { phase: 'emittable', safe: true, approval: 'not-needed' };
    calls[1e9] = { phase: 'emittable', safe: true, approval: 'not-needed' };
    const seen = new CallIndexSet();
    seen.add(0);
    seen.add(1e9);
    const t0 = Date.now();
    const open = decideReleases(calls, 0, { streamEnded: false, singleTool: false, released: 0, seen });
    expect(open).toEqual({ release: [0], suppress: [], frontier: 1 });
    const ended = decideReleases(calls, 1, { streamEnded: true, singleTool: false, released: 1, seen });
    expect(ended.release).toEqual([1e9]);
    expect(ended.frontier).toBe(1e9 + 1);
    calls[0]!.phase = 'released';
    calls[1e9]!.phase = 'released';
    const st = decideStarts(calls, 0, { streamEnded: true, earlyStart: 'safe', maxConcurrent: 10, running: 0, seen });
    expect(st.start).toEqual([0, 1e9]);
    expect(Date.now() - t0).toBeLessThan(200);
  });

  test('the start frontier stops at a gap until the stream ends (a late lower index is still started)', () => {
    const calls: Array<{ phase: 'resulted' | 'streaming' | 'released'; safe: boolean; approval: 'not-needed' } | undefined> = [];
    calls[0] = { phase: 'resulted', safe: true, approval: 'not-needed' };
    calls[2] = { phase: 'streaming', safe: true, approval: 'not-needed' };
    const seen = new CallIndexSet();
    seen.add(0);
    seen.add(2);
    const before = decideStarts(calls, 0, { streamEnded: false, earlyStart: 'safe', maxConcurrent: 10, running: 0, seen });
    expect(before.frontier).toBe(1);
    // Index 1 arrives late and is released: the next scan (from the frontier) starts it.
    calls[1] = { phase: 'released', safe: true, approval: 'not-needed' };
    seen.add(1);
    expect(decideStarts(calls, before.frontier, { streamEnded: false, earlyStart: 'safe', maxConcurrent: 10, running: 0, seen }).start).toEqual([1]);
  });
});

describe('warnings stay bounded', () => {
  test('a warning per chunk: all are emitted, the summary keeps the first 1,000 and says so', async () => {
    const { MAX_KEPT_WARNINGS } = await import('../../src/engine/controller');
    const c = new TurnController();
    let emitted = 0;
    c.events.on('warning', () => emitted++);
    for (let i = 0; i < 5000; i++) c.feed({ type: 'warning', code: 'bad_json', message: 'SSE data is not JSON (3 chars); ignored' });
    c.feed(end);
    const summary = await c.done;
    expect(emitted).toBe(5000);
    expect(summary.warnings).toHaveLength(MAX_KEPT_WARNINGS + 1);
    expect(summary.warnings.at(-1)!.code).toBe('warnings_truncated');
  });
});
