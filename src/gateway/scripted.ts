/**
 * A scripted OpenAI-compatible upstream: a real HTTP server on 127.0.0.1 that answers
 * `POST …/chat/completions` with a timed trace, chunk by chunk, over real sockets.
 * Used by the gateway tests, the demo and the benchmarks.
 *
 *     const gate = new Gate();
 *     const up = await startScriptedUpstream({
 *       script: [
 *         { t: 0, data: chatChunk({ tool: { index: 0, id: 'call_a', name: 'read', args: '{"p":1}' } }) },
 *         { t: 5, gate: true },                         // hold here until gate.release()
 *         { t: 5, data: chatChunk({ finish: 'tool_calls' }) },
 *         { t: 5, data: '[DONE]' },
 *       ],
 *       gate,
 *     });
 *     … up.url …, up.requests[0].body, await up.close();
 *
 * Script lines (`t` = ms since the request arrived, never decreasing; the same lines as a SPEC §8
 * `.trace.jsonl`, plus test directives):
 * - `{t, data}` — one SSE frame `data: <JSON>` (`data: [DONE]` for the string "[DONE]").
 * - `{t, error: {type, message}}` — a mid-stream error chunk `data: {"error":{…}}`.
 * - `{t, end: true}` — end the response here (EOF; no `[DONE]` unless the script sent one).
 * - `{t, gate: true | "name"}` — wait until that gate is released (true = the `gate` option).
 *   Timing after a gate restarts from the release: the next line waits its `t` difference.
 * - `{t, reset: true}` — destroy the socket (the client sees a connection reset).
 * - `{t, hang: true}` — stop sending and keep the connection open until the client goes away.
 * - `{t, raw: "…"}` — write these characters as they are (framing tests).
 * - `{t, attempt: N}` — trace attempt marker: ignored here (see `scriptFromTrace` to split attempts).
 * A script may also be `{status, body?, headers?, lines?, delayMs?}`: a non-200 answer (JSON
 * body) or a delayed / custom-header stream. `hangBeforeHeaders: true` never answers.
 *
 * Each request is recorded in `requests` with its parsed JSON body, and the time
 * (`performance.now()`) each line was written, for latency measurement.
 */
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { demoScript } from '../demo/script';
import { synthesizeTrace } from '../trace/synth';
import { parseTrace, type Trace } from '../trace/trace';
import type { WireFormat } from '../wire/events';

// ------------------------------------------------------------------ gates

/** A latch a test can hold and release. `reached` resolves when a stream first waits on it. */
export class Gate {
  private _released = false;
  private _reached = false;
  private waiters: (() => void)[] = [];
  private reachedWaiters: (() => void)[] = [];

  get released(): boolean {
    return this._released;
  }

  /** True once a stream has arrived at this gate. */
  get isReached(): boolean {
    return this._reached;
  }

  /** Resolves when a stream is parked at (or has passed) this gate. */
  reached(): Promise<void> {
    if (this._reached) return Promise.resolve();
    return new Promise((r) => this.reachedWaiters.push(r));
  }

  wait(): Promise<void> {
    if (!this._reached) {
      this._reached = true;
      for (const w of this.reachedWaiters.splice(0)) w();
    }
    if (this._released) return Promise.resolve();
    return new Promise((r) => this.waiters.push(r));
  }

  release(): void {
    if (this._released) return;
    this._released = true;
    for (const w of this.waiters.splice(0)) w();
  }
}

// ------------------------------------------------------------------ scripts

export type ScriptLine =
  | { t: number; data: unknown }
  | { t: number; error: { type: string; message: string; retryable?: boolean } }
  | { t: number; end: true }
  | { t: number; gate: true | string }
  | { t: number; reset: true }
  | { t: number; hang: true }
  | { t: number; raw: string }
  | { t: number; attempt: number };

export interface ScriptResponse {
  /** HTTP status (default 200). Non-2xx with `body`: a JSON error answer. */
  status?: number;
  headers?: Record<string, string>;
  /** JSON (or text) body for a non-streaming answer. */
  body?: unknown;
  /** Stream lines (for a 200 answer). */
  lines?: ScriptLine[];
  /** Wait this long before sending the headers. */
  delayMs?: number;
  /** Never answer (the connection stays open until the client gives up). */
  hangBeforeHeaders?: boolean;
}

export type Script = ScriptLine[] | ScriptResponse;

export interface RecordedRequest {
  /** 0-based arrival order. */
  n: number;
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  /** Parsed JSON body (or the raw text when it is not JSON). */
  body: unknown;
  /** performance.now() when the request body was complete. */
  receivedAt: number;
  /** performance.now() of each written line, by script line index. */
  writes: { line: number; at: number }[];
  /** The client closed the connection before the script finished. */
  clientClosed: boolean;
  /** Resolves when the exchange is over (script done, reset, or the client went away). */
  finished: Promise<void>;
}

export type ScriptSource = Script | ((req: RecordedRequest) => Script | Promise<Script>);

export interface ScriptedUpstreamOptions {
  script: ScriptSource;
  /** The gate used by `{gate: true}` lines. */
  gate?: Gate;
  /** Named gates for `{gate: "name"}` lines (missing names are created on first use; see `gates`). */
  gates?: Record<string, Gate>;
  /** Port (default 0: any free port). */
  port?: number;
  host?: string;
  /** Keep at most this many requests in `requests` (oldest dropped; `n` keeps counting). Default 10,000. */
  maxRecorded?: number;
}

export interface ScriptedUpstream {
  /** Base URL, e.g. http://127.0.0.1:41234/v1 */
  url: string;
  port: number;
  requests: RecordedRequest[];
  gates: Map<string, Gate>;
  /** Sockets currently open to the server. */
  openSockets(): number;
  /** Connections accepted since the start (bench/soak.ts: backend connections opened per turn). */
  accepted(): number;
  /** Stop: destroy open connections, cancel timers, release nothing. Idempotent. */
  close(): Promise<void>;
}

const DEFAULT_GATE = '\u0000default';

function frame(line: ScriptLine): string | undefined {
  if ('data' in line) return `data: ${line.data === '[DONE]' ? '[DONE]' : JSON.stringify(line.data)}\n\n`;
  if ('error' in line) return `data: ${JSON.stringify({ error: line.error })}\n\n`;
  if ('raw' in line) return line.raw;
  return undefined;
}

/** Start a scripted upstream on 127.0.0.1 (port 0 by default). */
export async function startScriptedUpstream(opts: ScriptedUpstreamOptions): Promise<ScriptedUpstream> {
  const requests: RecordedRequest[] = [];
  const maxRecorded = opts.maxRecorded ?? 10_000;
  let count = 0;
  const gates = new Map<string, Gate>(Object.entries(opts.gates ?? {}));
  if (opts.gate) gates.set(DEFAULT_GATE, opts.gate);
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const cancels = new Set<() => void>();
  let closed = false;

  const gateFor = (name: true | string): Gate => {
    const key = name === true ? DEFAULT_GATE : name;
    let g = gates.get(key);
    if (!g) {
      g = new Gate();
      gates.set(key, g);
    }
    return g;
  };

  /** Sleep until performance.now() ≥ at; resolves false when cancelled. */
  const sleepUntil = (at: number, alive: () => boolean): Promise<boolean> => {
    const ms = at - performance.now();
    if (ms <= 0.5) return Promise.resolve(alive());
    return new Promise((resolve) => {
      const cancel = (): void => {
        clearTimeout(timer);
        timers.delete(timer);
        cancels.delete(cancel);
        resolve(false);
      };
      const timer = setTimeout(() => {
        timers.delete(timer);
        cancels.delete(cancel);
        resolve(alive());
      }, ms);
      timers.add(timer);
      cancels.add(cancel);
    });
  };

  /** Wait for a promise, or give up when the exchange is cancelled. */
  const waitOr = (p: Promise<void>, onCancel: (fn: () => void) => void): Promise<boolean> =>
    new Promise((resolve) => {
      let done = false;
      const cancel = (): void => {
        if (done) return;
        done = true;
        cancels.delete(cancel);
        resolve(false);
      };
      cancels.add(cancel);
      onCancel(cancel);
      void p.then(() => {
        if (done) return;
        done = true;
        cancels.delete(cancel);
        resolve(true);
      });
    });

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // keep the raw text
      }
      let finish!: () => void;
      const finished = new Promise<void>((r) => (finish = r));
      const rec: RecordedRequest = {
        n: count++,
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body,
        receivedAt: performance.now(),
        writes: [],
        clientClosed: false,
        finished,
      };
      requests.push(rec);
      if (requests.length > maxRecorded) requests.splice(0, requests.length - maxRecorded);
      void serve(rec, res).finally(finish);
    });
  });

  const serve = async (rec: RecordedRequest, res: http.ServerResponse): Promise<void> => {
    let alive = true;
    const stoppers: (() => void)[] = [];
    res.on('close', () => {
      if (!res.writableFinished) rec.clientClosed = true;
      alive = false;
      for (const s of stoppers.splice(0)) s();
    });
    const isAlive = (): boolean => alive && !closed;
    const onCancel = (fn: () => void): void => {
      if (!isAlive()) fn();
      else stoppers.push(fn);
    };
    let script: Script;
    try {
      script = typeof opts.script === 'function' ? await opts.script(rec) : opts.script;
    } catch (err) {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `script failed: ${err instanceof Error ? err.message : String(err)}` } }));
      return;
    }
    const resp: ScriptResponse = Array.isArray(script) ? { lines: script } : script;
    if (resp.hangBeforeHeaders) {
      await waitOr(new Promise<void>(() => undefined), onCancel);
      return;
    }
    if (resp.delayMs !== undefined && resp.delayMs > 0) {
      if (!(await sleepUntil(performance.now() + resp.delayMs, isAlive))) return;
    }
    const status = resp.status ?? 200;
    if (status < 200 || status >= 300 || resp.lines === undefined) {
      const bodyText = typeof resp.body === 'string' ? resp.body : JSON.stringify(resp.body ?? {});
      res.writeHead(status, { 'content-type': typeof resp.body === 'string' ? 'text/plain' : 'application/json', ...resp.headers });
      res.end(bodyText);
      return;
    }
    res.writeHead(status, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      ...resp.headers,
    });
    res.flushHeaders();
    let base = rec.receivedAt; // performance.now() at which t = 0
    const lines = resp.lines;
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      if (!(await sleepUntil(base + line.t, isAlive))) return;
      if ('gate' in line) {
        if (!(await waitOr(gateFor(line.gate).wait(), onCancel))) return;
        base = performance.now() - line.t;
        continue;
      }
      if ('end' in line) break;
      if ('reset' in line) {
        res.socket?.destroy();
        return;
      }
      if ('hang' in line) {
        await waitOr(new Promise<void>(() => undefined), onCancel);
        return;
      }
      const f = frame(line);
      if (f === undefined) continue;
      res.write(f);
      rec.writes.push({ line: i, at: performance.now() });
    }
    if (isAlive()) res.end();
  };

  let accepted = 0;
  server.on('connection', (s) => {
    accepted++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // Backlog 4096 (Node's default is 511): as the soak's backend, 2,000 gateway streams overflowed 511.
    server.listen({ port: opts.port ?? 0, host: opts.host ?? '127.0.0.1', backlog: 4096 }, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = opts.host ?? '127.0.0.1';

  return {
    url: `http://${host}:${port}/v1`,
    port,
    requests,
    gates,
    openSockets: () => sockets.size,
    accepted: () => accepted,
    close: async () => {
      if (closed) return;
      closed = true;
      for (const c of [...cancels]) c();
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

// ------------------------------------------------------------------ chunk builders

export interface ChunkSpec {
  content?: string;
  reasoning?: string;
  /** One tool-call delta (or several). `args` is an arguments fragment. */
  tool?: ToolDelta | ToolDelta[];
  finish?: 'stop' | 'length' | 'tool_calls' | 'content_filter' | null;
  usage?: { prompt_tokens: number; completion_tokens: number; cached_tokens?: number };
  /** Dynamo per-call completion records (format 'dynamo'). */
  completion?: number[];
  id?: string;
  model?: string;
}

export interface ToolDelta {
  index: number;
  id?: string;
  name?: string;
  args?: string;
}

/** Build one `chat.completion.chunk` object. A usage-only chunk has `choices: []`. */
export function chatChunk(spec: ChunkSpec): Record<string, unknown> {
  const chunk: Record<string, unknown> = {
    id: spec.id ?? 'chatcmpl-scripted',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: spec.model ?? 'scripted-model',
  };
  const hasDelta = spec.content !== undefined || spec.reasoning !== undefined || spec.tool !== undefined;
  if (hasDelta || spec.finish !== undefined) {
    const delta: Record<string, unknown> = {};
    if (spec.reasoning !== undefined) delta.reasoning_content = spec.reasoning;
    if (spec.content !== undefined) delta.content = spec.content;
    if (spec.tool !== undefined) {
      const tools = Array.isArray(spec.tool) ? spec.tool : [spec.tool];
      delta.tool_calls = tools.map((t) => {
        const tc: Record<string, unknown> = { index: t.index };
        if (t.id !== undefined) {
          tc.id = t.id;
          tc.type = 'function';
        }
        const fn: Record<string, unknown> = {};
        if (t.name !== undefined) fn.name = t.name;
        if (t.args !== undefined) fn.arguments = t.args;
        tc.function = fn;
        return tc;
      });
    }
    const choice: Record<string, unknown> = { index: 0, delta, finish_reason: spec.finish ?? null };
    if (spec.completion) choice.tool_call_completion = spec.completion.map((index) => ({ index }));
    chunk.choices = [choice];
  } else {
    chunk.choices = [];
    if (spec.completion) chunk.tool_call_completion = spec.completion.map((index) => ({ index }));
  }
  if (spec.usage) {
    const u: Record<string, unknown> = {
      prompt_tokens: spec.usage.prompt_tokens,
      completion_tokens: spec.usage.completion_tokens,
      total_tokens: spec.usage.prompt_tokens + spec.usage.completion_tokens,
    };
    if (spec.usage.cached_tokens !== undefined) u.prompt_tokens_details = { cached_tokens: spec.usage.cached_tokens };
    chunk.usage = u;
  }
  return chunk;
}

/**
 * Lines for a whole turn: optional text, then each call streamed as identity + argument pieces,
 * then the finish chunk, a usage chunk and `[DONE]`, `stepMs` apart.
 */
export function turnScript(opts: {
  text?: string[];
  calls?: { id: string; name: string; args: string[] }[];
  finish?: 'stop' | 'tool_calls' | 'length';
  stepMs?: number;
  startMs?: number;
  usage?: { prompt_tokens: number; completion_tokens: number };
}): ScriptLine[] {
  const step = opts.stepMs ?? 0;
  let t = opts.startMs ?? 0;
  const lines: ScriptLine[] = [];
  const push = (data: unknown): void => {
    lines.push({ t, data });
    t += step;
  };
  push(chatChunk({ content: '' }));
  for (const s of opts.text ?? []) push(chatChunk({ content: s }));
  (opts.calls ?? []).forEach((c, index) => {
    push(chatChunk({ tool: { index, id: c.id, name: c.name, args: '' } }));
    for (const a of c.args) push(chatChunk({ tool: { index, args: a } }));
  });
  push(chatChunk({ finish: opts.finish ?? ((opts.calls?.length ?? 0) > 0 ? 'tool_calls' : 'stop') }));
  push(chatChunk({ usage: opts.usage ?? { prompt_tokens: 10, completion_tokens: 5 } }));
  lines.push({ t, data: '[DONE]' });
  return lines;
}

/**
 * Script lines for each attempt of a parsed trace (src/trace/trace.ts `parseTrace`), so attempt
 * N can be served as the Nth request: each attempt's times restart at 0 at its marker.
 */
export function scriptFromTrace(trace: Trace): ScriptLine[][] {
  return trace.attempts.map((a) =>
    a.lines.map((l): ScriptLine => {
      const t = Math.max(0, l.t - a.startMs);
      if (l.kind === 'data') return { t, data: l.data };
      if (l.kind === 'error') return { t, error: { ...l.error } };
      return { t, end: true };
    }),
  );
}

// ------------------------------------------------------------------ `sluice serve --upstream scripted:<trace>`

/** A trace served as a real HTTP backend (`sluice serve --upstream scripted:…`). */
export interface TraceBackend {
  upstream: ScriptedUpstream;
  /** The trace's wire format (which upstream API the gateway must speak to it). */
  format: WireFormat;
  attempts: number;
  /** What was served: 'demo' or the file's base name. */
  name: string;
}

/** Largest trace file `scripted:` accepts (they are read whole). */
export const MAX_TRACE_BYTES = 64 * 1024 * 1024;

/**
 * Start a scripted backend for `spec` (the part after `scripted:`): `demo` (the demo's turn: four
 * calls over about 3 s, as OpenAI Chat) or a path to a `.trace.jsonl`, raw `.sse` or payload-per-line
 * `.jsonl` recording in any wire format. The trace is served in real time (its `t` values); request
 * N gets attempt N mod (number of attempts), whatever the path. Throws Error with a one-line
 * message for a missing, unreadable or invalid file.
 */
export async function startTraceBackend(spec: string): Promise<TraceBackend> {
  let trace: Trace;
  let name: string;
  if (spec === 'demo') {
    trace = synthesizeTrace('openai-chat', demoScript(1));
    name = 'demo';
  } else {
    let st: fs.Stats;
    try {
      st = fs.statSync(spec);
    } catch {
      throw new Error(`scripted: no such trace file "${spec}" (or use scripted:demo)`);
    }
    if (!st.isFile()) throw new Error(`scripted: "${spec}" is not a regular file`);
    if (st.size > MAX_TRACE_BYTES) throw new Error(`scripted: "${spec}" is larger than ${MAX_TRACE_BYTES} bytes`);
    try {
      trace = parseTrace(fs.readFileSync(spec, 'utf8'));
    } catch (e) {
      throw new Error(`scripted: "${spec}": ${e instanceof Error ? e.message : String(e)}`);
    }
    name = path.basename(spec);
  }
  const scripts = scriptFromTrace(trace);
  if (scripts.length === 0) throw new Error(`scripted: "${spec}" has no stream lines`);
  const upstream = await startScriptedUpstream({ script: (req) => scripts[req.n % scripts.length]! });
  return { upstream, format: trace.format, attempts: scripts.length, name };
}
