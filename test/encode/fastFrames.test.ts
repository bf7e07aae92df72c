/**
 * The encoders' text fast paths (a delta into an open block written as a string) produce exactly
 * the bytes of the object path (the builder's event objects through JSON.stringify), for random
 * event sequences with awkward text (quotes, escapes, newlines, non-BMP characters, lone
 * surrogates, U+2028). Ids are made equal by a deterministic generator (Anthropic) or masked.
 */
import { AnthropicEventBuilder, AnthropicSseEncoder, sseFrame } from '../../src/encode/anthropicSse';
import { ChatChunkBuilder, ChatSseEncoder } from '../../src/encode/chatSse';
import { decimal, ResponsesEventBuilder, ResponsesSseEncoder } from '../../src/encode/responsesSse';
import type { OutputEvent } from '../../src/release/output';
import { sequentialIds } from './helpers';

const TEXTS = ['a', 'word ', '"quoted"', 'back\\slash', 'line\nbreak\r\t', '😀 emoji', '\ud800 lone', '\u2028\u2029', '</script>', 'ü', '\u0000\u001f'];

/** A seeded sequence: text and thinking runs, calls, usage, then end (or error). */
function sequence(seed: number): OutputEvent[] {
  let s = seed;
  const rnd = (n: number): number => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s % n;
  };
  const out: OutputEvent[] = [{ type: 'message.start', usage: { promptTokens: 7 } }];
  const n = 5 + rnd(40);
  let released = 0;
  for (let i = 0; i < n; i++) {
    const k = rnd(10);
    if (k < 5) out.push({ type: 'text', text: TEXTS[rnd(TEXTS.length)]! });
    else if (k < 7) out.push({ type: 'thinking', text: TEXTS[rnd(TEXTS.length)]! });
    else if (k === 7) out.push({ type: 'text', text: '' });
    else if (k === 8) {
      const input = { path: `/f${i}`, n: i };
      out.push({ type: 'tool_use', index: released++, backendId: `b${i}`, name: 'read_file', input, argsText: JSON.stringify(input), repaired: false });
    } else out.push({ type: 'usage', usage: { outputTokens: i } });
  }
  if (rnd(5) === 0) out.push({ type: 'error', error: { type: 'api_error', message: 'boom' } });
  else out.push({ type: 'end', finish: released > 0 ? 'tool_calls' : 'stop', released });
  out.push({ type: 'text', text: 'after the end' });
  return out;
}

/** Random ids (resp_, msg_, fc_, call_, rs_, chatcmpl-) masked: the two paths mint their own. */
const mask = (s: string): string => s.replace(/\b(resp_|msg_|fc_|call_|rs_|chatcmpl-)[0-9A-Za-z]{24}\b/g, '$1ID');

describe.each(Array.from({ length: 40 }, (_, i) => i + 1))('seed %i', (seed) => {
  const events = sequence(seed);

  test('anthropic: fast path = object path', () => {
    const enc = new AnthropicSseEncoder({ model: 'm', idGenerator: sequentialIds() });
    const b = new AnthropicEventBuilder({ model: 'm', idGenerator: sequentialIds() });
    for (const e of events) expect(enc.push(e)).toBe(b.push(e).map(sseFrame).join(''));
  });

  test('chat: fast path = object path', () => {
    const enc = new ChatSseEncoder({ model: 'm"odel', created: 1700000000 });
    const b = new ChatChunkBuilder({ model: 'm"odel', created: 1700000000 });
    const frame = (c: unknown): string => `data: ${JSON.stringify(c)}\n\n`;
    expect(mask(enc.start())).toBe(mask(b.start().map(frame).join('')));
    for (const e of events) {
      const objects = b.push(e).filter((c) => !('error' in c));
      const got = mask(enc.push(e));
      if (e.type === 'error' || e.type === 'end') expect(got.startsWith(mask(objects.map(frame).join('')))).toBe(true);
      else expect(got).toBe(mask(objects.map(frame).join('')));
    }
  });

  test('responses: fast path = object path', () => {
    const enc = new ResponsesSseEncoder({ model: 'm', created: 1700000000 });
    const b = new ResponsesEventBuilder({ model: 'm', created: 1700000000 });
    const frame = (e: { type: string }): string => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;
    expect(mask(enc.start())).toBe(mask(b.start().map(frame).join('')));
    for (const e of events) expect(mask(enc.push(e))).toBe(mask(b.push(e).map(frame).join('')));
  });
});

test('the fast paths are taken: a text run after the first delta allocates no event objects', () => {
  // Behavioural check that the shortcut exists: the builder is not consulted for a delta into an open block.
  const enc = new AnthropicSseEncoder({ model: 'm', idGenerator: sequentialIds() });
  enc.push({ type: 'message.start' });
  enc.push({ type: 'text', text: 'a' });
  const builder = (enc as unknown as { builder: AnthropicEventBuilder }).builder;
  const push = jest.spyOn(builder, 'push');
  expect(enc.push({ type: 'text', text: 'b' })).toBe('event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"b"}}\n\n');
  expect(push).not.toHaveBeenCalled();
});

test('responses: a long run (past the 256-delta joins) keeps its whole text in the .done events', () => {
  const enc = new ResponsesSseEncoder({ model: 'm', created: 1700000000 });
  let sse = enc.start();
  let thinking = '';
  let text = '';
  for (let i = 0; i < 600; i++) {
    const t = `${TEXTS[i % TEXTS.length]!}${i}`;
    thinking += t;
    sse += enc.push({ type: 'thinking', text: t });
  }
  for (let i = 0; i < 1000; i++) {
    const t = `w${i} `.slice(0, 1 + (i % 4));
    text += t;
    sse += enc.push({ type: 'text', text: t });
  }
  sse += enc.push({ type: 'end', finish: 'stop', released: 0 });
  const events = sse
    .split('\n\n')
    .filter((f) => f.includes('data: '))
    .map((f) => JSON.parse(f.slice(f.indexOf('data: ') + 6)) as { type: string; sequence_number: number; text?: string; response?: { output: { type: string; summary?: { text: string }[]; content?: { text: string }[] }[] } });
  expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i)); // past 1000: decimal()
  expect(events.find((e) => e.type === 'response.reasoning_summary_text.done')?.text).toBe(thinking);
  expect(events.find((e) => e.type === 'response.output_text.done')?.text).toBe(text);
  const output = events.find((e) => e.type === 'response.completed')!.response!.output;
  expect(output[0]!.summary![0]!.text).toBe(thinking);
  expect(output[1]!.content![0]!.text).toBe(text);
});

test('responses: decimal(n) (a delta\'s sequence_number, written without the number-string cache) is String(n)', () => {
  for (let n = 0; n < 3000; n++) expect(decimal(n)).toBe(String(n));
  for (const n of [9999, 10000, 10001, 65535, 99999, 100000, 999999, 1000000, 1000001, 1001000, 123456789, 2 ** 31, 2 ** 53 - 1]) expect(decimal(n)).toBe(String(n));
});

test('responses: delta frames across thousands of sequence numbers (the cached thousands and table ends) parse with consecutive numbers', () => {
  const enc = new ResponsesSseEncoder({ model: 'm', created: 1700000000 });
  let sse = enc.start();
  const kinds: ('thinking' | 'text')[] = ['thinking', 'text', 'thinking', 'text'];
  const counts = [1500, 2600, 999, 1001];
  kinds.forEach((kind, i) => {
    for (let j = 0; j < counts[i]!; j++) sse += enc.push({ type: kind, text: `${kind[0]}${j}` });
  });
  sse += enc.push({ type: 'end', finish: 'stop', released: 0 });
  const events = sse
    .split('\n\n')
    .filter((f) => f.includes('data: '))
    .map((f) => JSON.parse(f.slice(f.indexOf('data: ') + 6)) as { type: string; sequence_number: number; delta?: string; logprobs?: unknown });
  expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
  const deltas = events.filter((e) => e.type.endsWith('.delta'));
  expect(deltas).toHaveLength(1500 + 2600 + 999 + 1001);
  for (const d of deltas) expect('logprobs' in d).toBe(d.type === 'response.output_text.delta');
  expect(deltas[1500 + 2600 - 1]!.delta).toBe('t2599');
});
