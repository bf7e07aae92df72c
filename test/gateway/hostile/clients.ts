/**
 * Hostile (and well-behaved) clients for the gateway suites and the soak, plus a child-process
 * gateway: raw sockets and raw HTTP so every byte and every pause is under the test's control.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { childCli, childEnv } from '../../journal/childBuild';

export interface SseFrame {
  event: string;
  data: string;
}

export interface StreamResult {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** SSE frames (streaming answers) — empty for JSON answers. */
  frames: SseFrame[];
  /** The whole body when it was not SSE. */
  body: string;
  /** Time from request start to the end of the body. */
  ms: number;
  /** The connection failed (reset, refused) before the answer ended. */
  failed?: string;
}

export interface PostOptions {
  headers?: Record<string, string>;
  /** Do not read the response for this long after the headers arrive (backpressure). */
  stallMs?: number;
  /** Give up (destroy) after this long. Default 30 s. */
  timeoutMs?: number;
  /** Keep only the last 64 KiB of the body (large streams: the test process stays responsive). */
  tailOnly?: boolean;
}

/** A well-formed Anthropic Messages request whose model selects the hostile upstream's scenario. */
export function messagesBody(model: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    model,
    max_tokens: 256,
    stream: true,
    messages: [{ role: 'user', content: 'read the files' }],
    tools: [
      { name: 'read_file', description: 'read', input_schema: { type: 'object', properties: { path: { type: 'string' } } } },
      { name: 'write_file', input_schema: { type: 'object', properties: { data: { type: 'string' } } } },
      { name: 'delete_everything', input_schema: { type: 'object', properties: { path: { type: 'string' } } } },
    ],
    ...extra,
  };
}

function parseSse(text: string): SseFrame[] {
  const frames: SseFrame[] = [];
  for (const block of text.split('\n\n')) {
    if (block.trim() === '') continue;
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
    }
    frames.push({ event, data: data.join('\n') });
  }
  return frames;
}

/** POST JSON on a fresh connection; collects the whole answer. Never rejects. */
export function post(url: string, route: string, body: unknown, opts: PostOptions = {}): Promise<StreamResult> {
  const t0 = performance.now();
  const payload = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  return new Promise((resolve) => {
    let settled = false;
    const finish = (r: Omit<StreamResult, 'ms'>): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...r, ms: performance.now() - t0 });
    };
    const req = http.request(
      url + route,
      {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)), ...opts.headers },
      },
      (res) => {
        let parts: Buffer[] = [];
        let kept = 0;
        const read = (): void => {
          res.on('data', (c: Buffer) => {
            parts.push(c);
            kept += c.length;
            if (opts.tailOnly && kept > 131_072) {
              const tail = Buffer.concat(parts).subarray(-65_536);
              // Start at a frame boundary so the tail parses.
              const at = tail.indexOf('\n\n');
              parts = [tail.subarray(at >= 0 ? at + 2 : 0)];
              kept = parts[0]!.length;
            }
          });
        };
        if (opts.stallMs) {
          res.pause();
          setTimeout(() => {
            read();
            res.resume();
          }, opts.stallMs);
        } else read();
        const done = (failed?: string): void => {
          const text = Buffer.concat(parts).toString('utf8');
          const sseAnswer = String(res.headers['content-type'] ?? '').includes('text/event-stream');
          finish({
            status: res.statusCode ?? 0,
            headers: res.headers,
            frames: sseAnswer ? parseSse(text) : [],
            body: sseAnswer ? '' : text,
            ...(failed ? { failed } : {}),
          });
        };
        res.on('end', () => done());
        res.on('error', (e) => done(e.message));
        res.on('close', () => done(res.complete ? undefined : 'closed before the end'));
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      finish({ status: 0, headers: {}, frames: [], body: '', failed: 'client timeout' });
    }, opts.timeoutMs ?? 30_000);
    req.on('error', (e) => finish({ status: 0, headers: {}, frames: [], body: '', failed: e.message }));
    req.end(payload);
  });
}

/** Tool inputs of the released tool_use blocks, in order. */
export function toolInputs(r: StreamResult): { name: string; input: unknown }[] {
  const out: { name: string; input: unknown }[] = [];
  const open = new Map<number, { name: string; json: string }>();
  for (const f of r.frames) {
    if (f.event === 'content_block_start') {
      const j = JSON.parse(f.data) as { index: number; content_block: { type: string; name?: string } };
      if (j.content_block.type === 'tool_use') open.set(j.index, { name: j.content_block.name ?? '', json: '' });
    } else if (f.event === 'content_block_delta') {
      const j = JSON.parse(f.data) as { index: number; delta: { type: string; partial_json?: string } };
      const b = open.get(j.index);
      if (b && j.delta.type === 'input_json_delta') b.json += j.delta.partial_json ?? '';
    } else if (f.event === 'content_block_stop') {
      const j = JSON.parse(f.data) as { index: number };
      const b = open.get(j.index);
      if (b) {
        out.push({ name: b.name, input: JSON.parse(b.json || '{}') });
        open.delete(j.index);
      }
    }
  }
  return out;
}

/** The single terminal error frame of a stream, if any. */
export function streamError(r: StreamResult): { type: string; message: string } | undefined {
  const f = r.frames.find((x) => x.event === 'error');
  return f ? (JSON.parse(f.data) as { error: { type: string; message: string } }).error : undefined;
}

/** True when `r` is the `ok` scenario's stream, complete and correct. */
export function isOkStream(r: StreamResult, paths: string[]): boolean {
  if (r.status !== 200 || r.failed) return false;
  const last = r.frames[r.frames.length - 1];
  if (!last || last.event !== 'message_stop') return false;
  const tools = toolInputs(r);
  return tools.length === paths.length && tools.every((t, i) => t.name === 'read_file' && (t.input as { path?: string }).path === paths[i]);
}

/**
 * A client that sends headers announcing `bytes` of body, then one byte every `everyMs`.
 * Resolves with the HTTP status the gateway answered (0 when it just closed).
 */
export function slowBody(url: string, route: string, bytes = 1000, everyMs = 1000): { done: Promise<number>; stop(): void } {
  const u = new URL(url);
  const sock = net.connect(Number(u.port), u.hostname);
  let timer: NodeJS.Timeout | undefined;
  const done = new Promise<number>((resolve) => {
    let answer = '';
    sock.on('connect', () => {
      sock.write(`POST ${route} HTTP/1.1\r\nhost: ${u.host}\r\ncontent-type: application/json\r\ncontent-length: ${bytes}\r\n\r\n{`);
      timer = setInterval(() => sock.write(' '), everyMs);
    });
    sock.on('data', (c: Buffer) => (answer += c.toString('latin1')));
    sock.on('error', () => undefined);
    sock.on('close', () => {
      if (timer) clearInterval(timer);
      const m = /^HTTP\/1\.1 (\d{3})/.exec(answer);
      resolve(m ? Number(m[1]) : 0);
    });
  });
  return {
    done,
    stop: () => {
      if (timer) clearInterval(timer);
      sock.destroy();
    },
  };
}

/** Sockets that connect and never send a byte. */
export function idleSockets(url: string, n: number): { sockets: net.Socket[]; open(): number; closeAll(): void } {
  const u = new URL(url);
  const sockets: net.Socket[] = [];
  let open = 0;
  for (let i = 0; i < n; i++) {
    const s = net.connect(Number(u.port), u.hostname);
    s.on('connect', () => open++);
    s.on('close', (hadErr) => {
      if (!hadErr || s.bytesRead >= 0) open = Math.max(0, open - 1);
    });
    s.on('error', () => undefined);
    s.on('data', () => undefined);
    sockets.push(s);
  }
  return { sockets, open: () => open, closeAll: () => sockets.forEach((s) => s.destroy()) };
}

/** GET a path on a fresh connection with a deadline; resolves with status (0 = failed) and latency. */
export function get(url: string, route: string, timeoutMs = 1000, headers: Record<string, string> = {}): Promise<{ status: number; ms: number; body: string }> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    const fin = (status: number, body = ''): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ status, ms: performance.now() - t0, body });
    };
    const req = http.get(url + route, { agent: false, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => fin(res.statusCode ?? 0, body));
      res.on('error', () => fin(0));
    });
    const timer = setTimeout(() => {
      req.destroy();
      fin(0);
    }, timeoutMs);
    req.on('error', () => fin(0));
  });
}

/** Poll `/health` every `everyMs`; `stop()` reports the worst latency and the failures. */
export function watchHealth(url: string, everyMs = 100): { stop(): Promise<{ polls: number; failures: number; maxMs: number; failed: string[] }> } {
  let polls = 0;
  let failures = 0;
  let maxMs = 0;
  let running = true;
  const failed: string[] = [];
  const loop = (async () => {
    while (running) {
      const r = await get(url, '/health', 1000);
      polls++;
      if (r.status !== 200) {
        failures++;
        failed.push(`status ${r.status} after ${Math.round(r.ms)} ms`);
      }
      maxMs = Math.max(maxMs, r.ms);
      await new Promise((res) => setTimeout(res, everyMs));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return { polls, failures, maxMs: Math.round(maxMs), failed };
    },
  };
}

/** Resident set size of a process in bytes (Linux /proc; undefined elsewhere). */
export function rssOf(pid: number): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Open file descriptors of a process (Linux /proc; undefined elsewhere). */
export function fdsOf(pid: number): number | undefined {
  try {
    return fs.readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return undefined;
  }
}

export interface ChildGateway {
  url: string;
  proc: ChildProcess;
  /** Every stderr line so far (JSON log lines and the banner). */
  stderr: string[];
  alive(): boolean;
  rss(): number | undefined;
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

const ROOT = path.resolve(__dirname, '../../..');

/**
 * How a child runs `sluice serve`: plain `node` on the cached transpile of the sources
 * (test/journal/childBuild.ts: built once per source state, no ts-node — a ts-node child spends
 * seconds of CPU compiling before it listens), bare imports through NODE_PATH. SLUICE_SERVE_CLI
 * names another build's CLI instead (e.g. an older commit's transpile, to see a suite fail there).
 */
export function serveCommand(args: string[], env: Record<string, string> = {}): { argv: string[]; env: NodeJS.ProcessEnv } {
  const cli = process.env.SLUICE_SERVE_CLI || childCli();
  return { argv: [cli, 'serve', ...args], env: childEnv(env) };
}

/** `sluice serve ARGS` run to its end (a start-up failure, a usage error): exit code and output. */
export function serveSync(args: string[], env: Record<string, string> = {}, timeoutMs = 60_000): { status: number | null; stdout: string; stderr: string } {
  const c = serveCommand(args, env);
  const r = spawnSync(process.execPath, c.argv, { cwd: ROOT, env: c.env, encoding: 'utf8', timeout: timeoutMs });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * `sluice serve ARGS` as a child process (serveCommand; or `opts.cli`, a built CLI such as
 * dist/src/cli/main.js). ts-node is loaded only for a `.ts` preload. Resolves once it prints its
 * address.
 */
export function spawnGateway(args: string[], env: Record<string, string> = {}, opts: { preload?: string[]; cli?: string } = {}): Promise<ChildGateway> {
  const preload = (opts.preload ?? []).flatMap((m) => ['-r', m]);
  const tsNode = (opts.preload ?? []).some((m) => m.endsWith('.ts')) ? ['-r', 'ts-node/register/transpile-only'] : [];
  const c = opts.cli === undefined ? serveCommand(args, env) : { argv: [opts.cli, 'serve', ...args], env: { ...process.env, ...env } };
  const proc = spawn(process.execPath, [...tsNode, ...preload, ...c.argv], {
    cwd: ROOT,
    env: { ...c.env, TS_NODE_TRANSPILE_ONLY: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stderr: string[] = [];
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((r) =>
    proc.on('exit', (code) => {
      exitCode = code;
      r(code);
    }),
  );
  let buf = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start: ${stderr.join('\n')}`)), 90_000);
    // The banner is on stdout, the JSON logs on stderr: both are kept in `stderr`, line by line.
    proc.stderr!.setEncoding('utf8');
    proc.stdout!.setEncoding('utf8');
    const onData = (c: string): void => {
      buf += c;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        stderr.push(line);
        const m = /sluice gateway on (http:\/\/[^\s]+)/.exec(line);
        if (m) {
          clearTimeout(timer);
          resolve({
            url: m[1]!,
            proc,
            stderr,
            alive: () => exitCode === undefined && proc.exitCode === null,
            rss: () => rssOf(proc.pid!),
            exited,
            stop: async () => {
              if (exitCode === undefined) proc.kill('SIGKILL');
              await exited;
            },
          });
        }
      }
    };
    proc.stderr!.on('data', onData);
    proc.stdout!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited (${code}) before listening: ${stderr.join('\n')}`));
    });
  });
}

/** Any route's stream or body error: Anthropic `event: error`, Chat `data: {"error"}`, Responses `response.failed`/`error`, or a JSON error body. */
export function anyError(r: StreamResult): { type?: string; message?: string } | undefined {
  for (const f of r.frames) {
    if (f.event === 'error' || f.event === 'response.failed' || f.data.startsWith('{"error"')) {
      const j = JSON.parse(f.data) as { error?: { type?: string; message?: string }; response?: { error?: { code?: string; message?: string } } };
      return j.error ?? { ...(j.response?.error?.code ? { type: j.response.error.code } : {}), ...(j.response?.error?.message ? { message: j.response.error.message } : {}) };
    }
  }
  if (r.body.startsWith('{')) {
    const j = JSON.parse(r.body) as { error?: { type?: string; message?: string } };
    return j.error;
  }
  return undefined;
}

/** A well-formed request for each inbound route, the model picking the hostile upstream's scenario. */
export function routeBody(route: string, model: string, stream: boolean, extra: Record<string, unknown> = {}): Record<string, unknown> {
  if (route === '/v1/messages') return { ...messagesBody(model), stream, ...extra };
  if (route === '/v1/chat/completions') return { model, stream, max_tokens: 256, messages: [{ role: 'user', content: 'hi' }], ...extra };
  return { model, stream, max_output_tokens: 256, input: 'hi', ...extra };
}

export const ROUTES = ['/v1/messages', '/v1/chat/completions', '/v1/responses'];

/** Sample a child's RSS every `everyMs` until stopped; resolves with the peak (bytes). */
export function sampleRss(gw: ChildGateway, everyMs = 50): { stop(): number } {
  let peak = gw.rss() ?? 0;
  const t = setInterval(() => {
    peak = Math.max(peak, gw.rss() ?? 0);
  }, everyMs);
  return {
    stop: () => {
      clearInterval(t);
      return Math.max(peak, gw.rss() ?? 0);
    },
  };
}
