/**
 * Tencent Hunyuan-A13B: reasoning, then the answer block, the calls a JSON array in one tag pair
 * (model card, agent/README.md of Tencent-Hunyuan/Hunyuan-A13B):
 *
 *   <think>
 *   …
 *   </think>
 *   <answer>
 *   <tool_calls>[{"name": "get_weather", "arguments": {"city": "Shenzhen"}}]</tool_calls>
 *   </answer>
 *
 * - Each array element is a call; `call.complete` at the `}` closing it (the first call of a batch
 *   is released before the next one is written). `</tool_calls>` closes the section.
 * - `<answer>` / `</answer>` are removed: what is between them is the answer text.
 * Look-alikes: markup in Markdown code is text; `<tool_calls>` not followed (after at most 64
 * whitespace characters) by `[` (or a single `{` call object) is text; a stray `</tool_calls>` is
 * removed.
 */
import { THINK_TAGS } from './core/base';
import { JsonBlockParser } from './jsonBlock';
import type { ParserOptions } from './types';

export class HunyuanParser extends JsonBlockParser {
  constructor(opts: ParserOptions = {}) {
    super(
      {
        family: 'hunyuan',
        reasoning: THINK_TAGS,
        blocks: [{ open: '<tool_calls>', close: '</tool_calls>', body: 'either' }],
        strip: ['<answer>', '</answer>', '<|eos|>'],
        plainText: true,
      },
      opts,
    );
  }
}
