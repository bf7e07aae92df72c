/**
 * A hostile (and a healthy) OpenAI-compatible backend for the hostile-input suite and the soak.
 *
 * The request's `model` picks the behaviour, so one upstream serves every probe while the
 * gateway passes model names through:
 *
 * | model | behaviour |
 * |---|---|
 * | `ok` | three tool calls (read_file a.txt, b.txt, c.txt), finish tool_calls, usage, [DONE] |
 * | `ok-slow:<ms>` | the same, one chunk every `<ms>` |
 * | `comments` | 200 SSE, then only `: keep-alive` comments every 50 ms, forever |
 * | `plain` | 200 `text/plain` "hello" |
 * | `after-done` | one call, finish, [DONE], then another call and [DONE] |
 * | `after-finish` | one call, finish, another call (index 1), [DONE] |
 * | `error-chunk` | one text delta, then `{"error":{"type":"server_error",…}}` |
 * | `big-text:<bytes>` | that many bytes of text in 64 KiB deltas, written as fast as the gateway reads |
 * | `big-arg:<bytes>` | one call whose argument string has that many bytes, in 64 KiB fragments |
 * | `index:<n>` | a call at index 0, then a call at index `<n>`, finish, [DONE] |
 * | `hang` | 200 SSE headers, then nothing |
 * | `drip` | one text delta every 100 ms, forever (a live stream that never ends) |
 * | `big-event:<bytes>` | one SSE event whose text delta has that many bytes (written in 1 MiB pieces), finish, [DONE] |
 * | `garbage` | 200 `text/event-stream`, 64 KiB of random bytes, no finish, no [DONE] |
 * | `no-ct` | 200 without a content type, 64 KiB of random bytes |
 * | `empty` | 200 `text/event-stream`, no body at all |
 * | `text-after-done` | text "hello", finish stop, [DONE], then text "LEAK" and another [DONE] |
 * | `error-body:<status>-<bytes>` | that status with a text body of that many bytes (`E` × n), written as fast as the gateway reads (`errorBytes()` counts what went out) |
 */
import { randomBytes } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface HostileUpstream {
  url: string;
  /** Requests received, by model. */
  seen: Map<string, number>;
  /** Responses currently open. */
  open(): number;
  /** Bytes of `error-body` answers the gateway accepted (written without backpressure stalling forever). */
  errorBytes(): number;
  close(): Promise<void>;
}

export const OK_PATHS = ['a.txt', 'b.txt', 'c.txt'];

function chunk(delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}): string {
  return `data: ${JSON.stringify({ id: 'chatcmpl-h', object: 'chat.completion.chunk', model: 'h', choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
}

function call(index: number, id: string | undefined, name: string | undefined, args: string): string {
  const fn: Record<string, string> = { arguments: args };
  if (name !== undefined) fn.name = name;
  const tc: Record<string, unknown> = { index, function: fn };
  if (id !== undefined) {
    tc.id = id;
    tc.type = 'function';
  }
  return chunk({ tool_calls: [tc] });
}

const usage = `data: ${JSON.stringify({ id: 'chatcmpl-h', object: 'chat.completion.chunk', model: 'h', choices: [], usage: { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 } })}\n\n`;
const done = 'data: [DONE]\n\n';

/** The `ok` turn as SSE frames. */
export function okFrames(): string[] {
  const frames = [chunk({ role: 'assistant', content: '' })];
  OK_PATHS.forEach((p, i) => {
    frames.push(call(i, `call_${i}`, 'read_file', ''));
    frames.push(call(i, undefined, undefined, '{"path": '));
    frames.push(call(i, undefined, undefined, JSON.stringify(p) + '}'));
  });
  frames.push(chunk({}, 'tool_calls'), usage, done);
  return frames;
}

const sse = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };

/** Write with backpressure: resolves when the socket took the data (or closed). */
function write(res: http.ServerResponse, s: string): Promise<void> {
  if (res.destroyed) return Promise.resolve();
  if (res.write(s)) return Promise.resolve();
  return new Promise((r) => {
    const go = (): void => {
      res.off('drain', go);
      res.off('close', go);
      r();
    };
    res.on('drain', go);
    res.on('close', go);
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

let errorBytes = 0;

async function serve(model: string, res: http.ServerResponse): Promise<void> {
  const [kind, param] = model.split(':') as [string, string | undefined];
  const n = param !== undefined ? Number(param) : 0;
  switch (kind) {
    case 'ok':
    case 'ok-slow': {
      res.writeHead(200, sse);
      for (const f of okFrames()) {
        if (kind === 'ok-slow') await sleep(n);
        await write(res, f);
      }
      res.end();
      return;
    }
    case 'comments': {
      res.writeHead(200, sse);
      const t = setInterval(() => res.write(': keep-alive\n\n'), 50);
      res.on('close', () => clearInterval(t));
      return;
    }
    case 'drip': {
      res.writeHead(200, sse);
      const t = setInterval(() => res.write(chunk({ content: '.' })), 100);
      res.on('close', () => clearInterval(t));
      return;
    }
    case 'hang':
      res.writeHead(200, sse);
      res.flushHeaders();
      return;
    case 'plain':
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('hello');
      return;
    case 'after-done':
    case 'after-finish': {
      res.writeHead(200, sse);
      await write(res, call(0, 'call_0', 'read_file', '{"path": "a.txt"}'));
      await write(res, chunk({}, 'tool_calls'));
      if (kind === 'after-done') await write(res, done);
      await write(res, call(1, 'call_1', 'delete_everything', '{"path": "/"}'));
      await write(res, done);
      res.end();
      return;
    }
    case 'error-chunk':
      res.writeHead(200, sse);
      await write(res, chunk({ content: 'partial' }));
      await write(res, `data: ${JSON.stringify({ error: { type: 'server_error', message: 'backend exploded' } })}\n\n`);
      res.end();
      return;
    case 'big-text': {
      res.writeHead(200, sse);
      const piece = 'x'.repeat(65_536);
      const frame = chunk({ content: piece });
      for (let sent = 0; sent < n && !res.destroyed; sent += piece.length) await write(res, frame);
      await write(res, chunk({}, 'stop'));
      await write(res, done);
      res.end();
      return;
    }
    case 'big-arg': {
      res.writeHead(200, sse);
      await write(res, call(0, 'call_0', 'write_file', '{"data": "'));
      const frame = call(0, undefined, undefined, 'y'.repeat(65_536));
      for (let sent = 0; sent < n && !res.destroyed; sent += 65_536) await write(res, frame);
      await write(res, call(0, undefined, undefined, '"}'));
      await write(res, chunk({}, 'tool_calls'));
      await write(res, done);
      res.end();
      return;
    }
    case 'big-event': {
      res.writeHead(200, sse);
      const head = chunk({ content: '@@' }).split('@@');
      await write(res, head[0]!);
      const piece = 'z'.repeat(1_048_576);
      for (let sent = 0; sent < n && !res.destroyed; sent += piece.length) await write(res, piece);
      await write(res, head[1]!);
      await write(res, chunk({}, 'stop'));
      await write(res, done);
      res.end();
      return;
    }
    case 'garbage':
    case 'no-ct': {
      if (kind === 'garbage') res.writeHead(200, sse);
      else {
        res.removeHeader('content-type');
        res.writeHead(200);
      }
      // Random bytes without newlines in a row: no SSE event can ever be dispatched from them.
      await write(res, randomBytes(65_536).toString('latin1').replace(/[\r\n]/g, 'x'));
      res.end();
      return;
    }
    case 'empty':
      res.writeHead(200, sse);
      res.end();
      return;
    case 'text-after-done':
      res.writeHead(200, sse);
      await write(res, chunk({ role: 'assistant', content: 'hello' }));
      await write(res, chunk({}, 'stop'));
      await write(res, done);
      await write(res, chunk({ content: 'LEAK' }));
      await write(res, done);
      res.end();
      return;
    case 'error-body': {
      const [st, bytes] = (param ?? '500:0').split('-').map(Number) as [number, number];
      res.writeHead(st, { 'content-type': 'text/plain' });
      const piece = 'E'.repeat(65_536);
      for (let sent = 0; sent < bytes && !res.destroyed; sent += piece.length) {
        const part = piece.slice(0, Math.min(piece.length, bytes - sent));
        await write(res, part);
        if (!res.destroyed) errorBytes += part.length;
      }
      res.end();
      return;
    }
    case 'index': {
      res.writeHead(200, sse);
      await write(res, call(0, 'call_0', 'read_file', '{"path": "a.txt"}'));
      await write(res, call(n, 'call_n', 'read_file', '{"path": "b.txt"}'));
      await write(res, chunk({}, 'tool_calls'));
      await write(res, done);
      res.end();
      return;
    }
    default:
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `hostile upstream: unknown scenario`, type: 'invalid_request_error' } }));
  }
}

export async function startHostileUpstream(): Promise<HostileUpstream> {
  const seen = new Map<string, number>();
  const sockets = new Set<Socket>();
  let open = 0;
  const server = http.createServer((req, res) => {
    // The model is read from the body's head when it is there (the gateway writes it first): a
    // 31 MiB body must not stall this process (it also runs the tests' /health watcher).
    const parts: Buffer[] = [];
    let head = '';
    let size = 0;
    req.on('data', (c: Buffer) => {
      if (head.length < 4096) head += c.subarray(0, 4096).toString('utf8');
      size += c.length;
      if (size <= 1024 * 1024) parts.push(c);
    });
    req.on('end', () => {
      const m = /^\{\s*"model"\s*:\s*"((?:[^"\\]|\\.)*)"/.exec(head);
      let model = '';
      try {
        if (m) model = JSON.parse(`"${m[1]!}"`) as string;
        else if (size <= 1024 * 1024) model = String((JSON.parse(Buffer.concat(parts).toString('utf8')) as { model?: unknown }).model ?? '');
      } catch {
        model = '';
      }
      seen.set(model, (seen.get(model) ?? 0) + 1);
      open++;
      res.on('close', () => open--);
      serve(model, res).catch(() => res.destroy());
    });
  });
  server.keepAliveTimeout = 60_000;
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    seen,
    open: () => open,
    errorBytes: () => errorBytes,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
