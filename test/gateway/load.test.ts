/**
 * Load on loopback: 200 concurrent streaming requests, 3 tool calls each, through the real SDK.
 * Every response must carry its own three calls (no cross-talk), in order, each block once. Backend
 * connections are reused across waves of concurrent streams (keep-alive, no connection per turn).
 */
import { type RecordedRequest, turnScript } from '../../src/gateway/scripted';
import { Collector, eventually, rawRequest, READ_FILE_TOOL, rig, type Rig, toolBlocks } from './helpers';

let r: Rig | undefined;
afterAll(async () => {
  await r?.close();
});

function userText(req: RecordedRequest): string {
  const msgs = (req.body as { messages: { role: string; content: string }[] }).messages;
  return msgs[msgs.length - 1]!.content;
}

test('200 concurrent streaming requests with 3 tool calls each all complete with correct blocks', async () => {
  const N = 200;
  r = await rig({
    script: (req) => {
      const tag = userText(req);
      return turnScript({
        text: ['Reading ', 'three files.'],
        calls: [0, 1, 2].map((k) => ({
          id: `call_${k}`,
          name: 'read_file',
          args: ['{"path":', `"/${tag}/${k}"`, '}'],
        })),
        stepMs: 2,
      });
    },
  });
  const t0 = Date.now();
  const results = await Promise.all(
    Array.from({ length: N }, async (_, i) => {
      const stream = await r!.client.messages.create({
        model: 'm',
        max_tokens: 256,
        messages: [{ role: 'user', content: `req${i}` }],
        tools: [READ_FILE_TOOL],
        stream: true,
      });
      const c = new Collector(stream);
      await c.done;
      return { i, c };
    }),
  );
  const elapsed = Date.now() - t0;
  for (const { i, c } of results) {
    expect(c.error).toBeUndefined();
    const blocks = toolBlocks(c.events);
    expect(blocks.map((b) => JSON.parse(b.json))).toEqual([0, 1, 2].map((k) => ({ path: `/req${i}/${k}` })));
    expect(blocks.every((b) => b.stops === 1 && /^toolu_/.test(b.id))).toBe(true);
    expect(new Set(blocks.map((b) => b.id)).size).toBe(3);
    const types = c.types();
    expect(types[0]).toBe('message_start');
    expect(types.slice(-2)).toEqual(['message_delta', 'message_stop']);
  }
  expect(r.up.requests).toHaveLength(N);
  expect(r.gw.active()).toBe(0);
  // No timed assertion (the machine may be busy); the bench (bench/gateway.ts) reports latencies.
  process.stderr.write(`[gateway load] ${N} concurrent streams × 3 calls: ${elapsed} ms\n`);
}, 120_000);

test('backend connections are kept for reuse up to the concurrency: a second wave of 100 held streams opens none', async () => {
  const N = 100; // more than the 64 free sockets the agent used to keep
  let gate = 'one';
  const held = await rig({ script: () => [{ t: 0, gate }, ...turnScript({ text: ['ok'] })] });
  try {
    const wave = async (k: number): Promise<number[]> => {
      const all = Promise.all(
        Array.from({ length: N }, (_, i) =>
          rawRequest(held.gw.url, { path: '/v1/messages', body: JSON.stringify({ model: 'm', max_tokens: 5, stream: true, messages: [{ role: 'user', content: `w${i}` }] }) }).then((x) => x.status),
        ),
      );
      // All N streams at the upstream at once, then let them finish together.
      await eventually(() => held.up.requests.length === k * N, 20_000, `${N} streams held`);
      held.up.gates.get(gate)!.release();
      return all;
    };
    expect((await wave(1)).every((s) => s === 200)).toBe(true);
    const opened = held.up.accepted();
    expect(opened).toBe(N);
    gate = 'two';
    expect((await wave(2)).every((s) => s === 200)).toBe(true);
    expect(held.up.accepted()).toBe(opened);
  } finally {
    await held.close();
  }
}, 60_000);
