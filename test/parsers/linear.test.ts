/**
 * Parsing stays linear, per family: a large tool call streamed in 1–16 byte chunks parses back,
 * costs per byte about what one a tenth its size does, and what is held back between pushes stays small:
 * inside text and argument values only a possible marker prefix (O(marker length)); a markup
 * header (a harmony message header, a tag's attributes) is held whole but is capped by the family.
 *
 * The time bound is generous (a quadratic parser would be ~10× per byte from 100 KB to 1 MB; the
 * bound is 3×, on the better of two CPU-time runs) so a busy machine does not fail it. The bench
 * (bench/parsers.ts) reports the figures.
 */
import { createByteParser, createTextParser, listFamilies } from '../../src/parsers';
import { bigValue, callStream, chunk } from '../../bench/parsers';

function cpu(fn: () => void): number {
  const c0 = process.cpuUsage();
  fn();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
}

/** Parse, keeping only the call's name, arguments and completion count (no event retention). */
function parse(family: string, chunks: Uint8Array[]): { name?: string; args: string; completes: number } {
  const p = createByteParser(family);
  const r: { name?: string; args: string; completes: number } = { args: '', completes: 0 };
  const parts: string[] = [];
  const take = (evs: ReturnType<typeof p.push>): void => {
    for (const e of evs) {
      if (e.type === 'call.identity' && e.name) r.name = e.name;
      else if (e.type === 'call.fragment') parts.push(e.text);
      else if (e.type === 'call.complete') r.completes++;
    }
  };
  for (const c of chunks) take(p.push(c));
  take(p.end());
  r.args = parts.join('');
  return r;
}

// Size ×10 either way (a quadratic parser is ~10× per byte): CI compares 40 KB with 400 KB to stay
// inside its time budget; SLUICE_DEEP=1 (npm run test:deep) runs the 100 KB → 1 MB pair.
const SIZES = process.env.SLUICE_DEEP === '1' ? [100_000, 1_000_000] : [40_000, 400_000];

describe.each(listFamilies().map((f) => [f.name]))('%s', (family) => {
  it(`parses a ${SIZES[1]! / 1000} KB call in 1–16 byte chunks in linear time`, () => {
    const inputs = SIZES.map((size) => {
      const content = bigValue(size);
      const bytes = new TextEncoder().encode(callStream(family, content));
      const chunks = chunk(bytes, 5);
      const r = parse(family, chunks);
      expect(r.name).toBe('write_file');
      expect(r.completes).toBe(1);
      expect((JSON.parse(r.args) as { content: string }).content).toBe(content);
      return { bytes: bytes.length, chunks };
    });
    // A quadratic parser is ~10× per byte at every try; a GC cycle of the test worker's large heap
    // can slow one measurement several-fold, so up to three tries, and the best ratio counts.
    const ratios: number[] = [];
    for (let attempt = 0; attempt < 3; attempt++) {
      const perByte = inputs.map(({ bytes, chunks }) => Math.min(cpu(() => parse(family, chunks)), cpu(() => parse(family, chunks))) / bytes);
      ratios.push(perByte[1]! / perByte[0]!);
      if (ratios[ratios.length - 1]! < 3) break;
    }
    expect(Math.min(...ratios)).toBeLessThan(3);
  });

  it('holds back only a marker-length suffix inside text and values', () => {
    const value = bigValue(100_000);
    const stream = callStream(family, value);
    // The value is written raw (XML-ish families) or JSON-escaped (JSON families).
    const escaped = JSON.stringify(value).slice(1, -1);
    const raw = stream.indexOf(value.slice(0, 40));
    const valueStart = raw >= 0 ? raw : stream.indexOf(escaped.slice(0, 40));
    const valueEnd = valueStart + (raw >= 0 ? value.length : escaped.length);
    expect(valueStart).toBeGreaterThan(0);
    const p = createTextParser(family);
    const internals = p as unknown as { buf: string; pos: number };
    const sizes = chunk(new TextEncoder().encode(stream), 3).map((c) => c.length);
    let at = 0;
    let inValue = 0;
    let anywhere = 0;
    for (let k = 0; at < stream.length; k++) {
      const n = sizes[k % sizes.length];
      p.push(stream.slice(at, at + n));
      at += n;
      const held = internals.buf.length - internals.pos;
      anywhere = Math.max(anywhere, held);
      if (at > valueStart + 64 && at < valueEnd - 64) inValue = Math.max(inValue, held);
    }
    p.end();
    expect(inValue).toBeLessThan(32);
    expect(anywhere).toBeLessThanOrEqual(1024);
  });
});

// #19: a Gemma single-quoted value decides at each `'` whether it closes by looking past
// whitespace (at most 64 characters): apostrophes, quotes followed by spaces and words, and
// backslashes all through a large value must still cost the same per byte.
describe('gemma4 single-quoted value', () => {
  const piece = "Don't stop, it's 'quoted'   text: {x} [y] \\ 日本 🚀\n";
  const value = (size: number): string => piece.repeat(Math.ceil(size / piece.length));
  const stream = (v: string): string => `<|tool_call>call:write_file{path:<|"|>out/big.txt<|"|>,content:'${v}'}<tool_call|>`;

  it(`parses a ${SIZES[1]! / 1000} KB single-quoted value in 1–16 byte chunks in linear time`, () => {
    const inputs = SIZES.map((size) => {
      const content = value(size);
      const bytes = new TextEncoder().encode(stream(content));
      const chunks = chunk(bytes, 7);
      const r = parse('gemma4', chunks);
      expect(r.completes).toBe(1);
      expect((JSON.parse(r.args) as { content: string }).content).toBe(content);
      return { bytes: bytes.length, chunks };
    });
    const ratios: number[] = [];
    for (let attempt = 0; attempt < 3; attempt++) {
      const perByte = inputs.map(
        ({ bytes, chunks }) => Math.min(cpu(() => parse('gemma4', chunks)), cpu(() => parse('gemma4', chunks))) / bytes,
      );
      ratios.push(perByte[1]! / perByte[0]!);
      if (ratios[ratios.length - 1]! < 3) break;
    }
    expect(Math.min(...ratios)).toBeLessThan(3);
  });

  it('holds back at most the whitespace look-ahead after a quote', () => {
    const s = stream(value(20_000));
    const p = createTextParser('gemma4');
    const internals = p as unknown as { buf: string; pos: number };
    let held = 0;
    for (let at = 0; at < s.length; at += 3) {
      p.push(s.slice(at, at + 3));
      held = Math.max(held, internals.buf.length - internals.pos);
    }
    p.end();
    expect(held).toBeLessThan(80);
  });
});
