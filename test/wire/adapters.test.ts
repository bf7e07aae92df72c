/** Provider quirks, with small hand-written payloads. */
import {
  createAdapter,
  createStreamReader,
  decodePayloads,
  registerTextAdapterFactory,
} from '../../src/wire';
import type { Adapter, StreamEvent, WireFormat } from '../../src/wire/events';

function run(format: WireFormat, payloads: unknown[]): StreamEvent[] {
  return decodePayloads(format, payloads);
}

const ofType = <T extends StreamEvent['type']>(evs: StreamEvent[], type: T) =>
  evs.filter((e): e is Extract<StreamEvent, { type: T }> => e.type === type);

function argsOf(evs: StreamEvent[], index: number): string {
  return ofType(evs, 'call.fragment')
    .filter((e) => e.index === index)
    .map((e) => e.text)
    .join('');
}

function codes(evs: StreamEvent[]): string[] {
  return ofType(evs, 'warning').map((w) => w.code);
}

// ------------------------------------------------------------------------------------------ chat
const chunk = (delta: object, extra: object = {}) => ({
  id: 'c1',
  object: 'chat.completion.chunk',
  model: 'm',
  choices: [{ index: 0, delta, finish_reason: null }],
  ...extra,
});
const finishChunk = (reason: string, extra: object = {}) => ({
  id: 'c1',
  object: 'chat.completion.chunk',
  model: 'm',
  choices: [{ index: 0, delta: {}, finish_reason: reason }],
  ...extra,
});
const tc = (index: number | undefined, fn: object, id?: string) => ({
  tool_calls: [
    {
      ...(index === undefined ? {} : { index }),
      ...(id === undefined ? {} : { id }),
      type: 'function',
      function: fn,
    },
  ],
});

describe('openai-chat', () => {
  test('empty-string id/name continuations never reach the events and never erase identity', () => {
    const evs = run('openai-chat', [
      chunk(tc(0, { name: 'weather', arguments: '' }, 'call_1')),
      chunk(tc(0, { name: '', arguments: '{"a":' }, '')),
      chunk(tc(0, { name: '', arguments: '1}' }, '')),
      finishChunk('tool_calls'),
    ]);
    expect(ofType(evs, 'call.identity')).toEqual([
      { type: 'call.identity', index: 0, id: 'call_1', name: 'weather' },
    ]);
    expect(argsOf(evs, 0)).toBe('{"a":1}');
    expect(ofType(evs, 'call.complete')).toEqual([]);
  });

  test('identity arriving after arguments, and in two halves', () => {
    const evs = run('openai-chat', [
      chunk(tc(0, { arguments: '{"x":1}' })),
      chunk(tc(0, { name: 'f' })),
      chunk(tc(0, {}, 'id_9')),
    ]);
    expect(ofType(evs, 'call.identity')).toEqual([
      { type: 'call.identity', index: 0, name: 'f' },
      { type: 'call.identity', index: 0, id: 'id_9', name: 'f' },
    ]);
    expect(evs.findIndex((e) => e.type === 'call.fragment')).toBeLessThan(
      evs.findIndex((e) => e.type === 'call.identity'),
    );
  });

  test('interleaved indices 0,1,0,1 keep per-call arguments apart', () => {
    const evs = run('openai-chat', [
      chunk(tc(0, { name: 'a', arguments: '{"p":' }, 'id_a')),
      chunk(tc(1, { name: 'b', arguments: '{"q":' }, 'id_b')),
      chunk(tc(0, { arguments: '"x"}' })),
      chunk(tc(1, { arguments: '"y"}' })),
      finishChunk('tool_calls'),
    ]);
    expect(JSON.parse(argsOf(evs, 0))).toEqual({ p: 'x' });
    expect(JSON.parse(argsOf(evs, 1))).toEqual({ q: 'y' });
    expect(ofType(evs, 'call.identity').map((e) => [e.index, e.name])).toEqual([
      [0, 'a'],
      [1, 'b'],
    ]);
  });

  test('several calls in one delta, and a whole call in one chunk', () => {
    const evs = run('openai-chat', [
      chunk({
        tool_calls: [
          { index: 0, id: 'i0', type: 'function', function: { name: 'a', arguments: '{}' } },
          { index: 1, id: 'i1', type: 'function', function: { name: 'b', arguments: '{"k":2}' } },
        ],
      }),
      finishChunk('tool_calls'),
    ]);
    expect(evs.map((e) => e.type)).toEqual([
      'message.start',
      'call.identity',
      'call.fragment',
      'call.identity',
      'call.fragment',
      'finish',
      'stream.end',
    ]);
    expect(argsOf(evs, 1)).toBe('{"k":2}');
  });

  test('usage-only chunk, usage on the finish chunk, x_groq.usage; no [DONE] needed', () => {
    const a = run('openai-chat', [
      chunk({ content: 'hi' }),
      finishChunk('stop'),
      {
        id: 'c1',
        object: 'chat.completion.chunk',
        choices: [],
        usage: { prompt_tokens: 10, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 4 } },
      },
    ]);
    expect(ofType(a, 'usage')).toEqual([
      { type: 'usage', usage: { promptTokens: 10, cachedTokens: 4, outputTokens: 3 } },
    ]);
    expect(a[a.length - 1]).toEqual({ type: 'stream.end' });
    const b = run('openai-chat', [
      finishChunk('length', { usage: { prompt_tokens: 1, completion_tokens: 2 } }),
    ]);
    expect(b.map((e) => e.type)).toEqual(['message.start', 'usage', 'finish', 'stream.end']);
    expect(ofType(b, 'finish')[0].reason).toBe('length');
    const c = run('openai-chat', [
      finishChunk('stop', { x_groq: { usage: { prompt_tokens: 7, completion_tokens: 8 } } }),
    ]);
    expect(ofType(c, 'usage')[0].usage).toEqual({ promptTokens: 7, outputTokens: 8 });
  });

  test('reasoning_content and reasoning → thinking; content → text', () => {
    const evs = run('openai-chat', [
      chunk({ reasoning_content: 'a' }),
      chunk({ reasoning: 'b' }),
      chunk({ content: 'c', reasoning_content: null }),
    ]);
    expect(evs.filter((e) => e.type === 'thinking.delta' || e.type === 'text.delta')).toEqual([
      { type: 'thinking.delta', text: 'a' },
      { type: 'thinking.delta', text: 'b' },
      { type: 'text.delta', text: 'c' },
    ]);
  });

  test('finish_reason map, including legacy function_call', () => {
    const map: Record<string, string> = {
      stop: 'stop',
      length: 'length',
      tool_calls: 'tool_calls',
      function_call: 'tool_calls',
      content_filter: 'content_filter',
      weird: 'other',
    };
    for (const [raw, want] of Object.entries(map)) {
      expect(ofType(run('openai-chat', [finishChunk(raw)]), 'finish')).toEqual([
        { type: 'finish', reason: want, raw },
      ]);
    }
    const legacy = run('openai-chat', [
      chunk({ function_call: { name: 'f', arguments: '{"a"' } }),
      chunk({ function_call: { arguments: ':1}' } }),
      finishChunk('function_call'),
    ]);
    expect(ofType(legacy, 'call.identity')).toEqual([{ type: 'call.identity', index: 0, name: 'f' }]);
    expect(argsOf(legacy, 0)).toBe('{"a":1}');
  });

  test('tool_calls without index: matched by id, else continue the last call', () => {
    const evs = run('openai-chat', [
      chunk(tc(undefined, { name: 'a', arguments: '{"x"' }, 'id_a')),
      chunk(tc(undefined, { arguments: ':1}' })),
      chunk(tc(undefined, { name: 'b', arguments: '{}' }, 'id_b')),
    ]);
    expect(argsOf(evs, 0)).toBe('{"x":1}');
    expect(argsOf(evs, 1)).toBe('{}');
    expect(codes(evs)).toEqual(['missing_tool_index']);
  });

  test('arguments sent as an object are stringified once', () => {
    const evs = run('openai-chat', [chunk(tc(0, { name: 'a', arguments: { k: [1, 2] } }, 'x'))]);
    expect(argsOf(evs, 0)).toBe('{"k":[1,2]}');
  });

  test('mid-stream error chunk → stream.error; other choices → one warning', () => {
    const evs = run('openai-chat', [
      { id: 'c', choices: [{ index: 1, delta: { content: 'x' } }] },
      { id: 'c', choices: [{ index: 1, delta: { content: 'y' } }] },
      { error: { message: 'boom', type: 'server_error', code: 500 } },
    ]);
    expect(codes(evs)).toEqual(['extra_choice']);
    expect(ofType(evs, 'text.delta')).toEqual([]);
    expect(ofType(evs, 'stream.error')).toEqual([
      { type: 'stream.error', error: { type: 'server_error', message: 'boom' }, retryable: true },
    ]);
    const rl = run('openai-chat', [{ error: { message: 'slow down', code: 429 } }]);
    expect(ofType(rl, 'stream.error')[0]).toMatchObject({
      error: { type: 'rate_limit_error' },
      retryable: true,
    });
  });
});

// ------------------------------------------------------------------------------------------ responses
const created = (id: string) => ({
  type: 'response.created',
  response: { id, model: 'gpt', status: 'in_progress', output: [] },
});
const fcAdded = (oi: number, itemId: string, callId: string, name: string) => ({
  type: 'response.output_item.added',
  output_index: oi,
  item: { id: itemId, type: 'function_call', status: 'in_progress', arguments: '', call_id: callId, name },
});
const argDelta = (oi: number, itemId: string, delta: string) => ({
  type: 'response.function_call_arguments.delta',
  output_index: oi,
  item_id: itemId,
  delta,
});
const argDone = (oi: number, itemId: string, args: string) => ({
  type: 'response.function_call_arguments.done',
  output_index: oi,
  item_id: itemId,
  arguments: args,
});
const fcDone = (oi: number, itemId: string, callId: string, name: string, args: string) => ({
  type: 'response.output_item.done',
  output_index: oi,
  item: { id: itemId, type: 'function_call', status: 'completed', arguments: args, call_id: callId, name },
});

describe('openai-responses', () => {
  test('call index = order among function_call items, not output_index; one complete per call', () => {
    const evs = run('openai-responses', [
      created('r1'),
      { type: 'response.output_item.added', output_index: 0, item: { id: 'rs_1', type: 'reasoning' } },
      { type: 'response.reasoning_summary_text.delta', output_index: 0, item_id: 'rs_1', delta: 'think' },
      {
        type: 'response.output_item.done',
        output_index: 0,
        item: { id: 'rs_1', type: 'reasoning', encrypted_content: 'enc' },
      },
      fcAdded(1, 'fc_a', 'call_a', 'f'),
      fcAdded(3, 'fc_b', 'call_b', 'g'),
      argDelta(3, 'fc_b', '{"b":'),
      argDelta(1, 'fc_a', '{"a":1}'),
      argDelta(3, 'fc_b', '2}'),
      argDone(1, 'fc_a', '{"a":1}'),
      fcDone(1, 'fc_a', 'call_a', 'f', '{"a":1}'),
      argDone(3, 'fc_b', '{"b":2}'),
      fcDone(3, 'fc_b', 'call_b', 'g', '{"b":2}'),
      {
        type: 'response.completed',
        response: {
          id: 'r1',
          status: 'completed',
          usage: { input_tokens: 5, output_tokens: 6, input_tokens_details: { cached_tokens: 2 } },
        },
      },
    ]);
    expect(ofType(evs, 'call.identity')).toEqual([
      { type: 'call.identity', index: 0, id: 'call_a', name: 'f' },
      { type: 'call.identity', index: 1, id: 'call_b', name: 'g' },
    ]);
    expect(argsOf(evs, 0)).toBe('{"a":1}');
    expect(argsOf(evs, 1)).toBe('{"b":2}');
    expect(ofType(evs, 'call.complete').map((e) => e.index)).toEqual([0, 1]);
    expect(ofType(evs, 'thinking.delta')).toEqual([{ type: 'thinking.delta', text: 'think' }]);
    expect(ofType(evs, 'thinking.signature')).toEqual([{ type: 'thinking.signature', signature: 'enc' }]);
    expect(ofType(evs, 'usage')[0].usage).toEqual({ promptTokens: 5, cachedTokens: 2, outputTokens: 6 });
    expect(ofType(evs, 'finish')).toEqual([{ type: 'finish', reason: 'tool_calls', raw: 'completed' }]);
  });

  test('no deltas: the done event sends the full arguments as one fragment first', () => {
    const evs = run('openai-responses', [
      created('r'),
      fcAdded(0, 'fc', 'c', 'f'),
      argDone(0, 'fc', '{"x":true}'),
      fcDone(0, 'fc', 'c', 'f', '{"x":true}'),
    ]);
    expect(evs.filter((e) => e.type.startsWith('call.'))).toEqual([
      { type: 'call.identity', index: 0, id: 'c', name: 'f' },
      { type: 'call.fragment', index: 0, text: '{"x":true}' },
      { type: 'call.complete', index: 0 },
    ]);
  });

  test('output_item.done alone (never announced) opens and completes the call', () => {
    const evs = run('openai-responses', [created('r'), fcDone(0, 'fc', 'c', 'f', '{}')]);
    expect(evs.filter((e) => e.type.startsWith('call.')).map((e) => e.type)).toEqual([
      'call.identity',
      'call.fragment',
      'call.complete',
    ]);
  });

  test('error event then response.failed → exactly one stream.error; lone response.failed → one', () => {
    const a = run('openai-responses', [
      created('r'),
      { type: 'error', error: { type: 'server_error', code: 'server_error', message: 'oops' } },
      {
        type: 'response.failed',
        response: { status: 'failed', error: { code: 'server_error', message: 'oops' } },
      },
    ]);
    expect(ofType(a, 'stream.error')).toEqual([
      { type: 'stream.error', error: { type: 'server_error', message: 'oops' }, retryable: true },
    ]);
    expect(ofType(a, 'finish')).toEqual([]);
    const b = run('openai-responses', [
      created('r'),
      { type: 'response.failed', response: { error: { code: 'rate_limit_exceeded', message: 'slow' } } },
    ]);
    expect(ofType(b, 'stream.error')).toEqual([
      { type: 'stream.error', error: { type: 'rate_limit_exceeded', message: 'slow' }, retryable: true },
    ]);
    // The documented top-level error shape {type:'error', code, message}.
    const c = run('openai-responses', [{ type: 'error', code: 'rate_limit_error', message: 'x' }]);
    expect(ofType(c, 'stream.error')[0]).toMatchObject({
      error: { type: 'rate_limit_error', message: 'x' },
      retryable: true,
    });
  });

  test('a new response.created restarts call numbering; incomplete → length', () => {
    const evs = run('openai-responses', [
      created('r1'),
      fcAdded(0, 'fc1', 'c1', 'f'),
      fcDone(0, 'fc1', 'c1', 'f', '{}'),
      { type: 'response.completed', response: {} },
      created('r2'),
      fcAdded(0, 'fc2', 'c2', 'f'),
      argDelta(0, 'fc2', '{"a":'),
      { type: 'response.incomplete', response: { incomplete_details: { reason: 'max_output_tokens' } } },
    ]);
    expect(ofType(evs, 'message.start').map((e) => e.id)).toEqual(['r1', 'r2']);
    expect(ofType(evs, 'call.identity').map((e) => [e.index, e.id])).toEqual([
      [0, 'c1'],
      [0, 'c2'],
    ]);
    expect(ofType(evs, 'finish').map((e) => e.reason)).toEqual(['tool_calls', 'length']);
    // No evidence for the cut call.
    expect(ofType(evs, 'call.complete')).toHaveLength(1);
  });

  test('text, hosted tool items, unknown events', () => {
    const evs = run('openai-responses', [
      created('r'),
      { type: 'response.output_text.delta', delta: 'Hi' },
      { type: 'response.output_item.added', output_index: 1, item: { id: 'ws', type: 'web_search_call' } },
      { type: 'response.something_new', x: 1 },
      { type: 'response.something_new', x: 2 },
      argDelta(9, 'nope', 'x'),
      { type: 'response.completed', response: {} },
    ]);
    expect(ofType(evs, 'text.delta')).toEqual([{ type: 'text.delta', text: 'Hi' }]);
    expect(codes(evs)).toEqual(['server_item_skipped', 'unknown_event', 'unknown_item']);
    expect(ofType(evs, 'finish')[0].reason).toBe('stop');
  });
});

// ------------------------------------------------------------------------------------------ gemini
const gchunk = (parts: object[], extra: object = {}) => ({
  candidates: [{ content: { role: 'model', parts }, ...extra }],
  responseId: 'g1',
  modelVersion: 'gem',
});

describe('gemini', () => {
  test('parallel whole calls in one chunk, a no-args call, ids minted or kept', () => {
    const evs = run('gemini', [
      gchunk(
        [
          { functionCall: { name: 'a', args: { x: 1 } }, thoughtSignature: 'sig' },
          { functionCall: { name: 'b' } },
          { functionCall: { name: 'c', args: {}, id: 'own-id' } },
        ],
        { finishReason: 'STOP' },
      ),
    ]);
    expect(evs.filter((e) => e.type.startsWith('call.') || e.type === 'thinking.signature')).toEqual([
      { type: 'thinking.signature', signature: 'sig' },
      { type: 'call.identity', index: 0, id: 'call_0', name: 'a' },
      { type: 'call.fragment', index: 0, text: '{"x":1}' },
      { type: 'call.complete', index: 0 },
      { type: 'call.identity', index: 1, id: 'call_1', name: 'b' },
      { type: 'call.fragment', index: 1, text: '{}' },
      { type: 'call.complete', index: 1 },
      { type: 'call.identity', index: 2, id: 'own-id', name: 'c' },
      { type: 'call.fragment', index: 2, text: '{}' },
      { type: 'call.complete', index: 2 },
    ]);
    expect(ofType(evs, 'finish')).toEqual([{ type: 'finish', reason: 'tool_calls', raw: 'STOP' }]);
  });

  test('partialArgs: nested paths, string pieces, numbers, booleans, null; completes at the terminator', () => {
    // Nothing but the identity until the call completes.
    const a = createAdapter('gemini');
    const before = [
      gchunk([{ functionCall: { name: 'f', willContinue: true } }]),
      gchunk([
        {
          functionCall: {
            partialArgs: [{ jsonPath: '$.a.b[0].c', stringValue: 'he', willContinue: true }],
            willContinue: true,
          },
        },
      ]),
      gchunk([
        {
          functionCall: {
            partialArgs: [
              { jsonPath: '$.a.b[0].c', stringValue: 'llo', willContinue: true },
              { jsonPath: '$.a.b[0].c', stringValue: '' },
            ],
            willContinue: true,
          },
        },
      ]),
      gchunk([{ functionCall: { willContinue: true } }]),
    ].flatMap((p) => a.push(p));
    expect(before.filter((e) => e.type.startsWith('call.'))).toEqual([
      { type: 'call.identity', index: 0, id: 'call_0', name: 'f' },
    ]);
    const done = a.push(gchunk([{ functionCall: {} }]));
    expect(done).toEqual([
      { type: 'call.fragment', index: 0, text: '{"a":{"b":[{"c":"hello"}]}}' },
      { type: 'call.complete', index: 0 },
    ]);
    const all = run('gemini', [
      gchunk([{ functionCall: { name: 'f', willContinue: true } }]),
      gchunk([
        {
          functionCall: {
            partialArgs: [{ jsonPath: '$.a.b[0].c', stringValue: 'he', willContinue: true }],
            willContinue: true,
          },
        },
      ]),
      gchunk([
        {
          functionCall: { partialArgs: [{ jsonPath: '$.a.b[0].c', stringValue: 'llo' }], willContinue: true },
        },
      ]),
      gchunk([
        {
          functionCall: {
            partialArgs: [
              { jsonPath: '$.n', numberValue: 2.5 },
              { jsonPath: '$.ok', boolValue: false },
              { jsonPath: '$.none', nullValue: 'NULL_VALUE' },
              { jsonPath: "$['odd key'][1]", stringValue: 'z' },
            ],
            willContinue: true,
          },
        },
      ]),
      gchunk([{ functionCall: {} }]),
      gchunk([{ text: 'done' }], { finishReason: 'STOP' }),
    ]);
    expect(JSON.parse(argsOf(all, 0))).toEqual({
      a: { b: [{ c: 'hello' }] },
      n: 2.5,
      ok: false,
      none: null,
      'odd key': [null, 'z'],
    });
    const types = all.map((e) => e.type);
    expect(types.indexOf('call.complete')).toBeLessThan(types.indexOf('text.delta'));
    expect(ofType(all, 'call.fragment')).toHaveLength(1);
  });

  test('a call still open at finishReason / at end() / when the next call starts is completed then', () => {
    const open = [
      gchunk([{ functionCall: { name: 'f', willContinue: true } }]),
      gchunk([{ functionCall: { partialArgs: [{ jsonPath: '$.x', numberValue: 1 }], willContinue: true } }]),
    ];
    const atFinish = run('gemini', [...open, gchunk([], { finishReason: 'STOP' })]);
    expect(atFinish.map((e) => e.type).slice(-4)).toEqual([
      'call.fragment',
      'call.complete',
      'finish',
      'stream.end',
    ]);
    const atEnd = run('gemini', open);
    expect(atEnd.map((e) => e.type).slice(-3)).toEqual(['call.fragment', 'call.complete', 'stream.end']);
    expect(argsOf(atEnd, 0)).toBe('{"x":1}');
    const next = run('gemini', [...open, gchunk([{ functionCall: { name: 'g', args: {} } }])]);
    expect(codes(next)).toEqual(['call_not_terminated']);
    expect(ofType(next, 'call.complete').map((e) => e.index)).toEqual([0, 1]);
  });

  test('finish reasons, thought parts, usage, errors, array payloads', () => {
    expect(
      ofType(run('gemini', [gchunk([{ text: 'x' }], { finishReason: 'STOP' })]), 'finish')[0].reason,
    ).toBe('stop');
    expect(ofType(run('gemini', [gchunk([], { finishReason: 'MAX_TOKENS' })]), 'finish')[0].reason).toBe(
      'length',
    );
    expect(ofType(run('gemini', [gchunk([], { finishReason: 'SAFETY' })]), 'finish')[0].reason).toBe(
      'content_filter',
    );
    expect(ofType(run('gemini', [gchunk([], { finishReason: 'RECITATION' })]), 'finish')[0].reason).toBe(
      'content_filter',
    );
    expect(
      ofType(run('gemini', [gchunk([], { finishReason: 'MALFORMED_FUNCTION_CALL' })]), 'finish')[0].reason,
    ).toBe('other');
    const t = run('gemini', [gchunk([{ text: 'hmm', thought: true }, { text: 'answer' }])]);
    expect(t.filter((e) => e.type.endsWith('.delta'))).toEqual([
      { type: 'thinking.delta', text: 'hmm' },
      { type: 'text.delta', text: 'answer' },
    ]);
    const u = run('gemini', [
      {
        ...gchunk([]),
        usageMetadata: {
          promptTokenCount: 3,
          candidatesTokenCount: 4,
          thoughtsTokenCount: 5,
          cachedContentTokenCount: 1,
        },
      },
      {
        ...gchunk([]),
        usageMetadata: {
          promptTokenCount: 3,
          candidatesTokenCount: 4,
          thoughtsTokenCount: 5,
          cachedContentTokenCount: 1,
        },
      },
    ]);
    expect(ofType(u, 'usage')).toEqual([
      { type: 'usage', usage: { promptTokens: 3, cachedTokens: 1, outputTokens: 9 } },
    ]);
    const e = run('gemini', [{ error: { code: 429, message: 'quota', status: 'RESOURCE_EXHAUSTED' } }]);
    expect(ofType(e, 'stream.error')).toEqual([
      { type: 'stream.error', error: { type: 'rate_limit_error', message: 'quota' }, retryable: true },
    ]);
    const arr = run('gemini', [[gchunk([{ text: 'a' }]), gchunk([{ text: 'b' }])]]);
    expect(ofType(arr, 'text.delta').map((x) => x.text)).toEqual(['a', 'b']);
  });

  test('a "__proto__" jsonPath key is stored as data, never as a prototype', () => {
    const evs = run('gemini', [
      gchunk([{ functionCall: { name: 'f', willContinue: true } }]),
      gchunk([{ functionCall: { partialArgs: [{ jsonPath: '$.__proto__.polluted', stringValue: 'yes' }] } }]),
    ]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(argsOf(evs, 0)).toBe('{"__proto__":{"polluted":"yes"}}');
  });

  test('bad jsonPath and orphan partialArgs warn instead of throwing', () => {
    const evs = run('gemini', [
      gchunk([
        { functionCall: { partialArgs: [{ jsonPath: '$.a', stringValue: 'x' }], willContinue: true } },
      ]),
      gchunk([{ functionCall: { name: 'f', willContinue: true } }]),
      gchunk([
        {
          functionCall: {
            partialArgs: [
              { jsonPath: 'a.b', stringValue: 'x' },
              { jsonPath: '$.k[x]', numberValue: 1 },
            ],
          },
        },
      ]),
    ]);
    expect(codes(evs)).toEqual(['orphan_partial_args', 'bad_json_path']);
    expect(argsOf(evs, 0)).toBe('{}');
  });
});

// ------------------------------------------------------------------------------------------ dynamo
describe('dynamo', () => {
  test('completion-only chunk (no choices) and completion before identity/arguments', () => {
    const evs = run('dynamo', [
      chunk(tc(0, { name: 'a', arguments: '{"x":1}' }, 'id_a')),
      { id: 'c1', object: 'chat.completion.chunk', choices: [], tool_call_completion: [{ index: 0 }] },
      { id: 'c1', object: 'chat.completion.chunk', tool_call_completion: [1] },
      chunk(tc(1, { name: 'b', arguments: '{}' }, 'id_b')),
      finishChunk('tool_calls'),
    ]);
    expect(
      evs.filter((e) => e.type.startsWith('call.')).map((e) => `${e.type}:${(e as { index: number }).index}`),
    ).toEqual([
      'call.identity:0',
      'call.fragment:0',
      'call.complete:0',
      'call.complete:1',
      'call.identity:1',
      'call.fragment:1',
    ]);
  });

  test('completion record inside choices[i], after that chunk’s own deltas', () => {
    const evs = run('dynamo', [
      {
        id: 'c',
        choices: [
          {
            index: 0,
            delta: tc(0, { name: 'a', arguments: '{}' }, 'i'),
            tool_call_completion: [{ index: 0 }],
          },
        ],
      },
      { id: 'c', choices: [], tool_call_completion: { index: 3 } },
      { id: 'c', choices: [], tool_call_completion: [{ idx: 3 }] },
    ]);
    expect(evs.filter((e) => e.type.startsWith('call.')).map((e) => e.type)).toEqual([
      'call.identity',
      'call.fragment',
      'call.complete',
    ]);
    expect(codes(evs)).toEqual(['bad_completion_record']);
  });

  test('event: error annotated frames through the SSE reader → stream.error', () => {
    const r = createStreamReader('dynamo');
    const sse =
      'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n' +
      'event: error\n: An internal error occurred during generation.\n\n';
    const evs = [...r.write(sse), ...r.end()];
    expect(ofType(evs, 'stream.error')).toEqual([
      {
        type: 'stream.error',
        error: { type: 'api_error', message: 'An internal error occurred during generation.' },
        retryable: true,
      },
    ]);
    expect(evs[evs.length - 1]).toEqual({ type: 'stream.end' });
    // The two-part form with a JSON HttpError.
    const r2 = createStreamReader('dynamo');
    const evs2 = [
      ...r2.write('event: error\n: Stream ended\n: {"code":429,"message":"Too many requests"}\n\n'),
      ...r2.end(),
    ];
    expect(ofType(evs2, 'stream.error')).toEqual([
      {
        type: 'stream.error',
        error: { type: 'rate_limit_error', message: 'Stream ended -- Too many requests' },
        retryable: true,
      },
    ]);
    // Pushed directly as the annotated object, and a wrapped annotated chunk.
    const a = run('dynamo', [
      { data: chunk({ content: 'x' }) },
      { event: 'error', comment: ['bad request'] },
    ]);
    expect(ofType(a, 'text.delta')).toHaveLength(1);
    expect(ofType(a, 'stream.error')[0].error.message).toBe('bad request');
  });
});

// ------------------------------------------------------------------------------------------ anthropic
const start = (id = 'msg_1') => ({
  type: 'message_start',
  message: {
    id,
    model: 'claude',
    usage: { input_tokens: 10, cache_read_input_tokens: 5, cache_creation_input_tokens: 2, output_tokens: 1 },
  },
});
const blockStart = (index: number, content_block: object) => ({
  type: 'content_block_start',
  index,
  content_block,
});
const blockDelta = (index: number, delta: object) => ({ type: 'content_block_delta', index, delta });
const blockStop = (index: number) => ({ type: 'content_block_stop', index });

describe('anthropic', () => {
  test('message_start usage includes cache reads and writes', () => {
    const evs = run('anthropic', [start()]);
    expect(evs[0]).toEqual({
      type: 'message.start',
      id: 'msg_1',
      model: 'claude',
      usage: { promptTokens: 17, cachedTokens: 5, outputTokens: 1 },
    });
  });

  test('two tool_use blocks: indices 0 and 1, evidence at each block stop', () => {
    const evs = run('anthropic', [
      start(),
      blockStart(0, { type: 'text', text: '' }),
      blockDelta(0, { type: 'text_delta', text: 'x' }),
      blockStop(0),
      blockStart(1, { type: 'tool_use', id: 't1', name: 'a', input: {} }),
      blockDelta(1, { type: 'input_json_delta', partial_json: '' }),
      blockDelta(1, { type: 'input_json_delta', partial_json: '{"p":1}' }),
      blockStop(1),
      blockStart(2, { type: 'tool_use', id: 't2', name: 'b', input: {} }),
      blockDelta(2, { type: 'input_json_delta', partial_json: '{}' }),
      blockStop(2),
      { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } },
      { type: 'message_stop' },
    ]);
    expect(evs.filter((e) => e.type.startsWith('call.'))).toEqual([
      { type: 'call.identity', index: 0, id: 't1', name: 'a' },
      { type: 'call.fragment', index: 0, text: '{"p":1}' },
      { type: 'call.complete', index: 0 },
      { type: 'call.identity', index: 1, id: 't2', name: 'b' },
      { type: 'call.fragment', index: 1, text: '{}' },
      { type: 'call.complete', index: 1 },
    ]);
    expect(evs.slice(-3)).toEqual([
      { type: 'usage', usage: { outputTokens: 9 } },
      { type: 'finish', reason: 'tool_calls', raw: 'tool_use' },
      { type: 'stream.end' },
    ]);
  });

  test('stop_reason map', () => {
    const map: Record<string, string> = {
      end_turn: 'stop',
      tool_use: 'tool_calls',
      max_tokens: 'length',
      stop_sequence: 'stop_sequence',
      refusal: 'content_filter',
      pause_turn: 'other',
      brand_new: 'other',
    };
    for (const [raw, want] of Object.entries(map)) {
      const evs = run('anthropic', [start(), { type: 'message_delta', delta: { stop_reason: raw } }]);
      expect(ofType(evs, 'finish')).toEqual([{ type: 'finish', reason: want, raw }]);
    }
  });

  test('error events: retryable from the error type', () => {
    const cases: [string, boolean][] = [
      ['overloaded_error', true],
      ['rate_limit_error', true],
      ['api_error', true],
      ['timeout_error', true],
      ['invalid_request_error', false],
      ['authentication_error', false],
    ];
    for (const [type, retryable] of cases) {
      const evs = run('anthropic', [start(), { type: 'error', error: { type, message: 'm' } }]);
      expect(ofType(evs, 'stream.error')).toEqual([
        { type: 'stream.error', error: { type, message: 'm' }, retryable },
      ]);
    }
  });

  test('server tool blocks: one warning each, their deltas silent; unknown deltas and events warn once', () => {
    const evs = run('anthropic', [
      start(),
      blockStart(0, { type: 'server_tool_use', id: 's', name: 'web_search', input: {} }),
      blockDelta(0, { type: 'input_json_delta', partial_json: '{"q":' }),
      blockDelta(0, { type: 'input_json_delta', partial_json: '"x"}' }),
      blockStop(0),
      blockStart(1, { type: 'web_search_tool_result', tool_use_id: 's', content: [] }),
      blockStop(1),
      blockDelta(7, { type: 'text_delta', text: 'lost' }),
      blockDelta(7, { type: 'text_delta', text: 'lost' }),
      { type: 'brand_new_event' },
      { type: 'brand_new_event' },
      blockStart(2, { type: 'tool_use', id: 't', name: 'client', input: {} }),
      blockDelta(2, { type: 'text_delta', text: 'wrong kind' }),
      blockStop(2),
    ]);
    expect(codes(evs)).toEqual([
      'server_block_skipped',
      'server_block_skipped',
      'unknown_block_delta',
      'unknown_event',
      'unexpected_delta',
    ]);
    // The client call after server blocks is still call 0.
    expect(ofType(evs, 'call.identity')).toEqual([
      { type: 'call.identity', index: 0, id: 't', name: 'client' },
    ]);
    expect(ofType(evs, 'text.delta')).toEqual([]);
  });

  test('a second message_start restarts call numbering at 0', () => {
    const evs = run('anthropic', [
      start('m1'),
      blockStart(0, { type: 'tool_use', id: 'a', name: 'f', input: {} }),
      start('m2'),
      blockStart(0, { type: 'tool_use', id: 'b', name: 'f', input: {} }),
      blockStop(0),
    ]);
    expect(ofType(evs, 'call.identity').map((e) => [e.index, e.id])).toEqual([
      [0, 'a'],
      [0, 'b'],
    ]);
    expect(codes(evs)).toEqual(['message_restart']);
  });

  test('a tool_use block whose start already carries the input (SDK snapshot) and no deltas', () => {
    const evs = run('anthropic', [
      start(),
      blockStart(0, { type: 'tool_use', id: 'a', name: 'f', input: { k: 1 } }),
      blockStop(0),
    ]);
    expect(argsOf(evs, 0)).toBe('{"k":1}');
  });
});

// ------------------------------------------------------------------------------------------ reader & factory
describe('stream reader and factory', () => {
  test('non-JSON data → bad_json warning; non-object payloads → bad_payload; nothing throws', () => {
    for (const format of ['anthropic', 'openai-chat', 'openai-responses', 'gemini', 'dynamo'] as const) {
      const r = createStreamReader(format);
      const sse = [
        'data: {}\n\n', // a first payload that is JSON: later non-JSON data is only a warning
        'data: {not json\n\n',
        'data: 42\n\n',
        'data: "x"\n\n',
        'data: null\n\n',
        'data: true\n\n',
        'data: [1]\n\n',
        'data: [DONE]\n\n',
      ].join('');
      const evs = [...r.write(sse), ...r.end()];
      const w = codes(evs);
      expect(w.filter((c) => c === 'bad_json')).toHaveLength(1);
      // 42, "x", null, true, [1] (gemini unpacks the array and rejects its element instead)
      expect(w.filter((c) => c === 'bad_payload').length).toBe(5);
      expect(evs[evs.length - 1]).toEqual({ type: 'stream.end' });
    }
  });

  test('warnings never quote payload contents', () => {
    const secret = 'sk-SECRET-ARGUMENT';
    const r = createStreamReader('openai-chat');
    const evs = [...r.write(`data: {"oops": "${secret}"\n\ndata: "${secret}"\n\n`), ...r.end()];
    for (const w of ofType(evs, 'warning')) expect(w.message).not.toContain(secret);
  });

  test('[DONE] is optional and a truncated last event is reported', () => {
    const r = createStreamReader('openai-chat');
    const evs = [
      ...r.write(
        'data: {"id":"c","choices":[{"index":0,"delta":{"content":"a"}}]}\n\ndata: {"id":"c","choices":[{"index":0,"delta":{"content":"b"}}]}',
      ),
      ...r.end(),
    ];
    expect(ofType(evs, 'text.delta').map((e) => e.text)).toEqual(['a']);
    expect(codes(evs)).toEqual(['sse_truncated']);
    const lenient = createStreamReader('openai-chat', { lenientEof: true });
    const evs2 = [
      ...lenient.write('data: {"id":"c","choices":[{"index":0,"delta":{"content":"b"}}]}'),
      ...lenient.end(),
    ];
    expect(ofType(evs2, 'text.delta').map((e) => e.text)).toEqual(['b']);
  });

  test('oversize event → a non-retryable limit_exceeded stream error (issue 11: dropping it would lose data)', () => {
    const r = createStreamReader('openai-chat', { maxEventChars: 1000 });
    const big = JSON.stringify(chunk({ content: 'x'.repeat(5000) }));
    const evs = [...r.write(`data: ${big}\n\n`), ...r.end()];
    const errs = ofType(evs, 'stream.error');
    expect(errs).toHaveLength(1);
    expect(errs[0]).toMatchObject({ retryable: false, error: { type: 'limit_exceeded', message: 'limit maxEventChars exceeded: SSE event larger than 1000 characters dropped' } });
    expect(ofType(evs, 'text.delta')).toEqual([]);
  });

  test('non-Dynamo formats: a data-less event: error frame → stream.error', () => {
    const r = createStreamReader('openai-chat');
    const evs = [...r.write('event: error\n: upstream died\n\n'), ...r.end()];
    expect(ofType(evs, 'stream.error')[0].error.message).toBe('upstream died');
  });

  test('end() is idempotent; writes after end are ignored; adapter push after end warns', () => {
    const r = createStreamReader('anthropic');
    r.end();
    expect(r.end()).toEqual([]);
    expect(r.write('data: {"type":"ping"}\n\n')).toEqual([]);
    const a = createAdapter('anthropic');
    expect(a.end().map((e) => (e.type === 'stream.error' ? e.error.type : e.type))).toEqual(['stream_truncated', 'stream.end']);
    expect(codes(a.push({ type: 'ping' }))).toEqual(['payload_after_end']);
    expect(a.end()).toEqual([]);
  });

  test('unknown formats throw; text families use the factory hook', () => {
    expect(() => createAdapter('nope' as WireFormat)).toThrow(/unknown wire format/);
    expect(() => createAdapter('text:qwen3')).toThrow(/no parser registered/);
    const fake: Adapter = {
      format: 'text:qwen3',
      push: () => [{ type: 'text.delta', text: 'T' }],
      end: () => [{ type: 'stream.end' }],
    };
    expect(createAdapter('text:qwen3', { textAdapter: (f) => (f === 'qwen3' ? fake : undefined) })).toBe(
      fake,
    );
    registerTextAdapterFactory(() => fake);
    try {
      const r = createStreamReader('text:qwen3');
      expect([...r.write('data: {"x":1}\n\n'), ...r.end()]).toEqual([
        { type: 'text.delta', text: 'T' },
        { type: 'stream.end' },
      ]);
    } finally {
      registerTextAdapterFactory(undefined);
    }
  });
});
