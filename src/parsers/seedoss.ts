/**
 * ByteDance Seed-OSS (Seed-OSS-36B-Instruct; chat_template.jinja of the model):
 *
 *   <seed:think>reasoning</seed:think>text<seed:tool_call>
 *   <function=get_weather>
 *   <parameter=city>Tokyo</parameter>
 *   <parameter=days>3</parameter>
 *   </function>
 *   </seed:tool_call>
 *
 * The Qwen3-Coder layout in Seed's own wrapper and reasoning tags.
 * - Identity at `<function=NAME>`; arguments built as JSON, one member per parameter, the value
 *   with one leading and one trailing newline removed. Typing: the tool schema's type when given;
 *   without one, JSON when the whole value is JSON (or a Python literal), else a string. String
 *   values stream as they arrive.
 * - `call.complete` at `</function>` (the payload is final there; `</seed:tool_call>` follows). A
 *   value ends only at `</parameter>`.
 * - Reasoning `<seed:think>…</seed:think>`; the thinking-budget notes the model writes inside it
 *   (`<seed:cot_budget_reflect>…`) stay reasoning. `<seed:eos>` is removed.
 * Look-alikes: markup in Markdown code is text; `<seed:tool_call>` not followed (after at most 64
 * whitespace characters) by `<function=` is text; `<function=NAME>` with NAME not
 * `[A-Za-z0-9_.:/-]+` is text; a bare `<function=NAME>` without the wrapper is a call; a stray
 * `</seed:tool_call>` is removed.
 */
import type { ParserOptions } from './types';
import { XmlParamParser, type XmlParamSpec } from './xmlParams';

const SPEC: XmlParamSpec = {
  family: 'seed-oss',
  reasoning: { open: '<seed:think>', close: '</seed:think>' },
  open: '<seed:tool_call>',
  close: '</seed:tool_call>',
  call: '<function=',
  callClose: '</function>',
  param: '<parameter=',
  strip: ['<seed:eos>'],
  quoted: false,
  fallback: 'auto',
  trim: 'newline',
  // Between </function> and </seed:tool_call>, another <function=…> is a further call.
  between: 'calls',
  warnEarlyClose: true,
  noun: 'function',
};

export class SeedOssParser extends XmlParamParser {
  constructor(opts: ParserOptions = {}) {
    super(SPEC, opts);
  }
}
