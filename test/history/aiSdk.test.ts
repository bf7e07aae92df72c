/**
 * The AI SDK edges: `toAiSdkTools` (tool() definitions without execute, with and without `ai`'s
 * jsonSchema helper) used by the real `streamText` against a scripted OpenAI-compatible model over
 * HTTP, and `fromAiSdkMessages` (the inverse of toAiSdkMessages) on hand-written ModelMessages and
 * on the messages the real AI SDK builds when it runs tools itself.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { jsonSchema, stepCountIs, streamText, type ModelMessage } from 'ai';
import { z } from 'zod';
import { defineTool, toAiSdkTools } from '../../src/execute/tools';
import { fromAiSdkMessages, toAiSdkMessages } from '../../src/history/aiSdk';
import { checkHistory } from '../../src/history/check';
import type { HistoryMessage } from '../../src/history/types';
import { chatChunk, type RecordedRequest, type ScriptLine, type ScriptedUpstream, startScriptedUpstream } from '../../src/gateway/scripted';
import { runTurn } from '../../src/engine/runTurn';

const weather = defineTool({
  name: 'get_weather',
  description: 'Weather for a city',
  kind: 'fetch',
  input: z.object({ city: z.string() }),
  run: async ({ city }) => `sunny in ${city}`,
});

function callTurn(): ScriptLine[] {
  return [
    { t: 0, data: chatChunk({ tool: { index: 0, id: 'call_1', name: 'get_weather', args: '{"city":"Paris"}' } }) },
    { t: 5, data: chatChunk({ finish: 'tool_calls' }) },
    { t: 5, data: '[DONE]' },
  ];
}
function textTurn(): ScriptLine[] {
  return [{ t: 0, data: chatChunk({ content: 'It is sunny.' }) }, { t: 5, data: chatChunk({ finish: 'stop' }) }, { t: 5, data: '[DONE]' }];
}
const lastIsTool = (req: RecordedRequest): boolean => {
  const msgs = (req.body as { messages?: { role: string }[] }).messages ?? [];
  return msgs[msgs.length - 1]?.role === 'tool';
};

let upstream: ScriptedUpstream;
beforeAll(async () => {
  upstream = await startScriptedUpstream({ script: (req) => (lastIsTool(req) ? textTurn() : callTurn()) });
});
afterAll(async () => upstream?.close());

describe('toAiSdkTools', () => {
  test('shape: keyed by name, description, object JSON Schema, no execute', () => {
    const plain = toAiSdkTools([weather]);
    expect(Object.keys(plain)).toEqual(['get_weather']);
    const spec = plain.get_weather!;
    expect(spec.description).toBe('Weather for a city');
    expect('execute' in spec).toBe(false);
    expect(spec.inputSchema.jsonSchema).toMatchObject({ type: 'object', properties: { city: { type: 'string' } } });
    // The AI SDK recognises the schema object by its registered symbol.
    expect((spec.inputSchema as unknown as Record<symbol, unknown>)[Symbol.for('vercel.ai.schema')]).toBe(true);
    const typed = toAiSdkTools([weather], jsonSchema);
    expect(typed.get_weather!.inputSchema.jsonSchema).toEqual(spec.inputSchema.jsonSchema);
  });

  test.each([
    ['with ai’s jsonSchema helper', () => toAiSdkTools([weather], jsonSchema)],
    // Without the helper the objects are typed structurally; the AI SDK accepts them at run time.
    ['plain objects (no helper)', () => toAiSdkTools([weather]) as unknown as ReturnType<typeof toAiSdkTools<ReturnType<typeof jsonSchema>>>],
  ])('streamText sends the schema, stops after one step, sluice runs the call (%s)', async (_name, make) => {
    const before = upstream.requests.length;
    const model = createOpenAICompatible({ name: 'local', baseURL: upstream.url, apiKey: 'local' }).chatModel('scripted');
    const history: HistoryMessage[] = [{ role: 'user', content: 'Weather in Paris?' }];
    const { messages, summary } = await runTurn({
      format: 'ai-sdk',
      stream: () => streamText({ model, messages: toAiSdkMessages(history), tools: make(), maxRetries: 0 }).fullStream,
      tools: [weather],
    });
    expect(summary.outcome).toBe('done');
    const reqs = upstream.requests.slice(before);
    expect(reqs).toHaveLength(1); // no execute → the AI SDK did not loop
    const sent = (reqs[0]!.body as { tools: { function: { name: string; description: string; parameters: Record<string, unknown> } }[] }).tools;
    expect(sent[0]!.function).toMatchObject({ name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } });
    expect(messages[1]).toEqual({ role: 'tool', results: [{ callId: 'call_1', name: 'get_weather', ok: true, content: 'sunny in Paris' }] });
  });
});

describe('fromAiSdkMessages', () => {
  const history: HistoryMessage[] = [
    { role: 'user', content: 'hi' },
    { role: 'assistant', content: 'let me look', thinking: 'hmm', thinkingSignature: 'sig-1', calls: [{ id: 'c1', name: 'read', input: { path: 'a' } }, { id: 'c2', name: 'read', input: { path: 'b' } }] },
    { role: 'tool', results: [{ callId: 'c1', name: 'read', ok: true, content: 'A' }, { callId: 'c2', name: 'read', ok: false, content: 'no such file' }] },
    { role: 'assistant', content: 'done', calls: [] },
  ];

  test('inverts toAiSdkMessages (with thinking and its signature)', () => {
    expect(fromAiSdkMessages(toAiSdkMessages(history, { thinking: 'include' }))).toEqual(history);
    const noThinking = history.map((m) => (m.role === 'assistant' ? { role: m.role, content: m.content, calls: m.calls } : m));
    expect(fromAiSdkMessages(toAiSdkMessages(history))).toEqual(noThinking);
  });

  test('every tool-result output kind; string content; skipped parts are reported', () => {
    const warnings: string[] = [];
    const msgs: ModelMessage[] = [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image', image: new URL('https://example.com/x.png') }] },
      {
        role: 'assistant',
        content: [
          { type: 'tool-call', toolCallId: 'a', toolName: 't', input: { n: 1 } },
          { type: 'tool-call', toolCallId: 'b', toolName: 't', input: {} },
          { type: 'tool-call', toolCallId: 'c', toolName: 't', input: {} },
          { type: 'tool-call', toolCallId: 'd', toolName: 't', input: {} },
          { type: 'tool-call', toolCallId: 'e', toolName: 't', input: {} },
          { type: 'tool-call', toolCallId: 'ws', toolName: 'web_search', input: {}, providerExecuted: true },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'a', toolName: 't', output: { type: 'json', value: { ok: 1 } } },
          { type: 'tool-result', toolCallId: 'b', toolName: 't', output: { type: 'error-json', value: { code: 2 } } },
          { type: 'tool-result', toolCallId: 'c', toolName: 't', output: { type: 'content', value: [{ type: 'text', text: 'x' }, { type: 'text', text: 'y' }] } },
          { type: 'tool-result', toolCallId: 'd', toolName: 't', output: { type: 'execution-denied', reason: 'user said no' } },
          { type: 'tool-result', toolCallId: 'e', toolName: 't', output: { type: 'error-text', value: 'boom' } },
          { type: 'tool-result', toolCallId: 'ws', toolName: 'web_search', output: { type: 'json', value: [] } },
        ],
      },
      { role: 'assistant', content: 'ok' },
    ];
    const h = fromAiSdkMessages(msgs, { onWarning: (w) => warnings.push(w) });
    expect(h[0]).toEqual({ role: 'user', content: 'look' });
    expect(h[1]).toMatchObject({ role: 'assistant', calls: [{ id: 'a', input: { n: 1 } }, { id: 'b' }, { id: 'c' }, { id: 'd' }, { id: 'e' }] });
    expect(h[2]).toEqual({
      role: 'tool',
      results: [
        { callId: 'a', name: 't', ok: true, content: '{"ok":1}' },
        { callId: 'b', name: 't', ok: false, content: '{"code":2}' },
        { callId: 'c', name: 't', ok: true, content: 'x\ny' },
        { callId: 'd', name: 't', ok: false, content: 'user said no' },
        { callId: 'e', name: 't', ok: false, content: 'boom' },
      ],
    });
    expect(h[3]).toEqual({ role: 'assistant', content: 'ok', calls: [] });
    expect(checkHistory(h).violations).toEqual([]);
    expect(warnings).toEqual([
      'message 1 part 1: image skipped',
      'message 2 part 5: tool-call (provider-executed) skipped',
      'message 3 part 5: tool-result skipped',
    ]);
  });

  test('bad input never throws', () => {
    const warnings: string[] = [];
    const h = fromAiSdkMessages([null, 3, { role: 'wizard' }, { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'x', toolName: 'y', input: '[' }] }], {
      onWarning: (w) => warnings.push(w),
    });
    expect(h).toEqual([{ role: 'assistant', content: '', calls: [{ id: 'x', name: 'y', input: {} }] }]);
    expect(warnings).toHaveLength(4);
  });

  test('the messages the real AI SDK builds when it runs the tools itself import as valid history', async () => {
    const model = createOpenAICompatible({ name: 'local', baseURL: upstream.url, apiKey: 'local' }).chatModel('scripted');
    const result = streamText({
      model,
      prompt: 'Weather in Paris?',
      tools: { get_weather: { ...toAiSdkTools([weather], jsonSchema).get_weather!, execute: async ({ city }: { city: string }) => `sunny in ${city}` } },
      stopWhen: stepCountIs(3),
      maxRetries: 0,
    });
    await result.consumeStream();
    const { messages } = await result.response;
    const h = fromAiSdkMessages(messages);
    expect(h).toEqual([
      { role: 'assistant', content: '', calls: [{ id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }] },
      { role: 'tool', results: [{ callId: 'call_1', name: 'get_weather', ok: true, content: 'sunny in Paris' }] },
      { role: 'assistant', content: 'It is sunny.', calls: [] },
    ]);
  });
});
