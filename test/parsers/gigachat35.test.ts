/**
 * #19: GigaChat 3.5 (`｜GCML｜` markup: DeepSeek's DSML grammar with another prefix, one parser,
 * src/parsers/dsml.ts) through the shared suite: vLLM's own gigachat35 test outputs, whole and at
 * every byte split, and look-alikes at every split.
 */
import { resolveFamily } from '../../src/parsers';
import { describeLookalikes, describePublishedOutputs, verbatim } from './familySuite';
import { textEv as text } from './helpers';

const VLLM = 'vllm-project/vllm tests/tool_parsers/test_gigachat35_tool_parser.py';
const invoke = (name: string, ...params: [string, string, boolean][]): string =>
  `<｜GCML｜invoke name="${name}">` +
  params
    .map(([k, v, s]) => `<｜GCML｜parameter name="${k}" string="${String(s)}">${v}</｜GCML｜parameter>`)
    .join('') +
  '</｜GCML｜invoke>';
const toolCalls = (...calls: string[]): string => `<｜GCML｜tool_calls>${calls.join('')}</｜GCML｜tool_calls>`;

describe('gigachat35 registry', () => {
  it('resolves the family (not GigaChat 3)', () => {
    expect(resolveFamily('GigaChat3.5')).toBe('gigachat35');
    expect(resolveFamily('gigachat-3.5')).toBe('gigachat35');
    expect(resolveFamily('gigachat3')).toBe('gigachat3');
  });
});

describePublishedOutputs([
  {
    family: 'gigachat35',
    title: 'vLLM gigachat35 test: single_tool_call_output',
    source: VLLM,
    input: toolCalls(invoke('get_weather', ['city', 'Tokyo', true])),
    calls: [{ name: 'get_weather', args: { city: 'Tokyo' } }],
  },
  {
    family: 'gigachat35',
    title: 'vLLM gigachat35 test: parallel_tool_calls_output',
    source: VLLM,
    input: toolCalls(invoke('get_weather', ['city', 'Tokyo', true]), invoke('get_time', ['timezone', 'Asia/Tokyo', true])),
    calls: [
      { name: 'get_weather', args: { city: 'Tokyo' } },
      { name: 'get_time', args: { timezone: 'Asia/Tokyo' } },
    ],
  },
  {
    family: 'gigachat35',
    title: 'vLLM gigachat35 test: various_data_types_output (string="false" values are JSON)',
    source: VLLM,
    input: toolCalls(
      invoke(
        'typed_args',
        ['string_field', '"hello"', false],
        ['int_field', '7', false],
        ['float_field', '3.5', false],
        ['bool_field', 'true', false],
        ['null_field', 'null', false],
        ['array_field', '[1, 2, 3]', false],
        ['object_field', '{"nested": true}', false],
      ),
    ),
    calls: [
      {
        name: 'typed_args',
        args: {
          string_field: 'hello',
          int_field: 7,
          float_field: 3.5,
          bool_field: true,
          null_field: null,
          array_field: [1, 2, 3],
          object_field: { nested: true },
        },
      },
    ],
  },
  {
    family: 'gigachat35',
    title: 'vLLM gigachat35 test: empty_arguments_output',
    source: VLLM,
    input: toolCalls(invoke('empty_args')),
    calls: [{ name: 'empty_args', args: {} }],
  },
  {
    family: 'gigachat35',
    title: 'vLLM gigachat35 test: surrounding_text_output',
    source: VLLM,
    input: 'I will check.' + toolCalls(invoke('get_weather', ['city', 'Tokyo', true])),
    text: 'I will check.',
    calls: [{ name: 'get_weather', args: { city: 'Tokyo' } }],
  },
  {
    family: 'gigachat35',
    title: 'vLLM gigachat35 test: escaped_strings_output',
    source: VLLM,
    input: toolCalls(invoke('escaped', ['text', 'line 1\\n"quoted"', true])),
    calls: [{ name: 'escaped', args: { text: 'line 1\\n"quoted"' } }],
  },
  {
    family: 'gigachat35',
    title: 'vLLM gigachat35 test: string="false" JSON object',
    source: VLLM,
    input: toolCalls(invoke('store', ['payload', '{"a": 1}', false])),
    calls: [{ name: 'store', args: { payload: { a: 1 } } }],
  },
]);

describeLookalikes(
  [
    verbatim('gigachat35', 'vLLM gigachat35 test: no_tool_calls_output', 'Plain answer without a tool call.'),
    verbatim('gigachat35', 'the section opener followed by prose is text', 'The <｜GCML｜tool_calls> block holds calls.'),
    {
      name: 'DeepSeek DSML markup is not this family’s markup (text)',
      family: 'gigachat35',
      input: '<｜DSML｜tool_calls>x',
      expected: [text('<｜DSML｜tool_calls>x')],
    },
  ],
  'look-alike — ',
);
