/**
 * The shared engine of the family parsers.
 *
 * A parser keeps one buffer: the text not consumed yet, which between pushes is only a held-back
 * suffix (a possible marker prefix, at most `maxLen - 1` characters) or a bounded piece of markup
 * header (a call name, a parameter tag; each family caps it). Each push appends the new text and
 * runs the family's state machine until it needs more input, so a push costs O(new text).
 *
 * The base owns the two states every family has: TEXT (prose; looks for the reasoning opener, the
 * family's call openers, and stray markers to strip) and THINK (reasoning; looks only for the
 * reasoning closer). Families add their own states for markup and are called through
 * `onTextMarker` (a marker was found in TEXT), `stepFamily` (one step of a family state) and
 * `finishFamily` (end of stream inside a family state).
 *
 * Shared rules (docs/parsers.md):
 * - Markup inside Markdown code (fenced block or inline span) is text, for plain-text markers.
 * - Whitespace between a call's closing marker and the next call (or the end of the stream) is
 *   dropped; text after a call keeps its leading whitespace.
 * - Inside reasoning only the reasoning closer is recognised.
 * - A stray reasoning closer or a family's stray closing marker in text is removed.
 */
import type { StreamEvent } from '../../wire/events';
import type { FamilyParser, ParserOptions } from '../types';
import { CodeTracker } from './code';
import { Emitter } from './emitter';
import { isWs, MarkerSet } from './markers';
import type { CallName } from './name';

export const TEXT = 0;
export const THINK = 1;

export interface ReasoningMarkers {
  open: string;
  close: string;
}

/** `<think>…</think>`, the reasoning block of most open-model families. */
export const THINK_TAGS: Readonly<ReasoningMarkers> = Object.freeze({ open: '<think>', close: '</think>' });

export interface BaseSpec {
  family: string;
  /** The family's reasoning block; omit for families without one or with their own (harmony). */
  reasoning?: Readonly<ReasoningMarkers>;
  /** Markers in TEXT handed to `onTextMarker` (call openers). */
  openers: readonly string[];
  /** Markers removed from text when they appear outside their context (stray closers, EOS tokens). */
  strip?: readonly string[];
  /** Whether the markers are plain text (code awareness applies) rather than special tokens. */
  plainText: boolean;
  /**
   * Call openers (special tokens) that also end an unclosed reasoning block: found inside
   * reasoning, the reasoning ends there and the marker is handled as in text (Kimi K2, DeepSeek
   * V3.1 write the call section without closing `<think>`).
   */
  reasoningEnders?: readonly string[];
}

/** After a call closes, whitespace is held (to be dropped before another call) up to this many characters. */
const WS_HOLD_CAP = 256;

export abstract class BaseParser implements FamilyParser {
  readonly family: string;
  protected buf = '';
  protected pos = 0;
  protected eof = false;
  protected mode = TEXT;
  protected readonly em = new Emitter();
  protected readonly textSet: MarkerSet;
  protected readonly thinkSet: MarkerSet | null;
  protected readonly reasoning: Readonly<ReasoningMarkers> | undefined;
  private readonly stripSet: Set<string>;
  private readonly code: CodeTracker | null;
  private ended = false;
  private afterCall = false;
  private wsHold = '';
  protected sawReasoning = false;
  /** Markup read after an opener that may still turn out to be text (see `literal`). */
  protected lit = '';

  constructor(spec: BaseSpec, opts: ParserOptions = {}) {
    this.family = spec.family;
    this.reasoning = spec.reasoning;
    const strip = [...(spec.strip ?? [])];
    if (spec.reasoning) strip.push(spec.reasoning.close);
    this.stripSet = new Set(strip);
    const textMarkers = [...spec.openers, ...strip];
    if (spec.reasoning) textMarkers.push(spec.reasoning.open);
    this.textSet = new MarkerSet(textMarkers);
    this.thinkSet = spec.reasoning
      ? new MarkerSet([spec.reasoning.close, ...(spec.reasoningEnders ?? [])])
      : null;
    this.code = spec.plainText && opts.codeAware !== false ? new CodeTracker() : null;
    if (opts.startInReasoning && spec.reasoning) {
      this.mode = THINK;
      this.sawReasoning = true;
    }
  }

  get reasoningInText(): boolean {
    if (this.sawReasoning) return true;
    const r = this.reasoning;
    if (!r || this.mode !== TEXT || this.pos >= this.buf.length) return false;
    return r.open.startsWith(this.buf.slice(this.pos));
  }

  push(text: string): StreamEvent[] {
    if (this.ended) {
      this.em.warning('parser.push_after_end', `${this.family}: text pushed after end() ignored`);
      return this.em.take();
    }
    if (text.length === 0) return [];
    this.buf = this.pos === 0 ? this.buf + text : this.buf.slice(this.pos) + text;
    this.pos = 0;
    this.run();
    return this.em.take();
  }

  end(): StreamEvent[] {
    if (this.ended) return [];
    this.ended = true;
    this.eof = true;
    this.run();
    if (this.mode !== TEXT && this.mode !== THINK) this.finishFamily();
    this.wsHold = '';
    this.buf = '';
    this.pos = 0;
    return this.em.take();
  }

  private run(): void {
    for (;;) {
      const m = this.mode;
      const more = m === TEXT ? this.stepText() : m === THINK ? this.stepThink() : this.stepFamily();
      if (!more) break;
    }
    if (this.pos > 0 && this.pos >= this.buf.length) {
      this.buf = '';
      this.pos = 0;
    }
  }

  // ---- TEXT / THINK ------------------------------------------------------------------------

  private stepText(): boolean {
    const m = this.scanText(this.textSet);
    if (m === null) return false;
    const r = this.reasoning;
    if (r && m === r.open) {
      this.sawReasoning = true;
      this.wsHold = '';
      this.afterCall = false;
      this.mode = this.onReasoningOpen();
      return true;
    }
    if (this.stripSet.has(m)) {
      if (r && m === r.close) this.sawReasoning = true;
      return true;
    }
    this.onTextMarker(m);
    return true;
  }

  private stepThink(): boolean {
    const set = this.thinkSet as MarkerSet;
    const m = this.streamUntil(set, (s) => this.em.thinking(s));
    if (m === null) return false;
    this.mode = TEXT;
    // A call opener that ends the reasoning (`reasoningEnders`) is handled as in text.
    if (m !== (this.reasoning as ReasoningMarkers).close) this.onTextMarker(m);
    return true;
  }

  /**
   * Text mode scan: emits text up to the earliest marker outside code; consumes the marker and
   * returns it, or returns null when it needs more input (a possible marker prefix is held).
   */
  protected scanText(set: MarkerSet): string | null {
    for (;;) {
      const hit = set.find(this.buf, this.pos);
      if (hit === null) {
        const hold = this.eof ? this.buf.length : set.holdStart(this.buf, this.pos);
        if (hold > this.pos) this.emitText(this.buf.slice(this.pos, hold));
        this.pos = hold;
        return null;
      }
      if (hit.at > this.pos) this.emitText(this.buf.slice(this.pos, hit.at));
      this.pos = hit.at + hit.marker.length;
      if (this.code !== null && this.code.inCode()) {
        this.emitText(hit.marker);
        continue;
      }
      return hit.marker;
    }
  }

  /**
   * Stream content to `sink` up to the earliest marker of `set` (consumed and returned), holding
   * back a possible marker prefix; null when more input is needed. At the end of the stream a held
   * prefix is flushed to the sink, except in a call body (`body`), where it is most likely a
   * truncated closing marker and stays out of the arguments.
   */
  protected streamUntil(set: MarkerSet, sink: (s: string) => void, body = false): string | null {
    const hit = set.find(this.buf, this.pos);
    if (hit === null) {
      const hold = this.eof && !body ? this.buf.length : set.holdStart(this.buf, this.pos);
      if (hold > this.pos) sink(this.buf.slice(this.pos, hold));
      this.pos = hold;
      return null;
    }
    if (hit.at > this.pos) sink(this.buf.slice(this.pos, hit.at));
    this.pos = hit.at + hit.marker.length;
    return hit.marker;
  }

  /**
   * Bounded read up to a marker: returns the content before it (both consumed), null when more
   * input is needed (nothing consumed; also at the end of the stream, where the family's finish
   * rule applies to the truncated markup), or undefined when `cap` characters passed without a
   * marker (nothing consumed).
   */
  protected readUntil(set: MarkerSet, cap: number): { content: string; marker: string } | null | undefined {
    const hit = set.find(this.buf, this.pos);
    if (hit !== null && hit.at - this.pos <= cap) {
      const content = this.buf.slice(this.pos, hit.at);
      this.pos = hit.at + hit.marker.length;
      return { content, marker: hit.marker };
    }
    if (hit !== null || this.buf.length - this.pos > cap) return undefined;
    return null;
  }

  /** Skip whitespace; returns the skipped text. `this.pos < this.buf.length` tells if a char follows. */
  protected skipWs(): string {
    const from = this.pos;
    while (this.pos < this.buf.length && isWs(this.buf.charCodeAt(this.pos))) this.pos++;
    return this.buf.slice(from, this.pos);
  }

  protected get atEnd(): boolean {
    return this.pos >= this.buf.length;
  }

  /**
   * Whether buf at pos starts with `m`: 'yes' (consumed), 'maybe' (the buffer ends inside a prefix
   * of `m`: wait; at the end of the stream the family's finish rule applies), or 'no'.
   */
  protected take(m: string): 'yes' | 'maybe' | 'no' {
    const r = MarkerSet.startsAt(this.buf, this.pos, m);
    if (r === 'yes') this.pos += m.length;
    return r;
  }

  // ---- emission helpers ----------------------------------------------------------------------

  /** Prose text (also literal markup that turned out not to be markup). */
  protected emitText(s: string): void {
    if (s.length === 0) return;
    if (this.afterCall) {
      let i = 0;
      while (i < s.length && isWs(s.charCodeAt(i))) i++;
      if (i === s.length && this.wsHold.length + s.length <= WS_HOLD_CAP) {
        this.wsHold += s;
        return;
      }
      s = this.wsHold + s;
      this.wsHold = '';
      this.afterCall = false;
    }
    if (this.code !== null) this.code.feed(s);
    this.em.text(s);
  }

  /** The markup held in `lit` (plus `extra`) is not markup after all: it is text, TEXT resumes. */
  protected literal(extra = ''): boolean {
    this.emitText(this.lit + extra);
    this.lit = '';
    this.mode = TEXT;
    return true;
  }

  /**
   * Whitespace after an opener, kept in `lit`. Returns the step result when the step ends here:
   * true when `lit` grew past `maxLit` characters (the opener is text), false when more input is
   * needed; undefined when a non-whitespace character follows.
   */
  protected openerWs(maxLit: number): boolean | undefined {
    this.lit += this.skipWs();
    if (this.lit.length > maxLit) return this.literal();
    if (this.atEnd) return false;
    return undefined;
  }

  /**
   * One step of reading a call name: the name when a stop character follows it; otherwise the
   * step result (false: more input needed; true: not a name, `lit` and the name text are text).
   */
  protected readName(n: CallName): string | boolean {
    this.pos = n.read(this.buf, this.pos);
    // Decided as soon as the text cannot be a name any more (prose after an opener).
    if (!n.plausible) return this.literal(n.take());
    if (this.atEnd) return false;
    const name = n.value;
    if (name.length === 0) return this.literal(n.take());
    return name;
  }

  /** The markup just read is a real call/section: whitespace held after a previous call is dropped. */
  protected confirmMarkup(): void {
    this.wsHold = '';
    this.afterCall = false;
  }

  /** A call (or a section of calls) closed: text mode resumes at a fresh line. */
  protected afterMarkup(): void {
    this.afterCall = true;
    this.wsHold = '';
    this.code?.blockBoundary();
    this.mode = TEXT;
  }

  protected warn(code: string, message: string): void {
    this.em.warning(code, `${this.family}: ${message}`);
  }

  // ---- family hooks --------------------------------------------------------------------------

  /** The reasoning opener was read; returns the next mode (THINK unless the family reads a label). */
  protected onReasoningOpen(): number {
    return THINK;
  }

  /** A call opener was found in TEXT (consumed); set `this.mode`. */
  protected abstract onTextMarker(marker: string): void;

  /** One step in a family mode; false when more input is needed. */
  protected stepFamily(): boolean {
    return false;
  }

  /** End of stream in a family mode (after the last step). */
  protected finishFamily(): void {}
}

export { isWs };
