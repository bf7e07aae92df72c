/**
 * Llama 3.1 / 3.2 / 3.3 JSON tool calling (vLLM `llama3_json`):
 *
 *   <|python_tag|>{"name": "get_weather", "parameters": {"city": "Tokyo"}}<|eom_id|>
 *   {"name": "get_weather", "parameters": {"city": "Tokyo"}}; {"name": "f", "parameters": {}}
 *
 * A call is a `{"name", "parameters"}` object ("arguments" is accepted too) after
 * `<|python_tag|>`, or at the very start of the output; several calls are separated by `;` or by
 * newlines (an object after a call without `;` must start with "name"/"type"). Repair: a call
 * object that is not valid JSON is dropped (no event at all: it never becomes a call), the rest of
 * its line is dropped, and a valid call after it is still read.
 * - A call is held until its object closes: Llama has no closing marker, and only the `}` that
 *   closes a valid object proves it is a call. Then identity, the "parameters" value as one
 *   fragment and `call.complete` go out in that push (`<|eom_id|>`/`<|eot_id|>` are removed). A
 *   stream that ends inside the object releases what was held without completion (end-of-stream
 *   rules: the engine may repair the last call).
 * Look-alikes: a JSON object at the start of the output is a call only when its first key is
 *   "name" or "type" (an answer like `{"result": 1}` stays text); a `{` anywhere later in prose is
 *   text. `<|python_tag|>` followed by something other than a JSON object (built-in tool code such
 *   as `brave_search.call(query="…")`) is text without the tag. No code awareness: the start-of-
 *   output rule and the special token make it unnecessary.
 */
import { BaseParser, TEXT } from './core/base';
import { CallSlot } from './core/emitter';
import { H_DONE, H_FAIL, JsonEnvelope } from './core/json';
import type { ParserOptions } from './types';

const TAG = '<|python_tag|>';
const START = 10;
const ENVELOPE = 11;
const AFTER = 12;
const TAG_PRE = 13;
/** After a call object that is not valid JSON: its rest, up to the end of its line or a `;`, is dropped. */
const SKIP_BAD = 14;

const WS_CAP = 64;
const TENTATIVE_CAP = 256;
const FIRST_KEYS = new Set(['name', 'type']);

export class LlamaParser extends BaseParser {
  private call: CallSlot | null = null;
  private env: JsonEnvelope | null = null;
  /** Text of a start-of-output object consumed before its first key confirmed it as a call. */
  private tentative: string | null = null;

  constructor(opts: ParserOptions = {}) {
    super({ family: 'llama3', openers: [TAG], strip: ['<|eom_id|>', '<|eot_id|>'], plainText: false }, opts);
    this.mode = START;
  }

  protected onTextMarker(_m: string): void {
    this.confirmMarkup();
    this.mode = TAG_PRE;
  }

  protected override stepFamily(): boolean {
    switch (this.mode) {
      case START: {
        this.lit += this.skipWs();
        if (this.atEnd) {
          if (this.lit.length > WS_CAP) return this.literal();
          return false;
        }
        if (this.buf.charCodeAt(this.pos) !== 123 /* { */) return this.literal();
        this.newEnvelope(true);
        return true;
      }
      case TAG_PRE: {
        this.skipWs();
        if (this.atEnd) return false;
        if (this.buf.charCodeAt(this.pos) !== 123) {
          this.warn('parser.not_json', '<|python_tag|> not followed by a JSON call; kept as text');
          this.mode = TEXT;
          return true;
        }
        this.newEnvelope(false);
        return true;
      }
      case ENVELOPE: {
        const env = this.env as JsonEnvelope;
        const from = this.pos;
        this.pos = env.feed(this.buf, this.pos, this.buf.length);
        if (this.tentative !== null) {
          this.tentative += this.buf.slice(from, this.pos);
          if (this.tentative !== null && this.tentative.length > TENTATIVE_CAP) return this.rejectTentative();
        }
        if (env.halt === H_DONE) {
          this.tentative = null;
          this.releaseHeld();
          this.call?.complete();
          this.call = null;
          this.env = null;
          this.mode = AFTER;
          return true;
        }
        if (env.halt === H_FAIL) {
          if (this.tentative !== null) return this.rejectTentative();
          // Repair (docs/parsers.md): the broken call gets no completion; its line is dropped and a
          // valid call after it (after `;` or a newline) is still read.
          this.warn('parser.malformed_call', 'call object is not valid JSON; dropped to the end of its line');
          this.dropHeld();
          this.call = null;
          this.env = null;
          this.mode = SKIP_BAD;
          return true;
        }
        return false;
      }
      case AFTER: {
        const ws = this.skipWs();
        if (this.atEnd) {
          this.pos -= ws.length;
          return false;
        }
        const c = this.buf.charCodeAt(this.pos);
        if (c === 59 /* ; */) {
          this.pos++;
          this.mode = TAG_PRE;
          return true;
        }
        if (c === 123 /* { */) {
          // Parallel calls one per line: another object is a call when its first key is "name"
          // or "type" (else it and the whitespace before it are text).
          this.lit = ws;
          this.newEnvelope(true);
          return true;
        }
        this.pos -= ws.length;
        this.afterMarkup();
        return true;
      }
      case SKIP_BAD: {
        while (this.pos < this.buf.length) {
          const c = this.buf.charCodeAt(this.pos++);
          if (c === 59 /* ; */) {
            this.mode = TAG_PRE;
            return true;
          }
          if (c === 10 /* \n */) {
            this.mode = AFTER;
            return true;
          }
        }
        return false;
      }
    }
    return false;
  }

  /** Name and argument text of the call being read, held until its object closes (see header). */
  private heldName: string | undefined = undefined;
  private heldNamed = false;
  private heldArgs = '';

  private releaseHeld(): void {
    const call = this.call;
    if (call !== null) {
      if (this.heldNamed) call.identity(this.heldName);
      call.fragment(this.heldArgs);
    }
    this.dropHeld();
  }

  private dropHeld(): void {
    this.heldName = undefined;
    this.heldNamed = false;
    this.heldArgs = '';
  }

  private newEnvelope(tentative: boolean): void {
    this.call = new CallSlot(this.em);
    this.dropHeld();
    this.tentative = tentative ? '' : null;
    this.env = new JsonEnvelope({
      name: (n) => {
        this.heldName = n;
        this.heldNamed = true;
      },
      args: (s) => {
        this.heldArgs += s;
      },
      firstKey: (k) => {
        if (this.tentative === null) return true;
        if (!FIRST_KEYS.has(k)) return false;
        this.tentative = null;
        this.lit = '';
        this.confirmMarkup();
        return true;
      },
    });
    this.mode = ENVELOPE;
  }

  private rejectTentative(): boolean {
    this.emitText(this.lit + (this.tentative ?? ''));
    this.lit = '';
    this.tentative = null;
    this.call = null;
    this.env = null;
    this.mode = TEXT;
    return true;
  }

  protected override finishFamily(): void {
    if (this.mode === START) {
      // Only whitespace was written: nothing worth a text block.
    } else if (this.mode === ENVELOPE) {
      if (this.tentative !== null) this.emitText(this.lit + this.tentative);
      else {
        this.releaseHeld();
        this.warn('parser.unclosed_call', 'stream ended inside a call object; left without completion');
      }
    }
    this.lit = '';
  }
}
