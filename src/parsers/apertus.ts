/**
 * Apertus (Swiss AI), from the Apertus chat format specification (swiss-ai/apertus_format):
 *
 *   <|inner_prefix|>I need to calculate this.<|inner_suffix|>
 *   <|tools_prefix|>[{"calculator": {"expr": "2+2"}}]<|tools_suffix|>
 *
 * - `<|tools_prefix|>` opens a JSON array of single-key objects: the key is the call name
 *   (identity when the key closes), its value the arguments (streamed as fragments);
 *   `call.complete` at the `}` closing each element. `<|tools_suffix|>` closes the block.
 * - Reasoning: `<|inner_prefix|>…<|inner_suffix|>` (the template may open it in the prompt:
 *   `startInReasoning`).
 * Look-alikes: special tokens, recognised anywhere; an opener not followed (after at most 64
 * whitespace characters) by `[` or `{` is text; further keys in an element are skipped; stray
 * `<|tools_suffix|>` and `<|assistant_end|>` are removed.
 */
import { JsonBlockParser } from './jsonBlock';
import type { ParserOptions } from './types';

export class ApertusParser extends JsonBlockParser {
  constructor(opts: ParserOptions = {}) {
    super(
      {
        family: 'apertus',
        reasoning: { open: '<|inner_prefix|>', close: '<|inner_suffix|>' },
        blocks: [{ open: '<|tools_prefix|>', close: '<|tools_suffix|>', body: 'either' }],
        strip: ['<|assistant_end|>'],
        plainText: false,
        envelope: { keyed: true },
      },
      opts,
    );
  }
}
