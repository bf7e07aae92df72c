/**
 * #19: AI21 Jamba through the shared family suite (every byte and UTF-16 split, random chunks,
 * completion in the push of each element's `}`, truncated prefixes), vLLM's own Jamba test outputs
 * and look-alikes.
 */
import { resolveFamily } from '../../src/parsers';
import { ARGS0, ARGS1, events, T1, T2 } from './cases';
import {
  describeFamilyStreams,
  describeLookalikes,
  describePublishedOutputs,
  verbatim,
  type StreamCase,
} from './familySuite';
import { textEv as text } from './helpers';

const VLLM = 'vllm-project/vllm tests/tool_parsers/test_jamba_tool_parser.py';
const DALLAS = '{"name": "get_current_weather", "arguments": {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}}';
const ORLANDO = '{"name": "get_current_weather", "arguments": {"city": "Orlando", "state": "FL", "unit": "fahrenheit"}}';

describe('jamba registry', () => {
  it('resolves the family and its aliases', () => {
    expect(resolveFamily('jamba')).toBe('jamba');
    expect(resolveFamily('Jamba-1.5')).toBe('jamba');
    expect(resolveFamily('ai21_jamba')).toBe('jamba');
  });
});

const CASES: StreamCase[] = [
  {
    title: 'jamba (array of calls)',
    family: 'jamba',
    stream: `${T1}<tool_calls>[\n    {"name": "read_file", "arguments": ${ARGS0}},\n    {"name": "get_weather", "arguments": ${ARGS1}}\n]</tool_calls>${T2}`,
    expected: events({
      text1: T1,
      calls: [
        { name: 'read_file', args: ARGS0 },
        { name: 'get_weather', args: ARGS1 },
      ],
      text2: T2,
    }),
    closeAt: [`${ARGS0}}`, `${ARGS1}}`],
    markers: ['<tool_calls', '</tool_calls'],
    openers: ['<tool_calls>', '</tool_calls>'],
  },
];

describeFamilyStreams(CASES);

describePublishedOutputs([
  {
    family: 'jamba',
    title: 'vLLM Jamba test: single_tool',
    source: VLLM,
    input: ` <tool_calls>[\n    ${DALLAS}\n]</tool_calls>`,
    text: ' ',
    calls: [{ name: 'get_current_weather', args: { city: 'Dallas', state: 'TX', unit: 'fahrenheit' } }],
  },
  {
    family: 'jamba',
    title: 'vLLM Jamba test: single_tool_with_content',
    source: VLLM,
    input: ` Sure! let me call the tool for you.<tool_calls>[\n    ${DALLAS}\n]</tool_calls>`,
    text: ' Sure! let me call the tool for you.',
    calls: [{ name: 'get_current_weather', args: { city: 'Dallas', state: 'TX', unit: 'fahrenheit' } }],
  },
  {
    family: 'jamba',
    title: 'vLLM Jamba test: parallel_tools',
    source: VLLM,
    input: ` <tool_calls>[\n    ${DALLAS},\n    ${ORLANDO}\n]</tool_calls>`,
    text: ' ',
    calls: [
      { name: 'get_current_weather', args: { city: 'Dallas', state: 'TX', unit: 'fahrenheit' } },
      { name: 'get_current_weather', args: { city: 'Orlando', state: 'FL', unit: 'fahrenheit' } },
    ],
  },
  {
    family: 'jamba',
    title: 'vLLM Jamba test: arguments delivered whole in one coarse delta',
    source: VLLM,
    input: '<tool_calls>[{"name": "get_current_weather", "arguments": {"city": "Dallas", "state": "TX"}}]</tool_calls>',
    calls: [{ name: 'get_current_weather', args: { city: 'Dallas', state: 'TX' } }],
  },
]);

describeLookalikes(
  [
    verbatim('jamba', 'vLLM Jamba test: no_tools', 'This is a test'),
    verbatim('jamba', '<tool_calls> followed by prose is text', 'The <tool_calls> tag wraps a JSON array.'),
    verbatim('jamba', '<tool_calls> in a fenced code block is text', '```\n<tool_calls>[{"name": "f", "arguments": {}}]</tool_calls>\n```'),
    {
      name: 'a stray </tool_calls> is removed',
      family: 'jamba',
      input: 'Done.</tool_calls> Bye.',
      expected: [text('Done. Bye.')],
    },
  ],
  'look-alike — ',
);
