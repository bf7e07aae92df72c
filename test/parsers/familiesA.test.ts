/**
 * Issue 12, batch A families (pythonic, MiniMax-M2, Seed-OSS, Granite, xLAM, Hunyuan, ERNIE 4.5,
 * LongCat), through the shared family suite (familySuite.ts): a synthetic stream per family and
 * layout at every byte and UTF-16 split and in random chunks, completion in the push of its closing
 * marker, every truncated prefix; look-alikes at every split; the published outputs of corpusA.ts;
 * a markup soup; MiniMax-M2 through createTextAdapter behind a real openai SDK client.
 */
import OpenAI from 'openai';
import { createTextAdapter, resolveFamily } from '../../src/parsers';
import type { StreamEvent } from '../../src/wire/events';
import { A0, ARGS0, ARGS1, events, NOTE, R, T1, T2, type FamilyCase } from './cases';
import { CORPUS_A } from './corpusA';
import {
  describeFamilyStreams,
  describeLookalikes,
  describeMarkupSoup,
  describePublishedOutputs,
  serveChatContent,
  verbatim,
  type ContentServer,
  type Lookalike,
} from './familySuite';
import { callEvs, expectAtEverySplit, summarize, textEv as text, thinkingEv as thinking } from './helpers';

const THINK = ['<think>', '</think>'];
const CALLS = [
  { name: 'read_file', args: ARGS0 },
  { name: 'get_weather', args: ARGS1 },
];
const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } } },
  },
};
/** A Python string literal (single-quoted) for `s`. */
const pySingle = (s: string): string =>
  `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n').replace(/\t/g, '\\t')}'`;
const obj0 = `{"name": "read_file", "arguments": ${ARGS0}}`;
const obj1 = `{"name": "get_weather", "arguments": ${ARGS1}}`;

const CASES_A: FamilyCase[] = [
  {
    title: 'pythonic (<|python_start|>, Llama 4)',
    family: 'llama4',
    stream:
      `${T1}<|python_start|>[read_file(path="docs/日本語.md", note=${JSON.stringify(NOTE)}), ` +
      `get_weather(city="Tokyo", days=3)]<|python_end|>${T2}`,
    expected: events({ text1: T1, calls: CALLS, text2: T2 }),
    closeAt: ['🚀")', 'days=3)'],
    markers: ['<|python', '[read_file', 'get_weather(', 'days='],
  },
  {
    title: 'pythonic (list at the start of the output, single quotes)',
    family: 'pythonic',
    stream: ` [read_file(path='docs/日本語.md', note=${pySingle(A0.note)}),get_weather( city = 'Tokyo' , days = 3 )]<|eot_id|>${T2}`,
    expected: events({ calls: CALLS, text2: T2 }),
    closeAt: ["🚀')", '3 )'],
    markers: ['[read_file', 'get_weather', '<|eot_id|>'],
  },
  {
    title: 'minimax-m2',
    family: 'minimax-m2',
    opts: { tools: [weatherTool] },
    stream:
      `<think>${R}</think>${T1}<minimax:tool_call>\n<invoke name="read_file">\n<parameter name="path">docs/日本語.md</parameter>\n` +
      `<parameter name="note">${NOTE}</parameter>\n</invoke>\n<invoke name=get_weather>\n<parameter name="city"> Tokyo\n</parameter>\n` +
      `<parameter name="days">3</parameter>\n</invoke>\n</minimax:tool_call>${T2}`,
    expected: events({ thinking: R, text1: T1, calls: CALLS, text2: T2 }),
    closeAt: ['</invoke>', '</invoke>'],
    markers: [...THINK, '<minimax', '</minimax', '<invoke', '</invoke', '<parameter', '</parameter'],
  },
  {
    title: 'seed-oss',
    family: 'seed-oss',
    stream:
      `<seed:think>${R}</seed:think>${T1}<seed:tool_call>\n<function=read_file>\n<parameter=path>docs/日本語.md</parameter>\n` +
      `<parameter=note>\n${NOTE}\n</parameter>\n</function>\n</seed:tool_call>\n<seed:tool_call>\n<function=get_weather>\n` +
      `<parameter=city>Tokyo</parameter>\n<parameter=days>3</parameter>\n</function>\n</seed:tool_call>${T2}<seed:eos>`,
    expected: events({ thinking: R, text1: T1, calls: CALLS, text2: T2 }),
    closeAt: ['</function>', '</function>'],
    markers: ['<seed:', '</seed:', '<function', '</function', '<parameter', '</parameter'],
  },
  {
    title: 'granite 3.x (<|tool_call|> array)',
    family: 'granite-3',
    stream: `${T1}<|tool_call|>[${obj0}, ${obj1}]${T2}<|end_of_text|>`,
    expected: events({ text1: T1, calls: CALLS, text2: T2 }),
    closeAt: ['🚀"}}', '"days":3}}'],
    markers: ['<|tool_call|>', '<|end_of_text|>', '"arguments"'],
  },
  {
    title: 'granite 4.x (<tool_call> tags)',
    family: 'granite-4',
    stream: `<think>${R}</think>${T1}<tool_call>\n${obj0}\n</tool_call>\n<tool_call>\n${obj1}\n</tool_call>${T2}`,
    expected: events({ thinking: R, text1: T1, calls: CALLS, text2: T2 }),
    closeAt: ['</tool_call>', '</tool_call>'],
    markers: [...THINK, '<tool_call', '</tool_call'],
  },
  {
    title: 'xlam (bare array)',
    family: 'xlam',
    stream: `\n[${obj0},\n ${obj1}]${T2}`,
    expected: events({ calls: CALLS, text2: T2 }),
    closeAt: ['🚀"}}', '"days":3}}'],
    markers: ['"name"', '"arguments"'],
  },
  {
    title: 'xlam (```json fence)',
    family: 'xlam',
    stream: '```json\n[' + `${obj0}, ${obj1}]\n` + '```' + T2,
    expected: events({ calls: CALLS, text2: T2 }),
    closeAt: ['🚀"}}', '"days":3}}'],
    markers: ['```', '"name"'],
  },
  {
    title: 'hunyuan',
    family: 'hunyuan-a13b',
    stream: `<think>${R}</think><answer>${T1}<tool_calls>[${obj0}, ${obj1}]</tool_calls>${T2}</answer>`,
    expected: events({ thinking: R, text1: T1, calls: CALLS, text2: T2 }),
    closeAt: ['🚀"}}', '"days":3}}'],
    markers: [...THINK, '<answer>', '</answer>', '<tool_calls', '</tool_calls'],
  },
  {
    title: 'ernie45 (reasoning opened by the template)',
    family: 'ernie-4.5',
    opts: { startInReasoning: true },
    stream: `${R}\n</think>\n\n\n<tool_call>\n${obj0}\n</tool_call>\n<tool_call>\n${obj1}\n</tool_call>\n<response>${T2}</response>\n`,
    expected: events({ thinking: `${R}\n`, text1: '\n\n\n', calls: CALLS, text2: `\n${T2}\n` }),
    closeAt: ['</tool_call>', '</tool_call>'],
    markers: [...THINK, '<tool_call', '</tool_call', '<response>', '</response>'],
  },
  {
    title: 'longcat',
    family: 'longcat',
    stream: `<longcat_think>${R}</longcat_think>${T1}<longcat_tool_call>\n${obj0}\n</longcat_tool_call>\n<longcat_tool_call>${obj1}</longcat_tool_call>${T2}`,
    expected: events({ thinking: R, text1: T1, calls: CALLS, text2: T2 }),
    closeAt: ['</longcat_tool_call>', '</longcat_tool_call>'],
    markers: [...THINK, '<longcat', '</longcat'],
  },
];

describeFamilyStreams(CASES_A);

describe('batch A registry', () => {
  it('resolves the model-name aliases to the batch A families, leaving existing aliases alone', () => {
    const want: Record<string, string> = {
      'llama-4': 'pythonic',
      'Llama4-Pythonic': 'pythonic',
      'llama3.2-pythonic': 'pythonic',
      'llama3.2': 'llama3',
      'MiniMax-M2.5': 'minimax-m2',
      minimax: 'minimax-m2',
      'seed-oss': 'seed-oss',
      Seed_OSS: 'seed-oss',
      'granite-4.0': 'granite',
      granite3: 'granite',
      'xLAM-2': 'xlam',
      'Hunyuan-A13B': 'hunyuan',
      'ERNIE-4.5': 'ernie45',
      'LongCat-Flash-Chat': 'longcat',
      hermes: 'hermes',
    };
    const got = Object.fromEntries(Object.keys(want).map((k) => [k, resolveFamily(k)]));
    expect(got).toEqual(want);
  });
});

describe('batch A: arbitrary markup soup never throws and keeps the event contract', () => {
  const PIECES = [
    '<think>',
    '</think>',
    '<seed:think>',
    '</seed:think>',
    '<tool_call>',
    '</tool_call>',
    '<tool_calls>',
    '</tool_calls>',
    '<|tool_call|>',
    '<longcat_tool_call>',
    '</longcat_tool_call>',
    '<minimax:tool_call>',
    '</minimax:tool_call>',
    '<invoke name="f">',
    '</invoke>',
    '<parameter name="a">',
    '</parameter>',
    '<seed:tool_call>',
    '<function=g>',
    '</function>',
    '<parameter=b>',
    '<|python_start|>',
    '[f(',
    'x=',
    "'s'",
    '"q"',
    '(',
    ')',
    '[',
    ']',
    '{',
    '}',
    '{"name": "h", "arguments": ',
    '"k": ',
    '1',
    'True',
    ',',
    ':',
    ' ',
    '\n',
    '\\',
    '```json\n',
    '```',
    '<answer>',
    '<response>',
    'text ',
    '東京',
    '🚀',
  ];
  describeMarkupSoup(
    ['pythonic', 'minimax-m2', 'seed-oss', 'granite', 'xlam', 'hunyuan', 'ernie45', 'longcat'],
    PIECES,
  );
});

// ---- look-alikes -----------------------------------------------------------------------------

const call = (index: number, name: string, args: string): StreamEvent[] => callEvs(index, name, args);

const LOOKALIKES: Lookalike[] = [
  // pythonic
  verbatim('pythonic', 'a list of numbers at the start is text', '[1, 2, 3] are the first numbers.'),
  verbatim('pythonic', 'a Markdown link at the start is text', '[Link](https://example.com) and more'),
  verbatim('pythonic', 'a name then a space before "(" is text', '[see (1)] for details'),
  verbatim('pythonic', 'a call list later in prose is text', 'Call it like [f(x=1)] please.'),
  {
    name: 'Python literals: True/False/None, nested dicts, tuples, escapes, bare words',
    family: 'pythonic',
    input: `[f(a=True, b=None, c={'k': [1, 2.5, -3e2]}, d=(1, 'x'), e='it\\'s "q" \\x41\\u00e9', g=celsius, h=1_000)]`,
    expected: call(
      0,
      'f',
      JSON.stringify({
        a: true,
        b: null,
        c: { k: [1, 2.5, -300] },
        d: [1, 'x'],
        e: 'it\'s "q" Aé',
        g: 'celsius',
        h: 1000,
      }),
    ),
  },
  {
    name: "JSON's bare true/false/null are JSON values (quoted, or as dict keys, they stay strings)",
    family: 'pythonic',
    input: `[f(a=true, b=false, c=null, d="true", e={'k': null, true: 1}, g=[true, False], h=nullable)]`,
    expected: call(
      0,
      'f',
      JSON.stringify({
        a: true,
        b: false,
        c: null,
        d: 'true',
        e: { k: null, true: 1 },
        g: [true, false],
        h: 'nullable',
      }),
    ),
  },
  {
    name: 'positional arguments end the list (warning), the text resumes',
    family: 'pythonic',
    input: '[f(1, 2)] done',
    expected: [{ type: 'call.identity', index: 0, id: 'call_0', name: 'f' }, text('1, 2)] done')],
    warnings: ['parser.malformed_call', 'parser.unclosed_call'],
  },
  {
    name: 'a call without arguments; <|python_start|> not followed by a list is removed',
    family: 'llama4',
    input: '<|python_start|>[list_files()]<|python_end|><|python_start|>no list',
    expected: [...call(0, 'list_files', '{}'), text('no list')],
  },
  // minimax-m2
  verbatim(
    'minimax-m2',
    'a call inside a fenced code block is text',
    '```xml\n<minimax:tool_call>\n<invoke name="f">\n</invoke>\n</minimax:tool_call>\n```',
  ),
  verbatim(
    'minimax-m2',
    'the section opener followed by prose is text',
    'Use <minimax:tool_call> to call tools.',
  ),
  verbatim('minimax-m2', 'an invoke whose name is not a name is text', 'See <invoke name="my tool"> here.'),
  {
    name: 'markup inside a value stays in the value; a bare invoke is a call; values are strings without a schema',
    family: 'minimax-m2',
    input:
      '<invoke name="write">\n<parameter name="code">x = "<parameter name=y>" + "</invoke>"</parameter>\n<parameter name="n">5</parameter>\n</invoke>',
    expected: call(0, 'write', JSON.stringify({ code: 'x = "<parameter name=y>" + "</invoke>"', n: '5' })),
  },
  {
    name: 'a stray section closer is removed; markup inside reasoning is reasoning',
    family: 'minimax-m2',
    input: '<think>maybe <invoke name="f"></invoke></think>ok</minimax:tool_call>!',
    expected: [thinking('maybe <invoke name="f"></invoke>'), text('ok!')],
  },
  // seed-oss
  verbatim('seed-oss', 'the wrapper followed by prose is text', '<seed:tool_call> wraps each call.'),
  verbatim(
    'seed-oss',
    'a call in inline code is text',
    'Write `<seed:tool_call><function=f></function></seed:tool_call>` to call.',
  ),
  {
    name: 'thinking-budget notes inside reasoning stay reasoning; a bare <function=…> is a call',
    family: 'seed-oss',
    input:
      '<seed:think>hm<seed:cot_budget_reflect>I have used 10 tokens</seed:cot_budget_reflect></seed:think><function=ls>\n<parameter=path>.</parameter>\n</function>',
    expected: [
      thinking('hm<seed:cot_budget_reflect>I have used 10 tokens</seed:cot_budget_reflect>'),
      ...call(0, 'ls', '{"path":"."}'),
    ],
  },
  // granite
  verbatim(
    'granite',
    'a call in a fenced code block is text',
    '```\n<tool_call>{"name": "f", "arguments": {}}</tool_call>\n```',
  ),
  verbatim('granite', '<tool_call> followed by prose is text', 'The <tool_call> tag wraps a call.'),
  {
    name: '<|tool_call|> before <tool_call> (the 4.x template) is removed; a stray </tool_call> is removed',
    family: 'granite',
    input: '<|tool_call|><tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call></tool_call>',
    expected: call(0, 'f', '{"a": 1}'),
  },
  {
    name: '<|tool_call|> followed by prose is removed',
    family: 'granite',
    input: 'A<|tool_call|> B',
    expected: [text('A B')],
  },
  {
    name: 'Granite 3.3 thinking: <think> is reasoning, <response> tags are removed',
    family: 'granite',
    input: '<think>The user greets.</think><response>Hello!</response><|end_of_text|>',
    expected: [thinking('The user greets.'), text('Hello!')],
  },
  // xlam
  verbatim('xlam', 'an array whose first key is not "name" is text', '[{"id": 3, "name": "x"}]'),
  verbatim('xlam', 'a JSON list later in prose is text', 'Here: [{"name": "f", "arguments": {}}]'),
  verbatim('xlam', 'a fence that is not a call list is text', '```json\n{"name": "f"}\n```'),
  verbatim('xlam', 'prose is text', 'I cannot help with that.'),
  {
    name: '[TOOL_CALLS] with an array; a malformed element ends the list',
    family: 'xlam',
    input: 'ok[TOOL_CALLS][{"name": "f", "arguments": {}}, 7] tail',
    expected: [text('ok'), ...call(0, 'f', '{}'), text('7] tail')],
    warnings: ['parser.malformed_call'],
  },
  {
    name: 'a malformed array is skipped to its own section closer (fence, then tags)',
    family: 'xlam',
    input:
      '```json\n[{"name": "f", "arguments": {}}, 5]\n```\nok<tool_call>[{"name": "g", "arguments": {}}, 6]</tool_call>tail',
    expected: [...call(0, 'f', '{}'), text('\nok'), ...call(1, 'g', '{}'), text('tail')],
    warnings: ['parser.malformed_call', 'parser.malformed_call'],
  },
  // hunyuan
  verbatim(
    'hunyuan',
    'a call in a fenced block is text',
    '~~~\n<tool_calls>[{"name": "f", "arguments": {}}]</tool_calls>\n~~~',
  ),
  verbatim('hunyuan', '<tool_calls> followed by prose is text', 'The <tool_calls> block is empty.'),
  {
    name: 'a missing </tool_calls> after the array: calls complete, warning, text resumes',
    family: 'hunyuan',
    input: '<tool_calls>[{"name": "f", "arguments": {}}] then',
    expected: [...call(0, 'f', '{}'), text(' then')],
    warnings: ['parser.unclosed_section'],
  },
  // ernie45
  verbatim('ernie45', 'an array after <tool_call> is text', '<tool_call>[{"name": "f"}]</tool_call'),
  {
    name: 'without startInReasoning the text before a stray </think> stays text',
    family: 'ernie45',
    input: 'abc\n</think>\n\n<response>\ndef\n</response>',
    expected: [text('abc\n\n\n\ndef\n')],
  },
  {
    name: '"</tool_call>" inside a JSON string stays in the argument',
    family: 'ernie45',
    input: '<tool_call>{"name": "echo", "arguments": {"s": "a</tool_call>b"}}</tool_call>',
    expected: call(0, 'echo', '{"s": "a</tool_call>b"}'),
  },
  {
    name: 'the closer inside an unfinished call object completes the call (warning), the text resumes',
    family: 'ernie45',
    input: '<tool_call>{"name": "f", "arguments": {"a": </tool_call>b',
    expected: [...call(0, 'f', '{"a": '), text('b')],
    warnings: ['parser.unclosed_call'],
  },
  // longcat
  verbatim(
    'longcat',
    'Hermes tags are text for LongCat',
    '<tool_call>{"name": "f", "arguments": {}}</tool_call>',
  ),
  verbatim('longcat', 'the opener followed by prose is text', '<longcat_tool_call> is the tag.'),
  {
    name: 'a body that is not a call object is skipped to the closer',
    family: 'longcat',
    input: 'a<longcat_tool_call>{"nm" 1}</longcat_tool_call>b',
    expected: [text('ab')],
    warnings: ['parser.malformed_call'],
  },
];

describeLookalikes(LOOKALIKES);

// ---- published outputs ---------------------------------------------------------------------------

describePublishedOutputs(CORPUS_A, { trim: true });

// ---- end to end: a real HTTP server, the openai SDK, the text adapter -------------------------------

describe('batch A through the text adapter: raw MiniMax-M2 content streamed by an OpenAI-compatible server', () => {
  // The content pieces a raw-output server sends (cut mid-marker on purpose).
  const PIECES = [
    'Checking both.\n<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">東',
    '京</parameter>\n<parameter name="days">3</parameter>\n</inv',
    'oke>\n<invoke name="read_file">\n<parameter name="path">a.md</parameter>\n</invoke>',
    '\n</minimax:tool_call>',
  ];
  let server: ContentServer;

  beforeAll(async () => {
    server = await serveChatContent(() => PIECES);
  });
  afterAll(() => server.close());

  it('gives each call its completion in the chunk that closes it, typed by the request tools', async () => {
    const client = new OpenAI({ baseURL: server.url, apiKey: 'dummy', maxRetries: 0, timeout: 10_000 });
    const tools = [weatherTool];
    const stream = await client.chat.completions.create({
      model: 'MiniMax-M2',
      messages: [{ role: 'user', content: 'weather?' }],
      stream: true,
    });
    const adapter = createTextAdapter('minimax-m2', { tools });
    const perChunk: StreamEvent[][] = [];
    for await (const chunk of stream) perChunk.push(adapter.push(chunk));
    perChunk.push(adapter.end());
    const all = perChunk.flat();
    const s = summarize(all);
    expect(s.text).toBe('Checking both.\n');
    expect(
      s.calls.map((c) => ({ name: c.name, args: JSON.parse(c.args) as unknown, completes: c.completes })),
    ).toEqual([
      { name: 'get_weather', args: { city: '東京', days: 3 }, completes: 1 },
      { name: 'read_file', args: { path: 'a.md' }, completes: 1 },
    ]);
    // Chunk 0 is the role chunk; PIECES[k] is chunk k + 1. The first call completes with `</inv` + `oke>`.
    const doneAt = (i: number): number =>
      perChunk.findIndex((evs) => evs.some((e) => e.type === 'call.complete' && e.index === i));
    expect([doneAt(0), doneAt(1)]).toEqual([3, 3]);
    expect(all.find((e) => e.type === 'finish')).toMatchObject({ reason: 'tool_calls' });
  });
});

// What may stand between two calls inside one wrapper differs per XML-parameter family
// (src/parsers/xmlParams.ts `between`): Seed-OSS allows another call, MiniMax-M2 drops anything.
describe('between calls inside one wrapper', () => {
  test('Seed-OSS: a second <function=…> in the same <seed:tool_call> is a second call', () => {
    expectAtEverySplit({
      family: 'seed-oss',
      input:
        '<seed:tool_call>\n<function=read>\n<parameter=path>a.ts</parameter>\n</function>\n' +
        '<function=grep>\n<parameter=pattern>TODO</parameter>\n</function>\n</seed:tool_call>',
      expected: [...callEvs(0, 'read', { path: 'a.ts' }), ...callEvs(1, 'grep', { pattern: 'TODO' })],
    });
  });

  test('MiniMax-M2: text between two <invoke> blocks of one section is dropped, both calls kept', () => {
    expectAtEverySplit({
      family: 'minimax-m2',
      input:
        '<minimax:tool_call>\n<invoke name="read">\n<parameter name="path">a.ts</parameter>\n</invoke>\nstray words\n' +
        '<invoke name="grep">\n<parameter name="pattern">TODO</parameter>\n</invoke>\n</minimax:tool_call>',
      expected: [...callEvs(0, 'read', { path: 'a.ts' }), ...callEvs(1, 'grep', { pattern: 'TODO' })],
    });
  });
});
