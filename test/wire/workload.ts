/**
 * Synthetic throughput workload (SPEC §9): one tool call whose argument JSON is N bytes, streamed in
 * ~10-byte deltas, one SSE event per chunk. Shared by the perf test and ad-hoc profiling.
 */
import { createParser } from 'eventsource-parser';
import { createStreamReader } from '../../src/wire';
import type { StreamEvent, WireFormat } from '../../src/wire/events';

/** A write_file-style argument object of about n bytes with escapes. */
export function makeArgs(n: number): string {
  const parts: string[] = ['{"path":"a.ts","content":"'];
  let len = parts[0].length;
  let i = 0;
  while (len < n - 2) {
    const s = `line ${i++} \\"q\\" \\\\ x\\n`;
    parts.push(s);
    len += s.length;
  }
  parts.push('"}');
  return parts.join('');
}

/** Split into 4–16 character pieces (deterministic), never ending inside an escape. */
export function deltas(s: string): string[] {
  const out: string[] = [];
  let i = 0;
  let k = 0;
  while (i < s.length) {
    const step = 4 + ((k++ * 7) % 13);
    let end = Math.min(s.length, i + step);
    while (end < s.length && s[end - 1] === '\\') end++;
    out.push(s.slice(i, end));
    i = end;
  }
  return out;
}

/** A flat (sequential) string, as a TextDecoder produces: template concatenation makes ropes. */
function flat(s: string): string {
  return Buffer.from(s, 'utf8').toString('utf8');
}

export function anthropicSse(args: string): string[] {
  const chunks: string[] = [];
  const ev = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
  chunks.push(
    ev('message_start', {
      type: 'message_start',
      message: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        content: [],
        model: 'm',
        usage: { input_tokens: 10, output_tokens: 1 },
      },
    }),
  );
  chunks.push(
    ev('content_block_start', {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'tool_use', id: 'toolu_1', name: 'write_file', input: {} },
    }),
  );
  for (const d of deltas(args)) {
    chunks.push(
      ev('content_block_delta', {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'input_json_delta', partial_json: d },
      }),
    );
  }
  chunks.push(ev('content_block_stop', { type: 'content_block_stop', index: 0 }));
  chunks.push(
    ev('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: { output_tokens: 100 },
    }),
  );
  chunks.push(ev('message_stop', { type: 'message_stop' }));
  return chunks.map(flat);
}

export function chatSse(args: string): string[] {
  const chunks: string[] = [];
  const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm' };
  const ev = (choices: unknown[], extra: object = {}) =>
    `data: ${JSON.stringify({ ...base, choices, ...extra })}\n\n`;
  chunks.push(
    ev([
      {
        index: 0,
        delta: {
          role: 'assistant',
          tool_calls: [
            { index: 0, id: 'call_1', type: 'function', function: { name: 'write_file', arguments: '' } },
          ],
        },
        finish_reason: null,
      },
    ]),
  );
  for (const d of deltas(args))
    chunks.push(
      ev([
        { index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: d } }] }, finish_reason: null },
      ]),
    );
  chunks.push(ev([{ index: 0, delta: {}, finish_reason: 'tool_calls' }]));
  chunks.push(ev([], { usage: { prompt_tokens: 10, completion_tokens: 100, total_tokens: 110 } }));
  chunks.push('data: [DONE]\n\n');
  return chunks.map(flat);
}

/** The SPEC §9 baseline: eventsource-parser + JSON.parse per event + concat + one final parse. */
export function minimalConsumer(
  format: 'anthropic' | 'openai-chat',
  chunks: readonly (string | Uint8Array)[],
): unknown {
  let buf = '';
  const td = new TextDecoder();
  const p = createParser({
    onEvent(ev) {
      if (ev.data === '[DONE]') return;
      const j = JSON.parse(ev.data);
      if (format === 'anthropic') {
        if (j.type === 'content_block_delta' && j.delta.type === 'input_json_delta')
          buf += j.delta.partial_json;
      } else {
        const tc = j.choices?.[0]?.delta?.tool_calls?.[0];
        if (tc?.function?.arguments) buf += tc.function.arguments;
      }
    },
  });
  for (const c of chunks) p.feed(typeof c === 'string' ? c : td.decode(c, { stream: true }));
  return JSON.parse(buf);
}

/** sluice's reader doing the same job: events → concat fragments → one final parse. */
export function sluiceConsumer(format: WireFormat, chunks: readonly (string | Uint8Array)[]): unknown {
  const r = createStreamReader(format);
  let buf = '';
  for (const c of chunks) {
    const evs = r.write(c);
    for (let i = 0; i < evs.length; i++) {
      const e = evs[i];
      if (e.type === 'call.fragment') buf += e.text;
    }
  }
  r.end();
  return JSON.parse(buf);
}

/** The chunks as UTF-8 bytes (what a fetch body yields). */
export function toBytes(chunks: readonly string[]): Uint8Array[] {
  return chunks.map((c) => new Uint8Array(Buffer.from(c, 'utf8')));
}

/** Same, reusing one event array across writes (`write(chunk, into)`). */
export function sluiceConsumerReuse(format: WireFormat, chunks: readonly string[]): unknown {
  const r = createStreamReader(format);
  let buf = '';
  const evs: StreamEvent[] = [];
  for (const c of chunks) {
    evs.length = 0;
    r.write(c, evs);
    for (let i = 0; i < evs.length; i++) {
      const e = evs[i];
      if (e.type === 'call.fragment') buf += e.text;
    }
  }
  r.end();
  return JSON.parse(buf);
}

/** Median CPU time (ms) of each function, measured interleaved in one process. */
export function compare(
  fns: Record<string, () => unknown>,
  reps: number,
  warmup = 5,
): Record<string, number> {
  const names = Object.keys(fns);
  for (let w = 0; w < warmup; w++) for (const n of names) fns[n]();
  const times: Record<string, number[]> = {};
  for (const n of names) times[n] = [];
  for (let r = 0; r < reps; r++) {
    const order = r % 2 === 0 ? names : [...names].reverse();
    for (const n of order) {
      // CPU time of this process (user + system): less disturbed by other processes than wall time.
      const t = process.cpuUsage();
      fns[n]();
      const d = process.cpuUsage(t);
      times[n].push((d.user + d.system) / 1000);
    }
  }
  const med: Record<string, number> = {};
  for (const n of names) {
    const a = times[n].sort((x, y) => x - y);
    med[n] = a[a.length >> 1];
  }
  return med;
}
