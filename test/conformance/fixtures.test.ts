/**
 * Every recorded provider stream in ../shared/fixtures converts, and the Anthropic SSE sluice
 * writes, read back by the real @anthropic-ai/sdk, carries the same tool names and inputs as the
 * source stream (oracle: the source's fragments concatenated and parsed once at the end), one
 * block open at a time with consecutive indices.
 */
import * as path from 'node:path';
import { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import { Stream } from '@anthropic-ai/sdk/streaming';
import { convertTrace } from '../../src/trace/convert';
import { parseTrace } from '../../src/trace/trace';
import { createAdapter } from '../../src/wire';
import type { StreamEvent } from '../../src/wire/events';
import { describeFixtures, FIXTURES_DIR, listFixtures, readFixture } from '../helpers/fixtures';

const FILES = [
  ...listFixtures('anthropic'),
  ...listFixtures('openai-chat'),
  ...listFixtures('openai-responses'),
  ...listFixtures('gemini'),
  ...listFixtures('dynamo/agent-harness', /\.sse$/),
];

interface Call {
  name: string;
  input: unknown;
}

/** Oracle: per message, calls with identity whose concatenated arguments parse (at the end) to an object. */
function oracle(events: StreamEvent[], truncatedRepairOk: boolean): Call[][] {
  const messages: Call[][] = [];
  let calls = new Map<number, { name?: string; id?: string; text: string }>();
  let content = false;
  const flush = () => {
    const out: Call[] = [];
    for (const [, c] of [...calls.entries()].sort((a, b) => a[0] - b[0])) {
      if (!c.name || !c.id) continue;
      if (c.text.trim() === '') {
        out.push({ name: c.name, input: {} });
        continue;
      }
      try {
        const v: unknown = JSON.parse(c.text);
        if (v && typeof v === 'object' && !Array.isArray(v)) out.push({ name: c.name, input: v });
      } catch {
        if (truncatedRepairOk) out.push({ name: c.name, input: 'REPAIRED' });
      }
    }
    messages.push(out);
    calls = new Map();
  };
  for (const e of events) {
    if (e.type === 'message.start' && content) {
      flush();
      content = false;
    }
    if (e.type === 'call.identity') {
      const c = calls.get(e.index) ?? { text: '' };
      c.name ||= e.name;
      c.id ||= e.id;
      calls.set(e.index, c);
      content = true;
    } else if (e.type === 'call.fragment') {
      const c = calls.get(e.index) ?? { text: '' };
      c.text += e.text;
      calls.set(e.index, c);
      content = true;
    } else if (e.type === 'text.delta' || e.type === 'thinking.delta') content = true;
  }
  flush();
  return messages;
}

function splitMessages(sse: string): string[] {
  const parts = sse.split(/(?=event: message_start\n)/).filter((p) => p.trim().length > 0);
  return parts;
}

async function readWithSdk(sse: string) {
  const bytes = new TextEncoder().encode(sse);
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      for (let i = 0; i < bytes.length; i += 11) c.enqueue(bytes.slice(i, i + 11));
      c.close();
    },
  });
  const res = new Response(body, { headers: { 'content-type': 'text/event-stream' } });
  const stream = Stream.fromSSEResponse(res, new AbortController());
  return MessageStream.fromReadableStream(stream.toReadableStream()).finalMessage();
}

/** One block open at a time, indices consecutive from 0 (checked on the raw SSE). */
function checkBlocks(sse: string): void {
  let open: number | undefined;
  let next = 0;
  for (const m of sse.matchAll(/^data: (.*)$/gm)) {
    const ev = JSON.parse(m[1]!) as { type: string; index?: number };
    if (ev.type === 'message_start') {
      next = 0;
      open = undefined;
    } else if (ev.type === 'content_block_start') {
      expect(open).toBeUndefined();
      expect(ev.index).toBe(next);
      open = ev.index;
    } else if (ev.type === 'content_block_delta') expect(ev.index).toBe(open);
    else if (ev.type === 'content_block_stop') {
      expect(ev.index).toBe(open);
      open = undefined;
      next++;
    }
  }
  // A message that ends with an error (SPEC §12: a stream cut before its terminal event) may end
  // inside a block, as the Messages API's own mid-stream errors do.
  if (!/^event: error$/m.test(sse)) expect(open).toBeUndefined();
}

describeFixtures(`recorded fixtures (${FIXTURES_DIR})`, () => {
  test('the fixture set is there', () => {
    expect(FILES.length).toBeGreaterThanOrEqual(25);
  });

  test.each(FILES)('%s converts and reads back with the same calls', async (rel) => {
    const trace = parseTrace(readFixture(rel));
    const adapter = createAdapter(trace.format);
    const events: StreamEvent[] = [];
    for (const l of trace.attempts[0]!.lines) if (l.kind === 'data') events.push(...adapter.push(l.data));
    events.push(...adapter.end());
    const finishLength = events.some((e) => e.type === 'finish' && e.reason === 'length');
    const expected = oracle(events, finishLength);

    const { sse, messages } = convertTrace(trace);
    expect(sse.length).toBeGreaterThan(0);
    checkBlocks(sse);
    const parts = splitMessages(sse);
    expect(parts).toHaveLength(messages);
    const errored = /^event: error$/m.test(sse);
    for (let i = 0; i < parts.length; i++) {
      const isLast = i === parts.length - 1;
      // An error terminal has no message_stop for the SDK to finish on: a recording whose file lost
      // its last blank line (message_stop never dispatched) or a message cut by a restart (SPEC §12).
      if ((errored && isLast) || /^event: error$/m.test(parts[i]!)) continue;
      const msg = await readWithSdk(parts[i]!);
      const got = msg.content.filter((b) => b.type === 'tool_use').map((b) => ({ name: b.name, input: b.input }));
      const want = (expected[i] ?? []).map((c) => (c.input === 'REPAIRED' ? { name: c.name, input: expect.any(Object) } : c));
      expect(got).toEqual(want);
      for (const b of msg.content) if (b.type === 'tool_use') expect(b.id).toMatch(/^toolu_/);
    }
  });

  test('a file name is reported relative to the fixtures folder', () => {
    expect(FILES.every((f) => !path.isAbsolute(f))).toBe(true);
  });
});
