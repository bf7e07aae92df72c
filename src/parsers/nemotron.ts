/**
 * Nemotron (Llama-3.3-Nemotron-Super-49B v1.5, Nemotron Nano v2, …):
 *
 *   <think>reasoning</think>text<TOOLCALL>[{"name": "f", "arguments": {…}}, {…}]</TOOLCALL>
 *
 * - Each array element is a call: identity when its "name" closes, "arguments" streamed as
 *   fragments, `call.complete` at the `}` closing the element (the closing marker of a call inside
 *   the array), so the first call of a batch is released before the next is written.
 *   `</TOOLCALL>` closes the section (and completes a call left open by malformed JSON).
 * Look-alikes: markup inside Markdown code is text; `<TOOLCALL>` not followed (after at most 64
 * whitespace characters) by `[` is text; a stray `</TOOLCALL>` is removed.
 */
import { THINK_TAGS } from './core/base';
import { JsonCallsParser } from './core/jsonCalls';
import type { ParserOptions } from './types';

const OPEN = '<TOOLCALL>';
const CLOSE = '</TOOLCALL>';
const PRE = 10;
const WS_CAP = 64;

export class NemotronParser extends JsonCallsParser {
  protected readonly sectionClose = CLOSE;

  constructor(opts: ParserOptions = {}) {
    super(
      {
        family: 'nemotron',
        reasoning: THINK_TAGS,
        openers: [OPEN],
        strip: [CLOSE],
        plainText: true,
      },
      opts,
    );
  }

  protected onTextMarker(_m: string): void {
    this.lit = OPEN;
    this.mode = PRE;
  }

  protected override stepFamily(): boolean {
    if (this.mode === PRE) {
      const ws = this.openerWs(OPEN.length + WS_CAP);
      if (ws !== undefined) return ws;
      if (this.buf.charCodeAt(this.pos) !== 91 /* [ */) return this.literal();
      this.pos++;
      this.beginArray();
      return true;
    }
    return this.stepArray() ?? false;
  }

  protected override finishFamily(): void {
    if (this.mode === PRE) this.warn('parser.truncated_call', 'stream ended right after <TOOLCALL>');
    else this.finishArray();
  }
}
