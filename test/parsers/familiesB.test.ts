/**
 * Issue 12, batch B families (streams in corpusB.ts), with the checks of families.test.ts:
 * - each synthetic stream whole, at EVERY byte split (byte entry), at every UTF-16 split (string
 *   entry) and in random 1–16 byte chunks: identical merged events, no marker text in text or
 *   thinking; `call.complete` in the push that holds the closing marker's last byte, not before,
 *   and nothing after the marker consumed into text before it;
 * - every truncated prefix (SPEC §5.7): no completion without the closing marker, fragments a
 *   prefix of the final arguments, text/thinking prefixes of the full ones (plus a held partial
 *   opener that could no longer become markup), a warning whenever a call is left open;
 * - real outputs from the families' public sources, whole and at every byte split;
 * - look-alikes, whole and at every byte split (warnings compared separately).
 */
import fc from 'fast-check';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { createTextAdapter, createTextParser, listFamilies, resolveFamily } from '../../src/parsers';
import type { StreamEvent } from '../../src/wire/events';
import { closeOffsets } from './cases';
import { CASES_B, LOOKALIKES_B, REAL_B, type CaseB } from './corpusB';
import { mergeEvents, runBytesAt, runText, summarize, utf8 } from './helpers';

const enc = new TextEncoder();
const show = (evs: StreamEvent[]): string => JSON.stringify(evs);

function noMarkers(c: CaseB, evs: StreamEvent[]): void {
  const s = summarize(evs);
  for (const m of c.markers) {
    if (s.text.includes(m) || s.thinking.includes(m)) {
      throw new Error(`${c.title}: marker ${JSON.stringify(m)} leaked: ${JSON.stringify(s)}`);
    }
  }
}

/**
 * `s` without a tail that is a held partial opener (the input's end), and the whitespace before it
 * (between calls it would have been dropped had the opener completed), when that makes it a
 * prefix of `ref`.
 */
function withoutHeldOpener(s: string, ref: string, input: string, openers: string[]): string {
  if (ref.startsWith(s)) return s;
  for (let k = 1; k <= Math.min(64, s.length); k++) {
    const tail = s.slice(s.length - k);
    if (!input.endsWith(tail) || !openers.some((o) => o.length > k && o.startsWith(tail))) continue;
    const rest = s.slice(0, -k);
    if (ref.startsWith(rest)) return rest;
    if (ref.startsWith(rest.trimEnd())) return rest.trimEnd();
  }
  return s;
}

describe('batch B registry', () => {
  it('registers every family and its model-name aliases', () => {
    const names = listFamilies().map((f) => f.name);
    for (const f of [
      'phi-4-mini',
      'firefunction-v2',
      'internlm2',
      'command-r7b',
      'apertus',
      'gigachat3',
      'functionary-v3.1',
      'functionary-v3.2',
      'kimi-k3',
      'lfm2',
      'olmo3',
    ])
      expect(names).toContain(f);
    expect(resolveFamily('Phi-4-mini-instruct')).toBe('phi-4-mini');
    expect(resolveFamily('command_r7b')).toBe('command-r7b');
    expect(resolveFamily('functionary-v3.2')).toBe('functionary-v3.2');
    expect(resolveFamily('Functionary v3.1')).toBe('functionary-v3.1');
    expect(resolveFamily('InternLM2.5')).toBe('internlm2');
  });
});

describe.each(CASES_B.map((c) => [c.title, c] as const))('%s', (_title, c) => {
  const bytes = utf8(c.stream);
  const expected = c.expected;
  const closes = closeOffsets(c).map((o) => enc.encode(c.stream.slice(0, o)).length);

  it('parses the whole stream; arguments are JSON', () => {
    const evs = runText(c.family, [c.stream], c.opts);
    expect(mergeEvents(evs)).toEqual(expected);
    for (const call of summarize(evs).calls) expect(() => JSON.parse(call.args) as unknown).not.toThrow();
    expect(evs.filter((e) => e.type === 'warning')).toEqual([]);
  });

  it('gives the same events at every byte split and every UTF-16 split', () => {
    for (let cut = 1; cut < bytes.length; cut++) {
      const evs = runBytesAt(c.family, bytes, [cut], c.opts).events;
      const merged = mergeEvents(evs);
      if (show(merged) !== show(expected)) expect({ cut, merged }).toEqual({ cut, merged: expected });
      noMarkers(c, evs);
    }
    for (let cut = 1; cut < c.stream.length; cut++) {
      const merged = mergeEvents(runText(c.family, [c.stream.slice(0, cut), c.stream.slice(cut)], c.opts));
      if (show(merged) !== show(expected))
        expect({ utf16: cut, merged }).toEqual({ utf16: cut, merged: expected });
    }
  });

  it('gives the same events in random 1–16 byte chunks, each completion in the push of its marker', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 16 }), { minLength: 1, maxLength: 64 }), (sizes) => {
        const cuts: number[] = [];
        for (let k = 0, at = sizes[0]; at < bytes.length; k++, at += sizes[k % sizes.length]) cuts.push(at);
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
      { numRuns: 60 },
    );
  });

  it('emits completion evidence exactly when the closing marker is complete', () => {
    closes.forEach((end, index) => {
      const fed = (n: number): StreamEvent[] =>
        createTextParser(c.family, c.opts).push(new TextDecoder().decode(bytes.subarray(0, n)));
      const at = fed(end);
      const i = at.findIndex((e) => e.type === 'call.complete' && e.index === index);
      expect({ index, found: i >= 0 }).toEqual({ index, found: true });
      expect(fed(end - 1).some((e) => e.type === 'call.complete' && e.index === index)).toBe(false);
      expect(at.slice(i + 1).filter((e) => e.type === 'text.delta')).toEqual([]);
    });
  });

  it('handles truncation at every prefix (SPEC §5.7)', () => {
    const closes16 = closeOffsets(c);
    const full = summarize(expected);
    for (let n = 0; n <= c.stream.length; n++) {
      const code = c.stream.charCodeAt(n - 1);
      if (code >= 0xd800 && code <= 0xdbff) continue;
      const input = c.stream.slice(0, n);
      const p = createTextParser(c.family, c.opts);
      const s = summarize([...p.push(input), ...p.end()]);
      const ctx = `prefix of ${n} chars`;
      const thinking = withoutHeldOpener(s.thinking, full.thinking, input, c.openers);
      const text = withoutHeldOpener(s.text, full.text, input, c.openers);
      expect({ ctx, thinking: full.thinking.startsWith(thinking), text: full.text.startsWith(text) }).toEqual(
        {
          ctx,
          thinking: true,
          text: true,
        },
      );
      for (const call of s.calls) {
        const ref = full.calls[call.index];
        expect({ ctx, known: ref !== undefined }).toEqual({ ctx, known: true });
        if (call.name !== undefined) expect(call.name).toBe(ref.name);
        expect({ ctx, args: ref.args.startsWith(call.args) }).toEqual({ ctx, args: true });
        const completes = closes16[call.index] <= n ? 1 : 0;
        expect({ ctx, index: call.index, completes: call.completes }).toEqual({
          ctx,
          index: call.index,
          completes,
        });
      }
      const completed = closes16.filter((e) => e <= n).length;
      expect({ ctx, completed: s.calls.filter((x) => x.completes > 0).length }).toEqual({ ctx, completed });
      if (n < c.stream.length && s.calls.some((x) => x.completes === 0))
        expect(s.warnings.length).toBeGreaterThan(0);
    }
  });
});

describe.each(REAL_B.map((c) => [`${c.family}: ${c.title}`, c] as const))('real output — %s', (_t, c) => {
  it('parses to the documented calls, whole and at every byte split', () => {
    const bytes = utf8(c.stream);
    let first = '';
    for (let cut = 0; cut < bytes.length; cut++) {
      const evs = runBytesAt(c.family, bytes, cut === 0 ? [] : [cut], c.opts).events;
      const s = summarize(evs);
      const got = {
        text: s.text,
        thinking: s.thinking,
        calls: s.calls.map((x) => ({
          name: x.name,
          args: JSON.parse(x.args) as unknown,
          completes: x.completes,
        })),
        warnings: s.warnings,
      };
      const want = {
        text: c.text,
        thinking: c.thinking ?? '',
        calls: c.calls.map((x) => ({ name: x.name, args: x.args, completes: 1 })),
        warnings: [],
      };
      if (cut === 0) {
        expect(got).toEqual(want);
        first = show(mergeEvents(evs));
      } else if (show(mergeEvents(evs)) !== first) {
        expect({ cut, events: mergeEvents(evs) }).toEqual({ cut, events: JSON.parse(first) as unknown });
      }
    }
  });
});

describe.each(LOOKALIKES_B.map((c) => [`${c.family}: ${c.name}`, c] as const))('look-alike — %s', (_n, c) => {
  it('whole and at every byte split', () => {
    const bytes = utf8(c.input);
    const want = mergeEvents(c.expected);
    for (let cut = 0; cut < bytes.length; cut++) {
      const evs = runBytesAt(c.family, bytes, cut === 0 ? [] : [cut], c.opts).events;
      const got = mergeEvents(evs.filter((e) => e.type !== 'warning'));
      if (show(got) !== show(want)) expect({ cut, got }).toEqual({ cut, got: want });
      const warnings = evs.flatMap((e) => (e.type === 'warning' ? [e.code] : []));
      expect({ cut, warnings }).toEqual({ cut, warnings: c.warnings ?? [] });
    }
  });
});

describe('batch B through the text adapter: raw content streamed by an OpenAI-compatible server (real openai SDK)', () => {
  // The server streams the case named by the user message, in 7-character content pieces.
  let server: Server;
  let url = '';

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        const req0 = JSON.parse(body) as { model: string; messages: { content: string }[] };
        const c = CASES_B.find((x) => x.title === req0.messages[0].content);
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const send = (delta: Record<string, unknown>, finish: string | null = null): void => {
          const chunk = { id: 'chatcmpl-b', object: 'chat.completion.chunk', created: 0, model: req0.model };
          res.write(
            `data: ${JSON.stringify({ ...chunk, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
          );
        };
        send({ role: 'assistant', content: '' });
        const text = c?.stream ?? 'unknown case';
        for (let i = 0; i < text.length; i += 7) send({ content: text.slice(i, i + 7) });
        send({}, 'stop');
        res.end('data: [DONE]\n\n');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
  });

  it.each(CASES_B.map((c) => [c.title, c] as const))('%s', async (_t, c) => {
    const client = new OpenAI({ baseURL: url, apiKey: 'dummy', maxRetries: 0, timeout: 10_000 });
    const stream = await client.chat.completions.create({
      model: c.family,
      messages: [{ role: 'user', content: c.title }],
      stream: true,
    });
    const adapter = createTextAdapter(c.family, c.opts);
    const evs: StreamEvent[] = [];
    for await (const chunk of stream) evs.push(...adapter.push(chunk));
    evs.push(...adapter.end());
    const merged = mergeEvents(evs);
    expect(
      merged.filter((e) => e.type !== 'message.start' && e.type !== 'finish' && e.type !== 'stream.end'),
    ).toEqual(c.expected);
    expect(merged.find((e) => e.type === 'finish')).toMatchObject({ reason: 'tool_calls' });
    expect(merged.filter((e) => e.type === 'stream.end')).toHaveLength(1);
  });
});
