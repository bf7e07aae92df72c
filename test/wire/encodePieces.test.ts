/**
 * A huge tool call written to the client a piece at a time (src/encode/pieces.ts): each encoder
 * with `enablePieces()`, drained with `more()`, writes the same SSE text as without it, in pieces
 * of about ARG_PIECE_CHARS; frames keep their order; no ping while a frame is half written.
 */
import { AnthropicSseEncoder } from '../../src/encode/anthropicSse';
import { ChatSseEncoder } from '../../src/encode/chatSse';
import { ARG_PIECE_CHARS, PieceQueue } from '../../src/encode/pieces';
import { ResponsesSseEncoder } from '../../src/encode/responsesSse';
import type { OutputEvent } from '../../src/release/output';

/** A long string with a surrogate pair across every ARG_PIECE_CHARS boundary, quotes and escapes. */
function longText(n: number): string {
  const unit = 'a"b\\c\nd\té€\u2028';
  let s = unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
  for (let at = ARG_PIECE_CHARS - 1; at < n - 1; at += ARG_PIECE_CHARS) s = s.slice(0, at) + '😀' + s.slice(at + 2);
  return s;
}

describe('PieceQueue', () => {
  test('a frame drained piece by piece is JSON.stringify of it, each piece bounded', () => {
    const value = { type: 'x', nested: [1, null, { s: longText(3 * ARG_PIECE_CHARS + 17), t: 'short', u: undefined }], n: 2.5, b: false, after: longText(ARG_PIECE_CHARS + 1) };
    const q = new PieceQueue();
    q.frame('event: x\ndata: ', value, '\n\n');
    q.text(': tail\n\n');
    const pieces: string[] = [];
    while (q.pending) pieces.push(q.next());
    expect(pieces.join('')).toBe(`event: x\ndata: ${JSON.stringify(value)}\n\n: tail\n\n`);
    expect(pieces.length).toBeGreaterThan(4);
    // A piece is at most one slice of a long string (escaped: up to 2× plus a few) and the small text around it.
    for (const p of pieces) expect(p.length).toBeLessThanOrEqual(3 * ARG_PIECE_CHARS);
    expect(q.next()).toBe('');
  });
});

const ARGS = JSON.stringify({ path: '/big.txt', content: longText(2 * ARG_PIECE_CHARS + 5) });

/** ARGS in uneven pieces, one cut between the halves of a surrogate pair. */
function argsParts(): string[] {
  const pair = ARGS.indexOf('😀', 70_000) + 1;
  return [ARGS.slice(0, 1), ARGS.slice(1, 65_536), ARGS.slice(65_536, pair), ARGS.slice(pair, pair + 300_000), '', ARGS.slice(pair + 300_000)];
}

function events(withParts = false): OutputEvent[] {
  return [
    { type: 'message.start', id: 'm', model: 'b' },
    { type: 'text', text: 'Writing it.' },
    { type: 'tool_use', index: 0, backendId: 'c0', name: 'write_file', input: JSON.parse(ARGS) as Record<string, unknown>, argsText: ARGS, ...(withParts ? { argsParts: argsParts() } : {}), repaired: false },
    { type: 'tool_use', index: 1, backendId: 'c1', name: 'read_file', input: { path: 'a' }, argsText: '{"path":"a"}', repaired: false },
    { type: 'usage', usage: { promptTokens: 5, outputTokens: 9 } },
    { type: 'end', finish: 'tool_calls', released: 2 },
  ];
}

interface Enc {
  push(e: OutputEvent): string;
  ping(): string;
  enablePieces(): void;
  readonly pending: boolean;
  more(): string;
}

/** Ids are random per encoder: number them by first appearance. */
function sameIds(s: string): string {
  const seen = new Map<string, string>();
  return s.replace(/"(toolu_|msg_|call_|fc_|resp_|chatcmpl-)[A-Za-z0-9]+"/g, (m) => {
    if (!seen.has(m)) seen.set(m, `"id${seen.size}"`);
    return seen.get(m)!;
  }).replace(/"created(_at)?":\d+/g, '"created":0');
}

describe.each([
  ['anthropic', () => new AnthropicSseEncoder({ model: 'b', idGenerator: (k: string) => `${k}_x` })],
  ['chat', () => new ChatSseEncoder({ model: 'b' })],
  ['responses', () => new ResponsesSseEncoder({ model: 'b' })],
] as [string, () => Enc][])('%s encoder', (_name, make) => {
  test.each([false, true])('piecewise output = whole output (arguments given as pieces: %s); pieces bounded; no ping mid-frame', (withParts) => {
    const whole = make();
    let want = '';
    for (const e of events()) want += whole.push(e);
    const enc = make();
    enc.enablePieces();
    let got = '';
    let pieces = 0;
    for (const e of events(withParts)) {
      got += enc.push(e);
      while (enc.pending) {
        expect(enc.ping()).toBe('');
        const p = enc.more();
        expect(p.length).toBeLessThanOrEqual(3 * ARG_PIECE_CHARS);
        got += p;
        pieces++;
      }
    }
    expect(pieces).toBeGreaterThan(1);
    expect(sameIds(got)).toBe(sameIds(want));
  });
});
