/**
 * #19: Kimi K2.5 through the shared suite. K2.5 writes the K2 layout
 * (`<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{json}<|tool_call_end|><|tool_calls_section_end|>`),
 * so it is the `kimi-k2` family (alias `kimi-k2.5`). The outputs below are the test inputs of
 * Dynamo's Kimi K2.5 parser (facts only), each whole and at every byte split:
 * Kaonael/dynamo lib/parsers/src/tool_calling/xml/kimi_k25_parser.rs (a fork of ai-dynamo/dynamo;
 * its reference is SGLang's kimik2_detector.py). As there, the model's id is the call id.
 */
import { resolveFamily } from '../../src/parsers';
import { describePublishedOutputs, type PublishedOutput } from './familySuite';

const SRC = 'Kaonael/dynamo lib/parsers/src/tool_calling/xml/kimi_k25_parser.rs (tests)';
const S = '<|tool_calls_section_begin|>';
const E = '<|tool_calls_section_end|>';
const call = (id: string, args: string) => `<|tool_call_begin|>${id}<|tool_call_argument_begin|>${args}<|tool_call_end|>`;

describe('kimi-k2.5 registry', () => {
  it('resolves K2.5 to the kimi-k2 family', () => {
    expect(resolveFamily('kimi-k2.5')).toBe('kimi-k2');
    expect(resolveFamily('Kimi-K2.5')).toBe('kimi-k2');
  });
});

const out = (title: string, input: string, calls: PublishedOutput['calls'], text = ''): PublishedOutput => ({
  family: 'kimi-k2',
  title: `K2.5 ${title}`,
  source: SRC,
  input,
  calls,
  text,
});

describePublishedOutputs([
  out('test_parse_simple_tool_call', S + call('functions.get_weather:0', '{"location":"NYC"}') + E, [
    { name: 'get_weather', args: { location: 'NYC' } },
  ]),
  out(
    'test_parse_multiple_args',
    S + call('functions.get_weather:0', '{"location":"San Francisco, CA","unit":"fahrenheit"}') + E,
    [{ name: 'get_weather', args: { location: 'San Francisco, CA', unit: 'fahrenheit' } }],
  ),
  out(
    'test_parse_multiple_tool_calls',
    S + call('functions.get_weather:0', '{"location":"NYC"}') + call('functions.get_time:1', '{"timezone":"EST"}') + E,
    [
      { name: 'get_weather', args: { location: 'NYC' } },
      { name: 'get_time', args: { timezone: 'EST' } },
    ],
  ),
  out(
    'test_parse_with_normal_text',
    `I'll help you with that. ${S}${call('functions.get_weather:0', '{"location":"Dallas"}')}${E} Let me check.`,
    [{ name: 'get_weather', args: { location: 'Dallas' } }],
    "I'll help you with that.  Let me check.",
  ),
  out('test_parse_no_arg_call', S + call('functions.get_current_time:0', '{}') + E, [
    { name: 'get_current_time', args: {} },
  ]),
  out('test_parse_without_functions_prefix', S + call('get_weather:0', '{"location":"NYC"}') + E, [
    { name: 'get_weather', args: { location: 'NYC' } },
  ]),
  out(
    'test_parse_with_whitespace',
    `${S}\n<|tool_call_begin|> functions.search:0 <|tool_call_argument_begin|> {"query":"rust programming"} <|tool_call_end|>\n${E}`,
    [{ name: 'search', args: { query: 'rust programming' } }],
  ),
  out(
    'test_parse_complex_json_arguments',
    S + call('functions.process_data:0', '{"items":[1,2,3],"config":{"nested":true}}') + E,
    [{ name: 'process_data', args: { items: [1, 2, 3], config: { nested: true } } }],
  ),
]);
