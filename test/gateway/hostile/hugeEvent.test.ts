/**
 * Issue 18: ONE huge upstream SSE event (a tool call's whole arguments in one event, as Gemini
 * sends them and Anthropic/OpenAI backends may) must not block the gateway's event loop. Against
 * a real `sluice serve` child per backend format (anthropic, openai-chat, openai-responses,
 * gemini) and a hostile upstream (in this file) that answers with one event carrying the whole
 * arguments — file content with quotes, backslashes, newlines, non-ASCII and surrogate pairs, so
 * escaped on the wire — written as fast as the gateway reads it:
 *
 * - the arguments reach the client byte-identical, on each inbound route;
 * - /health answers within 1 s throughout;
 * - the loop stays free: the main thread's CPU between two 5 ms ticks (`heldMs`, loopProbe.ts,
 *   load-independent) stays under HELD_BOUND_MS. The whole-event path (before src/wire/pieces.ts)
 *   held it ~0.4 s of CPU for one 16 MiB event, 0.5–2.7 s of wall time on a loaded machine.
 *
 * The same for ONE huge text event (issue 27: assistant text in one event — Anthropic
 * `text_delta`, Chat `delta.content`, Responses `output_text.delta`, a Gemini text part): the text
 * reaches the client identical on each route, /health within 1 s, the loop under the same bound.
 *
 * CI size: 8 MiB of arguments / text per backend format; SLUICE_HEAVY=1: 16 MiB, and every backend
 * on a second inbound route; `SLUICE_HUGE_MIB=60` (with SLUICE_HEAVY=1) sets the size (the heavy
 * script's 60 MiB events). Each case prints one `[hugeEvent] {…}` line when heavy (or with
 * SLUICE_SHOW_LOOP=1): held loop, wall delay, slowest /health, the child's RSS before, at its peak
 * and 2 s after. The client's answer is parsed only after /health polling stopped: its decoding
 * blocks this process, not the gateway.
 */
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { type ChildGateway, sampleRss, spawnGateway, watchHealth } from './clients';
import { loopProbeFile } from './loopProbeFile';

const HEAVY = process.env.SLUICE_HEAVY === '1';
/** Another build's CLI to run instead of this tree's sources (e.g. an older commit's dist/src/cli/main.js: the suite fails there). */
const CLI = process.env.SLUICE_HUGE_CLI;
jest.setTimeout(HEAVY ? 600_000 : 240_000);

const MiB = 1024 * 1024;
const ARG_BYTES = (Number(process.env.SLUICE_HUGE_MIB) || (HEAVY ? 16 : 8)) * MiB;
/**
 * The bound on the main thread's CPU between two ticks (ms): ~2× what is measured. Goal ~50 ms
 * (issue 18); measured 17–42 ms at 16 MiB (all 8 heavy cases) and 23–47 ms at 8 MiB, load ~4.5,
 * GC included, once strings stayed under V8's regular-object size (encoder pieces, raw unescape
 * slices) and the decode stage yields the loop every 256 KiB (33–174 ms before that). The
 * whole-event path (1378eed) held it 571–1420 ms.
 */
const HELD_BOUND_MS = 100;
/**
 * Gemini text is held until its part is read (the `thought` flag and the signature follow the
 * text: src/wire/pieces.ts) and comes out as one read's events at the event's end; the decode stage
 * feeds them TURN_CHARS (512 Ki chars) per turn of the event loop (src/gateway/exchange/decode.ts),
 * so it is bounded like the rest (60 MiB: held 15–20 ms, /health 28–40 ms; one stretch of 632–842 ms
 * before). The /v1/responses route's end past 16 MiB of text, whatever the backend, is the known
 * stretch docs/limits.md describes: its closing frames repeat the item's whole text, escaped and
 * encoded once, in one stretch (16 MiB: 70–76 ms, 60 MiB: 208–237 ms); that case checks the text
 * and reports its figures.
 */
const KNOWN_STRETCH = (_format: Backend, route: string): boolean => ARG_BYTES > 16 * MiB && route === '/v1/responses';

type Backend = 'anthropic' | 'openai-chat' | 'openai-responses' | 'gemini';
const BACKENDS: Backend[] = ['anthropic', 'openai-chat', 'openai-responses', 'gemini'];

/** The call's arguments: about `chars` of JSON text, whose `content` string needs escaping again on the wire. */
function makeArgs(chars: number): string {
  const line = 'const s = "a\\tb\\\\c"; // é ü 😀 \u2028 <tag> \'q\'\n';
  return JSON.stringify({ path: '/big.ts', content: line.repeat(Math.ceil(chars / (JSON.stringify(line).length - 2))) });
}

const ARGS = makeArgs(ARG_BYTES);

/** The assistant text of the text cases: about ARG_BYTES chars once escaped on the wire (quotes, backslashes, newlines, non-ASCII, pairs). */
const TEXT_UNIT = 'She said "a\\tb" — é ü 😀 \u2028 <tag>\n\t';
const TEXT = TEXT_UNIT.repeat(Math.ceil(ARG_BYTES / (JSON.stringify(TEXT_UNIT).length - 2)));

const frame = (data: unknown, event?: string): string => `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;

/** The backend's whole answer: one huge event carrying the call's arguments. */
function answer(format: Backend): string {
  switch (format) {
    case 'anthropic':
      return [
        frame({ type: 'message_start', message: { id: 'msg_h', type: 'message', role: 'assistant', model: 'h', content: [], usage: { input_tokens: 5, output_tokens: 1 } } }, 'message_start'),
        frame({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_h', name: 'write_file', input: {} } }, 'content_block_start'),
        frame({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: ARGS } }, 'content_block_delta'),
        frame({ type: 'content_block_stop', index: 0 }, 'content_block_stop'),
        frame({ type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 9 } }, 'message_delta'),
        frame({ type: 'message_stop' }, 'message_stop'),
      ].join('');
    case 'openai-chat':
      return [
        frame({ id: 'c', object: 'chat.completion.chunk', model: 'h', choices: [{ index: 0, delta: { role: 'assistant', tool_calls: [{ index: 0, id: 'call_h', type: 'function', function: { name: 'write_file', arguments: ARGS } }] }, finish_reason: null }] }),
        frame({ id: 'c', object: 'chat.completion.chunk', model: 'h', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] }),
        'data: [DONE]\n\n',
      ].join('');
    case 'openai-responses': {
      const item = { id: 'fc_h', type: 'function_call', status: 'completed', arguments: ARGS, call_id: 'call_h', name: 'write_file' };
      return [
        frame({ type: 'response.created', response: { id: 'resp_h', model: 'h', status: 'in_progress', output: [] } }, 'response.created'),
        frame({ type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress', arguments: '' } }, 'response.output_item.added'),
        frame({ type: 'response.function_call_arguments.delta', item_id: 'fc_h', output_index: 0, delta: ARGS }, 'response.function_call_arguments.delta'),
        frame({ type: 'response.function_call_arguments.done', item_id: 'fc_h', output_index: 0, arguments: ARGS }, 'response.function_call_arguments.done'),
        frame({ type: 'response.output_item.done', output_index: 0, item }, 'response.output_item.done'),
        frame({ type: 'response.completed', response: { id: 'resp_h', model: 'h', status: 'completed', output: [item], usage: { input_tokens: 5, output_tokens: 9, total_tokens: 14 } } }, 'response.completed'),
      ].join('');
    }
    case 'gemini':
      return frame({
        candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: 'write_file', args: JSON.parse(ARGS) as unknown } }] }, finishReason: 'STOP', index: 0 }],
        usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 9, totalTokenCount: 14 },
        modelVersion: 'h',
        responseId: 'r_h',
      });
  }
}

/** The backend's whole answer to a text request: one huge event carrying the assistant text. */
function textAnswer(format: Backend): string {
  switch (format) {
    case 'anthropic':
      return [
        frame({ type: 'message_start', message: { id: 'msg_t', type: 'message', role: 'assistant', model: 'h', content: [], usage: { input_tokens: 5, output_tokens: 1 } } }, 'message_start'),
        frame({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start'),
        frame({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: TEXT } }, 'content_block_delta'),
        frame({ type: 'content_block_stop', index: 0 }, 'content_block_stop'),
        frame({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 9 } }, 'message_delta'),
        frame({ type: 'message_stop' }, 'message_stop'),
      ].join('');
    case 'openai-chat':
      return [
        frame({ id: 'c', object: 'chat.completion.chunk', model: 'h', choices: [{ index: 0, delta: { role: 'assistant', content: TEXT }, finish_reason: null }] }),
        frame({ id: 'c', object: 'chat.completion.chunk', model: 'h', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
        'data: [DONE]\n\n',
      ].join('');
    case 'openai-responses':
      return [
        frame({ type: 'response.created', response: { id: 'resp_t', model: 'h', status: 'in_progress', output: [] } }, 'response.created'),
        frame({ type: 'response.output_item.added', output_index: 0, item: { id: 'msg_t', type: 'message', role: 'assistant', status: 'in_progress', content: [] } }, 'response.output_item.added'),
        frame({ type: 'response.output_text.delta', item_id: 'msg_t', output_index: 0, content_index: 0, delta: TEXT }, 'response.output_text.delta'),
        frame({ type: 'response.completed', response: { id: 'resp_t', model: 'h', status: 'completed', usage: { input_tokens: 5, output_tokens: 9, total_tokens: 14 } } }, 'response.completed'),
      ].join('');
    case 'gemini':
      return frame({
        candidates: [{ content: { role: 'model', parts: [{ text: TEXT }] }, finishReason: 'STOP', index: 0 }],
        usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 9, totalTokenCount: 14 },
        modelVersion: 'h',
        responseId: 'r_t',
      });
  }
}

/** One upstream for every format: the request path says which API the gateway speaks, its text which answer. */
async function startUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  // As UTF-8 bytes: 1 MiB slices of the string could cut a surrogate pair, each half then written as U+FFFD.
  const bodies = new Map(BACKENDS.map((f) => [f, Buffer.from(answer(f), 'utf8')]));
  const texts = new Map(BACKENDS.map((f) => [f, Buffer.from(textAnswer(f), 'utf8')]));
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const p = req.url ?? '';
      const format: Backend = p.includes(':streamGenerateContent') ? 'gemini' : p.endsWith('/messages') ? 'anthropic' : p.endsWith('/responses') ? 'openai-responses' : 'openai-chat';
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const text = (Buffer.concat(parts).includes('say it') ? texts : bodies).get(format)!;
      // 1 MiB writes with backpressure: as fast as the gateway reads.
      let at = 0;
      const pump = (): void => {
        while (at < text.length && !res.destroyed) {
          const ok = res.write(text.subarray(at, at + MiB));
          at += MiB;
          if (!ok) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

const TOOL = { name: 'write_file', description: 'write a file', input_schema: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } } } };
const FN = { type: 'function', name: 'write_file', parameters: TOOL.input_schema };

function body(route: string, ask = 'write it'): Record<string, unknown> {
  if (route === '/v1/messages') return { model: 'h', max_tokens: 256, stream: true, messages: [{ role: 'user', content: ask }], tools: [TOOL] };
  if (route === '/v1/chat/completions') return { model: 'h', max_tokens: 256, stream: true, messages: [{ role: 'user', content: ask }], tools: [{ type: 'function', function: { name: FN.name, parameters: FN.parameters } }] };
  return { model: 'h', max_output_tokens: 256, stream: true, input: ask, tools: [FN] };
}

/**
 * POST and keep the answer's bytes as they came: nothing is decoded or parsed until the caller
 * asks (`text()`), so this process's own event loop stays free while /health is being polled.
 */
function rawPost(url: string, route: string, payload: unknown): Promise<{ status: number; failed?: string; text(): string }> {
  return new Promise((resolve) => {
    const req = http.request(url + route, { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: () => Buffer.concat(parts).toString('utf8') }));
      res.on('error', (e) => resolve({ status: res.statusCode ?? 0, failed: e.message, text: () => '' }));
    });
    req.setTimeout(120_000, () => req.destroy(new Error('client timeout')));
    req.on('error', (e) => resolve({ status: 0, failed: e.message, text: () => '' }));
    req.end(JSON.stringify(payload));
  });
}

/** The SSE frames' data (one string per frame). */
function frameData(text: string): string[] {
  const out: string[] = [];
  for (const block of text.split('\n\n')) {
    const data = block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart());
    if (data.length > 0) out.push(data.join('\n'));
  }
  return out;
}

/** The call's argument text as the client received it on `route`. */
function clientArgs(route: string, text: string): string[] {
  const calls: string[] = [];
  for (const data of frameData(text)) {
    const f = { data };
    if (f.data === '[DONE]') continue;
    const d = JSON.parse(f.data) as Record<string, unknown>;
    if (route === '/v1/messages') {
      if (d.type === 'content_block_start' && (d.content_block as { type: string }).type === 'tool_use') calls.push('');
      const delta = d.delta as { type?: string; partial_json?: string } | undefined;
      if (d.type === 'content_block_delta' && delta?.type === 'input_json_delta') calls[calls.length - 1] += delta.partial_json!;
    } else if (route === '/v1/chat/completions') {
      const tcs = ((d.choices as { delta?: { tool_calls?: { index: number; function?: { arguments?: string } }[] } }[] | undefined)?.[0]?.delta?.tool_calls) ?? [];
      for (const tc of tcs) calls[tc.index] = (calls[tc.index] ?? '') + (tc.function?.arguments ?? '');
    } else {
      if (d.type === 'response.output_item.added' && (d.item as { type: string }).type === 'function_call') calls.push('');
      if (d.type === 'response.function_call_arguments.delta') calls[calls.length - 1] += d.delta as string;
      if (d.type === 'response.function_call_arguments.done') expect(d.arguments === calls[calls.length - 1]).toBe(true);
    }
  }
  return calls;
}

/** The assistant text as the client received it on `route`. */
function clientText(route: string, text: string): string {
  const out: string[] = [];
  for (const data of frameData(text)) {
    if (data === '[DONE]') continue;
    const d = JSON.parse(data) as Record<string, unknown>;
    if (route === '/v1/messages') {
      const delta = d.delta as { type?: string; text?: string } | undefined;
      if (d.type === 'content_block_delta' && delta?.type === 'text_delta') out.push(delta.text!);
    } else if (route === '/v1/chat/completions') {
      const content = (d.choices as { delta?: { content?: string } }[] | undefined)?.[0]?.delta?.content;
      if (typeof content === 'string') out.push(content);
    } else if (d.type === 'response.output_text.delta') out.push(d.delta as string);
  }
  return out.join('');
}

let upstream: { url: string; close(): Promise<void> };
const gateways = new Map<Backend, ChildGateway>();
const cursors = new Map<Backend, number>();

interface Loop {
  loopMaxMs: number;
  heldMs: number;
}

/** The child's loop since the last call (loopProbe.ts lines). */
function loopSinceLast(f: Backend): Loop {
  const gw = gateways.get(f)!;
  const r: Loop = { loopMaxMs: 0, heldMs: NaN };
  let i = cursors.get(f) ?? 0;
  for (; i < gw.stderr.length; i++) {
    const m = /^sluice-loop-probe (\{.*\})$/.exec(gw.stderr[i]!);
    if (!m) continue;
    const p = JSON.parse(m[1]!) as { maxMs: number; heldMs?: number };
    r.loopMaxMs = Math.max(r.loopMaxMs, p.maxMs);
    if (p.heldMs !== undefined) r.heldMs = Math.max(Number.isNaN(r.heldMs) ? 0 : r.heldMs, p.heldMs);
  }
  cursors.set(f, i);
  return r;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  upstream = await startUpstream();
  // spawnGateway runs plain node on the cached transpile of the sources (test/journal/childBuild.ts);
  // one child at a time so they do not starve this 2-core machine.
  for (const f of BACKENDS) {
    const gw = await spawnGateway(
      ['--upstream', upstream.url, '--upstream-format', f, '--port', '0', '--idle-timeout', '20000', '--log-level', 'warn'],
      {},
      { preload: [loopProbeFile(true)], ...(CLI ? { cli: CLI } : {}) },
    );
    gateways.set(f, gw);
  }
});

afterAll(async () => {
  for (const gw of gateways.values()) await gw.stop();
  await upstream?.close();
});

// Each backend format answers one inbound route per case (every route is covered, and each backend
// goes through the piecewise path of its own adapter); the warm-up request compiles the whole path first.
const CASES: [Backend, string][] = [
  ['anthropic', '/v1/chat/completions'],
  ['openai-chat', '/v1/messages'],
  ['openai-responses', '/v1/responses'],
  ['gemini', '/v1/messages'],
  ...(HEAVY ? ([['anthropic', '/v1/responses'], ['openai-chat', '/v1/chat/completions'], ['openai-responses', '/v1/messages'], ['gemini', '/v1/chat/completions']] as [Backend, string][]) : []),
];

const toMiB = (bytes: number | undefined): number => Math.round((bytes ?? 0) / 104857.6) / 10;

/**
 * One huge-event request against the child (after a warm-up): the answer as it came, /health
 * throughout, the loop since the request started, the child's RSS before, at its peak and 2 s after.
 */
async function measure(format: Backend, route: string, ask: string): Promise<{ r: Awaited<ReturnType<typeof rawPost>>; h: Awaited<ReturnType<ReturnType<typeof watchHealth>['stop']>>; loop: Loop; rss: { beforeMiB: number; peakMiB: number; afterMiB: number } }> {
  const gw = gateways.get(format)!;
  await rawPost(gw.url, route, body(route, ask)); // warm-up (the first request compiles the path)
  await sleep(300);
  loopSinceLast(format);
  const before = gw.rss();
  const peak = sampleRss(gw, 20);
  const health = watchHealth(gw.url);
  const r = await rawPost(gw.url, route, body(route, ask));
  const h = await health.stop(); // before this process decodes the answer (its own loop would be the slow one)
  await sleep(300); // one more probe line after the work
  const loop = loopSinceLast(format);
  await sleep(1700);
  const rss = { beforeMiB: toMiB(before), peakMiB: toMiB(peak.stop()), afterMiB: toMiB(gw.rss()) };
  return { r, h, loop, rss };
}

function report(kind: string, format: Backend, route: string, m: Awaited<ReturnType<typeof measure>>): void {
  if (HEAVY || process.env.SLUICE_SHOW_LOOP === '1') process.stdout.write(`[hugeEvent] ${JSON.stringify({ kind, format, route, mib: ARG_BYTES / MiB, ...m.loop, healthMaxMs: m.h.maxMs, ...m.rss })}\n`);
}

function expectLoopFree(format: Backend, route: string, m: Awaited<ReturnType<typeof measure>>, bound = HELD_BOUND_MS): void {
  const { h, loop } = m;
  expect({ failed: h.failed, slow: h.maxMs >= 1000, ...loop }).toEqual({ failed: [], slow: false, ...loop });
  const below = Number.isNaN(loop.heldMs) || loop.heldMs < bound;
  expect({ format, route, ...loop, below }).toEqual({ format, route, ...loop, below: true });
  expect(gateways.get(format)!.alive()).toBe(true);
}

describe(`one ${ARG_BYTES / MiB} MiB argument event from the backend`, () => {
  test.each(CASES)('%s backend → %s client: arguments byte-identical, /health within 1 s, the loop free', async (format, route) => {
    const m = await measure(format, route, 'write it');
    report('arguments', format, route, m);
    expect(m.r.failed).toBeUndefined();
    expect(m.r.status).toBe(200);
    const calls = clientArgs(route, m.r.text());
    expect(calls).toHaveLength(1);
    // Byte-identical (compared as a boolean: a 4–16 MiB diff would drown the report).
    expect({ length: calls[0]!.length, same: calls[0] === ARGS }).toEqual({ length: ARGS.length, same: true });
    expectLoopFree(format, route, m);
  });
});

describe(`one ${ARG_BYTES / MiB} MiB text event from the backend`, () => {
  test.each(CASES)('%s backend → %s client: the text identical, /health within 1 s, the loop free', async (format, route) => {
    const m = await measure(format, route, 'say it');
    report('text', format, route, m);
    expect(m.r.failed).toBeUndefined();
    expect(m.r.status).toBe(200);
    const got = clientText(route, m.r.text());
    let at = 0;
    while (at < got.length && got.charCodeAt(at) === TEXT.charCodeAt(at)) at++;
    const diff = at === got.length && got.length === TEXT.length ? {} : { firstDiffAt: at, got: JSON.stringify(got.slice(at - 8, at + 8)), want: JSON.stringify(TEXT.slice(at - 8, at + 8)) };
    expect({ length: got.length, ...diff }).toEqual({ length: TEXT.length });
    if (KNOWN_STRETCH(format, route)) expect(gateways.get(format)!.alive()).toBe(true);
    else expectLoopFree(format, route, m);
  });
});
