/**
 * Gemma function-call syntax: Gemma 4 and FunctionGemma write the same call grammar with
 * different tokens.
 *
 *   gemma4:        <|channel>thought\nreasoning<channel|>text<|tool_call>call:get_weather{city:<|"|>Tokyo<|"|>,days:3}<tool_call|>
 *   functiongemma: <start_function_call>call:get_weather{city:<escape>Tokyo<escape>,days:3}<end_function_call>
 *
 * Arguments: `{key:value,…}` with bare or delimited keys (`{<|"|>3<|"|>:…}`); a value is a
 * delimited string (`<|"|>…<|"|>` / `<escape>…<escape>`), a nested `{…}` or `[…]`, or a bare token
 * (number, true/false/null; anything else is a string). JSON-quoted keys and values (`"x"`), which
 * Gemma 4 writes inside containers, are read as JSON strings. A single-quoted value (`pattern:'a, b'`,
 * also an array item) is a string as written: it ends at a `'` followed (after whitespace) by `,`,
 * `}`, `]`, the delimiter (dropped) or the closing token; any other `'` is an apostrophe, and a
 * backslash keeps the next quote in the value (Ollama's and oMLX's repairs). Arguments without commas
 * between them are read too. Everything is converted to JSON as it streams: each key when its `:`
 * arrives, string values character by character (escaped), bare values when they end.
 * - Identity at `call:NAME{`; `call.complete` at the closing token (`<tool_call|>` /
 *   `<end_function_call>`). Gemma 4 reasoning `<|channel>LABEL\n…<channel|>` → thinking (the
 *   label line, e.g. `thought`, is dropped).
 * Look-alikes: the markers are special tokens, recognised anywhere. An opener not followed by
 * `call:NAME{` (NAME `[A-Za-z0-9_.:/-]+`) is text; stray closers and end-of-turn tokens are
 * removed. A call whose arguments closed but is followed by something other than the closing
 * token is complete there (warning) and the text resumes.
 */
import { BaseParser, THINK } from './core/base';
import { CallSlot } from './core/emitter';
import { escapeJsonPiece } from './core/json';
import { isWs, MarkerSet } from './core/markers';
import { CallName } from './core/name';
import type { ParserOptions } from './types';

interface GemmaTokens {
  family: string;
  open: string;
  close: string;
  delim: string;
  reasoning?: { open: string; close: string };
  strip: string[];
}

const GEMMA4: GemmaTokens = {
  family: 'gemma4',
  open: '<|tool_call>',
  close: '<tool_call|>',
  delim: '<|"|>',
  reasoning: { open: '<|channel>', close: '<channel|>' },
  strip: ['<tool_call|>', '<turn|>'],
};

const FUNCTIONGEMMA: GemmaTokens = {
  family: 'functiongemma',
  open: '<start_function_call>',
  close: '<end_function_call>',
  delim: '<escape>',
  strip: ['<end_function_call>', '<end_of_turn>', '<start_function_response>'],
};

const PREFIX = 10;
const NAME = 11;
const ARGS = 12;
const POST = 13;
const LABEL = 14;

const NAME_CAP = 256;
const LABEL_CAP = 64;
const NAME_RE = /^[A-Za-z0-9_.:/-]+$/;
const nlSet = new MarkerSet(['\n']);

// Converter states.
const C_KEY = 0; // in an object, before a key (skips whitespace and commas)
const C_KEYREAD = 1;
const C_ITEM = 2; // in an array, before an item
const C_VALUE = 3;
const C_STRING = 4;
const C_BARE = 5;
const C_DONE = 6;
const C_QKEY = 7; // a key between delimiters (`{<|"|>3<|"|>:…}`)
const C_JKEY = 8; // a JSON-quoted key (`{"city": …}`)
const C_JSTR = 9; // a JSON-quoted string value
const C_SQ = 10; // a single-quoted string value (`pattern:'abc'`)

/** Whitespace looked at after a `'` inside a single-quoted value before it counts as content. */
const SQ_WS_CAP = 64;

const R_DONE = 1;
const R_MORE = 2; // needs more input (a delimiter may be cut)
const R_STOP = 3; // a '<' outside strings that is not a delimiter: the caller checks its markers

/** Streaming Gemma-arguments → JSON converter for one call (starts after the opening `{`). */
export class GemmaArgs {
  private state = C_KEY;
  private readonly stack: number[] = [0]; // 0 object, 1 array
  private readonly counts: number[] = [0];
  private acc = '';
  private quotedKey = false; // the key in `acc` was delimited: kept exactly, text after it ignored
  private esc = false; // inside a JSON-quoted string, after a backslash
  result = 0;

  constructor(
    private readonly delim: string,
    private readonly emit: (s: string) => void,
    /** The call's closing token: it ends an unterminated JSON-quoted string. */
    private readonly close = '',
  ) {
    emit('{');
  }

  get done(): boolean {
    return this.state === C_DONE;
  }

  /** Consume buf[pos, end); returns the new position, `result` says why it stopped (0: all consumed). */
  feed(buf: string, pos: number, end: number, noStopAt = -1): number {
    let i = pos;
    this.result = 0;
    const d = this.delim;
    while (i < end) {
      const st = this.state;
      if (st === C_DONE) {
        this.result = R_DONE;
        return i;
      }
      if (st === C_STRING) {
        // Stream up to the delimiter, holding a possible partial delimiter.
        const at = buf.indexOf(d, i);
        if (at >= 0 && at < end) {
          if (at > i) this.emit(escapeJsonPiece(buf.slice(i, at)));
          this.emit('"');
          i = at + d.length;
          this.afterValue();
          continue;
        }
        let stopAt = partialDelimAt(buf, i, end, d);
        // Never split a surrogate pair across pieces.
        if (stopAt > i && stopAt === end) {
          const c = buf.charCodeAt(stopAt - 1);
          if (c >= 0xd800 && c <= 0xdbff) stopAt--;
        }
        if (stopAt > i) this.emit(escapeJsonPiece(buf.slice(i, stopAt)));
        if (stopAt < end) this.result = R_MORE;
        return stopAt;
      }
      if (st === C_JSTR || st === C_JKEY) {
        i = this.jsonString(buf, i, end, noStopAt);
        if (this.result !== 0) return i;
        continue;
      }
      if (st === C_SQ) {
        i = this.singleQuoted(buf, i, end, noStopAt);
        if (this.result !== 0) return i;
        continue;
      }
      if (st === C_QKEY) {
        // A quoted key: read up to the closing delimiter (a cut delimiter waits for more input).
        const at = buf.indexOf(d, i);
        if (at >= 0 && at < end) {
          this.acc += buf.slice(i, at);
          i = at + d.length;
          this.quotedKey = true;
          this.state = C_KEYREAD;
          continue;
        }
        const stopAt = partialDelimAt(buf, i, end, d);
        this.acc += buf.slice(i, stopAt);
        if (stopAt < end) this.result = R_MORE;
        return stopAt;
      }
      const c = buf.charCodeAt(i);
      if (st === C_KEYREAD) {
        if (c === 58 /* : */) {
          const key = this.quotedKey ? this.acc : this.acc.trim();
          this.acc = '';
          this.quotedKey = false;
          this.emit((this.counts[this.counts.length - 1]++ > 0 ? ',' : '') + JSON.stringify(key) + ':');
          this.state = C_VALUE;
          i++;
          continue;
        }
        if (c === 125 /* } */ || (c === 60 && i !== noStopAt)) {
          // A key without a value: drop it.
          this.acc = '';
          this.quotedKey = false;
          this.state = C_KEY;
          continue;
        }
        if (!this.quotedKey) this.acc += buf[i];
        i++;
        continue;
      }
      if (st === C_BARE) {
        if (c === 44 || c === 125 || c === 93 || (c === 60 && i !== noStopAt)) {
          this.emit(bareJson(this.acc));
          this.acc = '';
          this.afterValue();
          continue;
        }
        this.acc += buf[i];
        i++;
        continue;
      }
      if (isWs(c)) {
        i++;
        continue;
      }
      if (c === 60 /* < */ && (st === C_VALUE || st === C_KEY)) {
        // A delimited string value, or a delimited key (`{<|"|>3<|"|>:…}`).
        const avail = end - i;
        if (avail >= d.length ? buf.startsWith(d, i) : d.startsWith(buf.slice(i, end))) {
          if (avail < d.length) {
            this.result = R_MORE;
            return i;
          }
          if (st === C_VALUE) this.emit('"');
          this.acc = '';
          this.state = st === C_VALUE ? C_STRING : C_QKEY;
          i += d.length;
          continue;
        }
      }
      if (c === 34 /* " */ && (st === C_VALUE || st === C_KEY)) {
        // Repair: a JSON-quoted value or key (`{"action": "add"}`), which Gemma 4 writes inside
        // containers instead of its delimiters (vLLM issue 51284, mlx-vlm PR 1065).
        if (st === C_VALUE) this.emit('"');
        this.acc = '';
        this.esc = false;
        this.state = st === C_VALUE ? C_JSTR : C_JKEY;
        i++;
        continue;
      }
      if (c === 39 /* ' */ && st === C_VALUE) {
        // Repair: a single-quoted value (`pattern:':\s*\w+'`), which Gemma 4 writes instead of its
        // delimiters (Ollama issue 15315, oMLX issue 1830).
        this.emit('"');
        this.esc = false;
        this.state = C_SQ;
        i++;
        continue;
      }
      if (c === 60 && i !== noStopAt) {
        this.result = R_STOP;
        return i;
      }
      if (st === C_KEY || st === C_ITEM) {
        if (c === 44 /* , */) {
          i++;
          continue;
        }
        if (c === (st === C_KEY ? 125 : 93)) {
          this.emit(st === C_KEY ? '}' : ']');
          this.stack.pop();
          this.counts.pop();
          i++;
          if (this.stack.length === 0) {
            this.state = C_DONE;
            this.result = R_DONE;
            return i;
          }
          this.afterValue();
          continue;
        }
        if (st === C_KEY) {
          this.state = C_KEYREAD;
          continue;
        }
        this.emit(this.counts[this.counts.length - 1]++ > 0 ? ',' : '');
        this.state = C_VALUE;
        continue;
      }
      // C_VALUE
      if (c === 123 /* { */ || c === 91 /* [ */) {
        this.emit(c === 123 ? '{' : '[');
        this.stack.push(c === 123 ? 0 : 1);
        this.counts.push(0);
        this.state = c === 123 ? C_KEY : C_ITEM;
        i++;
        continue;
      }
      this.state = C_BARE;
    }
    return i;
  }

  /**
   * Inside a JSON-quoted value (streamed as is; raw control characters escaped) or key, up to the
   * unescaped closing quote. The call's closing token ends an unterminated one (R_STOP, the caller
   * completes the call); a cut prefix of it waits (R_MORE). Returns the new position; `result` 0
   * means the string closed or all input was consumed.
   */
  private jsonString(buf: string, i: number, end: number, noStopAt: number): number {
    const key = this.state === C_JKEY;
    const close = this.close;
    let j = i;
    let esc = this.esc;
    let stop = -1;
    for (; j < end; j++) {
      const ch = buf.charCodeAt(j);
      if (esc) esc = false;
      else if (ch === 92 /* \ */) esc = true;
      else if (ch === 34 /* " */) break;
      else if (ch === 60 /* < */ && close.length > 0 && j !== noStopAt) {
        const avail = end - j;
        if (avail >= close.length ? buf.startsWith(close, j) : close.startsWith(buf.slice(j, end))) {
          stop = j;
          break;
        }
      }
    }
    let to = j;
    // Never split a surrogate pair (or an escape) across pieces: hold the last character back.
    if (stop < 0 && to === end && to > i) {
      const last = buf.charCodeAt(to - 1);
      if (last >= 0xd800 && last <= 0xdbff) to--;
    }
    if (to < j) esc = false;
    this.esc = esc;
    const piece = buf.slice(i, to);
    if (key) this.acc += piece;
    else if (piece.length > 0) this.emit(escapeCtl(piece));
    if (stop >= 0) {
      if (end - stop < close.length) {
        this.result = R_MORE;
        return stop;
      }
      if (key) this.state = C_KEY;
      else {
        this.emit('"');
        this.afterValue();
      }
      this.acc = '';
      this.result = R_STOP;
      return stop;
    }
    if (j >= end) {
      // A held high surrogate waits for its pair (returning without R_MORE would spin on it).
      if (to < end) this.result = R_MORE;
      return to;
    }
    if (key) {
      let k = this.acc;
      try {
        const v: unknown = JSON.parse(`"${k}"`);
        if (typeof v === 'string') k = v;
      } catch {
        // an invalid escape: the key as written
      }
      this.acc = k;
      this.quotedKey = true;
      this.state = C_KEYREAD;
    } else {
      this.emit('"');
      this.afterValue();
    }
    return j + 1;
  }

  /**
   * Inside a single-quoted value: the text is the value as written (escaped for JSON; a backslash
   * is kept and only stops the next character from closing the value). A `'` closes the value when
   * what follows it, after whitespace, is `,`, `}`, `]`, the string delimiter (dropped: the model
   * sometimes writes both) or the call's closing token; any other `'` is an apostrophe in the
   * value (`'Don't forget'`). The closing token ends an unterminated value (R_STOP, as for JSON
   * strings). Returns the new position; `result` 0 means the value closed or all input was used.
   */
  private singleQuoted(buf: string, i: number, end: number, noStopAt: number): number {
    const close = this.close;
    let j = i;
    let esc = this.esc;
    let verdict = 0; // 1: the `'` at j closes, resume at `resume`; 2: more input needed at j; 3: closing token at j
    let resume = 0;
    for (; j < end; j++) {
      const ch = buf.charCodeAt(j);
      if (esc) esc = false;
      else if (ch === 92 /* \ */) esc = true;
      else if (ch === 39 /* ' */) {
        const at = this.sqCloseAt(buf, j + 1, end);
        if (at === -1) continue;
        if (at === -2) verdict = 2;
        else {
          verdict = 1;
          resume = at;
        }
        break;
      } else if (ch === 60 /* < */ && close.length > 0 && j !== noStopAt) {
        const m = prefixAt(buf, j, end, close);
        if (m === 0) continue;
        verdict = m === 1 ? 3 : 2;
        break;
      }
    }
    let to = j;
    // Never split a surrogate pair across pieces: hold a trailing high surrogate back.
    if (verdict === 0 && to === end && to > i) {
      const last = buf.charCodeAt(to - 1);
      if (last >= 0xd800 && last <= 0xdbff) {
        to--;
        esc = false;
      }
    }
    this.esc = esc;
    if (to > i) this.emit(escapeJsonPiece(buf.slice(i, to)));
    if (verdict === 0) {
      if (to < end) this.result = R_MORE; // a held high surrogate waits for its pair
      return to;
    }
    if (verdict === 2) {
      this.result = R_MORE;
      return j;
    }
    this.emit('"');
    this.afterValue();
    if (verdict === 3) {
      this.result = R_STOP;
      return j;
    }
    return resume;
  }

  /**
   * After a `'` in a single-quoted value (from `k`): where parsing resumes when the quote closes the
   * value (the delimiter after it is skipped), -1 when it is an apostrophe, -2 when undecided yet.
   */
  private sqCloseAt(buf: string, k: number, end: number): number {
    const stop = Math.min(end, k + SQ_WS_CAP);
    while (k < stop && isWs(buf.charCodeAt(k))) k++;
    if (k >= end) return -2;
    const c = buf.charCodeAt(k);
    if (c === 44 || c === 125 || c === 93) return k;
    if (c !== 60) return -1;
    const d = prefixAt(buf, k, end, this.delim);
    if (d === 1) return k + this.delim.length;
    const t = this.close.length > 0 ? prefixAt(buf, k, end, this.close) : 0;
    if (t === 1) return k;
    return d === 2 || t === 2 ? -2 : -1;
  }

  private afterValue(): void {
    this.state = this.stack[this.stack.length - 1] === 0 ? C_KEY : C_ITEM;
  }
}

/** Raw control characters (below U+0020) of a JSON string piece, escaped; the piece itself when it has none. */
function escapeCtl(s: string): string {
  let out = '';
  let run = 0;
  for (let k = 0; k < s.length; k++) {
    if (s.charCodeAt(k) >= 32) continue;
    out += s.slice(run, k) + escapeJsonPiece(s[k]);
    run = k + 1;
  }
  return run === 0 ? s : out + s.slice(run);
}

/** Whether `m` starts at buf[at]: 1 yes, 2 the input ends inside a prefix of it, 0 no. */
function prefixAt(buf: string, at: number, end: number, m: string): number {
  if (end - at >= m.length) return buf.startsWith(m, at) ? 1 : 0;
  return m.startsWith(buf.slice(at, end)) ? 2 : 0;
}

/** Where a delimiter cut by the end of the input (`buf[from, end)`) begins; `end` when none is. */
function partialDelimAt(buf: string, from: number, end: number, d: string): number {
  for (let s = Math.max(from, end - d.length + 1); s < end; s++)
    if (d.startsWith(buf.slice(s, end))) return s;
  return end;
}

function bareJson(v: string): string {
  const t = v.trim();
  if (t === 'true' || t === 'false' || t === 'null') return t;
  if (/^-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/.test(t) && Number.isFinite(Number(t)))
    return JSON.stringify(Number(t));
  return JSON.stringify(t);
}

export class GemmaParser extends BaseParser {
  private readonly t: GemmaTokens;
  private readonly name = new CallName(NAME_CAP, NAME_RE, (c) => c === 123 /* { */ || c === 60 /* < */, true);
  private call: CallSlot | null = null;
  private args: GemmaArgs | null = null;
  private skipStop = -1;

  constructor(opts: ParserOptions = {}, tokens: 'gemma4' | 'functiongemma' = 'gemma4') {
    const t = tokens === 'gemma4' ? GEMMA4 : FUNCTIONGEMMA;
    super(
      { family: t.family, reasoning: t.reasoning, openers: [t.open], strip: t.strip, plainText: false },
      opts,
    );
    this.t = t;
  }

  protected override onReasoningOpen(): number {
    return LABEL;
  }

  protected onTextMarker(_m: string): void {
    this.lit = this.t.open;
    this.name.take();
    this.mode = PREFIX;
  }

  protected override stepFamily(): boolean {
    switch (this.mode) {
      case LABEL: {
        // `<|channel>thought\n`: the label line is dropped. Without a newline soon, it is reasoning text.
        const r = this.readUntil(nlSet, LABEL_CAP);
        if (r === null) return false;
        this.mode = THINK;
        return true;
      }
      case PREFIX: {
        const ws = this.openerWs(Infinity);
        if (ws !== undefined) return ws;
        const t = this.take('call:');
        if (t === 'maybe') return false;
        if (t === 'no') return this.literal();
        this.lit += 'call:';
        this.mode = NAME;
        return true;
      }
      case NAME: {
        const name = this.readName(this.name);
        if (typeof name === 'boolean') return name;
        if (this.buf.charCodeAt(this.pos) !== 123 /* { */) return this.literal(this.name.take());
        this.pos++;
        this.confirmMarkup();
        const call = new CallSlot(this.em);
        this.call = call;
        call.identity(name);
        this.args = new GemmaArgs(this.t.delim, (s) => call.fragment(s), this.t.close);
        this.mode = ARGS;
        return true;
      }
      case ARGS: {
        const a = this.args as GemmaArgs;
        this.pos = a.feed(this.buf, this.pos, this.buf.length, this.skipStop);
        this.skipStop = -1;
        if (a.result === R_DONE) {
          this.mode = POST;
          return true;
        }
        if (a.result === R_STOP) {
          const t = this.take(this.t.close);
          if (t === 'maybe') return false;
          if (t === 'yes') {
            this.warn(
              'parser.malformed_call',
              'closing token inside unfinished arguments; call completed there',
            );
            return this.close();
          }
          this.skipStop = this.pos;
          return true;
        }
        return false;
      }
      case POST: {
        this.skipWs();
        if (this.atEnd) return false;
        const t = this.take(this.t.close);
        if (t === 'maybe') return false;
        if (t === 'no')
          this.warn('parser.unclosed_call', `arguments closed without ${this.t.close}; call completed there`);
        return this.close();
      }
    }
    return false;
  }

  private close(): boolean {
    this.call?.complete();
    this.call = null;
    this.args = null;
    this.afterMarkup();
    return true;
  }

  protected override finishFamily(): void {
    if (this.mode === LABEL) {
      // Cut before the label line ended: a bare word is the (dropped) label, anything else reasoning.
      const rest = this.buf.slice(this.pos);
      if (!/^\w*$/.test(rest)) this.em.thinking(rest);
      return;
    }
    if (this.mode === PREFIX || this.mode === NAME)
      this.warn('parser.truncated_call', 'stream ended before the call name was complete');
    else this.warn('parser.unclosed_call', 'stream ended inside a call; left without completion');
  }
}
