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
import { MarkerSet } from './core/markers';
import { ParamCallParser } from './core/paramCalls';
import type { ParamObject } from './core/params';
import type { ParserOptions } from './types';

const OPEN = '<tool_call>';
const CLOSE = '</tool_call>';
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

export class Qwen3CoderParser extends ParamCallParser {
  private wrapped = false;

  constructor(opts: ParserOptions = {}) {
    super(
      {
        family: 'qwen3-coder',
        reasoning: THINK_TAGS,
        openers: [OPEN, FN],
        strip: [CLOSE],
        plainText: true,
      },
      opts,
    );
  }

  protected onTextMarker(m: string): void {
    if (m === FN) {
      this.lit = FN;
      this.wrapped = false;
      this.mode = FN_NAME;
      return;
    }
    this.lit = OPEN;
    this.wrapped = true;
    this.mode = PRE;
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
        this.startCall(name, 'newline', { python: true });
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
        if (m === FN_CLOSE && this.wrapped) {
          this.mode = POST;
          return true;
        }
        this.afterMarkup();
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
        this.skipWs();
        if (this.atEnd) return false;
        const t = this.take(CLOSE);
        if (t === 'maybe') return false;
        if (t === 'no') this.warn('parser.unclosed_call', '</function> not followed by </tool_call>');
        this.afterMarkup();
        return true;
      }
    }
    return false;
  }

  protected override finishFamily(): void {
    if (this.mode === PRE || this.mode === FN_NAME) {
      this.warn('parser.truncated_call', 'stream ended before the function name was complete');
    } else if (this.mode === POST) {
      // The call is complete; only </tool_call> is missing.
    } else {
      this.warn('parser.unclosed_call', 'stream ended inside a call; left without completion');
    }
  }
}
