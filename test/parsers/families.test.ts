/**
 * Every family, on its synthetic stream (test/parsers/cases.ts):
 * - whole, at EVERY byte split (two chunks, through the byte entry and its streaming decoder),
 *   at every UTF-16 split (string entry), and in random 1–16 byte chunks (fast-check): identical
 *   merged events, no marker text in text/thinking, no character lost or doubled;
 * - completion evidence exactly at each call's closing marker: the push whose chunk holds the
 *   marker's last byte returns `call.complete`, no earlier push does;
 * - every truncated prefix (SPEC §5.7): calls whose closing marker is not complete get no
 *   `call.complete`, fragments so far are a prefix of the final arguments, text and thinking are
 *   prefixes of the full ones (plus, at most, a held partial marker that could not become markup).
 */
import fc from 'fast-check';
import { createTextParser } from '../../src/parsers';
import type { StreamEvent } from '../../src/wire/events';
import { CASES, closeOffsets, type FamilyCase } from './cases';
import { mergeEvents, runBytesAt, runText, summarize, utf8 } from './helpers';

const enc = new TextEncoder();
const show = (evs: StreamEvent[]): string => JSON.stringify(evs);

function noMarkers(c: FamilyCase, evs: StreamEvent[]): void {
  const s = summarize(evs);
  for (const m of c.markers) {
    if (s.text.includes(m) || s.thinking.includes(m)) {
      throw new Error(
        `${c.title}: marker ${JSON.stringify(m)} leaked: text=${JSON.stringify(s.text)} thinking=${JSON.stringify(s.thinking)}`,
      );
    }
  }
}

function byteOffset(c: FamilyCase, utf16: number): number {
  return enc.encode(c.stream.slice(0, utf16)).length;
}

describe.each(CASES.map((c) => [c.title, c] as const))('%s', (_title, c) => {
  const bytes = utf8(c.stream);
  const expected = c.expected;
  const closes = closeOffsets(c).map((o) => byteOffset(c, o));

  it('parses the whole stream', () => {
    const evs = runText(c.family, [c.stream], c.opts);
    expect(mergeEvents(evs)).toEqual(expected);
    const s = summarize(evs);
    for (const call of s.calls) expect(() => JSON.parse(call.args)).not.toThrow();
  });

  it('gives the same events at every byte split', () => {
    for (let cut = 1; cut < bytes.length; cut++) {
      const evs = runBytesAt(c.family, bytes, [cut], c.opts).events;
      const merged = mergeEvents(evs);
      if (show(merged) !== show(expected)) expect({ cut, merged }).toEqual({ cut, merged: expected });
      noMarkers(c, evs);
    }
  });

  it('gives the same events at every UTF-16 split (string entry)', () => {
    for (let cut = 1; cut < c.stream.length; cut++) {
      const merged = mergeEvents(runText(c.family, [c.stream.slice(0, cut), c.stream.slice(cut)], c.opts));
      if (show(merged) !== show(expected)) expect({ cut, merged }).toEqual({ cut, merged: expected });
    }
  });

  it('gives the same events in random 1–16 byte chunks, each completion in the push of its marker', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 16 }), { minLength: 1, maxLength: 64 }), (sizes) => {
        const cuts: number[] = [];
        let at = 0;
        for (let k = 0; ; k++) {
          at += sizes[k % sizes.length];
          if (at >= bytes.length) break;
          cuts.push(at);
        }
        const run = runBytesAt(c.family, bytes, cuts, c.opts);
        expect(mergeEvents(run.events)).toEqual(expected);
        noMarkers(c, run.events);
        closes.forEach((end, index) => {
          const k = run.pushes.findIndex((p) => p.end >= end);
          const where = run.pushes.findIndex((p) =>
            p.events.some((e) => e.type === 'call.complete' && e.index === index),
          );
          expect({ index, push: where }).toEqual({ index, push: k });
        });
      }),
      { numRuns: 150 },
    );
  });

  it('emits completion evidence exactly when the closing marker is complete', () => {
    closes.forEach((end, index) => {
      const fed = (n: number): StreamEvent[] =>
        createTextParser(c.family, c.opts).push(new TextDecoder().decode(bytes.subarray(0, n)));
      const at = fed(end);
      expect(at.some((e) => e.type === 'call.complete' && e.index === index)).toBe(true);
      const before = fed(end - 1);
      expect(before.some((e) => e.type === 'call.complete' && e.index === index)).toBe(false);
      // Nothing after the marker has been consumed into text before the completion.
      const i = at.findIndex((e) => e.type === 'call.complete' && e.index === index);
      expect(at.slice(i + 1).filter((e) => e.type === 'text.delta')).toEqual([]);
    });
  });

  it('handles truncation at every prefix (SPEC §5.7)', () => {
    const closes16 = closeOffsets(c);
    const full = summarize(expected);
    // At the end of the stream a held-back possible marker prefix (the input's last characters,
    // starting with < or [, or Llama's unconfirmed leading `{`) becomes text or thinking: it can
    // no longer grow into markup.
    const stripPartial = (s: string, ref: string, input: string): string => {
      if (ref.startsWith(s)) return s;
      for (let k = 1; k <= Math.min(40, s.length); k++) {
        const tail = s.slice(s.length - k);
        if (
          '<[{'.includes(tail.trimStart()[0] ?? '') &&
          input.endsWith(tail) &&
          ref.startsWith(s.slice(0, s.length - k))
        ) {
          return s.slice(0, s.length - k);
        }
      }
      return s;
    };
    for (let n = 0; n <= c.stream.length; n++) {
      const code = c.stream.charCodeAt(n - 1);
      if (code >= 0xd800 && code <= 0xdbff) continue; // not a code point boundary
      const p = createTextParser(c.family, c.opts);
      const evs = [...p.push(c.stream.slice(0, n)), ...p.end()];
      const s = summarize(evs);
      const ctx = `prefix of ${n} chars`;
      expect({
        ctx,
        thinking: full.thinking.startsWith(stripPartial(s.thinking, full.thinking, c.stream.slice(0, n))),
      }).toEqual({ ctx, thinking: true });
      expect({
        ctx,
        text: full.text.startsWith(stripPartial(s.text, full.text, c.stream.slice(0, n))),
      }).toEqual({ ctx, text: true });
      for (const call of s.calls) {
        const ref = full.calls[call.index];
        expect({ ctx, known: ref !== undefined }).toEqual({ ctx, known: true });
        if (call.name !== undefined) expect(call.name).toBe(ref.name);
        expect({ ctx, args: ref.args.startsWith(call.args) }).toEqual({ ctx, args: true });
        const shouldComplete = closes16[call.index] <= n;
        expect({ ctx, index: call.index, completes: call.completes }).toEqual({
          ctx,
          index: call.index,
          completes: shouldComplete ? 1 : 0,
        });
      }
      const completed = closes16.filter((e) => e <= n).length;
      expect({ ctx, completed: s.calls.filter((x) => x.completes > 0).length }).toEqual({ ctx, completed });
      // One of the two is always true: the stream is complete, or what is open ended with a warning.
      if (n < c.stream.length && s.calls.some((x) => x.completes === 0))
        expect(s.warnings.length).toBeGreaterThan(0);
    }
  });
});
