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
import { CallSlot } from './core/emitter';
import { MarkerSet } from './core/markers';
import { ParamCallParser } from './core/paramCalls';
import { ParamObject } from './core/params';
import type { ParserOptions } from './types';

const OPEN = '<minimax:tool_call>';
const CLOSE = '</minimax:tool_call>';
const INVOKE = '<invoke name=';
const INVOKE_CLOSE = '</invoke>';
const PARAM = '<parameter name=';
const PARAM_CLOSE = '</parameter>';

const PRE = 10;
const SECTION = 11;
const NAME = 12;
const BODY = 13;
const PARAM_NAME = 14;
const VALUE = 15;

const WS_CAP = 64;
const NAME_CAP = 256;
const NAME_RE = /^[A-Za-z0-9_.:/-]+$/;

const gtSet = new MarkerSet(['>']);
const sectionSet = new MarkerSet([INVOKE, CLOSE]);
const bodySet = new MarkerSet([PARAM, INVOKE_CLOSE, CLOSE]);
const valueSet = new MarkerSet([PARAM_CLOSE]);

/** `"name"`, `'name'` or `name`, trimmed, without its quotes. */
export function unquote(s: string): string {
  const t = s.trim();
  const q = t.charCodeAt(0);
  if (t.length >= 2 && (q === 34 || q === 39) && t.charCodeAt(t.length - 1) === q)
    return t.slice(1, -1).trim();
  return t;
}

export class MiniMaxParser extends ParamCallParser {
  private inSection = false;

  constructor(opts: ParserOptions = {}) {
    super(
      {
        family: 'minimax-m2',
        reasoning: THINK_TAGS,
        openers: [OPEN, INVOKE],
        strip: [CLOSE],
        plainText: true,
      },
      opts,
    );
  }

  protected onTextMarker(m: string): void {
    this.lit = m;
    this.inSection = m === OPEN;
    this.mode = this.inSection ? PRE : NAME;
  }

  protected override stepFamily(): boolean {
    switch (this.mode) {
      case PRE: {
        const ws = this.openerWs(OPEN.length + WS_CAP);
        if (ws !== undefined) return ws;
        const t = this.take(INVOKE);
        if (t === 'maybe') return false;
        if (t === 'no') return this.literal();
        this.lit += INVOKE;
        this.mode = NAME;
        return true;
      }
      case SECTION: {
        const m = this.streamUntil(sectionSet, () => {});
        if (m === null) return false;
        if (m === INVOKE) {
          this.mode = NAME;
          return true;
        }
        this.inSection = false;
        this.afterMarkup();
        return true;
      }
      case NAME: {
        const r = this.readUntil(gtSet, NAME_CAP);
        if (r === null) return false;
        const name = r === undefined ? '' : unquote(r.content);
        if (!NAME_RE.test(name)) {
          if (this.lit === '') {
            // Inside a section already confirmed by an earlier call: the bad invoke is skipped.
            this.warn('parser.malformed_header', 'invoke without a valid name skipped');
            this.mode = SECTION;
            return true;
          }
          if (r === undefined) return this.literal();
          return this.literal(r.content + '>');
        }
        this.confirmMarkup();
        this.lit = '';
        const call = new CallSlot(this.em);
        this.call = call;
        call.identity(name);
        // Without a schema every value is a string (MiniMax's own parsing guide).
        this.params = new ParamObject((s) => call.fragment(s), this.schemas, name, 'string', 'all');
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
          this.warn('parser.unclosed_call', `${CLOSE} before ${INVOKE_CLOSE}; call completed there`);
          this.inSection = false;
        }
        if (this.inSection) this.mode = SECTION;
        else this.afterMarkup();
        return true;
      }
      case PARAM_NAME: {
        const key = this.readParamHeader(gtSet, NAME_CAP, BODY, '<parameter name= without ">"');
        if (typeof key === 'boolean') return key;
        this.value = (this.params as ParamObject).open(unquote(key));
        this.mode = VALUE;
        return true;
      }
      case VALUE:
        return this.stepValue(valueSet, BODY);
    }
    return false;
  }

  protected override finishFamily(): void {
    if (this.mode === PRE || this.mode === NAME) {
      this.warn('parser.truncated_call', 'stream ended before the invoke name was complete');
    } else if (this.mode === SECTION) {
      this.warn('parser.unclosed_section', `stream ended inside the call section (no ${CLOSE})`);
    } else {
      this.warn('parser.unclosed_call', 'stream ended inside a call; left without completion');
    }
  }
}
