/**
 * Incremental JSON helpers for the families whose calls are JSON.
 *
 * - `JsonValueScanner` passes a raw JSON value through (as argument fragments) and knows when the
 *   top-level value has closed, tracking only depth, strings and escapes: O(1) per character.
 * - `JsonEnvelope` reads one `{"name": "...", "arguments": {...}}` object (also `"parameters"`,
 *   and stringified arguments `"arguments": "{\"a\":1}"`), reports the name once its string
 *   closes and streams the arguments text as it arrives.
 *
 * Both stop, without consuming it, at a chosen character outside JSON strings (the first character
 * of the family's closing marker) so the family can check for its marker; and both report a
 * `halt` reason after each `feed`.
 */
import { isWs } from './markers';

export const H_END = 0; // consumed everything given
export const H_STOP = 1; // stopped at the stop character (not consumed)
export const H_DONE = 2; // the value / envelope closed (closing char consumed)
export const H_MORE = 3; // needs more input to continue (an escape sequence is cut)
export const H_FAIL = 4; // not valid for this grammar (pos at the offending char)

const QUOTE = 34;
const BSLASH = 92;
const LBRACE = 123;
const RBRACE = 125;
const LBRACK = 91;
const RBRACK = 93;
const COMMA = 44;
const COLON = 58;

export class JsonValueScanner {
  halt = H_END;
  done = false;
  private started = false;
  private depth = 0;
  private inStr = false;
  private esc = false;
  private literal = false;

  get inString(): boolean {
    return this.inStr;
  }

  /**
   * Consume buf[pos, end) passing consumed text to `emit`; returns the new position.
   * `stop` is a char code to stop at outside strings (-1 for none), except at position `noStopAt`.
   */
  feed(buf: string, pos: number, end: number, emit: (s: string) => void, stop = -1, noStopAt = -1): number {
    let i = pos;
    this.halt = H_END;
    if (!this.started) {
      // Whitespace before the value is not part of the argument text.
      while (i < end && isWs(buf.charCodeAt(i))) i++;
      if (i >= end) return i;
      this.started = true;
      const c = buf.charCodeAt(i);
      if (c === LBRACE || c === LBRACK) this.depth = 1;
      else if (c === QUOTE) this.inStr = true;
      else this.literal = true;
      if (!this.literal) {
        emit(buf[i]);
        i++;
      }
    }
    const from = i;
    if (this.literal) {
      for (; i < end; i++) {
        const c = buf.charCodeAt(i);
        if (isWs(c) || c === COMMA || c === RBRACE || c === RBRACK || (c === stop && i !== noStopAt)) {
          this.done = true;
          this.halt = H_DONE;
          break;
        }
      }
      emit(buf.slice(from, i));
      return i;
    }
    for (; i < end; i++) {
      const c = buf.charCodeAt(i);
      if (this.inStr) {
        if (this.esc) this.esc = false;
        else if (c === BSLASH) this.esc = true;
        else if (c === QUOTE) {
          this.inStr = false;
          if (this.depth === 0) {
            i++;
            this.done = true;
            this.halt = H_DONE;
            break;
          }
        }
        continue;
      }
      if (c === stop && i !== noStopAt) {
        this.halt = H_STOP;
        break;
      }
      if (c === QUOTE) this.inStr = true;
      else if (c === LBRACE || c === LBRACK) this.depth++;
      else if (c === RBRACE || c === RBRACK) {
        if (--this.depth === 0) {
          i++;
          this.done = true;
          this.halt = H_DONE;
          break;
        }
      }
    }
    emit(buf.slice(from, i));
    return i;
  }
}

const S_START = 0;
const S_KEY_OR_END = 1;
const S_KEY = 2;
const S_COLON = 3;
const S_VALUE = 4;
const S_NAME = 5;
const S_ARGS_RAW = 6;
const S_ARGS_STR = 7;
const S_SKIP = 8;
const S_AFTER = 9;
const S_DONE = 10;
const S_FAIL = 11;
const S_ID = 12;

export interface EnvelopeHandler {
  name(name: string): void;
  args(text: string): void;
  /** Called with the first key; returning false rejects the object (halt H_FAIL, nothing emitted). */
  firstKey?(key: string): boolean;
  /** When given: called with a string `"id"` member's value (Mistral writes the call id there). */
  id?(id: string): void;
}

/**
 * The keys of a call object. Default: `{"name": "…", "arguments"|"parameters": {…}}`. Families
 * with their own keys give them (`tool_name` / `parameters`, Command R7B); `keyed` is the
 * `{"NAME": {args}}` layout, where the first key is the call name and its value the arguments
 * (Apertus).
 */
export interface EnvelopeShape {
  nameKeys?: readonly string[];
  argKeys?: readonly string[];
  keyed?: boolean;
}

interface Keys {
  name: ReadonlySet<string>;
  args: ReadonlySet<string>;
  keyed: boolean;
}

const DEFAULT_KEYS: Keys = { name: new Set(['name']), args: new Set(['arguments', 'parameters']), keyed: false };

function keysOf(shape: EnvelopeShape | undefined): Keys {
  if (shape === undefined) return DEFAULT_KEYS;
  return {
    name: shape.nameKeys ? new Set(shape.nameKeys) : DEFAULT_KEYS.name,
    args: shape.argKeys ? new Set(shape.argKeys) : DEFAULT_KEYS.args,
    keyed: shape.keyed === true,
  };
}

function decodeJsonString(raw: string): string | undefined {
  try {
    const v: unknown = JSON.parse(`"${raw}"`);
    return typeof v === 'string' ? v : undefined;
  } catch {
    return undefined;
  }
}

export class JsonEnvelope {
  halt = H_END;
  private state = S_START;
  private raw = '';
  private key = '';
  private keys = 0;
  private esc = false;
  private sawArgs = false;
  private sub: JsonValueScanner | null = null;
  private readonly emitArgs: (s: string) => void;
  private readonly skipSink = (): void => {};
  private readonly k: Keys;

  constructor(
    private readonly h: EnvelopeHandler,
    shape?: EnvelopeShape,
  ) {
    this.emitArgs = (s: string) => h.args(s);
    this.k = keysOf(shape);
  }

  get done(): boolean {
    return this.state === S_DONE;
  }
  get failed(): boolean {
    return this.state === S_FAIL;
  }
  get started(): boolean {
    return this.state !== S_START;
  }
  /** Inside a JSON string (where a closing marker is never recognised). */
  get inString(): boolean {
    const s = this.state;
    if (s === S_KEY || s === S_NAME || s === S_ID || s === S_ARGS_STR) return true;
    return (s === S_ARGS_RAW || s === S_SKIP) && this.sub !== null && this.sub.inString;
  }

  feed(buf: string, pos: number, end: number, stop = -1, noStopAt = -1): number {
    let i = pos;
    this.halt = H_END;
    while (i < end) {
      const st = this.state;
      if (st === S_DONE || st === S_FAIL) break;
      if (st === S_ARGS_RAW || st === S_SKIP) {
        const sub = this.sub as JsonValueScanner;
        i = sub.feed(buf, i, end, st === S_ARGS_RAW ? this.emitArgs : this.skipSink, stop, noStopAt);
        if (sub.halt === H_DONE) {
          this.sub = null;
          this.state = S_AFTER;
          continue;
        }
        if (sub.halt === H_STOP) this.halt = H_STOP;
        return i;
      }
      if (st === S_KEY || st === S_NAME || st === S_ID || st === S_ARGS_STR) {
        i = this.stringPart(buf, i, end);
        if (this.halt === H_MORE) return i;
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
        case S_START:
          if (c !== LBRACE) return this.fail(i);
          this.state = S_KEY_OR_END;
          i++;
          break;
        case S_KEY_OR_END:
          if (c === QUOTE) {
            this.state = S_KEY;
            this.raw = '';
            i++;
          } else if (c === RBRACE && this.keys === 0) {
            this.state = S_DONE;
            i++;
          } else return this.fail(i);
          break;
        case S_COLON:
          if (c !== COLON) return this.fail(i);
          this.state = S_VALUE;
          i++;
          break;
        case S_VALUE:
          if (!this.k.keyed && c === QUOTE && this.k.name.has(this.key)) {
            this.state = S_NAME;
            this.raw = '';
            i++;
          } else if (this.key === 'id' && c === QUOTE && this.h.id !== undefined) {
            this.state = S_ID;
            this.raw = '';
            i++;
          } else if (this.k.keyed ? this.keys === 1 : this.k.args.has(this.key) && !this.sawArgs) {
            this.sawArgs = true;
            if (c === QUOTE) {
              this.state = S_ARGS_STR;
              i++;
            } else {
              this.state = S_ARGS_RAW;
              this.sub = new JsonValueScanner();
            }
          } else {
            this.state = S_SKIP;
            this.sub = new JsonValueScanner();
          }
          break;
        case S_AFTER:
          if (c === COMMA) {
            this.state = S_KEY_OR_END;
            i++;
          } else if (c === RBRACE) {
            this.state = S_DONE;
            i++;
          } else return this.fail(i);
          break;
        default:
          return this.fail(i);
      }
    }
    if (this.state === S_DONE) this.halt = H_DONE;
    else if (this.state === S_FAIL) this.halt = H_FAIL;
    return i;
  }

  private fail(i: number): number {
    this.state = S_FAIL;
    this.halt = H_FAIL;
    return i;
  }

  /** Inside a key, the name string, or stringified arguments. */
  private stringPart(buf: string, i: number, end: number): number {
    const st = this.state;
    if (st === S_ARGS_STR) return this.argsString(buf, i, end);
    const from = i;
    for (; i < end; i++) {
      const c = buf.charCodeAt(i);
      if (this.esc) this.esc = false;
      else if (c === BSLASH) this.esc = true;
      else if (c === QUOTE) break;
    }
    this.raw += buf.slice(from, i);
    if (i >= end) return i;
    i++; // closing quote
    const text = decodeJsonString(this.raw) ?? this.raw;
    this.raw = '';
    if (st === S_KEY) {
      this.key = text;
      this.keys++;
      this.state = S_COLON;
      if (this.keys === 1 && this.h.firstKey && !this.h.firstKey(text)) return this.fail(i);
      if (this.keys === 1 && this.k.keyed && text.length > 0) this.h.name(text);
    } else {
      if (text.length > 0) {
        if (st === S_ID) this.h.id?.(text);
        else this.h.name(text);
      }
      this.state = S_AFTER;
    }
    return i;
  }

  /** Stringified arguments: decode escapes and pass the decoded JSON text on. */
  private argsString(buf: string, i: number, end: number): number {
    let out = '';
    let run = i;
    while (i < end) {
      const c = buf.charCodeAt(i);
      if (c === QUOTE) {
        out += buf.slice(run, i);
        i++;
        this.state = S_AFTER;
        this.h.args(out);
        return i;
      }
      if (c !== BSLASH) {
        i++;
        continue;
      }
      out += buf.slice(run, i);
      if (i + 1 >= end) {
        this.halt = H_MORE;
        this.h.args(out);
        return i;
      }
      const e = buf.charCodeAt(i + 1);
      if (e === 117 /* u */) {
        if (i + 6 > end) {
          this.halt = H_MORE;
          this.h.args(out);
          return i;
        }
        const code = parseInt(buf.slice(i + 2, i + 6), 16);
        out += Number.isNaN(code) ? buf.slice(i, i + 6) : String.fromCharCode(code);
        i += 6;
      } else {
        out += ESCAPES[e] ?? String.fromCharCode(e);
        i += 2;
      }
      run = i;
    }
    out += buf.slice(run, i);
    this.h.args(out);
    return i;
  }
}

const ESCAPES: Record<number, string> = {
  34: '"',
  92: '\\',
  47: '/',
  98: '\b',
  102: '\f',
  110: '\n',
  114: '\r',
  116: '\t',
};

/** JSON string body (without quotes) for a piece of text. */
export function escapeJsonPiece(s: string): string {
  const q = JSON.stringify(s);
  return q.slice(1, q.length - 1);
}
