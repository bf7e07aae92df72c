/**
 * Issue 18 item 2, the event loop: large bodies are parsed, validated and translated in a body
 * worker (src/gateway/worker/pool.ts). In-process gateways (ts-jest: the worker loads the
 * TypeScript sources through ts-node) against a capturing backend:
 *
 * - the backend body is byte-identical whether the worker or the event loop translated it, on every
 *   route, for bodies with tools, a system prompt, images, tool results and non-ASCII text;
 * - a request the route refuses is the same 400 from the worker as inline;
 * - worker faults (SLUICE_BODY_WORKER_FAULT): a crash, an exit, running out of heap and a hang are
 *   one-line 500/504 answers in the route's own error shape, logged as `body_worker_failed`, and
 *   the next request gets a fresh worker; a worker that cannot load makes the gateway translate
 *   inline and say so (`body_worker_unavailable`), and is loaded again after a wait
 *   (`body_worker_recovered`);
 * - after an idle time the workers that ran jobs exit and one fresh worker stays warm.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Gateway, startGateway } from '../../../src/gateway/server';
import { Logger, type LogRecord } from '../../../src/gateway/log';
import { MemoryBudget } from '../../../src/gateway/body';
import { REQUEST_LIMIT_DEFAULTS } from '../../../src/gateway/validate';
import { BodyWorkerPool, type BodyWorkerOptions } from '../../../src/gateway/worker/pool';
import { anyError, post, ROUTES } from './clients';
import { okFrames } from './upstream';

jest.setTimeout(120_000);

interface Capture {
  url: string;
  bodies: Buffer[];
  close(): Promise<void>;
}

/** A backend that keeps every request body it receives and answers the `ok` stream. */
async function capturingUpstream(): Promise<Capture> {
  const bodies: Buffer[] = [];
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      bodies.push(Buffer.concat(parts));
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(okFrames().join(''));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodies,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

const logs: LogRecord[] = [];
const logger = new Logger('debug', (r) => logs.push(r));
const msgs = (name: string): LogRecord[] => logs.filter((l) => l.msg === name);

const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const tools = [
  { name: 'read_file', description: 'read a file — “quoted” ✓', input_schema: { type: 'object', properties: { path: { type: 'string' } } } },
  { name: 'write_file', input_schema: { type: 'object', properties: { data: { type: 'string' } } } },
];

/** A rich request for each route (tools, system, image, a tool result, non-ASCII), padded to about `pad` characters. */
function richBody(route: string, pad: number): Record<string, unknown> {
  const text = 'héllo wörld ✓ 😀 ' + 'x'.repeat(pad);
  if (route === '/v1/messages')
    return {
      model: 'ok',
      max_tokens: 300,
      stream: true,
      system: [{ type: 'text', text: 'be brief', cache_control: { type: 'ephemeral' } }],
      tools,
      tool_choice: { type: 'auto', disable_parallel_tool_use: true },
      messages: [
        { role: 'user', content: [{ type: 'text', text }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'ä.txt' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'contents ✓' }] },
      ],
    };
  const fnTools = tools.map((t) => ({ type: 'function', function: { name: t.name, ...(t.description ? { description: t.description } : {}), parameters: t.input_schema } }));
  if (route === '/v1/chat/completions')
    return {
      model: 'ok',
      max_tokens: 300,
      stream: true,
      stream_options: { include_usage: true },
      tools: fnTools,
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: [{ type: 'text', text }, { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"ä.txt"}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'contents ✓' },
      ],
    };
  return {
    model: 'ok',
    max_output_tokens: 300,
    stream: true,
    instructions: 'be brief',
    tools: tools.map((t) => ({ type: 'function', name: t.name, ...(t.description ? { description: t.description } : {}), parameters: t.input_schema })),
    input: [
      { role: 'user', content: [{ type: 'input_text', text }] },
      { type: 'function_call', call_id: 'call_1', name: 'read_file', arguments: '{"path":"ä.txt"}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'contents ✓' },
    ],
  };
}

let up: Capture;
beforeAll(async () => {
  up = await capturingUpstream();
});
afterAll(async () => {
  await up?.close();
});

async function withGateway<T>(opts: Partial<Parameters<typeof startGateway>[0]>, fn: (gw: Gateway) => Promise<T>): Promise<T> {
  const gw = await startGateway({ upstream: up.url, port: 0, logger, ...opts });
  try {
    return await fn(gw);
  } finally {
    await gw.close();
  }
}

describe('the backend body is the same from the worker as from the event loop', () => {
  test.each(ROUTES)('%s: byte-identical backend bodies, same client answer, same 400', async (route) => {
    const sizes = [100, 600_000];
    const run = (bodyWorker: false | { aboveBytes: number }): Promise<{ bodies: Buffer[]; answers: string[] }> =>
      withGateway({ bodyWorker }, async (gw) => {
        const from = up.bodies.length;
        const answers: string[] = [];
        for (const pad of sizes) {
          const r = await post(gw.url, route, richBody(route, pad));
          expect(r.status).toBe(200);
          answers.push(JSON.stringify(r.frames.map((f) => f.event)));
        }
        // A request the route refuses: the same 400 either way.
        const bad = await post(gw.url, route, { ...richBody(route, 10), model: 7 });
        expect(bad.status).toBe(400);
        answers.push(JSON.stringify(anyError(bad)));
        return { bodies: up.bodies.slice(from), answers };
      });
    const before = msgs('body_worker').length;
    const worker = await run({ aboveBytes: 0 });
    expect(msgs('body_worker').length - before).toBe(sizes.length + 1); // every body went through the worker
    const inline = await run(false);
    expect(worker.bodies.length).toBe(sizes.length);
    expect(inline.bodies.length).toBe(sizes.length);
    for (let i = 0; i < sizes.length; i++) expect(worker.bodies[i]!.equals(inline.bodies[i]!)).toBe(true);
    expect(worker.answers).toEqual(inline.answers);
    expect(msgs('body_worker_unavailable')).toEqual([]);
  });
});

test('count_tokens: a large body is counted in the worker, with the same answers (and the same 400) as on the event loop', async () => {
  const ask = (bodyWorker: false | { aboveBytes: number }): Promise<string[]> =>
    withGateway({ bodyWorker }, async (gw) => {
      const out: string[] = [];
      for (const body of [richBody('/v1/messages', 600_000), { ...richBody('/v1/messages', 600_000), tools: [{ name: '../..', input_schema: { type: 'object' } }] }]) {
        const r = await post(gw.url, '/v1/messages/count_tokens', body);
        out.push(`${r.status} ${r.body}`);
      }
      return out;
    });
  const before = msgs('body_worker').length;
  const worker = await ask({ aboveBytes: 512 * 1024 });
  expect(msgs('body_worker').length - before).toBe(2);
  const inline = await ask(false);
  expect(worker).toEqual(inline);
  expect(worker[0]).toMatch(/^200 \{"input_tokens":\d+\}$/);
  expect(worker[1]).toMatch(/^400 .*invalid_request_error/);
});

describe('worker faults are typed answers, never a crash', () => {
  afterEach(() => {
    delete process.env.SLUICE_BODY_WORKER_FAULT;
  });

  test.each([
    ['throw', 500, 'api_error', /request body translation failed: the body worker failed \(Error\)/],
    ['exit', 500, 'api_error', /request body translation failed: the body worker exited \(code 3\)/],
    ['oom', 500, 'api_error', /request body translation failed: the body worker ran out of memory \(limit \d+ MiB\)/],
    ['hang', 504, 'timeout_error', /request body translation took longer than 1500 ms/],
  ] as const)('%s → %d %s in the route’s error shape; the next request gets a fresh worker', async (fault, status, type, message) => {
    process.env.SLUICE_BODY_WORKER_FAULT = fault;
    const before = msgs('body_worker_failed').length;
    await withGateway({ bodyWorker: { aboveBytes: 0, timeoutMs: fault === 'hang' ? 1500 : 30_000 }, maxBodyBytes: 1024 * 1024, bodyBudgetBytes: 256 * 1024 * 1024 }, async (gw) => {
      const a = await post(gw.url, '/v1/messages', richBody('/v1/messages', 10));
      expect(a.status).toBe(status);
      expect(JSON.parse(a.body)).toEqual({ type: 'error', error: { type, message: expect.stringMatching(message) } });
      const c = await post(gw.url, '/v1/chat/completions', richBody('/v1/chat/completions', 10));
      expect(c.status).toBe(status);
      expect((JSON.parse(c.body) as { error: { message: string } }).error.message).toMatch(message);
      const failures = msgs('body_worker_failed').slice(before);
      expect(failures.map((f) => f.failure)).toEqual([fault === 'throw' ? 'error' : fault === 'hang' ? 'timeout' : fault, fault === 'throw' ? 'error' : fault === 'hang' ? 'timeout' : fault]);
      // The fault is read when a worker loads: a fresh worker without it answers.
      delete process.env.SLUICE_BODY_WORKER_FAULT;
      const ok = await post(gw.url, '/v1/messages', richBody('/v1/messages', 10));
      expect(ok.status).toBe(200);
    });
  });

  test('a worker that cannot load: the gateway translates inline and logs why, once', async () => {
    process.env.SLUICE_BODY_WORKER_FAULT = 'load';
    const before = msgs('body_worker_unavailable').length;
    await withGateway({ bodyWorker: { aboveBytes: 0 } }, async (gw) => {
      for (const route of ROUTES) expect((await post(gw.url, route, richBody(route, 10))).status).toBe(200);
    });
    const said = msgs('body_worker_unavailable').slice(before);
    expect(said).toEqual([expect.objectContaining({ level: 'warn', fallback: 'inline', reason: expect.stringMatching(/failed to load|exited while loading/) })]);
  });

  test('a worker that fails to load is loaded again after the retry wait: inline meanwhile, each outcome logged once', async () => {
    process.env.SLUICE_BODY_WORKER_FAULT = 'load';
    const from = logs.length;
    const since = (name: string): LogRecord[] => logs.slice(from).filter((l) => l.msg === name);
    await withGateway({ bodyWorker: { aboveBytes: 0, loadRetryMs: [200, 400] } }, async (gw) => {
      expect((await post(gw.url, '/v1/messages', richBody('/v1/messages', 10))).status).toBe(200);
      // The first retry fails too (the fault is still set): logged once more, with the next wait.
      await until(() => since('body_worker_unavailable').length === 2);
      delete process.env.SLUICE_BODY_WORKER_FAULT;
      await until(() => since('body_worker_recovered').length === 1);
      const viaWorker = since('body_worker').length;
      for (const route of ROUTES) expect((await post(gw.url, route, richBody(route, 10))).status).toBe(200);
      expect(since('body_worker').length - viaWorker).toBe(ROUTES.length);
    });
    expect(since('body_worker_unavailable')).toEqual([
      expect.objectContaining({ level: 'warn', fallback: 'inline', reason: expect.stringMatching(/failed to load|exited while loading/), retryInMs: 200, failedLoads: 1 }),
      expect.objectContaining({ level: 'warn', fallback: 'inline', retryInMs: 400, failedLoads: 2 }),
    ]);
    expect(since('body_worker_recovered')).toEqual([expect.objectContaining({ level: 'info', failedLoads: 2 })]);
  });
});

/** Wait (polling) until `ok()`; fails the test after `ms`. */
async function until(ok: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('idle workers', () => {
  const pool = (o: BodyWorkerOptions): BodyWorkerPool =>
    new BodyWorkerPool({ upstreamFormat: 'anthropic', models: { rules: [] }, bodyOptions: {}, limits: REQUEST_LIMIT_DEFAULTS }, new MemoryBudget(256 * 1024 * 1024), logger, 1024 * 1024, o);
  const job = async (p: BodyWorkerPool): Promise<void> => {
    const r = await p.translate('messages', Buffer.from(JSON.stringify(richBody('/v1/messages', 10))));
    expect(r).toMatchObject({ kind: 'done', result: { ok: true } });
  };

  test('after idleMs the worker that ran a job exits and one fresh worker stays warm: the next body does not wait for a start', async () => {
    const p = pool({ idleMs: 300 });
    try {
      await job(p);
      expect(p.started).toBe(1);
      // Idle: the used worker is replaced by a fresh one, which stays.
      await until(() => p.started === 2 && p.size === 1);
      await new Promise((r) => setTimeout(r, 500));
      expect({ started: p.started, size: p.size }).toEqual({ started: 2, size: 1 });
      await job(p);
      expect(p.started).toBe(2); // the warm worker took it
      await until(() => p.started === 3 && p.size === 1);
    } finally {
      await p.close();
    }
  });

  test('a job that arrives while an idle worker is being retired goes to the fresh one, never to the one exiting', async () => {
    const p = pool({ idleMs: 200 });
    try {
      await job(p);
      // The idle timer fires in the timers phase; this check-phase poll sees it in the same turn,
      // before the retired worker's 'exit' (a later poll phase).
      await new Promise<void>((r) => {
        const poll = (): void => void (p.started === 2 ? r() : setImmediate(poll));
        poll();
      });
      await job(p);
    } finally {
      await p.close();
    }
  });

  test('warm: 0 — every worker exits when idle', async () => {
    const p = pool({ idleMs: 300, warm: 0 });
    try {
      await job(p);
      await until(() => p.size === 0);
      await new Promise((r) => setTimeout(r, 400));
      expect({ started: p.started, size: p.size }).toEqual({ started: 1, size: 0 });
    } finally {
      await p.close();
    }
  });
});
