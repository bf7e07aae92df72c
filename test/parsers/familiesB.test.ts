/**
 * Issue 12, batch B families (streams, published outputs and look-alikes in corpusB.ts), through
 * the shared family suite (familySuite.ts: every byte and UTF-16 split, random chunks, completion
 * in the push of its closing marker, truncated prefixes, look-alikes at every split), a markup
 * soup, and every stream through createTextAdapter behind a real openai SDK client.
 */
import OpenAI from 'openai';
import { createTextAdapter, listFamilies, resolveFamily } from '../../src/parsers';
import type { StreamEvent } from '../../src/wire/events';
import { CASES_B, LOOKALIKES_B, REAL_B } from './corpusB';
import {
  describeFamilyStreams,
  describeLookalikes,
  describeMarkupSoup,
  describePublishedOutputs,
  serveChatContent,
  type ContentServer,
} from './familySuite';
import { mergeEvents } from './helpers';

const FAMILIES_B = [
  'phi-4-mini',
  'firefunction-v2',
  'internlm2',
  'command-r7b',
  'apertus',
  'gigachat3',
  'functionary-v3.1',
  'functionary-v3.2',
  'kimi-k3',
  'lfm2',
  'olmo3',
];

describe('batch B registry', () => {
  it('registers every family and its model-name aliases', () => {
    const names = listFamilies().map((f) => f.name);
    for (const f of FAMILIES_B) expect(names).toContain(f);
    expect(resolveFamily('Phi-4-mini-instruct')).toBe('phi-4-mini');
    expect(resolveFamily('command_r7b')).toBe('command-r7b');
    expect(resolveFamily('functionary-v3.2')).toBe('functionary-v3.2');
    expect(resolveFamily('Functionary v3.1')).toBe('functionary-v3.1');
    expect(resolveFamily('InternLM2.5')).toBe('internlm2');
  });
});

describeFamilyStreams(CASES_B);

describePublishedOutputs(REAL_B);

describeLookalikes(LOOKALIKES_B, 'look-alike — ');

describe('batch B: arbitrary markup soup never throws and keeps the event contract', () => {
  const PIECES = [
    'functools[',
    '<|tool_call|>',
    '<|/tool_call|>',
    '<|action_start|><|plugin|>',
    '<|action_end|>',
    '<|START_ACTION|>',
    '<|END_ACTION|>',
    '<|tools_prefix|>',
    '<|tools_suffix|>',
    'function call<|role_sep|>',
    '<function=f>',
    '</function>',
    '<|python_tag|>',
    '<|eom_id|>',
    '>>>',
    'all\n',
    '<|tool_call_start|>',
    '<|tool_call_end|>',
    '<function_calls>',
    '</function_calls>',
    '<|open|>call tool="f"<|sep|>',
    '<|close|>call<|sep|>',
    '<think>',
    '</think>',
    '{"name": "h", "arguments": ',
    '{"tool_name": "h", "parameters": ',
    '{"h": ',
    'g(x=',
    '"k": ',
    '[',
    ']',
    '{',
    '}',
    '(',
    ')',
    '1',
    'true',
    ',',
    ' ',
    '\n',
    '\\',
    '"',
    '東京',
    '🚀',
  ];
  describeMarkupSoup(FAMILIES_B, PIECES, 100);
});

describe('batch B through the text adapter: raw content streamed by an OpenAI-compatible server (real openai SDK)', () => {
  // The server streams the case named by the user message, in 7-character content pieces.
  let server: ContentServer;

  beforeAll(async () => {
    server = await serveChatContent((_model, user) => {
      const text = CASES_B.find((x) => x.title === user)?.stream ?? 'unknown case';
      const pieces: string[] = [];
      for (let i = 0; i < text.length; i += 7) pieces.push(text.slice(i, i + 7));
      return pieces;
    });
  });
  afterAll(() => server.close());

  it.each(CASES_B.map((c) => [c.title, c] as const))('%s', async (_t, c) => {
    const client = new OpenAI({ baseURL: server.url, apiKey: 'dummy', maxRetries: 0, timeout: 10_000 });
    const stream = await client.chat.completions.create({
      model: c.family,
      messages: [{ role: 'user', content: c.title }],
      stream: true,
    });
    const adapter = createTextAdapter(c.family, c.opts);
    const evs: StreamEvent[] = [];
    for await (const chunk of stream) evs.push(...adapter.push(chunk));
    evs.push(...adapter.end());
    const merged = mergeEvents(evs);
    expect(
      merged.filter((e) => e.type !== 'message.start' && e.type !== 'finish' && e.type !== 'stream.end'),
    ).toEqual(c.expected);
    expect(merged.find((e) => e.type === 'finish')).toMatchObject({ reason: 'tool_calls' });
    expect(merged.filter((e) => e.type === 'stream.end')).toHaveLength(1);
  });
});
