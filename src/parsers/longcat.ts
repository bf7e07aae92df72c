/**
 * Meituan LongCat-Flash (Chat / Thinking): Hermes-style JSON calls in LongCat's own tags,
 *
 *   <longcat_tool_call>
 *   {"name": "get_weather", "arguments": {"city": "Tokyo"}}
 *   </longcat_tool_call>
 *
 * one call per tag pair; `call.complete` at `</longcat_tool_call>`. A JSON array of call objects
 * inside one tag pair is accepted too (each completes at its `}`). Reasoning
 * `<longcat_think>…</longcat_think>` (the tokens of LongCat-Flash-Thinking, as vLLM's LongCat
 * reasoning parser reads them).
 * Look-alikes: markup in Markdown code is text; the opener not followed (after at most 64
 * whitespace characters) by `{` or `[` is text; a stray `</longcat_tool_call>` is removed.
 * LongCat-Flash-Lite's key/value layout is the `longcat-lite` family below (its
 * `<longcat_tool_call>NAME…` is text for this one).
 *
 * Meituan LongCat-Flash-Lite (`longcat-lite`): GLM-style key/value calls in LongCat tags,
 *
 *   <longcat_tool_call>get_weather
 *   <longcat_arg_key>city</longcat_arg_key>
 *   <longcat_arg_value>Tokyo</longcat_arg_value>
 *   </longcat_tool_call>
 *
 * (facts from mlx-lm `mlx_lm/tool_parsers/longcat.py`: the name is the text before the first
 * `<longcat_arg_key>`, stripped; whitespace or literal `\n` between a key and its value; keys and
 * values stripped of surrounding whitespace; a value whose schema type is `string` stays the text,
 * any other is `json.loads`, else a Python literal, else the text.) Same engine and rules as glm45
 * (glm.ts), with `trim: 'all'` and Python-literal repairs. Reasoning `<longcat_think>…</longcat_think>` as
 * LongCat-Flash (vLLM's LongCat reasoning parser covers LongCat models; the template opens the
 * block in the prompt in thinking mode: `startInReasoning`).
 */
import { KeyValueCallParser, type KeyValueLayout } from './glm';
import { JsonBlockParser } from './jsonBlock';
import type { ParserOptions } from './types';

/** vLLM's LongCat reasoning parser (vllm/reasoning/longcat_reasoning_parser.py), for every LongCat model. */
const LONGCAT_THINK = { open: '<longcat_think>', close: '</longcat_think>' } as const;

export class LongCatParser extends JsonBlockParser {
  constructor(opts: ParserOptions = {}) {
    super(
      {
        family: 'longcat',
        reasoning: LONGCAT_THINK,
        blocks: [{ open: '<longcat_tool_call>', close: '</longcat_tool_call>', body: 'either' }],
        plainText: true,
      },
      opts,
    );
  }
}

const LONGCAT_LITE_LAYOUT: KeyValueLayout = {
  family: 'longcat-lite',
  open: '<longcat_tool_call>',
  close: '</longcat_tool_call>',
  key: '<longcat_arg_key>',
  keyClose: '</longcat_arg_key>',
  val: '<longcat_arg_value>',
  valClose: '</longcat_arg_value>',
  strip: [],
  reasoning: LONGCAT_THINK,
  trim: 'all',
  typing: { python: true },
};

/** LongCat-Flash-Lite key/value calls (see the header). */
export class LongCatLiteParser extends KeyValueCallParser {
  constructor(opts: ParserOptions = {}) {
    super(LONGCAT_LITE_LAYOUT, opts);
  }
}
