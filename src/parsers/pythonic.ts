/**
 * Pythonic tool calls (Llama 3.2 / 3.3 with the pythonic template, Llama 4, ToolACE and other
 * fine-tunes): a Python list of calls with keyword arguments,
 *
 *   [get_weather(city="Tokyo", days=3), read_file(path='a.md', opts={'lines': [1, 2]})]
 *   <|python_start|>[get_weather(city="Tokyo")]<|python_end|>                        (Llama 4)
 *
 * - The list is a call list at the very start of the output, or after `<|python_start|>`.
 * - Identity when a call's `NAME(` is read; its keyword arguments are converted to a JSON object
 *   as they stream (`{"city":` when `city=` is read, strings character by character); Python
 *   literals become JSON: single- or double-quoted strings (with Python escapes), `True`/`False`/
 *   `None` and JSON's bare `true`/`false`/`null` (templates that render values with `tojson`),
 *   numbers, lists, tuples (as arrays), dicts; any other bare word becomes a string.
 * - `call.complete` at the `)` closing each call, so the first call of a list is released before
 *   the next one is written. `]` ends the list; `<|python_end|>`, `<|eom|>`, `<|eot|>`,
 *   `<|eom_id|>`, `<|eot_id|>` are removed.
 * Look-alikes: a `[` at the start of the output is a call list only when `[` NAME `(` follows
 * (whitespace allowed after `[`, none between NAME and `(`), checked without consuming anything:
 * `[1, 2]`, `[Link](url)` or `[see (1)]` stay text; a list later in prose is text;
 * `<|python_start|>` not followed by `[` is removed. Positional arguments or a malformed literal
 * end the list with `parser.malformed_call`, the open call left without completion.
 */
import { BaseParser, TEXT } from './core/base';
import { CallSlot } from './core/emitter';
import { escapeJsonPiece } from './core/json';
import { isWs, MarkerSet } from './core/markers';
import type { ParserOptions } from './types';

const TAG = '<|python_start|>';
const START = 10;
const TAG_PRE = 11;
const LIST = 12;
const NAME = 13;
const ARGS = 14;
const KEY = 15;
const VALUE = 16;

const NAME_CAP = 256;
const LEAD_CAP = 320;
const TOKEN_CAP = 1024;
const NAME_RE = /^[A-Za-z_][A-Za-z0-9_.]*$/;
const KEY_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
const NUMBER_RE = /^[+-]?(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d+)?$/;
const STRING_PREFIX = /^[rRbBuUfF]{1,2}$/;

const parenSet = new MarkerSet(['(']);
const eqSet = new MarkerSet(['=']);

/** A character that can start a Python name. */
export const isIdentStart = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const isIdent = (c: number): boolean => isIdentStart(c) || (c >= 48 && c <= 57) || c === 46;

/** Whether `s` from `i` starts a call list: ws* `[` ws* NAME `(`. The index of `[`, or undecided / no. */
export function pythonicLead(s: string, i: number): number | 'maybe' | 'no' {
  while (i < s.length && isWs(s.charCodeAt(i))) i++;
  if (i >= s.length) return 'maybe';
  if (s.charCodeAt(i) !== 91 /* [ */) return 'no';
  const at = i;
  i++;
  while (i < s.length && isWs(s.charCodeAt(i))) i++;
  if (i >= s.length) return 'maybe';
  if (!isIdentStart(s.charCodeAt(i))) return 'no';
  const from = i;
  while (i < s.length && isIdent(s.charCodeAt(i))) i++;
  if (i - from > NAME_CAP) return 'no';
  if (i >= s.length) return 'maybe';
  return s.charCodeAt(i) === 40 /* ( */ ? at : 'no';
}

const V_MORE = 0;
const V_DONE = 1;
const V_BAD = 2;

const CLOSE_OF: Record<number, number> = { 91: 93, 40: 41, 123: 125 };
const PY_ESCAPES: Record<string, string> = {
  n: '\\n',
  t: '\\t',
  r: '\\r',
  b: '\\b',
  f: '\\f',
  '\\': '\\\\',
  '"': '\\"',
  "'": "'",
  '/': '/',
  '0': '\\u0000',
  '\n': '',
};

/**
 * One Python literal (an argument value) converted to JSON text as it streams, O(1) per
 * character: strings pass through in runs (re-escaped for JSON), bare words are collected
 * (bounded) and converted when they end. The value ends, unconsumed, at a `,` or `)` outside
 * any bracket.
 */
export class PyValue {
  state = V_MORE;
  private readonly closers: number[] = [];
  /** Per open bracket: whether the next item is a dict key. */
  private readonly keyNext: boolean[] = [];
  private quote = 0;
  private esc = false;
  private hexNeed = 0;
  private hex = '';
  private hexX = false;
  private tok = '';
  private empty = true;

  constructor(private readonly emit: (s: string) => void) {}

  /** Reads buf[i, end); returns where it stopped. */
  feed(buf: string, i: number, end: number, eof: boolean): number {
    while (i < end && this.state === V_MORE) {
      if (this.quote !== 0) {
        i = this.inString(buf, i, end, eof);
        if (i < 0) return -i - 1;
        continue;
      }
      const c = buf.charCodeAt(i);
      if (isWs(c)) {
        this.endToken();
        i++;
      } else if (c === 34 || c === 39) {
        if (this.tok.length > 0 && STRING_PREFIX.test(this.tok)) this.tok = '';
        this.endToken();
        this.emit('"');
        this.quote = c;
        this.empty = false;
        i++;
      } else if (c === 91 || c === 40 || c === 123) {
        this.endToken();
        this.emit(c === 123 ? '{' : '[');
        this.closers.push(CLOSE_OF[c]);
        this.keyNext.push(c === 123);
        this.empty = false;
        i++;
      } else if (c === 93 || c === 41 || c === 125) {
        this.endToken();
        if (this.closers.length === 0) {
          this.state = c === 41 && !this.empty ? V_DONE : V_BAD;
          return i;
        }
        const want = this.closers.pop();
        this.keyNext.pop();
        if (want !== c) {
          this.state = V_BAD;
          return i;
        }
        this.emit(c === 125 ? '}' : ']');
        i++;
      } else if (c === 44 /* , */) {
        this.endToken();
        if (this.closers.length === 0) {
          this.state = this.empty ? V_BAD : V_DONE;
          return i;
        }
        this.emit(',');
        const k = this.keyNext.length - 1;
        if (this.closers[k] === 125) this.keyNext[k] = true;
        i++;
      } else if (c === 58 /* : */ && this.closers.length > 0) {
        this.endToken();
        this.emit(':');
        this.keyNext[this.keyNext.length - 1] = false;
        i++;
      } else {
        if (this.tok.length >= TOKEN_CAP) {
          this.state = V_BAD;
          return i;
        }
        this.tok += buf[i];
        this.empty = false;
        i++;
      }
    }
    return i;
  }

  /** Inside a string: returns the next index, or -(index + 1) when more input is needed there. */
  private inString(buf: string, i: number, end: number, eof: boolean): number {
    if (this.hexNeed > 0) {
      const n = Math.min(this.hexNeed, end - i);
      this.hex += buf.slice(i, i + n);
      this.hexNeed -= n;
      i += n;
      if (this.hexNeed === 0) {
        const ok = /^[0-9a-fA-F]+$/.test(this.hex);
        if (!ok) this.emit(escapeJsonPiece((this.hexX ? '\\x' : '\\u') + this.hex));
        else this.emit(escapeJsonPiece(String.fromCharCode(parseInt(this.hex, 16))));
        this.hex = '';
      }
      return i;
    }
    if (this.esc) {
      this.esc = false;
      const ch = buf[i];
      if (ch === 'x' || ch === 'u') {
        this.hexX = ch === 'x';
        this.hexNeed = ch === 'x' ? 2 : 4;
        return i + 1;
      }
      const mapped = PY_ESCAPES[ch];
      // An unknown escape keeps its backslash (Python's rule).
      this.emit(mapped ?? '\\\\' + escapeJsonPiece(ch));
      return i + 1;
    }
    let j = i;
    const q = this.quote;
    while (j < end) {
      const c = buf.charCodeAt(j);
      if (c === 92 || c === q) break;
      j++;
    }
    let stop = j;
    // A high surrogate at the end of the input waits for its pair (escaped halves would differ).
    if (stop === end && !eof && stop > i) {
      const c = buf.charCodeAt(stop - 1);
      if (c >= 0xd800 && c <= 0xdbff) stop--;
    }
    if (stop > i) this.emit(escapeJsonPiece(buf.slice(i, stop)));
    if (stop < j || j === end) return stop === end ? stop : -(stop + 1);
    if (buf.charCodeAt(j) === 92) this.esc = true;
    else {
      this.emit('"');
      this.quote = 0;
    }
    return j + 1;
  }

  private endToken(): void {
    const t = this.tok;
    if (t.length === 0) return;
    this.tok = '';
    const k = this.keyNext.length - 1;
    if (k >= 0 && this.keyNext[k]) {
      this.emit(JSON.stringify(t));
      return;
    }
    // Python's literals, and JSON's as templates that write values with `tojson` produce them.
    if (t === 'True' || t === 'true') this.emit('true');
    else if (t === 'False' || t === 'false') this.emit('false');
    else if (t === 'None' || t === 'null') this.emit('null');
    else if (NUMBER_RE.test(t)) {
      const n = Number(t.replace(/_/g, ''));
      this.emit(Number.isFinite(n) ? JSON.stringify(n) : JSON.stringify(t));
    } else this.emit(JSON.stringify(t));
  }
}

export class PythonicParser extends BaseParser {
  private call: CallSlot | null = null;
  private args = 0;
  private value: PyValue | null = null;

  constructor(opts: ParserOptions = {}) {
    super(
      {
        family: 'pythonic',
        openers: [TAG],
        strip: ['<|python_end|>', '<|eom|>', '<|eot|>', '<|eom_id|>', '<|eot_id|>'],
        plainText: false,
      },
      opts,
    );
    this.mode = START;
  }

  protected onTextMarker(_m: string): void {
    this.mode = TAG_PRE;
  }

  protected override stepFamily(): boolean {
    switch (this.mode) {
      case START: {
        const r = pythonicLead(this.buf, this.pos);
        if (r === 'maybe' && !this.eof && this.buf.length - this.pos <= LEAD_CAP) return false;
        if (typeof r === 'string') {
          this.mode = TEXT;
          return true;
        }
        this.confirmMarkup();
        this.pos = r + 1;
        this.mode = LIST;
        return true;
      }
      case TAG_PRE: {
        const from = this.pos;
        this.skipWs();
        if (this.atEnd) {
          this.pos = from;
          return false;
        }
        if (this.buf.charCodeAt(this.pos) !== 91 /* [ */) {
          // The special token with no list after it is removed; the text keeps its whitespace.
          this.pos = from;
          this.mode = TEXT;
          return true;
        }
        this.confirmMarkup();
        this.pos++;
        this.mode = LIST;
        return true;
      }
      case LIST: {
        this.skipWs();
        if (this.atEnd) return false;
        const c = this.buf.charCodeAt(this.pos);
        if (c === 93 /* ] */) {
          this.pos++;
          this.afterMarkup();
          return true;
        }
        if (c === 44 /* , */) {
          this.pos++;
          return true;
        }
        if (isIdentStart(c)) {
          this.mode = NAME;
          return true;
        }
        return this.malformed('the call list holds something other than NAME(…)');
      }
      case NAME: {
        const r = this.readUntil(parenSet, NAME_CAP);
        if (r === null) return false;
        const name = r === undefined ? '' : r.content.trim();
        if (!NAME_RE.test(name)) return this.malformed('call name is not a Python name');
        const call = new CallSlot(this.em);
        call.identity(name);
        this.call = call;
        this.args = 0;
        this.mode = ARGS;
        return true;
      }
      case ARGS: {
        this.skipWs();
        if (this.atEnd) return false;
        const c = this.buf.charCodeAt(this.pos);
        if (c === 41 /* ) */) {
          this.pos++;
          const call = this.call as CallSlot;
          call.fragment(this.args === 0 ? '{}' : '}');
          call.complete();
          this.call = null;
          this.mode = LIST;
          return true;
        }
        if (c === 44 /* , */ && this.args > 0) {
          this.pos++;
          return true;
        }
        if (isIdentStart(c)) {
          this.mode = KEY;
          return true;
        }
        return this.malformed('call arguments are not keyword arguments');
      }
      case KEY: {
        const r = this.readUntil(eqSet, NAME_CAP);
        if (r === null) return false;
        const key = r === undefined ? '' : r.content.trim();
        if (!KEY_RE.test(key)) return this.malformed('argument name is not a Python name');
        const call = this.call as CallSlot;
        call.fragment((this.args === 0 ? '{' : ',') + JSON.stringify(key) + ':');
        this.args++;
        this.value = new PyValue((s) => call.fragment(s));
        this.mode = VALUE;
        return true;
      }
      case VALUE: {
        const v = this.value as PyValue;
        this.pos = v.feed(this.buf, this.pos, this.buf.length, this.eof);
        if (v.state === V_DONE) {
          this.value = null;
          this.mode = ARGS;
          return true;
        }
        if (v.state === V_BAD) return this.malformed('argument value is not a Python literal');
        return false;
      }
    }
    return false;
  }

  private malformed(why: string): boolean {
    this.warn('parser.malformed_call', `${why}; the call list ends and the text resumes`);
    if (this.call !== null && this.call.exists) {
      this.warn('parser.unclosed_call', 'the open call is left without completion');
    }
    this.call = null;
    this.value = null;
    this.afterMarkup();
    return true;
  }

  protected override finishFamily(): void {
    if (this.mode === START || this.mode === TAG_PRE) return;
    if (this.mode === LIST && this.call === null) {
      this.warn('parser.unclosed_array', 'stream ended inside the call list');
      return;
    }
    // A bare word cut by the end (`Tr` of `True`) is dropped: the fragments stay a prefix.
    this.warn('parser.unclosed_call', 'stream ended inside a call; left without completion');
  }
}
