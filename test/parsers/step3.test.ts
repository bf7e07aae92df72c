/**
 * #19: StepFun Step-3 through the shared suite: vLLM's own Step-3 test outputs (whole and at every
 * byte split), its string-whitespace cases with a schema, and look-alikes at every split.
 */
import { resolveFamily } from '../../src/parsers';
import { describeLookalikes, describePublishedOutputs, verbatim } from './familySuite';
import { callEvs as call, expectAtEverySplit, fnTool as tool, textEv as text } from './helpers';

const VLLM = 'vllm-project/vllm tests/tool_parsers/test_step3_tool_parser.py';
const B = '<｜tool_calls_begin｜><｜tool_call_begin｜>';
const E = '<｜tool_call_end｜><｜tool_calls_end｜>';
const inv = (name: string, params: string) => `<steptml:invoke name="${name}">${params}</steptml:invoke>`;
const par = (k: string, v: string) => `<steptml:parameter name="${k}">${v}</steptml:parameter>`;

describe('step3 registry', () => {
  it('resolves the family and its aliases', () => {
    expect(resolveFamily('step3')).toBe('step3');
    expect(resolveFamily('Step-3')).toBe('step3');
  });
});

describePublishedOutputs([
  {
    family: 'step3',
    title: 'vLLM Step-3 test: single_tool_call_output',
    source: VLLM,
    input: B + inv('get_weather', par('city', 'Tokyo')) + E,
    calls: [{ name: 'get_weather', args: { city: 'Tokyo' } }],
  },
  {
    family: 'step3',
    title: 'vLLM Step-3 test: parallel_tool_calls_output (calls joined by <｜tool_sep｜>)',
    source: VLLM,
    input:
      B +
      inv('get_weather', par('city', 'Tokyo')) +
      '<｜tool_call_end｜><｜tool_sep｜><｜tool_call_begin｜>' +
      inv('get_time', par('timezone', 'Asia/Tokyo')) +
      E,
    calls: [
      { name: 'get_weather', args: { city: 'Tokyo' } },
      { name: 'get_time', args: { timezone: 'Asia/Tokyo' } },
    ],
  },
  {
    family: 'step3',
    title: 'vLLM Step-3 test: various_data_types_output (no schema: JSON when it reads as JSON)',
    source: VLLM,
    input:
      B +
      inv(
        'test_function',
        par('string_field', 'hello') +
          par('int_field', '42') +
          par('float_field', '3.14') +
          par('bool_field', 'true') +
          par('null_field', 'null') +
          par('array_field', '["a", "b", "c"]') +
          par('object_field', '{"nested": "value"}'),
      ) +
      E,
    calls: [
      {
        name: 'test_function',
        args: {
          string_field: 'hello',
          int_field: 42,
          float_field: 3.14,
          bool_field: true,
          null_field: null,
          array_field: ['a', 'b', 'c'],
          object_field: { nested: 'value' },
        },
      },
    ],
  },
  {
    family: 'step3',
    title: 'vLLM Step-3 test: empty_arguments_output',
    source: VLLM,
    input: B + '<steptml:invoke name="refresh"></steptml:invoke>' + E,
    calls: [{ name: 'refresh', args: {} }],
  },
  {
    family: 'step3',
    title: 'vLLM Step-3 test: surrounding_text_output',
    source: VLLM,
    input: `Let me check the weather for you.\n\n${B}${inv('get_weather', par('city', 'Tokyo'))}${E}\n\nI'll get that information.`,
    // The text around the section is kept as written (shared rules: whitespace is dropped only between calls).
    text: "Let me check the weather for you.\n\n\n\nI'll get that information.",
    calls: [{ name: 'get_weather', args: { city: 'Tokyo' } }],
  },
  {
    family: 'step3',
    title: 'vLLM Step-3 test: escaped_strings_output',
    source: VLLM,
    input:
      B +
      inv(
        'test_function',
        par('quoted', 'He said "hello"') + par('path', 'C:\\Users\\file.txt') + par('newline', 'line1\nline2'),
      ) +
      E,
    calls: [
      { name: 'test_function', args: { quoted: 'He said "hello"', path: 'C:\\Users\\file.txt', newline: 'line1\nline2' } },
    ],
  },
]);

const wsTool = tool('edit_file', {
  old_string: { type: 'string' },
  indent: { type: 'integer' },
  enabled: { type: 'boolean' },
});

describe('step3: string values keep their whitespace (vLLM TestStep3ParameterWhitespace), with the function<｜tool_sep｜> header', () => {
  it.each(['    if x:', 'return 1\n', '    if x:\n        return 1\n', 'hello ', 'hello\u00a0', 'hello'])(
    '%j',
    (value) =>
      expectAtEverySplit({
        family: 'step3',
        opts: { tools: [wsTool] },
        input:
          '<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜>edit_file\n' +
          inv('edit_file', par('old_string', value) + par('indent', ' 4 ') + par('enabled', ' true ')) +
          E,
        expected: call(0, 'edit_file', { old_string: value, indent: 4, enabled: true }),
      }),
  );
});

describeLookalikes(
  [
    verbatim('step3', 'vLLM Step-3 test: no_tool_calls_output', 'This is a regular response without any tool calls.'),
    verbatim('step3', 'an invoke tag with a name that is not a name is text', 'Use <steptml:invoke name="my tool"> here.'),
    {
      name: 'stray per-call tokens outside a section are removed',
      family: 'step3',
      input: 'Done.<｜tool_call_end｜> Bye.',
      expected: [text('Done. Bye.')],
    },
  ],
  'look-alike — ',
);
