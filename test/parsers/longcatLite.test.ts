/**
 * #19: Meituan LongCat-Flash-Lite (`longcat-lite`) key/value calls through the shared family suite:
 * a synthetic stream at every byte and UTF-16 split, in random chunks and truncated; the layout
 * and typing rules of the sources below as published outputs at every byte split; look-alikes.
 *
 * Sources (facts only; the call contents are ours):
 * - ml-explore/mlx-lm mlx_lm/tool_parsers/longcat.py: `<longcat_tool_call>` … `</longcat_tool_call>`;
 *   the name is the text before the first `<longcat_arg_key>`, stripped; each
 *   `<longcat_arg_key>K</longcat_arg_key>` is followed, after whitespace or literal `\n`, by
 *   `<longcat_arg_value>V</longcat_arg_value>`; key and value are stripped; a value whose schema
 *   type is `string` stays the text, any other is json.loads, else ast.literal_eval, else the text.
 * - The layout as LongCat-Flash-Lite writes it, one pair per line (NAME on the opener's line),
 *   as several public clients of the model parse it.
 */
import { resolveFamily } from '../../src/parsers';
import { ARGS0, ARGS1, events, NOTE, T1, T2 } from './cases';
import { describeFamilyStreams, describeLookalikes, describePublishedOutputs, verbatim } from './familySuite';
import { fnTool as tool } from './helpers';

const MLX = 'ml-explore/mlx-lm mlx_lm/tool_parsers/longcat.py';
const O = '<longcat_tool_call>';
const C = '</longcat_tool_call>';
const kv = (k: string, v: string, sep = '\n') =>
  `<longcat_arg_key>${k}</longcat_arg_key>${sep}<longcat_arg_value>${v}</longcat_arg_value>\n`;

describe('longcat-lite registry', () => {
  it('resolves the family and its aliases', () => {
    expect(resolveFamily('longcat-lite')).toBe('longcat-lite');
    expect(resolveFamily('LongCat-Flash-Lite')).toBe('longcat-lite');
    // LongCat-Flash (Chat / Thinking) keeps its JSON layout.
    expect(resolveFamily('longcat-flash')).toBe('longcat');
  });
});

describeFamilyStreams([
  {
    title: 'longcat-lite',
    family: 'longcat-lite',
    stream:
      `${T1}${O}read_file\n${kv('path', 'docs/日本語.md')}${kv('note', NOTE)}${C}\n` +
      `${O}get_weather\n${kv('city', 'Tokyo')}${kv('days', '3')}${C}${T2}`,
    expected: events({
      text1: T1,
      calls: [
        { name: 'read_file', args: ARGS0 },
        { name: 'get_weather', args: ARGS1 },
      ],
      text2: T2,
    }),
    closeAt: [C, C],
    markers: ['<longcat', '</longcat'],
  },
]);

const weather = tool('get_weather', { city: { type: 'string' }, days: { type: 'integer' }, zip: { type: 'string' } });

describePublishedOutputs([
  {
    family: 'longcat-lite',
    title: 'one call, one pair per line',
    source: MLX,
    input: `${O}get_weather\n${kv('city', 'Tokyo')}${C}`,
    calls: [{ name: 'get_weather', args: { city: 'Tokyo' } }],
  },
  {
    family: 'longcat-lite',
    title: 'no schema: json.loads, then a Python literal, else the text; key and value stripped',
    source: MLX,
    input:
      `${O}  configure \n` +
      kv(' limit ', ' 8 ') +
      kv('flags', "['a', 'b']") +
      kv('opts', '{"deep": true}') +
      kv('on', 'True') +
      kv('label', ' hello world ') +
      C,
    calls: [
      {
        name: 'configure',
        args: { limit: 8, flags: ['a', 'b'], opts: { deep: true }, on: true, label: 'hello world' },
      },
    ],
  },
  {
    family: 'longcat-lite',
    title: 'schema type string keeps the text; literal \\n between key and value',
    source: MLX,
    input: `${O}get_weather\n${kv('zip', '01234', '\\n')}${kv('days', '3', '\\n')}${C}`,
    calls: [{ name: 'get_weather', args: { zip: '01234', days: 3 } }],
    opts: { tools: [weather] },
  },
  {
    family: 'longcat-lite',
    title: 'two calls with text around them',
    source: MLX,
    input: `Checking.\n${O}get_weather\n${kv('city', 'Paris')}${C}\n${O}get_weather\n${kv('city', 'Rome')}${C}`,
    calls: [
      { name: 'get_weather', args: { city: 'Paris' } },
      { name: 'get_weather', args: { city: 'Rome' } },
    ],
    text: 'Checking.\n',
  },
]);

describeLookalikes([
  verbatim('longcat-lite', 'the opener followed by prose', 'Wrap calls in <longcat_tool_call> tags, like this.'),
  verbatim('longcat-lite', 'LongCat-Flash JSON after the opener is text here', `${O}{"name": "f"}`),
  verbatim('longcat-lite', 'the tag in Markdown code', 'Use `<longcat_tool_call>get_weather` for that.'),
]);
