/**
 * A body refused before it is read (503: the memory budget is in use; also 529, 413, 400: see
 * earlyAnswerLoad.test.ts) while the client is still
 * uploading it. Closing the connection then makes the kernel answer the rest of the upload with a
 * reset, which can destroy the 503 in the client's receive buffer before the client reads it (seen
 * in CI: one of eight clients got no answer at all). A declared body within --max-body is read and
 * discarded instead, so the client gets its 503 and the connection stays usable.
 */
import * as net from 'node:net';
import { type Gateway, startGateway } from '../../src/gateway/server';

const MAX = 64 * 1024;

let gw: Gateway;
beforeAll(async () => {
  gw = await startGateway({ upstream: 'http://127.0.0.1:9/v1', port: 0, maxBodyBytes: MAX, bodyBudgetBytes: 8 * MAX });
});
afterAll(async () => {
  await gw.close();
});

function connect(): Promise<net.Socket> {
  const { port } = new URL(gw.url);
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(port), '127.0.0.1', () => resolve(s));
    s.on('error', reject);
  });
}

const head = (length: number): string =>
  `POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

/** Everything the socket receives until it holds `n` status lines, ends, or 10 s pass. */
function readResponses(s: net.Socket, n: number): Promise<{ text: string; ended: boolean }> {
  return new Promise((resolve) => {
    let text = '';
    const done = (ended: boolean): void => {
      clearTimeout(timer);
      s.removeAllListeners('data');
      resolve({ text, ended });
    };
    const timer = setTimeout(() => done(false), 10_000);
    s.on('data', (c: Buffer) => {
      text += c.toString('latin1');
      if ((text.match(/^HTTP\/1\.1 \d{3}/gm) ?? []).length >= n) done(false);
    });
    s.once('end', () => done(true));
    s.once('close', () => done(true));
  });
}

test('a declared body refused for the memory budget is read and discarded: the client gets its 503 and the connection stays usable', async () => {
  // A holds the whole budget: its declared length is charged before a byte is read.
  const a = await connect();
  a.write(head(MAX) + '{');
  await new Promise((r) => setTimeout(r, 200));
  const b = await connect();
  try {
    const first = readResponses(b, 1);
    b.write(head(MAX) + '{' + ' '.repeat(MAX - 2) + '}');
    const r1 = await first;
    expect(r1.text).toMatch(/^HTTP\/1\.1 503/);
    expect(r1.text).toMatch(/retry-after: 1/i);
    expect(r1.text).not.toMatch(/connection: close/i);
    // The same connection answers the next request.
    const second = readResponses(b, 1);
    b.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    const r2 = await second;
    expect(r2.text).toMatch(/^HTTP\/1\.1 200/);
  } finally {
    a.destroy();
    b.destroy();
  }
});

describe('the drain of an early answer is bounded (drainRefused)', () => {
  let small: Gateway;
  beforeAll(async () => {
    small = await startGateway({ upstream: 'http://127.0.0.1:9/v1', port: 0, maxBodyBytes: MAX, bodyBudgetBytes: 8 * MAX, earlyAnswerDrain: { bytes: 1024 * 1024, ms: 1500 } });
  });
  afterAll(async () => {
    await small.close();
  });

  function connectTo(g: Gateway, allowHalfOpen = false): Promise<net.Socket> {
    const { port } = new URL(g.url);
    return new Promise((resolve, reject) => {
      const s = net.connect({ port: Number(port), host: '127.0.0.1', allowHalfOpen }, () => resolve(s));
      s.on('error', reject);
    });
  }

  test('413 for a declared body within the drain: read and discarded, the connection stays usable', async () => {
    const s = await connectTo(small);
    try {
      const first = readResponses(s, 1);
      s.write(head(4 * MAX) + '{' + ' '.repeat(4 * MAX - 2) + '}');
      const r1 = await first;
      expect(r1.text).toMatch(/^HTTP\/1\.1 413/);
      expect(r1.text).not.toMatch(/connection: close/i);
      const second = readResponses(s, 1);
      s.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      expect((await second).text).toMatch(/^HTTP\/1\.1 200/);
    } finally {
      s.destroy();
    }
  });

  test('an upload past the drain bytes: answered, half-closed (FIN after the answer), closed at the time bound', async () => {
    const s = await connectTo(small, true); // the client keeps its side open after the FIN
    let text = '';
    s.on('data', (c: Buffer) => (text += c.toString('latin1')));
    const ended = new Promise<number>((r) => s.once('end', () => r(performance.now())));
    const closed = new Promise<number>((r) => s.once('close', () => r(performance.now())));
    s.on('error', () => undefined);
    const t0 = performance.now();
    // Chunked, endless: the gateway refuses at the byte that crosses --max-body and drains 1 MiB more.
    s.write('POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n');
    const piece = Buffer.from(`10000\r\n{${' '.repeat(0xffff)}\r\n`.replace('{', '['));
    let writing = true;
    const pump = (): void => {
      while (writing && !s.destroyed) if (!s.write(piece)) return void s.once('drain', pump);
    };
    pump();
    const tEnd = await ended;
    writing = false;
    expect(text).toMatch(/^HTTP\/1\.1 413/);
    expect(tEnd - t0).toBeLessThan(1500); // half-closed at the byte bound, before the time bound
    // Past the time bound (1.5 s) the gateway has closed its side: the next write is refused.
    await new Promise((r) => setTimeout(r, 2000));
    s.write(piece);
    const tClose = await Promise.race([closed, new Promise<number>((r) => setTimeout(() => r(-1), 3000))]);
    expect(tClose).toBeGreaterThan(0); // closed by the gateway, not left open
  });
});
