/**
 * Issue 18, gateway half: one large request must not stall or bloat the gateway, garbage is not
 * success, nothing after [DONE] is released, limits hold on every route, backend error bodies are
 * capped, memory comes back. Against a real `sluice serve` child with the hostile upstream; the
 * child reports its own event-loop delay (loopProbe.ts, perf_hooks monitorEventLoopDelay).
 *
 * CI scale: --max-body 2m and --body-memory 80m (one 2 MiB body costs 16 MiB of the budget, each
 * live body worker reserves 32 MiB). A valid body of 512 KiB or more is parsed and translated in
 * a body worker (src/gateway/worker, docs/limits.md "Memory budget"), so the event loop stays
 * free while it is. SLUICE_HEAVY=1 (npm run test:hostile-heavy): the default 32 MiB / 768 MiB
 * limits, 16 MiB nested 8 million deep, valid 4 / 16 / 31 MiB bodies, eight 31 MiB bodies at once
 * and a 200 MB error body — against the built CLI (dist/src/cli/main.js, rebuilt with tsc when a
 * source is newer): a child under ts-node spends its own loop on compiling, which is not the
 * gateway's delay (it preloads loopProbe.ts transpiled to JavaScript: no ts-node in that child).
 *
 * What "the loop stays free" asserts: the CPU time the gateway's main thread spends between two
 * ticks of a 5 ms timer (`heldMs`, loopProbe.ts) stays under HELD_BOUND_MS. The wall-clock delay
 * (`loopMaxMs`) is shown beside it but not bounded: on this shared 2-core machine it is mostly the
 * main thread waiting for a core (measured: a 160 ms delay = 4 ms CPU + 158 ms in the run queue),
 * so the same 16 MiB body measured 26–44 ms in the bench and 116–125 ms in this suite. A body
 * parsed on the loop holds it for its whole parse (--body-worker off: 600–1100 ms CPU at 16–31 MiB).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { expectRssBack } from './rss';
import { startHostileUpstream, type HostileUpstream } from './upstream';
import { loopProbeFile } from './loopProbeFile';
import { anyError, type ChildGateway, post, ROUTES, routeBody, sampleRss, spawnGateway, watchHealth } from './clients';

const HEAVY = process.env.SLUICE_HEAVY === '1';
jest.setTimeout(HEAVY ? 600_000 : 120_000);

const MiB = 1024 * 1024;
const MAX_BODY = HEAVY ? 32 * MiB : 2 * MiB;
const BUDGET = HEAVY ? 768 * MiB : 80 * MiB;
/**
 * The event-loop goal is ~50 ms (issue 18), asserted as the main thread's CPU between two 5 ms
 * ticks (a load-independent measure; see above). With the worker it measured 6–29 ms at 4–31 MiB.
 */
const HELD_BOUND_MS = 50;

const ROOT = path.join(__dirname, '../../..');
/** The built CLI for the heavy run: dist/src from `tsc -p tsconfig.build.json`, rebuilt when a source under src/ is newer. */
function builtCli(): string {
  const cli = path.join(ROOT, 'dist/src/cli/main.js');
  const built = fs.existsSync(cli) ? fs.statSync(cli).mtimeMs : 0;
  const newest = (dir: string): number =>
    fs.readdirSync(dir, { withFileTypes: true }).reduce((m, e) => {
      const p = path.join(dir, e.name);
      return Math.max(m, e.isDirectory() ? newest(p) : e.name.endsWith('.ts') ? fs.statSync(p).mtimeMs : 0);
    }, 0);
  if (newest(path.join(ROOT, 'src')) > built) {
    const r = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: ROOT, encoding: 'utf8' });
    // Type errors still emit; only a build that wrote nothing stops the run.
    if (!fs.existsSync(cli) || fs.statSync(cli).mtimeMs <= built) throw new Error(`the heavy run needs the built CLI; tsc -p tsconfig.build.json wrote none:\n${r.stdout}${r.stderr}`);
  }
  return cli;
}

let up: HostileUpstream;
let gw: ChildGateway;
let startup = 0;
let cursor = 0;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  up = await startHostileUpstream();
  const limits = HEAVY ? [] : ['--max-body', '2m', '--body-memory', '80m'];
  gw = await spawnGateway(
    ['--upstream', up.url, '--port', '0', '--max-concurrency', '8', '--idle-timeout', '3000', '--log-level', 'warn', ...limits],
    {},
    // Plain node (CI: the cached transpile; heavy: the built CLI) with the probe as plain JS: no
    // compiler in the heap, so start-up RSS (~62 MiB) and what comes back are what a user's are.
    { preload: [loopProbeFile(true)], ...(HEAVY ? { cli: builtCli() } : {}) },
  );
  await post(gw.url, '/v1/messages', routeBody('/v1/messages', 'ok', true));
  await sleep(300);
  startup = gw.rss() ?? 0;
});

afterAll(async () => {
  const alive = gw?.alive();
  await gw?.stop();
  await up?.close();
  expect(alive).toBe(true);
});

interface Loop {
  /** Worst event-loop delay (ms, wall time). */
  loopMaxMs: number;
  /** Worst main-thread CPU between two 5 ms ticks (ms); NaN where the probe cannot read it. */
  heldMs: number;
}

/** The child's loop since the last call (from loopProbe.ts lines). */
function loopSinceLast(): Loop {
  const r: Loop = { loopMaxMs: 0, heldMs: NaN };
  for (; cursor < gw.stderr.length; cursor++) {
    const m = /^sluice-loop-probe (\{.*\})$/.exec(gw.stderr[cursor]!);
    if (!m) continue;
    const p = JSON.parse(m[1]!) as { maxMs: number; heldMs?: number };
    r.loopMaxMs = Math.max(r.loopMaxMs, p.maxMs);
    if (p.heldMs !== undefined) r.heldMs = Math.max(Number.isNaN(r.heldMs) ? 0 : r.heldMs, p.heldMs);
  }
  return r;
}

/** The child's loop over `ms` with no request (this machine's floor right now). */
async function idleFloor(ms = 2000): Promise<Loop> {
  await sleep(250);
  loopSinceLast();
  await sleep(ms);
  return loopSinceLast();
}

/** The loop stayed free: the main thread's CPU between ticks under the bound (Linux; elsewhere the check is skipped). */
function expectLoopFree(what: Record<string, unknown>, g: Loop, floor: Loop): void {
  const below = Number.isNaN(g.heldMs) || g.heldMs < HELD_BOUND_MS;
  // The heavy run is run by hand: it says what it measured (docs/limits.md quotes it).
  if (HEAVY) process.stdout.write(`[limits] ${JSON.stringify({ ...what, ...g, floor })}\n`);
  expect({ ...what, ...g, floor, below }).toEqual({ ...what, ...g, floor, below: true });
}

/** Run `fn` under the /health watcher (every answer within 1 s), with the child's peak RSS. */
async function guarded(fn: () => Promise<void>): Promise<{ peakRss: number } & Loop> {
  await sleep(250);
  loopSinceLast();
  const health = watchHealth(gw.url);
  const rss = sampleRss(gw);
  await fn();
  await sleep(300); // one more probe line after the work
  const peakRss = rss.stop();
  const h = await health.stop();
  const loop = loopSinceLast();
  // The child's own loop is in the message: a slow /health with a free loop is this machine.
  expect({ failed: h.failed, slow: h.maxMs >= 1000, ...loop }).toEqual({ failed: [], slow: false, ...loop });
  expect(gw.alive()).toBe(true);
  return { peakRss, ...loop };
}

/**
 * Idle RSS must come back within 2× start-up + 100 MB (issue 18 item 9) — and, since `sluice serve`
 * collects twice after a burst (body.ts MemoryBudget: 1 s idle, then 6 s more; the second one
 * gives back the young generation V8 grew), within start-up + 32 MiB here (heavy run: 64 MiB, not
 * re-measured since), plus the one fresh body worker the pool keeps warm once a large body has
 * started one (`warm`, pool.ts; measured 7–8 MiB RSS; the start-up RSS is taken before any worker
 * runs). Measured on a plain child (start-up 62 MiB): 83–91 MiB after the bursts; without the
 * second collection it stays at 136–141 MiB, and a kept 32 MiB text stream alone would be over the bound.
 */
const WARM_WORKER_BYTES = 16 * MiB;
const IDLE_ALLOWANCE = (HEAVY ? 64 : 32) * MiB;
async function expectMemoryBack(): Promise<void> {
  const bound = Math.min(2 * startup + 100 * MiB, startup + IDLE_ALLOWANCE + WARM_WORKER_BYTES);
  // The second collection runs 7 s after the last request ends: up to 15 s (heavy: 30 s).
  await expectRssBack(gw, bound, (HEAVY ? 30 : 15) * 1000, 'limits', { startup });
}

/** `{"model":"ok","messages":[{"role":"user","content":"xxxx…"}]…}` of about `bytes` bytes. */
function bigMessages(bytes: number, model = 'ok'): string {
  const head = `{"model":"${model}","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"`;
  const tail = '"}]}';
  return head + 'x'.repeat(bytes - head.length - tail.length) + tail;
}

describe('one large request cannot stall or bloat the gateway', () => {
  test(`a ${HEAVY ? 16 : 2} MiB body nested millions deep is refused while it arrives (400), the event loop stays free`, async () => {
    const depth = HEAVY ? 8_000_000 : 1_000_000;
    // Built as bytes before the watch starts: the test process must not stall either.
    const deep = Buffer.from('{"model":"ok","messages":' + '['.repeat(depth) + ']'.repeat(depth) + '}');
    let r: Awaited<ReturnType<typeof post>> | undefined;
    const floor = await idleFloor();
    const g = await guarded(async () => {
      r = await post(gw.url, '/v1/messages', deep, { timeoutMs: 20_000 });
    });
    expect(r!.status).toBe(400);
    expect(anyError(r!)).toMatchObject({ type: 'invalid_request_error', message: expect.stringMatching(/nested deeper than 128 levels/) });
    // The old walk over the parsed body blocked the loop for seconds; the streaming scan never does.
    expectLoopFree({ depth }, g, floor);
  });

  test(`valid ${HEAVY ? '4, 16 and 31' : '2'} MiB bodies are translated off the event loop: /health within 1 s, the loop never held`, async () => {
    const sizes = HEAVY ? [4 * MiB, 16 * MiB, 31 * MiB] : [MAX_BODY - 1024];
    // Warm-up: the first large body starts the worker (from sources: bundles it first).
    expect((await post(gw.url, '/v1/messages', Buffer.from(bigMessages(MiB)), { timeoutMs: 60_000 })).status).toBe(200);
    for (const size of sizes) {
      const payload = Buffer.from(bigMessages(size, 'ok-slow:20'));
      const floor = await idleFloor();
      let status = 0;
      const g = await guarded(async () => {
        status = (await post(gw.url, '/v1/messages', payload, { timeoutMs: 120_000 })).status;
      });
      expect(status).toBe(200);
      expectLoopFree({ size }, g, floor);
    }
    // The worker ran (from the sources: bundled by esbuild); a fallback to the loop would say so.
    expect(gw.stderr.filter((l) => /body_worker_(unavailable|failed)/.test(l))).toEqual([]);
  });

  test('invalid JSON is refused at the first bad byte, before the body is complete', async () => {
    const r = await post(gw.url, '/v1/chat/completions', '{"model": "ok", "messages": ]' + ' '.repeat(1_000_000));
    expect(r.status).toBe(400);
    expect(anyError(r)?.message).toMatch(/not valid JSON \(.* at character 28\)/);
  });

  test('bodies in flight are bounded by the memory budget: the ones that do not fit get 503 with retry-after; peak RSS stays under it', async () => {
    const n = 8;
    const size = MAX_BODY - 1024;
    let results: Awaited<ReturnType<typeof post>>[] = [];
    const payload = Buffer.from(bigMessages(size, 'ok-slow:50')); // built once: the test process must not stall either
    const g = await guarded(async () => {
      results = await Promise.all(Array.from({ length: n }, () => post(gw.url, '/v1/messages', payload, { timeoutMs: 60_000 })));
    });
    const statuses = results.map((r) => r.status);
    const fits = Math.floor(BUDGET / (size * 8));
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(1);
    expect(statuses.filter((s) => s === 200).length).toBeLessThanOrEqual(fits);
    const refused = results.filter((r) => r.status === 503);
    // Every status in the message: anything but 200 or 503 is a failure of its own.
    expect({ statuses, other: results.filter((r) => r.status !== 200 && r.status !== 503).map((r) => `${r.status} ${r.failed ?? ''} ${r.body.slice(0, 300)}`) }).toEqual({ statuses, other: [] });
    for (const r of refused) {
      expect(r.headers['retry-after']).toBe('1');
      expect(JSON.parse(r.body)).toMatchObject({ type: 'error', error: { type: 'overloaded_error', message: expect.stringMatching(/memory budget/) } });
    }
    expect(g.peakRss).toBeLessThan(startup + BUDGET + 64 * MiB);
    await expectMemoryBack();
  });
});

describe('garbage is not success, on every route', () => {
  test.each(ROUTES.flatMap((route) => ['garbage', 'no-ct', 'empty'].flatMap((model) => [true, false].map((stream) => [route, model, stream] as const))))(
    '%s %s stream=%s: 502 before the first byte, one error event after',
    async (route, model, stream) => {
      const r = await post(gw.url, route, routeBody(route, model, stream));
      if (stream) {
        expect(r.status).toBe(200);
        expect(anyError(r)).toBeDefined();
      } else {
        expect(r.status).toBe(502);
        // The reader's bad_stream (SPEC §12: what arrived) or, for a body it could frame, the fence's.
        expect(anyError(r)?.message).toMatch(/without a single valid event|not an SSE event stream|response body was empty/);
      }
      expect(r.body + r.frames.map((f) => f.data).join('\n')).not.toMatch(/"(end_turn|stop|completed)"/);
    },
  );
});

describe('nothing after [DONE] is released, on every route', () => {
  test.each(ROUTES.flatMap((route) => [true, false].map((stream) => [route, stream] as const)))('%s stream=%s', async (route, stream) => {
    const r = await post(gw.url, route, routeBody(route, 'text-after-done', stream));
    expect(r.status).toBe(200);
    const all = r.body + r.frames.map((f) => f.data).join('\n');
    expect(all).toMatch(/hello/);
    expect(all).not.toMatch(/LEAK/);
  });
});

describe('request limits hold on every route', () => {
  const cases: [string, (route: string) => Record<string, unknown>, RegExp][] = [
    ['max_tokens 1e308', (route) => (route === '/v1/responses' ? { max_output_tokens: 1e308 } : { max_tokens: 1e308 }), /max_tokens: 1e\+308 > 1048576/],
    [
      'a tool named ../..',
      (route) =>
        route === '/v1/messages'
          ? { tools: [{ name: '../..', input_schema: { type: 'object' } }] }
          : route === '/v1/chat/completions'
            ? { tools: [{ type: 'function', function: { name: '../..', parameters: { type: 'object' } } }] }
            : { tools: [{ type: 'function', name: '../..', parameters: { type: 'object' } }] },
      /tools\.0\.name: String should match pattern/,
    ],
    [
      'a tool whose schema is not an object',
      (route) =>
        route === '/v1/messages'
          ? { tools: [{ name: 't', input_schema: { type: 'string' } }] }
          : route === '/v1/chat/completions'
            ? { tools: [{ type: 'function', function: { name: 't', parameters: { type: 'string' } } }] }
            : { tools: [{ type: 'function', name: 't', parameters: { type: 'string' } }] },
      /input_schema\.type: Input should be 'object'/,
    ],
  ];
  test.each(ROUTES.flatMap((route) => cases.map(([name, extra, msg]) => [route, name, extra, msg] as const)))('%s: %s → 400', async (route, _name, extra, msg) => {
    const r = await post(gw.url, route, routeBody(route, 'ok', false, extra(route)));
    expect(r.status).toBe(400);
    expect(anyError(r)).toMatchObject({ type: 'invalid_request_error', message: expect.stringMatching(msg) });
  });
});

describe('backend error bodies are capped', () => {
  test('a 64 KiB 500 body: the client gets 500 with a bounded message naming the status', async () => {
    const r = await post(gw.url, '/v1/messages', routeBody('/v1/messages', 'error-body:500-65536', false));
    expect(r.status).toBe(500);
    const e = anyError(r)!;
    expect(e.message).toMatch(/^upstream: HTTP 500: E+…$/);
    expect(e.message!.length).toBeLessThanOrEqual(330);
  });

  test(`a ${HEAVY ? 200 : 64} MB error body is not read to its end`, async () => {
    const before = up.errorBytes();
    const bytes = (HEAVY ? 200 : 64) * 1_000_000;
    const g = await guarded(async () => {
      const r = await post(gw.url, '/v1/chat/completions', routeBody('/v1/chat/completions', `error-body:503-${bytes}`, true), { timeoutMs: 30_000 });
      expect(r.status).toBe(503);
      expect(anyError(r)?.message).toMatch(/^upstream: HTTP 503: /);
    });
    await sleep(200);
    // What the gateway read before it hung up: the 16 KiB cap plus socket buffers, not the body.
    expect(up.errorBytes() - before).toBeLessThan(8 * MiB);
    expect(g.peakRss).toBeLessThan(startup + 64 * MiB);
  });
});

test(`memory comes back after backend bursts: ${HEAVY ? 'three 300 MB arguments and a 100 MB event' : 'a 32 MiB text stream and a 16 MiB event'}`, async () => {
  const post1 = (model: string): Promise<void> =>
    post(gw.url, '/v1/messages', routeBody('/v1/messages', model, true), { timeoutMs: HEAVY ? 300_000 : 60_000, tailOnly: true }).then((r) => {
      expect(r.status).toBe(200);
      expect(['message_stop', 'error']).toContain(r.frames[r.frames.length - 1]?.event);
    });
  // Only the memory is checked here (/health under big streams: gateway.test.ts). One huge SSE event
  // is decoded, parsed and re-encoded in one piece (src/wire, src/encode), which blocks the loop.
  for (const model of HEAVY ? ['big-arg:314572800', 'big-arg:314572800', 'big-arg:314572800', 'big-event:104857600'] : ['big-text:33554432', 'big-event:16777216'])
    await post1(model);
  await expectMemoryBack();
});
