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
  sectionOpen: string;
  sectionClose: string;
  callOpen: string;
}

export abstract class SectionParser extends BaseParser {
  protected inSection = false;
  protected call: CallSlot | null = null;
  private readonly sectionOpen: string;
  private readonly callOpen: string;
  private readonly sectionSet: MarkerSet;

  constructor(spec: BaseSpec, markers: SectionMarkers, opts: ParserOptions = {}) {
    super(spec, opts);
    this.sectionOpen = markers.sectionOpen;
    this.callOpen = markers.callOpen;
    this.sectionSet = new MarkerSet([markers.callOpen, markers.sectionClose]);
  }

  protected onTextMarker(m: string): void {
    this.confirmMarkup();
    this.inSection = m === this.sectionOpen;
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
    this.inSection = false;
    this.afterMarkup();
    return true;
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
