/**
 * Mistral (Mistral 7B v0.3, Nemo, Small 3.x, Large 2, Magistral, Devstral). `[TOOL_CALLS]` is a
 * control token; three layouts follow it:
 *
 *   [TOOL_CALLS][{"name": "f", "arguments": {…}}, …]        tokenizer < v11 (JSON array)
 *   [TOOL_CALLS]f{"a": 1}[TOOL_CALLS]g{…}                   tokenizer v11
 *   [TOOL_CALLS]f[ARGS]{"a": 1}  /  f[CALL_ID]abc123XYZ[ARGS]{…}   tokenizer v13+
 *
 * Reasoning (Magistral): `[THINK]…[/THINK]`.
 * - Array layout: like Nemotron, each element completes at its closing `}`. The model's own id
 *   (`"id"` after `"arguments"`, as the v0.3 template writes it) is kept: the name is sent when it
 *   is read, the id (or `call_<index>`) right before `call.complete`.
 * - Named layouts: identity when the name (and `[CALL_ID]`, used as the call id) is read, the
 *   argument object streamed as fragments, `call.complete` at the `}` closing it: Mistral has no
 *   closing marker, the end of the argument JSON is the call's end.
 * Look-alikes: the markers are special tokens and are recognised anywhere (no code awareness). A
 * name that is not `[A-Za-z0-9_.-]+` makes `[TOOL_CALLS]` and the name text; a malformed array
 * ends the call section and the text resumes.
 */
import { CallSlot } from './core/emitter';
import { H_DONE, H_STOP, JsonValueScanner } from './core/json';
import { ITEM, JsonCallsParser } from './core/jsonCalls';
import { MarkerSet } from './core/markers';
import { CallName } from './core/name';
import type { ParserOptions } from './types';

const OPEN = '[TOOL_CALLS]';
const ARGS = '[ARGS]';
const CALL_ID = '[CALL_ID]';
const PRE = 10;
const NAME = 11;
const CALLID = 12;
const ARGS_BODY = 13;
const NAME_CAP = 256;
const NAME_RE = /^[A-Za-z0-9_.-]+$/;
const argsSet = new MarkerSet([ARGS]);

export class MistralParser extends JsonCallsParser {
  protected readonly sectionClose = null;
  private readonly name = new CallName(
    NAME_CAP,
    NAME_RE,
    (c) => c === 123 /* { */ || c === 91 /* [ */ || c === 32 || c === 10 || c === 13 || c === 9,
    false,
  );
  private callId = '';
  private scanner: JsonValueScanner | null = null;
  private argStop = -1;

  constructor(opts: ParserOptions = {}) {
    super(
      {
        family: 'mistral',
        reasoning: { open: '[THINK]', close: '[/THINK]' },
        openers: [OPEN],
        plainText: false,
      },
      opts,
    );
  }

  /** `[TOOL_CALLS][{"name", "arguments", "id"}]`: the model's id is kept (the chat template writes it there). */
  protected override keepsModelIds(): boolean {
    return true;
  }

  protected onTextMarker(_m: string): void {
    this.lit = OPEN;
    this.name.take();
    this.callId = '';
    this.mode = PRE;
  }

  protected override stepFamily(): boolean {
    switch (this.mode) {
      case PRE: {
        const ws = this.openerWs(Infinity);
        if (ws !== undefined) return ws;
        const c = this.buf.charCodeAt(this.pos);
        if (c === 91 /* [ */) {
          // `[{` is the JSON array layout; `[ARGS]`/`[CALL_ID]` cannot come before a name.
          this.pos++;
          this.beginArray();
          return true;
        }
        if (c === 123 /* { */) {
          // A single call object without the array brackets.
          this.confirmMarkup();
          this.newEnvelope();
          this.mode = ITEM;
          return true;
        }
        this.mode = NAME;
        return true;
      }
      case NAME: {
        const name = this.readName(this.name);
        if (typeof name === 'boolean') return name;
        const c = this.buf.charCodeAt(this.pos);
        if (c === 123) return this.startArgs();
        if (c === 91) {
          const a = this.take(ARGS);
          if (a === 'yes') return this.startArgs();
          if (a === 'maybe') return false;
          const id = this.take(CALL_ID);
          if (id === 'yes') {
            this.mode = CALLID;
            return true;
          }
          if (id === 'maybe') return false;
        }
        return this.literal(this.name.take());
      }
      case CALLID: {
        const r = this.readUntil(argsSet, NAME_CAP);
        if (r === null) return false;
        if (r === undefined) return this.literal(this.name.take());
        this.callId = r.content.trim();
        return this.startArgs();
      }
      case ARGS_BODY: {
        const sc = this.scanner as JsonValueScanner;
        const call = this.call as CallSlot;
        this.pos = sc.feed(
          this.buf,
          this.pos,
          this.buf.length,
          (s) => call.fragment(s),
          91 /* [ */,
          this.argStop,
        );
        this.argStop = -1;
        if (sc.halt === H_DONE) {
          call.complete();
          this.call = null;
          this.scanner = null;
          this.afterMarkup();
          return true;
        }
        if (sc.halt === H_STOP) {
          const t = this.take(OPEN);
          if (t === 'maybe') return false;
          if (t === 'yes') {
            this.warn(
              'parser.unclosed_call',
              'next [TOOL_CALLS] before the arguments closed; call completed there',
            );
            call.complete();
            this.call = null;
            this.scanner = null;
            this.afterMarkup();
            this.onTextMarker(OPEN);
            this.confirmMarkup();
            return true;
          }
          this.argStop = this.pos;
          return true;
        }
        return false;
      }
    }
    return this.stepArray() ?? false;
  }

  private startArgs(): boolean {
    this.confirmMarkup();
    const call = new CallSlot(this.em, this.callId || undefined);
    call.identity(this.name.value);
    this.call = call;
    this.scanner = new JsonValueScanner();
    this.mode = ARGS_BODY;
    return true;
  }

  protected override finishFamily(): void {
    if (this.mode === PRE || this.mode === NAME || this.mode === CALLID) {
      this.warn('parser.truncated_call', 'stream ended before a call name was complete');
    } else if (this.mode === ARGS_BODY) {
      this.warn('parser.unclosed_call', 'stream ended inside call arguments; left without completion');
    } else this.finishArray();
  }
}
