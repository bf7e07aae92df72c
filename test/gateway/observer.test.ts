/**
 * The ExchangeObserver seam: one `start` per request, each stage hook once, `end` exactly once
 * with the outcome on every exit path (ok, backend error, refused backend, invalid request,
 * client disconnect), and the observation's headers reach the backend.
 */
import * as http from 'node:http';
import type { ExchangeObserver, RequestEnd, RequestInfo } from '../../src/gateway/observer';
import { turnScript } from '../../src/gateway/scripted';
import { Collector, eventually, rawRequest, READ_FILE_TOOL, rig, type Rig } from './helpers';

interface Seen {
  info: RequestInfo;
  stages: string[];
  ends: RequestEnd[];
}

function recorder(): { observer: ExchangeObserver; seen: Seen[] } {
  const seen: Seen[] = [];
  const observer: ExchangeObserver = {
    start(info) {
      const s: Seen = { info, stages: [], ends: [] };
      seen.push(s);
      return {
        upstreamHeaders: () => {
          s.stages.push('upstreamHeaders');
          return { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };
        },
        upstreamResponse: (status) => s.stages.push(`upstreamResponse:${status}`),
        upstreamFailed: (type) => s.stages.push(`upstreamFailed:${type}`),
        firstByte: () => s.stages.push('firstByte'),
        firstClientByte: () => s.stages.push('firstClientByte'),
        controller: () => s.stages.push('controller'),
        end: (e) => {
          s.stages.push('end');
          s.ends.push(e);
        },
      };
    },
  };
  return { observer, seen };
}

const USER = [{ role: 'user' as const, content: 'hi' }];

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

test('a streamed turn with a call: every stage once, in order, end with the outcome', async () => {
  const { observer, seen } = recorder();
  r = await rig({ script: () => turnScript({ text: ['a', 'b'], calls: [{ id: 'c1', name: 'read_file', args: ['{"path":', '"x"}'] }] }) }, { observer });
  const c = new Collector(
    r.client.messages.stream({ model: 'm', max_tokens: 64, messages: USER, tools: [READ_FILE_TOOL] }) as unknown as AsyncIterable<never>,
  );
  await c.done;
  await eventually(() => seen[0]?.ends.length === 1);
  expect(seen).toHaveLength(1);
  const s = seen[0]!;
  expect(s.info).toMatchObject({ api: 'messages', path: '/v1/messages', stream: true, model: 'm', upstreamFormat: 'openai-chat', wire: 'openai-chat' });
  expect(s.stages).toEqual(['upstreamHeaders', 'upstreamResponse:200', 'controller', 'firstClientByte', 'firstByte', 'end']);
  expect(s.ends[0]).toMatchObject({ status: 200, outcome: 'ok', stopReason: 'tool_use', toolUses: 1, malformedCalls: 0, inputTokens: 10, outputTokens: 5 });
  expect(r.up.requests[0]!.headers.traceparent).toBe('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
});

test('non-streaming: the first client byte is the JSON answer', async () => {
  const { observer, seen } = recorder();
  r = await rig({ script: () => turnScript({ text: ['ok'] }) }, { observer });
  await r.client.messages.create({ model: 'm', max_tokens: 16, messages: USER });
  await eventually(() => seen[0]?.ends.length === 1);
  expect(seen[0]!.stages).toEqual(['upstreamHeaders', 'upstreamResponse:200', 'controller', 'firstByte', 'firstClientByte', 'end']);
  expect(seen[0]!.ends[0]).toMatchObject({ status: 200, outcome: 'ok', stopReason: 'end_turn', toolUses: 0 });
});

test('backend answers 500: upstreamResponse then end with upstream_error', async () => {
  const { observer, seen } = recorder();
  r = await rig({ script: { status: 500, body: { error: { message: 'boom', type: 'x' } } } }, { observer });
  const res = await rawRequest(r.gw.url, { path: '/v1/messages', body: JSON.stringify({ model: 'm', max_tokens: 16, messages: USER }) });
  expect(res.status).toBeGreaterThanOrEqual(500);
  await eventually(() => seen[0]?.ends.length === 1);
  expect(seen[0]!.stages).toEqual(['upstreamHeaders', 'upstreamResponse:500', 'end']);
  expect(seen[0]!.ends[0]).toMatchObject({ status: res.status, outcome: 'upstream_error', errorType: expect.any(String) });
});

test('backend refuses the connection: upstreamFailed then end', async () => {
  const { observer, seen } = recorder();
  // A port nobody listens on: bind one, note it, close it.
  const free = http.createServer();
  await new Promise<void>((ok) => free.listen(0, '127.0.0.1', ok));
  const port = (free.address() as { port: number }).port;
  await new Promise<void>((ok) => free.close(() => ok()));
  r = await rig({ script: () => turnScript({ text: ['ok'] }) }, { observer, upstream: `http://127.0.0.1:${port}/v1` });
  const res = await rawRequest(r.gw.url, { path: '/v1/messages', body: JSON.stringify({ model: 'm', max_tokens: 16, messages: USER }) });
  expect(res.status).toBeGreaterThanOrEqual(500);
  await eventually(() => seen[0]?.ends.length === 1);
  expect(seen[0]!.stages[0]).toBe('upstreamHeaders');
  expect(seen[0]!.stages[1]).toMatch(/^upstreamFailed:/);
  expect(seen[0]!.stages.slice(2)).toEqual(['end']);
  expect(seen[0]!.ends[0]).toMatchObject({ status: res.status, outcome: 'upstream_error' });
});

test('invalid request: start and end (400), nothing else', async () => {
  const { observer, seen } = recorder();
  r = await rig({ script: () => turnScript({ text: ['ok'] }) }, { observer });
  const res = await rawRequest(r.gw.url, { path: '/v1/chat/completions', body: JSON.stringify({ model: 'm', messages: [] }) });
  expect(res.status).toBe(400);
  await eventually(() => seen[0]?.ends.length === 1);
  expect(seen[0]!.info).toMatchObject({ api: 'chat', model: 'm' });
  expect(seen[0]!.stages).toEqual(['end']);
  expect(seen[0]!.ends[0]).toMatchObject({ status: 400, outcome: 'invalid_request', errorType: 'invalid_request_error' });
});

test('client disconnect mid-stream: end exactly once with client_disconnect', async () => {
  const { observer, seen } = recorder();
  r = await rig({ script: [...turnScript({ text: ['a'] }).slice(0, 2), { t: 0, hang: true }] }, { observer });
  const gw = new URL(r.gw.url);
  await new Promise<void>((done, fail) => {
    const req = http.request(
      { host: gw.hostname, port: gw.port, path: '/v1/messages', method: 'POST', headers: { 'content-type': 'application/json' } },
      (res) => {
        res.once('data', () => {
          req.destroy();
          done();
        });
      },
    );
    req.on('error', () => undefined);
    req.on('timeout', () => fail(new Error('timeout')));
    req.end(JSON.stringify({ model: 'm', max_tokens: 16, stream: true, messages: USER }));
  });
  await eventually(() => seen[0]?.ends.length === 1);
  await new Promise((ok) => setTimeout(ok, 50));
  expect(seen[0]!.ends).toHaveLength(1);
  expect(seen[0]!.ends[0]).toMatchObject({ status: 200, outcome: 'client_disconnect' });
});
