/**
 * Hermes / Qwen2.5 / Qwen3 (also QwQ, Hermes 2 Pro/3, many fine-tunes):
 *
 *   <think>reasoning</think>text<tool_call>
 *   {"name": "get_weather", "arguments": {"city": "Tokyo"}}
 *   </tool_call>
 *
 * - `call.identity` when the "name" string closes; `call.fragment` streams the "arguments" value
 *   text as it arrives ("parameters" is accepted too, and stringified arguments are decoded).
 * - `call.complete` at `</tool_call>`. The closer is recognised outside JSON strings only, so an
 *   argument containing the text "</tool_call>" stays an argument.
 * Look-alikes: markup inside Markdown code is text; `<tool_call>` not followed (after at most 64
 * whitespace characters) by `{` is text; a stray `</tool_call>` is removed; a call whose JSON
 * object closed but is followed by something other than `</tool_call>` is complete at that point
 * (warning `parser.unclosed_call`) and the text resumes.
 */
import { BaseParser, THINK_TAGS } from './core/base';
import { CallSlot } from './core/emitter';
import { H_DONE, H_FAIL, H_STOP, JsonEnvelope } from './core/json';
import { MarkerSet } from './core/markers';
import type { ParserOptions } from './types';

const OPEN = '<tool_call>';
const CLOSE = '</tool_call>';
const LT = 60;
const WS_CAP = 64;

const PRE = 10;
const JSON_BODY = 11;
const POST = 12;
const SKIP = 13;

const closeSet = new MarkerSet([CLOSE]);

export class HermesParser extends BaseParser {
  private call: CallSlot | null = null;
  private env: JsonEnvelope | null = null;
  private skipStop = -1;

  constructor(opts: ParserOptions = {}, family = 'hermes') {
    super(
      {
        family,
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
    switch (this.mode) {
      case PRE: {
        const ws = this.openerWs(OPEN.length + WS_CAP);
        if (ws !== undefined) return ws;
        if (this.buf.charCodeAt(this.pos) !== 123 /* { */) return this.literal();
        this.confirmMarkup();
        const call = new CallSlot(this.em);
        this.call = call;
        this.env = new JsonEnvelope({ name: (n) => call.identity(n), args: (s) => call.fragment(s) });
        this.mode = JSON_BODY;
        return true;
      }
      case JSON_BODY: {
        const env = this.env as JsonEnvelope;
        this.pos = env.feed(this.buf, this.pos, this.buf.length, LT, this.skipStop);
        this.skipStop = -1;
        if (env.halt === H_DONE) {
          this.mode = POST;
          return true;
        }
        if (env.halt === H_FAIL) {
          this.warn(
            'parser.malformed_call',
            'tool call body is not a {"name", "arguments"} JSON object; skipped to </tool_call>',
          );
          this.mode = SKIP;
          return true;
        }
        if (env.halt === H_STOP) {
          const t = this.take(CLOSE);
          if (t === 'yes') return this.close();
          if (t === 'maybe') return false;
          this.skipStop = this.pos;
          return true;
        }
        return false;
      }
      case POST: {
        const from = this.pos;
        this.skipWs();
        if (this.atEnd) {
          this.pos = from;
          return false;
        }
        const t = this.take(CLOSE);
        if (t === 'maybe') return false;
        if (t === 'no') {
          // Text after the call keeps its leading whitespace.
          this.pos = from;
          this.warn(
            'parser.unclosed_call',
            'tool call JSON closed without </tool_call>; call completed there',
          );
        }
        return this.close();
      }
      case SKIP: {
        const m = this.streamUntil(closeSet, () => {});
        if (m === null) return false;
        return this.close();
      }
    }
    return false;
  }

  private close(): boolean {
    this.call?.complete();
    this.call = null;
    this.env = null;
    this.afterMarkup();
    return true;
  }

  protected override finishFamily(): void {
    if (this.mode === PRE) {
      this.warn('parser.truncated_call', 'stream ended right after <tool_call>');
      return;
    }
    this.warn(
      'parser.unclosed_call',
      'stream ended inside a tool call (no </tool_call>); left without completion',
    );
  }
}
