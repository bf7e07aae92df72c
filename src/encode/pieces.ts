/**
 * A huge tool call's frames, written a piece at a time (issue 18).
 *
 * An encoder whose consumer drains it piecewise (`enablePieces()`, the gateway's SSE sink) puts
 * the frames of a call whose arguments exceed `ARG_PIECE_CHARS` — and every frame after them, so
 * the order stays — into a `PieceQueue` instead of returning them from `push`. The consumer then
 * calls `more()` (≤ about `PIECE_CHARS` of SSE text each) until `pending` is false, a few pieces
 * per turn of the event loop, respecting the client's backpressure. A frame's JSON is written
 * exactly as `JSON.stringify` writes it; a long string inside it is escaped a slice at a time (never
 * between the two halves of a surrogate pair), so one SSE frame may span several writes.
 */

import type { OutputEvent } from '../release/output';

/** A call whose arguments are longer than this goes piecewise. */
export const ARG_PIECE_CHARS = 256 * 1024;

/**
 * A piece's size (code units of a long string's slice, and about the most `next()` returns): its escaped
 * text stays under V8's regular-object limit (128 KiB, i.e. 64 Ki two-byte chars) unless over half
 * of it needs escaping. A string past that limit lives in the large-object space, where escaping,
 * flattening and the socket write's UTF-8 length and copy cost ~5-15 ns a char instead of ~0.5:
 * slices of 256 Ki chars cost 8 ms each (20-30 ms at worst) in a 16 MiB call's `next()`.
 */
export const PIECE_CHARS = 16 * 1024;

/** A long JSON string being written, given as pieces: `parts[i]` from `at` is next. */
interface LongString {
  parts: readonly string[];
  i: number;
  at: number;
  /** A high surrogate held back from the last slice (its pair's other half comes next). */
  carry: string;
  started: boolean;
}

export class PieceQueue {
  private parts: (string | LongString)[] = [];
  private head = 0;
  /** Stand-in strings for huge arguments given as pieces (`alias`), and those pieces. */
  private aliases: Map<string, readonly string[]> | undefined;
  private readonly nonce = Math.random().toString(36).slice(2);

  /**
   * A stand-in for a string given as pieces (a huge call's `argsParts`): put it where the string
   * goes in an event, and `frame` writes the pieces there — never one copy of the whole string.
   */
  alias(pieces: readonly string[]): string {
    this.aliases ??= new Map();
    const name = `\u0000sluice-args-${this.nonce}-${this.aliases.size}`;
    this.aliases.set(name, pieces);
    return name;
  }

  /** The event as the encoder's builder should see it: a huge call's argument text as its alias. */
  event(ev: OutputEvent): OutputEvent {
    return ev.type === 'tool_use' && ev.argsParts !== undefined ? { ...ev, argsText: this.alias(ev.argsParts) } : ev;
  }

  /** Something is left to write. */
  get pending(): boolean {
    return this.head < this.parts.length;
  }

  /** Queue text as it is. */
  text(s: string): void {
    if (s.length === 0) return;
    const n = this.parts.length;
    const last = n > this.head ? this.parts[n - 1] : undefined;
    if (typeof last === 'string' && last.length + s.length <= PIECE_CHARS) this.parts[n - 1] = last + s;
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
    while (this.head < this.parts.length && out.length < PIECE_CHARS) {
      const p = this.parts[this.head]!;
      if (typeof p === 'string') {
        out += p;
        this.parts[this.head++] = '';
        continue;
      }
      let slice = p.carry;
      p.carry = '';
      while (slice.length < PIECE_CHARS && p.i < p.parts.length) {
        const s = p.parts[p.i]!;
        const end = Math.min(s.length, p.at + PIECE_CHARS - slice.length);
        slice += s.slice(p.at, end);
        p.at = end;
        if (end === s.length) {
          p.i++;
          p.at = 0;
        }
      }
      const done = p.i === p.parts.length;
      // Never between a high and a low surrogate: the two halves escaped apart would differ from JSON.stringify.
      if (!done && slice.length > 1) {
        const c = slice.charCodeAt(slice.length - 1);
        if (c >= 0xd800 && c <= 0xdbff) {
          p.carry = slice.slice(-1);
          slice = slice.slice(0, -1);
        }
      }
      out += (p.started ? '' : '"') + JSON.stringify(slice).slice(1, -1) + (done ? '"' : '');
      p.started = true;
      if (done) this.parts[this.head++] = '';
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
      const pieces = this.aliases?.get(v);
      if (pieces !== undefined) this.parts.push({ parts: pieces, i: 0, at: 0, carry: '', started: false });
      else if (v.length > PIECE_CHARS) this.parts.push({ parts: [v], i: 0, at: 0, carry: '', started: false });
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

/**
 * The piecewise side every SSE encoder shares (each `extends` it): after `enablePieces()` (the
 * gateway's SSE sink), a call whose arguments exceed ARG_PIECE_CHARS, and every frame after it
 * while the queue holds any, goes into a PieceQueue; the consumer calls `more()` while `pending`.
 */
export class PiecewiseEncoder {
  protected piecewise = false;
  protected q: PieceQueue | undefined;

  /** The consumer drains this encoder with `more()` while `pending`. */
  enablePieces(): void {
    this.piecewise = true;
  }

  /** Frames are left for `more()`. */
  get pending(): boolean {
    return this.q !== undefined && this.q.pending;
  }

  /** The next piece of the frames left ('' when none). */
  more(): string {
    return this.q !== undefined ? this.q.next() : '';
  }

  /**
   * The next piece as a writer takes it: SSE text, or bytes already UTF-8 (the Responses encoder's
   * closing frames repeat an item's text four times and hand out one buffer of it each time).
   * `more()` is the same output as text.
   */
  piece(): string | Buffer {
    return this.more();
  }

  /**
   * The queue for `ev`'s frames, or undefined (the encoder's own path): when piecewise and the queue
   * still holds frames (or ever made, with `sticky`), or `ev` is a call over ARG_PIECE_CHARS.
   */
  protected queueFor(ev: OutputEvent, sticky = false): PieceQueue | undefined {
    if (!this.piecewise) return undefined;
    const q = this.q;
    if ((q !== undefined && (sticky || q.pending)) || (ev.type === 'tool_use' && ev.argsText.length > ARG_PIECE_CHARS)) return (this.q ??= new PieceQueue());
    return undefined;
  }
}

