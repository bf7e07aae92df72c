/**
 * GLM 4.5 / 4.6 / 4.7 (Zhipu):
 *
 *   <think>reasoning</think>text<tool_call>get_weather
 *   <arg_key>city</arg_key>
 *   <arg_value>Beijing</arg_value>
 *   </tool_call>
 *
 * (GLM 4.7 may omit the newlines: `<tool_call>get_weather<arg_key>city</arg_key><arg_value>…`;
 * GLM 4.5/4.6 sometimes writes them as literal `\n`, two characters, after the name and between
 * the tags — SGLang's Glm4MoeDetector accepts that layout, and so does this parser.)
 * - Identity when the name ends (newline or `<`); arguments built as JSON, one member per
 *   `<arg_key>`/`<arg_value>` pair. Keys are stripped of surrounding whitespace; string values are
 *   kept exactly (the template writes `<arg_value>{{ v }}</arg_value>`, nothing around the value).
 *   Values are typed by the tool schema (core/schemaValue.ts); without one a value is parsed as
 *   JSON (or a Python literal) and kept as a string when it is not. Repairs: Python literals and
 *   backslash-escaped JSON (`[{\"a\": 1}]`) in non-string values. `}` and `call.complete` at
 *   `</tool_call>`.
 * Look-alikes: markup inside Markdown code is text; `<tool_call>` whose name is empty or not
 * `[A-Za-z0-9_.:/-]+` (e.g. Hermes-style JSON, prose) is text; a stray `</tool_call>` and
 * `<|observation|>` are removed.
 */
import { THINK_TAGS } from './core/base';
import { MarkerSet } from './core/markers';
import { CallName } from './core/name';
import { ParamCallParser } from './core/paramCalls';
import type { ParamObject } from './core/params';
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
/** GLM repairs: Python literals and backslash-escaped JSON in non-string values (docs/parsers.md). */
const GLM_TYPING = { python: true, unescape: true } as const;
const NAME_RE = /^[A-Za-z0-9_.:/-]+$/;
/**
 * While reading: a name, possibly followed by literal `\n` separators (two characters each) and a
 * held lone backslash (the next piece may bring its `n`).
 */
const NAME_READ_RE = /^[A-Za-z0-9_.:/-]+(?:\\n)*\\?$/;
/** Literal `\n` separators (backslash, n) the model wrote after the name (SGLang strips them too). */
const LITERAL_NL_TAIL = /(?:\\n)+$/;

const bodySet = new MarkerSet([KEY, CLOSE]);
const keySet = new MarkerSet([KEY_CLOSE]);
const valueSet = new MarkerSet([VAL_CLOSE]);

export class GlmParser extends ParamCallParser {
  private readonly name = new CallName(NAME_CAP, NAME_READ_RE, (c) => c === 60 /* < */ || c === 10 /* \n */, true);

  constructor(opts: ParserOptions = {}) {
    super(
      {
        family: 'glm45',
        reasoning: THINK_TAGS,
        openers: [OPEN],
        strip: [CLOSE, '<|observation|>'],
        plainText: true,
      },
      opts,
    );
  }

  protected onTextMarker(_m: string): void {
    this.lit = OPEN;
    this.name.take();
    this.mode = NAME;
  }

  protected override stepFamily(): boolean {
    switch (this.mode) {
      case NAME: {
        if (this.name.empty) {
          this.lit += this.skipWs();
          if (this.lit.length > OPEN.length + NAME_CAP) return this.literal();
        }
        const read = this.readName(this.name);
        if (typeof read === 'boolean') return read;
        const name = read.replace(LITERAL_NL_TAIL, '');
        if (!NAME_RE.test(name)) return this.literal(this.name.take());
        this.confirmMarkup();
        this.startCall(name, 'none', GLM_TYPING);
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
        const key = this.readParamHeader(keySet, NAME_CAP, BODY, '<arg_key> without </arg_key>');
        if (typeof key === 'boolean') return key;
        this.value = (this.params as ParamObject).open(key.trim());
        this.mode = PRE_VALUE;
        return true;
      }
      case PRE_VALUE: {
        // Whitespace and literal `\n` separators (backslash, n) before <arg_value>.
        for (;;) {
          this.skipWs();
          const nl = this.take('\\n');
          if (nl === 'no') break;
          if (nl === 'maybe') return false;
        }
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
      case VALUE:
        return this.stepValue(valueSet, BODY);
    }
    return false;
  }

  private closeCall(): boolean {
    this.endCall();
    this.afterMarkup();
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
