/**
 * OLMo 3 (AI2, Instruct and Think), from its chat template: the assistant's calls are written as
 * Python-style calls, one per line, inside `<function_calls>` tags, with every value written by
 * `tojson` (JSON strings, numbers, `true`/`false`/`null`, objects, arrays):
 *
 *   <function_calls>get_weather(city="Tokyo", days=3)
 *   get_time(timezone="Asia/Tokyo", utc=true)</function_calls>
 *
 * - The calls between the tags are read by batch A's `PythonicParser` (through pythonicBlock.ts,
 *   as a list `[…]` the tags imply), which reads `true`/`false`/`null` outside strings as the
 *   JSON literals they are. Identity at `NAME(`, keyword arguments converted to JSON as they stream,
 *   `call.complete` at the `)` closing each call.
 * - Reasoning (OLMo 3 Think): `<think>…</think>`; the template opens it in the prompt
 *   (`<|im_start|>assistant\n<think>`): use `startInReasoning`.
 * Look-alikes: `<function_calls>` is plain text: markup in Markdown code is text; `<function_calls>`
 * not followed (after at most 64 whitespace characters) by a name is text (Anthropic-style
 * `<function_calls><invoke …>` stays text); stray `</function_calls>`, `<|im_end|>`,
 * `<|endoftext|>` are removed.
 */
import { BaseParser, THINK_TAGS } from './core/base';
import { MarkerSet } from './core/markers';
import { isIdentStart, PythonicBlock } from './pythonicBlock';
import type { ParserOptions } from './types';

const OPEN = '<function_calls>';
const CLOSE = '</function_calls>';
const PRE = 10;
const BODY = 11;
const WS_CAP = 64;
const closeSet = new MarkerSet([CLOSE]);

export class Olmo3Parser extends BaseParser {
  private block: PythonicBlock | null = null;

  constructor(opts: ParserOptions = {}) {
    super(
      {
        family: 'olmo3',
        reasoning: THINK_TAGS,
        openers: [OPEN],
        strip: [CLOSE, '<|im_end|>', '<|endoftext|>'],
        plainText: true,
      },
      opts,
    );
  }

  protected onTextMarker(_m: string): void {
    this.lit = OPEN;
    this.mode = PRE;
  }

  protected override stepFamily(): boolean {
    if (this.mode === PRE) {
      const ws = this.openerWs(OPEN.length + WS_CAP);
      if (ws !== undefined) return ws;
      if (!isIdentStart(this.buf.charCodeAt(this.pos))) return this.literal();
      this.lit = '';
      this.confirmMarkup();
      this.block = new PythonicBlock({
        em: this.em,
        text: (t) => this.emitText(t),
        warn: (c, m) => this.warn(c, m),
      });
      this.block.push('[');
      this.mode = BODY;
      return true;
    }
    if (this.mode === BODY) {
      const block = this.block as PythonicBlock;
      const m = this.streamUntil(closeSet, (t) => block.push(t), true);
      if (m === null) return false;
      block.close(']');
      this.block = null;
      this.afterMarkup();
      return true;
    }
    return false;
  }

  protected override finishFamily(): void {
    if (this.mode === PRE) {
      this.warn('parser.truncated_call', `stream ended right after ${OPEN}`);
    } else if (this.mode === BODY) {
      if ((this.block as PythonicBlock).cut()) {
        this.warn('parser.truncated_call', `stream ended inside ${OPEN} before a call was read`);
      }
      this.block = null;
    }
  }
}
