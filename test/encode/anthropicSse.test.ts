import {
  AnthropicSseEncoder,
  mapStopReason,
  randomAnthropicId,
  toAnthropicMessage,
} from '../../src/encode/anthropicSse';
import type { OutputEvent } from '../../src/release/output';
import type { FinishReason } from '../../src/wire/events';
import { blockTypes, parseSse, sequentialIds, type Frame } from './helpers';

function toolUse(
  index: number,
  name: string,
  input: Record<string, unknown>,
  argsText = JSON.stringify(input),
): OutputEvent {
  return { type: 'tool_use', index, backendId: `call_${index}`, name, input, argsText, repaired: false };
}

function encode(events: OutputEvent[], opts = {}): Frame[] {
  const enc = new AnthropicSseEncoder({ idGenerator: sequentialIds(), model: 'test-model', ...opts });
  return parseSse(enc.encode(events));
}

const names = (frames: Frame[]): string[] => frames.map((f) => f.event);

describe('AnthropicSseEncoder: framing and block sequencing', () => {
  test('text-only message: exact frames', () => {
    const frames = encode([
      { type: 'message.start', id: 'backend-id', model: 'backend-model' },
      { type: 'text', text: 'Hel' },
      { type: 'text', text: 'lo' },
      { type: 'end', finish: 'stop', released: 0 },
    ]);
    expect(frames).toEqual([
      {
        event: 'message_start',
        data: {
          type: 'message_start',
          message: {
            id: 'msg_test_1',
            type: 'message',
            role: 'assistant',
            model: 'test-model',
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: {
              input_tokens: 0,
              output_tokens: 0,
              cache_creation_input_tokens: 0,
              cache_read_input_tokens: 0,
            },
          },
        },
      },
      {
        event: 'content_block_start',
        data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      },
      {
        event: 'content_block_delta',
        data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hel' } },
      },
      {
        event: 'content_block_delta',
        data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'lo' } },
      },
      { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
      {
        event: 'message_delta',
        data: {
          type: 'message_delta',
          delta: { stop_reason: 'end_turn', stop_sequence: null },
          usage: {
            input_tokens: 0,
            output_tokens: 0,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
          },
        },
      },
      { event: 'message_stop', data: { type: 'message_stop' } },
    ]);
  });

  test('model falls back to the start event, then to "unknown"; backend message id never used', () => {
    const enc = new AnthropicSseEncoder({ idGenerator: sequentialIds() });
    const [start] = parseSse(enc.push({ type: 'message.start', id: 'chatcmpl-1', model: 'qwen3' }));
    expect((start.data.message as { model: string }).model).toBe('qwen3');
    expect((start.data.message as { id: string }).id).toBe('msg_test_1');
    const enc2 = new AnthropicSseEncoder({ idGenerator: sequentialIds() });
    const [start2] = parseSse(enc2.push({ type: 'text', text: 'x' }));
    expect(start2.event).toBe('message_start');
    expect((start2.data.message as { model: string }).model).toBe('unknown');
  });

  test('a tool block: start (fresh toolu id, name, input {}), one input_json_delta, stop', () => {
    const frames = encode([
      toolUse(0, 'read_file', { path: '/tmp/example.txt' }),
      { type: 'end', finish: 'tool_calls', released: 1 },
    ]);
    expect(names(frames)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(frames[1].data.content_block).toEqual({
      type: 'tool_use',
      id: 'toolu_test_1',
      name: 'read_file',
      input: {},
    });
    expect(frames[2].data.delta).toEqual({
      type: 'input_json_delta',
      partial_json: '{"path":"/tmp/example.txt"}',
    });
    expect((frames[4].data.delta as { stop_reason: string }).stop_reason).toBe('tool_use');
  });

  test('empty argsText: start + stop, no delta', () => {
    const frames = encode([toolUse(0, 'list', {}, ''), { type: 'end', finish: 'tool_calls', released: 1 }]);
    expect(names(frames)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
  });

  test('two calls sharing a backend id get distinct toolu ids', () => {
    const a = toolUse(0, 'read_file', { path: '/a' });
    const b = { ...toolUse(1, 'read_file', { path: '/b' }), backendId: 'call_0' };
    const frames = encode([a, b, { type: 'end', finish: 'tool_calls', released: 2 }]);
    const ids = frames
      .filter((f) => f.event === 'content_block_start')
      .map((f) => (f.data.content_block as { id: string }).id);
    expect(ids).toEqual(['toolu_test_1', 'toolu_test_2']);
    expect(blockTypes(frames)).toEqual(['tool_use', 'tool_use']);
  });

  test('text after a tool call keeps its place (Dynamo 28 shapes)', () => {
    const t = (text: string): OutputEvent => ({ type: 'text', text });
    const end: OutputEvent = { type: 'end', finish: 'tool_calls', released: 2 };
    expect(
      blockTypes(
        encode([
          { type: 'thinking', text: 'hm' },
          t('a'),
          toolUse(0, 'x', {}),
          t('b'),
          toolUse(1, 'y', {}),
          end,
        ]),
      ),
    ).toEqual(['thinking', 'text', 'tool_use', 'text', 'tool_use']);
    expect(blockTypes(encode([t('a'), toolUse(0, 'x', {}), t('b'), end]))).toEqual([
      'text',
      'tool_use',
      'text',
    ]);
    expect(blockTypes(encode([toolUse(0, 'x', {}), t('b'), toolUse(1, 'y', {}), end]))).toEqual([
      'tool_use',
      'text',
      'tool_use',
    ]);
  });

  test('thinking → text → tool (Dynamo 29): signature_delta with the signature seen, then stops in order', () => {
    const frames = encode([
      { type: 'thinking', text: 'let me think' },
      { type: 'thinking.signature', signature: 'sig-1' },
      { type: 'text', text: 'I will read it.' },
      toolUse(0, 'read_file', { path: '/tmp' }),
      { type: 'end', finish: 'tool_calls', released: 1 },
    ]);
    expect(
      frames
        .slice(1)
        .map((f) => [f.event, f.data.index, (f.data.delta as { type?: string } | undefined)?.type]),
    ).toEqual([
      ['content_block_start', 0, undefined],
      ['content_block_delta', 0, 'thinking_delta'],
      ['content_block_delta', 0, 'signature_delta'],
      ['content_block_stop', 0, undefined],
      ['content_block_start', 1, undefined],
      ['content_block_delta', 1, 'text_delta'],
      ['content_block_stop', 1, undefined],
      ['content_block_start', 2, undefined],
      ['content_block_delta', 2, 'input_json_delta'],
      ['content_block_stop', 2, undefined],
      ['message_delta', undefined, undefined],
      ['message_stop', undefined, undefined],
    ]);
    expect(frames[1].data.content_block).toEqual({ type: 'thinking', thinking: '', signature: '' });
    expect(frames[3].data.delta).toEqual({ type: 'signature_delta', signature: 'sig-1' });
  });

  test('thinking without a signature closes with no signature_delta; thinking-only closes in end (Dynamo 30)', () => {
    const frames = encode([
      { type: 'thinking', text: 'x' },
      { type: 'end', finish: 'stop', released: 0 },
    ]);
    expect(names(frames)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
  });

  test('a signature with no open thinking block is ignored; the last signature wins', () => {
    const frames = encode([
      { type: 'thinking.signature', signature: 'orphan' },
      { type: 'thinking', text: 'a' },
      { type: 'thinking.signature', signature: 's1' },
      { type: 'thinking.signature', signature: 's2' },
      { type: 'end', released: 0 },
    ]);
    const sigs = frames.filter(
      (f) => (f.data.delta as { type?: string } | undefined)?.type === 'signature_delta',
    );
    expect(sigs.map((f) => f.data.delta)).toEqual([{ type: 'signature_delta', signature: 's2' }]);
    expect(blockTypes(frames)).toEqual(['thinking']);
  });

  test('thinking after text opens a new thinking block (never a delta to a closed block)', () => {
    const frames = encode([
      { type: 'thinking', text: 'a' },
      { type: 'text', text: 'b' },
      { type: 'thinking', text: 'c' },
      { type: 'end', released: 0 },
    ]);
    expect(blockTypes(frames)).toEqual(['thinking', 'text', 'thinking']);
  });

  test('empty text / thinking events open no block', () => {
    const frames = encode([
      { type: 'text', text: '' },
      { type: 'thinking', text: '' },
      { type: 'end', released: 0 },
    ]);
    expect(blockTypes(frames)).toEqual([]);
    expect(names(frames)).toEqual(['message_start', 'message_delta', 'message_stop']);
  });
});

describe('AnthropicSseEncoder: usage', () => {
  test('estimate in message_start, then the usage triple from the backend (Dynamo 8)', () => {
    const frames = encode(
      [
        { type: 'message.start' },
        { type: 'text', text: 'x' },
        { type: 'usage', usage: { promptTokens: 12, cachedTokens: 11, outputTokens: 5 } },
        { type: 'end', finish: 'stop', released: 0 },
      ],
      { inputTokens: 19 },
    );
    expect((frames[0].data.message as { usage: unknown }).usage).toEqual({
      input_tokens: 19,
      output_tokens: 0,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
    const delta = frames.find((f) => f.event === 'message_delta');
    expect(delta?.data.usage).toEqual({
      input_tokens: 1,
      output_tokens: 5,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 11,
    });
  });

  test('output tokens never decrease; cached is clamped to prompt; usage on message.start is used', () => {
    const frames = encode([
      { type: 'message.start', usage: { promptTokens: 100, cachedTokens: 40 } },
      { type: 'usage', usage: { outputTokens: 9 } },
      { type: 'usage', usage: { outputTokens: 4 } },
      { type: 'usage', usage: { promptTokens: 10, cachedTokens: 50 } },
      { type: 'end', finish: 'stop', released: 0 },
    ]);
    expect((frames[0].data.message as { usage: unknown }).usage).toEqual({
      input_tokens: 60,
      output_tokens: 0,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 40,
    });
    expect(frames[frames.length - 2].data.usage).toEqual({
      input_tokens: 0,
      output_tokens: 9,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 10,
    });
  });
});

describe('AnthropicSseEncoder: stop reasons', () => {
  const cases: Array<[FinishReason | undefined, number, string]> = [
    ['stop', 0, 'end_turn'],
    ['stop', 2, 'end_turn'],
    ['length', 0, 'max_tokens'],
    ['length', 1, 'max_tokens'],
    ['tool_calls', 1, 'tool_use'],
    ['tool_calls', 0, 'end_turn'],
    ['content_filter', 0, 'refusal'],
    ['stop_sequence', 0, 'stop_sequence'],
    ['other', 0, 'end_turn'],
    ['other', 1, 'tool_use'],
    [undefined, 0, 'end_turn'],
    [undefined, 3, 'tool_use'],
  ];
  test.each(cases)('finish %s with %d released → %s', (finish, released, expected) => {
    expect(mapStopReason(finish, released)).toBe(expected);
    const frames = encode([{ type: 'end', finish, released }]);
    expect((frames[frames.length - 2].data.delta as { stop_reason: string }).stop_reason).toBe(expected);
  });

  test('toolUseOnStop maps stop with released tools to tool_use', () => {
    expect(mapStopReason('stop', 1, true)).toBe('tool_use');
    expect(mapStopReason('stop', 0, true)).toBe('end_turn');
  });
});

describe('AnthropicSseEncoder: terminal events', () => {
  test('error mid-stream: exactly one error frame, nothing after, open block not closed (Dynamo 4)', () => {
    const enc = new AnthropicSseEncoder({ idGenerator: sequentialIds() });
    let text = enc.push({ type: 'text', text: 'partial' });
    text += enc.push({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    expect(enc.terminated).toBe(true);
    text += enc.push({ type: 'text', text: 'late' });
    text += enc.push({ type: 'end', finish: 'stop', released: 0 });
    text += enc.push({ type: 'error', error: { type: 'api_error', message: 'again' } });
    expect(enc.ping()).toBe('');
    const frames = parseSse(text);
    expect(names(frames)).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'error']);
    expect(frames[3].data).toEqual({
      type: 'error',
      error: { type: 'overloaded_error', message: 'Overloaded' },
    });
  });

  test('error before anything else: only the error frame', () => {
    const frames = encode([{ type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } }]);
    expect(names(frames)).toEqual(['error']);
  });

  test('an empty error type becomes api_error', () => {
    const frames = encode([{ type: 'error', error: { type: '', message: 'x' } }]);
    expect(frames[0].data).toEqual({ type: 'error', error: { type: 'api_error', message: 'x' } });
  });

  test('events after end are ignored; end closes an open text block first', () => {
    const enc = new AnthropicSseEncoder({ idGenerator: sequentialIds() });
    const text = enc.encode([
      { type: 'text', text: 'a' },
      { type: 'end', finish: 'stop', released: 0 },
      { type: 'text', text: 'b' },
      toolUse(0, 'x', {}),
      { type: 'end', finish: 'stop', released: 0 },
    ]);
    const frames = parseSse(text);
    expect(names(frames)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
  });

  test('close(): terminal frames when the events stopped without end; nothing after a terminal event', () => {
    const enc = new AnthropicSseEncoder({ idGenerator: sequentialIds() });
    enc.push(toolUse(0, 'x', {}));
    enc.push({ type: 'text', text: 'open text block' });
    const frames = parseSse(enc.close());
    expect(names(frames)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
    expect((frames[1].data.delta as { stop_reason: string }).stop_reason).toBe('tool_use');
    expect(enc.close()).toBe('');
    const errored = new AnthropicSseEncoder();
    errored.push({ type: 'error', error: { type: 'api_error', message: 'x' } });
    expect(errored.close()).toBe('');
  });

  test('ping frame', () => {
    const enc = new AnthropicSseEncoder();
    expect(enc.ping()).toBe('event: ping\ndata: {"type":"ping"}\n\n');
    expect(enc.messageStarted).toBe(false);
  });
});

describe('ids', () => {
  test('default ids: msg_ + 32 hex, toolu_ + 24 base62, fresh each time', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const m = randomAnthropicId('message');
      const t = randomAnthropicId('tool_use');
      expect(m).toMatch(/^msg_[0-9a-f]{32}$/);
      expect(t).toMatch(/^toolu_[0-9A-Za-z]{24}$/);
      seen.add(m).add(t);
    }
    expect(seen.size).toBe(400);
  });
});

describe('toAnthropicMessage', () => {
  test('same rules as the stream: blocks, ids, stop reason, usage', () => {
    const body = toAnthropicMessage(
      [
        { type: 'message.start', model: 'm' },
        { type: 'thinking', text: 'th' },
        { type: 'thinking.signature', signature: 'sig' },
        { type: 'text', text: 'a' },
        { type: 'text', text: 'b' },
        toolUse(0, 'read_file', { path: '/a' }),
        { type: 'text', text: 'c' },
        toolUse(1, 'noargs', {}, ''),
        { type: 'usage', usage: { promptTokens: 10, cachedTokens: 3, outputTokens: 7 } },
        { type: 'end', finish: 'tool_calls', released: 2 },
        { type: 'text', text: 'ignored' },
      ],
      { idGenerator: sequentialIds() },
    );
    expect(body).toEqual({
      id: 'msg_test_1',
      type: 'message',
      role: 'assistant',
      model: 'm',
      content: [
        { type: 'thinking', thinking: 'th', signature: 'sig' },
        { type: 'text', text: 'ab' },
        { type: 'tool_use', id: 'toolu_test_1', name: 'read_file', input: { path: '/a' } },
        { type: 'text', text: 'c' },
        { type: 'tool_use', id: 'toolu_test_2', name: 'noargs', input: {} },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: {
        input_tokens: 7,
        output_tokens: 7,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 3,
      },
    });
  });

  test('tool_calls with nothing released → end_turn; missing end is finished', () => {
    const body = toAnthropicMessage([{ type: 'text', text: 'hi' }], { idGenerator: sequentialIds() });
    expect(body).toMatchObject({
      type: 'message',
      stop_reason: 'end_turn',
      content: [{ type: 'text', text: 'hi' }],
    });
    const body2 = toAnthropicMessage([{ type: 'end', finish: 'tool_calls', released: 0 }], {
      idGenerator: sequentialIds(),
    });
    expect(body2).toMatchObject({ type: 'message', stop_reason: 'end_turn', content: [] });
  });

  test('an error gives the error body', () => {
    const body = toAnthropicMessage([
      { type: 'text', text: 'x' },
      { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
    ]);
    expect(body).toEqual({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
  });
});
