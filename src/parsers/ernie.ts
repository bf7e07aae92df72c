/**
 * Baidu ERNIE 4.5 (ERNIE-4.5-21B-A3B-Thinking, ERNIE-4.5-VL-…-Thinking; the format of vLLM's
 * ernie45 support, PR #25027):
 *
 *   reasoning
 *   </think>
 *
 *   <tool_call>
 *   {"name": "get_weather", "arguments": {"location": "Beijing"}}
 *   </tool_call>
 *
 *   … or, for an answer:  </think>\n\n<response>\ndef\n</response>
 *
 * - Hermes-style JSON calls, one per tag pair; `call.complete` at `</tool_call>`.
 * - The chat template opens the reasoning in the prompt: raw output starts inside it (pass
 *   `startInReasoning: true`; without it the text before `</think>` is text and the stray
 *   `</think>` is removed). `<think>…</think>` written out is reasoning too.
 * - `<response>` / `</response>` around the answer are removed.
 * Look-alikes: markup in Markdown code is text; `<tool_call>` not followed (after at most 64
 * whitespace characters) by `{` is text; a stray `</tool_call>` is removed.
 */
import { THINK_TAGS } from './core/base';
import { JsonBlockParser } from './jsonBlock';
import type { ParserOptions } from './types';

export class ErnieParser extends JsonBlockParser {
  constructor(opts: ParserOptions = {}) {
    super(
      {
        family: 'ernie45',
        reasoning: THINK_TAGS,
        blocks: [{ open: '<tool_call>', close: '</tool_call>', body: 'object' }],
        strip: ['<response>', '</response>'],
        plainText: true,
      },
      opts,
    );
  }
}
