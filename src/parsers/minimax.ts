/**
 * MiniMax-M2 (also M2.1 / M2.5, same syntax; MiniMax's tool_calling_guide.md):
 *
 *   <think>reasoning</think>text<minimax:tool_call>
 *   <invoke name="get_weather">
 *   <parameter name="city">Tokyo</parameter>
 *   <parameter name="days">3</parameter>
 *   </invoke>
 *   <invoke name="…">…</invoke>
 *   </minimax:tool_call>
 *
 * - Identity at `<invoke name=…>` (the name may be quoted or bare); arguments built as JSON, one
 *   member per parameter, the value with surrounding whitespace removed (the guide strips it).
 *   Typing: the tool schema's type when given; without one every value is a string (the guide's
 *   default type). String values stream as they arrive.
 * - `call.complete` at `</invoke>`; several invokes share one section. A value ends only at
 *   `</parameter>`, so code containing `<parameter name=` or `</invoke>` stays in the value.
 * - The chat template opens `<think>` in the prompt: the output starts inside the reasoning. Pass
 *   `startInReasoning: true` for raw output; servers that split the reasoning out send text only.
 * Look-alikes: markup in Markdown code is text; `<minimax:tool_call>` not followed (after at most
 * 64 whitespace characters) by `<invoke name=` is text; an invoke whose name is not
 * `[A-Za-z0-9_.:/-]+` is text; a bare `<invoke name=…>` outside a section is a call; a stray
 * `</minimax:tool_call>` is removed.
 */
import { THINK_TAGS } from './core/base';
import type { ParserOptions } from './types';
import { XmlParamParser, type XmlParamSpec } from './xmlParams';

const SPEC: XmlParamSpec = {
  family: 'minimax-m2',
  reasoning: THINK_TAGS,
  open: '<minimax:tool_call>',
  close: '</minimax:tool_call>',
  call: '<invoke name=',
  callClose: '</invoke>',
  param: '<parameter name=',
  quoted: true,
  // Without a schema every value is a string (MiniMax's own parsing guide).
  fallback: 'string',
  trim: 'all',
  between: 'section',
  warnEarlyClose: true,
  noun: 'invoke',
};

export class MiniMaxParser extends XmlParamParser {
  constructor(opts: ParserOptions = {}) {
    super(SPEC, opts);
  }
}
