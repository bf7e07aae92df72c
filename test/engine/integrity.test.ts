/**
 * Stream integrity in the library (SPEC §12, issue 28): four wire formats × {clean EOF before the
 * terminal event, EOF mid-argument, connection reset}. Never `done`, no unsafe tool started from
 * the cut stream, the attempt retried (and a good second attempt then runs the turn once), the
 * error naming what was missing. Then bodies that are not a stream at all, over a real HTTP
 * server on 127.0.0.1 read with fetch: unary JSON, HTML 200, empty 200, a JSON error body with a
 * 200, 2,000 non-SSE lines then a valid stop, and the unary object itself passed as the stream.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { defineTool } from '../../src/execute/tools';
import { runTurn } from '../../src/engine/runTurn';
import type { WireFormat } from '../../src/wire/events';
import { terminalSignal } from '../../src/wire/integrity';

type Fmt = 'openai-chat' | 'anthropic' | 'openai-responses' | 'gemini';

const READ_ARGS = '{"path":"a.txt"}';
const WRITE_ARGS = '{"path":"b.txt","content":"hello"}';

const sse = (data: Record<string, unknown>, event?: string): string => `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;

interface Script {
  /** Frames up to and including the last call's arguments (every call complete). */
  body: string[];
  /** Index in `body` of the frame carrying the unsafe call's arguments. */
  writeArgs: number;
  /** The terminal frames. */
  terminal: string[];
}

function script(format: Fmt): Script {
  switch (format) {
    case 'openai-chat': {
      const ch = (delta: Record<string, unknown>, finish: string | null = null) => sse({ id: 'c1', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] });
      const call = (index: number, id: string | undefined, name: string | undefined, args: string) => ch({ tool_calls: [{ index, ...(id ? { id, type: 'function' } : {}), function: { ...(name ? { name } : {}), arguments: args } }] });
      return {
        body: [ch({ role: 'assistant', content: '' }), call(0, 'r0', 'read_file', ''), call(0, undefined, undefined, READ_ARGS), call(1, 'w1', 'write_file', ''), call(1, undefined, undefined, WRITE_ARGS)],
        writeArgs: 4,
        terminal: [ch({}, 'tool_calls'), 'data: [DONE]\n\n'],
      };
    }
    case 'anthropic': {
      const a = (d: Record<string, unknown>) => sse(d, String(d.type));
      const block = (index: number, id: string, name: string, args: string) => [
        a({ type: 'content_block_start', index, content_block: { type: 'tool_use', id, name, input: {} } }),
        a({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: args } }),
        a({ type: 'content_block_stop', index }),
      ];
      return {
        body: [
          a({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: null, usage: { input_tokens: 1, output_tokens: 1 } } }),
          ...block(0, 'r0', 'read_file', READ_ARGS),
          ...block(1, 'w1', 'write_file', WRITE_ARGS),
        ],
        writeArgs: 5,
        terminal: [a({ type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } }), a({ type: 'message_stop' })],
      };
    }
    case 'openai-responses': {
      const r = (d: Record<string, unknown>) => sse(d, String(d.type));
      const item = (n: number, id: string, name: string, args: string) => [
        r({ type: 'response.output_item.added', output_index: n, item: { type: 'function_call', id: `fc${n}`, call_id: id, name, arguments: '' } }),
        r({ type: 'response.function_call_arguments.delta', output_index: n, item_id: `fc${n}`, delta: args }),
        r({ type: 'response.function_call_arguments.done', output_index: n, item_id: `fc${n}`, arguments: args }),
        r({ type: 'response.output_item.done', output_index: n, item: { type: 'function_call', id: `fc${n}`, call_id: id, name, arguments: args } }),
      ];
      return {
        body: [r({ type: 'response.created', response: { id: 'resp_1', model: 'm' } }), ...item(0, 'r0', 'read_file', READ_ARGS), ...item(1, 'w1', 'write_file', WRITE_ARGS)],
        writeArgs: 6,
        terminal: [r({ type: 'response.completed', response: { id: 'resp_1', status: 'completed', usage: { input_tokens: 1, output_tokens: 9 } } })],
      };
    }
    case 'gemini': {
      const g = (parts: unknown[], finishReason?: string) => sse({ candidates: [{ content: { role: 'model', parts }, ...(finishReason ? { finishReason } : {}) }], modelVersion: 'm' });
      return {
        body: [g([{ functionCall: { name: 'read_file', args: JSON.parse(READ_ARGS) } }]), g([{ functionCall: { name: 'write_file', args: JSON.parse(WRITE_ARGS) } }])],
        writeArgs: 1,
        terminal: [g([], 'STOP')],
      };
    }
  }
}

type Cut = 'clean-eof' | 'mid-argument' | 'reset';

/** The attempt's chunks: the whole turn, or one cut the given way. */
function chunks(format: Fmt, cut: Cut | 'full'): string[] {
  const s = script(format);
  if (cut === 'full') return [...s.body, ...s.terminal];
  if (cut === 'clean-eof' || cut === 'reset') return s.body;
  const frame = s.body[s.writeArgs]!;
  const at = frame.indexOf(format === 'gemini' ? '"content":"hel' : '\\"content\\":\\"hel');
  return [...s.body.slice(0, s.writeArgs), frame.slice(0, at + 12)]; // inside the unsafe call's arguments
}

async function* stream(parts: string[], reset: boolean): AsyncGenerator<string> {
  for (const p of parts) {
    await Promise.resolve();
    yield p;
  }
  if (reset) throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
}

function tools(counts: { reads: number; writes: number }) {
  return [
    defineTool({ name: 'read_file', kind: 'read', input: z.object({ path: z.string() }), run: () => `read ${++counts.reads}` }),
    defineTool({ name: 'write_file', kind: 'edit', input: z.object({ path: z.string(), content: z.string() }), run: () => `wrote ${++counts.writes}` }),
  ];
}

const FORMATS: Fmt[] = ['openai-chat', 'anthropic', 'openai-responses', 'gemini'];
const CUTS: Cut[] = ['clean-eof', 'mid-argument', 'reset'];
const MATRIX = FORMATS.flatMap((f) => CUTS.map((c) => [f, c] as const));

describe('SPEC §12 in runTurn: four formats × three ways a stream is cut', () => {
  test.each(MATRIX)('%s, %s on every attempt: failed, never done; no unsafe tool; retried; the error names what was missing', async (format, cut) => {
    const counts = { reads: 0, writes: 0 };
    const { summary } = await runTurn({
      format: format as WireFormat,
      stream: () => stream(chunks(format, cut), cut === 'reset'),
      tools: tools(counts),
      policy: { maxAttempts: 2, retryBaseMs: 1 },
    });
    expect(summary.outcome).toBe('failed');
    expect(summary.attempts).toBe(2); // retryable: the cut attempt was retried
    expect(counts.writes).toBe(0); // no unsafe tool from an unfinished stream
    expect(summary.history).toEqual([]); // nothing of a discarded attempt reaches history
    if (cut === 'reset') expect(summary.error?.type).toBe('connection_error');
    else {
      expect(summary.error?.type).toBe('stream_truncated');
      expect(summary.error?.message).toContain(terminalSignal(format));
    }
  });

  test.each(MATRIX)('%s, %s then a whole stream: done once, the unsafe tool ran once, on the finished attempt', async (format, cut) => {
    const counts = { reads: 0, writes: 0 };
    const { summary } = await runTurn({
      format: format as WireFormat,
      stream: (attempt: number) => stream(chunks(format, attempt === 1 ? cut : 'full'), attempt === 1 && cut === 'reset'),
      tools: tools(counts),
      policy: { maxAttempts: 2, retryBaseMs: 1 },
    });
    expect(summary.outcome).toBe('done');
    expect(summary.attempts).toBe(2);
    expect(counts.writes).toBe(1);
    const results = summary.history.flatMap((m) => (m.role === 'tool' ? m.results.map((r) => r.content) : []));
    expect(results).toEqual([expect.stringMatching(/^read /), 'wrote 1']);
  });

  test('Anthropic: message_delta with its stop_reason but no message_stop is still cut', async () => {
    const s = script('anthropic');
    const counts = { reads: 0, writes: 0 };
    const { summary } = await runTurn({
      format: 'anthropic',
      stream: () => stream([...s.body, s.terminal[0]!], false),
      tools: tools(counts),
      policy: { maxAttempts: 1 },
    });
    expect(summary.outcome).toBe('failed');
    expect(summary.error).toMatchObject({ type: 'stream_truncated', message: expect.stringContaining('message_stop') });
    expect(counts.writes).toBe(0);
  });

  test('Chat: [DONE] without a finish_reason is cut; a finish_reason without [DONE] is finished', async () => {
    const s = script('openai-chat');
    const counts = { reads: 0, writes: 0 };
    const cut = await runTurn({ format: 'openai-chat', stream: () => stream([...s.body, 'data: [DONE]\n\n'], false), tools: tools(counts), policy: { maxAttempts: 1 } });
    expect(cut.summary).toMatchObject({ outcome: 'failed', error: { type: 'stream_truncated' } });
    expect(counts.writes).toBe(0);
    const ok = await runTurn({ format: 'openai-chat', stream: () => stream([...s.body, s.terminal[0]!], false), tools: tools(counts), policy: { maxAttempts: 1 } });
    expect(ok.summary.outcome).toBe('done');
    expect(counts.writes).toBe(1);
  });

  test('SDK event objects: the same rule (an AI SDK stream without its finish part is cut)', async () => {
    const parts = [
      { type: 'start' },
      { type: 'start-step' },
      { type: 'tool-input-start', id: 'w1', toolName: 'write_file' },
      { type: 'tool-input-delta', id: 'w1', delta: WRITE_ARGS },
      { type: 'tool-input-end', id: 'w1' },
      { type: 'tool-call', toolCallId: 'w1', toolName: 'write_file', input: JSON.parse(WRITE_ARGS) },
      { type: 'finish-step', finishReason: 'tool-calls' },
    ];
    const counts = { reads: 0, writes: 0 };
    const { summary } = await runTurn({ format: 'ai-sdk', stream: () => parts, tools: tools(counts), policy: { maxAttempts: 1 } });
    expect(summary).toMatchObject({ outcome: 'failed', error: { type: 'stream_truncated', message: expect.stringContaining('a finish part') } });
    expect(counts.writes).toBe(0);
    const done = await runTurn({ format: 'ai-sdk', stream: () => [...parts, { type: 'finish', finishReason: 'tool-calls' }], tools: tools(counts), policy: { maxAttempts: 1 } });
    expect(done.summary.outcome).toBe('done');
    expect(counts.writes).toBe(1);
  });
});

describe('SPEC §12 in runTurn: a body that is not an event stream is bad_stream (not retried), never an empty done', () => {
  let srv: http.Server;
  let url = '';
  const bodies: Record<string, { type: string; body: string }> = {
    unary: { type: 'application/json', body: JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'w1', type: 'function', function: { name: 'write_file', arguments: WRITE_ARGS } }] }, finish_reason: 'tool_calls' }] }) },
    html: { type: 'text/html; charset=utf-8', body: '<!doctype html><html><head><title>Sign in</title></head><body>Please log in</body></html>' },
    empty: { type: 'text/event-stream', body: '' },
    jsonError: { type: 'application/json', body: JSON.stringify({ error: { message: 'model not loaded', type: 'server_error' } }) },
    noise: { type: 'text/plain', body: `${'INFO loading model shard\n'.repeat(2000)}data: ${JSON.stringify({ id: 'c', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n` },
  };
  beforeAll(async () => {
    srv = http.createServer((req, res) => {
      const b = bodies[(req.url ?? '/').slice(1)]!;
      res.writeHead(200, { 'content-type': b.type });
      res.end(b.body);
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    srv.closeAllConnections();
    await new Promise((r) => srv.close(r));
  });

  const cases: [string, RegExp][] = [
    ['unary', /content-type application\/json.*|did you forget stream: true\?/],
    ['html', /HTML.*content-type text\/html; charset=utf-8, starts with "<!doctype html>/],
    ['empty', /response body was empty/],
    ['jsonError', /JSON error body, not an SSE event stream \(content-type application\/json, starts with .*model not loaded/],
    ['noise', /not an SSE event stream \(content-type text\/plain, starts with "INFO loading model shard/],
  ];
  test.each(cases)('%s over fetch → failed bad_stream on the first attempt, saying what arrived', async (name, message) => {
    const counts = { reads: 0, writes: 0 };
    let opened = 0;
    const { summary } = await runTurn({
      format: 'openai-chat',
      stream: () => {
        opened++;
        return fetch(`${url}/${name}`);
      },
      tools: tools(counts),
      policy: { maxAttempts: 3, retryBaseMs: 1 },
    });
    expect(summary.outcome).toBe('failed');
    expect(summary.error?.type).toBe('bad_stream');
    expect(summary.error?.message).toMatch(message);
    expect(opened).toBe(1); // not retryable
    expect(summary.history).toEqual([]);
    expect(counts.writes).toBe(0);
  });

  test('the unary body says "did you forget stream: true?"', async () => {
    const { summary } = await runTurn({ format: 'openai-chat', stream: () => fetch(`${url}/unary`), tools: [], policy: { maxAttempts: 1 } });
    expect(summary.error?.message).toContain('looks like a non-streaming completion: did you forget stream: true?');
    expect(summary.error?.message).toContain('content-type application/json');
  });

  test.each([
    ['openai-chat', JSON.parse(bodies.unary!.body) as unknown],
    ['anthropic', { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [{ type: 'tool_use', id: 'w1', name: 'write_file', input: {} }], stop_reason: 'tool_use' }],
    ['openai-responses', { id: 'resp_1', object: 'response', status: 'completed', output: [] }],
  ] as const)('%s: the unary completion object passed as the stream (alone or in an array) → bad_stream naming stream: true', async (format, unary) => {
    for (const source of [unary, [unary]]) {
      const { summary } = await runTurn({ format, stream: source as never, tools: [], policy: { maxAttempts: 2, retryBaseMs: 1 } });
      expect(summary).toMatchObject({ outcome: 'failed', attempts: 1, error: { type: 'bad_stream', message: expect.stringContaining('did you forget stream: true?') } });
    }
  });
});
