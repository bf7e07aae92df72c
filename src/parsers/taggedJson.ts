/**
 * JSON tool calls behind a tag (issue 12, batch A): the shared reader of LongCat, Hunyuan, Granite
 * and xLAM, whose calls are `{"name", "arguments"}` objects, or JSON arrays of them, after an
 * opening marker:
 *
 *   <longcat_tool_call>{"name": "f", "arguments": {…}}</longcat_tool_call>      one object
 *   <tool_calls>[{"name": "f", "arguments": {…}}, {…}]</tool_calls>            an array
 *   <|tool_call|>[{…}, {…}]                                                     nothing closes it
 *
 * A family declares its sections (opener, closer or none, object / array / either). Completion
 * evidence:
 * - one object with a closer: the closer (as Hermes), so the whole call is final there;
 * - an array, or an object without a closer: the `}` closing each object (as Nemotron), so the
 *   first call of a batch is released before the next one is written.
 * The closer is recognised outside JSON strings only. A body that is not JSON is skipped to the
 * closer (warning `parser.malformed_call`); an object that closed but is not followed by the
 * closer completes there (warning `parser.unclosed_call`) and the text resumes.
 *
 * Look-alikes: an opener not followed (after at most 64 whitespace characters) by the body it
 * allows is text, or for special-token openers (`token: true`) removed; stray closers are removed;
 * markup in Markdown code is text when the family's markers are plain text.
 *
 * This generalises hermes.ts (one tag pair, object body) to configurable tags and array bodies;
 * hermes.ts itself is unchanged.
 */
import { type BaseSpec, TEXT } from './core/base';
import type { CallSlot } from './core/emitter';
import { H_DONE, H_FAIL, H_STOP, type JsonEnvelope } from './core/json';
import { ARRAY_SKIP, JsonCallsParser } from './core/jsonCalls';
import { MarkerSet } from './core/markers';
import type { ParserOptions } from './types';

export interface JsonSection {
  open: string;
  /** The closing marker; null when nothing closes the section (the JSON itself ends it). */
  close: string | null;
  /** What may follow the opener: one call object, an array of call objects, or either. */
  body: 'object' | 'array' | 'either';
  /** The opener is a special token: when no call follows it, it is removed instead of kept as text. */
  token?: boolean;
}

export interface TaggedJsonSpec extends Omit<BaseSpec, 'openers'> {
  sections: readonly JsonSection[];
}

/** Family modes of this reader (JsonCallsParser uses 20–23; xlam.ts adds 40). */
const PRE = 30;
const OBJECT = 31;
const POST = 32;
const SKIP = 33;

const WS_CAP = 64;

export class TaggedJsonParser extends JsonCallsParser {
  private readonly sections = new Map<string, JsonSection>();
  /** The section being read. */
  protected cur: JsonSection | null = null;
  private obj: JsonEnvelope | null = null;
  private objStop = -1;
  private readonly skipSets = new Map<string, MarkerSet>();

  constructor(spec: TaggedJsonSpec, opts: ParserOptions = {}) {
    const closers = spec.sections.flatMap((s) => (s.close === null ? [] : [s.close]));
    super(
      {
        ...spec,
        openers: spec.sections.map((s) => s.open),
        strip: [...(spec.strip ?? []), ...closers],
      },
      opts,
    );
    for (const s of spec.sections) this.sections.set(s.open, s);
  }

  /** The closer of the section being read (the array reader of JsonCallsParser asks for it). */
  protected get sectionClose(): string | null {
    return this.cur?.close ?? null;
  }

  protected onTextMarker(m: string): void {
    this.cur = this.sections.get(m) ?? null;
    this.lit = m;
    this.mode = PRE;
  }

  protected override stepFamily(): boolean {
    switch (this.mode) {
      case PRE:
        return this.stepPre();
      case OBJECT:
        return this.stepObject();
      case POST:
        return this.stepPost();
      // A malformed array is skipped here too: the array reader keeps one closer per parser, this
      // family may have several (xLAM: ``` and </tool_call>).
      case SKIP:
      case ARRAY_SKIP: {
        const close = (this.cur as JsonSection).close as string;
        let set = this.skipSets.get(close);
        if (set === undefined) {
          set = new MarkerSet([close]);
          this.skipSets.set(close, set);
        }
        const m = this.streamUntil(set, () => {});
        if (m === null) return false;
        return this.endObject();
      }
    }
    return this.stepArray() ?? false;
  }

  private stepPre(): boolean {
    const s = this.cur as JsonSection;
    const ws = this.openerWs(s.open.length + WS_CAP);
    if (ws !== undefined) return ws;
    const c = this.buf.charCodeAt(this.pos);
    if (c === 123 /* { */ && s.body !== 'array') {
      this.confirmMarkup();
      this.lit = '';
      this.obj = this.newEnvelope();
      this.mode = OBJECT;
      return true;
    }
    if (c === 91 /* [ */ && s.body !== 'object') {
      this.lit = '';
      this.pos++;
      this.beginArray();
      return true;
    }
    if (s.token) {
      // A special token with no call after it: removed, the text resumes.
      this.lit = this.lit.slice(s.open.length);
      return this.literal();
    }
    return this.literal();
  }

  private stepObject(): boolean {
    const s = this.cur as JsonSection;
    const env = this.obj as JsonEnvelope;
    const stop = s.close === null ? -1 : s.close.charCodeAt(0);
    this.pos = env.feed(this.buf, this.pos, this.buf.length, stop, this.objStop);
    this.objStop = -1;
    if (env.halt === H_DONE) {
      if (s.close === null) return this.endObject();
      this.mode = POST;
      return true;
    }
    if (env.halt === H_FAIL) {
      if (s.close === null) {
        this.warn(
          'parser.malformed_call',
          'call is not a {"name", "arguments"} JSON object; the text resumes',
        );
        this.call = null;
        this.obj = null;
        this.afterMarkup();
        return true;
      }
      this.warn(
        'parser.malformed_call',
        `call body is not a {"name", "arguments"} JSON object; skipped to ${s.close}`,
      );
      this.mode = SKIP;
      return true;
    }
    if (env.halt === H_STOP) {
      const t = this.take(s.close as string);
      if (t === 'yes') return this.endObject();
      if (t === 'maybe') return false;
      this.objStop = this.pos;
      return true;
    }
    return false;
  }

  private stepPost(): boolean {
    const close = (this.cur as JsonSection).close as string;
    const from = this.pos;
    this.skipWs();
    if (this.atEnd) {
      this.pos = from;
      return false;
    }
    const t = this.take(close);
    if (t === 'maybe') return false;
    if (t === 'no') {
      // Text after the call keeps its leading whitespace.
      this.pos = from;
      this.warn('parser.unclosed_call', `call JSON closed without ${close}; call completed there`);
    }
    return this.endObject();
  }

  private endObject(): boolean {
    (this.call as CallSlot | null)?.complete();
    this.call = null;
    this.obj = null;
    this.afterMarkup();
    return true;
  }

  protected override finishFamily(): void {
    if (this.mode === PRE) {
      this.warn('parser.truncated_call', `stream ended right after ${(this.cur as JsonSection).open}`);
    } else if (this.mode === OBJECT || this.mode === SKIP || this.mode === POST) {
      this.warn('parser.unclosed_call', 'stream ended inside a call; left without completion');
    } else this.finishArray();
    this.mode = TEXT;
  }
}
