/**
 * InternLM2 / InternLM2.5 (also Intern-S1 in plugin mode), from InternLM's tool-calling docs and
 * chat template:
 *
 *   Sure, I will search for the weather of Shanghai.<|action_start|><|plugin|>
 *   {"name": "get_current_weather", "parameters": {"location": "Shanghai"}}<|action_end|>
 *
 * - `<|action_start|><|plugin|>` (two special tokens) opens a call: one `{"name", "parameters"}`
 *   object ("arguments" accepted); identity when "name" closes, the parameters streamed as
 *   fragments, `call.complete` at `<|action_end|>`.
 * - Reasoning (Intern-S1 / InternLM3 thinking): `<think>…</think>`.
 * Look-alikes: special tokens, recognised anywhere. An opener not followed (after at most 64
 * whitespace characters) by `{` is text; `<|action_start|><|interpreter|>` (code interpreter) is not
 * a function call and stays text; stray `<|action_end|>` and `<|im_end|>` are removed.
 */
import { THINK_TAGS } from './core/base';
import { JsonBlockParser } from './jsonBlock';
import type { ParserOptions } from './types';

const CLOSE = '<|action_end|>';

export class InternLm2Parser extends JsonBlockParser {
  constructor(opts: ParserOptions = {}) {
    super(
      {
        family: 'internlm2',
        reasoning: THINK_TAGS,
        blocks: [{ open: '<|action_start|><|plugin|>', close: CLOSE, body: 'object' }],
        strip: ['<|im_end|>'],
        plainText: false,
      },
      opts,
    );
  }
}
