/**
 * AI21 Jamba (1.5 / 1.6 / 1.7, Jamba-tiny-dev), as vLLM's `jamba` tool parser reads it (its tests,
 * tests/tool_parsers/test_jamba_tool_parser.py, are the source of the layout):
 *
 *   Sure! let me call the tool for you.<tool_calls>[
 *       {"name": "get_current_weather", "arguments": {"city": "Dallas", "state": "TX"}},
 *       {"name": "get_current_weather", "arguments": {"city": "Orlando", "state": "FL"}}
 *   ]</tool_calls>
 *
 * - The calls are a JSON array of `{"name", "arguments"}` objects in one `<tool_calls>` pair; each
 *   element is a call, `call.complete` at the `}` closing it (the first call of a batch is released
 *   before the next one is written). `</tool_calls>` closes the section. No reasoning block.
 * Look-alikes: markup in Markdown code is text; `<tool_calls>` not followed (after at most 64
 * whitespace characters) by `[` (or a single `{` call object) is text; a stray `</tool_calls>` is
 * removed.
 */
import { JsonBlockParser } from './jsonBlock';
import type { ParserOptions } from './types';

export class JambaParser extends JsonBlockParser {
  constructor(opts: ParserOptions = {}) {
    super(
      {
        family: 'jamba',
        blocks: [{ open: '<tool_calls>', close: '</tool_calls>', body: 'either' }],
        plainText: true,
      },
      opts,
    );
  }
}
