import { upstreamFormatFor } from '../../src/gateway/upstream/index';
import type { UpstreamFormatName } from '../../src/gateway/upstream/index';
import { createStreamReader } from '../../src/wire/index';

/**
 * `StreamReader.writePayload`: a payload already parsed (a backend's whole JSON answer replayed as
 * its stream, src/gateway/exchange/decode.ts) gives exactly the events the same payload gives when
 * it arrives as an SSE `data:` event read whole (`pieceThreshold: Infinity`: one `JSON.parse`).
 */
const TEXT = 'héllo "quoted" \\ \u{1F600} ' + 'x'.repeat(300_000);
const ARGS = { path: 'src/a.ts', n: 1 };

const ANSWERS: Record<UpstreamFormatName, unknown> = {
  anthropic: {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'm',
    content: [
      { type: 'text', text: TEXT },
      { type: 'tool_use', id: 'toolu_1', name: 'read', input: ARGS },
    ],
    stop_reason: 'tool_use',
    usage: { input_tokens: 3, output_tokens: 5 },
  },
  'openai-chat': {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    model: 'm',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: TEXT, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read', arguments: JSON.stringify(ARGS) } }] },
        finish_reason: 'tool_calls',
      },
    ],
    usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 },
  },
  'openai-responses': {
    id: 'resp_1',
    object: 'response',
    status: 'completed',
    model: 'm',
    output: [
      { type: 'message', id: 'msg_1', role: 'assistant', content: [{ type: 'output_text', text: TEXT }] },
      { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'read', arguments: JSON.stringify(ARGS) },
    ],
    usage: { input_tokens: 3, output_tokens: 5, total_tokens: 8 },
  },
  gemini: {
    candidates: [{ content: { role: 'model', parts: [{ text: TEXT }, { functionCall: { name: 'read', args: ARGS } }] }, finishReason: 'STOP' }],
    usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 5 },
  },
};

describe.each(Object.keys(ANSWERS) as UpstreamFormatName[])('%s', (name) => {
  test('writePayload gives what the same payload gives as SSE text', () => {
    const up = upstreamFormatFor(name);
    const payloads = up.jsonToPayloads(ANSWERS[name]);
    expect(payloads).toBeDefined();
    const direct = createStreamReader(up.wire);
    const viaText = createStreamReader(up.wire, { pieceThreshold: Infinity });
    const a = payloads!.flatMap((p) => direct.writePayload(p)).concat(direct.end());
    const b = payloads!.flatMap((p) => viaText.write(`data: ${p === '[DONE]' ? p : JSON.stringify(p)}\n\n`)).concat(viaText.end());
    expect(a).toEqual(b);
    expect(a.flatMap((e) => (e.type === 'text.delta' ? [e.text] : [])).join('')).toBe(TEXT);
    expect(a.some((e) => e.type === 'finish')).toBe(true);
    expect(a.some((e) => e.type === 'stream.error')).toBe(false);
  });
});

test('after end, or on a stream judged bad, writePayload reads nothing', () => {
  const r = createStreamReader('openai-chat');
  r.end();
  expect(r.writePayload({ choices: [{ index: 0, delta: { content: 'late' } }] })).toEqual([]);
  const bad = createStreamReader('openai-chat');
  bad.write('<html>not a stream</html>\n');
  expect(bad.writePayload({ choices: [{ index: 0, delta: { content: 'late' } }] })).toEqual([]);
});
