/**
 * DeepSeek V4 and V3.2 DSML (`｜` is U+FF5C FULLWIDTH VERTICAL LINE, three bytes in UTF-8):
 *
 *   <think>reasoning</think>text<｜DSML｜tool_calls>
 *   <｜DSML｜invoke name="get_weather">
 *   <｜DSML｜parameter name="city" string="true">Beijing</｜DSML｜parameter>
 *   <｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>
 *   </｜DSML｜invoke>
 *   </｜DSML｜tool_calls>
 *
 * V3.2 writes `function_calls` for the section tag; both are accepted. An invoke body may also
 * be a direct JSON object instead of parameters.
 * - Identity at the invoke tag; arguments are built as JSON: `{"city":` when a parameter opens,
 *   a `string="true"` value streamed as a JSON string exactly as written (the encoding puts
 *   nothing around the value),
 *   a `string="false"` value typed by the tool schema when given, else parsed as JSON (kept as a
 *   string when it is not JSON); `}` and `call.complete` at `</｜DSML｜invoke>`.
 * Look-alikes: markup inside Markdown code is text; a section opener not followed (after at most
 * 64 whitespace characters) by `<｜DSML｜invoke` is text; stray closers and
 * `<｜end▁of▁sentence｜>` are removed. A bare `<｜DSML｜invoke …>` outside a section is a call.
 */
import { THINK_TAGS } from './core/base';
import type { CallSlot } from './core/emitter';
import { MarkerSet } from './core/markers';
import { ParamCallParser } from './core/paramCalls';
import type { ParamObject } from './core/params';
import type { ParserOptions } from './types';

/** The markers of one DSML-style markup: DeepSeek's `｜DSML｜` or GigaChat 3.5's `｜GCML｜`. */
interface Markup {
  sectionOpen: readonly string[];
  sectionClose: readonly string[];
  /** The longest section opener (bounds the whitespace read after one). */
  openLen: number;
  invoke: string;
  invokeClose: string;
  paramClose: string;
  sectionSet: MarkerSet;
  bodySet: MarkerSet;
  valueSet: MarkerSet;
  invokeCloseSet: MarkerSet;
}

function markup(b: string, sections: readonly string[]): Markup {
  const invoke = `<${b}invoke`;
  const invokeClose = `</${b}invoke>`;
  const paramClose = `</${b}parameter>`;
  const sectionClose = sections.map((x) => `</${b}${x}>`);
  const sectionOpen = sections.map((x) => `<${b}${x}>`);
  return {
    sectionOpen,
    sectionClose,
    openLen: Math.max(...sectionOpen.map((x) => x.length)),
    invoke,
    invokeClose,
    paramClose,
    sectionSet: new MarkerSet([invoke, ...sectionClose]),
    bodySet: new MarkerSet([`<${b}parameter`, invokeClose]),
    valueSet: new MarkerSet([paramClose]),
    invokeCloseSet: new MarkerSet([invokeClose]),
  };
}

/** DeepSeek V4 / V3.2 (`function_calls` is V3.2's section name). */
export const DSML = markup('｜DSML｜', ['tool_calls', 'function_calls']);
/** GigaChat 3.5 (vLLM's gigachat35 parser tests): the same grammar with `｜GCML｜`. */
export const GCML = markup('｜GCML｜', ['tool_calls']);
const EOS = '<｜end▁of▁sentence｜>';

const PRE = 10;
const SECTION = 11;
const INVOKE_HDR = 12;
const BODY_START = 13;
const BODY = 14;
const PARAM_HDR = 15;
const VALUE = 16;
const JSON_BODY = 17;

const WS_CAP = 64;
const HDR_CAP = 1024;

const gtSet = new MarkerSet(['>']);

function attr(hdr: string, name: string): string | undefined {
  const m = new RegExp(`${name}\\s*=\\s*"([^"]*)"`).exec(hdr);
  return m ? m[1] : undefined;
}

export class DsmlParser extends ParamCallParser {
  private inSection = false;
  private name = '';

  constructor(
    opts: ParserOptions = {},
    family = 'deepseek-v4',
    private readonly mk: Markup = DSML,
  ) {
    super(
      {
        family,
        // Both write `<think>…</think>`; GigaChat 3.5 (vLLM's gigachat35 reasoning parser: R1
        // style, the template opens `<think>` in the prompt when `reasoning` is on).
        reasoning: THINK_TAGS,
        openers: [...mk.sectionOpen, mk.invoke],
        strip: [...mk.sectionClose, mk.invokeClose, mk.paramClose, ...(mk === DSML ? [EOS] : [])],
        plainText: true,
      },
      opts,
    );
  }

  protected onTextMarker(m: string): void {
    if (m === this.mk.invoke) {
      this.confirmMarkup();
      this.inSection = false;
      this.mode = INVOKE_HDR;
      return;
    }
    this.lit = m;
    this.mode = PRE;
  }

  protected override stepFamily(): boolean {
    switch (this.mode) {
      case PRE: {
        const ws = this.openerWs(this.mk.openLen + WS_CAP);
        if (ws !== undefined) return ws;
        const t = this.take(this.mk.invoke);
        if (t === 'maybe') return false;
        if (t === 'no') return this.literal();
        this.confirmMarkup();
        this.inSection = true;
        this.mode = INVOKE_HDR;
        return true;
      }
      case SECTION: {
        const m = this.streamUntil(this.mk.sectionSet, () => {});
        if (m === null) return false;
        if (m === this.mk.invoke) {
          this.mode = INVOKE_HDR;
          return true;
        }
        this.inSection = false;
        this.afterMarkup();
        return true;
      }
      case INVOKE_HDR: {
        const r = this.readUntil(gtSet, HDR_CAP);
        if (r === null) return false;
        if (r === undefined) {
          this.startCall('', 'none');
          this.warn('parser.malformed_call', `invoke tag without ">"; skipped to ${this.mk.invokeClose}`);
          this.mode = JSON_BODY;
          this.params = null;
          this.name = '';
          this.skipBody = true;
          return true;
        }
        this.name = attr(r.content, 'name') ?? '';
        this.startCall(this.name, 'none');
        if (!this.name) this.warn('parser.malformed_call', 'invoke without a name');
        this.mode = BODY_START;
        return true;
      }
      case BODY_START: {
        this.skipWs();
        if (this.atEnd) return false;
        if (this.buf.charCodeAt(this.pos) === 123 /* { */) {
          this.params = null;
          this.skipBody = false;
          this.mode = JSON_BODY;
        } else this.mode = BODY;
        return true;
      }
      case BODY: {
        const m = this.streamUntil(this.mk.bodySet, () => {});
        if (m === null) return false;
        if (m === this.mk.invokeClose) return this.closeInvoke();
        this.mode = PARAM_HDR;
        return true;
      }
      case PARAM_HDR: {
        const hdr = this.readParamHeader(gtSet, HDR_CAP, BODY, 'parameter tag without ">"');
        if (typeof hdr === 'boolean') return hdr;
        const pname = attr(hdr, 'name') ?? '';
        const isString = attr(hdr, 'string') !== 'false';
        this.value = (this.params as ParamObject).open(pname, isString ? 'string' : undefined);
        this.mode = VALUE;
        return true;
      }
      case VALUE:
        return this.stepValue(this.mk.valueSet, BODY);
      case JSON_BODY: {
        const call = this.call as CallSlot;
        const skip = this.skipBody;
        const m = this.streamUntil(this.mk.invokeCloseSet, skip ? () => {} : (s) => call.fragment(s), true);
        if (m === null) return false;
        return this.closeInvoke();
      }
    }
    return false;
  }

  private skipBody = false;

  private closeInvoke(): boolean {
    this.endCall();
    if (this.inSection) this.mode = SECTION;
    else this.afterMarkup();
    return true;
  }

  protected override finishFamily(): void {
    if (this.mode === PRE)
      this.warn('parser.truncated_call', 'stream ended right after the call section opener');
    else if (this.mode === SECTION)
      this.warn('parser.unclosed_section', 'stream ended inside the call section');
    else {
      this.warn('parser.unclosed_call', 'stream ended inside an invoke; left without completion');
    }
  }
}
