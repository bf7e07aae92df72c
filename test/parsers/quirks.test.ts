/**
 * Issue 12, open-model parser quirks: one describe per class, each case whole, at every byte split
 * and at every UTF-16 split (expectAtEverySplit). The rules are in docs/parsers.md.
 */
import {
  callEvs as call,
  expectAtEverySplit,
  fnTool as tool,
  lateIdCallEvs,
  textEv as text,
  thinkingEv as thinking,
  type SplitCase,
} from './helpers';

interface Case extends SplitCase {
  name: string;
}

function run(title: string, cases: Case[]): void {
  describe(title, () => {
    it.each(cases.map((c) => [c.name, c] as const))('%s', (_n, c) => expectAtEverySplit(c));
  });
}

const DS = {
  calls: '<｜tool▁calls▁begin｜>',
  call: '<｜tool▁call▁begin｜>',
  sep: '<｜tool▁sep｜>',
  end: '<｜tool▁call▁end｜>',
  callsEnd: '<｜tool▁calls▁end｜>',
};
const DSML = '｜DSML｜';

run('quirk 1: whitespace in string values is kept, only what the chat template inserts is stripped', [
  {
    // vLLM PR 42026's example: GLM's template writes `<arg_value>{{ v }}</arg_value>`, nothing around v.
    name: 'GLM keeps leading and trailing whitespace of a string value (schema: string)',
    family: 'glm45',
    opts: { tools: [tool('apply_diff', { string: { type: 'string' } })] },
    input:
      '<tool_call>apply_diff\n<arg_key>string</arg_key>\n<arg_value>    indented code    </arg_value>\n</tool_call>',
    expected: call(0, 'apply_diff', { string: '    indented code    ' }),
  },
  {
    name: 'GLM keeps it without a schema too (the value is not JSON)',
    family: 'glm45',
    input: '<tool_call>edit<arg_key>old</arg_key><arg_value>\tif x:\n\t\treturn 1\n</arg_value></tool_call>',
    expected: call(0, 'edit', { old: '\tif x:\n\t\treturn 1\n' }),
  },
  {
    name: 'GLM still trims around a typed value (schema: integer)',
    family: 'glm45',
    opts: { tools: [tool('f', { n: { type: 'integer' } })] },
    input: '<tool_call>f\n<arg_key>n</arg_key>\n<arg_value> 42\n</arg_value>\n</tool_call>',
    expected: call(0, 'f', { n: 42 }),
  },
  {
    // Qwen3-Coder's template: '<parameter=' + name + '>\n' + value + '\n</parameter>\n'.
    name: 'Qwen3-Coder strips only the newline after <parameter=K> and the one before </parameter>',
    family: 'qwen3-coder',
    opts: { tools: [tool('replace', { old_string: { type: 'string' } })] },
    input:
      '<tool_call>\n<function=replace>\n<parameter=old_string>\n    if x:\n        return 1\n\n</parameter>\n</function>\n</tool_call>',
    expected: call(0, 'replace', { old_string: '    if x:\n        return 1\n' }),
  },
  {
    // DSML encoding: `<｜DSML｜parameter name="k" string="true">{value}</｜DSML｜parameter>`, nothing around it.
    name: 'DSML keeps the whitespace of a string="true" value',
    family: 'deepseek-v4',
    input:
      `<${DSML}tool_calls>\n<${DSML}invoke name="write">\n` +
      `<${DSML}parameter name="code" string="true">  x = 1\n</${DSML}parameter>\n</${DSML}invoke>\n</${DSML}tool_calls>`,
    expected: call(0, 'write', { code: '  x = 1\n' }),
  },
]);

const nullable = [
  tool(
    'q',
    {
      limit: { type: ['integer', 'null'] },
      tag: { anyOf: [{ type: 'string' }, { type: 'null' }] },
      mode: { oneOf: [{ enum: ['fast', 'slow'] }, { type: 'null' }] },
      when: { $ref: '#/$defs/Stamp' },
    },
    { $defs: { Stamp: { type: ['number', 'null'] } } },
  ),
];

run('quirk 2: nullable and union types (null becomes JSON null, not "null")', [
  {
    name: 'Qwen3-Coder: ["integer","null"] null → null, anyOf string|null keeps a string, $ref number|null',
    family: 'qwen3-coder',
    opts: { tools: nullable },
    input:
      '<tool_call>\n<function=q>\n<parameter=limit>\nnull\n</parameter>\n<parameter=tag>\nnullable\n</parameter>\n' +
      '<parameter=mode>\nNone\n</parameter>\n<parameter=when>\n1.5\n</parameter>\n</function>\n</tool_call>',
    expected: call(0, 'q', { limit: null, tag: 'nullable', mode: null, when: 1.5 }),
  },
  {
    name: 'GLM: anyOf string|null with null → null; enum value kept; integer|null with a number',
    family: 'glm45',
    opts: { tools: nullable },
    input:
      '<tool_call>q<arg_key>tag</arg_key><arg_value>null</arg_value><arg_key>mode</arg_key><arg_value>fast</arg_value>' +
      '<arg_key>limit</arg_key><arg_value>7</arg_value></tool_call>',
    expected: call(0, 'q', { tag: null, mode: 'fast', limit: 7 }),
  },
  {
    name: 'GLM: a string that starts like null stays a string ("nul", "null and void")',
    family: 'glm45',
    opts: { tools: nullable },
    input:
      '<tool_call>q<arg_key>tag</arg_key><arg_value>nul</arg_value></tool_call>' +
      '<tool_call>q<arg_key>tag</arg_key><arg_value> null and void</arg_value></tool_call>',
    expected: [...call(0, 'q', { tag: 'nul' }), ...call(1, 'q', { tag: ' null and void' })],
  },
  {
    name: 'DSML: string="false" null with a nullable integer → null',
    family: 'deepseek-v4',
    opts: { tools: nullable },
    input: `<${DSML}invoke name="q">\n<${DSML}parameter name="limit" string="false">null</${DSML}parameter>\n</${DSML}invoke>`,
    expected: call(0, 'q', { limit: null }),
  },
]);

run('quirk 3: Gemma 4 quoted object keys', [
  {
    name: 'Gemma 4 {<|"|>3<|"|>:<|"|>new text<|"|>} parses to key "3"',
    family: 'gemma4',
    input: '<|tool_call>call:edit_lines{<|"|>3<|"|>:<|"|>new text<|"|>,<|"|>a b<|"|> :1}<tool_call|>',
    expected: call(0, 'edit_lines', { '3': 'new text', 'a b': 1 }),
  },
  {
    name: 'JSON-quoted keys and values (written inside containers) are read as JSON strings',
    family: 'gemma4',
    input:
      '<|tool_call>call:run{"action": "add", data_refs:["ds_1", <|"|>ds_2<|"|>], opts:{"mode": "fa\\"st\\n<b>"}}<tool_call|>',
    expected: call(0, 'run', { action: 'add', data_refs: ['ds_1', 'ds_2'], opts: { mode: 'fa"st\n<b>' } }),
  },
  {
    // Regression: a UTF-16 split between the halves of a surrogate pair in a JSON-quoted key or
    // value made the string entry spin forever (the held high surrogate was never waited for).
    name: 'JSON-quoted key and value holding a non-BMP character (🚀), cut anywhere',
    family: 'gemma4',
    input: '<|tool_call>call:run{"k🚀": "fa🚀st", tags:["🚀"]}<tool_call|>',
    expected: call(0, 'run', { 'k🚀': 'fa🚀st', tags: ['🚀'] }),
  },
  {
    name: 'an unterminated JSON-quoted value ends at the closing token (call completed, warning)',
    family: 'gemma4',
    input: '<|tool_call>call:f{q:"abc<tool_call|>Done',
    expected: [...call(0, 'f', '{"q":"abc"'), text('Done')],
    warnings: ['parser.malformed_call'],
  },
  {
    name: 'nested quoted keys, FunctionGemma <escape> too',
    family: 'functiongemma',
    input: '<start_function_call>call:patch{lines:{<escape>10<escape>:<escape>x<escape>}}<end_function_call>',
    expected: call(0, 'patch', { lines: { '10': 'x' } }),
  },
]);

run('quirk 4: GPT-OSS recipient in the role header', [
  {
    // The prompt ends with `<|start|>assistant`; the model continues the header with its recipient.
    name: 'output starting " to=functions.NAME<|channel|>commentary json<|message|>" is a call',
    family: 'gpt-oss',
    input: ' to=functions.get_weather<|channel|>commentary json<|message|>{"location":"Tokyo"}<|call|>',
    expected: call(0, 'get_weather', '{"location":"Tokyo"}'),
  },
  {
    name: 'the <|channel|>commentary to=functions.NAME order',
    family: 'gpt-oss',
    input:
      '<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"location":"Paris"}<|call|>',
    expected: [thinking('Need weather.'), ...call(0, 'get_weather', '{"location":"Paris"}')],
  },
  {
    name: 'a final answer that starts with "to" is text',
    family: 'gpt-oss',
    input: 'to be or not to be',
    expected: [text('to be or not to be')],
  },
]);

run('quirk 5: a call section ends an unclosed reasoning block', [
  {
    name: 'Kimi K2: <|tool_calls_section_begin|> inside <think> ends it; the call is found',
    family: 'kimi-k2',
    input:
      '<think>I should check the weather.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0' +
      '<|tool_call_argument_begin|>{"city": "Beijing"}<|tool_call_end|><|tool_calls_section_end|>',
    expected: [
      thinking('I should check the weather.'),
      ...call(0, 'get_weather', '{"city": "Beijing"}', 'functions.get_weather:0'),
    ],
  },
  {
    name: 'DeepSeek V3.1 (thinking opened by the template): the section ends the reasoning',
    family: 'deepseek-v3.1',
    opts: { startInReasoning: true },
    input: `The user wants Paris.${DS.calls}${DS.call}get_weather${DS.sep}{"city": "Paris"}${DS.end}${DS.callsEnd}`,
    expected: [thinking('The user wants Paris.'), ...call(0, 'get_weather', '{"city": "Paris"}')],
  },
  {
    name: 'DeepSeek V3.1: a bare call opener inside <think> too',
    family: 'deepseek-v3.1',
    input: `<think>ok${DS.call}ls${DS.sep}{}${DS.end}`,
    expected: [thinking('ok'), ...call(0, 'ls', '{}')],
  },
]);

run('quirk 6: Llama 3 JSON parallel calls separated by newlines', [
  {
    name: 'two calls one per line at the start of the output',
    family: 'llama3',
    input:
      '{"name": "get_weather", "parameters": {"city": "Paris"}}\n{"name": "get_time", "parameters": {"tz": "CET"}}',
    expected: [...call(0, 'get_weather', '{"city": "Paris"}'), ...call(1, 'get_time', '{"tz": "CET"}')],
  },
  {
    name: 'after <|python_tag|>, mixed ; and newline separators',
    family: 'llama3',
    input:
      '<|python_tag|>{"name": "a", "parameters": {}};\n{"name": "b", "parameters": {}}\n\n{"name": "c", "parameters": {"x": 1}}<|eom_id|>',
    expected: [...call(0, 'a', '{}'), ...call(1, 'b', '{}'), ...call(2, 'c', '{"x": 1}')],
  },
  {
    name: 'a JSON object on the next line that is not a call is text',
    family: 'llama3',
    input: '{"name": "a", "parameters": {}}\n{"result": 1}',
    expected: [...call(0, 'a', '{}'), text('\n{"result": 1}')],
  },
]);

run("quirk 7: Mistral keeps the model's own call id", [
  {
    // The Mistral v0.3 chat template writes `, "id": "<9 chars>"` after each call's arguments.
    name: '[TOOL_CALLS][{…, "id": "123456789"}, …] keeps each call\'s id',
    family: 'mistral',
    input:
      '[TOOL_CALLS] [{"name": "a", "arguments": {}, "id": "123456789"}, {"name": "b", "arguments": {"x": [1]}, "id": "abcDEF123"}]',
    expected: [
      ...lateIdCallEvs(0, 'a', '{}', '123456789'),
      ...lateIdCallEvs(1, 'b', '{"x": [1]}', 'abcDEF123'),
    ],
  },
  {
    name: 'a call without "id" gets call_<index>',
    family: 'mistral',
    input: '[TOOL_CALLS][{"name": "a", "arguments": {"q": "x"}}]',
    expected: lateIdCallEvs(0, 'a', '{"q": "x"}'),
  },
  {
    name: 'the [CALL_ID] form',
    family: 'mistral',
    input: '[TOOL_CALLS]get_weather[CALL_ID]a1B2c3D4e[ARGS]{"city": "Paris"}',
    expected: call(0, 'get_weather', '{"city": "Paris"}', 'a1B2c3D4e'),
  },
]);

run('quirk 8: repairs the reference servers make', [
  {
    name: 'Kimi: an id whose name part is not a valid tool name is dropped (never run invalid.0)',
    family: 'kimi-k2',
    input:
      '<|tool_calls_section_begin|><|tool_call_begin|>functions.invalid.0<|tool_call_argument_begin|>{"a": 1}<|tool_call_end|>' +
      '<|tool_call_begin|>functions.get_weather:1<|tool_call_argument_begin|>{"city": "Tokyo"}<|tool_call_end|><|tool_calls_section_end|>',
    expected: call(0, 'get_weather', '{"city": "Tokyo"}', 'functions.get_weather:1'),
    warnings: ['parser.invalid_call'],
  },
  {
    name: 'Kimi with tools: an unknown name is dropped, a client-sanitised id (functions_NAME_N) maps to its tool',
    family: 'kimi-k2',
    opts: { tools: [tool('get_weather', { city: { type: 'string' } })] },
    input:
      '<|tool_calls_section_begin|><|tool_call_begin|>functions.rm_rf:0<|tool_call_argument_begin|>{}<|tool_call_end|>' +
      '<|tool_call_begin|>functions_get_weather_1<|tool_call_argument_begin|>{"city": "Oslo"}<|tool_call_end|><|tool_calls_section_end|>',
    expected: call(0, 'get_weather', '{"city": "Oslo"}', 'functions_get_weather_1'),
    warnings: ['parser.invalid_call'],
  },
  {
    // SGLang PR 12456: GLM 4.x wrote an array argument with backslash-escaped quotes.
    name: 'GLM: backslash-escaped JSON inside a value is decoded',
    family: 'glm45',
    opts: { tools: [tool('todo_write', { todos: { type: 'array' } })] },
    input:
      '<tool_call>todo_write\n<arg_key>todos</arg_key>\n<arg_value>[{\\"id\\": \\"1\\", \\"task\\": \\"检查后端代码\\", \\"status\\": \\"in_progress\\"}]</arg_value>\n</tool_call>',
    expected: call(0, 'todo_write', { todos: [{ id: '1', task: '检查后端代码', status: 'in_progress' }] }),
  },
  {
    name: 'GLM: the same without a schema',
    family: 'glm45',
    input: '<tool_call>f<arg_key>o</arg_key><arg_value>{\\"a\\": [1, \\"x\\"]}</arg_value></tool_call>',
    expected: call(0, 'f', { o: { a: [1, 'x'] } }),
  },
  {
    name: 'Qwen3-Coder: Python literals (True/False/None, single quotes, tuples) in typed and untyped values',
    family: 'qwen3-coder',
    opts: {
      tools: [
        tool('search', { opts: { type: 'object' }, flag: { type: 'boolean' }, ids: { type: 'array' } }),
      ],
    },
    input:
      "<tool_call>\n<function=search>\n<parameter=opts>\n{'recursive': True, 'depth': None, 'names': ['a', \"b's\"]}\n</parameter>\n" +
      '<parameter=flag>\nFalse\n</parameter>\n<parameter=ids>\n(1, 2)\n</parameter>\n' +
      "<parameter=extra>\n{'k': 'v'}\n</parameter>\n</function>\n</tool_call>",
    expected: call(0, 'search', {
      opts: { recursive: true, depth: null, names: ['a', "b's"] },
      flag: false,
      ids: [1, 2],
      extra: { k: 'v' },
    }),
  },
  ...[
    '<｜tool_calls_begin｜>',
    '<｜tool calls begin｜>',
    '<｜tool\\_calls\\_begin｜>',
    '<｜tool▁calls｜>',
  ].map((opener): Case => ({
    name: `DeepSeek R1: the alternate section opener ${opener}`,
    family: 'deepseek-r1',
    input: `<think>hm</think>${opener}${DS.call}function${DS.sep}get_weather\n\`\`\`json\n{"city": "Paris"}\n\`\`\`${DS.end}${DS.callsEnd}`,
    expected: [thinking('hm'), ...call(0, 'get_weather', '{"city": "Paris"}')],
  })),
  {
    // #19 class 3: the broken call must never be emitted (no identity without completion); the
    // valid call after it is call 0.
    name: 'Llama 3: an invalid call object followed by a valid call: only the valid one is a call',
    family: 'llama3',
    input:
      '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"} "units": "C"}\n{"name": "get_time", "parameters": {"tz": "CET"}}',
    expected: call(0, 'get_time', '{"tz": "CET"}'),
    warnings: ['parser.malformed_call'],
  },
  {
    name: 'Llama 3: broken parameters JSON then a valid call after ";": only the valid one is a call',
    family: 'llama3',
    input:
      '{"name": "invalidTool", "parameters": {invalid json}; {"name": "searchTool", "parameters": {"query": "test"}}',
    expected: call(0, 'searchTool', '{"query": "test"}'),
    warnings: ['parser.malformed_call'],
  },
  {
    name: 'Llama 3: two broken calls around a valid one, one per line',
    family: 'llama3',
    input:
      '<|python_tag|>{"name": "a" "parameters": {"x": 1}}\n{"name": "b", "parameters": {"y": 2}}\n{"name": "c", "parameters": {"z": 3} "u": 1}',
    expected: call(0, 'b', '{"y": 2}'),
    warnings: ['parser.malformed_call', 'parser.malformed_call'],
  },
]);

// #19 "Parsers: the last reference cases" (class 3, Llama 3 broken-then-valid, is in quirk 8).
const todoTool = tool('todo_write', {
  todos: { type: 'array', items: { type: 'object' } },
  merge: { type: 'boolean' },
});
run('quirk 9: GLM literal \\n separators (SGLang Glm4MoeDetector) with backslash-escaped JSON values', [
  {
    // SGLang test_with_args_literal_newline_separator: "\\n" in the Python source is backslash + n.
    name: 'literal \\n after the name, between the tags and before </tool_call>',
    family: 'glm45',
    input: String.raw`<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>杭州</arg_value>\n</tool_call>`,
    expected: call(0, 'get_weather', { city: '杭州' }),
  },
  {
    name: 'literal \\n layout and a backslash-escaped JSON array value (no schema)',
    family: 'glm45',
    input: String.raw`Adding it.<tool_call>todo_write\n<arg_key>todos</arg_key>\n<arg_value>[{\"id\": \"1\", \"content\": \"Fix the bug\"}]</arg_value>\n<arg_key>merge</arg_key>\n<arg_value>false</arg_value>\n</tool_call>`,
    expected: [
      text('Adding it.'),
      ...call(0, 'todo_write', { todos: [{ id: '1', content: 'Fix the bug' }], merge: false }),
    ],
  },
  {
    name: 'literal \\n layout and a backslash-escaped JSON array value (schema: array, boolean)',
    family: 'glm45',
    opts: { tools: [todoTool] },
    input: String.raw`<tool_call>todo_write\n<arg_key>todos</arg_key>\n<arg_value>[{\"id\": \"1\", \"content\": \"a \\\"quoted\\\" word\"}]</arg_value>\n<arg_key>merge</arg_key>\n<arg_value>true</arg_value>\n</tool_call>`,
    expected: call(0, 'todo_write', { todos: [{ id: '1', content: 'a "quoted" word' }], merge: true }),
  },
  {
    name: 'two literal \\n after the name, a real newline before </tool_call>; a second call follows',
    family: 'glm45',
    input: String.raw`<tool_call>a\n\n<arg_key>x</arg_key>\n<arg_value>1</arg_value>` + '\n</tool_call>\n<tool_call>b\n</tool_call>',
    expected: [...call(0, 'a', { x: 1 }), ...call(1, 'b', {})],
  },
  {
    name: 'a name followed by another escape (\\t) is not a name: the markup stays text',
    family: 'glm45',
    input: String.raw`<tool_call>get_weather\t</tool_call> is how it looks`,
    expected: [text(String.raw`<tool_call>get_weather\t is how it looks`)],
  },
]);

run('quirk 10: DeepSeek R1 distills: a call section without <｜tool▁call▁begin｜>', [
  {
    // llama.cpp tests/test-chat.cpp, COMMON_CHAT_FORMAT_DEEPSEEK_R1 (message_assist_call).
    name: '<｜tool▁calls｜>function<｜tool▁sep｜>name straight after the opener',
    family: 'deepseek-r1',
    input: `<｜tool▁calls｜>function${DS.sep}special_function\n\`\`\`json\n{"arg1": 1}\n\`\`\`${DS.end}${DS.callsEnd}`,
    expected: call(0, 'special_function', '{"arg1": 1}'),
  },
  {
    name: 'after reasoning, with the canonical opener and two calls, the second also without its opener',
    family: 'deepseek-r1',
    input:
      `<think>hm</think>${DS.calls}function${DS.sep}a\n\`\`\`json\n{"x": 1}\n\`\`\`${DS.end}\n` +
      `${DS.call}function${DS.sep}b\n\`\`\`json\n{}\n\`\`\`${DS.end}function${DS.sep}c\n\`\`\`json\n[]\n\`\`\`${DS.end}${DS.callsEnd}done`,
    expected: [
      thinking('hm'),
      ...call(0, 'a', '{"x": 1}'),
      ...call(1, 'b', '{}'),
      ...call(2, 'c', '[]'),
      text('done'),
    ],
  },
]);

// #19 "Gemma single-quoted strings": Gemma 4 sometimes writes a value between single quotes
// instead of its <|"|> delimiters. Sources: Ollama model/parsers/gemma4_test.go
// (TestParseGemma4ToolCall_RepairsIssue15315Examples, TestRepairGemma4SingleQuotedValues; the grep
// call is the output quoted in Ollama issue 15315) and oMLX tests (test_issue_1830_exact_format).
run("quirk 11: Gemma single-quoted values ('…' after a key or as an array item)", [
  {
    name: 'Ollama issue 15315: a single-quoted regex with a dangling <|"|> after the closing quote',
    family: 'gemma4',
    input: String.raw`<|tool_call>call:grep{include:<|"|>*.py<|"|>,output_mode:<|"|>content<|"|>,path:<|"|>/data/robotics/experiment1<|"|>,pattern:':\s*\w+'<|"|>}<tool_call|>`,
    expected: call(0, 'grep', {
      include: '*.py',
      output_mode: 'content',
      path: '/data/robotics/experiment1',
      pattern: String.raw`:\s*\w+`,
    }),
  },
  {
    name: 'Ollama converts_middle_single_quoted_value: a single-quoted value between delimited ones',
    family: 'gemma4',
    input: `<|tool_call>call:grep{include:<|"|>*.py<|"|>,pattern:'abc',path:<|"|>/tmp<|"|>}<tool_call|>`,
    expected: call(0, 'grep', { include: '*.py', pattern: 'abc', path: '/tmp' }),
  },
  {
    name: "oMLX issue 1830: commas, colons, braces and an apostrophe inside single-quoted values",
    family: 'gemma4',
    input:
      "<|tool_call>call:google:mcp:text_generation:create-pdf-file{filename: 'output.pdf', title: 'Quarterly Report', " +
      "content: 'Revenue grew 12%, costs fell: margins improved. Don't forget the appendix {tables}.'}<tool_call|>",
    expected: call(0, 'google:mcp:text_generation:create-pdf-file', {
      filename: 'output.pdf',
      title: 'Quarterly Report',
      content: "Revenue grew 12%, costs fell: margins improved. Don't forget the appendix {tables}.",
    }),
  },
  {
    // vLLM issue 51284 lists data_refs:['ds_152a4bfd970b4313'] among Gemma 4's emissions.
    name: "vLLM issue 51284: data_refs:['ds_152a4bfd970b4313'] (a single-quoted array item)",
    family: 'gemma4',
    input: "<|tool_call>call:analyze{data_refs:['ds_152a4bfd970b4313']}<tool_call|>",
    expected: call(0, 'analyze', { data_refs: ['ds_152a4bfd970b4313'] }),
  },
  {
    name: 'array items, whitespace before the closing bracket, double quotes and non-ASCII inside',
    family: 'gemma4',
    input: `<|tool_call>call:note{tags:['mlx' , 'swift'  ],title:'Bob's "Ünïcode" note 🚀' }<tool_call|>`,
    expected: call(0, 'note', { tags: ['mlx', 'swift'], title: 'Bob\'s "Ünïcode" note 🚀' }),
  },
  {
    name: "a backslash keeps the next quote in the value and is kept itself (Ollama's rule)",
    family: 'gemma4',
    input: String.raw`<|tool_call>call:say{text:'it\', she said\\',n:1}<tool_call|>`,
    expected: call(0, 'say', { text: String.raw`it\', she said\\`, n: 1 }),
  },
  {
    name: 'an apostrophe inside a bare value, or not at a value position, is not a quote',
    family: 'gemma4',
    input: `<|tool_call>call:f{who:Bob's,why:it's ok}<tool_call|>`,
    expected: call(0, 'f', { who: "Bob's", why: "it's ok" }),
  },
  {
    name: 'an unterminated single-quoted value ends at the closing token (call completed, warning)',
    family: 'gemma4',
    input: `<|tool_call>call:f{q:'abc}<tool_call|>Done`,
    expected: [...call(0, 'f', '{"q":"abc}"'), text('Done')],
    warnings: ['parser.malformed_call'],
  },
  {
    name: 'a quote right before the closing token closes the value (the missing } is warned)',
    family: 'gemma4',
    input: `<|tool_call>call:f{q:'a'<tool_call|>`,
    expected: call(0, 'f', '{"q":"a"'),
    warnings: ['parser.malformed_call'],
  },
  {
    name: 'FunctionGemma: the same rule with <escape> as the delimiter',
    family: 'functiongemma',
    input: `<start_function_call>call:grep{pattern:'a, b'<escape>,path:<escape>/tmp<escape>}<end_function_call>`,
    expected: call(0, 'grep', { pattern: 'a, b', path: '/tmp' }),
  },
]);

// Missing commas between arguments: vLLM tests/tool_parsers/test_functiongemma_tool_parser.py
// (test_streamed_arguments_form_valid_json_with_two_keys) and yzma PR 243 (Gemma 4).
run('quirk 12: Gemma arguments without commas between them', [
  {
    name: 'FunctionGemma city:<escape>NYC<escape>unit:<escape>celsius<escape> (vLLM streaming test)',
    family: 'functiongemma',
    input: '<start_function_call>call:get_weather{city:<escape>NYC<escape>unit:<escape>celsius<escape>}<end_function_call>',
    expected: call(0, 'get_weather', { city: 'NYC', unit: 'celsius' }),
  },
  {
    name: 'Gemma 4 command:<|"|>look<|"|>angle:90 (yzma PR 243)',
    family: 'gemma4',
    input: '<|tool_call>call:move{command:<|"|>look<|"|>angle:90}<tool_call|>',
    expected: call(0, 'move', { command: 'look', angle: 90 }),
  },
]);
