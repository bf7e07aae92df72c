/**
 * Gateway cost per inbound API: CPU per upstream chunk and chunks per second, for
 *   - `direct`     client ← upstream (one loopback hop; the floor: upstream + client + HTTP),
 *   - `sluice`     client ← sluice gateway ← upstream, for /v1/messages, /v1/chat/completions, /v1/responses,
 *   - `buffering`  client ← a plain buffering translation written here ← upstream: it reads the
 *                  whole upstream stream, parses every chunk, then writes that API's stream at
 *                  the end (what a converter without streaming dispatch does).
 * The upstream writes one OpenAI Chat turn per request (5 text chunks, 3 calls × 20 argument
 * fragments, finish, usage, [DONE]: 65 chunks), each chunk in its own `res.write`; the client
 * drains the body and checks the three call names arrived. Everything runs in this process, so
 * CPU is process CPU (user + system) for the whole run; `addedUsPerChunk` = row − direct, i.e. what
 * the translation layer costs per upstream chunk. Wall-clock chunks/s is at `concurrency`
 * requests in flight.
 *
 * Run: `npx ts-node --transpile-only bench/gatewayApis.ts` (or `node dist/bench/gatewayApis.js`).
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Logger } from '../src/gateway/log';
import { chatChunk } from '../src/gateway/scripted';
import { startGateway } from '../src/gateway/server';

export interface ApiRow {
  bench: 'direct' | 'sluice' | 'buffering';
  api: 'chat-upstream' | 'messages' | 'chat' | 'responses';
  requests: number;
  chunks: number;
  /** Process CPU per upstream chunk, microseconds. */
  cpuUsPerChunk: number;
  /** cpuUsPerChunk − the direct row's. */
  addedUsPerChunk: number;
  chunksPerS: number;
  wallMs: number;
  correct: number;
}

export interface BenchApisOptions {
  requests?: number;
  concurrency?: number;
}

const CALL_NAMES = ['read_file', 'grep', 'edit_file'];

function upstreamBody(): { text: string; chunks: number } {
  const frames: string[] = [];
  const push = (d: unknown): void => {
    frames.push(`data: ${d === '[DONE]' ? d : JSON.stringify(d)}\n\n`);
  };
  for (let i = 0; i < 5; i++) push(chatChunk({ content: `Some words of text, chunk ${i}. ` }));
  CALL_NAMES.forEach((name, index) => {
    const args = JSON.stringify({ path: `/src/module_${index}.ts`, pattern: 'parseConfig\\(', note: 'x'.repeat(120) });
    const step = Math.ceil(args.length / 20);
    push(chatChunk({ tool: { index, id: `call_${index}`, name, args: args.slice(0, step) } }));
    for (let k = step; k < args.length; k += step) push(chatChunk({ tool: { index, args: args.slice(k, k + step) } }));
  });
  push(chatChunk({ finish: 'tool_calls' }));
  push(chatChunk({ usage: { prompt_tokens: 100, completion_tokens: 200 } }));
  push('[DONE]');
  return { text: frames.join(''), chunks: frames.length };
}

function listen(server: http.Server): Promise<string> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

function close(server: http.Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((r) => server.close(() => r()));
}

/** The upstream: the same turn for every request, one `res.write` per chunk. */
async function startUpstream(frames: string[]): Promise<{ url: string; server: http.Server }> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const f of frames) res.write(f);
      res.end();
    });
  });
  return { url: await listen(server), server };
}

// ------------------------------------------------------------------ the plain buffering translation

interface Collected {
  text: string;
  calls: { name: string; args: string }[];
  usage?: { prompt_tokens: number; completion_tokens: number };
}

function collect(sse: string): Collected {
  const out: Collected = { text: '', calls: [] };
  for (const frame of sse.split('\n\n')) {
    const line = frame.trim();
    if (!line.startsWith('data: ')) continue;
    const data = line.slice(6);
    if (data === '[DONE]') break;
    const j = JSON.parse(data) as { choices?: { delta?: { content?: string; tool_calls?: { index: number; function?: { name?: string; arguments?: string } }[] } }[]; usage?: Collected['usage'] };
    if (j.usage) out.usage = j.usage;
    const d = j.choices?.[0]?.delta;
    if (!d) continue;
    if (d.content) out.text += d.content;
    for (const tc of d.tool_calls ?? []) {
      const c = (out.calls[tc.index] ??= { name: '', args: '' });
      if (tc.function?.name) c.name = tc.function.name;
      if (tc.function?.arguments) c.args += tc.function.arguments;
    }
  }
  return out;
}

function render(api: 'messages' | 'chat' | 'responses', c: Collected): string {
  const ev = (type: string, o: Record<string, unknown>): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...o })}\n\n`;
  const calls = c.calls.map((x) => ({ name: x.name, input: JSON.parse(x.args) as unknown, args: x.args }));
  if (api === 'messages') {
    let s = ev('message_start', { message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [], usage: { input_tokens: 0, output_tokens: 0 } } });
    s += ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
    s += ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: c.text } });
    s += ev('content_block_stop', { index: 0 });
    calls.forEach((x, i) => {
      s += ev('content_block_start', { index: i + 1, content_block: { type: 'tool_use', id: `toolu_${i}`, name: x.name, input: {} } });
      s += ev('content_block_delta', { index: i + 1, delta: { type: 'input_json_delta', partial_json: JSON.stringify(x.input) } });
      s += ev('content_block_stop', { index: i + 1 });
    });
    s += ev('message_delta', { delta: { stop_reason: 'tool_use' }, usage: { output_tokens: c.usage?.completion_tokens ?? 0 } });
    return s + ev('message_stop', {});
  }
  if (api === 'chat') {
    const chunk = (delta: unknown, finish: string | null = null): string =>
      `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    let s = chunk({ role: 'assistant', content: c.text });
    calls.forEach((x, i) => (s += chunk({ tool_calls: [{ index: i, id: `call_${i}`, type: 'function', function: { name: x.name, arguments: JSON.stringify(x.input) } }] })));
    return s + chunk({}, 'tool_calls') + 'data: [DONE]\n\n';
  }
  const items = [
    { type: 'message', id: 'msg_1', role: 'assistant', content: [{ type: 'output_text', text: c.text }] },
    ...calls.map((x, i) => ({ type: 'function_call', id: `fc_${i}`, call_id: `call_${i}`, name: x.name, arguments: JSON.stringify(x.input) })),
  ];
  let s = ev('response.created', { response: { id: 'r', status: 'in_progress', output: [] } });
  items.forEach((item, output_index) => {
    s += ev('response.output_item.added', { output_index, item });
    s += ev('response.output_item.done', { output_index, item });
  });
  return s + ev('response.completed', { response: { id: 'r', status: 'completed', output: items } });
}

/** A proxy that buffers the whole upstream answer, then translates it. */
async function startBuffering(api: 'messages' | 'chat' | 'responses', upstreamUrl: string): Promise<{ url: string; server: http.Server }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (b: Buffer) => parts.push(b));
    req.on('end', () => {
      JSON.parse(Buffer.concat(parts).toString('utf8'));
      const up = http.request(`${upstreamUrl}/v1/chat/completions`, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (ur) => {
        const body: Buffer[] = [];
        ur.on('data', (b: Buffer) => body.push(b));
        ur.on('end', () => {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.end(render(api, collect(Buffer.concat(body).toString('utf8'))));
        });
      });
      up.end(JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'go' }] }));
    });
  });
  return { url: await listen(server), server };
}

// ------------------------------------------------------------------ client and runner

const BODIES = {
  'chat-upstream': { path: '/v1/chat/completions', body: { model: 'm', stream: true, messages: [{ role: 'user', content: 'go' }] } },
  messages: { path: '/v1/messages', body: { model: 'm', max_tokens: 1000, stream: true, messages: [{ role: 'user', content: 'go' }] } },
  chat: { path: '/v1/chat/completions', body: { model: 'm', stream: true, messages: [{ role: 'user', content: 'go' }] } },
  responses: { path: '/v1/responses', body: { model: 'm', stream: true, input: 'go' } },
} as const;

function request(agent: http.Agent, base: string, api: ApiRow['api']): Promise<boolean> {
  const { path, body } = BODIES[api];
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${path}`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (b: Buffer) => parts.push(b));
      res.on('end', () => {
        const text = Buffer.concat(parts).toString('utf8');
        resolve(res.statusCode === 200 && CALL_NAMES.every((n) => text.includes(`"${n}"`)));
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

async function run(bench: ApiRow['bench'], api: ApiRow['api'], base: string, chunksPerRequest: number, o: Required<BenchApisOptions>): Promise<Omit<ApiRow, 'addedUsPerChunk'>> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: o.concurrency });
  // Warm-up (JIT, sockets).
  for (let i = 0; i < 20; i++) await request(agent, base, api);
  let next = 0;
  let correct = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: o.concurrency }, async () => {
      while (next < o.requests) {
        next++;
        if (await request(agent, base, api)) correct++;
      }
    }),
  );
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  agent.destroy();
  const chunks = o.requests * chunksPerRequest;
  return { bench, api, requests: o.requests, chunks, cpuUsPerChunk: (cpu.user + cpu.system) / chunks, chunksPerS: chunks / (wallMs / 1000), wallMs, correct };
}

export async function benchGatewayApis(opts: BenchApisOptions = {}): Promise<ApiRow[]> {
  const o: Required<BenchApisOptions> = { requests: opts.requests ?? 400, concurrency: opts.concurrency ?? 8 };
  const { text, chunks } = upstreamBody();
  const frames = text.split(/(?<=\n\n)/);
  const up = await startUpstream(frames);
  const rows: Omit<ApiRow, 'addedUsPerChunk'>[] = [];
  try {
    rows.push(await run('direct', 'chat-upstream', up.url, chunks, o));
    const gw = await startGateway({ upstream: `${up.url}/v1`, logger: new Logger('silent'), pingIntervalMs: 0 });
    try {
      // Warm the whole gateway path (JIT, the engine's machines) before the first measured row.
      const warm = new http.Agent({ keepAlive: true, maxSockets: o.concurrency });
      for (let i = 0; i < 150; i++) await request(warm, gw.url, (['messages', 'chat', 'responses'] as const)[i % 3]!);
      warm.destroy();
      for (const api of ['messages', 'chat', 'responses'] as const) rows.push(await run('sluice', api, gw.url, chunks, o));
    } finally {
      await gw.close();
    }
    for (const api of ['messages', 'chat', 'responses'] as const) {
      const b = await startBuffering(api, up.url);
      try {
        rows.push(await run('buffering', api, b.url, chunks, o));
      } finally {
        await close(b.server);
      }
    }
  } finally {
    await close(up.server);
  }
  const floor = rows[0]!.cpuUsPerChunk;
  return rows.map((r) => ({ ...r, addedUsPerChunk: r.cpuUsPerChunk - floor }));
}

export function formatApiRows(rows: ApiRow[]): string {
  const head = '| bench | inbound API | requests | chunks | CPU µs/chunk | added µs/chunk | chunks/s | correct |\n|---|---|---|---|---|---|---|---|';
  const body = rows
    .map((r) => `| ${r.bench} | ${r.api} | ${r.requests} | ${r.chunks} | ${r.cpuUsPerChunk.toFixed(2)} | ${r.bench === 'direct' ? '—' : r.addedUsPerChunk.toFixed(2)} | ${Math.round(r.chunksPerS)} | ${r.correct}/${r.requests} |`)
    .join('\n');
  return `${head}\n${body}`;
}

if (require.main === module) {
  benchGatewayApis().then(
    (rows) => process.stdout.write(formatApiRows(rows) + '\n'),
    (err: unknown) => {
      process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
