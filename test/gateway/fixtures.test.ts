/**
 * Recorded OpenAI-chat streams (../shared/fixtures) replayed by the scripted upstream, frame by
 * frame, through the gateway to the real Anthropic SDK: every stream yields a well-formed
 * Anthropic message whose tool inputs are the recorded calls' arguments.
 */
import { readPayloadLines } from '../../src/wire/index';
import type { ScriptLine } from '../../src/gateway/scripted';
import { describeFixtures, listFixtures, readFixture } from '../helpers/fixtures';
import { Collector, rig, type Rig, toolBlocks } from './helpers';

function scriptFor(file: string): ScriptLine[] {
  const text = readFixture(file);
  if (file.endsWith('.sse')) {
    // One raw frame per line, 1 ms apart (the framing is kept byte for byte).
    return text
      .split(/(?<=\n\n)/)
      .filter((f) => f.trim().length > 0)
      .map((raw, i) => ({ t: i, raw }));
  }
  return readPayloadLines(text).payloads.map((data, i) => ({ t: i, data }));
}

/** The calls in a recording: per index, the concatenated arguments (what the gateway must deliver). */
function recordedCalls(file: string): { name: string; args: unknown }[] {
  const lines = scriptFor(file);
  const calls: { name: string; args: string }[] = [];
  for (const l of lines) {
    let payload: unknown;
    if ('raw' in l) {
      const m = /^data: (.*)$/m.exec(l.raw);
      if (!m || m[1] === '[DONE]') continue;
      payload = JSON.parse(m[1]!);
    } else if ('data' in l) payload = l.data;
    const choice = (payload as { choices?: { delta?: { tool_calls?: { index: number; function?: { name?: string; arguments?: string } }[] } }[] }).choices?.[0];
    for (const tc of choice?.delta?.tool_calls ?? []) {
      const c = (calls[tc.index] ??= { name: '', args: '' });
      if (tc.function?.name) c.name = tc.function.name;
      if (typeof tc.function?.arguments === 'string') c.args += tc.function.arguments;
    }
  }
  return calls.map((c) => ({ name: c.name, args: c.args.trim() === '' ? {} : (JSON.parse(c.args) as unknown) }));
}

const files = [...listFixtures('openai-chat'), ...listFixtures('dynamo/agent-harness', /\.sse$/)];

describeFixtures('recorded OpenAI-chat streams through the gateway', () => {
  let r: Rig | undefined;
  afterEach(async () => {
    await r?.close();
    r = undefined;
  });

  test.each(files)('%s', async (file) => {
    const expected = recordedCalls(file);
    r = await rig({ script: scriptFor(file) });
    const tools = [...new Set(expected.map((c) => c.name))].map((name) => ({ name, input_schema: { type: 'object' as const } }));
    const params = { model: 'm', max_tokens: 256, messages: [{ role: 'user' as const, content: 'go' }], ...(tools.length ? { tools } : {}) };
    const c = new Collector(await r.client.messages.create({ ...params, stream: true }));
    await c.done;
    expect(c.error).toBeUndefined();
    const blocks = toolBlocks(c.events); // throws on overlapping blocks or index gaps
    expect(blocks.map((b) => ({ name: b.name, args: b.json === '' ? {} : (JSON.parse(b.json) as unknown) }))).toEqual(expected);
    expect(blocks.every((b) => b.stops === 1)).toBe(true);
    expect(c.types()[0]).toBe('message_start');
    expect(c.types().slice(-2)).toEqual(['message_delta', 'message_stop']);
    const md = c.events.find((e) => e.type === 'message_delta');
    expect(md?.type === 'message_delta' && md.delta.stop_reason).toBe(expected.length > 0 ? 'tool_use' : 'end_turn');
    // The unary path agrees.
    const msg = await r.client.messages.create(params);
    expect(msg.content.flatMap((b) => (b.type === 'tool_use' ? [{ name: b.name, args: b.input }] : []))).toEqual(expected);
  });
});
