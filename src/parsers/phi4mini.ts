/**
 * Phi-4-mini-instruct and Firefunction v2: the `functools[…]` JSON array.
 *
 * Firefunction v2's chat template (and vLLM's Phi-4-mini tool template, which reuses its system
 * prompt) renders calls as ` functools[{"name": f, "arguments": {…}}, …]` after the text, "no
 * closing marker required". Phi-4-mini's tokenizer also has the special tokens `<|tool_call|>` /
 * `<|/tool_call|>`, which llama.cpp's Phi-4-mini template uses around one call object:
 *
 *   functools[{"name": "get_weather", "arguments": {"city": "Tokyo"}}]
 *   <|tool_call|>{"name": "get_weather", "arguments": {"city": "Tokyo"}}<|/tool_call|>
 *
 * - `functools[`: each array element is a call, complete at the `}` closing it (there is no
 *   closing marker; the array's `]` ends the calls and the text resumes).
 * - `<|tool_call|>` (phi-4-mini only): one call object, complete at `<|/tool_call|>`; an array of
 *   objects is accepted too (each element complete at its `}`).
 * Look-alikes: `functools` is an ordinary word (Python's module): markup in Markdown code is text,
 * `functools[` right after a letter, digit or `_` is text, and `functools[` not followed (after at
 * most 64 whitespace characters) by `{` is text (`functools[0]`). Stray `<|/tool_call|>`,
 * `<|end|>`, `<|eot_id|>` are removed.
 */
import { JsonBlockParser, type BlockKind } from './jsonBlock';
import type { ParserOptions } from './types';

const FUNCTOOLS: BlockKind = {
  open: 'functools[',
  close: null,
  body: 'array',
  arrayOpened: true,
  wordStart: true,
};
const TOOL_CALL: BlockKind = { open: '<|tool_call|>', close: '<|/tool_call|>', body: 'either' };

export class FunctoolsParser extends JsonBlockParser {
  constructor(opts: ParserOptions = {}, family: 'phi-4-mini' | 'firefunction-v2' = 'phi-4-mini') {
    const phi = family === 'phi-4-mini';
    super(
      {
        family,
        blocks: phi ? [FUNCTOOLS, TOOL_CALL] : [FUNCTOOLS],
        strip: phi ? ['<|end|>'] : ['<|eot_id|>'],
        plainText: true,
      },
      opts,
    );
  }
}
