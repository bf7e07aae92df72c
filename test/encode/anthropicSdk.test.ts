/**
 * The SSE the encoder writes, read by the real @anthropic-ai/sdk: once through the client's own
 * HTTP path (a `fetch` that returns our text as a text/event-stream response) and once through
 * the SDK's stream helpers (`Stream.fromSSEResponse` → `MessageStream.fromReadableStream`).
 */
import Anthropic, { APIError } from '@anthropic-ai/sdk';
import { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import { Stream } from '@anthropic-ai/sdk/streaming';
import { AnthropicSseEncoder } from '../../src/encode/anthropicSse';
import type { OutputEvent } from '../../src/release/output';
import { sequentialIds } from './helpers';

function sseResponse(text: string, chunkSize = 7): Response {
  // Deliver the bytes in small, arbitrary chunks so the SDK's SSE decoder sees split frames.
  const bytes = new TextEncoder().encode(text);
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < bytes.length; i += chunkSize) controller.enqueue(bytes.slice(i, i + chunkSize));
      controller.close();
    },
  });
  return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
}

function clientReturning(text: string): Anthropic {
  return new Anthropic({
    apiKey: 'test-key',
    maxRetries: 0,
    fetch: async () => sseResponse(text),
  });
}

const params = {
  model: 'claude-test',
  max_tokens: 64,
  messages: [{ role: 'user' as const, content: 'hi' }],
};

const EVENTS: OutputEvent[] = [
  { type: 'message.start', model: 'backend-model', usage: { promptTokens: 30, cachedTokens: 10 } },
  { type: 'thinking', text: 'Need the file ' },
  { type: 'thinking', text: 'contents.' },
  { type: 'thinking.signature', signature: 'sig-abc' },
  { type: 'text', text: 'Reading ' },
  { type: 'text', text: 'it now — ☃ 😀.' },
  {
    type: 'tool_use',
    index: 0,
    backendId: 'call_1',
    name: 'read_file',
    input: { path: '/tmp/a.txt' },
    argsText: '{"path":"/tmp/a.txt"}',
    repaired: false,
  },
  { type: 'text', text: 'And listing.' },
  {
    type: 'tool_use',
    index: 1,
    backendId: 'call_1',
    name: 'list_dir',
    input: {},
    argsText: '',
    repaired: false,
  },
  {
    type: 'tool_use',
    index: 2,
    backendId: 'call_3',
    name: 'write_file',
    input: { path: 'x.ts', content: 'const s = "}\\n";\n' },
    argsText: JSON.stringify({ path: 'x.ts', content: 'const s = "}\\n";\n' }),
    repaired: false,
  },
  { type: 'usage', usage: { outputTokens: 42 } },
  { type: 'end', finish: 'tool_calls', released: 3 },
];

function encodeAll(events: OutputEvent[]): string {
  const enc = new AnthropicSseEncoder({ idGenerator: sequentialIds(), model: 'claude-test' });
  let text = enc.ping();
  for (const ev of events) text += enc.push(ev) + enc.ping();
  return text;
}

const EXPECTED_CONTENT = [
  { type: 'thinking', thinking: 'Need the file contents.', signature: 'sig-abc' },
  { type: 'text', text: 'Reading it now — ☃ 😀.' },
  { type: 'tool_use', id: 'toolu_test_1', name: 'read_file', input: { path: '/tmp/a.txt' } },
  { type: 'text', text: 'And listing.' },
  { type: 'tool_use', id: 'toolu_test_2', name: 'list_dir', input: {} },
  {
    type: 'tool_use',
    id: 'toolu_test_3',
    name: 'write_file',
    input: { path: 'x.ts', content: 'const s = "}\\n";\n' },
  },
];

describe('encoder output read by @anthropic-ai/sdk', () => {
  test('client.messages.stream(): final message, content blocks, tool inputs, stop_reason, usage', async () => {
    const client = clientReturning(encodeAll(EVENTS));
    const stream = client.messages.stream(params);
    const seenTypes: string[] = [];
    stream.on('streamEvent', (e) => seenTypes.push(e.type));
    const msg = await stream.finalMessage();
    expect(msg.id).toBe('msg_test_1');
    expect(msg.model).toBe('claude-test');
    expect(msg.stop_reason).toBe('tool_use');
    expect(msg.content).toEqual(EXPECTED_CONTENT);
    expect(msg.usage).toMatchObject({
      input_tokens: 20,
      output_tokens: 42,
      cache_read_input_tokens: 10,
      cache_creation_input_tokens: 0,
    });
    expect(seenTypes[0]).toBe('message_start');
    expect(seenTypes[seenTypes.length - 1]).toBe('message_stop');
    expect(seenTypes).not.toContain('ping');
  });

  test('client.messages.create({stream:true}) raw events in order', async () => {
    const client = clientReturning(encodeAll(EVENTS));
    const raw = await client.messages.create({ ...params, stream: true });
    const types: string[] = [];
    for await (const e of raw) types.push(e.type);
    expect(types.filter((t) => t === 'content_block_start')).toHaveLength(6);
    expect(types.filter((t) => t === 'content_block_stop')).toHaveLength(6);
    expect(types.slice(-2)).toEqual(['message_delta', 'message_stop']);
  });

  test('Stream.fromSSEResponse → MessageStream.fromReadableStream', async () => {
    const controller = new AbortController();
    const events = Stream.fromSSEResponse(sseResponse(encodeAll(EVENTS), 3), controller);
    const msg = await MessageStream.fromReadableStream(events.toReadableStream()).finalMessage();
    expect(msg.content).toEqual(EXPECTED_CONTENT);
    expect(msg.stop_reason).toBe('tool_use');
  });

  test('text-only end_turn and max_tokens', async () => {
    for (const [finish, stop] of [
      ['stop', 'end_turn'],
      ['length', 'max_tokens'],
    ] as const) {
      const text = encodeAll([
        { type: 'text', text: 'Hello' },
        { type: 'end', finish, released: 0 },
      ]);
      const msg = await clientReturning(text).messages.stream(params).finalMessage();
      expect(msg.content).toEqual([{ type: 'text', text: 'Hello' }]);
      expect(msg.stop_reason).toBe(stop);
    }
  });

  test('mid-stream error: the SDK raises an APIError with our error type, no final message', async () => {
    const text = encodeAll([
      { type: 'text', text: 'partial' },
      { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
      { type: 'end', finish: 'stop', released: 0 },
    ]);
    expect(text).not.toContain('message_stop');
    const stream = clientReturning(text).messages.stream(params);
    stream.on('error', () => undefined); // handled via finalMessage's rejection below
    const err = await stream.finalMessage().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).type).toBe('overloaded_error');
    expect((err as APIError).message).toContain('Overloaded');
  });
});
