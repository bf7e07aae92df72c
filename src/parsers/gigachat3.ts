/**
 * GigaChat 3 (GigaChat3-10B-A1.8B, GigaChat3-702B), from its chat template: the call is a message
 * of the role "function call" after the assistant's text:
 *
 *   Checking.<|message_sep|>
 *
 *   function call<|role_sep|>
 *   {"name": "get_weather", "arguments": {"city": "Tokyo"}}
 *
 * - `function call<|role_sep|>` (the role name, then the special token) opens a call: one
 *   `{"name", "arguments"}` object; identity when "name" closes, the arguments streamed as
 *   fragments, `call.complete` at the `}` closing the object (the message has no closing marker
 *   of its own; `<|message_sep|>` is removed wherever it appears).
 * - GigaChat 3.5 renders calls differently (its own markup) and is not covered here.
 * Look-alikes: the opener contains a special token, so prose "function call" is text; an opener
 * not followed (after at most 64 whitespace characters) by `{` is text.
 */
import { JsonBlockParser } from './jsonBlock';
import type { ParserOptions } from './types';

export class GigaChat3Parser extends JsonBlockParser {
  constructor(opts: ParserOptions = {}) {
    super(
      {
        family: 'gigachat3',
        blocks: [{ open: 'function call<|role_sep|>', close: null, body: 'object' }],
        strip: ['<|message_sep|>'],
        plainText: false,
      },
      opts,
    );
  }
}
