/**
 * Assistant text in a huge SSE event (src/wire/pieces.ts, issue 27): read a piece per read like
 * argument text. Differential against the whole-event path (`pieceThreshold: Infinity`): the same
 * events in the same order — text and thinking deltas compared joined, calls, warnings, finish — on
 * every format, with escapes, `\uXXXX` escapes, surrogate pairs (raw and escaped) and keys cut at
 * every position; text that goes out as it arrives does (many deltas, each from one read, before
 * the event ends); held text (Gemini, or where the deciding keys come after the text) comes out in
 * pieces where the payload puts it; broken events warn exactly as before.
 */
import { createStreamReader } from '../../src/wire';
import type { StreamEvent, WireFormat } from '../../src/wire/events';
import { prng } from '../../bench/prng';
import { decode, expectSame, expectSameEverySplit, expectSameRandomSplits, OFF, rawContent, reads, shape, split, sse, trickyString } from './piecesShared';

/** A JSON payload with `@T0@`, `@T1@`, … string values replaced by raw JSON string content (some chars as \uXXXX). */
function payload(obj: unknown, texts: readonly string[], seed: number): string {
  const r = prng(seed);
  let s = JSON.stringify(obj);
  texts.forEach((t, k) => {
    s = s.replace(`"@T${k}@"`, `"${rawContent(t, r)}"`);
  });
  return s;
}

function frames(datas: readonly string[], names?: readonly string[]): string {
  return datas.map((d, k) => `${names?.[k] ? `event: ${names[k]}\n` : ''}data: ${d}\n\n`).join('');
}

/** Text values: every tricky character, pairs included (lone surrogates go out as escapes). */
function texts(seed: number, n: number, len: number): string[] {
  const r = prng(seed);
  return Array.from({ length: n }, () => trickyString(r, len));
}

function anthropicText(t: readonly string[]): string {
  const d = [
    JSON.stringify({ type: 'message_start', message: { id: 'msg_1', model: 'claude', usage: { input_tokens: 5 } } }),
    JSON.stringify({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } }),
    payload({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: '@T0@' } }, t, 1),
    JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig' } }),
    JSON.stringify({ type: 'content_block_stop', index: 0 }),
    JSON.stringify({ type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } }),
    payload({ type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: '@T1@' } }, t, 2),
    JSON.stringify({ type: 'content_block_stop', index: 1 }),
    JSON.stringify({ type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_1', name: 'write', input: {} } }),
    JSON.stringify({ type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"a":1}' } }),
    JSON.stringify({ type: 'content_block_stop', index: 2 }),
    JSON.stringify({ type: 'content_block_start', index: 3, content_block: { type: 'text', text: '' } }),
    // The keys that decide it after the text: held, the payload decides.
    payload({ index: 3, delta: { text: '@T2@', type: 'text_delta' }, type: 'content_block_delta' }, t, 3),
    // Text for a tool block and for a block never started: dropped with the whole-event warnings.
    payload({ type: 'content_block_delta', index: 2, delta: { type: 'text_delta', text: '@T3@' } }, t, 4),
    payload({ type: 'content_block_delta', index: 9, delta: { type: 'thinking_delta', thinking: '@T3@' } }, t, 5),
    JSON.stringify({ type: 'content_block_stop', index: 3 }),
    JSON.stringify({ type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } }),
    JSON.stringify({ type: 'message_stop' }),
  ];
  return frames(d, d.map((x) => (JSON.parse(x) as { type: string }).type));
}

function chatText(t: readonly string[]): string {
  const c = (delta: unknown, extra: Record<string, unknown> = {}): unknown => ({ id: 'c1', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta, finish_reason: null }], ...extra });
  return frames([
    payload(c({ role: 'assistant', reasoning_content: '@T0@' }), t, 1),
    payload(c({ content: '@T1@' }), t, 2),
    // Reasoning before the content: the thinking first, the content held.
    payload(c({ reasoning_content: 'short', content: '@T2@' }), t, 3),
    // Content and a call in one delta (content first: see the order test for the other way).
    payload(c({ content: '@T3@', tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'write', arguments: '{"a":1}' } }] }), t, 4),
    payload(c({ reasoning: '@T4@' }), t, 5),
    // `reasoning` beside a string `reasoning_content`: the chunk's thinking is the latter.
    payload(c({ reasoning_content: 'rc', reasoning: '@T5@' }), t, 6),
    payload(c({ reasoning: '@T5@', reasoning_content: null }), t, 7),
    // The choice's index after its delta, a second choice, choices after the first one.
    payload({ id: 'c1', choices: [{ delta: { content: '@T6@' }, index: 0 }] }, t, 8),
    payload({ id: 'c1', choices: [{ index: 1, delta: { content: '@T7@' } }] }, t, 9),
    payload({ id: 'c1', choices: [{ delta: { content: 'first' } }, { delta: { content: '@T8@' } }] }, t, 10),
    // Content then a huge call's arguments in one delta: text, then the call.
    payload(c({ content: '@T9@', tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'write', arguments: '{"b":2}' } }] }), t, 11),
    JSON.stringify({ id: 'c1', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 3, completion_tokens: 4 } }),
    '[DONE]',
  ]);
}

/** A stream whose first chunk has its id and model after the choices: the message start comes first either way. */
function chatLateStart(t: readonly string[]): string {
  return frames([
    payload({ choices: [{ index: 0, delta: { role: 'assistant', content: '@T0@' } }], id: 'c2', model: 'm' }, t, 1),
    payload({ id: 'c2', choices: [{ index: 0, delta: { content: '@T1@' }, finish_reason: 'stop' }] }, t, 2),
    '[DONE]',
  ]);
}

function responsesText(t: readonly string[]): string {
  const d = [
    JSON.stringify({ type: 'response.created', response: { id: 'resp_1', model: 'gpt-5' } }),
    JSON.stringify({ type: 'response.output_item.added', output_index: 0, item: { id: 'rs_1', type: 'reasoning' } }),
    payload({ type: 'response.reasoning_summary_text.delta', item_id: 'rs_1', output_index: 0, summary_index: 0, delta: '@T0@' }, t, 1),
    payload({ type: 'response.reasoning_text.delta', item_id: 'rs_1', output_index: 0, delta: '@T1@' }, t, 2),
    JSON.stringify({ type: 'response.output_item.added', output_index: 1, item: { id: 'msg_1', type: 'message' } }),
    payload({ type: 'response.output_text.delta', sequence_number: 5, item_id: 'msg_1', output_index: 1, content_index: 0, delta: '@T2@', logprobs: [] }, t, 3),
    // Type and output_index after the delta: held.
    payload({ delta: '@T3@', type: 'response.output_text.delta', output_index: 1 }, t, 4),
    payload({ type: 'response.refusal.delta', output_index: 1, delta: '@T4@' }, t, 5),
    // A refused output_index after the delta: dropped with the whole-event warning.
    payload({ type: 'response.output_text.delta', delta: '@T5@', output_index: -1 }, t, 6),
    JSON.stringify({ type: 'response.output_item.added', output_index: 2, item: { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: 'write', arguments: '' } }),
    // An argument delta whose type comes after it: held, then a call fragment like the whole path's.
    payload({ item_id: 'fc_1', output_index: 2, delta: '@T6@', type: 'response.function_call_arguments.delta' }, t, 7),
    JSON.stringify({ type: 'response.output_item.done', output_index: 2, item: { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: 'write' } }),
    JSON.stringify({ type: 'response.completed', response: { id: 'resp_1', usage: { input_tokens: 3, output_tokens: 4 } } }),
  ];
  return frames(d, d.map((x) => (JSON.parse(x) as { type?: string }).type ?? 'x'));
}

function geminiText(t: readonly string[]): string {
  return frames([
    payload({ candidates: [{ content: { role: 'model', parts: [{ text: '@T0@', thought: true }] } }], modelVersion: 'gemini-3', responseId: 'r1' }, t, 1),
    payload(
      {
        candidates: [
          {
            content: {
              role: 'model',
              // A signature after its text (it goes first), a call whose arguments are read in
              // pieces between two texts, a part with a call and a text (the text is not read).
              parts: [{ text: '@T1@', thoughtSignature: 'sig1' }, { functionCall: { name: 'write', args: { a: '@T2@' } } }, { text: '@T3@' }, { functionCall: { name: 'read', args: {} }, text: '@T4@' }, { text: '@T5@', thought: true }],
            },
            finishReason: 'STOP',
            index: 0,
          },
        ],
        usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 9 },
      },
      t,
      2,
    ),
    payload({ candidates: [{ content: { parts: [{ text: 'x' }] } }, { content: { parts: [{ text: '@T6@' }] }, index: 1 }] }, t, 3),
  ]);
}

const T = texts(21, 10, 30);
const STREAMS: [WireFormat, string][] = [
  ['anthropic', anthropicText(T)],
  ['openai-chat', chatText(T)],
  ['openai-chat', chatLateStart(T)],
  ['dynamo', chatText(T)],
  ['openai-responses', responsesText(T)],
  ['gemini', geminiText(T)],
];

describe('text read in pieces = the whole-event path (every format, text and thinking, escapes, surrogate pairs)', () => {
  test.each(STREAMS)('%s: split at every position', (format, text) => {
    const want = decode(format, [text], OFF);
    expect(shape(want).events.filter((e) => e.type === 'text.delta' || e.type === 'thinking.delta').length).toBeGreaterThan(0);
    expectSameEverySplit(format, text, want);
  });

  test.each(STREAMS)('%s: random splits, strings, UTF-8 bytes and CRLF', (format, text) => expectSameRandomSplits(format, text));
});

// ------------------------------------------------------------------------------- real-size events

/** ~1.5 M chars of text with every tricky character (escaped again on the wire). */
const HUGE = texts(22, 1, 1_500_000)[0]!;

function hugeEvent(format: WireFormat, kind: 'text' | 'thinking'): string {
  const think = kind === 'thinking';
  switch (format) {
    case 'anthropic':
      return sse(
        [
          { type: 'message_start', message: { id: 'msg_1', model: 'claude' } },
          { type: 'content_block_start', index: 0, content_block: think ? { type: 'thinking', thinking: '' } : { type: 'text', text: '' } },
          { type: 'content_block_delta', index: 0, delta: think ? { type: 'thinking_delta', thinking: HUGE } : { type: 'text_delta', text: HUGE } },
          { type: 'content_block_stop', index: 0 },
          { type: 'message_delta', delta: { stop_reason: 'end_turn' } },
          { type: 'message_stop' },
        ],
        true,
      );
    case 'openai-chat':
      return sse([
        { id: 'c', model: 'm', choices: [{ index: 0, delta: { role: 'assistant' } }] },
        { id: 'c', model: 'm', choices: [{ index: 0, delta: think ? { reasoning_content: HUGE } : { content: HUGE }, finish_reason: null }] },
        { id: 'c', model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
        '[DONE]',
      ]);
    case 'openai-responses':
      return sse(
        [
          { type: 'response.created', response: { id: 'resp_1', model: 'gpt-5' } },
          { type: think ? 'response.reasoning_summary_text.delta' : 'response.output_text.delta', item_id: 'i', output_index: 0, content_index: 0, delta: HUGE },
          { type: 'response.completed', response: { id: 'resp_1' } },
        ],
        true,
      );
    default:
      return sse([{ candidates: [{ content: { role: 'model', parts: [think ? { text: HUGE, thought: true } : { text: HUGE }] }, finishReason: 'STOP', index: 0 }], modelVersion: 'g', responseId: 'r' }]);
  }
}

describe('a huge text event (default threshold, 64 KiB reads)', () => {
  const CASES = (['anthropic', 'openai-chat', 'openai-responses', 'gemini'] as WireFormat[]).flatMap((f) => (['text', 'thinking'] as const).map((k) => [f, k] as [WireFormat, 'text' | 'thinking']));

  test.each(CASES)('%s %s: the same text, in pieces of at most 16 Ki chars; out as it arrives (held where the part decides: Gemini)', (format, kind) => {
    const text = hugeEvent(format, kind);
    const want = decode(format, [text], OFF);
    const r = createStreamReader(format);
    const got: StreamEvent[] = [];
    const chunks = reads(text);
    let deltasBeforeLastRead = 0;
    let maxDelta = 0;
    chunks.forEach((chunk, k) => {
      for (const e of r.write(chunk)) {
        got.push(e);
        if (e.type === 'text.delta' || e.type === 'thinking.delta') {
          maxDelta = Math.max(maxDelta, e.text.length);
          if (k < chunks.length - 1) deltasBeforeLastRead++;
        }
      }
    });
    got.push(...r.end());
    expectSame(format, got, want);
    const joined = got.filter((e) => e.type === (kind === 'text' ? 'text.delta' : 'thinking.delta')).map((e) => (e as { text: string }).text).join('');
    expect(joined === HUGE).toBe(true);
    expect(maxDelta).toBeLessThanOrEqual(16 * 1024);
    if (format === 'gemini') expect(deltasBeforeLastRead).toBe(0);
    else expect(deltasBeforeLastRead).toBeGreaterThan(50);
  });
});

// ------------------------------------------------------------------------------- order, broken events, limits

const TH = { pieceThreshold: 32 };

function kinds(events: StreamEvent[]): string[] {
  return shape(events).events.map((e) => e.type);
}

describe('order relative to calls, broken events, repeated keys, the event cap', () => {
  const long = texts(23, 1, 400)[0]!;

  test('chat: content after a huge call in the same delta follows the call (the call went out first); before it, it comes first', () => {
    const chunk = (delta: unknown): unknown => ({ id: 'c', model: 'm', choices: [{ index: 0, delta }] });
    const call = { index: 0, id: 'call_a', type: 'function', function: { name: 'write', arguments: JSON.stringify({ content: long }) } };
    const before = sse([chunk({ content: long, tool_calls: [call] }), { id: 'c', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] }]);
    expectSame('openai-chat', decode('openai-chat', split(before, 5, 30), TH), decode('openai-chat', [before], OFF));
    expect(kinds(decode('openai-chat', split(before, 5, 30), TH)).slice(0, 3)).toEqual(['message.start', 'text.delta', 'call.identity']);
    // The whole-event path emits a delta's text before its calls; pieces cannot once the call's
    // arguments went out: the text keeps its place after the call (held, all of it).
    const after = sse([chunk({ tool_calls: [call], content: long }), { id: 'c', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] }]);
    const got = decode('openai-chat', split(after, 5, 30), TH);
    expect(kinds(got).slice(0, 3)).toEqual(['message.start', 'call.identity', 'text.delta']);
    expect(shape(got).events.find((e) => e.type === 'text.delta')).toEqual({ type: 'text.delta', text: long });
  });

  test.each([
    ['a bad tail', (d: string) => `${d}x`],
    ['a bad escape in the text', (d: string) => d.replace('\\"', '\\q')],
    ['a cut tail', (d: string) => d.slice(0, -1)],
  ])('%s: bad_json as with pieces off; text sent before the break stays sent, held text is dropped', (_name, breakIt) => {
    const r = prng(3);
    const value = `${'ab"\\'.repeat(50)}${trickyString(r, 300)}`;
    const anth = sse([{ type: 'message_start', message: { id: 'm' } }, { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }], true)
      + `event: content_block_delta\ndata: ${breakIt(JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: value } }))}\n\n`
      + sse([{ type: 'content_block_stop', index: 0 }, { type: 'message_delta', delta: { stop_reason: 'end_turn' } }, { type: 'message_stop' }], true);
    const gem = sse([{ candidates: [{ content: { parts: [{ text: 'a' }] } }], responseId: 'r' }]) + `data: ${breakIt(JSON.stringify({ candidates: [{ content: { parts: [{ text: value }] }, index: 0 }] }))}\n\n` + sse([{ candidates: [{ content: { parts: [{ text: 'ok' }] }, finishReason: 'STOP' }] }]);
    for (const [format, text] of [['anthropic', anth], ['gemini', gem]] as [WireFormat, string][]) {
      const want = decode(format, [text], OFF);
      const warn = want.filter((e) => e.type === 'warning');
      expect(warn.map((e) => (e as { code: string }).code)).toContain('bad_json');
      for (let seed = 1; seed <= 5; seed++) {
        const got = decode(format, split(text, seed, 20), TH);
        expect(got.filter((e) => e.type === 'warning')).toEqual(warn);
        const sent = got.filter((e) => e.type === 'text.delta').map((e) => (e as { text: string }).text).join('');
        if (format === 'gemini') expect(got.filter((e) => e.type !== 'warning')).toEqual(want.filter((e) => e.type !== 'warning'));
        else {
          // Everything but the text is as before; the text sent is a prefix of the value, and comes before the warning.
          expect(got.filter((e) => e.type !== 'text.delta')).toEqual(want.filter((e) => e.type !== 'text.delta'));
          expect(value.startsWith(sent)).toBe(true);
          const lastText = got.map((e) => e.type).lastIndexOf('text.delta');
          expect(lastText).toBeLessThan(got.findIndex((e) => e.type === 'warning'));
        }
      }
    }
  });

  test.each([
    ['the type', '"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"@"},"type":"message_stop"'],
    ['the delta type', '"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"@","type":"thinking_delta"}'],
    ['the index', '"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"@"},"index":5'],
    ['the delta', '"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"@"},"delta":{"type":"text_delta","text":"x"}'],
  ])('a key that decided streamed text comes again (%s): JSON.parse would keep the last, so the event is bad_json', (_name, body) => {
    const text = sse([{ type: 'message_start', message: { id: 'm' } }, { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }], true) + `data: {${body.replace('@', () => JSON.stringify(long).slice(1, -1))}}\n\n`;
    expect(decode('anthropic', [text], OFF).filter((e) => e.type === 'warning').map((e) => (e as { code: string }).code)).not.toContain('bad_json');
    const got = decode('anthropic', split(text, 2, 30), TH);
    expect(got.filter((e) => e.type === 'warning').map((e) => (e as { code: string }).code)).toContain('bad_json');
  });

  test('the event cap (maxEventChars) counts held text, not text that went out', () => {
    const out = sse([{ type: 'message_start', message: { id: 'm' } }, { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: long } }], true);
    const sent = decode('anthropic', split(out, 2, 40), { pieceThreshold: 32, maxEventChars: 200 });
    expect(sent.find((e) => e.type === 'stream.error' && e.error.type === 'limit_exceeded')).toBeUndefined();
    expect(sent.filter((e) => e.type === 'text.delta').map((e) => (e as { text: string }).text).join('')).toBe(long);
    const held = sse([{ candidates: [{ content: { parts: [{ text: long }] } }] }]);
    const got = decode('gemini', split(held, 2, 40), { pieceThreshold: 32, maxEventChars: 200 });
    expect(got.find((e) => e.type === 'stream.error')).toMatchObject({ error: { type: 'limit_exceeded' }, retryable: false });
    expect(got.find((e) => e.type === 'text.delta')).toBeUndefined();
  });
});
