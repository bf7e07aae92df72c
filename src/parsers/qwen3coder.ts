/**
 * Qwen3-Coder (also Qwen3-Next / Qwen3.5 XML tool calls):
 *
 *   <tool_call>
 *   <function=get_weather>
 *   <parameter=city>
 *   Tokyo
 *   </parameter>
 *   </function>
 *   </tool_call>
 *
 * - Identity at `<function=NAME>`; arguments built as JSON, one member per parameter, the value
 *   with one leading and one trailing newline removed (exactly what the chat template inserts;
 *   other whitespace is the value's). A value is typed by the tool schema when given
 *   (core/schemaValue.ts); without one, it is parsed as JSON (or a Python literal) and kept as a
 *   string when it is not (SGLang's rule). Repair: Python literals (`True`, `None`, `{'a': 1}`) in
 *   non-string values. String values stream as they arrive.
 * - `call.complete` at `</function>` (the call's payload is final there); a missing
 *   `</function>` is tolerated at `</tool_call>`. A parameter value ends only at `</parameter>`,
 *   so source code containing `<parameter=` or `</function>` stays inside the value.
 * Look-alikes: markup inside Markdown code is text; `<tool_call>` not followed (after at most 64
 * whitespace characters) by `<function=` is text; `<function=NAME>` with NAME not
 * `[A-Za-z0-9_.:/-]+` is text; a bare `<function=NAME>` without `<tool_call>` is a call; a stray
 * `</tool_call>` is removed.
 */
import { THINK_TAGS } from './core/base';
import type { ParserOptions } from './types';
import { XmlParamParser, type XmlParamSpec } from './xmlParams';

const SPEC: XmlParamSpec = {
  family: 'qwen3-coder',
  reasoning: THINK_TAGS,
  open: '<tool_call>',
  close: '</tool_call>',
  call: '<function=',
  callClose: '</function>',
  param: '<parameter=',
  quoted: false,
  fallback: 'auto',
  trim: 'newline',
  typing: { python: true },
  between: 'close',
  warnEarlyClose: false,
  noun: 'function',
};

export class Qwen3CoderParser extends XmlParamParser {
  constructor(opts: ParserOptions = {}) {
    super(SPEC, opts);
  }
}
