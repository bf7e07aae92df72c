/**
 * An incremental JSON validity / completeness scanner.
 *
 * `JsonScanner` is a char-code state machine with a container stack. It keeps its lexer state
 * across `push(text)` calls, so each push costs O(text.length): the accumulated buffer is never
 * re-scanned and never parsed. After every push it knows whether the text so far
 *
 *   - is only whitespace (`'empty'`),
 *   - is a valid prefix of some JSON text (`'partial'`),
 *   - is a complete JSON text, possibly followed by whitespace (`'closed'`), or
 *   - can no longer become valid JSON (`'invalid'`): a grammar error, or non-whitespace after
 *     the top-level value closed.
 *
 * It implements the full JSON grammar (RFC 8259, as ECMAScript's `JSON.parse` reads it):
 * strings with all escapes including `\uXXXX` (raw control characters U+0000–U+001F are
 * rejected; lone surrogates are accepted, as `JSON.parse` accepts them), the full number
 * grammar (`-? (0 | [1-9][0-9]*) (\.[0-9]+)? ([eE][+-]?[0-9]+)?`), `true` / `false` / `null`,
 * and arbitrary nesting. Whitespace is exactly space, tab, LF and CR.
 *
 * A top-level number is never `'closed'` by `push` alone — `"12"` may still grow into `"123"` —
 * unless whitespace follows it. `finish()` judges the text as final (end of input).
 *
 * The scanner works on UTF-16 code units, so a fragment boundary may fall anywhere, including
 * between the two halves of a surrogate pair or inside an escape sequence.
 */

export type ScanStatus = 'empty' | 'partial' | 'closed' | 'invalid';
export type TopLevelKind = 'object' | 'array' | 'string' | 'number' | 'literal';

// Lexer states. Plain numeric constants (not an enum) so the hot loop compares small integers.
const VALUE = 0; // a value is expected (top level, after ':' or after ',' in an array)
const ARR_FIRST = 1; // just after '[': a value or ']'
const OBJ_FIRST = 2; // just after '{': a key or '}'
const OBJ_KEY = 3; // after ',' in an object: a key
const COLON = 4; // after a key: ':'
const AFTER = 5; // after a value inside a container: ',' or the closer
const STR = 6; // inside a string
const STR_ESC = 7; // after a backslash in a string
const STR_U = 8; // inside \uXXXX (uLeft hex digits still expected)
const N_MINUS = 9; // after a leading '-'
const N_ZERO = 10; // after the integer part '0'
const N_INT = 11; // in the integer digits [1-9][0-9]*
const N_DOT = 12; // after '.'
const N_FRAC = 13; // in the fraction digits
const N_E = 14; // after 'e' / 'E'
const N_ESIGN = 15; // after the exponent sign
const N_EXP = 16; // in the exponent digits
const LIT = 17; // inside true / false / null
const DONE = 18; // the top-level value closed; only whitespace may follow
const INVALID = 19;

const OBJECT = 1;
const ARRAY = 2;

// Char codes used below.
const C_TAB = 0x09;
const C_LF = 0x0a;
const C_CR = 0x0d;
const C_SPACE = 0x20;
const C_QUOTE = 0x22;
const C_PLUS = 0x2b;
const C_COMMA = 0x2c;
const C_MINUS = 0x2d;
const C_DOT = 0x2e;
const C_0 = 0x30;
const C_1 = 0x31;
const C_9 = 0x39;
const C_COLON = 0x3a;
const C_E = 0x45;
const C_LBRACKET = 0x5b;
const C_BACKSLASH = 0x5c;
const C_RBRACKET = 0x5d;
const C_e = 0x65;
const C_f = 0x66;
const C_n = 0x6e;
const C_t = 0x74;
const C_LBRACE = 0x7b;
const C_RBRACE = 0x7d;

/** Lookup: 1 for the characters allowed after a backslash (other than 'u'). */
const SIMPLE_ESCAPE = new Uint8Array(128);
for (const ch of '"\\/bfnrt') SIMPLE_ESCAPE[ch.charCodeAt(0)] = 1;

/** Lookup: 1 for ASCII hex digits. */
const HEX = new Uint8Array(128);
for (const ch of '0123456789abcdefABCDEF') HEX[ch.charCodeAt(0)] = 1;

function isWs(c: number): boolean {
  return c === C_SPACE || c === C_LF || c === C_CR || c === C_TAB;
}

/** Whether a number state may end the number (the digits so far form a complete number). */
function numberCanEnd(state: number): boolean {
  return state === N_ZERO || state === N_INT || state === N_FRAC || state === N_EXP;
}

export class JsonScanner {
  private state = VALUE;
  /** Container stack: OBJECT / ARRAY per open level; `depth` entries are live. */
  private stack: number[] = [];
  private depth = 0;
  /** Deepest nesting reached so far (a high-water mark of `depth`). */
  private peak = 0;
  /** Whether the string being scanned is an object key (vs a value). */
  private strIsKey = false;
  /** Hex digits still expected in a \uXXXX escape. */
  private uLeft = 0;
  /** The literal being matched (`true` / `false` / `null`) and how many chars matched. */
  private lit = '';
  private litPos = 0;
  /** Total code units consumed by all pushes. */
  private consumed = 0;

  private _status: ScanStatus = 'empty';
  private _topLevel: TopLevelKind | undefined = undefined;
  private _closedAt = -1;
  private _errorAt = -1;
  private _error: string | undefined = undefined;

  /** See the class comment. Updated after every `push`. */
  get status(): ScanStatus {
    return this._status;
  }

  /** The kind of the top-level value, known from its first character. */
  get topLevel(): TopLevelKind | undefined {
    return this._topLevel;
  }

  /** Current container nesting depth (0 at top level). */
  get nesting(): number {
    return this.depth;
  }

  /** The deepest container nesting reached so far (never decreases). */
  get maxNesting(): number {
    return this.peak;
  }

  /** Code units pushed so far. */
  get length(): number {
    return this.consumed;
  }

  /**
   * Offset (in code units) just after the last character of the top-level value, once it is
   * known to be closed by `push`; -1 otherwise. For a top-level number closed by whitespace it is
   * the end of the number's digits.
   */
  get closedAt(): number {
    return this._closedAt;
  }

  /** Offset of the first character that made the text invalid; -1 while not invalid. */
  get errorAt(): number {
    return this._errorAt;
  }

  /** A short description of the grammar error (never contains input text); undefined while valid. */
  get error(): string | undefined {
    return this._error;
  }

  /**
   * Judge the text pushed so far as the whole input: `'closed'` when it is a complete JSON text
   * (this is where a bare top-level number closes), `'partial'` when it was cut short (a valid
   * prefix that is not complete), `'empty'` for whitespace only, `'invalid'` otherwise.
   * Does not change the scanner: more text may still be pushed afterwards.
   */
  finish(): ScanStatus {
    if (this._status === 'partial' && this.depth === 0 && numberCanEnd(this.state)) return 'closed';
    return this._status;
  }

  /** Feed the next piece of text. O(text.length). */
  push(text: string): ScanStatus {
    const n = text.length;
    if (n === 0 || this.state === INVALID) {
      this.consumed += n;
      return this._status;
    }
    let state = this.state;
    let i = 0;
    // The loop reads one character per iteration, except inside strings (inner fast loop) and
    // when a number ends (the terminating character is re-read in the new state).
    while (i < n) {
      const c = text.charCodeAt(i);
      switch (state) {
        case STR: {
          // Fast path: run to the next quote, backslash or control character.
          let j = i;
          let d = c;
          while (d !== C_QUOTE && d !== C_BACKSLASH && d >= C_SPACE) {
            if (++j === n) break;
            d = text.charCodeAt(j);
          }
          if (j === n) {
            i = n;
            break;
          }
          i = j + 1;
          if (d === C_QUOTE) {
            if (this.strIsKey) {
              state = COLON;
            } else if (this.depth === 0) {
              state = this.close(i);
            } else {
              state = AFTER;
            }
          } else if (d === C_BACKSLASH) {
            state = STR_ESC;
          } else {
            state = this.fail(j, 'control character in string');
          }
          break;
        }
        case AFTER: {
          i++;
          if (c === C_COMMA) {
            state = this.stack[this.depth - 1] === OBJECT ? OBJ_KEY : VALUE;
          } else if (c === C_RBRACE || c === C_RBRACKET) {
            state = this.closeContainer(c, i);
          } else if (!isWs(c)) {
            state = this.fail(i - 1, "expected ',' or a closing bracket");
          }
          break;
        }
        case OBJ_FIRST:
        case OBJ_KEY: {
          i++;
          if (c === C_QUOTE) {
            this.strIsKey = true;
            state = STR;
          } else if (c === C_RBRACE && state === OBJ_FIRST) {
            state = this.closeContainer(c, i);
          } else if (!isWs(c)) {
            state = this.fail(i - 1, 'expected an object key');
          }
          break;
        }
        case COLON: {
          i++;
          if (c === C_COLON) {
            state = VALUE;
          } else if (!isWs(c)) {
            state = this.fail(i - 1, "expected ':'");
          }
          break;
        }
        case VALUE:
        case ARR_FIRST: {
          i++;
          if (isWs(c)) break;
          if (c === C_RBRACKET && state === ARR_FIRST) {
            state = this.closeContainer(c, i);
            break;
          }
          state = this.startValue(c, i - 1);
          break;
        }
        case STR_ESC: {
          i++;
          if (c === 0x75 /* u */) {
            this.uLeft = 4;
            state = STR_U;
          } else if (c < 128 && SIMPLE_ESCAPE[c] === 1) {
            state = STR;
          } else {
            state = this.fail(i - 1, 'bad escape');
          }
          break;
        }
        case STR_U: {
          i++;
          if (c < 128 && HEX[c] === 1) {
            if (--this.uLeft === 0) state = STR;
          } else {
            state = this.fail(i - 1, 'bad \\u escape');
          }
          break;
        }
        case LIT: {
          i++;
          if (c !== this.lit.charCodeAt(this.litPos)) {
            state = this.fail(i - 1, 'bad literal');
          } else if (++this.litPos === this.lit.length) {
            state = this.depth === 0 ? this.close(i) : AFTER;
          }
          break;
        }
        case N_MINUS: {
          if (c === C_0) state = N_ZERO;
          else if (c >= C_1 && c <= C_9) state = N_INT;
          else state = this.fail(i, 'bad number');
          i++;
          break;
        }
        case N_ZERO:
        case N_INT:
        case N_FRAC:
        case N_EXP: {
          if (c >= C_0 && c <= C_9) {
            if (state === N_ZERO) {
              state = this.fail(i, 'leading zero');
              break;
            }
            i++;
            // Digits in the same state: consume the run.
            while (i < n) {
              const d = text.charCodeAt(i);
              if (d < C_0 || d > C_9) break;
              i++;
            }
          } else if (c === C_DOT && (state === N_ZERO || state === N_INT)) {
            state = N_DOT;
            i++;
          } else if ((c === C_e || c === C_E) && state !== N_EXP) {
            state = N_E;
            i++;
          } else {
            // The number ended just before this character: re-read it in the next state.
            if (this.depth === 0) {
              state = this.close(i);
            } else {
              state = AFTER;
            }
          }
          break;
        }
        case N_DOT: {
          if (c >= C_0 && c <= C_9) state = N_FRAC;
          else state = this.fail(i, 'bad number');
          i++;
          break;
        }
        case N_E: {
          if (c === C_PLUS || c === C_MINUS) state = N_ESIGN;
          else if (c >= C_0 && c <= C_9) state = N_EXP;
          else state = this.fail(i, 'bad number');
          i++;
          break;
        }
        case N_ESIGN: {
          if (c >= C_0 && c <= C_9) state = N_EXP;
          else state = this.fail(i, 'bad number');
          i++;
          break;
        }
        case DONE: {
          i++;
          if (!isWs(c)) state = this.fail(i - 1, 'text after the top-level value');
          break;
        }
        default: {
          // INVALID: stop reading.
          i = n;
          break;
        }
      }
      if (state === INVALID) break;
    }
    this.state = state;
    if (state === INVALID) {
      this._status = 'invalid';
    } else if (state === DONE) {
      this._status = 'closed';
    } else if (this._topLevel !== undefined) {
      this._status = 'partial';
    }
    this.consumed += n;
    return this._status;
  }

  /** Begin a value whose first character is `c` (at local offset `at`); returns the new state. */
  private startValue(c: number, at: number): number {
    let kind: TopLevelKind;
    let next: number;
    if (c === C_QUOTE) {
      this.strIsKey = false;
      kind = 'string';
      next = STR;
    } else if (c === C_LBRACE || c === C_LBRACKET) {
      const type = c === C_LBRACE ? OBJECT : ARRAY;
      if (this.depth === this.stack.length) this.stack.push(type);
      else this.stack[this.depth] = type;
      if (++this.depth > this.peak) this.peak = this.depth;
      kind = type === OBJECT ? 'object' : 'array';
      next = type === OBJECT ? OBJ_FIRST : ARR_FIRST;
    } else if (c === C_MINUS) {
      kind = 'number';
      next = N_MINUS;
    } else if (c === C_0) {
      kind = 'number';
      next = N_ZERO;
    } else if (c >= C_1 && c <= C_9) {
      kind = 'number';
      next = N_INT;
    } else if (c === C_t || c === C_f || c === C_n) {
      this.lit = c === C_t ? 'true' : c === C_f ? 'false' : 'null';
      this.litPos = 1;
      kind = 'literal';
      next = LIT;
    } else {
      return this.fail(at, 'unexpected character');
    }
    if (this._topLevel === undefined) this._topLevel = kind;
    return next;
  }

  /** Close the innermost container with closer `c` (ending at local offset `end`). */
  private closeContainer(c: number, end: number): number {
    const want = c === C_RBRACE ? OBJECT : ARRAY;
    if (this.stack[this.depth - 1] !== want) return this.fail(end - 1, 'mismatched closing bracket');
    this.depth--;
    return this.depth === 0 ? this.close(end) : AFTER;
  }

  // Offsets passed to close() and fail() are local to the current push; `consumed` still holds
  // the total before this push (it is advanced at the end of push), so adding it makes them absolute.

  /** The top-level value ended at local offset `end`. */
  private close(end: number): number {
    this._closedAt = this.consumed + end;
    return DONE;
  }

  /** Record a grammar error at local offset `at`. */
  private fail(at: number, message: string): number {
    this._errorAt = this.consumed + at;
    this._error = message;
    return INVALID;
  }
}

/** Convenience: scan a whole text at once and judge it as final. */
export function scanJson(text: string): { status: ScanStatus; topLevel: TopLevelKind | undefined } {
  const s = new JsonScanner();
  s.push(text);
  return { status: s.finish(), topLevel: s.topLevel };
}
