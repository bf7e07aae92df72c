/**
 * Salesforce xLAM (xLAM-2 "fc-r" and xLAM-1 function-calling models): the answer is a JSON array
 * of calls, written as the whole output (the model card's format), optionally in a Markdown
 * ```json fence, or after a `[TOOL_CALLS]` / inside `<tool_call>` tags:
 *
 *   [{"name": "get_weather", "arguments": {"city": "Tokyo"}}, {"name": "f", "arguments": {}}]
 *   ```json
 *   [{"name": "get_weather", "arguments": {"city": "Tokyo"}}]
 *   ```
 *
 * - Each element is a call; `call.complete` at the `}` closing it (there is no closing marker).
 *   A fence's closing ``` is dropped; `<tool_call>…</tool_call>` completes a single object at its
 *   closer.
 * Look-alikes: an array (fenced or not) is a call list only at the very start of the output and
 * only when its first element's first key is "name" (`[{"name"`, whitespace allowed), checked
 * without consuming anything, so `[1, 2]` or `[{"id": 3}]` stays text; a JSON array later in
 * prose is text; `[TOOL_CALLS]` not followed by JSON is removed.
 */
import { TEXT } from './core/base';
import { isWs } from './core/markers';
import { type BlockKind, JsonBlockParser } from './jsonBlock';
import type { ParserOptions } from './types';

/** Mode before the first character of the output is read (the engine's modes are 10–17). */
const START = 40;
/** Longest start-of-output prefix held while deciding (whitespace, a fence line, `[{"name"`). */
const LEAD_CAP = 256;

const BARE: BlockKind = { open: '', close: null, body: 'array' };
const FENCED: BlockKind = { open: '```', close: '```', body: 'array' };

type Lead = { at: number; fenced: boolean } | 'maybe' | 'no';

/** Matches `word` at `i`: the index after it, -1 on a mismatch, -2 when `s` ends inside it. */
function word(s: string, i: number, w: string): number {
  const n = Math.min(w.length, s.length - i);
  for (let k = 0; k < n; k++) if (s.charCodeAt(i + k) !== w.charCodeAt(k)) return -1;
  return n < w.length ? -2 : i + w.length;
}

function ws(s: string, i: number): number {
  while (i < s.length && isWs(s.charCodeAt(i))) i++;
  return i;
}

/** Whether `s` from `i` starts a call array: ws* (```json? [ \t]* \n ws*)? [ ws* { ws* "name". */
export function leadArray(s: string, i: number): Lead {
  i = ws(s, i);
  if (i >= s.length) return 'maybe';
  let fenced = false;
  if (s.charCodeAt(i) === 96 /* ` */) {
    const f = word(s, i, '```');
    if (f < 0) return f === -2 ? 'maybe' : 'no';
    i = f;
    const j = word(s, i, 'json');
    if (j === -2) return 'maybe';
    if (j > 0) i = j;
    while (i < s.length && (s.charCodeAt(i) === 32 || s.charCodeAt(i) === 9)) i++;
    if (i >= s.length) return 'maybe';
    if (s.charCodeAt(i) !== 10) return 'no';
    i = ws(s, i);
    if (i >= s.length) return 'maybe';
    fenced = true;
  }
  const at = i;
  if (s.charCodeAt(i) !== 91 /* [ */) return 'no';
  i = ws(s, i + 1);
  if (i >= s.length) return 'maybe';
  if (s.charCodeAt(i) !== 123 /* { */) return 'no';
  i = ws(s, i + 1);
  if (i >= s.length) return 'maybe';
  const k = word(s, i, '"name"');
  if (k === -2) return 'maybe';
  return k < 0 ? 'no' : { at, fenced };
}

export class XlamParser extends JsonBlockParser {
  constructor(opts: ParserOptions = {}) {
    super(
      {
        family: 'xlam',
        blocks: [
          { open: '[TOOL_CALLS]', close: null, body: 'either', token: true },
          { open: '<tool_call>', close: '</tool_call>', body: 'either' },
        ],
        strip: ['<|eot_id|>', '<|im_end|>'],
        plainText: false,
      },
      opts,
    );
    this.mode = START;
  }

  protected override stepFamily(): boolean {
    if (this.mode !== START) return super.stepFamily();
    const r = leadArray(this.buf, this.pos);
    if (r === 'maybe' && !this.eof && this.buf.length - this.pos <= LEAD_CAP) return false;
    if (typeof r === 'string') {
      // Not a call list: ordinary output, read as text from here.
      this.mode = TEXT;
      return true;
    }
    this.confirmMarkup();
    this.pos = r.at + 1;
    this.beginArray(r.fenced ? FENCED : BARE);
    return true;
  }

  protected override finishFamily(): void {
    if (this.mode === START) return;
    super.finishFamily();
  }
}
