/**
 * Hostile clients and a hostile backend against a real `sluice serve` child process (issue 11,
 * gateway half). Every probe runs while a watcher polls /health (each answer within 1 s) and a
 * well-behaved client streams a normal three-call turn (it must complete correctly); after each
 * probe the child's idle RSS must come back within its baseline + 28 MiB (RSS_ALLOWANCE), and the
 * process must be alive at the end.
 *
 * Scaled down for CI (small configured limits: 4 slots, 40 connections, 1 s timeouts). The heavy
 * cases (a 512 MiB argument, a call index of 1e9) run with `npm run test:hostile-heavy`.
 */
import { expectRssBack } from './rss';
import { OK_PATHS, startHostileUpstream, type HostileUpstream } from './upstream';
import {
  type ChildGateway,
  get,
  idleSockets,
  isOkStream,
  messagesBody,
  post,
  slowBody,
  spawnGateway,
  streamError,
  toolInputs,
  watchHealth,
} from './clients';

const HEAVY = process.env.SLUICE_HEAVY === '1';
jest.setTimeout(HEAVY ? 600_000 : 60_000);

let up: HostileUpstream;
let gw: ChildGateway;
let baseline = 0;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  up = await startHostileUpstream();
  // SLUICE_HOSTILE_LEGACY=1 leaves out the hygiene flags, to reproduce the failures on a checkout
  // from before them (e.g. a `git worktree` of an older commit).
  const hygiene = process.env.SLUICE_HOSTILE_LEGACY === '1'
    ? []
    : ['--max-connections', '40', '--headers-timeout', '1000', '--body-timeout', '2000', '--keep-alive-timeout', '1000', '--request-deadline', '5000'];
  // Plain node on the cached transpile (what a user runs: ~62 MiB at start, no compiler in the heap).
  gw = await spawnGateway(['--upstream', up.url, '--port', '0', '--max-concurrency', '4', '--idle-timeout', '1000', '--log-level', 'warn', ...hygiene]);
  // Warm every path once, then take the baseline.
  for (let i = 0; i < 3; i++) expect(isOkStream(await post(gw.url, '/v1/messages', messagesBody('ok')), OK_PATHS)).toBe(true);
  await post(gw.url, '/v1/messages', messagesBody('error-chunk'));
  await post(gw.url, '/v1/messages', { bad: true });
  await sleep(200);
  baseline = gw.rss() ?? 0;
});

afterAll(async () => {
  const alive = gw?.alive();
  await gw?.stop();
  await up?.close();
  expect(alive).toBe(true);
});

/**
 * What idle RSS may keep over the baseline (~62 MiB, plain node) after a probe. The 24 MiB
 * slow-reader stream leaves the child at baseline + 43–67 MiB with V8 alone (dead strings and
 * buffers, a young generation grown to 32 MiB: kept for good); `sluice serve`'s two collections
 * after a burst (body.ts MemoryBudget: 1 s idle, then 6 s more) bring it to baseline + 6–17 MiB
 * (glibc keeps some freed buffer memory). Measured failing: the build before the second collection
 * (+67 MiB), and a child that keeps every byte it wrote to its clients (+34 MiB after the stream).
 */
const RSS_ALLOWANCE = 28 * 1024 * 1024;
/** How long RSS may take to come back: the collections run 1 s and 7 s after the last request ends. */
const RSS_WAIT_MS = 15_000;

/** Run a probe under the health watcher and beside a normal stream; then check RSS and liveness. */
async function probe(fn: () => Promise<void>): Promise<void> {
  const health = watchHealth(gw.url);
  const normal = post(gw.url, '/v1/messages', messagesBody('ok-slow:20'));
  await sleep(100); // the normal client's request is in before the probe starts
  await fn();
  const n = await normal;
  const h = await health.stop();
  expect({ normalOk: isOkStream(n, OK_PATHS), status: n.status }).toEqual({ normalOk: true, status: 200 });
  expect(h.failures).toBe(0);
  expect(h.maxMs).toBeLessThan(1000);
  expect(gw.alive()).toBe(true);
  if (baseline > 0) {
    await expectRssBack(gw, baseline + RSS_ALLOWANCE, (HEAVY ? 10 : 1) * RSS_WAIT_MS, 'gateway', { baseline });
  }
}

const messages = (r: { body: string }): { type: string; error: { type: string; message: string } } =>
  JSON.parse(r.body) as { type: string; error: { type: string; message: string } };

test('20 slow bodies do not take the 4 concurrency slots; they get 408 at the body timeout', async () => {
  await probe(async () => {
    const slow = Array.from({ length: 20 }, () => slowBody(gw.url, '/v1/messages', 1000, 200));
    try {
      await sleep(300);
      const normals = await Promise.all(Array.from({ length: 3 }, () => post(gw.url, '/v1/messages', messagesBody('ok'))));
      expect(normals.map((r) => r.status)).toEqual([200, 200, 200]);
      for (const r of normals) expect(isOkStream(r, OK_PATHS)).toBe(true);
      const statuses = await Promise.race([Promise.all(slow.map((s) => s.done)), sleep(6000).then(() => 'still open')]);
      expect(statuses).toEqual(Array(20).fill(408));
    } finally {
      slow.forEach((s) => s.stop());
    }
  });
});

test('idle sockets beyond the connection cap neither lock out /health nor outlive the header timeout', async () => {
  await probe(async () => {
    const idle = idleSockets(gw.url, 60);
    try {
      await sleep(300);
      const r = await get(gw.url, '/health', 1000);
      expect(r.status).toBe(200);
      // The gateway closes every one of them (evicted for newer connections, or at the header timeout).
      for (let i = 0; i < 40 && idle.open() > 0; i++) await sleep(100);
      expect(idle.open()).toBe(0);
    } finally {
      idle.closeAll();
    }
  });
});

test('an upstream that sends only SSE comments times out (comments are not progress) and frees its slot', async () => {
  await probe(async () => {
    // Three: the fourth slot is the normal stream's.
    const rs = await Promise.all(Array.from({ length: 3 }, () => post(gw.url, '/v1/messages', messagesBody('comments'), { timeoutMs: 8000 })));
    for (const r of rs) {
      expect(r.failed).toBeUndefined();
      expect(streamError(r)?.type).toBe('timeout_error');
    }
    const h = JSON.parse((await get(gw.url, '/health')).body) as { active: number };
    expect(h.active).toBeLessThanOrEqual(1); // only the watcher's normal stream may still run
  });
});

test('a stream that never ends is cut at the request deadline with timeout_error', async () => {
  await probe(async () => {
    const r = await post(gw.url, '/v1/messages', messagesBody('drip'), { timeoutMs: 10_000 });
    expect(r.failed).toBeUndefined();
    const e = streamError(r);
    expect(e?.type).toBe('timeout_error');
    expect(e?.message).toMatch(/deadline/);
    expect(r.ms).toBeGreaterThan(4500);
  });
});

test('a slow-reading client gets the whole stream from a healthy upstream (no idle timeout during backpressure)', async () => {
  await probe(async () => {
    const r = await post(gw.url, '/v1/messages', messagesBody('big-text:25165824'), { stallMs: 2500, timeoutMs: 30_000, tailOnly: true });
    expect(streamError(r)).toBeUndefined();
    expect(r.frames[r.frames.length - 1]?.event).toBe('message_stop');
  });
});

test('a 200 text/plain upstream body is a 502, not an empty end_turn', async () => {
  await probe(async () => {
    const r = await post(gw.url, '/v1/messages', messagesBody('plain'));
    expect(r.status).toBe(502);
    expect(messages(r)).toMatchObject({ type: 'error', error: { type: 'api_error' } });
  });
});

test.each(['after-done', 'after-finish'])('%s: a call after the finish is not released as another block', async (model) => {
  await probe(async () => {
    const r = await post(gw.url, '/v1/messages', messagesBody(model));
    expect(r.frames[r.frames.length - 1]?.event).toBe('message_stop');
    expect(toolInputs(r)).toEqual([{ name: 'read_file', input: { path: 'a.txt' } }]);
  });
});

test('an upstream error chunk of type server_error reaches the client as api_error', async () => {
  await probe(async () => {
    const r = await post(gw.url, '/v1/messages', messagesBody('error-chunk'));
    expect(streamError(r)?.type).toBe('api_error');
    expect(r.frames.filter((f) => f.event === 'error')).toHaveLength(1);
  });
});

function deep(levels: number): string {
  return '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
}

test('100k-level nesting in input_schema or tool_use.input is a 400, not a 500', async () => {
  await probe(async () => {
    const schema = `{"model":"ok","max_tokens":10,"messages":[{"role":"user","content":"x"}],"tools":[{"name":"t","input_schema":{"type":"object","properties":${deep(100_000)}}}]}`;
    const input = `{"model":"ok","max_tokens":10,"messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"t","input":${deep(100_000)}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok"}]}]}`;
    for (const body of [schema, input]) {
      const r = await post(gw.url, '/v1/messages', body);
      expect(r.status).toBe(400);
      expect(messages(r).error.type).toBe('invalid_request_error');
    }
  });
});

test('what the Anthropic API rejects is rejected with its error shape', async () => {
  const base = messagesBody('ok');
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ ...base, max_tokens: 1e308 }, /^max_tokens: /],
    [{ ...base, tools: [{ name: 't', input_schema: { type: 'string' } }] }, /input_schema\.type: Input should be 'object'/],
    [{ ...base, tools: [{ name: 'x'.repeat(1800) + ' y', input_schema: { type: 'object' } }] }, /tools\.0\.name: String should match pattern/],
    [
      { ...base, messages: [{ role: 'user', content: 'x' }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_nope', content: 'r' }] }] },
      /unexpected `tool_use_id` found in `tool_result` blocks/,
    ],
  ];
  await probe(async () => {
    for (const [body, msg] of cases) {
      const r = await post(gw.url, '/v1/messages', body);
      expect(r.status).toBe(400);
      const j = messages(r);
      expect(j.type).toBe('error');
      expect(j.error.type).toBe('invalid_request_error');
      expect(j.error.message).toMatch(msg);
    }
  });
});

test(`a call index of ${HEAVY ? '1e9' : '1e7'} does not freeze the gateway`, async () => {
  await probe(async () => {
    const r = await post(gw.url, '/v1/messages', messagesBody(`index:${HEAVY ? 1e9 : 1e7}`), { timeoutMs: 20_000 });
    expect(r.status).toBe(200);
    const last = r.frames[r.frames.length - 1]?.event;
    expect(['message_stop', 'error']).toContain(last);
    expect(r.ms).toBeLessThan(1000);
  });
});

(HEAVY ? test : test.skip)('a 512 MiB argument ends that stream with an error, not the process', async () => {
  await probe(async () => {
    const r = await post(gw.url, '/v1/messages', messagesBody(`big-arg:${512 * 1024 * 1024}`), { timeoutMs: 300_000 });
    expect(r.status).toBe(200);
    expect(r.frames[r.frames.length - 1]?.event).toBe('error');
  });
});
