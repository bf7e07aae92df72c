/**
 * The one engine of the families whose tool calls are JSON between markers (issue 12):
 *
 *   <tool_call>{"name": "f", "arguments": {…}}</tool_call>            one object, closed by a tag
 *   <tool_calls>[{"name": "f", "arguments": {…}}, {…}]</tool_calls>   an array of call objects
 *   <|tool_call|>[{…}, {…}]                                           nothing closes it
 *   functools[{…}, {…}]                                               the opener holds the `[`
 *   <function=NAME>{args}</function>                                  a named block
 *
 * Users: Granite, xLAM, Hunyuan, ERNIE 4.5, LongCat, InternLM2, Phi-4-mini / Firefunction v2,
 * Command R7B, Apertus, GigaChat 3, Functionary v3.1 and LFM2's JSON layout.
 *
 * A family declares its blocks (`BlockKind`: opener, closer or none, body object / array /
 * either) and the shape of a call object (`envelope`: core `JsonEnvelope`'s `{"name",
 * "arguments"|"parameters"}` by default, or `EnvelopeShape` keys such as `{"tool_name",
 * "parameters"}` or `{"NAME": {…}}`). Completion evidence:
 * - one object with a closer: the closer (as Hermes), so the whole call is final there;
 * - an array, or an object without a closer: the `}` closing each object (as Nemotron), so the
 *   first call of a batch is released before the next one is written.
 * Closers are recognised outside JSON strings only and are removed where they stray into text.
 * A body that is not JSON is skipped to the closer (`parser.malformed_call`; without a closer the
 * text resumes there); an object that closed but is not followed by the closer completes there
 * (`parser.unclosed_call`) and the text resumes; a closer inside an unfinished object completes
 * the call with `parser.unclosed_call`.
 *
 * Look-alikes: an opener not followed (after at most 64 whitespace characters) by a body it allows
 * is text, or removed for special-token openers declared `token`; `wordStart` openers right after
 * a letter, digit or `_` are text; markup in Markdown code is text when the family's markers are
 * plain text (BaseSpec `plainText`).
 *
 * Why not core/jsonCalls: its array reader is tied to core's `JsonEnvelope` and one section
 * closer per parser; these families need other envelopes, several blocks and object-or-array
 * bodies. Core is owned elsewhere; this could fold into it once it takes an envelope factory.
 */
import type { ParserOptions } from './types';
import { BaseParser, type BaseSpec } from './core/base';
import { CallSlot } from './core/emitter';
import {
  H_DONE,
  H_END,
  H_FAIL,
  H_STOP,
  JsonEnvelope,
  JsonValueScanner,
  type EnvelopeHandler,
  type EnvelopeShape,
} from './core/json';
import { MarkerSet } from './core/markers';

/** What the block engine needs from a call-object reader (core `JsonEnvelope` fits). */
interface Envelope {
  halt: number;
  feed(buf: string, pos: number, end: number, stop?: number, noStopAt?: number): number;
}

export interface BlockKind {
  /** The opener as written (a special token, or plain text such as `functools[`). */
  open: string;
  /** The block's closing marker, or null when the JSON's end closes it. */
  close: string | null;
  /** What may follow the opener: one call object, an array of call objects, or either. */
  body: 'object' | 'array' | 'either';
  /** The opener ends with the array's `[` (`functools[`); `body` is then 'array'. */
  arrayOpened?: boolean;
  /** The opener is a special token: when no call follows it, it is removed instead of kept as text. */
  token?: boolean;
  /** The opener is text when it follows a letter, digit or `_` (`myfunctools[`). */
  wordStart?: boolean;
  /**
   * `<function=NAME>{args}`: the opener is followed by a call name matching this pattern and `>`;
   * the body is then the argument object itself (identity at `>`).
   */
  named?: RegExp;
}

export interface JsonBlockSpec extends Omit<BaseSpec, 'openers'> {
  /** Openers of the family's other markup (handled by the subclass's `onTextMarker`). */
  openers?: readonly string[];
  blocks: readonly BlockKind[];
  /** The call object's keys; default: core `JsonEnvelope` (`{"name", "arguments"|"parameters"}`). */
  envelope?: EnvelopeShape;
}

const PRE = 10;
const OBJ = 11;
const POST = 12;
const ARRAY = 13;
const ITEM = 14;
const ARRAY_POST = 15;
const SKIP = 16;
const HEADER = 17;
/** Subclasses use modes from 30 on. */

const WS_CAP = 64;
const NAME_CAP = 256;
const gtSet = new MarkerSet(['>']);

function isWordChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
}

export class JsonBlockParser extends BaseParser {
  private readonly kinds: Map<string, BlockKind>;
  private readonly shape: EnvelopeShape | undefined;
  private readonly closeSets = new Map<string, MarkerSet>();
  private kind: BlockKind | null = null;
  private call: CallSlot | null = null;
  private env: Envelope | null = null;
  private skipStop = -1;
  private headerName = '';
  /** Last character given to text (for the `wordStart` rule); 10 (newline) at the start. */
  private lastChar = 10;

  constructor(spec: JsonBlockSpec, opts: ParserOptions = {}) {
    const closers = spec.blocks.flatMap((b) => (b.close === null ? [] : [b.close]));
    super(
      {
        ...spec,
        openers: [...(spec.openers ?? []), ...spec.blocks.map((b) => b.open)],
        strip: [...new Set([...(spec.strip ?? []), ...closers])],
      },
      opts,
    );
    this.kinds = new Map(spec.blocks.map((b) => [b.open, b]));
    this.shape = spec.envelope;
  }

  protected override emitText(s: string): void {
    if (s.length > 0) this.lastChar = s.charCodeAt(s.length - 1);
    super.emitText(s);
  }

  protected onTextMarker(m: string): void {
    const kind = this.kinds.get(m);
    if (kind === undefined) return;
    if (kind.wordStart && isWordChar(this.lastChar)) {
      this.emitText(m);
      return;
    }
    this.kind = kind;
    this.lit = m;
    this.mode = kind.named ? HEADER : PRE;
  }

  /**
   * For a subclass that recognised a block itself (xLAM's call list at the start of the output):
   * the `[` was consumed, the array of calls begins under `kind`.
   */
  protected beginArray(kind: BlockKind): void {
    this.kind = kind;
    this.begin(ARRAY);
  }

  protected override stepFamily(): boolean {
    const kind = this.kind as BlockKind;
    switch (this.mode) {
      case HEADER: {
        const r = this.readUntil(gtSet, NAME_CAP);
        if (r === null) return false;
        if (r === undefined) return this.literal();
        this.lit += r.content + '>';
        this.headerName = r.content.trim();
        if (!(kind.named as RegExp).test(this.headerName)) return this.literal();
        this.mode = PRE;
        return true;
      }
      case PRE:
        return this.stepPre(kind);
      case OBJ:
      case ITEM:
        return this.stepObject(kind);
      case POST:
        return this.closeAfter(
          kind.close as string,
          'parser.unclosed_call',
          `call object closed without ${kind.close}; call completed there`,
        );
      case ARRAY:
        return this.stepArray(kind);
      case ARRAY_POST:
        if (kind.close === null) return this.endBlock();
        return this.closeAfter(
          kind.close,
          'parser.unclosed_section',
          `JSON array of calls not followed by ${kind.close}`,
        );
      case SKIP: {
        const close = kind.close as string;
        let set = this.closeSets.get(close);
        if (set === undefined) {
          set = new MarkerSet([close]);
          this.closeSets.set(close, set);
        }
        const m = this.streamUntil(set, () => {});
        if (m === null) return false;
        return this.endBlock();
      }
    }
    return false;
  }

  /** The JSON ended: whitespace, then `close` ends the block; anything else ends it with a warning. */
  private closeAfter(close: string, code: string, message: string): boolean {
    const from = this.pos;
    this.skipWs();
    if (this.atEnd) {
      this.pos = from;
      return false;
    }
    const t = this.take(close);
    if (t === 'maybe') return false;
    if (t === 'no') {
      // Text after the call keeps its leading whitespace.
      this.pos = from;
      this.warn(code, message);
    }
    return this.endBlock();
  }

  /** After the opener (and a named block's header): whitespace, then the body or not markup. */
  private stepPre(kind: BlockKind): boolean {
    const ws = this.openerWs(kind.open.length + WS_CAP);
    if (ws !== undefined) return ws;
    const c = this.buf.charCodeAt(this.pos);
    if (kind.arrayOpened) {
      if (c !== 123 /* { */) return this.literal();
      this.begin(ITEM);
      return true;
    }
    if (c === 123 && kind.body !== 'array') {
      this.begin(OBJ);
      return true;
    }
    if (c === 91 /* [ */ && kind.body !== 'object') {
      this.pos++;
      this.begin(ARRAY);
      return true;
    }
    // A special token with no call after it is removed (the whitespace after it stays).
    if (kind.token) this.lit = this.lit.slice(kind.open.length);
    return this.literal();
  }

  private stepArray(kind: BlockKind): boolean {
    this.skipWs();
    if (this.atEnd) return false;
    const c = this.buf.charCodeAt(this.pos);
    if (c === 123 /* { */) {
      this.newCall();
      this.mode = ITEM;
      return true;
    }
    if (c === 44 /* , */) {
      this.pos++;
      return true;
    }
    if (c === 93 /* ] */) {
      this.pos++;
      this.mode = ARRAY_POST;
      return true;
    }
    if (kind.close !== null) {
      const t = this.take(kind.close);
      if (t === 'maybe') return false;
      if (t === 'yes') {
        this.warn('parser.unclosed_array', `${kind.close} before the end of the JSON array of calls`);
        return this.endBlock();
      }
    }
    return this.malformed(kind);
  }

  /** `mode` is OBJ (a single call object) or ITEM (an array element): read it. */
  private stepObject(kind: BlockKind): boolean {
    const env = this.env as Envelope;
    const stop = kind.close === null ? -1 : kind.close.charCodeAt(0);
    this.pos = env.feed(this.buf, this.pos, this.buf.length, stop, this.skipStop);
    this.skipStop = -1;
    if (env.halt === H_DONE) {
      if (this.mode === ITEM) {
        this.completeCall();
        this.mode = ARRAY;
        return true;
      }
      if (kind.close !== null) {
        this.mode = POST;
        return true;
      }
      return this.endBlock();
    }
    if (env.halt === H_FAIL) return this.malformed(kind);
    if (env.halt === H_STOP && kind.close !== null) {
      const t = this.take(kind.close);
      if (t === 'maybe') return false;
      if (t === 'yes') {
        this.warn('parser.unclosed_call', `${kind.close} inside a call object; call completed there`);
        return this.endBlock();
      }
      this.skipStop = this.pos;
      return true;
    }
    return false;
  }

  /** The body is confirmed as markup: `mode` OBJ/ITEM with a new call, or ARRAY. */
  private begin(mode: number): void {
    this.lit = '';
    this.confirmMarkup();
    if (mode !== ARRAY) this.newCall();
    this.mode = mode;
  }

  private newCall(): void {
    const call = new CallSlot(this.em);
    this.call = call;
    const h: EnvelopeHandler = { name: (n) => call.identity(n), args: (s) => call.fragment(s) };
    if (this.kind?.named) {
      call.identity(this.headerName);
      this.env = new ArgsEnvelope(h);
    } else this.env = this.shape === undefined ? new JsonEnvelope(h) : new JsonEnvelope(h, this.shape);
  }

  private completeCall(): void {
    this.call?.complete();
    this.call = null;
    this.env = null;
  }

  private endBlock(): boolean {
    this.completeCall();
    this.kind = null;
    this.afterMarkup();
    this.lastChar = 10;
    return true;
  }

  private malformed(kind: BlockKind): boolean {
    this.warn('parser.malformed_call', 'call block is not a call object or a JSON array of call objects');
    if (kind.close === null) {
      // Nothing marks the end of the block: the call in progress stays open, the text resumes.
      this.call = null;
      this.env = null;
      this.kind = null;
      this.afterMarkup();
      return true;
    }
    this.mode = SKIP;
    return true;
  }

  protected override finishFamily(): void {
    const kind = this.kind;
    if (this.mode === PRE || this.mode === HEADER) {
      this.warn('parser.truncated_call', `stream ended right after ${kind?.open ?? 'a call opener'}`);
    } else if (this.mode === OBJ || this.mode === ITEM || this.mode === SKIP) {
      this.warn('parser.unclosed_call', 'stream ended inside a call; left without completion');
    } else if (this.mode === POST) {
      this.warn(
        'parser.unclosed_call',
        `stream ended before ${kind?.close ?? 'the closing marker'}; left without completion`,
      );
    } else if (this.mode === ARRAY && kind?.close != null) {
      this.warn('parser.unclosed_section', 'stream ended inside the JSON array of calls');
    }
  }
}

/** The argument object alone (the name came before it): passed through by the core scanner. */
class ArgsEnvelope implements Envelope {
  halt = H_END;
  private readonly sc = new JsonValueScanner();
  private readonly emit: (s: string) => void;

  constructor(h: EnvelopeHandler) {
    this.emit = (s: string) => h.args(s);
  }

  feed(buf: string, pos: number, end: number, stop = -1, noStopAt = -1): number {
    const i = this.sc.feed(buf, pos, end, this.emit, stop, noStopAt);
    this.halt = this.sc.halt;
    return i;
  }
}
