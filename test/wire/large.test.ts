/**
 * A 50 MB argument delivered in 64 KB fragments: decoded without throwing, in order, and without
 * the reader keeping per-fragment copies (retained heap stays far below the argument size).
 */
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { createStreamReader } from '../../src/wire';
import type { WireFormat } from '../../src/wire/events';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

const TOTAL = 50 * 1024 * 1024;
const PIECE = 64 * 1024;
const N = TOTAL / PIECE;

function heapMB(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed / (1024 * 1024);
}

/** SSE text for fragment i (the same 64 KB of argument text each time, built once). */
function framer(format: WireFormat): (i: number) => string {
  const body = 'abcdefghijklmnopqrstuvwxyz0123456789'.repeat(Math.ceil(PIECE / 36)).slice(0, PIECE);
  if (format === 'anthropic') {
    const mid = `event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: body } })}\n\n`;
    return (i) =>
      i === 0
        ? 'event: message_start\ndata: {"type":"message_start","message":{"id":"m","model":"x"}}\n\n' +
          'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"write","input":{}}}\n\n' +
          mid
        : mid;
  }
  const mid = `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: body } }] } }] })}\n\n`;
  return (i) =>
    i === 0
      ? `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call', type: 'function', function: { name: 'write', arguments: '' } }] } }] })}\n\n` +
        mid
      : mid;
}

describe.each(['openai-chat', 'anthropic'] as const)('%s: 50 MB argument in 64 KB fragments', (format) => {
  test('decodes fully, in order, with bounded retained memory', () => {
    const frame = framer(format);
    const reader = createStreamReader(format);
    let fragments = 0;
    let chars = 0;
    let firstChar = '';
    let warnings = 0;
    let baseline = 0;
    let peakGrowth = 0;
    const WRITE = 10_000; // the transport hands us 10 000-character pieces: lines split across writes
    for (let i = 0; i < N; i++) {
      const text = frame(i);
      for (let off = 0; off < text.length; off += WRITE) {
        const evs = reader.write(text.slice(off, off + WRITE));
        for (const e of evs) {
          if (e.type === 'call.fragment') {
            fragments++;
            chars += e.text.length;
            if (firstChar === '') firstChar = e.text[0];
          } else if (e.type === 'warning') warnings++;
        }
      }
      if (i === 16) baseline = heapMB();
      if (i > 16 && i % 200 === 0) peakGrowth = Math.max(peakGrowth, heapMB() - baseline);
    }
    const tail = reader.end();
    expect(tail[tail.length - 1]).toEqual({ type: 'stream.end' });
    expect(warnings).toBe(0);
    expect(fragments).toBe(N);
    expect(chars).toBe(TOTAL);
    expect(firstChar).toBe('a');
    // Keeping the fragments would retain ≥ 50 MB; the reader's own state is one partial line.
    expect(peakGrowth).toBeLessThan(16);
  }, 120_000);
});
