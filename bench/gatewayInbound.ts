/**
 * Gateway bench per inbound API: what `sluice serve` costs per upstream chunk, how many chunks
 * per second it moves, and when the first tool call reaches the client, for each inbound API
 * (Anthropic Messages, OpenAI Responses, OpenAI Chat Completions), next to
 *   - `direct`: the client reads the upstream itself (no process in between: the floor);
 *   - `pipe`: a process in between that copies the upstream's bytes unchanged (the cost of one
 *     HTTP hop with no translation at all);
 *   - `buffering`: a plain "translate at the end" gateway written here (`startBufferingTranslator`):
 *     it reads the whole upstream response, then writes it in the inbound API's format. This is
 *     what gateways that translate tool calls effectively do (the call reaches the client at the end).
 *
 * Every path gets the same scripted OpenAI-chat upstream turn (src/gateway/scripted.ts): a role
 * chunk, `textChunks` text chunks, `calls` tool calls whose arguments arrive in `argPieces` pieces,
 * finish, usage, [DONE]. Each request carries a tag that goes into the upstream's arguments, and
 * the client checks every response: the text, and each call's name and parsed arguments, in order.
 *
 * Processes: the bench process runs the upstream and the client; each middle (sluice, buffering,
 * pipe) runs in its own child process (`fork` of this file with `--child`), so its CPU is read
 * on its own: `process.cpuUsage()` in the child, asked over IPC before and after a phase.
 *   - middle CPU µs/chunk = the middle process's user+system CPU over the phase ÷ upstream chunks
 *     in the phase (so it includes its per-request work: HTTP in and out, request translation, GC);
 *     "of it system": the kernel's part, mostly socket I/O, which grows with the bytes written.
 *   - chunks/s = upstream chunks ÷ wall time with a fast upstream (every line at t=0) and a fast
 *     client, `requests` requests `concurrency` at a time; `rounds` rounds interleaved across the
 *     paths, median. The bench process (upstream + client) shares the machine with the middle: on
 *     a loaded machine chunks/s is bounded by whichever process gets a CPU; CPU µs/chunk much less so.
 *   - first call: a timed run (one chunk every `stepMs`, `timed` requests one at a time). `after
 *     completion` = client has call 0 − upstream wrote the chunk that completes call 0's arguments;
 *     `before end` = upstream wrote [DONE] − client has call 0 (positive: the client had the call
 *     that long before the stream ended). Medians. "Has call 0": messages `content_block_stop` of
 *     the first tool_use; responses `output_item.done` of the first function_call; chat the first
 *     `tool_calls` delta (sluice and the buffering translator both send a call's whole arguments in
 *     one chunk); direct and pipe: the arrival of the completing chunk itself.
 *
 * Run: `npx ts-node -T bench/run.ts --only gateway-inbound`, `npx ts-node -T bench/gatewayInbound.ts [--requests N
 * --rounds N --timed N --concurrency N --step-ms N --text N --calls N --pieces N]`,
 * or `node dist/bench/gatewayInbound.js` after `npm run build`.
 */
import { fork, type ChildProcess } from 'node:child_process';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import { performance } from 'node:perf_hooks';
import { baselineDist, baselineModule } from './baseline';
import { Logger } from '../src/gateway/log';
import { chatChunk, type ScriptLine, type ScriptedUpstream, startScriptedUpstream } from '../src/gateway/scripted';
import { startGateway } from '../src/gateway/server';

export type InboundApi = 'messages' | 'responses' | 'chat';
export type MiddlePath = 'direct' | 'pipe' | 'sluice' | 'buffering' | 'baseline';
const APIS: readonly InboundApi[] = ['messages', 'responses', 'chat'];

export interface InboundRow {
  path: MiddlePath;
  /** Inbound API the client speaks (direct and pipe: the upstream's own OpenAI chat stream). */
  api: InboundApi | 'upstream-chat';
  /** Requests in the throughput phase (all rounds). */
  requests: number;
  concurrency: number;
  /** Upstream chunks per request (SSE frames incl. [DONE]). */
  chunksPerRequest: number;
  shape: TurnShape;
  /** Middle process CPU (user+system) per upstream chunk, µs. Undefined for direct. */
  cpuUsPerChunk?: number;
  /** Of that, system (kernel) CPU: mostly socket I/O, which grows with the bytes written. */
  systemUsPerChunk?: number;
  /** Bench process (upstream + client) CPU per upstream chunk, µs. */
  benchCpuUsPerChunk: number;
  chunksPerSec: number;
  /** Timed run: client has call 0 − upstream wrote call 0's completing chunk, median ms. */
  firstCallAfterCompletionMs: number;
  /** Timed run: upstream wrote [DONE] − client has call 0, median ms (positive = before the end). */
  firstCallBeforeEndMs: number;
  /** Responses whose text and calls were all correct / responses checked (every phase). */
  correct: number;
  checked: number;
  load1: number;
  cpus: number;
}

export interface BenchGatewayInboundOptions {
  /** Requests per throughput round per path. Default 100. */
  requests?: number;
  /** Concurrent requests in the throughput phase. Default 8. */
  concurrency?: number;
  /** Throughput rounds (interleaved across paths; median reported). Default 3. */
  rounds?: number;
  /** Requests in the timed (first call) phase, one at a time. Default 8. */
  timed?: number;
  /** Milliseconds between upstream chunks in the timed phase. Default 2. */
  stepMs?: number;
  /** The upstream turn (default DEFAULT_SHAPE). */
  shape?: Partial<TurnShape>;
  /** Warm-up requests per path before the measured rounds. Default 25. */
  warmup?: number;
  /** Middles to run (default all but baseline; `direct` always runs). A text flood needs only pipe and sluice. */
  paths?: readonly MiddlePath[];
  /** Inbound APIs to run (default all three), e.g. one route under `--cpu-prof`. */
  apis?: readonly InboundApi[];
  /** A built tree of another commit (bench/baseline.ts `baselineDist`): its gateway runs as the `baseline` middle. */
  baselineDist?: string;
  /** Run `sluice` from this built tree too (e.g. `baselineDist('HEAD')`), so both sides are tsc builds. Default: this checkout's sources. */
  currentDist?: string;
  log?: (s: string) => void;
}

/** The upstream turn's size. Default 20 text chunks, 4 calls in 6 argument pieces each (52 chunks). */
export interface TurnShape {
  textChunks: number;
  calls: number;
  argPieces: number;
}

export const DEFAULT_SHAPE: TurnShape = { textChunks: 20, calls: 4, argPieces: 6 };
const TOOL_NAME = 'read_file';

// ------------------------------------------------------------------ the turn

/** Call j's arguments; the note grows with the number of pieces so every piece has a few bytes. */
function argsFor(tag: string, j: number, shape: TurnShape): string {
  return JSON.stringify({ path: `/${tag}/src/file_${j}.ts`, offset: j * 100, limit: 200, note: 'n'.repeat(shape.argPieces * 8) });
}

function textFor(k: number): string {
  return `word${k} `;
}

interface Turn {
  lines: ScriptLine[];
  /** Line index of the chunk that completes call 0's arguments. */
  call0Line: number;
}

/** The upstream turn for one request; line i at `t = i × stepMs`. */
export function turnScript(tag: string, stepMs: number, shape: TurnShape = DEFAULT_SHAPE): Turn {
  const lines: ScriptLine[] = [];
  let t = 0;
  const push = (data: unknown): number => {
    lines.push({ t, raw: `data: ${data === '[DONE]' ? data : JSON.stringify(data)}\n\n` });
    t += stepMs;
    return lines.length - 1;
  };
  push(chatChunk({ content: '' }));
  for (let k = 0; k < shape.textChunks; k++) push(chatChunk({ content: textFor(k) }));
  let call0Line = -1;
  for (let j = 0; j < shape.calls; j++) {
    push(chatChunk({ tool: { index: j, id: `call_${j}`, name: TOOL_NAME, args: '' } }));
    const a = argsFor(tag, j, shape);
    const step = Math.ceil(a.length / shape.argPieces);
    for (let p = 0; p < a.length; p += step) {
      const at = push(chatChunk({ tool: { index: j, args: a.slice(p, p + step) } }));
      if (j === 0) call0Line = at;
    }
  }
  push(chatChunk({ finish: 'tool_calls' }));
  push(chatChunk({ usage: { prompt_tokens: 100, completion_tokens: 60 } }));
  push('[DONE]');
  return { lines, call0Line };
}

// ------------------------------------------------------------------ SSE framing (client and translator)

/** Cuts SSE text into frames without rescanning what was already cut; `onData` gets each `data:` payload. */
class FrameSplitter {
  private buf = '';
  constructor(private readonly onData: (data: string) => void) {}
  push(chunk: string): void {
    this.buf += chunk;
    let start = 0;
    let cut: number;
    while ((cut = this.buf.indexOf('\n\n', start)) >= 0) {
      const frame = this.buf.slice(start, cut);
      start = cut + 2;
      let i = frame.startsWith('data: ') ? 0 : frame.indexOf('\ndata: ');
      if (i < 0) continue;
      if (i > 0) i += 1;
      const end = frame.indexOf('\n', i);
      this.onData(frame.slice(i + 6, end < 0 ? undefined : end));
    }
    if (start > 0) this.buf = this.buf.slice(start);
  }
}

// ------------------------------------------------------------------ the buffering translator

interface ChatToolIn {
  type: 'function';
  function: { name: string; description?: string; parameters?: unknown };
}

type Json = Record<string, unknown>;

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p: { text?: unknown }) => (typeof p?.text === 'string' ? p.text : '')).join('');
  return '';
}

/** Inbound request → upstream OpenAI chat request (the fields this bench's clients send). */
function toChatRequest(api: InboundApi, body: Json): Json {
  if (api === 'chat') return { ...body, stream: true, stream_options: { include_usage: true } };
  const messages: { role: string; content: string }[] = [];
  let tools: ChatToolIn[];
  if (api === 'messages') {
    if (body.system !== undefined) messages.push({ role: 'system', content: textOf(body.system) });
    for (const m of (body.messages as { role: string; content: unknown }[] | undefined) ?? []) messages.push({ role: m.role, content: textOf(m.content) });
    tools = ((body.tools as { name: string; description?: string; input_schema?: unknown }[] | undefined) ?? []).map((t) => ({
      type: 'function',
      function: { name: t.name, description: t.description, parameters: t.input_schema },
    }));
  } else {
    if (typeof body.instructions === 'string') messages.push({ role: 'system', content: body.instructions });
    const input = body.input;
    if (typeof input === 'string') messages.push({ role: 'user', content: input });
    else for (const m of (input as { role: string; content: unknown }[] | undefined) ?? []) messages.push({ role: m.role, content: textOf(m.content) });
    tools = ((body.tools as { type: string; name: string; description?: string; parameters?: unknown }[] | undefined) ?? [])
      .filter((t) => t.type === 'function')
      .map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } }));
  }
  return { model: body.model, stream: true, stream_options: { include_usage: true }, messages, tools, max_tokens: body.max_tokens ?? body.max_output_tokens };
}

interface Buffered {
  text: string;
  calls: { id: string; name: string; args: string }[];
  finish: string | null;
  usage: { prompt_tokens: number; completion_tokens: number };
}

/** The upstream's whole chat stream, accumulated. */
function accumulate(body: string): Buffered {
  const out: Buffered = { text: '', calls: [], finish: null, usage: { prompt_tokens: 0, completion_tokens: 0 } };
  const parts: string[] = [];
  const byIndex = new Map<number, { id: string; name: string; args: string[] }>();
  new FrameSplitter((data) => {
    if (data === '[DONE]') return;
    const c = JSON.parse(data) as {
      choices?: { delta?: { content?: string | null; tool_calls?: { index: number; id?: string; function?: { name?: string; arguments?: string } }[] }; finish_reason?: string | null }[];
      usage?: Buffered['usage'] | null;
    };
    if (c.usage) out.usage = c.usage;
    const ch = c.choices?.[0];
    if (!ch) return;
    if (ch.finish_reason) out.finish = ch.finish_reason;
    if (typeof ch.delta?.content === 'string') parts.push(ch.delta.content);
    for (const tc of ch.delta?.tool_calls ?? []) {
      let call = byIndex.get(tc.index);
      if (!call) byIndex.set(tc.index, (call = { id: tc.id ?? `call_${tc.index}`, name: '', args: [] }));
      if (tc.function?.name) call.name = tc.function.name;
      if (tc.function?.arguments) call.args.push(tc.function.arguments);
    }
  }).push(body + '\n\n');
  out.text = parts.join('');
  for (const [, c] of [...byIndex].sort((a, b) => a[0] - b[0])) out.calls.push({ id: c.id, name: c.name, args: c.args.join('') });
  return out;
}

/** Buffered chat turn → the inbound API's SSE stream, all at once. Calls whose arguments are not a JSON object are dropped. */
export function encodeBuffered(api: InboundApi, b: Buffered, model: string): string {
  const calls = b.calls.flatMap((c) => {
    try {
      const input: unknown = JSON.parse(c.args || '{}');
      return input !== null && typeof input === 'object' && !Array.isArray(input) ? [{ ...c, input: input as Json }] : [];
    } catch {
      return [];
    }
  });
  const out: string[] = [];
  const ev = (type: string, data: Json): void => {
    out.push(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  };
  if (api === 'messages') {
    ev('message_start', { message: { id: 'msg_buffered', type: 'message', role: 'assistant', model, content: [], stop_reason: null, usage: { input_tokens: b.usage.prompt_tokens, output_tokens: 0 } } });
    let index = 0;
    if (b.text) {
      ev('content_block_start', { index, content_block: { type: 'text', text: '' } });
      ev('content_block_delta', { index, delta: { type: 'text_delta', text: b.text } });
      ev('content_block_stop', { index: index++ });
    }
    for (const c of calls) {
      ev('content_block_start', { index, content_block: { type: 'tool_use', id: `toolu_${c.id}`, name: c.name, input: {} } });
      ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(c.input) } });
      ev('content_block_stop', { index: index++ });
    }
    ev('message_delta', { delta: { stop_reason: calls.length ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: b.usage.completion_tokens } });
    ev('message_stop', {});
  } else if (api === 'responses') {
    const output: Json[] = [];
    const response = (status: string): Json => ({ id: 'resp_buffered', object: 'response', model, status, output });
    ev('response.created', { response: response('in_progress') });
    if (b.text) {
      const item = { type: 'message', id: 'msg_buffered', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: b.text, annotations: [] }] };
      ev('response.output_item.added', { output_index: 0, item: { ...item, content: [], status: 'in_progress' } });
      ev('response.output_text.delta', { item_id: item.id, output_index: 0, content_index: 0, delta: b.text });
      ev('response.output_item.done', { output_index: 0, item });
      output.push(item);
    }
    for (const c of calls) {
      const item = { type: 'function_call', id: `fc_${c.id}`, call_id: c.id, name: c.name, arguments: JSON.stringify(c.input), status: 'completed' };
      const output_index = output.length;
      ev('response.output_item.added', { output_index, item: { ...item, arguments: '', status: 'in_progress' } });
      ev('response.function_call_arguments.done', { item_id: item.id, output_index, arguments: item.arguments });
      ev('response.output_item.done', { output_index, item });
      output.push(item);
    }
    ev('response.completed', { response: { ...response('completed'), usage: { input_tokens: b.usage.prompt_tokens, output_tokens: b.usage.completion_tokens } } });
  } else {
    const chunk = (delta: Json, finish: string | null = null): void => {
      out.push(`data: ${JSON.stringify({ id: 'chatcmpl-buffered', object: 'chat.completion.chunk', created: 0, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
    };
    chunk({ role: 'assistant', content: '' });
    if (b.text) chunk({ content: b.text });
    calls.forEach((c, index) => chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.input) } }] }));
    chunk({}, calls.length ? 'tool_calls' : (b.finish ?? 'stop'));
    out.push('data: [DONE]\n\n');
  }
  return out.join('');
}

export interface Middle {
  /** Base URL without a trailing slash, e.g. http://127.0.0.1:41234 */
  url: string;
  close(): Promise<void>;
}

function listen(server: http.Server): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  });
}

function closer(server: http.Server, agent: http.Agent): () => Promise<void> {
  return () => {
    agent.destroy();
    server.closeAllConnections();
    return new Promise((r) => server.close(() => r()));
  };
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

function fail(res: http.ServerResponse, status: number, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { message } }));
}

const ROUTES: Record<string, InboundApi> = { '/v1/messages': 'messages', '/v1/responses': 'responses', '/v1/chat/completions': 'chat' };

/**
 * A plain "translate at the end" gateway for the three inbound APIs in front of an OpenAI chat
 * upstream (`upstream` = base URL ending in /v1): the request is translated, the whole upstream
 * response read, then converted and written in one go.
 */
export async function startBufferingTranslator(upstream: string): Promise<Middle> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  const server = http.createServer((req, res) => {
    const api = ROUTES[req.url ?? ''];
    readBody(req).then(
      (text) => {
        if (!api || req.method !== 'POST') return fail(res, 404, 'not found');
        let body: Json;
        try {
          body = JSON.parse(text) as Json;
        } catch {
          return fail(res, 400, 'request body is not JSON');
        }
        const payload = JSON.stringify(toChatRequest(api, body));
        const up = http.request(`${upstream}/chat/completions`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } }, (ur) => {
          const parts: string[] = [];
          ur.setEncoding('utf8');
          ur.on('data', (c: string) => parts.push(c));
          ur.on('end', () => {
            if ((ur.statusCode ?? 500) >= 300) return fail(res, 502, `upstream status ${ur.statusCode}`);
            let sse: string;
            try {
              sse = encodeBuffered(api, accumulate(parts.join('')), typeof body.model === 'string' ? body.model : 'model');
            } catch {
              return fail(res, 502, 'upstream stream was not valid');
            }
            res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
            res.end(sse);
          });
          ur.on('error', () => fail(res, 502, 'upstream read failed'));
        });
        up.on('error', () => fail(res, 502, 'upstream request failed'));
        up.end(payload);
      },
      () => fail(res, 400, 'request body could not be read'),
    );
  });
  return { url: await listen(server), close: closer(server, agent) };
}

/** A byte pipe: any POST goes to the upstream's /chat/completions and the response comes back unchanged. */
export async function startPipe(upstream: string): Promise<Middle> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  const server = http.createServer((req, res) => {
    const up = http.request(`${upstream}/chat/completions`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': req.headers['content-length'] ?? '0' } }, (ur) => {
      res.writeHead(ur.statusCode ?? 502, { 'content-type': ur.headers['content-type'] ?? 'text/event-stream' });
      ur.pipe(res);
    });
    up.on('error', () => fail(res, 502, 'upstream request failed'));
    req.pipe(up);
  });
  return { url: await listen(server), close: closer(server, agent) };
}

// ------------------------------------------------------------------ child processes

type ChildKind = 'sluice' | 'buffering' | 'pipe' | 'baseline';
type ToChild = { op: 'cpu' } | { op: 'close' };
type FromChild = { op: 'ready'; url: string } | { op: 'cpu'; us: number; sys: number } | { op: 'error'; message: string };

async function childMain(kind: ChildKind, upstream: string, dist?: string): Promise<void> {
  let middle: Middle;
  if (kind === 'sluice' || kind === 'baseline') {
    // The baseline: the same gateway from another commit's build (same options).
    const server = dist ? baselineModule<{ startGateway: typeof startGateway }>(dist, 'src/gateway/server') : { startGateway };
    const log = dist ? baselineModule<{ Logger: typeof Logger }>(dist, 'src/gateway/log') : { Logger };
    const gw = await server.startGateway({ upstream, logger: new log.Logger('silent'), pingIntervalMs: 0, maxConcurrent: 1024 });
    middle = { url: gw.url.replace(/\/$/, ''), close: () => gw.close() };
  } else middle = kind === 'buffering' ? await startBufferingTranslator(upstream) : await startPipe(upstream);
  const send = (m: FromChild): void => void process.send?.(m);
  process.on('message', (m: ToChild) => {
    if (m.op === 'cpu') {
      const u = process.cpuUsage();
      send({ op: 'cpu', us: u.user + u.system, sys: u.system });
    } else void middle.close().then(() => process.exit(0));
  });
  process.on('disconnect', () => process.exit(0));
  send({ op: 'ready', url: middle.url });
}

class Child {
  private waiting: ((m: FromChild) => void)[] = [];
  private constructor(
    private readonly proc: ChildProcess,
    readonly url: string,
  ) {
    proc.on('message', (m: FromChild) => this.waiting.shift()?.(m));
    // A child that dies mid-run must not leave a CPU read pending forever (its requests fail on their own).
    proc.on('exit', () => {
      for (const w of this.waiting.splice(0)) w({ op: 'error', message: 'exited' });
    });
  }

  static start(kind: ChildKind, upstream: string, dist?: string): Promise<Child> {
    // Under ts-node (this file is .ts) the child needs the TypeScript hook; the built .js needs nothing.
    // SLUICE_BENCH_CHILD_NODE_ARGS: extra node flags for the middles, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".
    const extra = process.env.SLUICE_BENCH_CHILD_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
    const execArgv = [...(__filename.endsWith('.ts') ? ['-r', 'ts-node/register/transpile-only'] : []), ...extra];
    const proc = fork(__filename, ['--child', kind, upstream, ...(dist ? [dist] : [])], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null): void => reject(new Error(`${kind} child exited (${code}) before it was ready`));
      proc.once('exit', onExit);
      proc.once('message', (m: FromChild) => {
        proc.off('exit', onExit);
        if (m.op === 'ready') resolve(new Child(proc, m.url));
        else reject(new Error(`${kind} child: ${m.op === 'error' ? m.message : 'unexpected message'}`));
      });
    });
  }

  /** User+system CPU of the child so far, and its system part, µs. */
  cpu(): Promise<{ us: number; sys: number }> {
    return new Promise((resolve, reject) => {
      if (!this.proc.connected) return reject(new Error('a middle process exited during the run'));
      this.waiting.push((m) => (m.op === 'cpu' ? resolve(m) : reject(new Error('a middle process exited during the run'))));
      this.proc.send({ op: 'cpu' } satisfies ToChild);
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.proc.exitCode !== null || this.proc.signalCode !== null) return resolve();
      const timer = setTimeout(() => this.proc.kill('SIGKILL'), 5000);
      this.proc.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      this.proc.send({ op: 'close' } satisfies ToChild);
    });
  }
}

// ------------------------------------------------------------------ the client

export interface Got {
  text: string;
  calls: { name: string; args: string }[];
  /** performance.now() when the client had call 0. */
  call0At?: number;
}

/** Reads one streamed response of `api` (or the raw upstream chat stream for 'upstream-chat'). */
function clientParser(api: InboundRow['api'], call0Frame: number): { result: () => Got; onData: (data: string, now: number) => void } {
  const text: string[] = [];
  const names: string[] = [];
  const args: string[][] = [];
  let call0At: number | undefined;
  let frame = 0;
  let openTool = false;
  const onData = (data: string, now: number): void => {
    const n = frame++;
    if (data === '[DONE]') return;
    const ev = JSON.parse(data) as Json;
    if (api === 'messages') {
      if (ev.type === 'content_block_start') {
        const b = ev.content_block as { type: string; name?: string };
        openTool = b.type === 'tool_use';
        if (openTool) {
          names.push(b.name ?? '');
          args.push([]);
        }
      } else if (ev.type === 'content_block_delta') {
        const d = ev.delta as { type: string; text?: string; partial_json?: string };
        if (d.type === 'text_delta') text.push(d.text ?? '');
        else if (d.type === 'input_json_delta') args[args.length - 1]?.push(d.partial_json ?? '');
      } else if (ev.type === 'content_block_stop' && openTool) {
        openTool = false;
        call0At ??= now;
      }
    } else if (api === 'responses') {
      if (ev.type === 'response.output_text.delta') text.push(ev.delta as string);
      else if (ev.type === 'response.output_item.done') {
        const item = ev.item as { type: string; name?: string; arguments?: string };
        if (item.type === 'function_call') {
          names.push(item.name ?? '');
          args.push([item.arguments ?? '']);
          call0At ??= now;
        }
      }
    } else {
      const ch = (ev.choices as { delta?: { content?: string | null; tool_calls?: { index: number; function?: { name?: string; arguments?: string } }[] } }[] | undefined)?.[0];
      if (typeof ch?.delta?.content === 'string') text.push(ch.delta.content);
      for (const tc of ch?.delta?.tool_calls ?? []) {
        names[tc.index] ??= '';
        args[tc.index] ??= [];
        if (tc.function?.name) names[tc.index] = tc.function.name;
        if (tc.function?.arguments) args[tc.index]!.push(tc.function.arguments);
        if (api === 'chat') call0At ??= now;
      }
      if (api === 'upstream-chat' && n === call0Frame) call0At = now;
    }
  };
  const result = (): Got => ({ text: text.join(''), calls: names.map((name, i) => ({ name, args: (args[i] ?? []).join('') })), call0At });
  return { result, onData };
}

function requestBody(api: InboundRow['api'], tag: string): Json {
  const schema = { type: 'object', properties: { path: { type: 'string' }, offset: { type: 'integer' }, limit: { type: 'integer' } }, required: ['path'] };
  if (api === 'messages') return { model: 'bench', max_tokens: 1024, stream: true, messages: [{ role: 'user', content: tag }], tools: [{ name: TOOL_NAME, input_schema: schema }] };
  if (api === 'responses') return { model: 'bench', stream: true, input: [{ role: 'user', content: tag }], tools: [{ type: 'function', name: TOOL_NAME, parameters: schema }] };
  return { model: 'bench', stream: true, messages: [{ role: 'user', content: tag }], tools: [{ type: 'function', function: { name: TOOL_NAME, parameters: schema } }] };
}

const API_PATH: Record<InboundRow['api'], string> = { messages: '/v1/messages', responses: '/v1/responses', chat: '/v1/chat/completions', 'upstream-chat': '/chat/completions' };

/** POST one streaming request of `api` to `base` and read it to the end. */
export function roundTrip(base: string, api: InboundRow['api'], tag: string, agent: http.Agent, call0Frame = -1): Promise<Got> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(requestBody(api, tag));
    const { result, onData } = clientParser(api, call0Frame);
    const req = http.request(
      base + API_PATH[api],
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), 'x-api-key': 'bench' } },
      (res) => {
        if ((res.statusCode ?? 0) !== 200) {
          res.resume();
          return reject(new Error(`${api} via ${base}: HTTP ${res.statusCode}`));
        }
        res.setEncoding('utf8');
        let now = 0;
        const split = new FrameSplitter((d) => onData(d, now));
        res.on('data', (c: string) => {
          now = performance.now();
          split.push(c);
        });
        res.on('end', () => resolve(result()));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** The response carries the turn's text and its calls (names, parsed arguments) in order. */
export function isCorrect(got: Got, tag: string, shape: TurnShape = DEFAULT_SHAPE): boolean {
  const text = Array.from({ length: shape.textChunks }, (_, k) => textFor(k)).join('');
  if (got.text !== text || got.calls.length !== shape.calls) return false;
  return got.calls.every((c, j) => {
    if (c.name !== TOOL_NAME) return false;
    try {
      return JSON.stringify(JSON.parse(c.args)) === argsFor(tag, j, shape);
    } catch {
      return false;
    }
  });
}

/** The scripted upstream this bench uses: the turn for the tag found in the request body, one line every `stepMs()`. */
export function startTurnUpstream(stepMs: () => number, shape: TurnShape = DEFAULT_SHAPE): Promise<ScriptedUpstream> {
  return startScriptedUpstream({
    script: (req) => {
      const tag = /req\d+x/.exec(JSON.stringify(req.body))?.[0];
      if (!tag) return { status: 400, body: { error: { message: 'no tag in the request' } } };
      return turnScript(tag, stepMs(), shape).lines;
    },
  });
}

// ------------------------------------------------------------------ the bench

function median(xs: number[]): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

const r2 = (x: number): number => Math.round(x * 100) / 100;

interface Config {
  path: MiddlePath;
  api: InboundRow['api'];
  base: string;
  child?: Child;
}

export async function benchGatewayInbound(opts: BenchGatewayInboundOptions = {}): Promise<InboundRow[]> {
  const requests = opts.requests ?? 100;
  const concurrency = opts.concurrency ?? 8;
  const rounds = opts.rounds ?? 3;
  const timed = opts.timed ?? 8;
  const warmup = opts.warmup ?? 25;
  const want = (p: MiddlePath): boolean =>
    p === 'direct' || (p === 'baseline' ? opts.baselineDist !== undefined : !opts.paths || opts.paths.includes(p));
  const stepMs = opts.stepMs ?? 2;
  const log = opts.log ?? (() => undefined);
  let step = 0;
  let seq = 0;
  const shape: TurnShape = { ...DEFAULT_SHAPE, ...opts.shape };
  const chunksPerRequest = turnScript('x', 0, shape).lines.length;
  const up = await startTurnUpstream(() => step, shape);
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  const started: Promise<Child>[] = [];
  try {
    const kinds = (['sluice', 'buffering', 'pipe', 'baseline'] as const).filter(want);
    for (const k of kinds) started.push(Child.start(k, up.url, k === 'baseline' ? opts.baselineDist : k === 'sluice' ? opts.currentDist : undefined));
    const children = await Promise.all(started);
    const child = (k: ChildKind): Child | undefined => children[kinds.indexOf(k as never)];
    const sluice = child('sluice');
    const buffering = child('buffering');
    const pipe = child('pipe');
    const baseline = child('baseline');
    const configs: Config[] = [
      { path: 'direct', api: 'upstream-chat', base: up.url },
      ...(pipe ? [{ path: 'pipe', api: 'upstream-chat', base: pipe.url, child: pipe } satisfies Config] : []),
      ...(opts.apis ?? APIS).flatMap((api): Config[] => [
        ...(sluice ? [{ path: 'sluice', api, base: sluice.url, child: sluice } satisfies Config] : []),
        ...(baseline ? [{ path: 'baseline', api, base: baseline.url, child: baseline } satisfies Config] : []),
        ...(buffering ? [{ path: 'buffering', api, base: buffering.url, child: buffering } satisfies Config] : []),
      ]),
    ];
    const call0Line = turnScript('x', 0, shape).call0Line;
    const stats = new Map<Config, { cpu: number[]; sys: number[]; bench: number[]; cps: number[]; after: number[]; beforeEnd: number[]; correct: number; checked: number }>();
    for (const c of configs) stats.set(c, { cpu: [], sys: [], bench: [], cps: [], after: [], beforeEnd: [], correct: 0, checked: 0 });

    const one = async (c: Config): Promise<{ got: Got; tag: string }> => {
      const tag = `req${seq++}x`;
      const got = await roundTrip(c.base, c.api, tag, agent, call0Line);
      const s = stats.get(c)!;
      s.checked++;
      if (isCorrect(got, tag, shape)) s.correct++;
      return { got, tag };
    };
    const batch = async (c: Config, n: number, conc: number): Promise<void> => {
      let next = 0;
      await Promise.all(
        Array.from({ length: conc }, async () => {
          while (next++ < n) await one(c);
        }),
      );
    };

    // Warm-up: JIT and keep-alive sockets on every path.
    for (const c of configs) await batch(c, warmup, concurrency);

    for (let round = 0; round < rounds; round++) {
      for (const c of configs) {
        const s = stats.get(c)!;
        const cpu0 = c.child ? await c.child.cpu() : undefined;
        const bench0 = process.cpuUsage();
        const t0 = performance.now();
        await batch(c, requests, concurrency);
        const wall = performance.now() - t0;
        const bench = process.cpuUsage(bench0);
        const chunks = requests * chunksPerRequest;
        if (c.child && cpu0) {
          const cpu = await c.child.cpu();
          s.cpu.push((cpu.us - cpu0.us) / chunks);
          s.sys.push((cpu.sys - cpu0.sys) / chunks);
        }
        s.bench.push((bench.user + bench.system) / chunks);
        s.cps.push(chunks / (wall / 1000));
      }
      log(`gateway-inbound: throughput round ${round + 1}/${rounds} done\n`);
    }

    // Timed run: when call 0 reaches the client.
    step = stepMs;
    for (const c of configs) {
      const s = stats.get(c)!;
      for (let i = 0; i < timed; i++) {
        const { got, tag } = await one(c);
        const rec = [...up.requests].reverse().find((q) => JSON.stringify(q.body).includes(`"${tag}"`));
        if (!rec) throw new Error(`no upstream request for ${tag}`);
        await rec.finished;
        const wrote = rec.writes.find((w) => w.line === call0Line)?.at;
        const end = rec.writes[rec.writes.length - 1]?.at;
        if (got.call0At === undefined || wrote === undefined || end === undefined) continue;
        s.after.push(got.call0At - wrote);
        s.beforeEnd.push(end - got.call0At);
      }
    }

    const load1 = r2(os.loadavg()[0]!);
    const rows = configs.map((c): InboundRow => {
      const s = stats.get(c)!;
      return {
        path: c.path,
        api: c.api,
        requests: requests * rounds,
        concurrency,
        chunksPerRequest,
        shape,
        cpuUsPerChunk: c.child ? r2(median(s.cpu)) : undefined,
        systemUsPerChunk: c.child ? r2(median(s.sys)) : undefined,
        benchCpuUsPerChunk: r2(median(s.bench)),
        chunksPerSec: Math.round(median(s.cps)),
        firstCallAfterCompletionMs: r2(median(s.after)),
        firstCallBeforeEndMs: r2(median(s.beforeEnd)),
        correct: s.correct,
        checked: s.checked,
        load1,
        cpus: os.cpus().length,
      };
    });
    const wrong = rows.filter((r) => r.correct !== r.checked);
    if (wrong.length) throw new Error(`wrong responses on ${wrong.map((r) => `${r.path}/${r.api} (${r.checked - r.correct}/${r.checked})`).join(', ')}`);
    return rows;
  } finally {
    agent.destroy();
    const children = await Promise.allSettled(started);
    await Promise.all(children.map((c) => (c.status === 'fulfilled' ? c.value.close() : undefined)));
    await up.close();
  }
}

export interface InboundRatio {
  api: InboundApi;
  /** sluice chunks/s ÷ direct chunks/s. */
  vsDirectChunksPerSec: number;
  /** sluice chunks/s ÷ buffering chunks/s (same API). */
  vsBufferingChunksPerSec: number;
  /** sluice middle CPU ÷ buffering middle CPU (same API). */
  vsBufferingCpu: number;
  /** sluice middle CPU ÷ pipe middle CPU. */
  vsPipeCpu: number;
  /** sluice middle CPU ÷ the baseline build's (same API; NaN without a baseline). */
  vsBaselineCpu: number;
  /** The baseline build's middle CPU ÷ pipe middle CPU (NaN without a baseline). */
  baselineVsPipeCpu: number;
}

/** sluice against direct, buffering and pipe, per inbound API, from one run's rows. */
export function inboundRatios(rows: InboundRow[]): InboundRatio[] {
  const direct = rows.find((r) => r.path === 'direct');
  const pipe = rows.find((r) => r.path === 'pipe');
  return APIS.flatMap((api) => {
    const s = rows.find((r) => r.path === 'sluice' && r.api === api);
    const b = rows.find((r) => r.path === 'buffering' && r.api === api);
    const base = rows.find((r) => r.path === 'baseline' && r.api === api);
    if (!s || !direct) return [];
    const cpu = (r: InboundRow | undefined): number => r?.cpuUsPerChunk ?? NaN;
    return [
      {
        api,
        vsDirectChunksPerSec: r2(s.chunksPerSec / direct.chunksPerSec),
        vsBufferingChunksPerSec: r2(s.chunksPerSec / (b?.chunksPerSec ?? NaN)),
        vsBufferingCpu: r2(cpu(s) / cpu(b)),
        vsPipeCpu: r2(cpu(s) / cpu(pipe)),
        vsBaselineCpu: r2(cpu(s) / cpu(base)),
        baselineVsPipeCpu: r2(cpu(base) / cpu(pipe)),
      },
    ];
  });
}

const fmt = (x: number | undefined): string => (x === undefined || !Number.isFinite(x) ? '—' : String(x));

/** Markdown: a line on the setup, the rows, then the ratios. */
export function formatGatewayInbound(rows: InboundRow[]): string {
  const first = rows[0];
  if (!first) return '(no rows)\n';
  const lines = [
    `${first.requests} requests per path in the throughput phase (${first.concurrency} concurrent; ${first.chunksPerRequest} upstream chunks each: ${first.shape.textChunks} text, ${first.shape.calls} calls in ${first.shape.argPieces} argument pieces); load ${first.load1} on ${first.cpus} CPUs at the end.`,
    '',
    '| path | inbound API | middle CPU µs/chunk | of it system | bench CPU µs/chunk | chunks/s | call 0 after its completion, ms | call 0 before stream end, ms | correct |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map((r) => `| ${r.path} | ${r.api} | ${fmt(r.cpuUsPerChunk)} | ${fmt(r.systemUsPerChunk)} | ${fmt(r.benchCpuUsPerChunk)} | ${r.chunksPerSec} | ${fmt(r.firstCallAfterCompletionMs)} | ${fmt(r.firstCallBeforeEndMs)} | ${r.correct}/${r.checked} |`),
    '',
    '| inbound API | sluice chunks/s ÷ direct | sluice chunks/s ÷ buffering | sluice CPU ÷ buffering CPU | sluice CPU ÷ pipe CPU | sluice CPU ÷ baseline CPU | baseline CPU ÷ pipe CPU |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...inboundRatios(rows).map(
      (x) =>
        `| ${x.api} | × ${fmt(x.vsDirectChunksPerSec)} | × ${fmt(x.vsBufferingChunksPerSec)} | × ${fmt(x.vsBufferingCpu)} | × ${fmt(x.vsPipeCpu)} | × ${fmt(x.vsBaselineCpu)} | × ${fmt(x.baselineVsPipeCpu)} |`,
    ),
  ];
  return lines.join('\n') + '\n';
}

/**
 * `--requests N --concurrency N --rounds N --timed N --warmup N --step-ms N --text N --calls N
 * --pieces N --paths pipe,sluice --apis messages,responses --baseline <git-ref> --current <git-ref>` for a standalone run
 * (`--current HEAD`: sluice from a build of the last commit, like the baseline).
 */
function cliOptions(argv: string[]): BenchGatewayInboundOptions & { baselineRef?: string; currentRef?: string } {
  const num = (flag: string, min = 1): number | undefined => {
    const i = argv.indexOf(flag);
    if (i < 0) return undefined;
    const v = Number(argv[i + 1]);
    if (!Number.isInteger(v) || v < min) {
      process.stderr.write(`gateway-inbound: ${flag} needs an integer ≥ ${min}\n`);
      process.exit(2);
    }
    return v;
  };
  const shape: Partial<TurnShape> = {};
  for (const [flag, key] of [['--text', 'textChunks'], ['--calls', 'calls'], ['--pieces', 'argPieces']] as const) {
    const v = num(flag);
    if (v !== undefined) shape[key] = v;
  }
  const bi = argv.indexOf('--baseline');
  const ci = argv.indexOf('--current');
  const pi = argv.indexOf('--paths');
  const paths = pi < 0 ? undefined : (argv[pi + 1] ?? '').split(',').filter((p): p is MiddlePath => ['pipe', 'sluice', 'buffering'].includes(p));
  const ai = argv.indexOf('--apis');
  const apis = ai < 0 ? undefined : APIS.filter((a) => (argv[ai + 1] ?? '').split(',').includes(a));
  return {
    requests: num('--requests'),
    concurrency: num('--concurrency'),
    rounds: num('--rounds'),
    timed: num('--timed', 0),
    warmup: num('--warmup', 0),
    stepMs: num('--step-ms'),
    shape,
    ...(paths ? { paths } : {}),
    ...(apis ? { apis } : {}),
    ...(bi >= 0 ? { baselineRef: argv[bi + 1] ?? '' } : {}),
    ...(ci >= 0 ? { currentRef: argv[ci + 1] ?? '' } : {}),
  };
}

if (require.main === module) {
  if (process.argv[2] === '--child') {
    const kind = process.argv[3] as ChildKind;
    childMain(kind, process.argv[4] ?? '', process.argv[5]).catch((err: unknown) => {
      process.send?.({ op: 'error', message: err instanceof Error ? err.message : String(err) } satisfies FromChild);
      process.exit(1);
    });
  } else {
    const t0 = performance.now();
    const { baselineRef, currentRef, ...o } = cliOptions(process.argv.slice(2));
    const log = (s: string): void => void process.stderr.write(s);
    const build = (ref: string | undefined): Promise<string | undefined> => (ref === undefined ? Promise.resolve(undefined) : baselineDist(ref, log));
    Promise.all([build(baselineRef), build(currentRef)])
      .then(([b, c]) => benchGatewayInbound({ ...o, ...(b ? { baselineDist: b } : {}), ...(c ? { currentDist: c } : {}), log }))
      .then(
      (rows) => {
        process.stdout.write(formatGatewayInbound(rows));
        process.stdout.write(`(${((performance.now() - t0) / 1000).toFixed(1)} s)\n${JSON.stringify(rows)}\n`);
      },
      (err: unknown) => {
        process.stderr.write(`gateway-inbound: ${err instanceof Error ? err.message : String(err)}\n`);
        process.exitCode = 1;
      },
    );
  }
}
