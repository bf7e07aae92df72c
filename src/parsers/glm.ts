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
 * The engine is `KeyValueCallParser`, configured by a `KeyValueLayout` (tags, trimming, repairs):
 * GLM's is `GLM_LAYOUT`; LongCat-Flash-Lite's (`longcat-lite`) is in longcat.ts.
 */
import { THINK_TAGS, type ReasoningMarkers } from './core/base';
import { MarkerSet } from './core/markers';
import { CallName } from './core/name';
import { ParamCallParser } from './core/paramCalls';
import type { ParamObject, Trim, TypingOptions } from './core/params';
import type { ParserOptions } from './types';

/**
 * The markup of a GLM-style key/value call (`OPEN NAME KEY k KEY_CLOSE VAL v VAL_CLOSE … CLOSE`)
 * and the family's value rules; GLM's own is `GLM_LAYOUT`, LongCat-Flash-Lite's is in longcat.ts.
 */
export interface KeyValueLayout {
  family: string;
  open: string;
  close: string;
  key: string;
  keyClose: string;
  val: string;
  valClose: string;
  reasoning?: Readonly<ReasoningMarkers>;
  /** Stray markers removed from text. */
  strip: string[];
  /** Whitespace trimming of values (GLM: none; the template writes nothing around a value). */
  trim: Trim;
  typing: TypingOptions;
}

export const GLM_LAYOUT: KeyValueLayout = {
  family: 'glm45',
  open: '<tool_call>',
  close: '</tool_call>',
  key: '<arg_key>',
  keyClose: '</arg_key>',
  val: '<arg_value>',
  valClose: '</arg_value>',
  reasoning: THINK_TAGS,
  strip: ['<|observation|>'],
  trim: 'none',
  // GLM repairs: Python literals and backslash-escaped JSON in non-string values (docs/parsers.md).
  typing: { python: true, unescape: true },
};

const NAME = 10;
const BODY = 11;
const KEY_READ = 12;
const PRE_VALUE = 13;
const VALUE = 14;

const NAME_CAP = 256;
const NAME_RE = /^[A-Za-z0-9_.:/-]+$/;
/**
 * While reading: a name, possibly followed by literal `\n` separators (two characters each) and a
 * held lone backslash (the next piece may bring its `n`).
 */
const NAME_READ_RE = /^[A-Za-z0-9_.:/-]+(?:\\n)*\\?$/;
/** Literal `\n` separators (backslash, n) the model wrote after the name (SGLang strips them too). */
const LITERAL_NL_TAIL = /(?:\\n)+$/;

/** A GLM-style key/value call parser for one `KeyValueLayout`. */
export class KeyValueCallParser extends ParamCallParser {
  private readonly name = new CallName(NAME_CAP, NAME_READ_RE, (c) => c === 60 /* < */ || c === 10 /* \n */, true);
  private readonly bodySet: MarkerSet;
  private readonly keySet: MarkerSet;
  private readonly valueSet: MarkerSet;

  constructor(
    private readonly layout: KeyValueLayout,
    opts: ParserOptions = {},
  ) {
    super(
      {
        family: layout.family,
        ...(layout.reasoning ? { reasoning: layout.reasoning } : {}),
        openers: [layout.open],
        strip: [layout.close, ...layout.strip],
        plainText: true,
      },
      opts,
    );
    this.bodySet = new MarkerSet([layout.key, layout.close]);
    this.keySet = new MarkerSet([layout.keyClose]);
    this.valueSet = new MarkerSet([layout.valClose]);
  }

  protected onTextMarker(_m: string): void {
    this.lit = this.layout.open;
    this.name.take();
    this.mode = NAME;
  }

  protected override stepFamily(): boolean {
    switch (this.mode) {
      case NAME: {
        if (this.name.empty) {
          this.lit += this.skipWs();
          if (this.lit.length > this.layout.open.length + NAME_CAP) return this.literal();
        }
        const read = this.readName(this.name);
        if (typeof read === 'boolean') return read;
        const name = read.replace(LITERAL_NL_TAIL, '');
        if (!NAME_RE.test(name)) return this.literal(this.name.take());
        this.confirmMarkup();
        this.startCall(name, this.layout.trim, this.layout.typing);
        this.mode = BODY;
        return true;
      }
      case BODY: {
        const m = this.streamUntil(this.bodySet, () => {});
        if (m === null) return false;
        if (m === this.layout.close) return this.closeCall();
        this.mode = KEY_READ;
        return true;
      }
      case KEY_READ: {
        const key = this.readParamHeader(
          this.keySet,
          NAME_CAP,
          BODY,
          `${this.layout.key} without ${this.layout.keyClose}`,
        );
        if (typeof key === 'boolean') return key;
        this.value = (this.params as ParamObject).open(key.trim());
        this.mode = PRE_VALUE;
        return true;
      }
      case PRE_VALUE: {
        // Whitespace and literal `\n` separators (backslash, n) before the value tag.
        for (;;) {
          this.skipWs();
          const nl = this.take('\\n');
          if (nl === 'no') break;
          if (nl === 'maybe') return false;
        }
        if (this.atEnd) return false;
        const t = this.take(this.layout.val);
        if (t === 'maybe') return false;
        if (t === 'no') {
          this.warn(
            'parser.malformed_call',
            `${this.layout.key} not followed by ${this.layout.val}; value left empty`,
          );
          this.params?.closeValue();
          this.mode = BODY;
          return true;
        }
        this.mode = VALUE;
        return true;
      }
      case VALUE:
        return this.stepValue(this.valueSet, BODY);
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

/** GLM 4.5 / 4.6 / 4.7. */
export class GlmParser extends KeyValueCallParser {
  constructor(opts: ParserOptions = {}) {
    super(GLM_LAYOUT, opts);
  }
}
