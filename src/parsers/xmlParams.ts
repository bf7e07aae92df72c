/**
 * The one engine of the families whose calls are XML-ish elements with one element per
 * parameter, in an optional wrapper (issue 12):
 *
 *   WRAP_OPEN CALL NAME> PARAM KEY>value</parameter> … CALL_CLOSE WRAP_CLOSE
 *
 * Qwen3-Coder (`<tool_call><function=NAME><parameter=K>`), Seed-OSS (`<seed:tool_call>` around the
 * same layout) and MiniMax-M2 (`<minimax:tool_call><invoke name=…><parameter name=…>`) are
 * configurations of it (`XmlParamSpec`); each family's file documents its rules.
 *
 * Shared rules: identity at the call header's `>` (a name `[A-Za-z0-9_.:/-]+`, else the markup is
 * text); one JSON member per parameter, typed by core/params.ts (`ParamObject`); a value ends only
 * at `</parameter>`; `call.complete` at the call's closer. The wrapper opener must be followed
 * (after at most 64 whitespace characters) by the call opener, else it is text; a bare call opener
 * without the wrapper is a call; a stray wrapper closer is removed.
 */
import type { ReasoningMarkers } from './core/base';
import { CallSlot } from './core/emitter';
import { MarkerSet } from './core/markers';
import { ParamCallParser } from './core/paramCalls';
import { ParamObject, type Trim, type TypingOptions, type ValueType } from './core/params';
import type { ParserOptions } from './types';

export interface XmlParamSpec {
  family: string;
  reasoning?: Readonly<ReasoningMarkers>;
  /** Wrapper opener and closer (`<tool_call>`, `</tool_call>`). */
  open: string;
  close: string;
  /** Call opener up to the name (`<function=`) and the call's closer (`</function>`). */
  call: string;
  callClose: string;
  /** Parameter opener up to the key (`<parameter=`); the value ends at `paramClose`. */
  param: string;
  /** The parameter's closer (default `</parameter>`). */
  paramClose?: string;
  /**
   * What may come between the wrapper's opener and the first call: whitespace only ('ws', the
   * default: anything else makes the opener text), or anything, dropped ('section': for a
   * special-token wrapper that holds per-call tokens before each call, Step-3).
   */
  pre?: 'ws' | 'section';
  /** Further markers removed from text (EOS tokens). */
  strip?: readonly string[];
  /** Names and keys may be quoted (`name="f"`); otherwise they are only trimmed. */
  quoted: boolean;
  /** Value typing without a tool schema, the family's whitespace trim and typing repairs. */
  fallback: ValueType;
  trim: Trim;
  typing?: TypingOptions;
  /**
   * What may follow a call's closer inside the wrapper: only the wrapper's closer ('close'), the
   * closer or another call ('calls'), or anything up to the next call or the closer, dropped
   * ('section': an end of stream there warns `parser.unclosed_section`).
   */
  between: 'close' | 'calls' | 'section';
  /** The wrapper's closer before the call's closer completes the call with a warning (else silently). */
  warnEarlyClose: boolean;
  /** What the call header is called in messages ('function', 'invoke'). */
  noun: string;
}

const PRE = 10;
const NAME = 11;
const BODY = 12;
const PARAM_NAME = 13;
const VALUE = 14;
/** After a call's closer inside the wrapper. */
const POST = 15;

const WS_CAP = 64;
const NAME_CAP = 256;
const NAME_RE = /^[A-Za-z0-9_.:/-]+$/;

const gtSet = new MarkerSet(['>']);

/** `"name"`, `'name'` or `name`, trimmed, without its quotes. */
export function unquote(s: string): string {
  const t = s.trim();
  const q = t.charCodeAt(0);
  if (t.length >= 2 && (q === 34 || q === 39) && t.charCodeAt(t.length - 1) === q)
    return t.slice(1, -1).trim();
  return t;
}

export class XmlParamParser extends ParamCallParser {
  private wrapped = false;
  private readonly bodySet: MarkerSet;
  private readonly sectionSet: MarkerSet;
  private readonly valueSet: MarkerSet;

  constructor(
    private readonly spec: XmlParamSpec,
    opts: ParserOptions = {},
  ) {
    super(
      {
        family: spec.family,
        reasoning: spec.reasoning,
        openers: [spec.open, spec.call],
        strip: [spec.close, ...(spec.strip ?? [])],
        plainText: true,
      },
      opts,
    );
    this.bodySet = new MarkerSet([spec.param, spec.callClose, spec.close]);
    this.valueSet = new MarkerSet([spec.paramClose ?? '</parameter>']);
    this.sectionSet = new MarkerSet([spec.call, spec.close]);
  }

  private norm(s: string): string {
    return this.spec.quoted ? unquote(s) : s.trim();
  }

  protected onTextMarker(m: string): void {
    this.lit = m;
    this.wrapped = m === this.spec.open;
    this.mode = this.wrapped ? PRE : NAME;
  }

  protected override stepFamily(): boolean {
    const sp = this.spec;
    switch (this.mode) {
      case PRE: {
        if (sp.pre === 'section') {
          this.confirmMarkup();
          this.lit = '';
          this.mode = POST;
          return true;
        }
        const ws = this.openerWs(sp.open.length + WS_CAP);
        if (ws !== undefined) return ws;
        const t = this.take(sp.call);
        if (t === 'maybe') return false;
        if (t === 'no') return this.literal();
        this.lit += sp.call;
        this.mode = NAME;
        return true;
      }
      case NAME: {
        const r = this.readUntil(gtSet, NAME_CAP);
        if (r === null) return false;
        const name = r === undefined ? '' : this.norm(r.content);
        if (!NAME_RE.test(name)) {
          if (this.lit === '') {
            // Inside a section already confirmed by an earlier call: the bad header is skipped.
            this.warn('parser.malformed_header', `${sp.noun} without a valid name skipped`);
            this.mode = POST;
            return true;
          }
          return r === undefined ? this.literal() : this.literal(r.content + '>');
        }
        this.confirmMarkup();
        this.lit = '';
        const call = new CallSlot(this.em);
        this.call = call;
        call.identity(name);
        this.params = new ParamObject((s) => call.fragment(s), this.schemas, name, sp.fallback, sp.trim, sp.typing);
        this.mode = BODY;
        return true;
      }
      case BODY: {
        const m = this.streamUntil(this.bodySet, () => {});
        if (m === null) return false;
        if (m === sp.param) {
          this.mode = PARAM_NAME;
          return true;
        }
        this.endCall();
        if (m === sp.close) {
          if (sp.warnEarlyClose)
            this.warn('parser.unclosed_call', `${sp.close} before ${sp.callClose}; call completed there`);
          this.wrapped = false;
        }
        if (this.wrapped) this.mode = POST;
        else this.afterMarkup();
        return true;
      }
      case PARAM_NAME: {
        const key = this.readParamHeader(gtSet, NAME_CAP, BODY, `${sp.param} without ">"`);
        if (typeof key === 'boolean') return key;
        this.value = (this.params as ParamObject).open(this.norm(key));
        this.mode = VALUE;
        return true;
      }
      case VALUE:
        return this.stepValue(this.valueSet, BODY);
      case POST:
        return sp.between === 'section' ? this.stepSection() : this.stepPost();
    }
    return false;
  }

  /** Between calls of a section: anything up to the next call (read on) or the closer is dropped. */
  private stepSection(): boolean {
    const m = this.streamUntil(this.sectionSet, () => {});
    if (m === null) return false;
    if (m === this.spec.call) {
      this.mode = NAME;
      return true;
    }
    this.wrapped = false;
    this.afterMarkup();
    return true;
  }

  /** After a call's closer: whitespace, then the wrapper's closer (or, with 'calls', another call). */
  private stepPost(): boolean {
    const sp = this.spec;
    this.skipWs();
    if (this.atEnd) return false;
    const t = this.take(sp.close);
    if (t === 'maybe') return false;
    if (t === 'yes') {
      this.afterMarkup();
      return true;
    }
    if (sp.between === 'calls') {
      const f = this.take(sp.call);
      if (f === 'maybe') return false;
      if (f === 'yes') {
        this.lit = sp.call;
        this.mode = NAME;
        return true;
      }
    }
    this.warn('parser.unclosed_call', `${sp.callClose} not followed by ${sp.close}`);
    this.afterMarkup();
    return true;
  }

  protected override finishFamily(): void {
    const sp = this.spec;
    if (this.mode === PRE || this.mode === NAME) {
      this.warn('parser.truncated_call', `stream ended before the ${sp.noun} name was complete`);
    } else if (this.mode === POST) {
      // The last call is complete; only the wrapper's closer is missing.
      if (sp.between === 'section')
        this.warn('parser.unclosed_section', `stream ended inside the call section (no ${sp.close})`);
    } else {
      this.warn('parser.unclosed_call', 'stream ended inside a call; left without completion');
    }
  }
}
