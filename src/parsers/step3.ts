/**
 * StepFun Step-3, as vLLM's `step3` tool parser reads it (its tests,
 * tests/tool_parsers/test_step3_tool_parser.py, are the source of the layout; `｜` is U+FF5C):
 *
 *   Let me check.<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜>get_weather
 *   <steptml:invoke name="get_weather"><steptml:parameter name="city">Tokyo</steptml:parameter></steptml:invoke>
 *   <｜tool_call_end｜><｜tool_calls_end｜>
 *
 * - `<｜tool_calls_begin｜>` opens the section; before each call the per-call tokens
 *   (`<｜tool_call_begin｜>`, an optional `function<｜tool_sep｜>NAME` line, `<｜tool_call_end｜>`,
 *   `<｜tool_sep｜>` between calls) are dropped. Identity at `<steptml:invoke name="N">`; each
 *   `<steptml:parameter name="K">V</steptml:parameter>` is one member, typed by the tool schema
 *   (without one: JSON when V reads as JSON, else the string). String values keep their
 *   whitespace exactly (vLLM's TestStep3ParameterWhitespace); typed values are trimmed.
 *   `call.complete` at `</steptml:invoke>`; `<｜tool_calls_end｜>` closes the section.
 * Look-alikes: the section tokens are special tokens; `<steptml:invoke name=…>` with a name that is
 * not `[A-Za-z0-9_.:/-]+` is text; a bare `<steptml:invoke …>` without the section is a call.
 * Reasoning: `<think>…</think>` (vLLM's `step3` reasoning parser, vllm/reasoning/step3_reasoning_parser.py:
 * everything before `</think>` is reasoning, i.e. the chat template opens the block in the prompt;
 * pass `startInReasoning: true` for raw output).
 */
import { THINK_TAGS } from './core/base';
import type { ParserOptions } from './types';
import { XmlParamParser, type XmlParamSpec } from './xmlParams';

const SPEC: XmlParamSpec = {
  family: 'step3',
  reasoning: THINK_TAGS,
  open: '<｜tool_calls_begin｜>',
  close: '<｜tool_calls_end｜>',
  call: '<steptml:invoke name=',
  callClose: '</steptml:invoke>',
  param: '<steptml:parameter name=',
  paramClose: '</steptml:parameter>',
  strip: ['<｜tool_call_begin｜>', '<｜tool_call_end｜>', '<｜tool_sep｜>'],
  pre: 'section',
  quoted: true,
  fallback: 'auto',
  trim: 'none',
  between: 'section',
  warnEarlyClose: true,
  noun: 'invoke',
};

export class Step3Parser extends XmlParamParser {
  constructor(opts: ParserOptions = {}) {
    super(SPEC, opts);
  }
}
