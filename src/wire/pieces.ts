/**
 * One huge SSE event, worked a piece per socket read (issue 18).
 *
 * The SSE decoder (sse.ts) hands an event's `data` here once it grows past its piece threshold
 * (256 KiB by default) instead of joining it and calling `JSON.parse` on the whole event at its
 * blank line. `PieceDecoder` reads the event's JSON text as it arrives with a small resumable
 * structural tokenizer (strings, containers, keys and the path to the current value; scalars are
 * passed through). The adapter names the positions whose value is argument text (`pieceRoute`):
 *
 * - a `'string'` route (Anthropic `delta.partial_json`, OpenAI Chat `…function.arguments`,
 *   Responses `delta` / `arguments` / `item.arguments`): the JSON string is unescaped piece by
 *   piece at safe boundaries (never inside a backslash escape or `\uXXXX`, never between the two
 *   halves of a surrogate pair, raw or escaped) and each piece goes out as a `call.fragment`;
 * - an `'object'` route (Gemini `functionCall.args`): the raw JSON text of the object goes out as
 *   `call.fragment` pieces, and the O(n) `JsonScanner` (src/args/scanner.ts) finds where it ends.
 *
 * Assistant text is routed the same way (issue 27): a `'string'` value the adapter answers with
 * `PIECE_TEXT` / `PIECE_THINKING` at `pieceOpen` (Anthropic `delta.text` / `delta.thinking`, Chat
 * `choices[0].delta.content` / reasoning, Responses text and reasoning `delta`s) is unescaped the
 * same way and each piece goes out at once as a `text.delta` / `thinking.delta`: several deltas
 * whose concatenation is the value. The adapter answers so only where nothing the whole-event path
 * would emit before the text can still come after it in the event (the keys that decide it are in
 * the head). Where that is not known yet — Gemini `parts[].text` (its `thought` flag and
 * `thoughtSignature` follow the text), a head without the event's `type` — the value is held
 * (`PIECE_HOLD`, a `hold` route): unescaped piece by piece into pieces kept aside, a stand-in string
 * put at its place in the parsed payload, and every `text.delta` / `thinking.delta` /
 * `call.fragment` the adapter emits with the stand-in is replaced by one event per piece. So held
 * text comes out exactly where and as what the whole-event path would emit it (and not at all where
 * that path would drop it), without one `JSON.parse` or one string of the whole value.
 *
 * When a routed value starts, the adapter sees the event parsed so far (`pieceOpen(head, path)`:
 * everything before the value, the value itself a placeholder `""` / `{}`, containers closed) and
 * answers with the call index the text belongs to, `PIECE_DROP` (validate the value and drop it:
 * e.g. a Responses `.done` that repeats arguments already streamed) or `PIECE_KEEP` (not argument
 * text after all: collect it like the rest). Everything that is not streamed is collected as text
 * (the routed values replaced by their placeholder) and `JSON.parse`d once at the event's end: the
 * adapter then handles that payload exactly as it would a small event (`pushInto`). A `split` route
 * (Chat, Gemini, where the head carries events of its own: message start, text, the call's
 * identity) has the adapter emit the head's events at `pieceOpen`; the collected text then starts
 * again from a skeleton of the open containers (with their `index` / `type` members), so the
 * payload at the end holds only what came after the value.
 *
 * Validity: the collected text is validated by `JSON.parse` (at each split and at the end), a
 * streamed string by `JSON.parse` of each unescaped piece, a streamed object by the scanner. A
 * broken event (bad JSON anywhere, cut before its end, or a duplicate key at a streamed position,
 * where `JSON.parse` would keep only the last value) gives the `bad_json` warning exactly as the
 * whole-event path does, and every call that got text from the event gets one more fragment, a
 * NUL, which no JSON text can contain: the call ends malformed, as it would have without the
 * event's text. Events already emitted from the event's head (a split) stay emitted, and so does
 * text already sent as deltas (what a client has seen cannot be taken back; the `bad_json` warning
 * follows it); held text of a broken event is dropped, as the whole-event path drops it. Once a
 * value went out as it arrived, the keys that decided it (`type`, `index`, `output_index` and the
 * keys on its path) may not come again in their objects: `JSON.parse` would keep only the last, so
 * such an event is refused (`bad_json`) like a repeated key at a streamed position.
 *
 * Cost: O(piece) per read — the tokenizer never re-reads what it has passed; the collected text is
 * joined and parsed once at a split or the end. Memory: what is not streamed (bounded by the
 * reader's `maxEventChars`, which is reported the same way as an over-size event).
 */
import { JsonScanner } from '../args/scanner';
import { type EventSink, isObj, type Obj, warning } from './common';
import type { StreamEvent } from './events';
import type { SsePieceSink } from './sse';

export type PathKey = string | number;

/** Any key at this position of a `pathIs` pattern (an array position, in the adapters' routes). */
export const ANY = Symbol('any key');

/** `path` is `pattern`, key for key (`ANY` matches any key): the adapters' `pieceRoute` tests. */
export function pathIs(path: readonly PathKey[], ...pattern: readonly (string | typeof ANY)[]): boolean {
  if (path.length !== pattern.length) return false;
  for (let i = 0; i < pattern.length; i++) if (pattern[i] !== ANY && path[i] !== pattern[i]) return false;
  return true;
}

/** Where a value at a path is argument text (see the module comment). */
export interface PieceRoute {
  readonly kind: 'string' | 'object';
  /** The adapter emits the head's events at `pieceOpen`; the payload at the end is what follows. */
  readonly split: boolean;
  /** Always validated and dropped, without asking the adapter (text the adapter never reads). */
  readonly drop?: boolean;
  /**
   * Not argument text: a string value longer than ASIDE_CHARS is unescaped a piece at a time and
   * put back into the payload at the end (the payload is then built without one JSON.parse over
   * it: src/args/buffer.ts reads a huge argument object this way). Shorter ones are collected.
   */
  readonly aside?: boolean;
  /** Always held (`PIECE_HOLD`), without asking the adapter. */
  readonly hold?: boolean;
}

export const STRING_IN_PLACE: PieceRoute = Object.freeze({ kind: 'string', split: false });
export const STRING_SPLIT: PieceRoute = Object.freeze({ kind: 'string', split: true });
export const OBJECT_SPLIT: PieceRoute = Object.freeze({ kind: 'object', split: true });
export const STRING_DROP: PieceRoute = Object.freeze({ kind: 'string', split: false, drop: true });
export const STRING_ASIDE: PieceRoute = Object.freeze({ kind: 'string', split: false, aside: true });
export const STRING_HOLD: PieceRoute = Object.freeze({ kind: 'string', split: false, hold: true });

/** An `aside` string at least this long is kept out of the collected text. */
const ASIDE_CHARS = 4096;

/** Raw string text longer than this is unescaped in slices (see `emitRaw`). */
const RAW_PIECE_CHARS = 16 * 1024;
/** The target of an `aside` string. */
const ASIDE = -3;

/** `pieceOpen` answers: collect the value as part of the payload. */
export const PIECE_KEEP = -1;
/** `pieceOpen` answers: validate the value and drop it (the payload holds the placeholder). */
export const PIECE_DROP = -2;
/** `pieceOpen` answers: the value is assistant text, each piece a `text.delta` as it arrives. */
export const PIECE_TEXT = -4;
/** `pieceOpen` answers: the value is thinking text, each piece a `thinking.delta` as it arrives. */
export const PIECE_THINKING = -5;
/** `pieceOpen` answers: hold the value's pieces and emit them where the payload's events put it. */
export const PIECE_HOLD = -6;

/** The adapter side (implemented by the four provider adapters). */
export interface PieceAdapter {
  /** Pure: is the value at `path` argument text or assistant text (and how is it read)? */
  pieceRoute(path: readonly PathKey[]): PieceRoute | undefined;
  /**
   * A routed value starts (see the module comment): a call index, `PIECE_TEXT`, `PIECE_THINKING`,
   * `PIECE_HOLD`, `PIECE_DROP` or `PIECE_KEEP`.
   */
  pieceOpen(head: Obj, path: readonly PathKey[], out: EventSink): number;
  /** The routed value that went to call `index` ended, in an event now known to be valid. */
  pieceClose(index: number, out: EventSink): void;
  /** The piecewise event is over (valid or not), after everything else it produced. */
  pieceEnd?(out: EventSink): void;
  pushInto(payload: unknown, out: EventSink): void;
}

export interface PieceDecoderOptions {
  /** Where events go (the reader's current sink). */
  out(): EventSink;
  /** False while the reader cannot take an event in pieces (its format check is still open). */
  ready(): boolean;
  /** Cap on the collected (not streamed) text of one event, in UTF-16 code units. */
  maxChars: number;
  /** The collected text went over `maxChars`: the event is dropped (the reader's over-size error). */
  tooLarge(message: string): void;
}

const BS = 92; // backslash
const QUOTE = 34;
const U = 117;

/** Members of an object on the path kept in a split's skeleton (they say what the object is). */
const SKELETON_KEYS = new Set(['index', 'type']);
/** Keys adapters decide by: noted in every object, fixed there once a value went out as it arrived. */
const DECIDING_KEYS = new Set(['index', 'type', 'output_index']);
/** Longest key (or kept member value) read as a name; longer ones match no route. */
const MAX_NAME = 256;
/** Routed values per event that the adapter is asked about (each costs a parse of the head). */
const MAX_OPENS = 64;

const enum St {
  Value, // a value is expected
  ArrFirst, // just after '[': a value or ']'
  Key, // a key (or '}' just after '{') is expected
  Colon,
  After, // after a value: ',' or a closer
  Str, // inside a collected string (key or value)
  Scalar, // inside a number or literal (validated by JSON.parse of the collected text)
  Stream, // inside a streamed string
  StreamObj, // inside a streamed object
  End, // the top-level value closed
  Bad, // broken: the rest of the event is ignored
  Dropped, // over the cap: the rest of the event is ignored (already reported)
}

interface Frame {
  arr: boolean;
  /** The current key (object) or element position (array). */
  key: PathKey;
  /** Skeleton members seen before the current key (`"index":0,`). */
  members: string;
  /** Keys of this object whose value was streamed (a repeat is refused). */
  routed?: string[];
  /** DECIDING_KEYS seen in this object. */
  seen?: string[];
  /** Keys that may not come again: a value under them, or decided by them, went out (a repeat is refused). */
  fixed?: string[];
  /** An array's position that is element 0 of the payload being collected (set at a split). */
  base?: number;
}

/** A held value (`PIECE_HOLD`): its place in the payload being collected, its pieces, its stand-in. */
interface Hold {
  path: PathKey[];
  parts: string[];
  name: string;
  /** Its stand-in was emitted (a split's head emitted it: not again at the end). */
  used?: boolean;
}

function isWs(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

/** Does the backslash at `p` start an escape (an odd run of backslashes ends at `p`)? */
function escapeStart(s: string, p: number): boolean {
  let b = p;
  while (b > 0 && s.charCodeAt(b - 1) === BS) b--;
  return ((p - b) & 1) === 0;
}

function isHigh(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

/** Move `cut` back before a trailing high surrogate, raw or as a complete `\uD8xx`-`\uDBxx` escape. */
function holdSurrogate(s: string, cut: number, escapes: boolean): number {
  if (escapes && cut >= 6 && s.charCodeAt(cut - 6) === BS && s.charCodeAt(cut - 5) === U && escapeStart(s, cut - 6)) {
    const v = parseInt(s.slice(cut - 4, cut), 16);
    if (isHigh(v)) return cut - 6;
  }
  if (cut >= 1 && isHigh(s.charCodeAt(cut - 1))) return cut - 1;
  return cut;
}

/**
 * Where raw JSON-string content `s` (no closing quote in it) may be cut so that `s.slice(0, cut)`
 * unescapes alone: not inside an escape, not after the first half of a surrogate pair.
 */
export function safeStringCut(s: string): number {
  const end = s.length;
  let b = end;
  while (b > 0 && s.charCodeAt(b - 1) === BS) b--;
  if (((end - b) & 1) === 1) return holdSurrogate(s, end - 1, true);
  for (let p = Math.max(0, end - 5); p < end - 1; p++) {
    if (s.charCodeAt(p) === BS && s.charCodeAt(p + 1) === U && escapeStart(s, p)) return holdSurrogate(s, p, true);
  }
  return holdSurrogate(s, end, true);
}

export class PieceDecoder implements SsePieceSink {
  private st = St.Value;
  private frames: Frame[] = [];
  /** The collected (not streamed) text since the event start or the last split. */
  private collected: string[] = [];
  private collectedChars = 0;
  /** Characters of this event's data so far. */
  private chars = 0;
  private active = false;

  // A collected string.
  private strKey = false;
  private keyText = '';
  /** The last character scanned in a string was a backslash that starts an escape. */
  private esc = false;
  /** Raw text of a skeleton member's value while it is read (undefined: not capturing). */
  private capture: string | undefined;
  private captureKey = '';

  // A streamed value.
  private target = PIECE_DROP;
  /** Raw text held back from the last piece (an unfinished escape or a high surrogate). */
  private pending = '';
  private scanner: JsonScanner | undefined;
  /** Calls that got text from this event. */
  private streamed: number[] = [];
  /**
   * The last piece of each streamed value and the `pieceClose` calls, held until the event's end
   * has shown it is valid JSON (a call must not complete on text from a broken event).
   */
  private held: { index: number; text: string }[] = [];
  private closes: number[] = [];
  /** Head parses in this event (bounded: past the bound, routed values are collected). */
  private opens = 0;
  /** The current `aside` string: its path, its raw text while short, its text once long. */
  private asidePath: PathKey[] = [];
  private asideRaw: string | undefined;
  private asideText = '';
  private asides: { path: PathKey[]; text: string }[] = [];
  /** The pieces of the held value being read, and the held values read (`PIECE_HOLD`). */
  private holdParts: string[] = [];
  private holds: Hold[] = [];
  /** Stand-ins made by this decoder (a random part, so no text a sender writes is one). */
  private readonly nonce = Math.random().toString(36).slice(2);
  private stands = 0;

  constructor(
    private readonly adapter: PieceAdapter,
    private readonly o: PieceDecoderOptions,
  ) {}

  begin(head: string, event: string | undefined): boolean {
    if (event === 'error' || !this.o.ready()) return false;
    let i = 0;
    while (i < head.length && isWs(head.charCodeAt(i))) i++;
    if (head.charCodeAt(i) !== 123 /* { */) return false;
    this.reset();
    this.active = true;
    this.feed(head);
    return true;
  }

  more(text: string): void {
    if (this.active) this.feed(text);
  }

  end(): void {
    if (!this.active) return;
    const out = this.o.out();
    if (this.st === St.End) {
      let payload: unknown;
      try {
        payload = JSON.parse(this.takeCollected());
      } catch {
        this.st = St.Bad;
      }
      if (this.st === St.End) {
        const { held, closes, asides, holds } = this;
        this.reset();
        for (const a of asides) payload = putAside(payload, a.path, a.text);
        for (const h of held) out.push({ type: 'call.fragment', index: h.index, text: h.text });
        for (const index of closes) this.adapter.pieceClose(index, out);
        this.adapter.pushInto(payload, holds.length > 0 ? standIn(payload, holds, out) : out);
        this.adapter.pieceEnd?.(out);
        return;
      }
    } else if (this.st !== St.Dropped) this.st = St.Bad;
    if (this.st === St.Bad) {
      out.push(warning('bad_json', `SSE data is not JSON (${this.chars} chars); ignored`));
      for (const index of this.streamed) out.push({ type: 'call.fragment', index, text: '\u0000' });
    }
    this.reset();
    this.adapter.pieceEnd?.(out);
  }

  abort(): void {
    if (!this.active) return;
    this.reset();
    this.adapter.pieceEnd?.(this.o.out());
  }

  private reset(): void {
    this.active = false;
    this.st = St.Value;
    this.frames = [];
    this.collected = [];
    this.collectedChars = 0;
    this.chars = 0;
    this.esc = false;
    this.keyText = '';
    this.capture = undefined;
    this.pending = '';
    this.scanner = undefined;
    this.streamed = [];
    this.held = [];
    this.closes = [];
    this.opens = 0;
    this.asides = [];
    this.asideRaw = undefined;
    this.asideText = '';
    this.holdParts = [];
    this.holds = [];
  }

  private collect(s: string): void {
    if (s.length === 0 || this.st === St.Dropped) return;
    if (this.charge(s.length)) this.collected.push(s);
  }

  /** Count kept text (collected or held) against `maxChars`; false when it went over (the event is dropped). */
  private charge(n: number): boolean {
    this.collectedChars += n;
    if (this.collectedChars <= this.o.maxChars) return true;
    this.st = St.Dropped;
    this.collected = [];
    this.holds = [];
    this.holdParts = [];
    this.o.tooLarge(`SSE event larger than ${this.o.maxChars} characters dropped`);
    return false;
  }

  private takeCollected(): string {
    const s = this.collected.length === 1 ? this.collected[0]! : this.collected.join('');
    this.collected = [s];
    return s;
  }

  private path(): PathKey[] {
    const p: PathKey[] = new Array(this.frames.length);
    for (let k = 0; k < this.frames.length; k++) p[k] = this.frames[k]!.key;
    return p;
  }

  /** The current position in the payload being collected (array positions counted from the last split). */
  private payloadPath(): PathKey[] {
    const p = this.path();
    for (let k = 0; k < p.length; k++) {
      const base = this.frames[k]!.base;
      if (base !== undefined) p[k] = (p[k] as number) - base;
    }
    return p;
  }

  /** A value ended at depth `frames.length`. */
  private afterValue(): St {
    return this.frames.length === 0 ? St.End : St.After;
  }

  private feed(text: string): void {
    const n = text.length;
    this.chars += n;
    if (this.st === St.Bad || this.st === St.Dropped) return;
    let i = 0;
    /** Start of the part of `text` not yet collected. */
    let from = 0;
    while (i < n) {
      const st = this.st;
      if (st === St.Stream) {
        i = this.streamString(text, i);
        from = i;
        continue;
      }
      if (st === St.StreamObj) {
        i = this.streamObject(text, i);
        from = i;
        continue;
      }
      if (st === St.Str) {
        i = this.string(text, i);
        continue;
      }
      if (st === St.Bad || st === St.Dropped) return;
      const c = text.charCodeAt(i);
      if (st === St.Scalar) {
        if (c === 44 || c === 125 || c === 93 || isWs(c)) {
          this.endCapture();
          this.st = this.afterValue();
        } else {
          if (this.capture !== undefined) this.capture += text[i];
          i++;
        }
        continue;
      }
      if (isWs(c)) {
        i++;
        continue;
      }
      switch (st) {
        case St.Value:
        case St.ArrFirst: {
          if (c === 93 /* ] */ && st === St.ArrFirst) {
            this.frames.pop();
            this.st = this.afterValue();
            i++;
            break;
          }
          if (c === QUOTE || c === 123 /* { */) {
            const route = this.frames.length > 0 ? this.adapter.pieceRoute(this.path()) : undefined;
            if (route !== undefined && (route.kind === 'string') === (c === QUOTE)) {
              this.collect(text.slice(from, i));
              from = i;
              if (this.open(route)) {
                if (c === QUOTE) i++;
                from = i;
                break;
              }
              if (this.st === St.Bad || this.st === St.Dropped) return;
            }
          }
          if (c === QUOTE) {
            this.strKey = false;
            this.st = St.Str;
            this.esc = false;
            if (this.capture !== undefined) this.capture = '"';
            i++;
          } else if (c === 123 || c === 91 /* [ */) {
            this.capture = undefined;
            this.frames.push({ arr: c === 91, key: c === 91 ? 0 : '', members: '' });
            this.st = c === 91 ? St.ArrFirst : St.Key;
            i++;
          } else {
            this.st = St.Scalar;
            if (this.capture !== undefined) this.capture = '';
          }
          break;
        }
        case St.Key: {
          const f = this.frames[this.frames.length - 1]!;
          if (c === QUOTE) {
            this.strKey = true;
            this.keyText = '';
            this.esc = false;
            this.st = St.Str;
          } else if (c === 125 /* } */ && f.key === '') {
            this.frames.pop();
            this.st = this.afterValue();
          } else this.st = St.Bad;
          i++;
          break;
        }
        case St.Colon:
          this.st = c === 58 ? St.Value : St.Bad;
          i++;
          break;
        case St.After: {
          const f = this.frames[this.frames.length - 1]!;
          if (c === 44 /* , */) {
            if (f.arr) {
              f.key = (f.key as number) + 1;
              this.st = St.Value;
            } else this.st = St.Key;
          } else if (c === (f.arr ? 93 : 125)) {
            this.frames.pop();
            this.st = this.afterValue();
          } else this.st = St.Bad;
          i++;
          break;
        }
        case St.End:
          this.st = St.Bad;
          break;
      }
    }
    if (this.st !== St.Bad && from < n) this.collect(from === 0 ? text : text.slice(from));
  }

  /**
   * The index of the quote that ends the string being read (`text.length` when it goes on past
   * this text); a backslash that ends the text is kept in `esc` for the next piece.
   */
  private quoteAt(text: string, i: number): number {
    const n = text.length;
    let j = i;
    let esc = this.esc;
    for (; j < n; j++) {
      if (esc) {
        esc = false;
        continue;
      }
      const c = text.charCodeAt(j);
      if (c === BS) esc = true;
      else if (c === QUOTE) break;
    }
    this.esc = esc;
    return j;
  }

  /** Inside a collected string: find its end (a quote that no backslash escapes). */
  private string(text: string, i: number): number {
    const n = text.length;
    const j = this.quoteAt(text, i);
    if (this.strKey) {
      if (this.keyText.length <= MAX_NAME) this.keyText += text.slice(i, Math.min(j, i + MAX_NAME + 1));
    } else if (this.capture !== undefined) {
      this.capture = this.capture.length <= MAX_NAME ? this.capture + text.slice(i, Math.min(j + 1, i + MAX_NAME + 1)) : undefined;
    }
    if (j === n) return n;
    // The string ended at j.
    if (this.strKey) {
      const f = this.frames[this.frames.length - 1]!;
      let key = this.keyText;
      if (key.length > MAX_NAME) key = '\u0000long';
      else if (key.indexOf('\\') !== -1) {
        try {
          key = JSON.parse(`"${key}"`) as string;
        } catch {
          this.st = St.Bad;
          return n;
        }
      }
      if (f.fixed?.includes(key)) {
        this.st = St.Bad; // JSON.parse would keep this later value of a key a streamed value was decided by
        return n;
      }
      if (DECIDING_KEYS.has(key)) (f.seen ??= []).push(key);
      f.key = key;
      this.captureKey = key;
      this.capture = SKELETON_KEYS.has(key) ? '' : undefined;
      this.st = St.Colon;
    } else {
      this.endCapture();
      this.st = this.afterValue();
    }
    return j + 1;
  }

  /** A skeleton member's value was read: remember `"key":value,` on its object. */
  private endCapture(): void {
    const v = this.capture;
    this.capture = undefined;
    if (v === undefined || v.length === 0 || v.length > MAX_NAME) return;
    const f = this.frames[this.frames.length - 1];
    if (f !== undefined && !f.arr) f.members += `${JSON.stringify(this.captureKey)}:${v},`;
  }

  /**
   * A routed value starts at the current position (its first character not yet read). Returns
   * true when it is streamed or dropped (the state is set), false to collect it.
   */
  private open(route: PieceRoute): boolean {
    const f = this.frames[this.frames.length - 1]!;
    if (!f.arr) {
      const key = f.key as string;
      if (f.routed?.includes(key)) {
        // JSON.parse would keep only the last value of a repeated key: refuse the event.
        this.st = St.Bad;
        return false;
      }
      (f.routed ??= []).push(key);
    }
    const placeholder = route.kind === 'string' ? '""' : '{}';
    if (route.aside === true) {
      this.asidePath = this.path();
      this.asideRaw = '';
      this.asideText = '';
      this.target = ASIDE;
      this.pending = '';
      this.esc = false;
      this.st = St.Stream;
      return true;
    }
    let target = PIECE_DROP;
    if (route.hold === true) target = PIECE_HOLD;
    else if (route.drop !== true) {
      if (++this.opens > MAX_OPENS) {
        f.routed?.pop();
        return false;
      }
      let closers = '';
      for (let k = this.frames.length - 1; k >= 0; k--) closers += this.frames[k]!.arr ? ']' : '}';
      let head: unknown;
      try {
        head = JSON.parse(this.takeCollected() + placeholder + closers);
      } catch {
        this.st = St.Bad;
        return false;
      }
      if (!isObj(head)) {
        this.st = St.Bad;
        return false;
      }
      // Values held so far are in the head as their stand-ins: a split's head emits them in place.
      const holds = this.holds;
      const out = this.o.out();
      target = this.adapter.pieceOpen(head, this.path(), holds.length > 0 ? standIn(head, holds, out) : out);
      if (route.split && target >= 0) this.holds = [];
      else if (holds.length > 0) this.holds = holds.filter((h) => h.used !== true);
      if (target === PIECE_KEEP) {
        f.routed!.pop();
        return false;
      }
    }
    if (route.split && target >= 0) {
      // Start the collected text again from the skeleton of the open containers.
      let sk = '';
      for (const fr of this.frames) {
        sk += fr.arr ? '[' : `{${fr.members}${JSON.stringify(fr.key)}:`;
        if (fr.arr) fr.base = fr.key as number;
      }
      this.collected = [];
      this.collectedChars = 0;
      this.collect(sk + placeholder);
    } else this.collect(placeholder);
    if (target >= 0 || target === PIECE_TEXT || target === PIECE_THINKING) this.fix();
    this.target = target;
    this.pending = '';
    this.holdParts = [];
    if (route.kind === 'string') {
      this.esc = false;
      this.st = St.Stream;
    } else {
      this.scanner = new JsonScanner();
      this.st = St.StreamObj;
    }
    return true;
  }

  /**
   * A value goes out as it arrives: the keys of the objects on its path that decided it (the
   * DECIDING_KEYS seen, the path's own keys) may not come again (see the module comment).
   */
  private fix(): void {
    const last = this.frames.length - 1;
    for (let k = 0; k <= last; k++) {
      const fr = this.frames[k]!;
      if (fr.arr) continue;
      const fixed = (fr.fixed ??= []);
      if (fr.seen !== undefined) for (const key of fr.seen) if (!fixed.includes(key)) fixed.push(key);
      if (k < last && !fixed.includes(fr.key as string)) fixed.push(fr.key as string);
    }
  }

  /** Send a piece of the current value's text (`last`: hold it until the event is known valid). */
  private emit(text: string, last = false): void {
    if (this.target === ASIDE) {
      this.asideText += text;
      return;
    }
    if (text.length === 0) return;
    if (this.target < 0) {
      if (this.target === PIECE_TEXT) this.o.out().push({ type: 'text.delta', text });
      else if (this.target === PIECE_THINKING) this.o.out().push({ type: 'thinking.delta', text });
      else if (this.target === PIECE_HOLD && this.st !== St.Dropped && this.charge(text.length)) {
        // Pieces from small reads are joined up to RAW_PIECE_CHARS (one event each when emitted).
        const parts = this.holdParts;
        const n = parts.length;
        if (n > 0 && parts[n - 1]!.length + text.length <= RAW_PIECE_CHARS) parts[n - 1] += text;
        else parts.push(text);
      }
      return;
    }
    const index = this.target;
    if (!this.streamed.includes(index)) this.streamed.push(index);
    if (last) this.held.push({ index, text });
    else this.o.out().push({ type: 'call.fragment', index, text });
  }

  /**
   * Unescape raw string content (no quote in it) and send it on; false when it is not valid JSON.
   * Past RAW_PIECE_CHARS it is unescaped in slices cut where an escape does not straddle them
   * (`safeStringCut`), all checked before any is sent: one JSON.parse of a string past V8's
   * regular-object size (128 KiB) costs ~10× more a char — ~20 ms for the 256 Ki chars a huge
   * event's first piece carries, one stretch of the loop.
   */
  private emitRaw(raw: string, last = false): boolean {
    if (raw.length === 0) return true;
    const out: string[] = [];
    try {
      for (let at = 0; at < raw.length; ) {
        let end = Math.min(raw.length, at + RAW_PIECE_CHARS);
        if (end < raw.length) {
          const cut = safeStringCut(raw.slice(at, end));
          if (cut > 0) end = at + cut;
        }
        out.push(JSON.parse(`"${at === 0 && end === raw.length ? raw : raw.slice(at, end)}"`) as string);
        at = end;
      }
    } catch {
      this.st = St.Bad;
      return false;
    }
    for (const s of out) this.emit(s, last);
    return true;
  }

  /** Inside a streamed string: send what can be unescaped alone, up to its closing quote. */
  private streamString(text: string, i: number): number {
    const n = text.length;
    const j = this.quoteAt(text, i);
    if (this.asideRaw !== undefined) {
      // An `aside` string: collected as it is while short, kept aside once it is long.
      this.asideRaw += text.slice(i, j);
      if (j < n) {
        this.collect(`"${this.asideRaw}"`);
        this.asideRaw = undefined;
        unroute(this.frames);
        this.target = PIECE_DROP;
        this.st = this.afterValue();
        return j + 1;
      }
      if (this.asideRaw.length < ASIDE_CHARS) return n;
      this.collect('""');
      const held = this.asideRaw;
      this.asideRaw = undefined;
      const cut = safeStringCut(held);
      this.pending = held.slice(cut);
      this.emitRaw(held.slice(0, cut));
      return n;
    }
    const raw = this.pending.length > 0 ? this.pending + text.slice(i, j) : text.slice(i, j);
    if (j === n) {
      const cut = safeStringCut(raw);
      this.pending = cut === raw.length ? '' : raw.slice(cut);
      this.emitRaw(cut === raw.length ? raw : raw.slice(0, cut));
      return n;
    }
    this.pending = '';
    if (!this.emitRaw(raw, true)) return n;
    this.closeValue();
    return j + 1;
  }

  /** Inside a streamed object: raw JSON text until the scanner sees its top-level value close. */
  private streamObject(text: string, i: number): number {
    const sc = this.scanner!;
    const piece = i === 0 ? text : text.slice(i);
    const before = sc.length;
    sc.push(piece);
    if (sc.closedAt >= 0) {
      const end = sc.closedAt - before;
      this.emit(this.pending + piece.slice(0, end), true);
      this.pending = '';
      this.scanner = undefined;
      this.closeValue();
      return i + end;
    }
    if (sc.status === 'invalid') {
      this.st = St.Bad;
      return text.length;
    }
    const raw = this.pending + piece;
    const cut = holdSurrogate(raw, raw.length, false);
    this.pending = raw.slice(cut);
    this.emit(cut === raw.length ? raw : raw.slice(0, cut));
    return text.length;
  }

  private closeValue(): void {
    if (this.st === St.Dropped) return; // held text went over the cap
    if (this.target === ASIDE) this.asides.push({ path: this.asidePath, text: this.asideText });
    if (this.target === PIECE_HOLD) {
      this.holds.push({ path: this.payloadPath(), parts: this.holdParts, name: `\u0000sluice-held-${this.nonce}-${this.stands++}` });
      this.holdParts = [];
    }
    if (this.target >= 0) this.closes.push(this.target);
    this.target = PIECE_DROP;
    this.st = this.afterValue();
  }
}

/** A short `aside` string went back into the collected text: its key may come again. */
function unroute(frames: Frame[]): void {
  const f = frames[frames.length - 1];
  if (f !== undefined && !f.arr) f.routed?.pop();
}

/**
 * Put `value` at `path` in a parsed payload where the placeholder `""` still is; false when the
 * path does not lead there (a repeated key made JSON.parse keep another value on the way).
 */
function putAt(payload: unknown, path: readonly PathKey[], value: string): boolean {
  let cur = payload;
  for (let k = 0; k < path.length - 1; k++) {
    if (typeof cur !== 'object' || cur === null) return false;
    cur = (cur as Record<PathKey, unknown>)[path[k]!];
  }
  if (typeof cur !== 'object' || cur === null) return false;
  const o = cur as Record<PathKey, unknown>;
  const key = path[path.length - 1]!;
  if (o[key] !== '') return false;
  o[key] = value;
  return true;
}

/** Put an `aside` string back at its path in the parsed payload (the placeholder `""` is there). */
function putAside(payload: unknown, path: readonly PathKey[], text: string): unknown {
  putAt(payload, path, text);
  return payload;
}

/**
 * Put each held value's stand-in at its place in `payload` (the last first: of a repeated key
 * JSON.parse kept the last value, so only a place that still holds its placeholder takes one), and
 * a sink that passes events on to `out`, each text or thinking delta or call fragment whose text is
 * a stand-in replaced by one such event per piece of the held value.
 */
function standIn(payload: unknown, holds: Hold[], out: EventSink): EventSink {
  const byName = new Map<string, Hold>();
  for (let k = holds.length - 1; k >= 0; k--) {
    const h = holds[k]!;
    if (putAt(payload, h.path, h.name)) byName.set(h.name, h);
  }
  return {
    push(e: StreamEvent): void {
      if ((e.type === 'text.delta' || e.type === 'thinking.delta' || e.type === 'call.fragment') && e.text.charCodeAt(0) === 0) {
        const h = byName.get(e.text);
        if (h !== undefined) {
          h.used = true;
          for (const text of h.parts) out.push({ ...e, text });
          return;
        }
      }
      out.push(e);
    },
  };
}
