/**
 * A long text built from many small pieces (a token stream's deltas), for code that must keep the
 * whole text to the end of a stream (the turn's history in src/engine/controller.ts; the Responses
 * encoder keeps its item text the same way, JSON-escaped: EscapedRuns in src/encode/responsesSse.ts).
 *
 * A rope (`text += piece`) or an array of the pieces keeps one small heap object per delta alive for
 * the whole stream, and every young-generation GC copies the ones made since the last: on a
 * 100k-delta text flood that cost ~0.5 µs per delta per copy kept, more than the rest of a delta's
 * way through the gateway. Here every RUN pieces are joined into one flat string, usually before a
 * collection sees them, so the stream keeps one object per RUN deltas.
 */
export const RUN = 256;

export class TextRuns {
  private runs: string[] = [];
  private readonly pending: string[] = [];
  private chars = 0;

  /** Characters so far. */
  get length(): number {
    return this.chars;
  }

  add(piece: string): void {
    if (piece.length === 0) return;
    this.chars += piece.length;
    const p = this.pending;
    p.push(piece);
    if (p.length >= RUN) {
      this.runs.push(p.join(''));
      p.length = 0;
    }
  }

  /** The whole text as one flat string (kept: a second call without `add` between costs nothing). */
  toString(): string {
    if (this.pending.length > 0) {
      this.runs.push(this.pending.join(''));
      this.pending.length = 0;
    }
    if (this.runs.length > 1) this.runs = [this.runs.join('')];
    return this.runs[0] ?? '';
  }

  clear(): void {
    this.runs = [];
    this.pending.length = 0;
    this.chars = 0;
  }
}
