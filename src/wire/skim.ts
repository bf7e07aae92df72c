/**
 * The reader's fast path: read one SSE `data:` string in place, without `JSON.parse`, when it is
 * the payload a token stream sends most (a plain text or thinking delta). Each adapter's
 * `pushRaw` (anthropic.ts, openaiChat.ts, openaiResponses.ts) walks the string with a `Skim`,
 * checking the exact fields it acts on, and takes the delta's string (a slice, or the JSON escapes
 * decoded). Anything else — another event type, a field it would act on with an unexpected value, a
 * duplicate key it reads, nesting deeper than `MAX_DEPTH`, a key written with escapes, invalid JSON
 * — makes it answer "not mine" before it emits anything, and the reader parses the string as
 * before. So the fast path never decides differently from `JSON.parse` + `onPayload`: it only
 * accepts strings `JSON.parse` accepts, and only shapes whose slow-path events it reproduces exactly
 * (test/wire/skim.test.ts runs both on seeded random payloads of every format).
 *
 * Skipped values (fields the adapter ignores) are validated as JSON but never built: no objects,
 * no key strings, no number parsing. One `Skim` is shared per process (the reader is synchronous
 * and the fast paths never nest).
 */

const QUOTE = 34;
const BACKSLASH = 92;
/** Nesting of skipped values the fast path walks; deeper payloads are parsed. */
export const MAX_DEPTH = 32;

export class Skim {
  s = '';
  i = 0;
  n = 0;
  /** The last key or string read: its content is s[vs, ve) (without quotes); `esc`: it has escapes. */
  vs = 0;
  ve = 0;
  esc = false;

  reset(s: string): this {
    this.s = s;
    this.i = 0;
    this.n = s.length;
    return this;
  }

  /** Skip JSON whitespace; returns the next character code (NaN at the end). */
  peek(): number {
    const s = this.s;
    let i = this.i;
    let c = s.charCodeAt(i);
    while (c === 32 || c === 10 || c === 13 || c === 9) c = s.charCodeAt(++i);
    this.i = i;
    return c;
  }

  /** The next non-space character is `c`: consume it. */
  eat(c: number): boolean {
    if (this.peek() !== c) return false;
    this.i++;
    return true;
  }

  /** Only whitespace is left (after the top-level value). */
  atEnd(): boolean {
    this.peek();
    return this.i >= this.n;
  }

  /**
   * A string at the cursor: validated (no raw control characters, only JSON escapes) and consumed;
   * its content bounds go to vs/ve, `esc` says whether it needs decoding.
   */
  str(): boolean {
    if (this.peek() !== QUOTE) return false;
    const s = this.s;
    const n = this.n;
    let i = this.i + 1;
    let esc = false;
    for (;;) {
      if (i >= n) return false;
      const c = s.charCodeAt(i);
      if (c === QUOTE) break;
      if (c === BACKSLASH) {
        esc = true;
        const e = s.charCodeAt(i + 1);
        if (e === 117) {
          if (!(isHex(s.charCodeAt(i + 2)) && isHex(s.charCodeAt(i + 3)) && isHex(s.charCodeAt(i + 4)) && isHex(s.charCodeAt(i + 5)))) return false;
          i += 6;
          continue;
        }
        if (e === QUOTE || e === BACKSLASH || e === 47 || e === 98 || e === 102 || e === 110 || e === 114 || e === 116) {
          i += 2;
          continue;
        }
        return false;
      }
      if (c < 32) return false;
      i++;
    }
    this.vs = this.i + 1;
    this.ve = i;
    this.esc = esc;
    this.i = i + 1;
    return true;
  }

  /** The last string read, as `JSON.parse` would give it. */
  value(): string {
    return this.esc ? unescape(this.s, this.vs, this.ve) : this.s.slice(this.vs, this.ve);
  }

  /** The last string read is exactly `name` (written without escapes). */
  is(name: string): boolean {
    const len = name.length;
    if (this.ve - this.vs !== len || this.esc) return false;
    const s = this.s;
    const vs = this.vs;
    for (let k = 0; k < len; k++) if (s.charCodeAt(vs + k) !== name.charCodeAt(k)) return false;
    return true;
  }

  /**
   * An object member's key and its colon. Returns false for a key with escapes (it could spell a
   * key the caller reads) and for anything that is not `"key":`.
   */
  key(): boolean {
    return this.str() && !this.esc && this.eat(58);
  }

  /** After a member: `,` (true, more members) or `}` (false, `done` set). Anything else: `bad` set. */
  next(): boolean {
    const c = this.peek();
    this.i++;
    if (c === 44) return true;
    if (c === 125) this.done = true;
    else this.bad = true;
    return false;
  }

  /** Set by `next`: the object closed / was malformed. Reset by `open`. */
  done = false;
  bad = false;

  /** `{` at the cursor; true when it has at least one member (an empty `{}` is consumed, `done` set). */
  open(): boolean {
    this.done = false;
    this.bad = false;
    if (!this.eat(123)) {
      this.bad = true;
      return false;
    }
    if (this.peek() === 125) {
      this.i++;
      this.done = true;
      return false;
    }
    return true;
  }

  /** The literal `null`. */
  nul(): boolean {
    if (this.peek() !== 110 || !this.s.startsWith('null', this.i)) return false;
    this.i += 4;
    return true;
  }

  /** A non-negative integer written plainly (`0`, `17`; at most 9 digits), or -1. */
  index(): number {
    let c = this.peek();
    const s = this.s;
    let i = this.i;
    if (c === 48) {
      i++;
    } else {
      if (c < 49 || c > 57) return -1;
      while (c >= 48 && c <= 57) c = s.charCodeAt(++i);
    }
    if (i - this.i > 9) return -1;
    const next = s.charCodeAt(i);
    if (next === 46 || next === 101 || next === 69 || (next >= 48 && next <= 57)) return -1; // 1.5, 1e3, 01
    let v = 0;
    for (let k = this.i; k < i; k++) v = v * 10 + (s.charCodeAt(k) - 48);
    this.i = i;
    return v;
  }

  /** Validate and skip any JSON value (nesting up to MAX_DEPTH). */
  skip(depth = 0): boolean {
    const c = this.peek();
    if (c === QUOTE) return this.str();
    if (c === 123) {
      if (depth >= MAX_DEPTH) return false;
      if (!this.open()) return this.done;
      for (;;) {
        if (!this.str() || !this.eat(58) || !this.skip(depth + 1)) return false;
        if (!this.next()) return this.done;
      }
    }
    if (c === 91) {
      if (depth >= MAX_DEPTH) return false;
      this.i++;
      if (this.peek() === 93) {
        this.i++;
        return true;
      }
      for (;;) {
        if (!this.skip(depth + 1)) return false;
        const d = this.peek();
        this.i++;
        if (d === 93) return true;
        if (d !== 44) return false;
      }
    }
    if (c === 116) return this.word('true');
    if (c === 102) return this.word('false');
    if (c === 110) return this.word('null');
    return this.number();
  }

  private word(w: string): boolean {
    if (!this.s.startsWith(w, this.i)) return false;
    this.i += w.length;
    return true;
  }

  /** JSON number grammar: -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)? */
  private number(): boolean {
    const s = this.s;
    let i = this.i;
    let c = s.charCodeAt(i);
    if (c === 45) c = s.charCodeAt(++i);
    if (c === 48) c = s.charCodeAt(++i);
    else if (c >= 49 && c <= 57) while (c >= 48 && c <= 57) c = s.charCodeAt(++i);
    else return false;
    if (c === 46) {
      c = s.charCodeAt(++i);
      if (!(c >= 48 && c <= 57)) return false;
      while (c >= 48 && c <= 57) c = s.charCodeAt(++i);
    }
    if (c === 101 || c === 69) {
      c = s.charCodeAt(++i);
      if (c === 43 || c === 45) c = s.charCodeAt(++i);
      if (!(c >= 48 && c <= 57)) return false;
      while (c >= 48 && c <= 57) c = s.charCodeAt(++i);
    }
    this.i = i;
    return true;
  }
}

/**
 * A payload shape seen before: the text up to a delta string's opening quote and after its closing
 * quote. Token streams repeat the same payload with only that string changed, so the next payload
 * is `pre + <JSON string> + suf` — the same JSON with one string value replaced — and needs no walk
 * beyond that string. The adapter keeps the template with the state it checked (e.g. which block).
 */
export interface Template {
  pre: string;
  suf: string;
}

/** A template for the string the skim read last (its value position in `data`). */
export function templateOf(data: string, vs: number, ve: number): Template {
  return { pre: data.slice(0, vs), suf: data.slice(ve + 1) };
}

/**
 * `data` is `t.pre + <valid JSON string> + t.suf`: that string's value; else undefined.
 *
 * The ends are compared as `slice(...) === template`, which compares flat character runs in one
 * go; `startsWith`/`endsWith` walk the ~150-character prefix of a chat chunk character by character
 * (several times slower: it was most of the fast path's cost).
 */
export function fromTemplate(t: Template, data: string): string | undefined {
  const p = t.pre.length;
  const n = data.length;
  const sl = t.suf.length;
  if (n < p + 1 + sl || data.charCodeAt(p - 1) !== QUOTE || data.slice(0, p) !== t.pre) return undefined;
  const k = skim.reset(data);
  k.i = p - 1; // the opening quote
  if (!k.str() || k.i + sl !== n || data.slice(k.i) !== t.suf) return undefined;
  return k.value();
}

/** The process's one Skim (see the header: the fast paths are synchronous and never nest). */
export const skim = new Skim();

function isHex(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
}

function hex(c: number): number {
  return c <= 57 ? c - 48 : (c | 32) - 87;
}

/** Decode the JSON escapes of s[from, to) (already validated by `Skim.str`). */
export function unescape(s: string, from: number, to: number): string {
  let out = '';
  let run = from;
  let i = s.indexOf('\\', from);
  while (i !== -1 && i < to) {
    if (i > run) out += s.slice(run, i);
    const e = s.charCodeAt(i + 1);
    switch (e) {
      case 110:
        out += '\n';
        break;
      case 116:
        out += '\t';
        break;
      case 114:
        out += '\r';
        break;
      case 98:
        out += '\b';
        break;
      case 102:
        out += '\f';
        break;
      case 117:
        out += String.fromCharCode((hex(s.charCodeAt(i + 2)) << 12) | (hex(s.charCodeAt(i + 3)) << 8) | (hex(s.charCodeAt(i + 4)) << 4) | hex(s.charCodeAt(i + 5)));
        i += 4;
        break;
      default:
        out += s[i + 1]; // " \ /
    }
    run = i + 2;
    i = s.indexOf('\\', run);
  }
  return run < to ? out + s.slice(run, to) : out;
}
