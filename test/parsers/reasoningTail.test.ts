/**
 * #19: the reasoning markup of Step-3, GigaChat 3.5 and LongCat-Flash-Lite, each case whole, at
 * every byte split and at every UTF-16 split. Sources (vLLM's reasoning parsers):
 * - step3: vllm/reasoning/step3_reasoning_parser.py — text before `</think>` is reasoning (the
 *   template opens `<think>` in the prompt): `startInReasoning` for raw output;
 * - gigachat35: vllm/reasoning/gigachat35_reasoning_parser.py — the DeepSeek R1 parser
 *   (`<think>…</think>`) when the `reasoning` template kwarg is on, which opens `<think>` in the prompt;
 * - longcat-lite: vllm/reasoning/longcat_reasoning_parser.py — `<longcat_think>…</longcat_think>` for
 *   LongCat models, the start token in the prompt in thinking mode.
 */
import {
  callEvs as call,
  expectAtEverySplit,
  textEv as text,
  thinkingEv as thinking,
  type SplitCase,
} from './helpers';

interface Case extends SplitCase {
  name: string;
}

const STEP3_CALL =
  '<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name="get_weather"><steptml:parameter name="city">Tokyo</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>';
const GCML_CALL =
  '<｜GCML｜tool_calls><｜GCML｜invoke name="get_weather"><｜GCML｜parameter name="city" string="true">Tokyo</｜GCML｜parameter></｜GCML｜invoke></｜GCML｜tool_calls>';
const LITE_CALL =
  '<longcat_tool_call>get_weather\n<longcat_arg_key>city</longcat_arg_key>\n<longcat_arg_value>Tokyo</longcat_arg_value>\n</longcat_tool_call>';

const CASES: Record<string, Case[]> = {
  step3: [
    {
      name: 'the block opened in the prompt: reasoning up to </think>, then a call',
      family: 'step3',
      opts: { startInReasoning: true },
      input: `The user wants Tokyo.</think>Checking.${STEP3_CALL}`,
      expected: [
        thinking('The user wants Tokyo.'),
        text('Checking.'),
        ...call(0, 'get_weather', { city: 'Tokyo' }),
      ],
    },
    {
      name: 'an explicit <think> block',
      family: 'step3',
      input: `<think>plan</think>${STEP3_CALL}`,
      expected: [thinking('plan'), ...call(0, 'get_weather', { city: 'Tokyo' })],
    },
    {
      name: 'a call written inside the reasoning stays reasoning',
      family: 'step3',
      input: `<think>${STEP3_CALL}</think>done`,
      expected: [thinking(STEP3_CALL), text('done')],
    },
  ],
  gigachat35: [
    {
      name: 'reasoning on (template opened <think>): reasoning, </think>, a call',
      family: 'gigachat35',
      opts: { startInReasoning: true },
      input: `Need the weather.</think>\n${GCML_CALL}`,
      expected: [thinking('Need the weather.'), text('\n'), ...call(0, 'get_weather', { city: 'Tokyo' })],
    },
    {
      name: 'reasoning off: no block, the answer is text',
      family: 'gigachat35',
      input: 'Sunny in Tokyo.',
      expected: [text('Sunny in Tokyo.')],
    },
  ],
  'longcat-lite': [
    {
      name: 'thinking mode (the template opened the block): reasoning, the closer, a call',
      family: 'longcat-lite',
      opts: { startInReasoning: true },
      input: `Tokyo weather.</longcat_think>${LITE_CALL}`,
      expected: [thinking('Tokyo weather.'), ...call(0, 'get_weather', { city: 'Tokyo' })],
    },
    {
      name: 'an explicit <longcat_think> block, then text',
      family: 'longcat-lite',
      input: '<longcat_think>hm</longcat_think>Hello.',
      expected: [thinking('hm'), text('Hello.')],
    },
    {
      name: 'plain <think> is text for this family',
      family: 'longcat-lite',
      input: '<think>x</think>',
      expected: [text('<think>x</think>')],
    },
  ],
};

describe.each(Object.entries(CASES))('reasoning markup: %s', (_family, cases) => {
  it.each(cases.map((c) => [c.name, c] as const))('%s', (_n, c) => expectAtEverySplit(c));
});
