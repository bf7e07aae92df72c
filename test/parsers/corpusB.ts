/**
 * Issue 12, batch B: streams for the new families.
 *
 * - `CASES_B`: one synthetic stream per family (and per layout), in the shape of cases.ts
 *   (reasoning, text, two calls with non-ASCII and escaped characters, text after the calls).
 * - `REAL_B`: outputs as written in the families' public sources (chat-template examples and
 *   renderings, model documentation, format specifications, test data), each with its source.
 * - `LOOKALIKES_B`: text that resembles the markup, with the documented outcome.
 */
import type { StreamEvent } from '../../src/wire/events';
import { ARGS0, ARGS1, events, NOTE, R, T1, T2, type FamilyCase } from './cases';
import { verbatim, type Lookalike, type PublishedOutput } from './familySuite';
import { callEvs, textEv, thinkingEv } from './helpers';

export interface CaseB extends FamilyCase {
  /** Openers whose partial text, held at the end of a truncated stream, becomes text. */
  openers: string[];
}

const std = (thinking: boolean, text1 = T1): StreamEvent[] =>
  events({
    thinking: thinking ? R : undefined,
    text1,
    calls: [
      { name: 'read_file', args: ARGS0 },
      { name: 'get_weather', args: ARGS1 },
    ],
    text2: T2,
  });

const OBJ0 = (nameKey: string, argKey: string): string =>
  `{"${nameKey}": "read_file", "${argKey}": ${ARGS0}}`;
const OBJ1 = (nameKey: string, argKey: string): string =>
  `{"${nameKey}": "get_weather", "${argKey}": ${ARGS1}}`;
/** The end of each argument object inside an array element: the element's `}` follows. */
const ELEMENT_ENDS = ['🚀"}}', '"days":3}}'];

export const CASES_B: CaseB[] = [
  {
    title: 'phi-4-mini (functools[…])',
    family: 'phi-4-mini',
    stream: `${T1}functools[${OBJ0('name', 'arguments')}, ${OBJ1('name', 'arguments')}]${T2}<|end|>`,
    expected: std(false),
    closeAt: ELEMENT_ENDS,
    markers: ['functools', '"arguments"', '<|end|>'],
    openers: ['functools[', '<|tool_call|>', '<|/tool_call|>', '<|end|>'],
  },
  {
    title: 'phi-4-mini (<|tool_call|>)',
    family: 'phi-4-mini',
    stream:
      `${T1}<|tool_call|>${OBJ0('name', 'arguments')}<|/tool_call|>\n` +
      `<|tool_call|>${OBJ1('name', 'arguments')}<|/tool_call|>${T2}<|end|>`,
    expected: std(false),
    closeAt: ['<|/tool_call|>', '<|/tool_call|>'],
    markers: ['<|', '|>', '"arguments"'],
    openers: ['<|tool_call|>', '<|end|>', '<|/tool_call|>'],
  },
  {
    title: 'firefunction-v2',
    family: 'firefunction-v2',
    stream: `${T1}functools[${OBJ0('name', 'arguments')}, ${OBJ1('name', 'arguments')}]${T2}<|eot_id|>`,
    expected: std(false),
    closeAt: ELEMENT_ENDS,
    markers: ['functools', '"arguments"', '<|eot_id|>'],
    openers: ['functools[', '<|eot_id|>'],
  },
  {
    title: 'internlm2',
    family: 'internlm2',
    stream:
      `<think>${R}</think>${T1}<|action_start|><|plugin|>\n${OBJ0('name', 'parameters')}<|action_end|>\n` +
      `<|action_start|><|plugin|>\n${OBJ1('name', 'parameters')}<|action_end|>${T2}<|im_end|>`,
    expected: std(true),
    closeAt: ['<|action_end|>', '<|action_end|>'],
    markers: ['<think>', '</think>', '<|', '|>', '"parameters"'],
    openers: ['<|action_start|><|plugin|>', '<|action_end|>', '<|im_end|>', '<think>', '</think>'],
  },
  {
    title: 'command-r7b',
    family: 'command-r7b',
    stream:
      `<|START_THINKING|>${R}<|END_THINKING|><|START_RESPONSE|>${T1}<|END_RESPONSE|><|START_ACTION|>[\n` +
      `    {"tool_call_id": "0", "tool_name": "read_file", "parameters": ${ARGS0}},\n` +
      `    {"tool_call_id": "1", "tool_name": "get_weather", "parameters": ${ARGS1}}\n]<|END_ACTION|>${T2}<|END_OF_TURN_TOKEN|>`,
    expected: std(true),
    closeAt: ELEMENT_ENDS,
    markers: ['<|', '|>', 'tool_call_id', 'tool_name'],
    openers: [
      '<|START_THINKING|>',
      '<|END_THINKING|>',
      '<|START_ACTION|>',
      '<|END_ACTION|>',
      '<|START_RESPONSE|>',
      '<|END_RESPONSE|>',
      '<|END_OF_TURN_TOKEN|>',
    ],
  },
  {
    title: 'apertus',
    family: 'apertus',
    stream:
      `<|inner_prefix|>${R}<|inner_suffix|>${T1}<|tools_prefix|>[{"read_file": ${ARGS0}}, ` +
      `{"get_weather": ${ARGS1}}]<|tools_suffix|>${T2}<|assistant_end|>`,
    expected: std(true),
    closeAt: ELEMENT_ENDS,
    markers: ['<|', '|>'],
    openers: [
      '<|inner_prefix|>',
      '<|inner_suffix|>',
      '<|tools_prefix|>',
      '<|tools_suffix|>',
      '<|assistant_end|>',
    ],
  },
  {
    title: 'gigachat3',
    family: 'gigachat3',
    stream:
      `${T1}<|message_sep|>\n\nfunction call<|role_sep|>\n${OBJ0('name', 'arguments')}<|message_sep|>\n\n` +
      `function call<|role_sep|>\n${OBJ1('name', 'arguments')}${T2}<|message_sep|>`,
    expected: std(false, T1 + '\n\n'),
    closeAt: ELEMENT_ENDS,
    markers: ['<|', '|>', 'function call'],
    openers: ['function call<|role_sep|>', '<|message_sep|>'],
  },
  {
    title: 'functionary-v3.1',
    family: 'functionary-v3.1',
    stream: `${T1}<function=read_file>${ARGS0}</function><function=get_weather>${ARGS1}</function>${T2}<|eot_id|>`,
    expected: std(false),
    closeAt: ['</function>', '</function>'],
    markers: ['<function', '</function', '<|'],
    openers: ['<function=', '</function>', '<|python_tag|>', '<|eom_id|>', '<|eot_id|>'],
  },
  {
    title: 'functionary-v3.1 (python_tag)',
    family: 'functionary-v3.1',
    stream: `${T1}<|python_tag|>${NOTE}<|eom_id|>`,
    expected: events({
      text1: T1,
      calls: [{ name: 'python', args: JSON.stringify({ code: NOTE }) }],
    }),
    closeAt: ['<|eom_id|>'],
    markers: ['<|'],
    openers: ['<function=', '</function>', '<|python_tag|>', '<|eom_id|>', '<|eot_id|>'],
  },
  {
    title: 'functionary-v3.2',
    family: 'functionary-v3.2',
    stream: `all\n${T1}>>>read_file\n${ARGS0}>>>get_weather\n${ARGS1}>>>all\n${T2}<|eot_id|>`,
    expected: std(false),
    closeAt: [ARGS0, ARGS1],
    markers: ['>>>', 'all\n', '<|'],
    openers: ['>>>', '<|eom_id|>', '<|eot_id|>'],
  },
];

const K3_ARG = (key: string, type: string, v: string): string =>
  `<|open|>argument key="${key}" type="${type}"<|sep|>${v}<|close|>argument<|sep|>`;

CASES_B.push({
  title: 'kimi-k3 (XTML)',
  family: 'kimi-k3',
  opts: { startInReasoning: true },
  stream:
    `${R}<|close|>think<|sep|><|open|>response<|sep|>${T1}<|close|>response<|sep|><|open|>tools<|sep|>` +
    `<|open|>call tool="read_file" index="1"<|sep|>${K3_ARG('path', 'string', 'docs/日本語.md')}${K3_ARG('note', 'string', NOTE)}<|close|>call<|sep|>` +
    `<|open|>call tool="get_weather" index="2"<|sep|>${K3_ARG('city', 'string', 'Tokyo')}${K3_ARG('days', 'number', '3')}<|close|>call<|sep|>` +
    `<|close|>tools<|sep|>${T2}<|close|>message<|sep|><|end_of_msg|>`,
  expected: std(true),
  closeAt: ['<|close|>call<|sep|>', '<|close|>call<|sep|>'],
  markers: ['<|', '|>', 'argument', 'call tool'],
  openers: [
    '<|open|>call',
    '<|close|>think<|sep|>',
    '<|open|>response<|sep|>',
    '<|close|>response<|sep|>',
    '<|open|>tools<|sep|>',
    '<|close|>tools<|sep|>',
    '<|close|>message<|sep|>',
    '<|end_of_msg|>',
    '<|close|>call<|sep|>',
  ],
});

CASES_B.push(
  {
    title: 'lfm2 (Python call list)',
    family: 'lfm2',
    stream:
      `<think>${R}</think>${T1}<|tool_call_start|>[read_file(path='docs/日本語.md', note=${JSON.stringify(NOTE)}), ` +
      `get_weather(city="Tokyo", days=3)]<|tool_call_end|>${T2}<|im_end|>`,
    expected: events({
      thinking: R,
      text1: T1,
      calls: [
        { name: 'read_file', args: JSON.stringify({ path: 'docs/日本語.md', note: NOTE }) },
        { name: 'get_weather', args: JSON.stringify({ city: 'Tokyo', days: 3 }) },
      ],
      text2: T2,
    }),
    closeAt: ['🚀")', 'days=3)'],
    markers: ['<think>', '</think>', '<|', '|>', 'read_file('],
    openers: ['<think>', '</think>', '<|tool_call_start|>', '<|tool_call_end|>', '<|im_end|>'],
  },
  {
    title: 'lfm2 (JSON array)',
    family: 'lfm2',
    stream: `${T1}<|tool_call_start|>[${OBJ0('name', 'arguments')}, ${OBJ1('name', 'arguments')}]<|tool_call_end|>${T2}<|im_end|>`,
    expected: std(false),
    closeAt: ELEMENT_ENDS,
    markers: ['<|', '|>', '"arguments"'],
    openers: ['<think>', '</think>', '<|tool_call_start|>', '<|tool_call_end|>', '<|im_end|>'],
  },
);

CASES_B.push({
  title: 'olmo3',
  family: 'olmo3',
  stream:
    `<think>${R}</think>${T1}<function_calls>read_file(path="docs/日本語.md", note=${JSON.stringify(NOTE)})\n` +
    `get_weather(city="Tokyo", days=3)</function_calls>${T2}<|im_end|>`,
  expected: events({
    thinking: R,
    text1: T1,
    calls: [
      { name: 'read_file', args: JSON.stringify({ path: 'docs/日本語.md', note: NOTE }) },
      { name: 'get_weather', args: JSON.stringify({ city: 'Tokyo', days: 3 }) },
    ],
    text2: T2,
  }),
  closeAt: ['🚀")', 'days=3)'],
  markers: ['<think>', '</think>', 'function_calls', 'read_file(', '<|'],
  openers: ['<think>', '</think>', '<function_calls>', '</function_calls>', '<|im_end|>', '<|endoftext|>'],
});

/** A published output (input, the documented calls, text and thinking untrimmed). */
export type RealCase = PublishedOutput & { title: string };

export const REAL_B: RealCase[] = [
  {
    title: 'InternLM2 tool call (InternLM chat format documentation)',
    family: 'internlm2',
    source: 'InternLM/InternLM chat/chat_format.md, "Function call" example',
    input:
      'Sure, I will search for the weather of Shanghai.<|action_start|><|plugin|>\n' +
      '{"name": "get_current_weather", "parameters": {"location": "Shanghai"}}<|action_end|><|im_end|>',
    text: 'Sure, I will search for the weather of Shanghai.',
    calls: [{ name: 'get_current_weather', args: { location: 'Shanghai' } }],
  },
  {
    title: 'InternLM2 tool call after reasoning text (lmdeploy prompt test)',
    family: 'internlm2',
    source: 'InternLM/lmdeploy tests/test_lmdeploy/test_model.py, internlm2 tool prompt',
    input:
      '(3+5)*2 = 8*2 =<|action_start|><|plugin|>\n{"name": "mul", "parameters": {"a": 8, "b": 2}}<|action_end|><|im_end|>',
    text: '(3+5)*2 = 8*2 =',
    calls: [{ name: 'mul', args: { a: 8, b: 2 } }],
  },
  {
    title: 'Apertus reasoning and tool call (format specification)',
    family: 'apertus',
    source: 'swiss-ai/apertus_format docs/format.md, "Example Rendered Output"',
    input:
      '<|inner_prefix|>I need to calculate this.<|inner_suffix|>\n<|tools_prefix|>[{"calculator": {"expr": "2+2"}}]<|tools_suffix|>',
    thinking: 'I need to calculate this.',
    text: '\n',
    calls: [{ name: 'calculator', args: { expr: '2+2' } }],
  },
  {
    title: 'Phi-4-mini <|tool_call|> (llama.cpp Phi-4-mini template instruction)',
    family: 'phi-4-mini',
    source: 'ggml-org/llama.cpp models/templates/llama-cpp-microsoft-Phi-4-mini-instruct.jinja',
    input: '<|tool_call|>{"name": "foo", "arguments": {"a": 1}}<|/tool_call|><|end|>',
    text: '',
    calls: [{ name: 'foo', args: { a: 1 } }],
  },
  {
    title: 'Phi-4-mini parallel functools (vLLM phi4_mini_json parser test data)',
    family: 'phi-4-mini',
    source: 'vllm-project/vllm tests/tool_parsers (phi4_mini_json), parallel_tool_calls_output',
    input:
      'functools[\n  {"name": "get_weather", "arguments": {"city": "Tokyo"}},\n' +
      '  {"name": "get_time", "arguments": {"timezone": "Asia/Tokyo"}}\n]',
    text: '',
    calls: [
      { name: 'get_weather', args: { city: 'Tokyo' } },
      { name: 'get_time', args: { timezone: 'Asia/Tokyo' } },
    ],
  },
  {
    title: 'Firefunction v2 call after text (chat template rendering)',
    family: 'firefunction-v2',
    source:
      'fireworks-ai/llama-3-firefunction-v2 chat template (via huggingface.js ollama-utils chat-template-automap): ' +
      "content + ' functools[' + calls + ']' + '<|eot_id|>'",
    input:
      'Let me look that up. functools[{"name": "get_stock_price", "arguments": {"symbol": "AAPL"}}]<|eot_id|>',
    text: 'Let me look that up. ',
    calls: [{ name: 'get_stock_price', args: { symbol: 'AAPL' } }],
  },
  {
    title: 'Command R7B action (chat template document turn)',
    family: 'command-r7b',
    source:
      'ggml-org/llama.cpp models/templates/CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja, document_turn',
    input:
      '<|START_THINKING|>I will look through the document to address the users needs.<|END_THINKING|><|START_ACTION|>[\n' +
      '    {"tool_call_id": "0", "tool_name": "direct-injected-document", "parameters": {}}\n]<|END_ACTION|><|END_OF_TURN_TOKEN|>',
    thinking: 'I will look through the document to address the users needs.',
    text: '',
    calls: [{ name: 'direct-injected-document', args: {} }],
  },
  {
    title: 'Command R7B answer (chat template response block)',
    family: 'command-r7b',
    source: 'same template: <|START_RESPONSE|>{{message.content}}<|END_RESPONSE|><|END_OF_TURN_TOKEN|>',
    input: '<|START_RESPONSE|>The answer is 4.<|END_RESPONSE|><|END_OF_TURN_TOKEN|>',
    text: 'The answer is 4.',
    calls: [],
  },
  {
    title: 'Functionary v3.1 call (chat template example)',
    family: 'functionary-v3.1',
    source:
      'meetkai functionary-medium-v3.1 chat template (llama.cpp models/templates), "Here is an example"',
    input: '<function=example_function_name>{"example_name": "example_value"}</function><|eom_id|>',
    text: '',
    calls: [{ name: 'example_function_name', args: { example_name: 'example_value' } }],
  },
  {
    title: 'Functionary v3.2 call with multi-line arguments (template rendering of a Hanoi weather call)',
    family: 'functionary-v3.2',
    source:
      "meetkai functionary-medium-v3.2 chat template: '>>>' + name + '\\n' + arguments; arguments from " +
      'huggingface/huggingface.js packages/jinja/test/e2e.test.js EXAMPLE_FUNCTION_CALLING',
    input: 'get_current_weather\n{\n  "location": "Hanoi"\n}<|eot_id|>',
    text: '',
    calls: [{ name: 'get_current_weather', args: { location: 'Hanoi' } }],
  },
  {
    title: 'GigaChat 3 function call message (chat template rendering)',
    family: 'gigachat3',
    source:
      "ggml-org/llama.cpp models/templates/GigaChat3-10B-A1.8B.jinja: render_function_call → 'function call' + role_sep + " +
      '\'{"name": …, "arguments": …}\' + message_sep',
    input:
      'Сейчас проверю погоду.<|message_sep|>\n\nfunction call<|role_sep|>\n{"name": "get_weather", "arguments": {"city": "Москва"}}<|message_sep|>\n\n',
    text: 'Сейчас проверю погоду.\n\n',
    calls: [{ name: 'get_weather', args: { city: 'Москва' } }],
  },
  {
    title: 'Kimi K3 tool call with typed arguments (chat template rendering)',
    family: 'kimi-k3',
    source:
      'ggml-org/llama.cpp models/templates/Kimi-K3.jinja, render_assistant: open_tag(call, tool, index), ' +
      'open_tag(argument, key, type) + xtml_value + close_tag(argument)',
    opts: { startInReasoning: true },
    input:
      'The user wants the weather.<|close|>think<|sep|><|open|>response<|sep|><|close|>response<|sep|>' +
      '<|open|>tools<|sep|><|open|>call tool="get_weather" index="1"<|sep|>' +
      '<|open|>argument key="city" type="string"<|sep|>Tokyo<|close|>argument<|sep|>' +
      '<|open|>argument key="days" type="number"<|sep|>3<|close|>argument<|sep|>' +
      '<|open|>argument key="metric" type="boolean"<|sep|>true<|close|>argument<|sep|>' +
      '<|open|>argument key="hours" type="array"<|sep|>[9, 12]<|close|>argument<|sep|>' +
      '<|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|><|end_of_msg|>',
    thinking: 'The user wants the weather.',
    text: '',
    calls: [{ name: 'get_weather', args: { city: 'Tokyo', days: 3, metric: true, hours: [9, 12] } }],
  },
  {
    title: 'LFM2.5 Python call followed by text (LFM2.5 chat template reference)',
    family: 'lfm2',
    source:
      'neatflowcv/search docs/lfm2.5-chat-template.md (from the LiquidAI/LFM2.5-1.2B-Instruct model card), "Function Call"',
    input:
      '<|tool_call_start|>[get_candidate_status(candidate_id="12345")]<|tool_call_end|>Checking the current status of candidate ID 12345.<|im_end|>',
    text: 'Checking the current status of candidate ID 12345.',
    calls: [{ name: 'get_candidate_status', args: { candidate_id: '12345' } }],
  },
  {
    title: 'LFM2 Python call (LFM2 tool spec, Paris weather)',
    family: 'lfm2',
    source: 'gpubuilders/OmniModel sdk/LFM2_toolsdk/LFM2_TOOL_SPEC.md, "Expected Response Format"',
    input: '<|tool_call_start|>[get_weather(city="Paris")]<|tool_call_end|>',
    text: '',
    calls: [{ name: 'get_weather', args: { city: 'Paris' } }],
  },
  {
    title: 'LFM2 JSON layout (llama.cpp LFM2 template rendering, with an id)',
    family: 'lfm2',
    source:
      'ggml-org/llama.cpp models/templates/llama-cpp-lfm2.jinja: \'<|tool_call_start|>[\' + \'{"name": …, "arguments": …, "id": …}\' + \']<|tool_call_end|>\'',
    input:
      '<|tool_call_start|>[{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "call_1"}]<|tool_call_end|>',
    text: '',
    calls: [{ name: 'get_weather', args: { city: 'Paris' } }],
  },
  {
    title: 'OLMo 3 calls with JSON literal values (chat template rendering)',
    family: 'olmo3',
    source:
      "allenai Olmo-3 chat template (as embedded in public server configs): '<function_calls>' + name + '(' + " +
      "key ~ '=' ~ (value | tojson) joined ', ' + ')' joined '\\n' + '</function_calls>'; vLLM docs, olmo3 tool parser: " +
      '"newline separated pythonic tool calls", "argument values being null/true/false"',
    input:
      'I will check both.<function_calls>get_weather(city="Tokyo", units=null, metric=true)\n' +
      'search(query="OLMo \\"3\\"", filters={"year": 2025, "open": false}, k=5)</function_calls><|im_end|>',
    text: 'I will check both.',
    calls: [
      { name: 'get_weather', args: { city: 'Tokyo', units: null, metric: true } },
      { name: 'search', args: { query: 'OLMo "3"', filters: { year: 2025, open: false }, k: 5 } },
    ],
  },
];

export type LookalikeB = Lookalike;

const text = textEv;
const thinking = thinkingEv;
const call = (index: number, name: string, args: string): StreamEvent[] => callEvs(index, name, args);

export const LOOKALIKES_B: LookalikeB[] = [
  // ---- functools (phi-4-mini, firefunction-v2) --------------------------------------------------
  verbatim('phi-4-mini', 'Python functools in prose is text', 'Use functools.partial or functools[0] here.'),
  verbatim(
    'firefunction-v2',
    'a functools[ call inside a fenced code block is text',
    '```\nfunctools[{"name": "f", "arguments": {}}]\n```',
  ),
  verbatim('phi-4-mini', 'functools[ glued to a word is text', 'myfunctools[{"name": "f", "arguments": {}}]'),
  verbatim(
    'phi-4-mini',
    'functools[ in an inline code span is text',
    'Write `functools[{"name": "f"}]` to call.',
  ),
  {
    name: 'a malformed functools array ends the calls; the text resumes',
    family: 'firefunction-v2',
    input: 'functools[{"name": "f", "arguments": {}} oops',
    expected: [...call(0, 'f', '{}'), text('oops')],
    warnings: ['parser.malformed_call'],
  },
  {
    name: '<|tool_call|> with an array: each element completes at its }',
    family: 'phi-4-mini',
    input:
      '<|tool_call|>[{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"x": 1}}]<|/tool_call|>ok',
    expected: [...call(0, 'a', '{}'), ...call(1, 'b', '{"x": 1}'), text('ok')],
  },
  {
    name: '"<|/tool_call|>" inside a JSON string stays in the argument',
    family: 'phi-4-mini',
    input: '<|tool_call|>{"name": "echo", "arguments": {"s": "a<|/tool_call|>b"}}<|/tool_call|>',
    expected: call(0, 'echo', '{"s": "a<|/tool_call|>b"}'),
  },
  {
    name: 'firefunction-v2 does not read <|tool_call|> (Phi-4-mini only)',
    family: 'firefunction-v2',
    input: '<|tool_call|>{"name": "f", "arguments": {}}<|/tool_call|>',
    expected: [text('<|tool_call|>{"name": "f", "arguments": {}}<|/tool_call|>')],
  },

  // ---- internlm2 --------------------------------------------------------------------------------
  verbatim(
    'internlm2',
    'the code-interpreter action is not a function call',
    '<|action_start|><|interpreter|>print(1)',
  ),
  {
    name: 'an opener followed by prose is text',
    family: 'internlm2',
    input: '<|action_start|><|plugin|> is the plugin marker',
    expected: [text('<|action_start|><|plugin|> is the plugin marker')],
  },
  {
    name: 'a body that is not a call object is skipped to <|action_end|>',
    family: 'internlm2',
    input: 'a<|action_start|><|plugin|>{"nm" 1}<|action_end|>b',
    expected: [text('ab')],
    warnings: ['parser.malformed_call'],
  },
  {
    name: 'markup inside reasoning is reasoning',
    family: 'internlm2',
    input: '<think>maybe <|action_start|><|plugin|>{"name": "x"}</think>Hi',
    expected: [thinking('maybe <|action_start|><|plugin|>{"name": "x"}'), text('Hi')],
  },

  // ---- command-r7b ------------------------------------------------------------------------------
  {
    name: 'tool_call_id after the name and unknown keys are skipped',
    family: 'command-r7b',
    input:
      '<|START_ACTION|>[{"tool_name": "f", "extra": [1, {"a": "}"}], "parameters": {"q": "x"}, "tool_call_id": "7"}]<|END_ACTION|>',
    expected: call(0, 'f', '{"q": "x"}'),
  },
  {
    name: 'stringified parameters are decoded',
    family: 'command-r7b',
    input:
      '<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "f", "parameters": "{\\"q\\": \\"\\u00e9\\"}"}]<|END_ACTION|>',
    expected: call(0, 'f', '{"q": "é"}'),
  },
  {
    name: 'a malformed action is skipped to <|END_ACTION|>',
    family: 'command-r7b',
    input: '<|START_ACTION|>[oops]<|END_ACTION|>Sorry.',
    expected: [text('Sorry.')],
    warnings: ['parser.malformed_call'],
  },
  {
    name: 'startInReasoning: text before <|END_THINKING|> is reasoning',
    family: 'command-r7b',
    opts: { startInReasoning: true },
    input: 'plan<|END_THINKING|><|START_RESPONSE|>Hi<|END_RESPONSE|>',
    expected: [thinking('plan'), text('Hi')],
  },

  // ---- apertus ----------------------------------------------------------------------------------
  {
    name: 'a single object (no array) is a call, complete at <|tools_suffix|>',
    family: 'apertus',
    input: '<|tools_prefix|>{"f": {"a": 1}}<|tools_suffix|>',
    expected: call(0, 'f', '{"a": 1}'),
  },
  {
    name: 'an element with an empty object produces no call',
    family: 'apertus',
    input: '<|tools_prefix|>[{}, {"g": {}}]<|tools_suffix|>',
    expected: call(0, 'g', '{}'),
  },
  {
    name: 'an unclosed array ends at <|tools_suffix|> with a warning',
    family: 'apertus',
    input: '<|tools_prefix|>[{"f": {}}<|tools_suffix|>after',
    expected: [...call(0, 'f', '{}'), text('after')],
    warnings: ['parser.unclosed_array'],
  },

  // ---- gigachat3 --------------------------------------------------------------------------------
  verbatim('gigachat3', 'prose "function call" is text', 'A function call is how tools run.'),
  {
    name: 'an opener not followed by { is text',
    family: 'gigachat3',
    input: 'function call<|role_sep|>\nnone',
    expected: [text('function call<|role_sep|>\nnone')],
  },

  // ---- functionary v3.1 -------------------------------------------------------------------------
  verbatim(
    'functionary-v3.1',
    '<function=…> inside a fenced code block is text',
    '```\n<function=f>{"a": 1}</function>\n```',
  ),
  verbatim(
    'functionary-v3.1',
    '<function=…> with a name that is not a name is text',
    'Use <function=my func>{} here.',
  ),
  verbatim(
    'functionary-v3.1',
    '<function=NAME> followed by prose is text',
    'The <function=f> tag is followed by JSON.',
  ),
  {
    name: '"</function>" inside a JSON string stays in the argument',
    family: 'functionary-v3.1',
    input: '<function=echo>{"s": "a</function>b"}</function>',
    expected: call(0, 'echo', '{"s": "a</function>b"}'),
  },
  {
    name: 'a closed JSON object without </function> completes there',
    family: 'functionary-v3.1',
    input: '<function=f>{"a": 1} and more',
    expected: [...call(0, 'f', '{"a": 1}'), text(' and more')],
    warnings: ['parser.unclosed_call'],
  },

  // ---- functionary v3.2 -------------------------------------------------------------------------
  // ---- lfm2 ---------------------------------------------------------------------------------------
  {
    name: 'a list that is not a call list is skipped to <|tool_call_end|>',
    family: 'lfm2',
    input: 'a<|tool_call_start|>[1, 2]<|tool_call_end|>b',
    expected: [text('ab')],
    warnings: ['parser.malformed_call'],
  },
  {
    name: 'two call blocks number their calls in order',
    family: 'lfm2',
    input: '<|tool_call_start|>[f(a=1)]<|tool_call_end|><|tool_call_start|>[g(b=None), h()]<|tool_call_end|>',
    expected: [...call(0, 'f', '{"a":1}'), ...call(1, 'g', '{"b":null}'), ...call(2, 'h', '{}')],
  },
  {
    name: "JSON's true/false/null in the Python layout are JSON values",
    family: 'lfm2',
    input: '<|tool_call_start|>[f(on=true, x=null, y=false, s="null")]<|tool_call_end|>',
    expected: call(0, 'f', '{"on":true,"x":null,"y":false,"s":"null"}'),
  },
  {
    name: 'markup inside reasoning is reasoning',
    family: 'lfm2',
    input: '<think>use <|tool_call_start|>[f()]</think>ok',
    expected: [thinking('use <|tool_call_start|>[f()]'), text('ok')],
  },

  // ---- olmo3 --------------------------------------------------------------------------------------
  verbatim(
    'olmo3',
    '<function_calls> in a fenced code block is text',
    '```\n<function_calls>f(a=1)</function_calls>\n```',
  ),
  {
    name: 'Anthropic-style <function_calls><invoke> is text (the stray closer is removed)',
    family: 'olmo3',
    input: '<function_calls><invoke name="x"></invoke></function_calls>',
    expected: [text('<function_calls><invoke name="x"></invoke>')],
  },
  {
    name: '"true" inside a string stays a string',
    family: 'olmo3',
    input: '<function_calls>f(a="true", b=\'null\', c=true)</function_calls>',
    expected: call(0, 'f', '{"a":"true","b":"null","c":true}'),
  },
  {
    name: 'startInReasoning: text before </think> is reasoning',
    family: 'olmo3',
    opts: { startInReasoning: true },
    input: 'plan</think>Answer',
    expected: [thinking('plan'), text('Answer')],
  },

  // ---- kimi-k3 ----------------------------------------------------------------------------------
  {
    name: 'a json block is the whole argument object',
    family: 'kimi-k3',
    input:
      '<|open|>tools<|sep|><|open|>call tool="f" index="1"<|sep|><|open|>json type="object"<|sep|>{"a": [1, "x"]}<|close|>json<|sep|><|close|>call<|sep|>ok',
    expected: [...call(0, 'f', '{"a": [1, "x"]}'), text('ok')],
  },
  {
    name: 'attribute values unescape &quot; and &amp;; a string value keeps its markup-like text',
    family: 'kimi-k3',
    input:
      '<|open|>call tool="f" index="1"<|sep|><|open|>argument key="a&amp;b" type="string"<|sep|><b>"x"</b><|close|>argument<|sep|><|close|>call<|sep|>',
    expected: call(0, 'f', JSON.stringify({ 'a&b': '<b>"x"</b>' })),
  },
  {
    name: 'a call header without a tool name is skipped',
    family: 'kimi-k3',
    input:
      'a<|open|>call index="1"<|sep|><|open|>argument key="x" type="string"<|sep|>1<|close|>argument<|sep|><|close|>call<|sep|>b',
    expected: [text('ab')],
    warnings: ['parser.malformed_call'],
  },
  {
    name: 'without startInReasoning a stray think closer is removed',
    family: 'kimi-k3',
    input: 'tail<|close|>think<|sep|><|open|>response<|sep|>Hi<|close|>response<|sep|>',
    expected: [text('tailHi')],
  },

  verbatim('functionary-v3.2', 'a first line that is prose is text', 'Hello there, how can I help?'),
  verbatim('functionary-v3.2', 'a REPL prompt ">>> x" is text', 'Try this:\n>>> print(1)\n1'),
  verbatim('functionary-v3.2', 'a first-line word not followed by { is text', 'Hello\nworld'),
  verbatim(
    'functionary-v3.2',
    'a recipient in a fenced code block is text',
    'Example:\n```\n>>>f\n{"a": 1}\n```',
  ),
  {
    name: '>>>all drops the header; text continues',
    family: 'functionary-v3.2',
    input: 'all\nHi>>>all\nthere',
    expected: [text('Hithere')],
  },
  {
    name: 'python recipient with code: {"code"} complete at the next >>>',
    family: 'functionary-v3.2',
    input: 'python\nimport os\nprint(os.getcwd())>>>all\nDone',
    expected: [...call(0, 'python', JSON.stringify({ code: 'import os\nprint(os.getcwd())' })), text('Done')],
  },
];
