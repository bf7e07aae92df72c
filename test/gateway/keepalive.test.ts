/**
 * The backend client's keep-alive race: a pooled socket the backend closes just as the next
 * request goes out fails with ECONNRESET before any response. That request never reached the
 * backend, so the client sends it once more on a fresh connection; a second failure is the 502.
 */
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { UpstreamClient } from '../../src/gateway/upstream';
import { GatewayError } from '../../src/gateway/errors';
import { Logger } from '../../src/gateway/log';

interface Backend {
  url: string;
  /** Requests the backend answered, and the ones it cut by destroying a reused socket. */
  answered: number;
  cut: number;
  close(): Promise<void>;
}

/** A backend that destroys the socket of every request arriving on a reused connection while `cutReused` says so. */
async function backend(cutReused: () => boolean): Promise<Backend> {
  const seen = new WeakSet<Socket>();
  const b = { answered: 0, cut: 0 } as Backend;
  const server = http.createServer((req, res) => {
    const reused = seen.has(req.socket);
    seen.add(req.socket);
    req.resume();
    req.on('end', () => {
      if (reused && cutReused()) {
        b.cut++;
        req.socket.destroy();
        return;
      }
      b.answered++;
      res.end('ok');
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  b.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  b.close = () => new Promise((r) => server.close(() => r()));
  return b;
}

async function send(client: UpstreamClient, url: string): Promise<string> {
  const res = await client.open('{}', { signal: new AbortController().signal, url: new URL(`${url}/chat/completions`) });
  let body = '';
  for await (const c of res) body += String(c);
  return body;
}

function logger(lines: string[]): Logger {
  return new Logger('debug', (r) => void lines.push(JSON.stringify(r)));
}

test('a reset on a reused keep-alive socket is sent once more on a fresh connection, and logged', async () => {
  const be = await backend(() => true);
  const lines: string[] = [];
  const client = new UpstreamClient({ url: be.url, connectTimeoutMs: 2000, idleTimeoutMs: 2000, logger: logger(lines) });
  try {
    expect(await send(client, be.url)).toBe('ok'); // fresh socket, kept alive
    expect(await send(client, be.url)).toBe('ok'); // reused → cut → resent on a new socket
    expect(be.cut).toBe(1);
    expect(be.answered).toBe(2);
    expect(lines.join('\n')).toContain('upstream_retry_reused_socket');
  } finally {
    client.close();
    await be.close();
  }
});

test('the second try is on a new connection, not on another pooled socket', async () => {
  const be = await backend(() => true);
  const client = new UpstreamClient({ url: be.url, connectTimeoutMs: 2000, idleTimeoutMs: 2000 });
  try {
    // Two requests at once leave two sockets in the pool; the backend cuts every reused one.
    expect(await Promise.all([send(client, be.url), send(client, be.url)])).toEqual(['ok', 'ok']);
    expect(await send(client, be.url)).toBe('ok'); // pooled → cut → new connection (not the other pooled one)
    expect(be.cut).toBe(1);
    expect(be.answered).toBe(3);
  } finally {
    client.close();
    await be.close();
  }
});

test('a reset on a fresh socket is not resent: 502', async () => {
  let n = 0;
  const server = http.createServer((req) => {
    n++;
    req.socket.destroy();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  const client = new UpstreamClient({ url, connectTimeoutMs: 2000, idleTimeoutMs: 2000 });
  try {
    const err = await send(client, url).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).status).toBe(502);
    expect(n).toBe(1);
  } finally {
    client.close();
    await new Promise((r) => server.close(r));
  }
});
