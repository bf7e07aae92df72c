/**
 * The real sizes of issue 11 (engine half), behind SLUICE_HEAVY=1: `npm run test:hostile-heavy`.
 * A 512 MiB argument through the controller (default limits, then with the limit turned off: V8's
 * string ceiling is enforced as the limit instead of a RangeError), index 1e9 through runTurn, and
 * the memory a 200 MiB argument leaves behind. The default set runs the scaled-down versions in
 * engine.test.ts.
 */
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { z } from 'zod';
import { TurnController } from '../../src/engine/controller';
import { MAX_STRING_CHARS } from '../../src/engine/limits';
import { runTurn } from '../../src/engine/runTurn';
import { defineTool } from '../../src/execute/tools';
import type { StreamEvent } from '../../src/wire/events';

const HEAVY = process.env.SLUICE_HEAVY === '1';
const heavy = HEAVY ? describe : describe.skip;
jest.setTimeout(300_000);

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

function heapMB(): number {
  gc();
  gc();
  const m = process.memoryUsage();
  return (m.heapUsed + m.external) / 1e6;
}

/** Feed `mib` MiB of argument text to call 0 in 1 MiB fragments, then end the stream. */
async function feedArgument(c: TurnController, mib: number) {
  const piece = 'x'.repeat(1024 * 1024);
  c.feed({ type: 'call.identity', index: 0, id: 'call_0', name: 'read_file' });
  c.feed({ type: 'call.fragment', index: 0, text: '{"path":"' });
  for (let i = 0; i < mib; i++) c.feed({ type: 'call.fragment', index: 0, text: piece });
  c.feed({ type: 'call.fragment', index: 0, text: '"}' });
  const end: StreamEvent = { type: 'stream.end' };
  c.feed(end);
  return c.done;
}

heavy('heavy hostile input (SLUICE_HEAVY=1)', () => {
  test('512 MiB argument, default limits: the turn fails with maxArgChars, the process lives, memory returns', async () => {
    const base = heapMB();
    const c = new TurnController();
    const errors: string[] = [];
    c.events.on('output', (e) => {
      if (e.type === 'error') errors.push(e.error.type);
    });
    const summary = await feedArgument(c, 512);
    expect(summary.outcome).toBe('failed');
    expect(summary.limit).toMatchObject({ limit: 'maxArgChars', max: 64 * 1024 * 1024, index: 0 });
    expect(errors).toEqual(['limit_exceeded']);
    expect(heapMB() - base).toBeLessThan(50);
  });

  test('512 MiB argument with maxArgChars and maxTotalChars turned off: V8’s string ceiling is the limit, no RangeError', async () => {
    const c = new TurnController({ limits: { maxArgChars: Infinity, maxTotalChars: Infinity } });
    const summary = await feedArgument(c, 512);
    expect(summary.outcome).toBe('failed');
    expect(summary.limit).toMatchObject({ limit: 'maxArgChars', max: MAX_STRING_CHARS });
  });

  test('a 200 MiB argument under a raised limit is released; once the turn is dropped nothing giant is retained', async () => {
    const base = heapMB();
    const run = async () => {
      const c = new TurnController({ limits: { maxArgChars: 256 * 1024 * 1024, maxTotalChars: 256 * 1024 * 1024 } });
      let released = 0;
      c.events.on('output', (e) => {
        if (e.type === 'tool_use') released++;
      });
      const summary = await feedArgument(c, 200);
      return { outcome: summary.outcome, released, argsChars: summary.calls[0]!.argsChars };
    };
    const r = await run();
    expect(r).toEqual({ outcome: 'done', released: 1, argsChars: 200 * 1024 * 1024 + 11 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(heapMB() - base).toBeLessThan(50);
  });

  test('index 1e9 through runTurn (maxCallIndex raised): done in well under a second of CPU, both calls run', async () => {
    const base = { id: 'x', object: 'chat.completion.chunk', created: 0, model: 'm' };
    const chunk = (delta: unknown, finish_reason: string | null = null) => ({ ...base, choices: [{ index: 0, delta, finish_reason }] });
    const call = (index: number, path: string) => chunk({ tool_calls: [{ index, id: `call_${index}`, type: 'function', function: { name: 'read_file', arguments: JSON.stringify({ path }) } }] });
    const ran: string[] = [];
    const read = defineTool({ name: 'read_file', kind: 'read', input: z.object({ path: z.string() }), run: async ({ path }) => (ran.push(path), 'ok') });
    const t0 = process.cpuUsage();
    const { summary } = await runTurn({
      format: 'openai-chat',
      stream: [call(0, 'a'), call(1e9, 'b'), chunk({}, 'tool_calls'), '[DONE]'],
      tools: [read],
      limits: { maxCallIndex: 2e9 },
    });
    const cpu = process.cpuUsage(t0);
    expect(summary.outcome).toBe('done');
    expect(ran.sort()).toEqual(['a', 'b']);
    expect((cpu.user + cpu.system) / 1000).toBeLessThan(1000);
  });
});

if (!HEAVY) {
  test('heavy hostile cases are skipped (run npm run test:hostile-heavy)', () => {
    expect(HEAVY).toBe(false);
  });
}
