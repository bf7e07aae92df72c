/**
 * A call whose arguments are not a complete JSON object when the backend finishes is never silent.
 * Default (`pass`): the client gets the call with the marker input {_sluice_malformed_call,
 * _sluice_raw_arguments}, so its own input validation tells the model, and the stop reason says
 * tool use. `drop` (the reference converter's rule): the call is left out and a text marker says
 * so. Both log `malformed_call` at warn — with the name and size, never the argument text.
 */
import { MALFORMED_KEY, MALFORMED_RAW_KEY } from '../../src/gateway/exchange';
import { chatChunk, type ScriptLine } from '../../src/gateway/scripted';
import { Collector, openaiClient, READ_FILE_CHAT_TOOL, READ_FILE_RESPONSES_TOOL, READ_FILE_TOOL, rig, type Rig, toolBlocks } from './helpers';

const SECRET = 'TOPSECRET-ARGUMENT-TEXT';
/** Call 0 is cut off (the backend still says tool_calls); call 1 is fine only when `sibling`. */
function cutCall(sibling: boolean): ScriptLine[] {
  return [
    { t: 0, data: chatChunk({ tool: { index: 0, id: 'c0', name: 'read_file', args: `{"path": "/${SECRET}` } }) },
    ...(sibling ? [{ t: 1, data: chatChunk({ tool: { index: 1, id: 'c1', name: 'read_file', args: '{"path":"/b"}' } }) }] : []),
    { t: 2, data: chatChunk({ finish: 'tool_calls' }) },
    { t: 2, data: '[DONE]' },
  ];
}
const USER = [{ role: 'user' as const, content: 'read' }];

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

function logged(rig: Rig): Record<string, unknown>[] {
  return rig.logs.filter((l) => l.msg === 'malformed_call');
}

describe('malformed calls, Anthropic SDK', () => {
  test('default pass: the call arrives with the marker input, stop_reason tool_use, a warn log without contents', async () => {
    r = await rig({ script: cutCall(false) });
    const c = new Collector(await r.client.messages.create({ model: 'm', max_tokens: 64, messages: USER, tools: [READ_FILE_TOOL], stream: true }));
    await c.done;
    expect(c.error).toBeUndefined();
    const blocks = toolBlocks(c.events);
    expect(blocks.map((b) => b.name)).toEqual(['read_file']);
    const input = JSON.parse(blocks[0]!.json) as Record<string, unknown>;
    expect(input[MALFORMED_KEY]).toMatch(/not a complete JSON object/);
    expect(input[MALFORMED_RAW_KEY]).toBe(`{"path": "/${SECRET}`);
    const md = c.events.find((e) => e.type === 'message_delta');
    expect(md?.type === 'message_delta' && md.delta.stop_reason).toBe('tool_use');
    const logs = logged(r);
    expect(logs).toEqual([expect.objectContaining({ level: 'warn', index: 0, name: 'read_file', action: 'pass', argsBytes: SECRET.length + 11 })]);
    expect(JSON.stringify(r.logs)).not.toContain(SECRET);
  });

  test('drop: the call is left out, a text marker says so, end_turn; a valid sibling still goes out', async () => {
    r = await rig({ script: cutCall(false) }, { malformedCalls: 'drop' });
    const msg = await r.client.messages.create({ model: 'm', max_tokens: 64, messages: USER, tools: [READ_FILE_TOOL] });
    expect(msg.content.filter((b) => b.type === 'tool_use')).toEqual([]);
    const text = msg.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
    expect(text).toContain('[sluice: dropped tool call "read_file" (call 0)');
    expect(text).not.toContain(SECRET);
    expect(msg.stop_reason).toBe('end_turn');
    expect(logged(r)).toEqual([expect.objectContaining({ level: 'warn', action: 'drop', name: 'read_file' })]);
    await r.close();

    r = await rig({ script: cutCall(true) }, { malformedCalls: 'drop' });
    const msg2 = await r.client.messages.create({ model: 'm', max_tokens: 64, messages: USER, tools: [READ_FILE_TOOL] });
    expect(msg2.content.map((b) => b.type)).toEqual(['text', 'tool_use']);
    expect(msg2.content[1]).toMatchObject({ type: 'tool_use', name: 'read_file', input: { path: '/b' } });
    expect(msg2.stop_reason).toBe('tool_use');
  });
});

describe('malformed calls, openai SDK', () => {
  test('chat: the marker call keeps its place before the valid sibling; finish_reason tool_calls', async () => {
    r = await rig({ script: cutCall(true) });
    const stream = await openaiClient(r.gw.url).chat.completions.create({ model: 'm', messages: USER, tools: [READ_FILE_CHAT_TOOL], stream: true });
    const calls: { index: number; name?: string; args: Record<string, unknown> }[] = [];
    let finish: string | null | undefined;
    for await (const ch of stream) {
      for (const tc of ch.choices[0]?.delta.tool_calls ?? []) calls.push({ index: tc.index, name: tc.function?.name, args: JSON.parse(tc.function!.arguments!) as Record<string, unknown> });
      finish ??= ch.choices[0]?.finish_reason;
    }
    expect(calls.map((c) => [c.index, c.name])).toEqual([
      [0, 'read_file'],
      [1, 'read_file'],
    ]);
    expect(calls[0]!.args[MALFORMED_RAW_KEY]).toBe(`{"path": "/${SECRET}`);
    expect(calls[1]!.args).toEqual({ path: '/b' });
    expect(finish).toBe('tool_calls');
  });

  test('responses: a function_call item with the marker arguments', async () => {
    r = await rig({ script: cutCall(false) });
    const res = await openaiClient(r.gw.url).responses.create({ model: 'm', input: 'read', tools: [READ_FILE_RESPONSES_TOOL] });
    const calls = res.output.flatMap((i) => (i.type === 'function_call' ? [JSON.parse(i.arguments) as Record<string, unknown>] : []));
    expect(calls.length).toBe(1);
    expect(calls[0]![MALFORMED_KEY]).toBeDefined();
  });
});
