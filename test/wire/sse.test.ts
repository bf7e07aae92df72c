import { SseDecoder, type SseMessage, type SseDecoderOptions } from '../../src/wire/sse';

function decodeWhole(
  text: string | Uint8Array,
  opts: SseDecoderOptions = {},
): { messages: SseMessage[]; truncated: boolean } {
  const d = new SseDecoder(opts);
  const messages = d.feed(text);
  const end = d.end();
  return { messages: [...messages, ...end.messages], truncated: end.truncated };
}

function decodeChunks(chunks: (string | Uint8Array)[], opts: SseDecoderOptions = {}) {
  const d = new SseDecoder(opts);
  const messages: SseMessage[] = [];
  for (const c of chunks) messages.push(...d.feed(c));
  const end = d.end();
  return { messages: [...messages, ...end.messages], truncated: end.truncated };
}

// A sample covering comments, event names, ids, retry, multi-line data, empty data, unknown
// fields, a field without colon, no space after the colon, and two spaces after it.
const SAMPLE_LINES = [
  ': keep-alive',
  '',
  'event: message_start',
  'data: {"a":1}',
  '',
  'retry: 3000',
  'data:first',
  'data:  second with leading space',
  'id: 7',
  '',
  ': comment inside',
  'unknown: field',
  'data',
  '',
  'event: ping',
  'data: {"type":"ping"}',
  '',
  'event: named-but-no-data',
  '',
  'data: last',
  '',
];
const SAMPLE_EXPECTED: SseMessage[] = [
  { event: 'message_start', data: '{"a":1}' },
  { data: 'first\n second with leading space', id: '7' },
  { data: '', id: '7', comments: ['comment inside'] },
  { event: 'ping', data: '{"type":"ping"}', id: '7' },
  { data: 'last', id: '7' },
];

const variants: [string, string][] = [
  ['LF', SAMPLE_LINES.join('\n')],
  ['CRLF', SAMPLE_LINES.join('\r\n')],
  ['CR', SAMPLE_LINES.join('\r')],
  // (a CR never directly followed by an empty line ending in LF: that would be one CRLF)
  ['mixed', SAMPLE_LINES.map((l, i) => l + (l === '' ? '\r\n' : ['\n', '\r\n', '\r'][i % 3])).join('')],
];

describe('SseDecoder', () => {
  const terminate = (text: string) =>
    text + (text.includes('\r\n') ? '\r\n' : text.includes('\r') ? '\r' : '\n');

  test.each(variants)('decodes the sample with %s line endings', (_name, text) => {
    const r = decodeWhole(terminate(text));
    expect(r.messages).toEqual(SAMPLE_EXPECTED);
    expect(r.truncated).toBe(false);
  });

  test.each(variants)('every split point of the %s sample gives the same messages', (_name, body) => {
    const text = terminate(body);
    for (let i = 0; i <= text.length; i++) {
      const r = decodeChunks([text.slice(0, i), text.slice(i)]);
      expect(r.messages).toEqual(SAMPLE_EXPECTED);
    }
  });

  test('every pair of split points (CRLF sample), and one character per chunk', () => {
    const text = SAMPLE_LINES.join('\r\n') + '\r\n';
    for (let i = 0; i <= text.length; i++) {
      for (let j = i; j <= text.length; j += 3) {
        const r = decodeChunks([text.slice(0, i), text.slice(i, j), text.slice(j)]);
        expect(r.messages).toEqual(SAMPLE_EXPECTED);
      }
    }
    expect(decodeChunks([...text]).messages).toEqual(SAMPLE_EXPECTED);
  });

  test('a CRLF pair split across chunks is one line ending, not two', () => {
    const r = decodeChunks(['data: a\r', '\ndata: b\r', '\n\r', '\n']);
    expect(r.messages).toEqual([{ data: 'a\nb' }]);
  });

  test('byte-level splits through multi-byte UTF-8 (é, 😀, U+FF5C) at every position', () => {
    const text =
      'event: t\u00e9st\r\ndata: caf\u00e9 \ud83d\ude00 \uff5c|\n\ndata: {"x":"\ud83d\ude00\ud83d\ude00"}\r\n\r\n';
    const bytes = new TextEncoder().encode(text);
    const expected: SseMessage[] = [
      { event: 't\u00e9st', data: 'caf\u00e9 \ud83d\ude00 \uff5c|' },
      { data: '{"x":"\ud83d\ude00\ud83d\ude00"}' },
    ];
    expect(decodeWhole(bytes).messages).toEqual(expected);
    for (let i = 0; i <= bytes.length; i++) {
      for (let j = i; j <= bytes.length; j++) {
        const r = decodeChunks([bytes.subarray(0, i), bytes.subarray(i, j), bytes.subarray(j)]);
        expect(r.messages).toEqual(expected);
      }
    }
    // One byte per chunk.
    const one: Uint8Array[] = [];
    for (let i = 0; i < bytes.length; i++) one.push(bytes.subarray(i, i + 1));
    expect(decodeChunks(one).messages).toEqual(expected);
  });

  test('a leading BOM is dropped once (string and bytes, also split inside the BOM)', () => {
    expect(decodeWhole('\ufeffdata: x\n\n').messages).toEqual([{ data: 'x' }]);
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode('data: x\n\n')]);
    expect(decodeWhole(bytes).messages).toEqual([{ data: 'x' }]);
    for (let i = 0; i <= 4; i++) {
      expect(decodeChunks([bytes.subarray(0, i), bytes.subarray(i)]).messages).toEqual([{ data: 'x' }]);
    }
    // A second BOM is content: "\ufeffdata" is an unknown field name, ignored.
    expect(decodeWhole('\ufeff\ufeffdata: x\n\ndata: y\n\n').messages).toEqual([{ data: 'y' }]);
    // A BOM later in the stream is not stripped either.
    expect(decodeChunks(['data: a\n\n', '\ufeffdata: b\n\n']).messages).toEqual([{ data: 'a' }]);
  });

  test('comment-only input and keep-alives dispatch nothing', () => {
    const r = decodeWhole(': ping\n\n:\n\n: another\r\n\r\n');
    expect(r.messages).toEqual([]);
    expect(r.truncated).toBe(false);
  });

  test('id: persists across events; values with NUL are ignored', () => {
    const r = decodeWhole('id: 1\ndata: a\n\ndata: b\n\nid: x\u0000y\ndata: c\n\nid\ndata: d\n\n');
    expect(r.messages).toEqual([
      { data: 'a', id: '1' },
      { data: 'b', id: '1' },
      { data: 'c', id: '1' },
      { data: 'd' },
    ]);
  });

  describe('end of stream', () => {
    test('an event without its blank line is not dispatched, and is reported', () => {
      for (const tail of ['data: b', 'data: b\n', 'data: b\r\n', 'event: x\n', 'data: b\r']) {
        const r = decodeWhole('data: a\n\n' + tail);
        expect(r.messages).toEqual([{ data: 'a' }]);
        expect(r.truncated).toBe(true);
      }
    });
    test('lenientEof dispatches the cut event (still reported)', () => {
      const r = decodeWhole('data: a\n\ndata: b\ndata: c', { lenientEof: true });
      expect(r.messages).toEqual([{ data: 'a' }, { data: 'b\nc' }]);
      expect(r.truncated).toBe(true);
    });
    test('a trailing unterminated comment is not a truncated event', () => {
      const r = decodeWhole('data: a\n\n: keep-alive');
      expect(r.truncated).toBe(false);
    });
    test('feed after end is ignored; end twice is harmless', () => {
      const d = new SseDecoder();
      d.feed('data: a\n\n');
      d.end();
      expect(d.feed('data: b\n\n')).toEqual([]);
      expect(d.end()).toEqual({ messages: [], truncated: false });
    });
  });

  describe('data-less events (Dynamo error frames)', () => {
    const frame = 'event: error\n: first part\n: {"code":503,"message":"busy"}\n\ndata: next\n\n';
    test('not dispatched by default (spec)', () => {
      expect(decodeWhole(frame).messages).toEqual([{ data: 'next' }]);
    });
    test('dispatched with dispatchDataless, carrying the comments', () => {
      expect(decodeWhole(frame, { dispatchDataless: true }).messages).toEqual([
        {
          event: 'error',
          data: '',
          dataless: true,
          comments: ['first part', '{"code":503,"message":"busy"}'],
        },
        { data: 'next' },
      ]);
    });
    test('keep-alive comments between events are not attached to the next event', () => {
      expect(decodeWhole(': ka\n\ndata: x\n\n').messages).toEqual([{ data: 'x' }]);
    });
  });

  describe('size cap', () => {
    test('an oversize event is dropped with one warning; decoding resumes', () => {
      const warnings: string[] = [];
      const big = 'x'.repeat(300);
      const r = decodeWhole(`data: ok1\n\ndata: ${big}\ndata: ${big}\nevent: e\n\ndata: ok2\n\n`, {
        maxEventChars: 100,
        onWarning: (code) => warnings.push(code),
      });
      expect(r.messages).toEqual([{ data: 'ok1' }, { data: 'ok2' }]);
      expect(warnings).toEqual(['sse_event_too_large']);
    });

    test('an unterminated oversize line is released while it streams in', () => {
      const warnings: string[] = [];
      const d = new SseDecoder({ maxEventChars: 1000, onWarning: (code) => warnings.push(code) });
      const internals = d as unknown as { partial: string[]; partialChars: number };
      d.feed('data: ');
      for (let i = 0; i < 100; i++) {
        expect(d.feed('y'.repeat(64))).toEqual([]);
        expect(internals.partialChars).toBeLessThanOrEqual(1000);
      }
      expect(internals.partial.length).toBe(0);
      const msgs = d.feed('tail\n\ndata: after\n\n');
      expect(msgs).toEqual([{ data: 'after' }]);
      expect(warnings).toEqual(['sse_event_too_large']);
    });

    test('the cap counts the whole event, not one line', () => {
      const r = decodeWhole('data: aaaa\ndata: bbbb\ndata: cccc\n\ndata: ok\n\n', {
        maxEventChars: 10,
        onWarning: () => undefined,
      });
      expect(r.messages).toEqual([{ data: 'ok' }]);
    });
  });

  test('callback mode delivers messages through onMessage', () => {
    const got: SseMessage[] = [];
    const d = new SseDecoder({ onMessage: (m) => got.push(m) });
    expect(d.feed('data: a\n\ndata: b\n\n')).toEqual([]);
    expect(d.end().messages).toEqual([]);
    expect(got).toEqual([{ data: 'a' }, { data: 'b' }]);
  });

  test('random bytes (invalid UTF-8 too) split anywhere decode as one streaming TextDecoder would', () => {
    // Chunks that end on an ASCII byte take the decoder's shortcut; the others the TextDecoder.
    let seed = 20;
    const rnd = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const pool = [0x41, 0x20, 0x0a, 0x0a, 0xef, 0xbb, 0xbf, 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80, 0xff, 0xc0, 0xed, 0xa0, 0xf5];
    for (let round = 0; round < 300; round++) {
      const body: number[] = [];
      for (let i = 0, n = 1 + rnd(40); i < n; i++) body.push(rnd(4) === 0 ? rnd(256) : pool[rnd(pool.length)]!);
      const bytes = new Uint8Array([...new TextEncoder().encode('data: '), ...body, 0x0a, 0x0a]);
      const lines = new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes).split(/\r\n|\r|\n/);
      const expected = decodeWhole(lines.join('\n')).messages;
      const chunks: Uint8Array[] = [];
      for (let at = 0; at < bytes.length; ) {
        const next = Math.min(bytes.length, at + 1 + rnd(8));
        chunks.push(round % 2 === 0 ? bytes.subarray(at, next) : Buffer.from(bytes.subarray(at, next)));
        at = next;
      }
      expect(decodeChunks(chunks).messages).toEqual(expected);
    }
  });

  test('mixing byte and string chunks', () => {
    const d = new SseDecoder();
    const bytes = new TextEncoder().encode('data: \u00e9');
    const out = [...d.feed(bytes), ...d.feed('\n\n')];
    expect(out).toEqual([{ data: '\u00e9' }]);
  });

  test('linear time: a 4 MB data line in 10-character chunks', () => {
    const d = new SseDecoder();
    const piece = 'abcdefghij';
    const n = 400_000;
    const t0 = Date.now();
    d.feed('data: ');
    for (let i = 0; i < n; i++) d.feed(piece);
    const msgs = d.feed('\n\n');
    const ms = Date.now() - t0;
    expect(msgs).toHaveLength(1);
    expect(msgs[0].data.length).toBe(piece.length * n);
    // Re-scanning the buffer per chunk would be ~8e11 character visits; linear is well under a second.
    expect(ms).toBeLessThan(5000);
  });
});

describe('size cap: comment lines count (issue 11)', () => {
  test('an endless comment block (no blank line) is dropped at the cap, not kept', () => {
    const warnings: string[] = [];
    const d = new SseDecoder({ maxEventChars: 1000, onWarning: (code) => warnings.push(code) });
    const internals = d as unknown as { comments: string[] | undefined };
    for (let i = 0; i < 500; i++) d.feed(': keep-alive\n');
    expect(warnings).toEqual(['sse_event_too_large']);
    expect(internals.comments?.length ?? 0).toBeLessThan(100);
    expect(d.feed('\ndata: after\n\n')).toEqual([{ data: 'after' }]);
  });

  test('ordinary keep-alive comments between events never hit the cap', () => {
    const warnings: string[] = [];
    const d = new SseDecoder({ maxEventChars: 100, onWarning: (code) => warnings.push(code) });
    const got: string[] = [];
    for (let i = 0; i < 1000; i++) for (const m of d.feed(`: ping\n\ndata: ${i}\n\n`)) got.push(m.data);
    expect(got).toHaveLength(1000);
    expect(warnings).toEqual([]);
  });
});
