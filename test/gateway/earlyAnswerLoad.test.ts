/**
 * Early answers reach the client under load (SPEC §12): sixteen concurrent ~31 MB uploads, half
 * with a content-length and half chunked, against a gateway with room for one body and one model
 * request. Each is answered before its body is read — 503 (memory budget), 529 (full), 413 (too
 * large), 400 (the first bad byte) — or, for the one admitted, by the backend. Every client must
 * read its HTTP status: none may see only a reset (the gateway reads and discards the rest of the
 * upload, bounded, or half-closes and lingers, instead of closing while the client uploads).
 *
 * Wall-clock and heavy on loopback: in jest.config.ts's SERIAL list. SLUICE_HEAVY=1 runs a heavier
 * variant (64 clients).
 */
import * as http from 'node:http';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { Logger } from '../../src/gateway/log';
import { type Gateway, startGateway } from '../../src/gateway/server';

const MB = 1024 * 1024;
const HEAVY = process.env.SLUICE_HEAVY === '1';

/** A ~`size` byte valid Messages request body. */
function messagesBody(size: number): Buffer {
  const headPart = '{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"';
  const tail = '"}]}';
  return Buffer.concat([Buffer.from(headPart), Buffer.alloc(size - headPart.length - tail.length, 'a'), Buffer.from(tail)]);
}

interface Outcome {
  status?: number;
  error?: string;
}

/** One upload on its own connection; resolves with the status the client read, or the error it saw instead. */
function upload(url: string, body: Buffer, chunked: boolean): Promise<Outcome> {
  return new Promise((resolve) => {
    const u = new URL(url);
    let out: Outcome | undefined;
    const finish = (o: Outcome): void => {
      if (out) return;
      out = o;
      resolve(o);
    };
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: '/v1/messages',
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'x-api-key': 'k', ...(chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(body.length) }) },
      },
      (res) => {
        res.resume();
        finish({ status: res.statusCode });
      },
    );
    req.on('error', (e: NodeJS.ErrnoException) => finish({ error: e.code ?? e.message }));
    const timer = setTimeout(() => {
      finish({ error: 'no answer in 60 s' });
      req.destroy();
    }, 60_000);
    req.on('close', () => clearTimeout(timer));
    // Written in 1 MiB pieces with backpressure, like a client streaming a large request.
    let at = 0;
    const pump = (): void => {
      while (at < body.length) {
        const piece = body.subarray(at, at + MB);
        at += piece.length;
        if (req.destroyed) return;
        if (!req.write(piece)) {
          req.once('drain', pump);
          return;
        }
      }
      req.end();
    };
    pump();
  });
}

/**
 * One upload by a client that sends the whole body before it reads anything (as many HTTP clients
 * do): raw HTTP/1.1 on a socket whose reading is paused until the last byte is written. A write
 * that fails (the gateway reset the connection) loses the answer.
 */
function uploadThenRead(url: string, body: Buffer, chunked: boolean): Promise<Outcome> {
  return new Promise((resolve) => {
    const u = new URL(url);
    let out: Outcome | undefined;
    let text = '';
    const finish = (o: Outcome): void => {
      if (out) return;
      out = o;
      clearTimeout(timer);
      s.destroy();
      resolve(o);
    };
    const timer = setTimeout(() => finish({ error: 'no answer in 60 s' }), 60_000);
    const s = net.connect(Number(u.port), u.hostname);
    s.pause();
    s.on('error', (e: NodeJS.ErrnoException) => finish({ error: e.code ?? e.message }));
    s.on('data', (c: Buffer) => {
      text += c.toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (m) finish({ status: Number(m[1]) });
    });
    s.on('end', () => finish({ error: `connection ended without a status (${JSON.stringify(text.slice(0, 40))})` }));
    const framing = chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${body.length}`;
    const pieces: Buffer[] = [Buffer.from(`POST /v1/messages HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: application/json\r\nx-api-key: k\r\n${framing}\r\n\r\n`)];
    for (let at = 0; at < body.length; at += MB) {
      const piece = body.subarray(at, at + MB);
      if (chunked) pieces.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n'));
      else pieces.push(piece);
    }
    if (chunked) pieces.push(Buffer.from('0\r\n\r\n'));
    let i = 0;
    const pump = (): void => {
      while (i < pieces.length) {
        if (s.destroyed) return;
        if (!s.write(pieces[i++]!)) {
          s.once('drain', pump);
          return;
        }
      }
      s.resume(); // the whole request is written: now read the answer
    };
    s.once('connect', pump);
  });
}

/** A backend that answers every request with a 500 after `delayMs` (the admitted request holds its slot until then). */
async function slowBackend(delayMs: number): Promise<{ url: string; close: () => Promise<void> }> {
  const srv = http.createServer((req, res) => {
    req.resume();
    setTimeout(() => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end('{"type":"error","error":{"type":"api_error","message":"backend says no"}}');
    }, delayMs);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}/v1`,
    close: () =>
      new Promise((r) => {
        srv.closeAllConnections();
        srv.close(() => r());
      }),
  };
}

describe('early answers reach clients that are still uploading', () => {
  let backend: { url: string; close: () => Promise<void> };
  beforeAll(async () => {
    backend = await slowBackend(1500);
  });
  afterAll(async () => backend.close());

  async function run(gwOpts: Partial<Parameters<typeof startGateway>[0]>, clients: number, size: number, body?: (i: number) => Buffer): Promise<Outcome[]> {
    const gw: Gateway = await startGateway({ upstream: backend.url, upstreamFormat: 'anthropic', port: 0, noAuth: true, logger: new Logger('silent', () => undefined), maxConcurrent: 1, bodyBudgetBytes: 256 * MB, ...gwOpts } as Parameters<typeof startGateway>[0]);
    try {
      const shared = body ? undefined : messagesBody(size);
      // Half declare a content-length, half are chunked; of each, half read while they upload
      // (Node's http client), half only after the last byte (raw socket).
      return await Promise.all(
        Array.from({ length: clients }, (_, i) => (i % 4 < 2 ? upload : uploadThenRead)(gw.url, body ? body(i) : shared!, i % 2 === 1)),
      );
    } finally {
      await gw.close();
    }
  }

  const explain = (outs: Outcome[]): string =>
    outs.map((o, i) => `${i}${i % 2 ? ' chunked' : ' length'}${i % 4 < 2 ? '' : ', reads after upload'}: ${o.status ?? o.error}`).join('\n');

  test(`${HEAVY ? 64 : 16} uploads of ~31 MB against room for one: every client reads its status (503 / 529 / the backend's)`, async () => {
    const outs = await run({}, HEAVY ? 64 : 16, 31 * MB);
    const missing = outs.filter((o) => o.status === undefined);
    if (missing.length > 0) throw new Error(`clients without a status:\n${explain(outs)}`);
    const statuses = new Set(outs.map((o) => o.status));
    expect([...statuses].every((s) => s === 503 || s === 529 || s === 500 || s === 502)).toBe(true);
    expect(outs.filter((o) => o.status === 503 || o.status === 529).length).toBeGreaterThanOrEqual(outs.length - 2);
  });

  test('413 (declared and chunked, at the byte that crosses --max-body) reaches all 16 clients', async () => {
    const outs = await run({ maxBodyBytes: 4 * MB, bodyBudgetBytes: 512 * MB, maxConcurrent: 64 }, 16, 31 * MB);
    if (outs.some((o) => o.status !== 413)) throw new Error(`not every client read 413:\n${explain(outs)}`);
  });

  test('400 at the first bad byte reaches all 16 clients', async () => {
    const bad = Buffer.alloc(31 * MB, 'x');
    const outs = await run({ maxConcurrent: 64, bodyBudgetBytes: 1024 * MB }, 16, 0, () => bad);
    if (outs.some((o) => o.status !== 400)) throw new Error(`not every client read 400:\n${explain(outs)}`);
  });
});
