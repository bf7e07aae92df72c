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
 * - The section opener inside an unclosed `<think>` ends the reasoning (K2 Thinking).
 * - Repair: a call whose id names no valid tool (`functions.invalid.0`; with `tools`, a name not
 *   among them) is dropped with `parser.invalid_call`; with `tools`, sanitised ids
 *   (`functions_get_weather_1`, `functionsexec5`) are matched to their tool.
 * Look-alikes: the markers are special tokens, recognised anywhere (no code awareness). A bare
 * `<|tool_call_begin|>` outside a section is a call; stray closers and `<|im_end|>` are removed.
 */
import { THINK_TAGS } from './core/base';
import { CallSlot } from './core/emitter';
import { LeadingWs, MarkerSet } from './core/markers';
import { ToolSchemas } from './core/params';
import { HEAD, SECTION, SectionParser } from './core/section';
import type { ParserOptions } from './types';

const SECTION_OPEN = '<|tool_calls_section_begin|>';
/** The singular spelling some Kimi K2 outputs use (accepted by vLLM's and llama.cpp's Kimi parsers). */
const SECTION_OPEN_ALT = '<|tool_call_section_begin|>';
const SECTION_ALT_CLOSE = '<|tool_call_section_end|>';
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

/** A tool name: dot-separated segments, each starting with a letter or `_` (so `invalid.0` is not one). */
const TOOL_NAME_RE = /^[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z_][A-Za-z0-9_-]*)*$/;

/**
 * The tool name a Kimi call id stands for, or undefined when it names no valid tool (the call is
 * dropped). With `tools` given the name must be one of them; ids a client sanitised and the model
 * copied back (`functions_get_weather_1`, `functionsget_weather1`) are matched against the tools.
 */
export function kimiToolName(id: string, schemas: ToolSchemas): string | undefined {
  const name = kimiName(id);
  const known = schemas.toolCount > 0;
  if (TOOL_NAME_RE.test(name) && (!known || schemas.hasTool(name))) return name;
  if (!known) return undefined;
  const m = /^functions[._]?(.+?)(?:[:_]?\d+)?$/.exec(id.trim());
  if (m && schemas.hasTool(m[1])) return m[1];
  return undefined;
}

export class KimiParser extends SectionParser {
  private readonly leading = new LeadingWs();
  private readonly schemas: ToolSchemas;
  private skip = false;

  constructor(opts: ParserOptions = {}) {
    super(
      {
        family: 'kimi-k2',
        reasoning: THINK_TAGS,
        openers: [SECTION_OPEN, SECTION_OPEN_ALT, CALL_OPEN],
        strip: [SECTION_CLOSE, SECTION_ALT_CLOSE, CALL_CLOSE, ARG_OPEN, '<|im_end|>'],
        plainText: false,
        // The call section ends a reasoning block the model left open (K2 Thinking).
        reasoningEnders: [SECTION_OPEN, SECTION_OPEN_ALT, CALL_OPEN],
      },
      {
        sectionOpen: [SECTION_OPEN, SECTION_OPEN_ALT],
        sectionClose: [SECTION_CLOSE, SECTION_ALT_CLOSE],
        callOpen: CALL_OPEN,
      },
      opts,
    );
    this.schemas = new ToolSchemas(opts.tools);
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
        const name = kimiToolName(id, this.schemas);
        if (name === undefined) {
          // Never run a call whose id names no valid tool (e.g. `functions.invalid.0`).
          this.warn('parser.invalid_call', 'call id does not name a valid tool; call dropped');
          this.call = new CallSlot(this.em);
          if (r.marker === CALL_CLOSE) return this.closeCall();
          this.skip = true;
          this.mode = ARGS;
          return true;
        }
        const call = new CallSlot(this.em, id || undefined);
        this.call = call;
        call.identity(name);
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
