/**
 * DeepSeek V3 / R1 and V3.1 (`｜` is U+FF5C, `▁` is U+2581; each three bytes in UTF-8):
 *
 *   V3:   <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather
 *         ```json
 *         {"city": "Tokyo"}
 *         ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>
 *   V3.1: <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Tokyo"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>
 *
 * Reasoning: `<think>…</think>` (the V3.1 thinking template opens it in the prompt: use
 * `startInReasoning`).
 * - Identity when the name is read (V3: at the end of its line; V3.1: at `<｜tool▁sep｜>`);
 *   the argument JSON streamed as fragments (V3: only the JSON value inside the ```json fence);
 *   `call.complete` at `<｜tool▁call▁end｜>`.
 * - The section opener (or a bare call opener) inside an unclosed `<think>` ends the reasoning.
 * - Repair: R1's alternate opener spellings (`<｜tool_calls_begin｜>`, `<｜tool calls begin｜>`,
 *   `<｜tool\_calls\_begin｜>`, `<｜tool▁calls｜>`) open the section too, and inside a section
 *   `function<｜tool▁sep｜>NAME` without `<｜tool▁call▁begin｜>` is a call (R1 distills write
 *   `<｜tool▁calls｜>function<｜tool▁sep｜>name\n```json…`; llama.cpp's R1 handler makes the call
 *   opener optional).
 * Look-alikes: the markers are special tokens, recognised anywhere (no code awareness). A bare
 * `<｜tool▁call▁begin｜>` without the section opener is a call (recovered, as Dynamo does);
 * stray closers and `<｜end▁of▁sentence｜>` are removed.
 */
import { THINK_TAGS } from './core/base';
import { CallSlot } from './core/emitter';
import { JsonValueScanner } from './core/json';
import { LeadingWs, MarkerSet } from './core/markers';
import { HEAD, SECTION, SectionParser } from './core/section';
import type { ParserOptions } from './types';

const SECTION_OPEN = '<｜tool▁calls▁begin｜>';
/**
 * Other spellings of the section opener that DeepSeek R1 (and its distills) write; llama.cpp's
 * DeepSeek R1 handler accepts the same set (its `tool_calls_begin` pattern).
 */
const SECTION_OPEN_ALT = [
  '<｜tool_calls_begin｜>',
  '<｜tool calls begin｜>',
  '<｜tool\\_calls\\_begin｜>',
  '<｜tool▁calls｜>',
];
const SECTION_OPENS = [SECTION_OPEN, ...SECTION_OPEN_ALT];
const SECTION_CLOSE = '<｜tool▁calls▁end｜>';
const CALL_OPEN = '<｜tool▁call▁begin｜>';
const CALL_CLOSE = '<｜tool▁call▁end｜>';
const SEP = '<｜tool▁sep｜>';
const EOS = '<｜end▁of▁sentence｜>';
/** A V3/R1 call header written without the call opener (see SectionMarkers.bareCallHeads). */
const BARE_CALL_HEAD = `function${SEP}`;

// HEAD: V3: call type before the separator; V3.1: the name
const NAME_LINE = 12; // V3 only
const ARGS = 13;

const HEAD_CAP = 512;

const headSet = new MarkerSet([SEP, CALL_CLOSE]);
const nameLineSet = new MarkerSet(['\n', '```', CALL_CLOSE]);
const argsSet = new MarkerSet([CALL_CLOSE]);

export class DeepSeekParser extends SectionParser {
  private scanner: JsonValueScanner | null = null;
  private leading = true; // V3: before the ```json fence's value
  private readonly leadingWs = new LeadingWs(); // V3.1
  private readonly v31: boolean;

  constructor(opts: ParserOptions = {}, variant: 'v3' | 'v3.1' = 'v3') {
    super(
      {
        family: variant === 'v3' ? 'deepseek-v3' : 'deepseek-v3.1',
        reasoning: THINK_TAGS,
        openers: [...SECTION_OPENS, CALL_OPEN],
        strip: [SECTION_CLOSE, CALL_CLOSE, SEP, EOS],
        plainText: false,
        // The call section ends a reasoning block the model left open (V3.1 thinking).
        reasoningEnders: [...SECTION_OPENS, CALL_OPEN],
      },
      {
        sectionOpen: SECTION_OPENS,
        sectionClose: SECTION_CLOSE,
        callOpen: CALL_OPEN,
        bareCallHeads: variant === 'v3' ? [BARE_CALL_HEAD] : [],
      },
      opts,
    );
    this.v31 = variant === 'v3.1';
  }

  /** V3 / R1: `function<｜tool▁sep｜>` in a section without `<｜tool▁call▁begin｜>`: the name line follows. */
  protected override onBareCall(_head: string): void {
    this.call = new CallSlot(this.em);
    this.skip = false;
    this.mode = NAME_LINE;
  }

  protected override stepFamily(): boolean {
    switch (this.mode) {
      case SECTION:
        return this.stepSection();
      case HEAD: {
        const r = this.readUntil(headSet, HEAD_CAP);
        if (r === null) return false;
        this.call = new CallSlot(this.em);
        if (r === undefined) {
          this.warn('parser.malformed_call', 'no <｜tool▁sep｜> in the call header; skipped');
          this.scanner = null;
          this.mode = ARGS;
          this.skip = true;
          return true;
        }
        if (r.marker === CALL_CLOSE) {
          this.warn('parser.malformed_call', 'call closed before <｜tool▁sep｜>');
          return this.closeCall();
        }
        this.skip = false;
        if (this.v31) return this.startArgs(r.content.trim());
        this.mode = NAME_LINE;
        return true;
      }
      case NAME_LINE: {
        const r = this.readUntil(nameLineSet, HEAD_CAP);
        if (r === null) return false;
        if (r === undefined) {
          this.warn('parser.malformed_call', 'call name line too long; skipped');
          this.skip = true;
          this.mode = ARGS;
          return true;
        }
        if (r.marker === CALL_CLOSE) {
          if (r.content.trim()) (this.call as CallSlot).identity(r.content.trim());
          return this.closeCall();
        }
        return this.startArgs(r.content.trim());
      }
      case ARGS: {
        const m = this.streamUntil(argsSet, this.skip ? () => {} : this.argSink, true);
        if (m === null) return false;
        return this.closeCall();
      }
    }
    return false;
  }

  private skip = false;

  /** V3.1: the raw text is the argument JSON. V3: only the JSON value inside the ```json fence. */
  private readonly argSink = (s: string): void => {
    const call = this.call as CallSlot;
    if (this.v31) {
      call.fragment(this.leadingWs.strip(s));
      return;
    }
    const sc = this.scanner as JsonValueScanner;
    if (sc.done) return;
    let i = 0;
    if (this.leading) {
      // Drop the ```json fence opener: everything before the first { or [.
      while (i < s.length && s[i] !== '{' && s[i] !== '[') i++;
      if (i === s.length) return;
      this.leading = false;
    }
    sc.feed(s, i, s.length, (t) => call.fragment(t));
  };

  private startArgs(name: string): boolean {
    const call = this.call as CallSlot;
    if (name) call.identity(name);
    else this.warn('parser.malformed_call', 'call without a name');
    this.scanner = new JsonValueScanner();
    this.leading = true;
    this.leadingWs.reset();
    this.mode = ARGS;
    return true;
  }

  protected override closeCall(): boolean {
    this.scanner = null;
    return super.closeCall();
  }
}
