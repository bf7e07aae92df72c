/**
 * Shared engine of the families whose calls are JSON inside a marked block (issue 12, batch B):
 * InternLM2 `<|action_start|><|plugin|>{…}<|action_end|>`, Phi-4-mini `<|tool_call|>…<|/tool_call|>`
 * and `functools[…]`, Firefunction v2 ` functools[…]`, Command R7B `<|START_ACTION|>[…]<|END_ACTION|>`,
 * Apertus `<|tools_prefix|>[{"NAME": {…}}]<|tools_suffix|>`, GigaChat 3 `function call<|role_sep|>{…}`,
 * Functionary v3.1 `<function=NAME>{args}</function>` (a named block) and LFM2's JSON layout.
 *
 * A block opener is followed by one call object (completion at the block's closing marker, or at
 * the object's `}` when the block has none) or by a JSON array of call objects (each element
 * completes at its own `}`, so the first call of a batch is released before the next is written).
 * The call object's shape is the family's envelope: `{"name", "arguments"}` (core `JsonEnvelope`),
 * or `KeyedEnvelope` below (`{"tool_name", "parameters"}`, `{"NAME": {…}}`).
 *
 * Why not core/jsonCalls: its array reader is tied to core's `JsonEnvelope`; these families need
 * other envelopes and an object-or-array body. A local engine, not a core change (core is owned
 * elsewhere); it could fold into core/jsonCalls once that takes an envelope factory.
 */
import type { ParserOptions } from './types';
import { BaseParser, type BaseSpec } from './core/base';
import { CallSlot } from './core/emitter';
import {
  H_DONE,
  H_END,
  H_FAIL,
  H_MORE,
  H_STOP,
  JsonEnvelope,
  JsonValueScanner,
  type EnvelopeHandler,
} from './core/json';
import { isWs, MarkerSet } from './core/markers';

/** What the block engine needs from a call-object reader (core `JsonEnvelope` fits). */
export interface Envelope {
  halt: number;
  feed(buf: string, pos: number, end: number, stop?: number, noStopAt?: number): number;
}

export type EnvelopeFactory = (h: EnvelopeHandler) => Envelope;

/** `{"name": …, "arguments"|"parameters": …}`. */
export const stdEnvelope: EnvelopeFactory = (h) => new JsonEnvelope(h);

export interface BlockKind {
  /** The opener as written (a special token, or plain text such as `functools[`). */
  open: string;
  /** The block's closing marker, or null when the JSON's end closes it. */
  close: string | null;
  /** The opener ends with the array's `[` (`functools[`). */
  arrayOpened?: boolean;
  /** Body forms accepted after the opener (ignored with `arrayOpened`). */
  object: boolean;
  array: boolean;
  /** The opener is text when it follows a letter, digit or `_` (`myfunctools[`). */
  wordStart?: boolean;
  /**
   * `<function=NAME>{args}`: the opener is followed by a call name matching this pattern and `>`;
   * the body is then the argument object itself (identity at `>`).
   */
  named?: RegExp;
}

export interface JsonBlockSpec extends BaseSpec {
  blocks: readonly BlockKind[];
  envelope: EnvelopeFactory;
}

const PRE = 10;
const OBJ = 11;
const POST = 12;
const ARRAY = 13;
const ITEM = 14;
const ARRAY_POST = 15;
const SKIP = 16;
const HEADER = 17;

const WS_CAP = 64;
const NAME_CAP = 256;
const gtSet = new MarkerSet(['>']);

function isWordChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
}

export class JsonBlockParser extends BaseParser {
  private readonly kinds: Map<string, BlockKind>;
  private readonly factory: EnvelopeFactory;
  private kind: BlockKind | null = null;
  private closeSet: MarkerSet | null = null;
  private call: CallSlot | null = null;
  private env: Envelope | null = null;
  private skipStop = -1;
  private headerName = '';
  /** Last character given to text (for the `wordStart` rule); 10 (newline) at the start. */
  private lastChar = 10;

  constructor(spec: JsonBlockSpec, opts: ParserOptions = {}) {
    super({ ...spec, openers: [...spec.openers, ...spec.blocks.map((b) => b.open)] }, opts);
    this.kinds = new Map(spec.blocks.map((b) => [b.open, b]));
    this.factory = spec.envelope;
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
    this.closeSet = kind.close === null ? null : new MarkerSet([kind.close]);
    this.lit = m;
    this.mode = kind.named ? HEADER : PRE;
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
      case PRE: {
        const ws = this.openerWs(kind.open.length + WS_CAP);
        if (ws !== undefined) return ws;
        const c = this.buf.charCodeAt(this.pos);
        if (kind.arrayOpened) {
          if (c !== 123 /* { */) return this.literal();
          this.begin(ITEM);
          return true;
        }
        if (c === 123 && kind.object) {
          this.begin(OBJ);
          return true;
        }
        if (c === 91 /* [ */ && kind.array) {
          this.pos++;
          this.begin(ARRAY);
          return true;
        }
        return this.literal();
      }
      case OBJ:
      case ITEM:
        return this.stepObject(kind);
      case POST: {
        const from = this.pos;
        this.skipWs();
        if (this.atEnd) {
          this.pos = from;
          return false;
        }
        const t = this.take(kind.close as string);
        if (t === 'maybe') return false;
        if (t === 'no') {
          // Text after the call keeps its leading whitespace.
          this.pos = from;
          this.warn('parser.unclosed_call', `call object closed without ${kind.close}; call completed there`);
        }
        return this.endBlock();
      }
      case ARRAY: {
        this.skipWs();
        if (this.atEnd) return false;
        const c = this.buf.charCodeAt(this.pos);
        if (c === 123) {
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
      case ARRAY_POST: {
        if (kind.close === null) return this.endBlock();
        const from = this.pos;
        this.skipWs();
        if (this.atEnd) {
          this.pos = from;
          return false;
        }
        const t = this.take(kind.close);
        if (t === 'maybe') return false;
        if (t === 'no') {
          this.pos = from;
          this.warn('parser.unclosed_section', `JSON array of calls not followed by ${kind.close}`);
        }
        return this.endBlock();
      }
      case SKIP: {
        const m = this.streamUntil(this.closeSet as MarkerSet, () => {});
        if (m === null) return false;
        return this.endBlock();
      }
    }
    return false;
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
    } else this.env = this.factory(h);
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

// ---- KeyedEnvelope ---------------------------------------------------------------------------

const K_START = 0;
const K_KEY_OR_END = 1;
const K_KEY = 2;
const K_COLON = 3;
const K_VALUE = 4;
const K_NAME = 5;
const K_ARGS_STR = 6;
const K_SCAN = 7;
const K_AFTER = 8;
const K_DONE = 9;
const K_FAIL = 10;

export interface KeyedShape {
  /** Keys whose string value is the call name (`tool_name`); unused with `keyed`. */
  nameKeys?: ReadonlySet<string>;
  /** Keys whose value is the argument object (`parameters`); unused with `keyed`. */
  argKeys?: ReadonlySet<string>;
  /** `{"NAME": {args}}`: the first key is the call name, its value the arguments (Apertus). */
  keyed?: boolean;
}

function decodeString(raw: string): string | undefined {
  try {
    const v: unknown = JSON.parse(`"${raw}"`);
    return typeof v === 'string' ? v : undefined;
  } catch {
    return undefined;
  }
}

const noop = (): void => {};

/**
 * One call object whose name and argument keys are the family's own (`{"tool_call_id": "0",
 * "tool_name": "f", "parameters": {…}}`), or whose only key is the name (`{"f": {…}}`). The name is
 * reported when its string closes, the argument value streams as it arrives (a stringified
 * argument object is decoded when its string closes); other keys are skipped. Like `JsonEnvelope`
 * it stops, unconsumed, at `stop` outside strings.
 */
export class KeyedEnvelope implements Envelope {
  halt = H_END;
  private st = K_START;
  private raw = '';
  private esc = false;
  private key = '';
  private keys = 0;
  private sawArgs = false;
  private scanArgs = false;
  private sub: JsonValueScanner | null = null;
  private readonly emitArgs: (s: string) => void;

  constructor(
    private readonly h: EnvelopeHandler,
    private readonly shape: KeyedShape,
  ) {
    this.emitArgs = (s: string) => h.args(s);
  }

  feed(buf: string, pos: number, end: number, stop = -1, noStopAt = -1): number {
    let i = pos;
    this.halt = H_END;
    while (i < end) {
      const st = this.st;
      if (st === K_DONE || st === K_FAIL) break;
      if (st === K_SCAN) {
        const sub = this.sub as JsonValueScanner;
        i = sub.feed(buf, i, end, this.scanArgs ? this.emitArgs : noop, stop, noStopAt);
        if (sub.halt === H_DONE) {
          this.sub = null;
          this.st = K_AFTER;
          continue;
        }
        if (sub.halt === H_STOP) this.halt = H_STOP;
        return i;
      }
      if (st === K_KEY || st === K_NAME || st === K_ARGS_STR) {
        i = this.stringPart(buf, i, end);
        continue;
      }
      const c = buf.charCodeAt(i);
      if (isWs(c)) {
        i++;
        continue;
      }
      if (c === stop && i !== noStopAt) {
        this.halt = H_STOP;
        return i;
      }
      switch (st) {
        case K_START:
          if (c !== 123 /* { */) return this.fail(i);
          this.st = K_KEY_OR_END;
          i++;
          break;
        case K_KEY_OR_END:
          if (c === 34 /* " */) {
            this.st = K_KEY;
            this.raw = '';
            i++;
          } else if (c === 125 /* } */ && this.keys === 0) {
            this.st = K_DONE;
            i++;
          } else return this.fail(i);
          break;
        case K_COLON:
          if (c !== 58 /* : */) return this.fail(i);
          this.st = K_VALUE;
          i++;
          break;
        case K_VALUE:
          i = this.value(c, i);
          break;
        case K_AFTER:
          if (c === 44 /* , */) {
            this.st = K_KEY_OR_END;
            i++;
          } else if (c === 125) {
            this.st = K_DONE;
            i++;
          } else return this.fail(i);
          break;
        default:
          return this.fail(i);
      }
    }
    if (this.st === K_DONE) this.halt = H_DONE;
    else if (this.st === K_FAIL) this.halt = H_FAIL;
    return i;
  }

  /** The value of `this.key` starts with `c` at `i`. */
  private value(c: number, i: number): number {
    const { keyed, nameKeys, argKeys } = this.shape;
    const isArgs = keyed ? this.keys === 1 : (argKeys?.has(this.key) ?? false) && !this.sawArgs;
    if (isArgs) {
      this.sawArgs = true;
      if (c === 34) {
        this.st = K_ARGS_STR;
        this.raw = '';
        return i + 1;
      }
      this.scanArgs = true;
      this.sub = new JsonValueScanner();
      this.st = K_SCAN;
      return i;
    }
    if (!keyed && c === 34 && (nameKeys?.has(this.key) ?? false)) {
      this.st = K_NAME;
      this.raw = '';
      return i + 1;
    }
    this.scanArgs = false;
    this.sub = new JsonValueScanner();
    this.st = K_SCAN;
    return i;
  }

  /** Inside a key, the name string or stringified arguments: up to the closing quote. */
  private stringPart(buf: string, i: number, end: number): number {
    const from = i;
    for (; i < end; i++) {
      const c = buf.charCodeAt(i);
      if (this.esc) this.esc = false;
      else if (c === 92 /* \ */) this.esc = true;
      else if (c === 34) break;
    }
    this.raw += buf.slice(from, i);
    if (i >= end) {
      this.halt = H_MORE;
      return i;
    }
    const st = this.st;
    const text = decodeString(this.raw) ?? this.raw;
    this.raw = '';
    if (st === K_KEY) {
      this.key = text;
      this.keys++;
      this.st = K_COLON;
      if (this.shape.keyed && this.keys === 1 && text.length > 0) this.h.name(text);
    } else {
      if (st === K_NAME) {
        if (text.length > 0) this.h.name(text);
      } else this.h.args(text);
      this.st = K_AFTER;
    }
    return i + 1;
  }

  private fail(i: number): number {
    this.st = K_FAIL;
    this.halt = H_FAIL;
    return i;
  }
}
