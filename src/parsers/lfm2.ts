/**
 * LFM2 / LFM2.5 (Liquid AI), from their chat templates. Calls sit between the special tokens
 * `<|tool_call_start|>` and `<|tool_call_end|>`, as a Python call list (the official LFM2.5
 * template) or as a JSON array (llama.cpp's LFM2 template):
 *
 *   <|tool_call_start|>[get_candidate_status(candidate_id="12345")]<|tool_call_end|>Checking…
 *   <|tool_call_start|>[{"name": "get_weather", "arguments": {"city": "Paris"}}]<|tool_call_end|>
 *
 * - Python layout: read by batch A's `PythonicParser` (src/parsers/pythonic.ts), fed the text
 *   between the markers; its calls are renumbered into this stream. Identity at `NAME(`, keyword
 *   arguments converted to JSON as they stream, `call.complete` at the `)` closing each call.
 * - JSON layout: the JSON-block engine (jsonBlock.ts): each element complete at its `}`.
 * - Reasoning: `<think>…</think>` (LFM2.5 thinking models).
 * Look-alikes: special tokens, recognised anywhere. Between the markers, a list that is neither
 * `[NAME(` nor `[{` (`[1, 2]`) is skipped to `<|tool_call_end|>` (`parser.malformed_call`);
 * `<|tool_call_end|>` and `<|im_end|>` are removed.
 */
import { THINK_TAGS } from './core/base';
import { isWs, MarkerSet } from './core/markers';
import { JsonBlockParser, type BlockKind } from './jsonBlock';
import { isIdentStart, PythonicBlock } from './pythonicBlock';
import type { ParserOptions } from './types';

const OPEN = '<|tool_call_start|>';
const CLOSE = '<|tool_call_end|>';
/** Modes of JsonBlockParser are 10–17. */
const PEEK = 30;
const PY = 31;
const PEEK_CAP = 64;

const BLOCK: BlockKind = { open: OPEN, close: CLOSE, body: 'array' };
const closeSet = new MarkerSet([CLOSE]);

export class Lfm2Parser extends JsonBlockParser {
  private block: PythonicBlock | null = null;

  constructor(opts: ParserOptions = {}) {
    super(
      {
        family: 'lfm2',
        reasoning: THINK_TAGS,
        blocks: [BLOCK],
        strip: ['<|im_end|>'],
        plainText: false,
      },
      opts,
    );
  }

  protected override onTextMarker(_m: string): void {
    this.mode = PEEK;
  }

  protected override stepFamily(): boolean {
    if (this.mode === PEEK) {
      // `[` then a name: the Python layout; anything else goes to the JSON-block engine.
      let i = this.pos;
      const end = Math.min(this.buf.length, this.pos + PEEK_CAP);
      while (i < end && isWs(this.buf.charCodeAt(i))) i++;
      if (i < end && this.buf.charCodeAt(i) === 91 /* [ */) {
        i++;
        while (i < end && isWs(this.buf.charCodeAt(i))) i++;
      }
      if (i >= end && end === this.buf.length && !this.eof) return false;
      if (i < this.buf.length && isIdentStart(this.buf.charCodeAt(i))) {
        this.confirmMarkup();
        this.block = new PythonicBlock({
          em: this.em,
          text: (t) => this.emitText(t),
          warn: (c, m) => this.warn(c, m),
        });
        this.mode = PY;
        return true;
      }
      super.onTextMarker(OPEN);
      return true;
    }
    if (this.mode === PY) {
      const block = this.block as PythonicBlock;
      const m = this.streamUntil(closeSet, (t) => block.push(t), true);
      if (m === null) return false;
      block.close();
      this.block = null;
      this.afterMarkup();
      return true;
    }
    return super.stepFamily();
  }

  protected override finishFamily(): void {
    if (this.mode === PEEK) {
      this.warn('parser.truncated_call', `stream ended right after ${OPEN}`);
    } else if (this.mode === PY) {
      if ((this.block as PythonicBlock).cut()) {
        this.warn('parser.truncated_call', `stream ended inside ${OPEN}… before a call was read`);
      }
      this.block = null;
    } else super.finishFamily();
  }
}
