/**
 * GLM 4.5 / 4.6 / 4.7 (Zhipu):
 *
 *   <think>reasoning</think>text<tool_call>get_weather
 *   <arg_key>city</arg_key>
 *   <arg_value>Beijing</arg_value>
 *   </tool_call>
 *
 * (GLM 4.7 may omit the newlines: `<tool_call>get_weather<arg_key>city</arg_key><arg_value>…`.)
 * - Identity when the name ends (newline or `<`); arguments built as JSON, one member per
 *   `<arg_key>`/`<arg_value>` pair, keys and values stripped of surrounding whitespace. A value is
 *   a string when the tool schema says so; otherwise it is parsed as JSON (or a Python literal)
 *   and kept as a string when it is not (vLLM's rule). `}` and `call.complete` at `</tool_call>`.
 * Look-alikes: markup inside Markdown code is text; `<tool_call>` whose name is empty or not
 * `[A-Za-z0-9_.:/-]+` (e.g. Hermes-style JSON, prose) is text; a stray `</tool_call>` and
 * `<|observation|>` are removed.
 */
import { BaseParser, TEXT } from './core/base';
import { CallSlot } from './core/emitter';
import { MarkerSet } from './core/markers';
import { ParamObject, ToolSchemas, type ValueSink } from './core/params';
import type { ParserOptions } from './types';

const OPEN = '<tool_call>';
const CLOSE = '</tool_call>';
const KEY = '<arg_key>';
const KEY_CLOSE = '</arg_key>';
const VAL = '<arg_value>';
const VAL_CLOSE = '</arg_value>';

const NAME = 10;
const BODY = 11;
const KEY_READ = 12;
const PRE_VALUE = 13;
const VALUE = 14;

const NAME_CAP = 256;
const NAME_RE = /^[A-Za-z0-9_.:/-]+$/;

const bodySet = new MarkerSet([KEY, CLOSE]);
const keySet = new MarkerSet([KEY_CLOSE]);
const valueSet = new MarkerSet([VAL_CLOSE]);

export class GlmParser extends BaseParser {
  private readonly schemas: ToolSchemas;
  private lit = '';
  private name = '';
  private call: CallSlot | null = null;
  private params: ParamObject | null = null;
  private value: ValueSink | null = null;

  constructor(opts: ParserOptions = {}) {
    super(
      {
        family: 'glm45',
        reasoning: { open: '<think>', close: '</think>' },
        openers: [OPEN],
        strip: [CLOSE, '<|observation|>'],
        plainText: true,
      },
      opts,
    );
    this.schemas = new ToolSchemas(opts.tools);
  }

  protected onTextMarker(_m: string): void {
    this.lit = OPEN;
    this.name = '';
    this.mode = NAME;
  }

  protected override stepFamily(): boolean {
    switch (this.mode) {
      case NAME: {
        if (this.name.length === 0) {
          this.lit += this.skipWs();
          if (this.lit.length > OPEN.length + NAME_CAP) return this.literal();
        }
        const b = this.buf;
        let i = this.pos;
        while (i < b.length) {
          const c = b.charCodeAt(i);
          if (c === 60 /* < */ || c === 10 /* \n */) break;
          i++;
        }
        this.name += b.slice(this.pos, i);
        this.pos = i;
        const name = this.name.trim();
        // Decided as soon as the text cannot be a name any more (prose after <tool_call>).
        if (this.name.length > NAME_CAP || (name.length > 0 && !NAME_RE.test(name))) return this.literal();
        if (i >= b.length) return false;
        if (name.length === 0) return this.literal();
        this.confirmMarkup();
        const call = new CallSlot(this.em);
        this.call = call;
        call.identity(name);
        this.params = new ParamObject((s) => call.fragment(s), this.schemas, name, 'auto', 'all');
        this.mode = BODY;
        return true;
      }
      case BODY: {
        const m = this.streamUntil(bodySet, () => {});
        if (m === null) return false;
        if (m === CLOSE) return this.closeCall();
        this.mode = KEY_READ;
        return true;
      }
      case KEY_READ: {
        const r = this.readUntil(keySet, NAME_CAP);
        if (r === null) return false;
        if (r === undefined) {
          this.warn('parser.malformed_call', '<arg_key> without </arg_key>');
          this.mode = BODY;
          return true;
        }
        this.value = (this.params as ParamObject).open(r.content.trim());
        this.mode = PRE_VALUE;
        return true;
      }
      case PRE_VALUE: {
        this.skipWs();
        if (this.atEnd) return false;
        const t = this.take(VAL);
        if (t === 'maybe') return false;
        if (t === 'no') {
          this.warn('parser.malformed_call', '<arg_key> not followed by <arg_value>; value left empty');
          this.params?.closeValue();
          this.mode = BODY;
          return true;
        }
        this.mode = VALUE;
        return true;
      }
      case VALUE: {
        const sink = this.value as ValueSink;
        const m = this.streamUntil(valueSet, (s) => sink.push(s), true);
        if (m === null) return false;
        this.params?.closeValue();
        this.value = null;
        this.mode = BODY;
        return true;
      }
    }
    return false;
  }

  private closeCall(): boolean {
    this.params?.close();
    this.call?.complete();
    this.call = null;
    this.params = null;
    this.value = null;
    this.afterMarkup();
    return true;
  }

  private literal(): boolean {
    this.emitText(this.lit + this.name);
    this.lit = '';
    this.name = '';
    this.mode = TEXT;
    return true;
  }

  protected override finishFamily(): void {
    if (this.mode === NAME)
      this.warn('parser.truncated_call', 'stream ended before the call name was complete');
    else {
      this.warn('parser.unclosed_call', 'stream ended inside a call; left without completion');
    }
  }
}
