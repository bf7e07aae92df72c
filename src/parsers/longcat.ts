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
 * Not handled: LongCat-Flash-Lite's key/value layout (`<longcat_arg_key>`), which is text here.
 */
import { JsonBlockParser } from './jsonBlock';
import type { ParserOptions } from './types';

export class LongCatParser extends JsonBlockParser {
  constructor(opts: ParserOptions = {}) {
    super(
      {
        family: 'longcat',
        reasoning: { open: '<longcat_think>', close: '</longcat_think>' },
        blocks: [{ open: '<longcat_tool_call>', close: '</longcat_tool_call>', body: 'either' }],
        plainText: true,
      },
      opts,
    );
  }
}
