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
import { JsonBlockParser, stdEnvelope, type BlockKind } from './jsonBlock';
import { PythonicParser } from './pythonic';
import type { StreamEvent } from '../wire/events';
import type { ParserOptions } from './types';

const OPEN = '<|tool_call_start|>';
const CLOSE = '<|tool_call_end|>';
/** Modes of JsonBlockParser are 10–17. */
const PEEK = 30;
const PY = 31;
const PEEK_CAP = 64;

const BLOCK: BlockKind = { open: OPEN, close: CLOSE, object: false, array: true };
const closeSet = new MarkerSet([CLOSE]);

function isIdentStart(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
}

export class Lfm2Parser extends JsonBlockParser {
  private sub: PythonicParser | null = null;
  /** Index of each call of the current Python block (its own numbering) in this stream. */
  private readonly indices = new Map<number, number>();

  constructor(opts: ParserOptions = {}) {
    super(
      {
        family: 'lfm2',
        reasoning: THINK_TAGS,
        openers: [],
        blocks: [BLOCK],
        strip: [CLOSE, '<|im_end|>'],
        plainText: false,
        envelope: stdEnvelope,
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
        this.sub = new PythonicParser();
        this.indices.clear();
        this.mode = PY;
        return true;
      }
      super.onTextMarker(OPEN);
      return true;
    }
    if (this.mode === PY) {
      const sub = this.sub as PythonicParser;
      const m = this.streamUntil(closeSet, (s) => this.relay(sub.push(s)), true);
      if (m === null) return false;
      this.relay(sub.end());
      this.sub = null;
      this.afterMarkup();
      return true;
    }
    return super.stepFamily();
  }

  /** The Python reader's events, with its calls renumbered into this stream. */
  private relay(evs: StreamEvent[]): void {
    for (const e of evs) {
      switch (e.type) {
        case 'text.delta':
          this.emitText(e.text);
          break;
        case 'call.identity':
          this.em.identity(this.index(e.index), `call_${this.index(e.index)}`, e.name);
          break;
        case 'call.fragment':
          this.em.fragment(this.index(e.index), e.text);
          break;
        case 'call.complete':
          this.em.complete(this.index(e.index));
          break;
        case 'warning':
          this.warn(e.code, e.message.replace(/^pythonic: /, ''));
          break;
        default:
          this.em.event(e);
      }
    }
  }

  private index(sub: number): number {
    let i = this.indices.get(sub);
    if (i === undefined) {
      i = this.em.newCall();
      this.indices.set(sub, i);
    }
    return i;
  }

  protected override finishFamily(): void {
    if (this.mode === PEEK) {
      this.warn('parser.truncated_call', `stream ended right after ${OPEN}`);
    } else if (this.mode === PY) {
      // Text the Python reader flushes at the end is a cut list head (`[rea`), not prose.
      const evs = (this.sub as PythonicParser).end();
      this.relay(evs.filter((e) => e.type !== 'text.delta'));
      if (evs.some((e) => e.type === 'text.delta')) {
        this.warn('parser.truncated_call', `stream ended inside ${OPEN}… before a call was read`);
      }
      this.sub = null;
    } else super.finishFamily();
  }
}
