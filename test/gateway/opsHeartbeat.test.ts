/**
 * The operations listener's /health agrees with the main port's the moment a request ends: the
 * request's end (its slot and body memory given back) is published to the operations thread at
 * once, not at the next periodic heartbeat (ops.ts HEARTBEAT_MS).
 */
import { Logger } from '../../src/gateway/log';
import { HEARTBEAT_MS } from '../../src/gateway/ops';
import { chatChunk, type ScriptedUpstream, startScriptedUpstream } from '../../src/gateway/scripted';
import { type Gateway, startGateway } from '../../src/gateway/server';

let up: ScriptedUpstream;
let gw: Gateway;

beforeAll(async () => {
  // Long enough that a periodic heartbeat falls inside the request (it then says active: 1).
  const endMs = 8 * HEARTBEAT_MS;
  up = await startScriptedUpstream({
    script: [
      { t: 0, data: chatChunk({ content: 'hello' }) },
      { t: endMs, data: chatChunk({ finish: 'stop' }) },
      { t: endMs, data: '[DONE]' },
    ],
  });
  gw = await startGateway({ upstream: up.url, port: 0, logger: new Logger('silent'), ops: { port: 0 }, bodyWorker: false, pingIntervalMs: 0 });
});

afterAll(async () => {
  await gw?.close();
  await up?.close();
});

interface Health {
  status: string;
  active: number;
  bodyBudgetInUse: number;
}

const health = async (url: string): Promise<Health> => (await (await fetch(`${url}/health`)).json()) as Health;

test('right after a request ends, the operations /health says active 0 and no body memory, like the main port', async () => {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'x'.repeat(10_000) }] }),
  });
  // In flight: the periodic heartbeat publishes it (every HEARTBEAT_MS; polled, the machine may be busy).
  let during = await health(gw.ops!.url);
  for (let i = 0; i < 50 && during.active === 0; i++) {
    await new Promise((r) => setTimeout(r, HEARTBEAT_MS / 5));
    during = await health(gw.ops!.url);
  }
  expect([during.active, during.bodyBudgetInUse > 0]).toEqual([1, true]);
  await res.text();
  const [ops, main] = await Promise.all([health(gw.ops!.url), health(gw.url)]);
  expect({ active: ops.active, bodyBudgetInUse: ops.bodyBudgetInUse }).toEqual({ active: 0, bodyBudgetInUse: 0 });
  expect({ active: main.active, bodyBudgetInUse: main.bodyBudgetInUse }).toEqual({ active: 0, bodyBudgetInUse: 0 });
});
