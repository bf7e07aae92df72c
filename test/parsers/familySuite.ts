/**
 * One suite for a family's streams, shared by the family test files (familiesA, familiesB):
 *
 * - `describeFamilyStreams(cases)`: each synthetic stream whole (arguments are JSON, no warnings),
 *   at EVERY byte split (byte entry and its streaming decoder), at every UTF-16 split (string
 *   entry) and in random 1–16 byte chunks: identical merged events and no marker text in text or
 *   thinking; `call.complete` in the push holding the closing marker's last byte, never before,
 *   and nothing after the marker consumed into text first; every truncated prefix follows the
 *   end-of-stream rules (SPEC §5.7);
 * - `describeLookalikes(cases)`: text that resembles the markup, whole and at every byte and
 *   UTF-16 split, with its warning codes;
 * - `describePublishedOutputs(entries)`: outputs as a family's publisher shows them, parsed to the
 *   documented calls, each completed once, whole and at every byte split;
 * - `describeMarkupSoup(families, pieces)`: random concatenations of markup pieces in random chunks
 *   never throw and keep the event contract (indices in order, nothing after a completion);
 * - `serveChatContent(pick)`: a real OpenAI-compatible SSE server on 127.0.0.1 that streams raw
 *   model text as `delta.content` pieces (for the text adapter behind a real SDK client).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { createTextParser, type ParserOptions } from '../../src/parsers';
import type { StreamEvent } from '../../src/wire/events';
import { closeOffsets, type FamilyCase } from './cases';
import {
  expectAtEverySplit,
  mergeEvents,
  runBytesAt,
  runText,
  summarize,
  utf8,
  type SplitCase,
} from './helpers';

export interface StreamCase extends FamilyCase {
  /**
   * Openers whose partial text, held at the end of a truncated stream, may be flushed as text or
   * thinking. Without it: any held tail starting with `<`, `[`, `{` or a backtick.
   */
  openers?: string[];
}

export interface StreamSuiteOptions {
  /** fast-check runs of the random-chunk property (default 60). */
  randomRuns?: number;
}

const enc = new TextEncoder();
const show = (evs: readonly StreamEvent[]): string => JSON.stringify(evs);

/** The first marker of `c` that appears in the text or thinking of `evs`, or null. */
function leakedMarker(c: FamilyCase, evs: StreamEvent[]): string | null {
  const s = summarize(evs);
  return c.markers.find((m) => s.text.includes(m) || s.thinking.includes(m)) ?? null;
}

/**
 * Whether `s` (text or thinking of a truncated stream) is a prefix of `ref`, allowing a tail that
 * is a held partial marker flushed at the end (the input's last characters) and the whitespace
 * before it (between calls it would have been dropped had the marker completed).
 */
export function prefixWithHeldTail(
  s: string,
  ref: string,
  input: string,
  openers?: readonly string[],
): boolean {
  if (ref.startsWith(s)) return true;
  for (let k = 1; k <= Math.min(64, s.length); k++) {
    const tail = s.slice(s.length - k);
    if (!input.endsWith(tail)) continue;
    const held =
      openers === undefined
        ? '<[{`'.includes(tail.trimStart()[0] ?? '')
        : openers.some((o) => o.length > k && o.startsWith(tail));
    if (!held) continue;
    const rest = s.slice(0, -k);
    if (ref.startsWith(rest) || ref.startsWith(rest.trimEnd())) return true;
  }
  return false;
}

/** Chunk boundaries from repeated chunk sizes. */
function cutsOf(sizes: readonly number[], length: number): number[] {
  const cuts: number[] = [];
  for (let k = 0, at = sizes[0]; at < length; k++, at += sizes[k % sizes.length]) cuts.push(at);
  return cuts;
}

export function describeFamilyStreams(cases: readonly StreamCase[], o: StreamSuiteOptions = {}): void {
  describe.each(cases.map((c) => [c.title, c] as const))('%s', (_title, c) => {
    const bytes = utf8(c.stream);
    const closes16 = closeOffsets(c);
    const closes = closes16.map((u) => enc.encode(c.stream.slice(0, u)).length);
    const want = show(c.expected);

    it('parses the whole stream; arguments are JSON; no warnings', () => {
      const evs = runText(c.family, [c.stream], c.opts);
      expect(mergeEvents(evs)).toEqual(c.expected);
      for (const call of summarize(evs).calls) expect(() => JSON.parse(call.args) as unknown).not.toThrow();
      expect(evs.filter((e) => e.type === 'warning')).toEqual([]);
    });

    it('gives the same events at every byte split and every UTF-16 split', () => {
      for (let cut = 1; cut < bytes.length; cut++) {
        const evs = runBytesAt(c.family, bytes, [cut], c.opts).events;
        const merged = mergeEvents(evs);
        if (show(merged) !== want) expect({ cut, merged }).toEqual({ cut, merged: c.expected });
        expect({ cut, leak: leakedMarker(c, evs) }).toEqual({ cut, leak: null });
      }
      for (let cut = 1; cut < c.stream.length; cut++) {
        const merged = mergeEvents(runText(c.family, [c.stream.slice(0, cut), c.stream.slice(cut)], c.opts));
        if (show(merged) !== want) expect({ utf16: cut, merged }).toEqual({ utf16: cut, merged: c.expected });
      }
    });

    it('gives the same events in random 1–16 byte chunks, each completion in the push of its marker', () => {
      fc.assert(
        fc.property(fc.array(fc.integer({ min: 1, max: 16 }), { minLength: 1, maxLength: 64 }), (sizes) => {
          const run = runBytesAt(c.family, bytes, cutsOf(sizes, bytes.length), c.opts);
          expect(mergeEvents(run.events)).toEqual(c.expected);
          expect(leakedMarker(c, run.events)).toBeNull();
          closes.forEach((end, index) => {
            const k = run.pushes.findIndex((p) => p.end >= end);
            const where = run.pushes.findIndex((p) =>
              p.events.some((e) => e.type === 'call.complete' && e.index === index),
            );
            expect({ index, push: where }).toEqual({ index, push: k });
          });
        }),
        { numRuns: o.randomRuns ?? 60 },
      );
    });

    it('emits completion evidence exactly when the closing marker is complete', () => {
      closes.forEach((end, index) => {
        const fed = (n: number): StreamEvent[] =>
          createTextParser(c.family, c.opts).push(new TextDecoder().decode(bytes.subarray(0, n)));
        const isDone = (e: StreamEvent): boolean => e.type === 'call.complete' && e.index === index;
        const at = fed(end);
        expect({ index, found: at.some(isDone) }).toEqual({ index, found: true });
        expect({ index, early: fed(end - 1).some(isDone) }).toEqual({ index, early: false });
        // Nothing after the marker has been consumed into text before the completion.
        expect(at.slice(at.findIndex(isDone) + 1).filter((e) => e.type === 'text.delta')).toEqual([]);
      });
    });

    it('handles truncation at every prefix (SPEC §5.7)', () => {
      const full = summarize(c.expected);
      // Problems are collected: one `expect` at the end keeps the hundreds of prefixes cheap.
      const problems: string[] = [];
      for (let n = 0; n <= c.stream.length; n++) {
        const code = c.stream.charCodeAt(n - 1);
        if (code >= 0xd800 && code <= 0xdbff) continue; // not a code point boundary
        const input = c.stream.slice(0, n);
        const p = createTextParser(c.family, c.opts);
        const s = summarize([...p.push(input), ...p.end()]);
        const bad = (what: string): number => problems.push(`prefix of ${n} chars: ${what}`);
        if (!prefixWithHeldTail(s.thinking, full.thinking, input, c.openers))
          bad(`thinking ${JSON.stringify(s.thinking)}`);
        if (!prefixWithHeldTail(s.text, full.text, input, c.openers)) bad(`text ${JSON.stringify(s.text)}`);
        for (const call of s.calls) {
          const ref = full.calls[call.index] as (typeof full.calls)[number] | undefined;
          if (ref === undefined) {
            bad(`unknown call ${call.index}`);
            continue;
          }
          if (call.name !== undefined && call.name !== ref.name) bad(`call ${call.index} name ${call.name}`);
          if (!ref.args.startsWith(call.args)) bad(`call ${call.index} args ${JSON.stringify(call.args)}`);
          const completes = closes16[call.index] <= n ? 1 : 0;
          if (call.completes !== completes)
            bad(`call ${call.index} completes ${call.completes}, want ${completes}`);
        }
        const completed = closes16.filter((e) => e <= n).length;
        if (s.calls.filter((x) => x.completes > 0).length !== completed)
          bad(`completed calls, want ${completed}`);
        // The stream is complete, or what is left open ended with a warning.
        if (n < c.stream.length && s.calls.some((x) => x.completes === 0) && s.warnings.length === 0)
          bad('a call left open without a warning');
      }
      expect(problems).toEqual([]);
    });
  });
}

// ---- look-alikes -------------------------------------------------------------------------------

export interface Lookalike extends SplitCase {
  name: string;
}

/** Text that must come out exactly as written. */
export const verbatim = (family: string, name: string, input: string): Lookalike => ({
  name,
  family,
  input,
  expected: [{ type: 'text.delta', text: input }],
});

export function describeLookalikes(cases: readonly Lookalike[], prefix = ''): void {
  describe.each(cases.map((c) => [`${prefix}${c.family}: ${c.name}`, c] as const))('%s', (_n, c) => {
    it('whole, at every byte split and every UTF-16 split', () => expectAtEverySplit(c));
  });
}

// ---- published outputs -------------------------------------------------------------------------

export interface PublishedOutput {
  family: string;
  /** What the output shows (default: the source). */
  title?: string;
  /** Where the output is written (a path in a public repository, a model card, a spec). */
  source: string;
  input: string;
  calls: { name: string; args: unknown }[];
  /** Text and thinking (omitted: empty). */
  text?: string;
  thinking?: string;
  opts?: ParserOptions;
}

/**
 * Each output parses to its calls (each completed once), text and thinking with no warnings,
 * whole and at every byte split. `trim`: text and thinking are compared without surrounding
 * whitespace.
 */
export function describePublishedOutputs(
  entries: readonly PublishedOutput[],
  o: { trim?: boolean } = {},
): void {
  const norm = (s: string): string => (o.trim ? s.trim() : s);
  describe.each(
    entries.map((e, i) => [`${e.family} #${i}: ${(e.title ?? e.source).slice(0, 60)}`, e] as const),
  )('published output — %s', (_n, e) => {
    it('parses to the documented calls, whole and at every byte split', () => {
      const bytes = utf8(e.input);
      const want = {
        text: e.text ?? '',
        thinking: e.thinking ?? '',
        calls: e.calls.map((x) => ({ name: x.name, args: x.args, completes: 1 })),
        warnings: [] as string[],
      };
      let first = '';
      for (let cut = 0; cut < bytes.length; cut++) {
        const evs = runBytesAt(e.family, bytes, cut === 0 ? [] : [cut], e.opts).events;
        if (cut > 0 && show(mergeEvents(evs)) === first) continue;
        const s = summarize(evs);
        const got = {
          text: norm(s.text),
          thinking: norm(s.thinking),
          calls: s.calls.map((x) => ({
            name: x.name,
            args: JSON.parse(x.args) as unknown,
            completes: x.completes,
          })),
          warnings: s.warnings,
        };
        expect({ cut, ...got }).toEqual({ cut, ...want });
        // Any split gives the events of the whole output (same order, same pieces once merged).
        if (cut === 0) first = show(mergeEvents(evs));
        else expect({ cut, events: mergeEvents(evs) }).toEqual({ cut, events: JSON.parse(first) as unknown });
      }
    });
  });
}

// ---- markup soup -------------------------------------------------------------------------------

/** Random concatenations of `pieces`, in random chunks: no throw, the event contract holds. */
export function describeMarkupSoup(
  families: readonly string[],
  pieces: readonly string[],
  numRuns = 150,
): void {
  it.each(families)('%s', (family) => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...pieces), { maxLength: 40 }),
        fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 8 }),
        (parts, sizes) => {
          const input = parts.join('');
          const chunks: string[] = [];
          for (let at = 0, k = 0; at < input.length; k++) {
            chunks.push(input.slice(at, at + sizes[k % sizes.length]));
            at += sizes[k % sizes.length];
          }
          const seen = new Set<number>();
          const done = new Set<number>();
          for (const e of runText(family, chunks)) {
            if (e.type === 'call.identity' || e.type === 'call.fragment') {
              expect(done.has(e.index)).toBe(false);
              seen.add(e.index);
            } else if (e.type === 'call.complete') {
              expect(seen.has(e.index) && !done.has(e.index)).toBe(true);
              done.add(e.index);
            }
          }
          // Indices are 0..n-1 in order of appearance.
          expect([...seen]).toEqual([...seen].map((_x, i) => i));
        },
      ),
      { numRuns },
    );
  });
}

// ---- an OpenAI-compatible server streaming raw model text --------------------------------------

export interface ContentServer {
  /** The base URL for an OpenAI client (`http://127.0.0.1:PORT/v1`). */
  url: string;
  close(): Promise<void>;
}

/**
 * A chat-completions SSE server on 127.0.0.1: for each request, `pick(model, firstUserMessage)`
 * gives the `delta.content` pieces to stream (after a role chunk), then `finish_reason: stop`.
 */
export async function serveChatContent(
  pick: (model: string, user: string) => readonly string[],
): Promise<ContentServer> {
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const parsed = JSON.parse(body) as { model: string; messages: { content: string }[] };
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const send = (delta: Record<string, unknown>, finish: string | null = null): void => {
        const chunk = { id: 'chatcmpl-t', object: 'chat.completion.chunk', created: 0, model: parsed.model };
        res.write(
          `data: ${JSON.stringify({ ...chunk, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
        );
      };
      send({ role: 'assistant', content: '' });
      for (const p of pick(parsed.model, parsed.messages[0]?.content ?? '')) send({ content: p });
      send({}, 'stop');
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
