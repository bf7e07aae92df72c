/**
 * Cohere Command R7B (c4ai-command-r7b-12-2024), from its tool-use chat template:
 *
 *   <|START_THINKING|>plan<|END_THINKING|><|START_ACTION|>[
 *       {"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Tokyo"}}
 *   ]<|END_ACTION|>
 *   <|START_RESPONSE|>text<|END_RESPONSE|>
 *
 * - `<|START_ACTION|>` opens a JSON array of calls; each element's "tool_name" is the name
 *   (identity when it closes), "parameters" streams as fragments, `call.complete` at the `}`
 *   closing the element. `<|END_ACTION|>` closes the block. The template numbers calls
 *   "0", "1", … per conversation, so "tool_call_id" is not unique across turns: ids are `call_<index>`.
 * - Reasoning: `<|START_THINKING|>…<|END_THINKING|>`. `<|START_RESPONSE|>` / `<|END_RESPONSE|>`
 *   around the answer are removed (the answer is text), as is `<|END_OF_TURN_TOKEN|>`.
 * Look-alikes: special tokens, recognised anywhere; an opener not followed (after at most 64
 * whitespace characters) by `[` or `{` is text; a malformed array is skipped to `<|END_ACTION|>`.
 */
import { JsonBlockParser } from './jsonBlock';
import type { ParserOptions } from './types';

export class CommandR7bParser extends JsonBlockParser {
  constructor(opts: ParserOptions = {}) {
    super(
      {
        family: 'command-r7b',
        reasoning: { open: '<|START_THINKING|>', close: '<|END_THINKING|>' },
        blocks: [{ open: '<|START_ACTION|>', close: '<|END_ACTION|>', body: 'either' }],
        strip: ['<|START_RESPONSE|>', '<|END_RESPONSE|>', '<|END_OF_TURN_TOKEN|>'],
        plainText: false,
        envelope: { nameKeys: ['tool_name', 'name'], argKeys: ['parameters', 'arguments'] },
      },
      opts,
    );
  }
}
