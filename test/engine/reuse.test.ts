import { z } from 'zod';
import { TurnController } from '../../src/engine/controller';
import { runTurn } from '../../src/engine/runTurn';
import { canonicalJson, reuseKey } from '../../src/calls';
import { defineTool } from '../../src/execute/tools';
import type { HistoryMessage } from '../../src/history/types';
import { SYNTH_FORMATS, type ScriptCall, synthesizeTrace } from '../../src/trace/synth';

/**
 * Retries reuse finished safe work (issue 20, M14): when a stream fails and the turn retries, a
 * read-only call of the discarded attempt that already resulted, and that the new attempt repeats
 * with the same name and canonical arguments, gets that result instead of running again. On all
 * four synthesized wire formats, through runTurn with real tools.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function tools(runs: string[], opts: { reusable?: boolean } = {}) {
  const read = defineTool({
    name: 'read_file',
    kind: 'read',
    input: z.object({ path: z.string(), range: z.object({ from: z.number(), to: z.number() }).optional() }),
    ...(opts.reusable === false ? { reusable: false } : {}),
    run: ({ path }) => {
      runs.push(`read:${path}`);
      return `contents of ${path}`;
    },
  });
  const edit = defineTool({
    name: 'edit_file',
    kind: 'edit',
    input: z.object({ path: z.string(), text: z.string() }),
    run: ({ path }) => {
      runs.push(`edit:${path}`);
      return `edited ${path}`;
    },
  });
  return [read, edit];
}

const call = (k: number, name: string, args: Record<string, unknown>): ScriptCall => ({ name, args, openMs: 100 * k + 10, completeMs: 100 * k + 60 });

/** One attempt's payloads in `format`; `fail` stops after the calls (before the finish) with a retryable error. */
async function* attempt(format: (typeof SYNTH_FORMATS)[number], calls: ScriptCall[], fail: boolean) {
  const trace = synthesizeTrace(format, { text: 'Looking.', calls, endMs: 100 * calls.length + 50 });
  const lastComplete = Math.max(...calls.map((c) => c.completeMs));
  for (const l of trace.attempts[0]!.lines) {
    if (l.kind !== 'data') continue;
    if (fail && l.t > lastComplete) {
      await sleep(30); // the started tools result before the stream breaks
      throw Object.assign(new Error('upstream overloaded'), { status: 503 });
    }
    await sleep(2);
    yield l.data;
  }
}

const FIRST = [
  call(0, 'read_file', { path: 'a', range: { from: 1, to: 2 } }),
  call(1, 'edit_file', { path: 'c', text: 'x' }),
  call(2, 'read_file', { path: 'b' }),
];
// The retry repeats call 0 (keys in another order: the same canonical JSON) and the unsafe edit,
// and asks for another file at index 2.
const SECOND = [
  call(0, 'read_file', { range: { to: 2, from: 1 }, path: 'a' }),
  call(1, 'edit_file', { text: 'x', path: 'c' }),
  call(2, 'read_file', { path: 'B' }),
];

function results(history: HistoryMessage[]): string[] {
  const tool = history.find((m) => m.role === 'tool');
  return tool && tool.role === 'tool' ? tool.results.map((r) => r.content) : [];
}

describe.each(SYNTH_FORMATS)('result reuse on a retry (%s)', (format) => {
  async function run(policy: { reuseResults?: 'safe' | 'none' } = {}, toolOpts: { reusable?: boolean } = {}) {
    const runs: string[] = [];
    const reused: number[] = [];
    const out = await runTurn({
      format,
      stream: (n) => attempt(format, n === 1 ? FIRST : SECOND, n === 1),
      tools: tools(runs, toolOpts),
      // 'all': the unsafe edit starts mid-stream once call 0 resulted, so it too has a result to (not) reuse.
      policy: { earlyStart: 'all', retryBaseMs: 1, ...policy },
      on: { 'call.reused': (c) => reused.push(c.index) },
    });
    return { runs, reused, ...out };
  }

  test('the same read-only call is reused, different arguments and the unsafe call run again; the summary says which', async () => {
    const r = await run();
    expect(r.summary.outcome).toBe('done');
    expect(r.summary.attempts).toBe(2);
    expect(r.runs).toEqual(['read:a', 'edit:c', 'read:b', 'edit:c', 'read:B']);
    expect(r.reused).toEqual([0]);
    const second = r.summary.calls.filter((c) => c.attempt === 2);
    expect(second.map((c) => c.reused === true)).toEqual([true, false, false]);
    expect(second[0]!.startedMs).toBeUndefined(); // never ran in attempt 2
    expect(results(r.messages)).toEqual(['contents of a', 'edited c', 'contents of B']);
  });

  test("history is exactly what it is without reuse ('none' runs everything)", async () => {
    const withReuse = await run();
    const without = await run({ reuseResults: 'none' });
    expect(without.runs).toEqual(['read:a', 'edit:c', 'read:b', 'read:a', 'edit:c', 'read:B']);
    expect(without.reused).toEqual([]);
    expect(without.summary.calls.some((c) => c.reused)).toBe(false);
    expect(withReuse.messages).toEqual(without.messages);
  });

  test('a tool marked reusable: false always runs again', async () => {
    const r = await run({}, { reusable: false });
    expect(r.runs).toEqual(['read:a', 'edit:c', 'read:b', 'read:a', 'edit:c', 'read:B']);
    expect(r.reused).toEqual([]);
  });
});

describe('reuse keys', () => {
  test('canonical JSON sorts keys at every level and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: 0 }], c: null } })).toBe('{"a":{"c":null,"d":[2,{"y":0,"z":1}]},"b":1}');
    expect(reuseKey('read_file', { a: 1, b: 2 })).toBe(reuseKey('read_file', { b: 2, a: 1 }));
    expect(reuseKey('read_file', { a: 1 })).not.toBe(reuseKey('grep', { a: 1 }));
    expect(reuseKey('read_file', { a: [1, 2] })).not.toBe(reuseKey('read_file', { a: [2, 1] }));
  });

  test('a call that needs approval is not reused (it asks again), and errors are never reused', async () => {
    const runs: string[] = [];
    const evs = (fail: boolean) => {
      const e: Parameters<TurnController['feed']>[0][] = [
        { type: 'call.identity', index: 0, id: 'c0', name: 'fetch' },
        { type: 'call.fragment', index: 0, text: '{"u":1}' },
        { type: 'call.complete', index: 0 },
        { type: 'call.identity', index: 1, id: 'c1', name: 'flaky' },
        { type: 'call.fragment', index: 1, text: '{"u":2}' },
        { type: 'call.complete', index: 1 },
      ];
      return fail ? e : [...e, { type: 'finish', reason: 'tool_calls' } as const, { type: 'stream.end' } as const];
    };
    const c = new TurnController({
      mode: 'execute',
      retryBaseMs: 0,
      classify: (name) => ({ safe: true, needsApproval: name === 'fetch' }),
      runTool: (call) => {
        runs.push(`${call.name}#${call.attempt}`);
        return Promise.resolve(call.name === 'flaky' ? { ok: false, content: 'timeout' } : { ok: true, content: 'page' });
      },
    });
    c.events.on('approval.request', (r) => c.approve(r.index));
    for (const e of evs(true)) c.feed(e);
    await sleep(5);
    c.feed({ type: 'stream.error', error: { type: 'overloaded_error', message: 'x' }, retryable: true });
    await sleep(5);
    for (const e of evs(false)) c.feed(e);
    const s = await c.done;
    expect(s.outcome).toBe('done');
    expect(runs).toEqual(['fetch#1', 'flaky#1', 'fetch#2', 'flaky#2']);
    expect(s.calls.some((x) => x.reused)).toBe(false);
  });
});
