/**
 * Text that only looks like markup, per family, follows the family's documented rule
 * (docs/parsers.md, "Look-alikes"). Each case is checked whole and at every byte split; warnings
 * are compared separately from the other events.
 */
import type { StreamEvent } from '../../src/wire/events';
import type { ParserOptions } from '../../src/parsers';
import { mergeEvents, runBytesAt, utf8 } from './helpers';

interface Case {
  name: string;
  family: string;
  input: string;
  expected: StreamEvent[];
  warnings?: string[];
  opts?: ParserOptions;
}

const text = (t: string): StreamEvent => ({ type: 'text.delta', text: t });
const thinking = (t: string): StreamEvent => ({ type: 'thinking.delta', text: t });
const call = (index: number, name: string, args: string, id = `call_${index}`): StreamEvent[] => [
  { type: 'call.identity', index, id, name },
  { type: 'call.fragment', index, text: args },
  { type: 'call.complete', index },
];
const verbatim = (family: string, name: string, input: string): Case => ({
  name,
  family,
  input,
  expected: [text(input)],
});

const FENCED_HERMES =
  'Example:\n```xml\n<tool_call>\n{"name": "x", "arguments": {}}\n</tool_call>\n```\nDone.';

const CASES: Case[] = [
  // ---- hermes ----------------------------------------------------------------------------------
  verbatim('hermes', 'a call inside a fenced code block is text', FENCED_HERMES),
  verbatim(
    'hermes',
    'a marker in an inline code span is text',
    'Wrap calls in `<tool_call>` tags: `<tool_call>{"name": "x"}</tool_call>`.',
  ),
  verbatim('hermes', '<tool_call> followed by prose is text', 'The <tool_call> tag wraps calls.'),
  verbatim('hermes', 'an unclosed tag followed by prose is text', '<tool_call>\nI will now call the tool.'),
  verbatim('hermes', '<think> inside a fence is text', '```\n<think>\n```\nok'),
  {
    name: 'after a fence closes, markup is markup again',
    family: 'hermes',
    input: '```\n<tool_call>\n```\n<tool_call>{"name": "f", "arguments": {}}</tool_call>',
    expected: [text('```\n<tool_call>\n```\n'), ...call(0, 'f', '{}')],
  },
  {
    name: 'a stray </tool_call> is removed',
    family: 'hermes',
    input: 'ok</tool_call> fine',
    expected: [text('ok fine')],
  },
  {
    name: 'a closed JSON object without </tool_call> completes there; the text keeps its whitespace',
    family: 'hermes',
    input: '<tool_call>{"name": "f", "arguments": {"a": 1}} and then prose',
    expected: [...call(0, 'f', '{"a": 1}'), text(' and then prose')],
    warnings: ['parser.unclosed_call'],
  },
  {
    name: '"</tool_call>" inside a JSON string stays in the argument',
    family: 'hermes',
    input: '<tool_call>{"name": "echo", "arguments": {"s": "a</tool_call>b"}}</tool_call>',
    expected: call(0, 'echo', '{"s": "a</tool_call>b"}'),
  },
  {
    name: 'markup inside reasoning is reasoning',
    family: 'hermes',
    input: '<think>I could write <tool_call>{"name": "x"}</tool_call> here</think>Hi',
    expected: [thinking('I could write <tool_call>{"name": "x"}</tool_call> here'), text('Hi')],
  },
  {
    name: 'stringified arguments are decoded',
    family: 'hermes',
    input: '<tool_call>{"name": "f", "arguments": "{\\"a\\": \\"\\u00e9\\"}"}</tool_call>',
    expected: call(0, 'f', '{"a": "é"}'),
  },
  {
    name: 'a body that is not a call object is skipped to the closer',
    family: 'hermes',
    input: 'a<tool_call>{"nm" 1}</tool_call>b',
    expected: [text('ab')],
    warnings: ['parser.malformed_call'],
  },
  {
    name: 'whitespace between calls is dropped, text after keeps its place',
    family: 'hermes',
    input:
      '<tool_call>{"name": "a", "arguments": {}}</tool_call>\n\n<tool_call>{"name": "b", "arguments": {}}</tool_call>\n\nBye',
    expected: [...call(0, 'a', '{}'), ...call(1, 'b', '{}'), text('\n\nBye')],
  },
  {
    name: 'a stray </think> (template opened the reasoning) is removed',
    family: 'hermes',
    input: 'tail of reasoning</think>\n\nAnswer',
    expected: [text('tail of reasoning\n\nAnswer')],
  },
  {
    name: 'startInReasoning: text before </think> is reasoning',
    family: 'hermes',
    opts: { startInReasoning: true },
    input: 'tail of reasoning</think>\n\nAnswer',
    expected: [thinking('tail of reasoning'), text('\n\nAnswer')],
  },
  {
    name: 'codeAware: false recognises markup inside code',
    family: 'hermes',
    opts: { codeAware: false },
    input: '`<tool_call>{"name": "f", "arguments": {}}</tool_call>`',
    expected: [text('`'), ...call(0, 'f', '{}'), text('`')],
  },

  // ---- qwen3-coder -------------------------------------------------------------------------------
  verbatim(
    'qwen3-coder',
    'a call inside a fenced code block is text',
    '```\n<tool_call>\n<function=f>\n</function>\n</tool_call>\n```',
  ),
  verbatim('qwen3-coder', '<tool_call> followed by prose is text', '<tool_call> is how I call tools.'),
  verbatim(
    'qwen3-coder',
    '<function=…> with a name that is not a name is text',
    'Use <function=my func> here.',
  ),
  {
    name: 'markup inside a parameter value stays in the value',
    family: 'qwen3-coder',
    input:
      '<tool_call>\n<function=write>\n<parameter=code>\nx = "<parameter=y>" + "</function>"\n</parameter>\n</function>\n</tool_call>',
    expected: call(0, 'write', JSON.stringify({ code: 'x = "<parameter=y>" + "</function>"' })),
  },
  {
    name: 'a bare <function=…> without <tool_call> is a call',
    family: 'qwen3-coder',
    input: 'Ok.\n<function=ls>\n<parameter=path>\n.\n</parameter>\n</function>',
    expected: [text('Ok.\n'), ...call(0, 'ls', '{"path":"."}')],
  },
  {
    name: 'untyped values: JSON when the whole value is JSON, else a string',
    family: 'qwen3-coder',
    input:
      '<tool_call>\n<function=f>\n<parameter=n>\n5\n</parameter>\n<parameter=b>\nTrue\n</parameter>\n<parameter=o>\n{"k": [1, 2]}\n</parameter>\n<parameter=s>\n5 apples\n</parameter>\n</function>\n</tool_call>',
    expected: call(0, 'f', JSON.stringify({ n: 5, b: true, o: { k: [1, 2] }, s: '5 apples' })),
  },
  {
    name: 'schema typing: a string parameter stays a string',
    family: 'qwen3-coder',
    opts: {
      tools: [
        {
          type: 'function',
          function: {
            name: 'f',
            parameters: { type: 'object', properties: { zip: { type: 'string' }, n: { type: 'integer' } } },
          },
        } as never,
      ],
    },
    input:
      '<tool_call>\n<function=f>\n<parameter=zip>\n01234\n</parameter>\n<parameter=n>\n7\n</parameter>\n</function>\n</tool_call>',
    expected: call(0, 'f', JSON.stringify({ zip: '01234', n: 7 })),
  },

  // ---- glm45 ---------------------------------------------------------------------------------
  verbatim(
    'glm45',
    'a call inside a fenced code block is text',
    '~~~\n<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n</tool_call>\n~~~',
  ),
  verbatim('glm45', '<tool_call> followed by prose is text', '<tool_call>I will call a tool.'),
  verbatim('glm45', 'Hermes-style JSON after <tool_call> is text', '<tool_call>{"name": "f"}</tool_call'),
  {
    name: 'schema typing (Anthropic input_schema shape; a string keeps its whitespace) and typing without a schema',
    family: 'glm45',
    opts: {
      tools: [{ name: 'f', input_schema: { type: 'object', properties: { zip: { type: 'string' } } } }],
    },
    input:
      '<tool_call>f\n<arg_key>zip</arg_key>\n<arg_value>  01234 </arg_value>\n<arg_key>n</arg_key>\n<arg_value>[1, "a"]</arg_value>\n</tool_call>',
    expected: call(0, 'f', JSON.stringify({ zip: '  01234 ', n: [1, 'a'] })),
  },
  {
    name: 'a call without arguments',
    family: 'glm45',
    input: '<tool_call>list_files\n</tool_call>',
    expected: call(0, 'list_files', '{}'),
  },

  // ---- deepseek-v4 (DSML) ----------------------------------------------------------------------
  verbatim(
    'deepseek-v4',
    'a call inside a fenced code block is text',
    '```\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name="f">\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>\n```',
  ),
  verbatim(
    'deepseek-v4',
    'a section opener followed by prose is text',
    'The <｜DSML｜tool_calls> block is empty.',
  ),
  {
    name: 'a bare invoke outside a section is a call',
    family: 'deepseek-v4',
    input:
      '<｜DSML｜invoke name="f">\n<｜DSML｜parameter name="a" string="false">{"x": 1}</｜DSML｜parameter>\n</｜DSML｜invoke>',
    expected: call(0, 'f', '{"a":{"x":1}}'),
  },
  {
    name: 'string="false" that is not JSON stays a string; EOS is removed',
    family: 'deepseek-v4',
    input:
      '<｜DSML｜tool_calls><｜DSML｜invoke name="f"><｜DSML｜parameter name="a" string="false">not json</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls><｜end▁of▁sentence｜>',
    expected: call(0, 'f', '{"a":"not json"}'),
  },

  // ---- nemotron ----------------------------------------------------------------------------------
  verbatim(
    'nemotron',
    'a call inside a fenced code block is text',
    '```\n<TOOLCALL>[{"name": "f", "arguments": {}}]</TOOLCALL>\n```',
  ),
  verbatim('nemotron', '<TOOLCALL> followed by prose is text', 'I use <TOOLCALL> tags.'),
  {
    name: 'a missing </TOOLCALL> after the array: calls complete, warning, text resumes',
    family: 'nemotron',
    input: '<TOOLCALL>[{"name": "f", "arguments": {}}] then text',
    expected: [...call(0, 'f', '{}'), text(' then text')],
    warnings: ['parser.unclosed_section'],
  },

  // ---- deepseek-v3 / v3.1 (special tokens) ----------------------------------------------------------
  {
    name: 'special-token markers are recognised even inside a fence',
    family: 'deepseek-v3.1',
    input: '```\n<｜tool▁call▁begin｜>f<｜tool▁sep｜>{}<｜tool▁call▁end｜>\n```',
    expected: [text('```\n'), ...call(0, 'f', '{}'), text('\n```')],
  },
  {
    name: 'bare calls without the section opener are recovered; repeated closers removed (Dynamo case)',
    family: 'deepseek-v3',
    input:
      '<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"location": "NYC"}\n```\n<｜tool▁call▁end｜>\n<｜tool▁call▁end｜>\n<｜tool▁call▁end｜>',
    expected: call(0, 'get_weather', '{"location": "NYC"}'),
  },

  // ---- kimi-k2 -------------------------------------------------------------------------------------
  {
    name: 'truncated mid-argument with finish stop (Dynamo regression): no completion, nothing leaks',
    family: 'kimi-k2',
    input:
      '<|tool_calls_section_begin|><|tool_call_begin|>functions.Write:42<|tool_call_argument_begin|>{"file_path":"/app/main.rs","content":"fn main() {}"}',
    expected: [
      { type: 'call.identity', index: 0, id: 'functions.Write:42', name: 'Write' },
      { type: 'call.fragment', index: 0, text: '{"file_path":"/app/main.rs","content":"fn main() {}"}' },
    ],
    warnings: ['parser.unclosed_call'],
  },
  {
    name: 'a bare call without the section; names keep their dots',
    family: 'kimi-k2',
    input: '<|tool_call_begin|>functions.mcp.fs.read:0<|tool_call_argument_begin|>{}<|tool_call_end|>',
    expected: call(0, 'mcp.fs.read', '{}', 'functions.mcp.fs.read:0'),
  },

  // ---- gpt-oss ---------------------------------------------------------------------------------
  verbatim('gpt-oss', 'output without harmony tokens is final text', 'Hello <b>there</b>.'),
  {
    name: 'a new message before <|call|> completes the call (warning)',
    family: 'gpt-oss',
    input:
      '<|channel|>commentary to=functions.f<|message|>{"a":1}<|start|>assistant<|channel|>final<|message|>ok<|return|>',
    expected: [...call(0, 'f', '{"a":1}'), text('ok')],
    warnings: ['parser.unclosed_call'],
  },
  {
    name: 'a built-in recipient keeps its name; commentary without recipient is text',
    family: 'gpt-oss',
    input:
      '<|channel|>commentary<|message|>Searching.<|end|><|start|>assistant<|channel|>commentary to=browser.search <|constrain|>json<|message|>{"q":"x"}<|call|>',
    expected: [text('Searching.'), ...call(0, 'browser.search', '{"q":"x"}')],
  },

  // ---- mistral ---------------------------------------------------------------------------------------
  verbatim('mistral', '[TOOL_CALLS] followed by prose is text', '[TOOL_CALLS] is the token: see docs.'),
  {
    name: 'a single object without brackets is a call',
    family: 'mistral',
    input: '[TOOL_CALLS]{"name": "f", "arguments": {"a": 1}}',
    expected: [
      { type: 'call.identity', index: 0, name: 'f' },
      { type: 'call.fragment', index: 0, text: '{"a": 1}' },
      { type: 'call.identity', index: 0, id: 'call_0' },
      { type: 'call.complete', index: 0 },
    ],
  },

  // ---- llama3 ----------------------------------------------------------------------------------------
  verbatim(
    'llama3',
    'a JSON answer at the start (first key not "name"/"type") is text',
    '{"result": 42, "name": "x"}',
  ),
  verbatim(
    'llama3',
    'a JSON object later in prose is text',
    'The payload is {"name": "f", "parameters": {}} as usual.',
  ),
  {
    name: '<|python_tag|> with built-in tool code is text without the tag',
    family: 'llama3',
    input: '<|python_tag|>brave_search.call(query="x")<|eom_id|>',
    expected: [text('brave_search.call(query="x")')],
    warnings: ['parser.not_json'],
  },

  // ---- gemma --------------------------------------------------------------------------------------
  verbatim('gemma4', 'an opener not followed by call:NAME{ is text', '<|tool_call>hello'),
  {
    name: 'nested values, bare tokens and arrays convert to JSON',
    family: 'gemma4',
    input:
      '<|tool_call>call:f{a:{b:<|"|>x, "y"<|"|>,c:[1,2,<|"|>z<|"|>]},d:true,e:-1.5,f:null,g:bare words}<tool_call|>',
    expected: call(
      0,
      'f',
      JSON.stringify({ a: { b: 'x, "y"', c: [1, 2, 'z'] }, d: true, e: -1.5, f: null, g: 'bare words' }),
    ),
  },
  {
    name: 'reasoning label is dropped, reasoning is thinking',
    family: 'gemma4',
    input: '<|channel>thought\nhmm<channel|>Answer<turn|>',
    expected: [thinking('hmm'), text('Answer')],
  },
];

describe.each(CASES.map((c) => [`${c.family}: ${c.name}`, c] as const))('%s', (_n, c) => {
  it('whole and at every byte split', () => {
    const bytes = utf8(c.input);
    const want = JSON.stringify(mergeEvents(c.expected));
    for (let cut = 0; cut < bytes.length; cut++) {
      const evs = runBytesAt(c.family, bytes, cut === 0 ? [] : [cut], c.opts).events;
      const got = mergeEvents(evs.filter((e) => e.type !== 'warning'));
      if (JSON.stringify(got) !== want) expect({ cut, got }).toEqual({ cut, got: mergeEvents(c.expected) });
      const warnings = evs.flatMap((e) => (e.type === 'warning' ? [e.code] : []));
      expect({ cut, warnings }).toEqual({ cut, warnings: c.warnings ?? [] });
    }
  });
});
