/**
 * The agent loops users copy (examples/agent/) run end to end against a scripted model over real
 * HTTP on 127.0.0.1: turn 1 streams two read-only tool calls that sluice runs, turn 2 — whose
 * request must carry both results — answers in text and the loop stops. The histories the loops build pass checkHistory.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { runAgent as anthropicAgent } from '../../examples/agent/anthropic';
import { runAgent as openaiAgent } from '../../examples/agent/openai';
import { runAgent as aiSdkAgent } from '../../examples/agent/ai-sdk';
import { type RecordedRequest, type ScriptLine, type ScriptedUpstream, startScriptedUpstream } from '../../src/gateway/scripted';
import { checkHistory } from '../../src/history/check';

const NOTE = 'the launch is on Friday';

/** Anthropic SSE frame (the SDK needs the `event:` line). */
const a = (t: number, data: Record<string, unknown>): ScriptLine => ({ t, raw: `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n` });

function anthropicTurn(final: boolean): ScriptLine[] {
  const start = a(0, { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'scripted', content: [], stop_reason: null, usage: { input_tokens: 10, output_tokens: 1 } } });
  if (final) {
    return [
      start,
      a(5, { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
      a(10, { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: `The note says: ${NOTE}.` } }),
      a(15, { type: 'content_block_stop', index: 0 }),
      a(20, { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 9 } }),
      a(20, { type: 'message_stop' }),
    ];
  }
  const tool = (index: number, id: string, name: string, json: string, t: number): ScriptLine[] => [
    a(t, { type: 'content_block_start', index, content_block: { type: 'tool_use', id, name, input: {} } }),
    a(t + 5, { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: json } }),
    a(t + 10, { type: 'content_block_stop', index }),
  ];
  return [
    start,
    ...tool(0, 'toolu_read', 'read_file', '{"path":"notes.txt"}', 5),
    ...tool(1, 'toolu_list', 'list_dir', '{"path":"."}', 150),
    a(300, { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 30 } }),
    a(300, { type: 'message_stop' }),
  ];
}

/** OpenAI chat chunks. */
const c = (t: number, delta: Record<string, unknown>, finish: string | null = null): ScriptLine => ({
  t,
  data: { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'scripted', choices: [{ index: 0, delta, finish_reason: finish }] },
});

function chatTurn(final: boolean): ScriptLine[] {
  if (final) return [c(0, { role: 'assistant', content: `The note says: ${NOTE}.` }), c(10, {}, 'stop'), { t: 10, data: '[DONE]' }];
  const call = (index: number, id: string, name: string, args: string) => ({ tool_calls: [{ index, id, type: 'function', function: { name, arguments: args } }] });
  return [
    c(0, { role: 'assistant', content: null }),
    c(5, call(0, 'call_read', 'read_file', '{"path":"notes.txt"}')),
    c(150, call(1, 'call_list', 'list_dir', '{"path":"."}')),
    c(300, {}, 'tool_calls'),
    { t: 300, data: '[DONE]' },
  ];
}

/** Has the conversation in this request already got tool results? */
function hasResults(req: RecordedRequest): boolean {
  const body = req.body as { messages?: { role: string; content?: unknown }[] };
  const last = body.messages?.[body.messages.length - 1];
  if (last?.role === 'tool') return true;
  return Array.isArray(last?.content) && (last.content as { type?: string }[]).some((b) => b.type === 'tool_result');
}

let model: ScriptedUpstream;
let root: string;

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-agent-'));
  fs.writeFileSync(path.join(root, 'notes.txt'), NOTE);
  model = await startScriptedUpstream({
    script: (req) => (req.url.includes('/chat/completions') ? chatTurn(hasResults(req)) : anthropicTurn(hasResults(req))),
  });
});

afterAll(async () => {
  await model?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

/** The two requests of one loop: the second carries both tool results, the file's text among them. */
function checkRequests(reqs: RecordedRequest[]): void {
  expect(reqs).toHaveLength(2);
  const second = JSON.stringify(reqs[1]!.body);
  expect(second).toContain(NOTE);
  expect(second).toContain('notes.txt'); // list_dir's result
}

describe('examples/agent', () => {
  const origin = () => model.url.replace(/\/v1$/, '');

  test('Anthropic SDK loop: two turns, tools run by sluice, valid history', async () => {
    const before = model.requests.length;
    const r = await anthropicAgent({ prompt: 'What does the note say?', root, baseURL: origin() });
    expect(r.turns).toBe(2);
    expect(r.answer).toBe(`The note says: ${NOTE}.`);
    expect(checkHistory(r.history).violations).toEqual([]);
    checkRequests(model.requests.slice(before));
  });

  test('OpenAI SDK loop (chat completions): two turns, valid history', async () => {
    const before = model.requests.length;
    const r = await openaiAgent({ prompt: 'What does the note say?', root, baseURL: model.url });
    expect(r.turns).toBe(2);
    expect(r.answer).toBe(`The note says: ${NOTE}.`);
    expect(checkHistory(r.history).violations).toEqual([]);
    checkRequests(model.requests.slice(before));
  });

  test('AI SDK loop (@ai-sdk/anthropic): two turns, valid history', async () => {
    const before = model.requests.length;
    const r = await aiSdkAgent({ prompt: 'What does the note say?', root, baseURL: model.url });
    expect(r.turns).toBe(2);
    expect(r.answer).toBe(`The note says: ${NOTE}.`);
    expect(checkHistory(r.history).violations).toEqual([]);
    checkRequests(model.requests.slice(before));
  });

  test('AI SDK loop over an OpenAI-compatible provider: the same loop, another provider', async () => {
    const before = model.requests.length;
    const languageModel = createOpenAICompatible({ name: 'local', baseURL: model.url, apiKey: 'local' }).chatModel('scripted');
    const r = await aiSdkAgent({ prompt: 'What does the note say?', root, languageModel });
    expect(r.turns).toBe(2);
    expect(r.answer).toBe(`The note says: ${NOTE}.`);
    checkRequests(model.requests.slice(before));
  });
});
