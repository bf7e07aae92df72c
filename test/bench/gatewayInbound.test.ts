/**
 * The instruments of bench/gatewayInbound.ts, on real servers: the buffering translator speaks
 * each inbound API well enough for the bench's client to read the turn back, the client's "has
 * call 0" moment is at the end for the buffering translator and before the end through sluice,
 * and the correctness check rejects a wrong response.
 */
import * as http from 'node:http';
import { Logger } from '../../src/gateway/log';
import { startGateway, type Gateway } from '../../src/gateway/server';
import type { ScriptedUpstream } from '../../src/gateway/scripted';
import { isCorrect, type Middle, roundTrip, startBufferingTranslator, startPipe, startTurnUpstream, turnScript } from '../../bench/gatewayInbound';

const APIS = ['messages', 'responses', 'chat'] as const;
const STEP_MS = 2;

let up: ScriptedUpstream;
let buffering: Middle;
let pipe: Middle;
let gw: Gateway;
const agent = new http.Agent({ keepAlive: true });
let seq = 0;

beforeAll(async () => {
  up = await startTurnUpstream(() => STEP_MS);
  buffering = await startBufferingTranslator(up.url);
  pipe = await startPipe(up.url);
  gw = await startGateway({ upstream: up.url, logger: new Logger('silent'), pingIntervalMs: 0 });
  // Warm-up: the first request through a cold gateway loads and compiles its modules.
  for (const api of APIS) await roundTrip(gw.url.replace(/\/$/, ''), api, `req${seq++}x`, agent);
});

afterAll(async () => {
  agent.destroy();
  await gw.close();
  await buffering.close();
  await pipe.close();
  await up.close();
});

/** Upstream write times of call 0's completing chunk and of the last chunk, for the request with this tag. */
async function upstreamTimes(tag: string): Promise<{ call0: number; end: number }> {
  const rec = up.requests.find((q) => JSON.stringify(q.body).includes(`"${tag}"`));
  if (!rec) throw new Error(`no upstream request for ${tag}`);
  await rec.finished;
  const line = turnScript(tag, 0).call0Line;
  return { call0: rec.writes.find((w) => w.line === line)!.at, end: rec.writes[rec.writes.length - 1]!.at };
}

describe.each(APIS)('%s inbound', (api) => {
  it('the buffering translator delivers the whole turn, call 0 only after the stream ended', async () => {
    const tag = `req${seq++}x`;
    const got = await roundTrip(buffering.url, api, tag, agent);
    expect(isCorrect(got, tag)).toBe(true);
    const t = await upstreamTimes(tag);
    expect(got.call0At).toBeGreaterThanOrEqual(t.end);
  });

  it('through sluice the client has call 0 before the stream ends', async () => {
    // The turn has ~30 more chunks 2 ms apart after call 0 completes. A stall of this process
    // (a loaded machine) makes the upstream catch up in one burst, so take the best of 3 requests.
    let lead = -Infinity;
    for (let attempt = 0; attempt < 3 && lead <= 20; attempt++) {
      const tag = `req${seq++}x`;
      const got = await roundTrip(gw.url.replace(/\/$/, ''), api, tag, agent);
      expect(isCorrect(got, tag)).toBe(true);
      const t = await upstreamTimes(tag);
      expect(got.call0At).toBeGreaterThanOrEqual(t.call0);
      lead = Math.max(lead, t.end - got.call0At!);
    }
    expect(lead).toBeGreaterThan(20);
  });
});

it('the pipe and the direct hop pass the upstream stream through; the check rejects a wrong call', async () => {
  const call0Frame = turnScript('x', 0).call0Line;
  for (const base of [pipe.url, up.url]) {
    const tag = `req${seq++}x`;
    const got = await roundTrip(base, 'upstream-chat', tag, agent, call0Frame);
    expect(isCorrect(got, tag)).toBe(true);
    expect(got.call0At).toBeDefined();
    expect(isCorrect(got, `req${seq + 100}x`)).toBe(false);
    expect(isCorrect({ ...got, calls: got.calls.slice(1) }, tag)).toBe(false);
    expect(isCorrect({ ...got, text: got.text + 'x' }, tag)).toBe(false);
  }
});
