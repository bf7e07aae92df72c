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
import { MarkerSet } from './core/markers';
import { ParamCallParser } from './core/paramCalls';
import type { ParamObject } from './core/params';
import type { ParserOptions } from './types';

const OPEN = '<seed:tool_call>';
const CLOSE = '</seed:tool_call>';
const FN = '<function=';
const FN_CLOSE = '</function>';
const PARAM = '<parameter=';
const PARAM_CLOSE = '</parameter>';

const PRE = 10;
const FN_NAME = 11;
const BODY = 12;
const PARAM_NAME = 13;
const VALUE = 14;
const POST = 15;

const WS_CAP = 64;
const NAME_CAP = 256;
const NAME_RE = /^[A-Za-z0-9_.:/-]+$/;

const gtSet = new MarkerSet(['>']);
const bodySet = new MarkerSet([PARAM, FN_CLOSE, CLOSE]);
const valueSet = new MarkerSet([PARAM_CLOSE]);

export class SeedOssParser extends ParamCallParser {
  private wrapped = false;

  constructor(opts: ParserOptions = {}) {
    super(
      {
        family: 'seed-oss',
        reasoning: { open: '<seed:think>', close: '</seed:think>' },
        openers: [OPEN, FN],
        strip: [CLOSE, '<seed:eos>'],
        plainText: true,
      },
      opts,
    );
  }

  protected onTextMarker(m: string): void {
    this.lit = m;
    this.wrapped = m === OPEN;
    this.mode = this.wrapped ? PRE : FN_NAME;
  }

  protected override stepFamily(): boolean {
    switch (this.mode) {
      case PRE: {
        const ws = this.openerWs(OPEN.length + WS_CAP);
        if (ws !== undefined) return ws;
        const t = this.take(FN);
        if (t === 'maybe') return false;
        if (t === 'no') return this.literal();
        this.lit += FN;
        this.mode = FN_NAME;
        return true;
      }
      case FN_NAME: {
        const r = this.readUntil(gtSet, NAME_CAP);
        if (r === null) return false;
        if (r === undefined) return this.literal();
        const name = r.content.trim();
        if (!NAME_RE.test(name)) return this.literal(r.content + '>');
        this.confirmMarkup();
        this.lit = '';
        this.startCall(name, 'newline');
        this.mode = BODY;
        return true;
      }
      case BODY: {
        const m = this.streamUntil(bodySet, () => {});
        if (m === null) return false;
        if (m === PARAM) {
          this.mode = PARAM_NAME;
          return true;
        }
        this.endCall();
        if (m === CLOSE) {
          this.warn('parser.unclosed_call', `${CLOSE} before ${FN_CLOSE}; call completed there`);
          this.afterMarkup();
          return true;
        }
        if (this.wrapped) this.mode = POST;
        else this.afterMarkup();
        return true;
      }
      case PARAM_NAME: {
        const key = this.readParamHeader(gtSet, NAME_CAP, BODY, '<parameter= without ">"');
        if (typeof key === 'boolean') return key;
        this.value = (this.params as ParamObject).open(key.trim());
        this.mode = VALUE;
        return true;
      }
      case VALUE:
        return this.stepValue(valueSet, BODY);
      case POST: {
        // Between </function> and </seed:tool_call>: another <function=…> in the same wrapper is
        // a further call.
        this.skipWs();
        if (this.atEnd) return false;
        const t = this.take(CLOSE);
        if (t === 'maybe') return false;
        if (t === 'yes') {
          this.afterMarkup();
          return true;
        }
        const f = this.take(FN);
        if (f === 'maybe') return false;
        if (f === 'yes') {
          this.lit = FN;
          this.mode = FN_NAME;
          return true;
        }
        this.warn('parser.unclosed_call', `${FN_CLOSE} not followed by ${CLOSE}`);
        this.afterMarkup();
        return true;
      }
    }
    return false;
  }

  protected override finishFamily(): void {
    if (this.mode === PRE || this.mode === FN_NAME) {
      this.warn('parser.truncated_call', 'stream ended before the function name was complete');
    } else if (this.mode !== POST) {
      this.warn('parser.unclosed_call', 'stream ended inside a call; left without completion');
    }
  }
}
