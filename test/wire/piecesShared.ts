/**
 * Shared by the piecewise-reading tests (pieces.test.ts, piecesText.test.ts): decoding a stream with
 * pieces on or off, splitting it at random places, and comparing the events of the two paths.
 */
import { createStreamReader, type StreamReaderOptions } from '../../src/wire';
import type { StreamEvent, WireFormat } from '../../src/wire/events';
import { prng } from '../../bench/prng';

export function decode(format: WireFormat, chunks: readonly (string | Uint8Array)[], o: StreamReaderOptions = {}): StreamEvent[] {
  const r = createStreamReader(format, o);
  const out: StreamEvent[] = [];
  for (const c of chunks) out.push(...r.write(c));
  out.push(...r.end());
  return out;
}

/** Splits of `text` at random sizes (1..max), as strings or as UTF-8 bytes. */
export function split(text: string, seed: number, max: number, bytes = false): (string | Uint8Array)[] {
  const r = prng(seed);
  const src: string | Buffer = bytes ? Buffer.from(text, 'utf8') : text;
  const out: (string | Uint8Array)[] = [];
  for (let i = 0; i < src.length; ) {
    const n = 1 + Math.floor(r() * max);
    out.push(typeof src === 'string' ? src.slice(i, i + n) : src.subarray(i, i + n));
    i += n;
  }
  return out;
}

export interface Shape {
  /** Every event except fragments and completes, in order. */
  events: StreamEvent[];
  /** Per call index: the argument text (fragments joined) and how many completes. */
  args: Map<number, string>;
  completes: Map<number, number>;
  fragments: number;
}

export function shape(events: StreamEvent[]): Shape {
  const s: Shape = { events: [], args: new Map(), completes: new Map(), fragments: 0 };
  for (const e of events) {
    if (e.type === 'call.fragment') {
      s.fragments++;
      s.args.set(e.index, (s.args.get(e.index) ?? '') + e.text);
    } else if (e.type === 'call.complete') s.completes.set(e.index, (s.completes.get(e.index) ?? 0) + 1);
    else {
      const last = s.events[s.events.length - 1];
      if ((e.type === 'text.delta' || e.type === 'thinking.delta') && last?.type === e.type) s.events[s.events.length - 1] = { ...last, text: last.text + e.text };
      else s.events.push(e);
    }
  }
  return s;
}

/** Pieces on and off agree (Gemini's raw argument text is compared as JSON values: its spelling is the sender's). */
export function expectSame(format: WireFormat, got: StreamEvent[], want: StreamEvent[]): void {
  const g = shape(got);
  const w = shape(want);
  expect(g.events).toEqual(w.events);
  expect(g.completes).toEqual(w.completes);
  expect([...g.args.keys()].sort()).toEqual([...w.args.keys()].sort());
  for (const [i, text] of w.args) {
    const mine = g.args.get(i)!;
    if (format === 'gemini' && mine !== text) expect(JSON.parse(mine)).toEqual(JSON.parse(text));
    else expect(mine).toBe(text);
  }
}

export const OFF: StreamReaderOptions = { pieceThreshold: Infinity };

/** JSON string content with some characters written as \uXXXX escapes (pairs as two escapes). */
export function rawContent(s: string, r: () => number): string {
  let out = '';
  for (const ch of s) {
    if (r() < 0.3) for (let k = 0; k < ch.length; k++) out += '\\u' + ch.charCodeAt(k).toString(16).padStart(4, '0');
    else out += JSON.stringify(ch).slice(1, -1);
  }
  return out;
}

export const TRICKY = ['a', 'Z', ' ', '"', '\\', '/', '\n', '\t', '\u0001', 'é', '€', '😀', '𝄞', '\ud800', '\udc00', '{', '}', ':', ','];

export function trickyString(r: () => number, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += TRICKY[Math.floor(r() * TRICKY.length)];
  return s;
}

export function sse(payloads: unknown[], eventNames = false): string {
  return payloads.map((p) => `${eventNames && typeof p === 'object' && p !== null ? `event: ${(p as { type: string }).type}\n` : ''}data: ${typeof p === 'string' ? p : JSON.stringify(p)}\n\n`).join('');
}

/** `text` in 64 KiB socket-sized reads. */
export function reads(text: string): Buffer[] {
  const all = Buffer.from(text, 'utf8');
  const out: Buffer[] = [];
  for (let i = 0; i < all.length; i += 65_536) out.push(all.subarray(i, i + 65_536));
  return out;
}


/** Pieces on (thresholds 1 and 40) = pieces off, the stream fed whole and cut in two at every position. */
export function expectSameEverySplit(format: WireFormat, text: string, want = decode(format, [text], OFF)): void {
  for (const threshold of [1, 40]) {
    expectSame(format, decode(format, [text], { pieceThreshold: threshold }), want);
    for (let p = 1; p < text.length; p++) expectSame(format, decode(format, [text.slice(0, p), text.slice(p)], { pieceThreshold: threshold }), want);
  }
}

/** Pieces on = pieces off over random splits: strings, UTF-8 bytes and CRLF line ends. */
export function expectSameRandomSplits(format: WireFormat, text: string): void {
  const want = decode(format, [text], OFF);
  const crlf = text.replace(/\n/g, '\r\n');
  for (let seed = 1; seed <= 30; seed++) {
    const threshold = [1, 5, 64, 300][seed % 4];
    expectSame(format, decode(format, split(text, seed, 1 + (seed % 9)), { pieceThreshold: threshold }), want);
    expectSame(format, decode(format, split(text, seed, 3 + seed * 7, true), { pieceThreshold: threshold }), want);
    expectSame(format, decode(format, split(crlf, seed, 1 + seed), { pieceThreshold: threshold }), want);
  }
}
