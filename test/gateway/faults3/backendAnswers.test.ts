/**
 * `/v1/models` does not trust the backend (src/gateway/upstream/answer.ts): its answer is read
 * within a size cap and the JSON depth limit while it arrives, charged to the memory budget, and
 * kept for a few seconds with one fetch shared by concurrent clients. A real HTTP backend on
 * 127.0.0.1 answers its models endpoint with whatever each test needs.
 *
 * `SLUICE_HEAVY=1` makes the huge answer 300 MiB (else 64 MiB); the bounds do not change.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Logger } from '../../../src/gateway/log';
import { type Gateway, startGateway } from '../../../src/gateway/server';
import { AnswerCache } from '../../../src/gateway/upstream/answer';
import { rawRequest } from '../helpers';

jest.setTimeout(120_000);

const HUGE_MIB = process.env.SLUICE_HEAVY === '1' ? 300 : 64;

interface Backend {
  url: string;
  /** Models requests received. */
  hits: number;
  /** Bytes the backend managed to write before its client stopped reading. */
  written: number;
  close(): Promise<void>;
}

type Answer = (res: http.ServerResponse, b: Backend) => void;

async function backend(answer: Answer): Promise<Backend> {
  const b: Backend = { url: '', hits: 0, written: 0, close: async () => undefined };
  const server = http.createServer((req, res) => {
    req.resume();
    if (!(req.url ?? '').includes('/models')) {
      res.writeHead(404).end();
      return;
    }
    b.hits++;
    answer(res, b);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  b.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  b.close = () =>
    new Promise((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return b;
}

/** Writes `total` bytes of a valid-looking model list as fast as the reader takes them. */
function streamHuge(total: number): Answer {
  return (res, b) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const entry = Buffer.from(`{"id":"${'m'.repeat(200)}"},`);
    const block = Buffer.concat(Array.from({ length: 256 }, () => entry));
    res.write('{"data":[');
    const pump = (): void => {
      while (b.written < total) {
        b.written += block.length;
        if (!res.write(block)) return void res.once('drain', pump);
      }
      res.end('{"id":"last"}]}');
    };
    res.on('error', () => undefined);
    pump();
  };
}

async function gateway(up: string, extra: Record<string, unknown> = {}): Promise<Gateway> {
  return startGateway({ upstream: up, logger: new Logger('error', () => undefined), pingIntervalMs: 0, models: { rules: [{ pattern: 'local', target: 'x' }] }, ...extra });
}

test(`a ${HUGE_MIB} MiB models answer: a clear 502, the rest never read, memory bounded`, async () => {
  const b = await backend(streamHuge(HUGE_MIB * 1024 * 1024));
  const gw = await gateway(b.url);
  try {
    global.gc?.();
    const rss0 = process.memoryUsage().rss;
    const t0 = performance.now();
    const r = await rawRequest(gw.url, { method: 'GET', path: '/v1/models' });
    const ms = performance.now() - t0;
    expect(r.status).toBe(502);
    expect(r.text).toContain('upstream models answer: larger than 8388608 bytes');
    expect(ms).toBeLessThan(5000);
    // The gateway stopped reading near the cap: the backend could not write the whole answer.
    await new Promise((res) => setTimeout(res, 200));
    expect(b.written).toBeLessThan(HUGE_MIB * 1024 * 1024 * 0.5);
    const grown = (process.memoryUsage().rss - rss0) / 1024 / 1024;
    // The figures docs/limits.md quotes (`SLUICE_HEAVY=1 npx jest test/gateway/faults3/backendAnswers.test.ts`).
    if (process.env.SLUICE_HEAVY === '1') process.stderr.write(`models answer ${HUGE_MIB} MiB: 502 after ${Math.round(ms)} ms, backend wrote ${(b.written / 1048576).toFixed(1)} MiB, RSS +${grown.toFixed(0)} MiB\n`);
    expect(grown).toBeLessThan(200);
    const health = await rawRequest(gw.url, { method: 'GET', path: '/health' });
    expect(health.status).toBe(200);
  } finally {
    await gw.close();
    await b.close();
  }
});

test('a models answer nested 1M levels deep: a quick 502, nothing parsed', async () => {
  const b = await backend((res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"data":' + '['.repeat(1_000_000));
  });
  const gw = await gateway(b.url);
  try {
    const t0 = performance.now();
    const r = await rawRequest(gw.url, { method: 'GET', path: '/v1/models' });
    expect(r.status).toBe(502);
    expect(r.text).toContain('upstream models answer: JSON nested deeper than 128 levels');
    expect(performance.now() - t0).toBeLessThan(1000);
  } finally {
    await gw.close();
    await b.close();
  }
});

test('a models answer that is not JSON adds nothing (200 with the configured names)', async () => {
  const b = await backend((res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end('data: {"x":1}\n\n');
  });
  const gw = await gateway(b.url);
  try {
    const r = await rawRequest(gw.url, { method: 'GET', path: '/v1/models' });
    expect(r.status).toBe(200);
    expect((r.json as { data: { id: string }[] }).data.map((m) => m.id)).toEqual(['local']);
  } finally {
    await gw.close();
    await b.close();
  }
});

test('a models answer that does not fit the memory budget: 503 with retry-after', async () => {
  const b = await backend(streamHuge(6 * 1024 * 1024));
  // 8× per byte: a 32 MiB budget holds 4 MiB of answer.
  const gw = await gateway(b.url, { bodyBudgetBytes: 32 * 1024 * 1024, maxBodyBytes: 4 * 1024 * 1024, bodyWorker: false });
  try {
    const r = await rawRequest(gw.url, { method: 'GET', path: '/v1/models' });
    expect(r.status).toBe(503);
    expect(r.headers['retry-after']).toBe('1');
    expect(r.text).toContain("memory budget");
  } finally {
    await gw.close();
    await b.close();
  }
});

test('20 concurrent GETs cost the backend one fetch; the list is kept for a few seconds', async () => {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const b = await backend((res) => {
    void held.then(() => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'backend-a', created: 1 }] }));
    });
  });
  const gw = await gateway(b.url);
  try {
    const all = Promise.all(Array.from({ length: 20 }, () => rawRequest(gw.url, { method: 'GET', path: '/v1/models' })));
    await new Promise((r) => setTimeout(r, 200));
    release();
    const answers = await all;
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    for (const a of answers) expect((a.json as { data: { id: string }[] }).data.map((m) => m.id)).toEqual(['local', 'backend-a']);
    expect(b.hits).toBe(1);
    const again = await rawRequest(gw.url, { method: 'GET', path: '/v1/models/backend-a' });
    expect(again.status).toBe(200);
    expect(b.hits).toBe(1);
  } finally {
    await gw.close();
    await b.close();
  }
});

test('AnswerCache: kept for ttl, shared while in flight, failures not kept', async () => {
  let now = 0;
  const cache = new AnswerCache<number>(1000, () => now);
  let calls = 0;
  const f = async (): Promise<number> => ++calls;
  expect(await Promise.all([cache.get('k', f), cache.get('k', f)])).toEqual([1, 1]);
  now = 999;
  expect(await cache.get('k', f)).toBe(1);
  now = 1000;
  expect(await cache.get('k', f)).toBe(2);
  await expect(cache.get('x', () => Promise.reject(new Error('down')))).rejects.toThrow('down');
  expect(await cache.get('x', f)).toBe(3);
});
