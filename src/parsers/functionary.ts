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
import { CallSlot, type Emitter } from './core/emitter';
import { H_DONE, JsonValueScanner } from './core/json';
import { MarkerSet } from './core/markers';
import { CallName } from './core/name';
import { ParamObject, ToolSchemas, type ValueSink } from './core/params';
import { JsonBlockParser, type BlockKind } from './jsonBlock';
import type { ParserOptions } from './types';

const WS_CAP = 64;
const NAME_RE = /^[A-Za-z0-9_.:-]+$/;
const EOM = '<|eom_id|>';
const EOT = '<|eot_id|>';

/** A code call (`python`): arguments `{"code": "…"}` streamed from the raw code. */
class CodeCall {
  private call: CallSlot | null = null;
  private params: ParamObject | null = null;
  private value: ValueSink | null = null;

  constructor(
    private readonly em: Emitter,
    private readonly schemas: ToolSchemas,
  ) {}

  start(name: string): void {
    const call = new CallSlot(this.em);
    call.identity(name);
    this.call = call;
    this.params = new ParamObject((s) => call.fragment(s), this.schemas, name, 'string', 'none');
    this.value = this.params.open('code', 'string');
  }

  push(s: string): void {
    this.value?.push(s);
  }

  /** The code ended: `"}` and `call.complete`. */
  end(): void {
    this.params?.close();
    this.call?.complete();
    this.call = null;
    this.params = null;
    this.value = null;
  }
}

// ---- v3.1 ------------------------------------------------------------------------------------

const FN_CLOSE = '</function>';
const PY = '<|python_tag|>';
/** Modes of JsonBlockParser are 10–17. */
const CODE = 30;

const FUNCTION: BlockKind = {
  open: '<function=',
  close: FN_CLOSE,
  body: 'object',
  named: NAME_RE,
};
const codeEndSet = new MarkerSet([EOM, EOT]);

export class FunctionaryV31Parser extends JsonBlockParser {
  private readonly codeCall: CodeCall;

  constructor(opts: ParserOptions = {}) {
    super(
      {
        family: 'functionary-v3.1',
        openers: [PY],
        blocks: [FUNCTION],
        strip: [EOM, EOT],
        plainText: true,
      },
      opts,
    );
    this.codeCall = new CodeCall(this.em, new ToolSchemas(opts.tools));
  }

  protected override onTextMarker(m: string): void {
    if (m !== PY) return super.onTextMarker(m);
    this.confirmMarkup();
    this.codeCall.start('python');
    this.mode = CODE;
  }

  protected override stepFamily(): boolean {
    if (this.mode !== CODE) return super.stepFamily();
    const m = this.streamUntil(codeEndSet, (s) => this.codeCall.push(s), true);
    if (m === null) return false;
    this.codeCall.end();
    this.afterMarkup();
    return true;
  }

  protected override finishFamily(): void {
    if (this.mode === CODE)
      this.warn('parser.unclosed_call', 'stream ended inside python code; left without completion');
    else super.finishFamily();
  }
}

// ---- v3.2 ------------------------------------------------------------------------------------

const RECIPIENT = '>>>';
const RECIP = 10;
const RPRE = 11;
const RARGS = 12;
const RCODE = 13;

const codeOrNextSet = new MarkerSet([RECIPIENT, EOM, EOT]);

export class FunctionaryV32Parser extends BaseParser {
  private readonly recipient = new CallName(WS_CAP, NAME_RE, (c) => c === 10, false);
  private readonly codeCall: CodeCall;
  private call: CallSlot | null = null;
  private scanner: JsonValueScanner | null = null;
  private name = '';
  /** The recipient being read is the output's first line (its `>>>` was in the prompt). */
  private atStart = true;

  constructor(opts: ParserOptions = {}) {
    super({ family: 'functionary-v3.2', openers: [RECIPIENT], strip: [EOM, EOT], plainText: true }, opts);
    this.codeCall = new CodeCall(this.em, new ToolSchemas(opts.tools));
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
        const json = this.buf.charCodeAt(this.pos) === 123; /* { */
        if (!json && this.name !== 'python') return this.literal();
        this.lit = '';
        this.confirmMarkup();
        if (json) {
          const call = new CallSlot(this.em);
          call.identity(this.name);
          this.call = call;
          this.scanner = new JsonValueScanner();
          this.mode = RARGS;
        } else {
          this.codeCall.start(this.name);
          this.mode = RCODE;
        }
        return true;
      }
      case RARGS: {
        const sc = this.scanner as JsonValueScanner;
        const call = this.call as CallSlot;
        this.pos = sc.feed(this.buf, this.pos, this.buf.length, (s) => call.fragment(s));
        if (sc.halt !== H_DONE) return false;
        call.complete();
        this.call = null;
        this.scanner = null;
        this.afterMarkup();
        return true;
      }
      case RCODE: {
        const m = this.streamUntil(codeOrNextSet, (s) => this.codeCall.push(s), true);
        if (m === null) return false;
        this.codeCall.end();
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
