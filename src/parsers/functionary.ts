/**
 * Functionary (MeetKai) v3.1 and v3.2, from their chat templates (meetkai-functionary-medium-v3.1 /
 * -v3.2).
 *
 * v3.1 (Llama 3.1 based):
 *
 *   Checking.<function=get_weather>{"city": "Tokyo"}</function><|eom_id|>
 *   <|python_tag|>print(1 + 1)<|eom_id|>
 *
 * - `<function=NAME>` opens a call (identity there); the JSON object after it streams as fragments;
 *   `call.complete` at `</function>`, recognised outside JSON strings only.
 * - `<|python_tag|>` (the code-interpreter tool): a call named `python` whose arguments are
 *   `{"code": "<the code>"}` (the template writes the raw code, not JSON; we wrap it), streamed as
 *   it arrives, complete at `<|eom_id|>` / `<|eot_id|>`.
 * Look-alikes: `<function=` is plain text: markup in Markdown code is text; a NAME that is not
 *   `[A-Za-z0-9_.:-]+`, or `<function=NAME>` not followed (after at most 64 whitespace characters)
 *   by `{`, is text. Stray `</function>`, `<|eom_id|>`, `<|eot_id|>` are removed.
 *
 * v3.2 (every message starts with a recipient line; the generation prompt ends with `>>>`):
 *
 *   all
 *   Checking.>>>get_weather
 *   {"city": "Tokyo"}>>>all
 *   Done.
 *
 * - `>>>RECIPIENT\n` starts a message. At the very start of the output the `>>>` is in the prompt,
 *   so a first line that is a recipient is read the same way. Recipient `all`: text follows (the
 *   header is dropped). Another recipient followed by `{`: a call named RECIPIENT (identity at the
 *   line's end), the JSON object streamed, `call.complete` at its closing `}` (there is no
 *   closing marker). Recipient `python` followed by code: `{"code": …}`, complete at the next `>>>`
 *   or `<|eot_id|>` / `<|eom_id|>`.
 * Look-alikes: `>>>` is plain text: markup in Markdown code is text (a REPL transcript in a fence);
 *   `>>>` followed by anything but a `[A-Za-z0-9_.:-]+` name and a newline (`>>> print(x)`) is
 *   text; a recipient line not followed by `{` is text. At the end of the output a first line that
 *   is only a prefix of `all` is dropped (a cut recipient header); another bare word is text.
 */
import { BaseParser, TEXT } from './core/base';
import { CallSlot } from './core/emitter';
import { H_DONE, H_STOP, JsonValueScanner } from './core/json';
import { MarkerSet } from './core/markers';
import { CallName } from './core/name';
import { ParamObject, ToolSchemas, type ValueSink } from './core/params';
import type { ParserOptions } from './types';

const NAME_CAP = 256;
const WS_CAP = 64;
const NAME_RE = /^[A-Za-z0-9_.:-]+$/;
const EOM = '<|eom_id|>';
const EOT = '<|eot_id|>';
const codeEndSet = new MarkerSet([EOM, EOT]);

/** Shared by both versions: a JSON argument object read with the core scanner, and code calls. */
abstract class FunctionaryBase extends BaseParser {
  protected readonly schemas: ToolSchemas;
  protected call: CallSlot | null = null;
  protected scanner: JsonValueScanner | null = null;
  protected params: ParamObject | null = null;
  protected value: ValueSink | null = null;

  constructor(family: string, openers: string[], strip: string[], opts: ParserOptions) {
    super({ family, openers, strip, plainText: true }, opts);
    this.schemas = new ToolSchemas(opts.tools);
  }

  /** The call is confirmed: identity, and its arguments read as JSON. */
  protected startJson(name: string): void {
    this.lit = '';
    this.confirmMarkup();
    const call = new CallSlot(this.em);
    call.identity(name);
    this.call = call;
    this.scanner = new JsonValueScanner();
  }

  /** A code call (`python`): arguments `{"code": "…"}` streamed from the raw code. */
  protected startCode(name: string): void {
    this.lit = '';
    this.confirmMarkup();
    const call = new CallSlot(this.em);
    call.identity(name);
    this.call = call;
    this.params = new ParamObject((s) => call.fragment(s), this.schemas, name, 'string', 'none');
    this.value = this.params.open('code', 'string');
  }

  /** Streams the code up to a marker of `set` (consumed); the call completes there. */
  protected stepCode(set: MarkerSet): string | null {
    const sink = this.value as ValueSink;
    const m = this.streamUntil(set, (s) => sink.push(s), true);
    if (m === null) return null;
    this.params?.close();
    this.finishCall();
    return m;
  }

  protected finishCall(): void {
    this.call?.complete();
    this.call = null;
    this.scanner = null;
    this.params = null;
    this.value = null;
  }
}

// ---- v3.1 ------------------------------------------------------------------------------------

const FN = '<function=';
const FN_CLOSE = '</function>';
const PY = '<|python_tag|>';

const NAME = 10;
const PRE = 11;
const ARGS = 12;
const POST = 13;
const CODE = 14;

const gtSet = new MarkerSet(['>']);

export class FunctionaryV31Parser extends FunctionaryBase {
  private name = '';
  private skipStop = -1;

  constructor(opts: ParserOptions = {}) {
    super('functionary-v3.1', [FN, PY], [FN_CLOSE, EOM, EOT], opts);
  }

  protected onTextMarker(m: string): void {
    if (m === PY) {
      this.startCode('python');
      this.mode = CODE;
      return;
    }
    this.lit = FN;
    this.mode = NAME;
  }

  protected override stepFamily(): boolean {
    switch (this.mode) {
      case NAME: {
        const r = this.readUntil(gtSet, NAME_CAP);
        if (r === null) return false;
        if (r === undefined) return this.literal();
        const name = r.content.trim();
        this.lit += r.content + '>';
        if (!NAME_RE.test(name)) return this.literal();
        this.name = name;
        this.mode = PRE;
        return true;
      }
      case PRE: {
        const ws = this.openerWs(this.lit.length + WS_CAP);
        if (ws !== undefined) return ws;
        if (this.buf.charCodeAt(this.pos) !== 123 /* { */) return this.literal();
        this.startJson(this.name);
        this.mode = ARGS;
        return true;
      }
      case ARGS: {
        const sc = this.scanner as JsonValueScanner;
        const call = this.call as CallSlot;
        this.pos = sc.feed(
          this.buf,
          this.pos,
          this.buf.length,
          (s) => call.fragment(s),
          60 /* < */,
          this.skipStop,
        );
        this.skipStop = -1;
        if (sc.halt === H_DONE) {
          this.mode = POST;
          return true;
        }
        if (sc.halt === H_STOP) {
          const t = this.take(FN_CLOSE);
          if (t === 'maybe') return false;
          if (t === 'yes') {
            this.warn('parser.unclosed_call', '</function> inside the argument JSON; call completed there');
            return this.close();
          }
          this.skipStop = this.pos;
          return true;
        }
        return false;
      }
      case POST: {
        const from = this.pos;
        this.skipWs();
        if (this.atEnd) {
          this.pos = from;
          return false;
        }
        const t = this.take(FN_CLOSE);
        if (t === 'maybe') return false;
        if (t === 'no') {
          this.pos = from;
          this.warn('parser.unclosed_call', 'argument JSON closed without </function>; call completed there');
        }
        return this.close();
      }
      case CODE: {
        if (this.stepCode(codeEndSet) === null) return false;
        this.afterMarkup();
        return true;
      }
    }
    return false;
  }

  private close(): boolean {
    this.finishCall();
    this.afterMarkup();
    return true;
  }

  protected override finishFamily(): void {
    if (this.mode === NAME || this.mode === PRE) {
      this.warn('parser.truncated_call', 'stream ended inside <function=…> before the arguments');
    } else {
      this.warn('parser.unclosed_call', 'stream ended inside a call; left without completion');
    }
  }
}

// ---- v3.2 ------------------------------------------------------------------------------------

const RECIPIENT = '>>>';
const RECIP = 10;
const RPRE = 11;
const RARGS = 12;
const RCODE = 13;

const codeOrNextSet = new MarkerSet([RECIPIENT, EOM, EOT]);

export class FunctionaryV32Parser extends FunctionaryBase {
  private readonly recipient = new CallName(WS_CAP, NAME_RE, (c) => c === 10, false);
  private name = '';
  /** The recipient being read is the output's first line (its `>>>` was in the prompt). */
  private atStart = true;

  constructor(opts: ParserOptions = {}) {
    super('functionary-v3.2', [RECIPIENT], [EOM, EOT], opts);
    this.mode = RECIP;
  }

  protected onTextMarker(_m: string): void {
    this.atStart = false;
    this.lit = RECIPIENT;
    this.mode = RECIP;
  }

  protected override stepFamily(): boolean {
    switch (this.mode) {
      case RECIP: {
        const r = this.readName(this.recipient);
        if (typeof r === 'boolean') return r;
        this.recipient.take();
        this.pos++; // the newline
        if (r === 'all') {
          this.lit = '';
          this.confirmMarkup();
          this.mode = TEXT;
          return true;
        }
        this.name = r;
        this.lit += r + '\n';
        this.mode = RPRE;
        return true;
      }
      case RPRE: {
        const ws = this.openerWs(this.lit.length + WS_CAP);
        if (ws !== undefined) return ws;
        if (this.buf.charCodeAt(this.pos) === 123 /* { */) {
          this.startJson(this.name);
          this.mode = RARGS;
          return true;
        }
        if (this.name === 'python') {
          this.startCode('python');
          this.mode = RCODE;
          return true;
        }
        return this.literal();
      }
      case RARGS: {
        const sc = this.scanner as JsonValueScanner;
        const call = this.call as CallSlot;
        this.pos = sc.feed(this.buf, this.pos, this.buf.length, (s) => call.fragment(s));
        if (sc.halt !== H_DONE) return false;
        this.finishCall();
        this.afterMarkup();
        return true;
      }
      case RCODE: {
        const m = this.stepCode(codeOrNextSet);
        if (m === null) return false;
        if (m === RECIPIENT) {
          this.lit = RECIPIENT;
          this.atStart = false;
          this.mode = RECIP;
          return true;
        }
        this.afterMarkup();
        return true;
      }
    }
    return false;
  }

  protected override finishFamily(): void {
    if (this.mode === RECIP || this.mode === RPRE) {
      const raw = this.lit + this.recipient.take();
      if (!this.atStart) this.warn('parser.truncated_call', 'stream ended inside a >>> recipient header');
      else if (!'all'.startsWith(raw)) this.emitText(raw);
      this.lit = '';
      return;
    }
    this.warn('parser.unclosed_call', 'stream ended inside a call; left without completion');
  }
}
