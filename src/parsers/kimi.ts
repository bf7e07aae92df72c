/**
 * Kimi K2 (Moonshot):
 *
 *   <think>reasoning</think>text<|tool_calls_section_begin|>
 *   <|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Tokyo"}<|tool_call_end|>
 *   <|tool_calls_section_end|>
 *
 * - The call id is the model's own `functions.NAME:IDX` (kept as the call id, as vLLM does);
 *   the name is the id without the `functions.` prefix and the `:IDX` suffix. Identity at
 *   `<|tool_call_argument_begin|>`, the argument JSON streamed as fragments, `call.complete` at
 *   `<|tool_call_end|>`.
 * Look-alikes: the markers are special tokens, recognised anywhere (no code awareness). A bare
 * `<|tool_call_begin|>` outside a section is a call; stray closers and `<|im_end|>` are removed.
 */
import { THINK_TAGS } from './core/base';
import { CallSlot } from './core/emitter';
import { LeadingWs, MarkerSet } from './core/markers';
import { HEAD, SECTION, SectionParser } from './core/section';
import type { ParserOptions } from './types';

const SECTION_OPEN = '<|tool_calls_section_begin|>';
const SECTION_CLOSE = '<|tool_calls_section_end|>';
const CALL_OPEN = '<|tool_call_begin|>';
const ARG_OPEN = '<|tool_call_argument_begin|>';
const CALL_CLOSE = '<|tool_call_end|>';

const ARGS = 12;
const HEAD_CAP = 512;

const headSet = new MarkerSet([ARG_OPEN, CALL_CLOSE]);
const argsSet = new MarkerSet([CALL_CLOSE]);

/** `functions.get_weather:0` → `get_weather`. */
export function kimiName(id: string): string {
  let s = id.trim();
  const colon = s.lastIndexOf(':');
  if (colon > 0 && /^\d+$/.test(s.slice(colon + 1))) s = s.slice(0, colon);
  return s.startsWith('functions.') ? s.slice('functions.'.length) : s;
}

export class KimiParser extends SectionParser {
  private readonly leading = new LeadingWs();
  private skip = false;

  constructor(opts: ParserOptions = {}) {
    super(
      {
        family: 'kimi-k2',
        reasoning: THINK_TAGS,
        openers: [SECTION_OPEN, CALL_OPEN],
        strip: [SECTION_CLOSE, CALL_CLOSE, ARG_OPEN, '<|im_end|>'],
        plainText: false,
      },
      { sectionOpen: SECTION_OPEN, sectionClose: SECTION_CLOSE, callOpen: CALL_OPEN },
      opts,
    );
  }

  protected override stepFamily(): boolean {
    switch (this.mode) {
      case SECTION:
        return this.stepSection();
      case HEAD: {
        const r = this.readUntil(headSet, HEAD_CAP);
        if (r === null) return false;
        if (r === undefined) {
          this.warn(
            'parser.malformed_call',
            'call id too long or missing <|tool_call_argument_begin|>; skipped',
          );
          this.call = new CallSlot(this.em);
          this.skip = true;
          this.mode = ARGS;
          return true;
        }
        const id = r.content.trim();
        const call = new CallSlot(this.em, id || undefined);
        this.call = call;
        const name = kimiName(id);
        if (name) call.identity(name);
        if (r.marker === CALL_CLOSE) return this.closeCall();
        this.skip = false;
        this.leading.reset();
        this.mode = ARGS;
        return true;
      }
      case ARGS: {
        const call = this.call as CallSlot;
        const m = this.streamUntil(
          argsSet,
          (s) => {
            if (!this.skip) call.fragment(this.leading.strip(s));
          },
          true,
        );
        if (m === null) return false;
        return this.closeCall();
      }
    }
    return false;
  }
}
