/**
 * Tool spans against the GenAI conventions, with the real OpenTelemetry SDK: `gen_ai.tool.description`
 * from the registered tool, the `exception` event on a failed tool (its type always, its message
 * only under `recordContents`), and the instrumentation scope's version (the package's).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { z } from 'zod';
import { defineTool } from '../../src/execute/tools';
import { runTurn } from '../../src/engine/runTurn';
import * as N from '../../src/telemetry/names';
import { chatTurn, play, registerOtel } from './helpers';

const otel = registerOtel();
afterAll(() => otel.shutdown());
beforeEach(() => otel.spans.reset());

const SECRET = 'SECRET-FILE-TEXT';

function tools() {
  return [
    defineTool({ name: 'read_file', description: 'Read a file of the repository.', kind: 'read', input: z.object({ path: z.string() }), run: async ({ path: p }) => `contents of ${p}` }),
    defineTool({
      name: 'grep',
      description: 'Search the repository.',
      kind: 'read',
      input: z.object({ q: z.string() }),
      run: () => {
        throw new TypeError(`cannot search: ${SECRET}`);
      },
    }),
    defineTool({ name: 'ls', kind: 'read', input: z.object({}), run: async () => 'a b c' }),
  ];
}

async function turn(recordContents: boolean): Promise<ReadableSpan[]> {
  const stream = chatTurn([
    { name: 'read_file', args: { path: 'a.ts' } },
    { name: 'grep', args: { q: 'x' } },
    { name: 'ls', args: {} },
  ]);
  const { summary } = await runTurn({ format: 'openai-chat', stream: () => play(stream), tools: tools(), telemetry: { recordContents } });
  expect(summary.outcome).toBe('done');
  return otel.spans.getFinishedSpans();
}

const tool = (spans: ReadableSpan[], name: string) => spans.find((s) => s.name === `execute_tool ${name}`)!;

describe('execute_tool spans', () => {
  test('gen_ai.tool.description when the tool has one', async () => {
    const spans = await turn(false);
    expect(tool(spans, 'read_file').attributes[N.ATTR_GEN_AI_TOOL_DESCRIPTION]).toBe('Read a file of the repository.');
    expect(tool(spans, 'grep').attributes[N.ATTR_GEN_AI_TOOL_DESCRIPTION]).toBe('Search the repository.');
    expect(tool(spans, 'ls').attributes[N.ATTR_GEN_AI_TOOL_DESCRIPTION]).toBeUndefined();
  });

  test('a failed tool: one exception event with its type, and no message without recordContents', async () => {
    const spans = await turn(false);
    const failed = tool(spans, 'grep');
    const ex = failed.events.filter((e) => e.name === N.EVENT_EXCEPTION);
    expect(ex).toHaveLength(1);
    expect(ex[0]!.attributes?.[N.ATTR_EXCEPTION_TYPE]).toBe(failed.attributes[N.ATTR_ERROR_TYPE]);
    expect(ex[0]!.attributes?.[N.ATTR_EXCEPTION_MESSAGE]).toBeUndefined();
    expect(JSON.stringify(spans.map((s) => ({ a: s.attributes, e: s.events, st: s.status })))).not.toContain(SECRET);
    for (const ok of ['read_file', 'ls']) expect(tool(spans, ok).events.some((e) => e.name === N.EVENT_EXCEPTION)).toBe(false);
  });

  test('recordContents: the exception event carries the message too', async () => {
    const spans = await turn(true);
    const ex = tool(spans, 'grep').events.find((e) => e.name === N.EVENT_EXCEPTION)!;
    expect(String(ex.attributes?.[N.ATTR_EXCEPTION_MESSAGE])).toContain(SECRET);
  });

  test("the instrumentation scope is sluice with the package's version", async () => {
    const pkg = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../package.json'), 'utf8')) as { version: string };
    expect(N.PACKAGE_VERSION).toBe(pkg.version);
    const spans = await turn(false);
    for (const s of [tool(spans, 'read_file'), spans.find((x) => x.name === N.SPAN_TURN)!]) {
      expect(s.instrumentationScope.name).toBe(N.INSTRUMENTATION_SCOPE);
      expect(s.instrumentationScope.version).toBe(pkg.version);
    }
  });
});
