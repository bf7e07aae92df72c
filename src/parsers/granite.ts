/**
 * IBM Granite 3.x and 4.x:
 *
 *   <|tool_call|>[{"name": "get_weather", "arguments": {"city": "Tokyo"}}, {…}]      Granite 3.x
 *   <tool_call>
 *   {"name": "get_weather", "arguments": {"city": "Tokyo"}}
 *   </tool_call>                                                                     Granite 4.x
 *
 * - Granite 3.x: `<|tool_call|>` (a special token) then a JSON array; nothing closes it, so each
 *   element completes at the `}` closing it. A single object after the token is accepted.
 * - Granite 4.x (Hermes-style tags, one call per pair): `call.complete` at `</tool_call>`. The 4.x
 *   template renders a tool-calling turn as `<|tool_call|>` followed by the tags; the token is
 *   removed there.
 * - Granite 3.3 thinking: `<think>…</think>` is reasoning, `<response>` / `</response>` around the
 *   answer are removed (the llama.cpp Granite handler's format). `<|end_of_text|>` is removed.
 * Look-alikes: markup in Markdown code is text; `<tool_call>` not followed (after at most 64
 * whitespace characters) by `{` or `[` is text; `<|tool_call|>` not followed by JSON is removed; a
 * stray `</tool_call>` is removed.
 * Not handled: Granite 3.2's plain-text reasoning ("Here is my thought process:" / "Here is my
 * response:"), which stays text.
 */
import { THINK_TAGS } from './core/base';
import { JsonBlockParser } from './jsonBlock';
import type { ParserOptions } from './types';

export class GraniteParser extends JsonBlockParser {
  constructor(opts: ParserOptions = {}) {
    super(
      {
        family: 'granite',
        reasoning: THINK_TAGS,
        blocks: [
          { open: '<|tool_call|>', close: null, body: 'either', token: true },
          { open: '<tool_call>', close: '</tool_call>', body: 'either' },
        ],
        strip: ['<|end_of_text|>', '<response>', '</response>'],
        plainText: true,
      },
      opts,
    );
  }
}
