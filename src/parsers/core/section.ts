/**
 * Families whose calls are special-token blocks, optionally grouped in a section (DeepSeek V3 /
 * V3.1, Kimi K2): `SECTION_OPEN (CALL_OPEN … CALL_CLOSE)* SECTION_CLOSE`, where a bare
 * `CALL_OPEN` outside a section is a call too. The base reads the section between calls; the
 * family reads each call from HEAD on and calls `closeCall` at its end.
 */
import type { ParserOptions } from '../types';
import { BaseParser, type BaseSpec } from './base';
import type { CallSlot } from './emitter';
import { MarkerSet } from './markers';

export const SECTION = 10;
/** First mode of a call (after CALL_OPEN); families number their further modes from 12. */
export const HEAD = 11;

export interface SectionMarkers {
  /** The section opener, or several spellings of it (all handed to the base as openers). */
  sectionOpen: string | readonly string[];
  /** The section closer, or several spellings of it. */
  sectionClose: string | readonly string[];
  callOpen: string;
  /**
   * Text that starts a call inside a section without the call opener (DeepSeek R1 distills write
   * `<｜tool▁calls｜>function<｜tool▁sep｜>name…`; llama.cpp's R1 handler makes the call opener
   * optional the same way). Reaching one calls `onBareCall`.
   */
  bareCallHeads?: readonly string[];
}

export abstract class SectionParser extends BaseParser {
  protected inSection = false;
  protected call: CallSlot | null = null;
  private readonly sectionOpens: ReadonlySet<string>;
  private readonly callOpen: string;
  private readonly sectionSet: MarkerSet;
  private readonly bareCallHeads: ReadonlySet<string>;

  constructor(spec: BaseSpec, markers: SectionMarkers, opts: ParserOptions = {}) {
    super(spec, opts);
    const so = markers.sectionOpen;
    this.sectionOpens = new Set(typeof so === 'string' ? [so] : so);
    this.callOpen = markers.callOpen;
    const sc = markers.sectionClose;
    const bare = markers.bareCallHeads ?? [];
    this.bareCallHeads = new Set(bare);
    this.sectionSet = new MarkerSet([markers.callOpen, ...(typeof sc === 'string' ? [sc] : sc), ...bare]);
  }

  protected onTextMarker(m: string): void {
    this.confirmMarkup();
    this.inSection = this.sectionOpens.has(m);
    this.mode = this.inSection ? SECTION : HEAD;
  }

  /** Between calls in a section: the next call or the section's end. */
  protected stepSection(): boolean {
    const m = this.streamUntil(this.sectionSet, () => {});
    if (m === null) return false;
    if (m === this.callOpen) {
      this.mode = HEAD;
      return true;
    }
    if (this.bareCallHeads.has(m)) {
      this.onBareCall(m);
      return true;
    }
    this.inSection = false;
    this.afterMarkup();
    return true;
  }

  /** A call started by one of `bareCallHeads` (consumed); sets the family's next mode. */
  protected onBareCall(_head: string): void {
    this.mode = HEAD;
  }

  /** The call ends (`call.complete`); the section resumes, or the text after a bare call. */
  protected closeCall(): boolean {
    this.call?.complete();
    this.call = null;
    if (this.inSection) this.mode = SECTION;
    else this.afterMarkup();
    return true;
  }

  protected override finishFamily(): void {
    if (this.mode === SECTION) this.warn('parser.unclosed_section', 'stream ended inside the call section');
    else this.warn('parser.unclosed_call', 'stream ended inside a call; left without completion');
  }
}
