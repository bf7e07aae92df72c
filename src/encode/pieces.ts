/**
 * A huge tool call's frames, written a piece at a time (issue 18).
 *
 * An encoder whose consumer drains it piecewise (`enablePieces()`, the gateway's SSE sink) puts
 * the frames of a call whose arguments exceed `ARG_PIECE_CHARS` — and every frame after them, so
 * the order stays — into a `PieceQueue` instead of returning them from `push`. The consumer then
 * calls `more()` (≤ about `ARG_PIECE_CHARS` of SSE text each) once per turn of the event loop,
 * respecting the client's backpressure, until `pending` is false. A frame's JSON is written exactly
 * as `JSON.stringify` writes it; a long string inside it is escaped a slice at a time (never between
 * the two halves of a surrogate pair), so one SSE frame may span several writes.
 */

/** Strings longer than this are written in slices of this many code units. */
export const ARG_PIECE_CHARS = 256 * 1024;

/** A long JSON string being written: `at` code units of `s` are done. */
interface LongString {
  s: string;
  at: number;
}

export class PieceQueue {
  private parts: (string | LongString)[] = [];
  private head = 0;

  /** Something is left to write. */
  get pending(): boolean {
    return this.head < this.parts.length;
  }

  /** Queue text as it is. */
  text(s: string): void {
    if (s.length === 0) return;
    const n = this.parts.length;
    const last = n > this.head ? this.parts[n - 1] : undefined;
    if (typeof last === 'string' && last.length + s.length <= ARG_PIECE_CHARS) this.parts[n - 1] = last + s;
    else this.parts.push(s);
  }

  /** Queue `${prefix}${JSON.stringify(value)}${suffix}`, long strings escaped a slice per `next()`. */
  frame(prefix: string, value: unknown, suffix: string): void {
    this.text(prefix);
    this.value(value);
    this.text(suffix);
  }

  /** The next piece of output ('' when nothing is left). */
  next(): string {
    let out = '';
    while (this.head < this.parts.length && out.length < ARG_PIECE_CHARS) {
      const p = this.parts[this.head]!;
      if (typeof p === 'string') {
        out += p;
        this.parts[this.head++] = '';
        continue;
      }
      let end = Math.min(p.s.length, p.at + ARG_PIECE_CHARS);
      // Never between a high and a low surrogate: the two halves escaped apart would differ from JSON.stringify.
      if (end < p.s.length && end > p.at + 1) {
        const c = p.s.charCodeAt(end - 1);
        if (c >= 0xd800 && c <= 0xdbff) end--;
      }
      const json = JSON.stringify(p.s.slice(p.at, end));
      out += (p.at === 0 ? '"' : '') + json.slice(1, -1) + (end === p.s.length ? '"' : '');
      p.at = end;
      if (end === p.s.length) this.parts[this.head++] = '';
    }
    if (this.head === this.parts.length) {
      this.parts = [];
      this.head = 0;
    }
    return out;
  }

  /** JSON.stringify's output for the plain data of an event object, long strings kept apart. */
  private value(v: unknown): void {
    if (typeof v === 'string') {
      if (v.length > ARG_PIECE_CHARS) this.parts.push({ s: v, at: 0 });
      else this.text(JSON.stringify(v));
      return;
    }
    if (typeof v !== 'object' || v === null) {
      this.text(JSON.stringify(v) ?? 'null');
      return;
    }
    if (Array.isArray(v)) {
      this.text('[');
      for (let i = 0; i < v.length; i++) {
        if (i > 0) this.text(',');
        const x: unknown = v[i];
        if (x === undefined || typeof x === 'function' || typeof x === 'symbol') this.text('null');
        else this.value(x);
      }
      this.text(']');
      return;
    }
    this.text('{');
    let first = true;
    for (const k of Object.keys(v)) {
      const x = (v as Record<string, unknown>)[k];
      if (x === undefined || typeof x === 'function' || typeof x === 'symbol') continue;
      this.text(`${first ? '' : ','}${JSON.stringify(k)}:`);
      first = false;
      this.value(x);
    }
    this.text('}');
  }
}
