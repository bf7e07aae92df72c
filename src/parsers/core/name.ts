/**
 * A call name read after an opener, character by character up to a stop character (GLM, Gemma,
 * Mistral). It is bounded (`cap` characters) and must match the family's pattern (after trimming
 * when `trim`), so text that cannot be a name any more is turned back into text as soon as it
 * arrives (see `BaseParser.readName`).
 */
export class CallName {
  private raw = '';

  constructor(
    private readonly cap: number,
    private readonly re: RegExp,
    private readonly isStop: (c: number) => boolean,
    private readonly trim: boolean,
  ) {}

  get empty(): boolean {
    return this.raw.length === 0;
  }

  /** The name read so far (trimmed when the family trims). */
  get value(): string {
    return this.trim ? this.raw.trim() : this.raw;
  }

  /** False when the text read so far cannot be (the start of) a name. */
  get plausible(): boolean {
    if (this.raw.length > this.cap) return false;
    const v = this.value;
    return v.length === 0 || this.re.test(v);
  }

  /** The raw text read so far, cleared (for turning the markup back into text). */
  take(): string {
    const r = this.raw;
    this.raw = '';
    return r;
  }

  /** Reads name characters from `buf` at `pos` up to a stop character; returns where it stopped. */
  read(buf: string, pos: number): number {
    let i = pos;
    while (i < buf.length && !this.isStop(buf.charCodeAt(i))) i++;
    this.raw += buf.slice(pos, i);
    return i;
  }
}
