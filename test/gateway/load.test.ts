/**
 * Load on loopback: 200 concurrent streaming requests, 3 tool calls each, through the real SDK.
 * Every response must carry its own three calls (no cross-talk), in order, each block once.
 */
import { type RecordedRequest, turnScript } from '../../src/gateway/scripted';
import { Collector, READ_FILE_TOOL, rig, type Rig, toolBlocks } from './helpers';

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
