/**
 * The piecewise reading of a huge SSE event (src/wire/pieces.ts), differential: the same stream
 * read with pieces off (`pieceThreshold: Infinity`, the whole event parsed at its end) and on (a
 * small threshold, so every event of a stream goes through the pieces path), fed whole and split at
 * every kind of boundary (inside escapes, `\uXXXX`, surrogate pairs, keys, CRLF), gives the same
 * events and the same argument text. Broken events give the same warning and leave the call
 * malformed; a real-size event is actually streamed (many fragments, each from one read).
 */
import { createStreamReader } from '../../src/wire';
import type { StreamEvent, WireFormat } from '../../src/wire/events';
import { safeStringCut } from '../../src/wire/pieces';
import { decode, expectSame, expectSameEverySplit, expectSameRandomSplits, OFF, rawContent, reads, shape, split, sse, trickyString } from './piecesShared';
import { JsonScanner } from '../../src/args/scanner';
import { describeFixtures, listFixtures, readFixture } from '../helpers/fixtures';
import { prng } from '../../bench/prng';

// ------------------------------------------------------------------------------- safe cuts

describe('safeStringCut', () => {
  test('every prefix cut there unescapes alone, never between the halves of a pair, and holds back at most 11 chars', () => {
    const r = prng(7);
    for (let round = 0; round < 60; round++) {
      const value = trickyString(r, 40);
      const raw = rawContent(value, r);
      for (let p = 0; p <= raw.length; p++) {
        const prefix = raw.slice(0, p);
        const cut = safeStringCut(prefix);
        expect(p - cut).toBeLessThanOrEqual(11);
        const s = JSON.parse(`"${prefix.slice(0, cut)}"`) as string;
        expect(value.startsWith(s)).toBe(true);
        const c = s.charCodeAt(s.length - 1);
        const next = value.charCodeAt(s.length);
        // Never the first half of a pair whose second half follows (a lone high surrogate may end a piece).
        expect(c >= 0xd800 && c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff).toBe(false);
      }
    }
  });
});

// ------------------------------------------------------------------------------- synthetic streams

function bigArgs(seed: number, chars: number): string {
  const r = prng(seed);
  return JSON.stringify({ path: '/x.ts', content: trickyString(r, chars).replace(/[\ud800-\udfff]/g, (c, i: number, s: string) => (/[\ud800-\udbff][\udc00-\udfff]/.test(s.slice(i, i + 2)) || /[\ud800-\udbff][\udc00-\udfff]/.test(s.slice(i - 1, i + 1)) ? c : 'x')), n: [1, 2.5, -3e2, true, null] });
}

function anthropicStream(args: string): string {
  return sse(
    [
      { type: 'message_start', message: { id: 'msg_1', model: 'claude', usage: { input_tokens: 5, output_tokens: 1 } } },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Writing.' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'write', input: {} } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: args.slice(0, 7) } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: args.slice(7) } },
      { type: 'content_block_stop', index: 1 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } },
      { type: 'message_stop' },
    ],
    true,
  );
}

function chatStream(args: string, args2: string): string {
  return sse([
    { id: 'c1', object: 'chat.completion.chunk', model: 'gpt', choices: [{ index: 0, delta: { role: 'assistant', content: 'Hi.', tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'write', arguments: args } }, { index: 1, id: 'call_b', type: 'function', function: { name: 'read', arguments: args2 } }] }, finish_reason: null }] },
    { id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 3, completion_tokens: 4 } },
    '[DONE]',
  ]);
}

function responsesStream(args: string): string {
  const item = { id: 'fc_1', type: 'function_call', status: 'completed', arguments: args, call_id: 'call_1', name: 'write' };
  return sse(
    [
      { type: 'response.created', response: { id: 'resp_1', model: 'gpt-5' } },
      { type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress', arguments: '' } },
      { type: 'response.function_call_arguments.delta', item_id: 'fc_1', output_index: 0, delta: args },
      { type: 'response.function_call_arguments.done', item_id: 'fc_1', output_index: 0, arguments: args },
      { type: 'response.output_item.done', output_index: 0, item },
      // A second call announced but sent only whole, in its .done events.
      { type: 'response.output_item.added', output_index: 1, item: { ...item, id: 'fc_2', call_id: 'call_2', status: 'in_progress', arguments: '' } },
      { type: 'response.function_call_arguments.done', item_id: 'fc_2', output_index: 1, arguments: args },
      { type: 'response.output_item.done', output_index: 1, item: { ...item, id: 'fc_2', call_id: 'call_2' } },
      { type: 'response.completed', response: { id: 'resp_1', output: [item, { ...item, id: 'fc_2' }], usage: { input_tokens: 3, output_tokens: 4 } } },
    ],
    true,
  );
}

function geminiStream(a: unknown, b: unknown): string {
  return sse([
    { candidates: [{ content: { role: 'model', parts: [{ text: 'Two files.' }] } }], modelVersion: 'gemini-2.5', responseId: 'r1' },
    {
      candidates: [
        {
          content: { role: 'model', parts: [{ text: 'Now:' }, { functionCall: { name: 'write', args: a }, thoughtSignature: 'sig1' }, { functionCall: { name: 'write', args: b, id: 'fc-b' } }, { text: 'done' }] },
          finishReason: 'STOP',
          index: 0,
        },
      ],
      usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 9 },
    },
  ]);
}

const SMALL = bigArgs(1, 300);
const STREAMS: [WireFormat, string][] = [
  ['anthropic', anthropicStream(SMALL)],
  ['openai-chat', chatStream(SMALL, bigArgs(2, 50))],
  ['openai-responses', responsesStream(SMALL)],
  ['gemini', geminiStream(JSON.parse(SMALL), { q: 'é😀\\"', list: [{}, [], 0] })],
];

describe('pieces on = pieces off (synthetic streams with escapes, \\u escapes and surrogate pairs)', () => {
  test.each(STREAMS)('%s: split at every position', (format, text) => expectSameEverySplit(format, text));

  test.each(STREAMS)('%s: random splits, strings, UTF-8 bytes and CRLF', (format, text) => expectSameRandomSplits(format, text));
});

describeFixtures('pieces on = pieces off on every recorded stream', () => {
  const dirs: [string, WireFormat][] = [
    ['anthropic', 'anthropic'],
    ['openai-chat', 'openai-chat'],
    ['openai-responses', 'openai-responses'],
    ['gemini', 'gemini'],
    ['dynamo/agent-harness', 'dynamo'],
  ];
  const files = dirs.flatMap(([d, f]) => listFixtures(d, /\.sse$/).map((rel) => [rel, f] as [string, WireFormat]));
  test.each(files)('%s', (rel, format) => {
    const text = readFixture(rel);
    const want = decode(format, [text], OFF);
    for (let seed = 1; seed <= 4; seed++) {
      expectSame(format, decode(format, split(text, seed, 1 + seed * 50, seed % 2 === 0), { pieceThreshold: [1, 16, 100, 2000][seed - 1] }), want);
    }
  });
});

// ------------------------------------------------------------------------------- real-size events

describe('a huge event is streamed a piece per read (default threshold)', () => {
  const HUGE = bigArgs(3, 700_000); // ~1.4 MB of JSON text, ~2 MB escaped again on the wire

  test.each([
    ['anthropic', anthropicStream(HUGE)],
    ['openai-chat', chatStream(HUGE, '{}')],
    ['openai-responses', responsesStream(HUGE)],
    ['gemini', geminiStream(JSON.parse(HUGE), JSON.parse(HUGE))],
  ] as [WireFormat, string][])('%s', (format, text) => {
    const want = decode(format, [text], OFF);
    const r = createStreamReader(format);
    const got: StreamEvent[] = [];
    let maxFragment = 0;
    for (const chunk of reads(text)) {
      for (const e of r.write(chunk)) {
        got.push(e);
        if (e.type === 'call.fragment') maxFragment = Math.max(maxFragment, e.text.length);
      }
    }
    got.push(...r.end());
    expectSame(format, got, want);
    // The first fragment holds what came before the 256 Ki threshold, each later one one read (≤ 64 KiB).
    expect(maxFragment).toBeLessThanOrEqual(256 * 1024 + 65_536);
    expect(shape(got).fragments).toBeGreaterThan(20);
    if (format === 'gemini') expect(shape(got).args.get(0)).toBe(HUGE); // compact JSON on the wire: byte-identical
  });
});

// ------------------------------------------------------------------------------- broken and odd events

describe('broken, cut and odd huge events', () => {
  const T = { pieceThreshold: 32 };
  const args = bigArgs(4, 200);

  function callStatus(events: StreamEvent[], index: number): string {
    const s = new JsonScanner();
    s.push(shape(events).args.get(index) ?? '');
    return s.finish();
  }

  test.each([
    ['a bad tail', (d: string) => d.replace(/}}$/, '}}x')],
    ['a bad escape in the argument string', (d: string) => d.replace('\\"', '\\q')],
    ['a raw control character in the argument string', (d: string) => d.replace('\\n', '\n'.replace('\n', '\u0001'))],
    ['a cut tail', (d: string) => d.slice(0, -1)],
  ])('anthropic, %s: bad_json as with pieces off, and the call is not complete JSON', (_name, breakIt) => {
    const event = JSON.stringify({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: args } });
    const text = anthropicStream('').replace(/event: content_block_delta\ndata: \{"type":"content_block_delta","index":1[^\n]*\n\n/, '') // drop the two small deltas
      .replace('event: content_block_stop\ndata: {"type":"content_block_stop","index":1}', `event: content_block_delta\ndata: ${breakIt(event)}\n\nevent: content_block_stop\ndata: {"type":"content_block_stop","index":1}`);
    const want = decode('anthropic', [text], OFF);
    const warn = want.filter((e) => e.type === 'warning');
    expect(warn.map((e) => (e as { code: string }).code)).toContain('bad_json');
    for (let seed = 1; seed <= 5; seed++) {
      const got = decode('anthropic', split(text, seed, 20), T);
      expect(got.filter((e) => e.type === 'warning')).toEqual(warn);
      expect(['invalid', 'empty']).toContain(callStatus(got, 0));
      expect(['invalid', 'empty']).toContain(callStatus(want, 0));
    }
  });

  test('a repeated key at a streamed position (JSON.parse keeps the last value): refused as bad_json, the call invalid', () => {
    const event = JSON.stringify({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: args } }).replace(/}}$/, ',"partial_json":"{}"}}');
    const text = anthropicStream('{}').replace('event: content_block_stop\ndata: {"type":"content_block_stop","index":1}', `event: content_block_delta\ndata: ${event}\n\nevent: content_block_stop\ndata: {"type":"content_block_stop","index":1}`);
    const got = decode('anthropic', split(text, 4, 20), T);
    expect(got.filter((e) => e.type === 'warning').map((e) => (e as { code: string }).code)).toEqual(['bad_json']);
    expect(callStatus(got, 0)).toBe('invalid');
  });

  test('chat: a broken tail after the arguments: the head was read (identity), the call ends invalid, not complete', () => {
    const text = chatStream(args, '{}').replace('"finish_reason":null}]}', '"finish_reason":null}]]');
    const got = decode('openai-chat', split(text, 3, 50), T);
    expect(got.filter((e) => e.type === 'warning').map((e) => (e as { code: string }).code)).toEqual(['bad_json']);
    expect(callStatus(got, 0)).toBe('invalid');
  });

  test('an event cut by the end of the stream: sse_truncated as with pieces off, the call never closes', () => {
    const text = chatStream(args, '{}').split('\n\n')[0]!;
    const want = decode('openai-chat', [text], OFF);
    const got = decode('openai-chat', split(text, 9, 30), T);
    expect(got.filter((e) => e.type === 'warning')).toEqual(want.filter((e) => e.type === 'warning'));
    expect(callStatus(got, 0)).not.toBe('closed');
  });

  test('an unrouted huge event (a text delta) is read whole: same events', () => {
    const text = sse([{ type: 'message_start', message: { id: 'm' } }, { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: args } }], true);
    expectSame('anthropic', decode('anthropic', split(text, 2, 40), T), decode('anthropic', [text], OFF));
  });

  test('the collected (not streamed) part of an event over maxEventChars: the over-size stream error', () => {
    const text = sse([{ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: args } }], true);
    const got = decode('anthropic', split(text, 2, 40), { pieceThreshold: 32, maxEventChars: 100 });
    expect(got.find((e) => e.type === 'stream.error')).toMatchObject({ error: { type: 'limit_exceeded' }, retryable: false });
    // The streamed argument text does not count toward it.
    const big = anthropicStream(bigArgs(5, 500));
    const ok = decode('anthropic', split(big, 2, 40), { pieceThreshold: 32, maxEventChars: 400 });
    expect(ok.find((e) => e.type === 'stream.error')).toBeUndefined();
  });
});

// ------------------------------------------------------------------------------- ArgBuffer

import { ArgBuffer, PIECE_PARSE_CHARS } from '../../src/args/buffer';

describe('ArgBuffer: huge arguments are read into their value as they arrive (same value as JSON.parse)', () => {
  function randomValue(r: () => number, depth: number): unknown {
    const k = r();
    if (depth > 3 || k < 0.3) {
      const s = r();
      if (s < 0.15) return Math.floor(r() * 1e6) / 7;
      if (s < 0.2) return r() < 0.5 ? true : null;
      if (s < 0.35) return trickyString(r, 9000 + Math.floor(r() * 20000)); // long: kept aside
      return trickyString(r, Math.floor(r() * 30));
    }
    if (k < 0.6) return Array.from({ length: Math.floor(r() * 5) }, () => randomValue(r, depth + 1));
    const o: Record<string, unknown> = {};
    for (let i = Math.floor(r() * 5); i > 0; i--) o[i % 3 === 0 ? trickyString(r, 3) : `k${Math.floor(r() * 9)}`] = randomValue(r, depth + 1);
    return o;
  }

  function feed(text: string, r: () => number): ArgBuffer {
    const b = new ArgBuffer();
    for (let i = 0; i < text.length; ) {
      const n = 1 + Math.floor(r() * 70_000);
      b.append(text.slice(i, i + n));
      i += n;
    }
    return b;
  }

  test('random objects with long strings (escapes, surrogates), whitespace, keys repeated and __proto__', () => {
    const r = prng(11);
    let checked = 0;
    for (let round = 0; round < 40; round++) {
      const body: Record<string, unknown> = { padding: 'p'.repeat(PIECE_PARSE_CHARS), value: randomValue(r, 0) };
      let text = JSON.stringify(body, null, round % 3 === 0 ? 2 : undefined);
      if (round % 5 === 1) text = text.replace('{', '{"__proto__":{"x":"' + 'q'.repeat(5000) + '"},');
      if (round % 5 === 2) text = text.replace('{', '{"dup":"' + 'a'.repeat(5000) + '","dup":"b",');
      if (round % 5 === 3) text = `  ${text}\n `;
      const b = feed(text, r);
      const p = b.parse();
      expect(p.kind).toBe('object');
      expect((p as { value: unknown }).value).toEqual(JSON.parse(text));
      checked++;
    }
    expect(checked).toBe(40);
  });

  test('invalid or incomplete huge arguments are judged as before', () => {
    const r = prng(12);
    const text = JSON.stringify({ a: 'x'.repeat(PIECE_PARSE_CHARS * 2), b: [1, 2] });
    expect(feed(text.slice(0, -3), r).parse().kind).toBe('incomplete');
    expect(feed(text.replace('[1,', '[1,,'), r).parse().kind).toBe('invalid');
    expect(feed(text + 'x', r).parse().kind).toBe('invalid');
  });
});
