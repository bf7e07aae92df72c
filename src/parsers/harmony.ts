/**
 * GPT-OSS harmony format (OpenAI gpt-oss-20b/120b). The output is a sequence of messages:
 *
 *   <|channel|>analysis<|message|>reasoning<|end|>
 *   <|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Tokyo"}<|call|>
 *   <|start|>assistant<|channel|>final<|message|>answer<|return|>
 *
 * (the first `<|start|>assistant` is in the prompt). The model may continue that role header with
 * its recipient, so the output can start ` to=functions.NAME<|channel|>commentary json<|message|>`:
 * at the very start, `to=` after optional whitespace is read as a header. A header runs to `<|message|>`; the body
 * runs to `<|end|>`, `<|call|>` or `<|return|>`.
 * - `analysis` → thinking; `final` and `commentary` without a recipient (preambles) → text;
 *   a message with a recipient `to=functions.NAME` (in the role or channel part of the header) →
 *   a call named NAME (a recipient without `functions.`, e.g. `browser.search`, is the name as
 *   is): identity at `<|message|>`, the body streamed as argument fragments, `call.complete` at
 *   `<|call|>` (or the body's other end marker).
 * Look-alikes: the markers are special tokens, recognised anywhere. Text that does not start
 * with `<|` where a header is expected (a server that dropped the special tokens) is final text;
 * a header longer than 1024 characters without `<|message|>` is text. A `<|start|>` or
 * `<|channel|>` inside a body ends that message (warning) and starts the next.
 */
import { BaseParser } from './core/base';
import { CallSlot } from './core/emitter';
import { isWs, LeadingWs, MarkerSet } from './core/markers';
import type { ParserOptions } from './types';

const MESSAGE = '<|message|>';
const ENDS = ['<|end|>', '<|call|>', '<|return|>'];
const RESTARTS = ['<|start|>', '<|channel|>'];

const HEADER = 10;
const BODY_TEXT = 11;
const BODY_THINK = 12;
const BODY_CALL = 13;
/** The start of the output, where the role header's recipient may come first (` to=functions.N<|channel|>…`). */
const START = 14;
const HEADER_CAP = 1024;
const RECIPIENT = 'to=';

const headerSet = new MarkerSet([MESSAGE]);
const bodySet = new MarkerSet([...ENDS, ...RESTARTS]);

export interface HarmonyHeader {
  channel?: string;
  recipient?: string;
}

export function parseHarmonyHeader(h: string): HarmonyHeader {
  const out: HarmonyHeader = {};
  const ch = /<\|channel\|>\s*([A-Za-z0-9_-]+)/.exec(h);
  if (ch) out.channel = ch[1];
  const to = /\bto=([^\s<]+)/.exec(h);
  if (to) out.recipient = to[1];
  return out;
}

export class HarmonyParser extends BaseParser {
  private call: CallSlot | null = null;
  private readonly leading = new LeadingWs();

  constructor(opts: ParserOptions = {}) {
    super({ family: 'gpt-oss', openers: [], plainText: false }, opts);
    this.mode = START;
  }

  override get reasoningInText(): boolean {
    return this.sawReasoning;
  }

  protected onTextMarker(_m: string): void {}

  protected override stepFamily(): boolean {
    switch (this.mode) {
      case START: {
        // The prompt may end with `<|start|>assistant`: the model then writes the rest of the role
        // header first, e.g. ` to=functions.get_weather<|channel|>commentary json<|message|>`.
        let j = this.pos;
        while (j < this.buf.length && isWs(this.buf.charCodeAt(j))) j++;
        if (j >= this.buf.length) return false;
        const t = MarkerSet.startsAt(this.buf, j, RECIPIENT);
        if (t === 'maybe') return false;
        if (t === 'no') {
          this.mode = HEADER;
          return true;
        }
        return this.readHeader();
      }
      case HEADER: {
        if (this.atEnd) return false;
        const s = this.take('<|');
        if (s === 'maybe') return false;
        if (s === 'no') {
          this.mode = BODY_TEXT;
          return true;
        }
        this.pos -= 2;
        return this.readHeader();
      }
      case BODY_TEXT:
      case BODY_THINK:
      case BODY_CALL: {
        const mode = this.mode;
        const sink =
          mode === BODY_TEXT ? this.textSink : mode === BODY_THINK ? this.thinkSink : this.callSink;
        const m = this.streamUntil(bodySet, sink, mode === BODY_CALL);
        if (m === null) return false;
        if (RESTARTS.includes(m)) {
          this.pos -= m.length;
          if (mode === BODY_CALL)
            this.warn(
              'parser.unclosed_call',
              'a new harmony message began before <|call|>; call completed there',
            );
        }
        if (mode === BODY_CALL) {
          this.call?.complete();
          this.call = null;
        }
        this.mode = HEADER;
        return true;
      }
    }
    return false;
  }

  /** A message header from `pos` up to `<|message|>` (bounded); its channel and recipient pick the body mode. */
  private readHeader(): boolean {
    const r = this.readUntil(headerSet, HEADER_CAP);
    if (r === null) return false;
    if (r === undefined) {
      this.warn('parser.malformed_header', 'harmony header without <|message|>; read as text');
      this.mode = BODY_TEXT;
      return true;
    }
    const h = parseHarmonyHeader(r.content);
    if (h.recipient !== undefined) {
      const name = h.recipient.startsWith('functions.')
        ? h.recipient.slice('functions.'.length)
        : h.recipient;
      const call = new CallSlot(this.em);
      this.call = call;
      if (name) call.identity(name);
      this.leading.reset();
      this.mode = BODY_CALL;
    } else if (h.channel === 'analysis') {
      this.sawReasoning = true;
      this.mode = BODY_THINK;
    } else this.mode = BODY_TEXT;
    return true;
  }

  private readonly textSink = (s: string): void => this.emitText(s);
  private readonly thinkSink = (s: string): void => this.em.thinking(s);
  private readonly callSink = (s: string): void => (this.call as CallSlot).fragment(this.leading.strip(s));

  protected override finishFamily(): void {
    if (this.mode === START && this.pos < this.buf.length) {
      // Cut inside a leading recipient header: markup when it reached a special token, else text.
      const rest = this.buf.slice(this.pos);
      if (rest.includes('<|'))
        this.warn('parser.truncated_header', 'stream ended inside a harmony message header');
      else this.emitText(rest);
    } else if (this.mode === HEADER && this.pos < this.buf.length) {
      this.warn('parser.truncated_header', 'stream ended inside a harmony message header');
    } else if (this.mode === BODY_CALL) {
      this.warn(
        'parser.unclosed_call',
        'stream ended inside a call message (no <|call|>); left without completion',
      );
    }
  }
}
