/**
 * `GET /v1/models` with the real openai SDK: the configured names (literal --model-map patterns,
 * --model) and, when the backend answers its models endpoint, the backend's ids; a backend that
 * is down or answers an error still leaves a 200 list of the configured names.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Logger } from '../../src/gateway/log';
import { type Gateway, startGateway } from '../../src/gateway/server';
import { backendModelIds } from '../../src/gateway/upstream/models';
import { openaiClient, rawRequest } from './helpers';

/** A backend whose GET /v1/models answers `answer` (status, body); records the auth it saw. */
async function backend(status: number, body: unknown): Promise<{ url: string; auth: (string | undefined)[]; close: () => Promise<void> }> {
  const auth: (string | undefined)[] = [];
  const srv = http.createServer((req, res) => {
    auth.push(req.headers.authorization);
    if (req.method === 'GET' && req.url === '/v1/models') {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}/v1`, auth, close: () => new Promise((r) => srv.close(() => r())) };
}

const models = { rules: [{ pattern: 'gpt-4o', target: 'qwen3-coder' }, { pattern: 'claude-*', target: 'qwen3-coder' }], fallback: 'qwen3-32b' };
let gw: Gateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

test('configured names then the backend’s ids (deduplicated), in the OpenAI list shape', async () => {
  const be = await backend(200, { object: 'list', data: [{ id: 'qwen3-coder', object: 'model' }, { id: 'qwen3-32b' }, { nope: 1 }] });
  try {
    gw = await startGateway({ upstream: be.url, upstreamApiKey: 'backend-key', models, logger: new Logger('warn', () => undefined), pingIntervalMs: 0 });
    const list = await openaiClient(gw.url).models.list();
    expect(list.data.map((m) => [m.id, m.owned_by])).toEqual([
      ['gpt-4o', 'sluice'],
      ['qwen3-32b', 'sluice'],
      ['qwen3-coder', 'upstream'],
    ]);
    expect(list.data[0]).toEqual({ id: 'gpt-4o', object: 'model', created: 0, owned_by: 'sluice' });
    expect(be.auth).toEqual(['Bearer backend-key']); // the configured key, never the client's
  } finally {
    await be.close();
  }
});

test('a backend that errors or is down leaves the configured names; POST is a 405', async () => {
  const be = await backend(500, { error: 'boom' });
  try {
    gw = await startGateway({ upstream: be.url, models, logger: new Logger('warn', () => undefined), pingIntervalMs: 0 });
    const res = await rawRequest(gw.url, { method: 'GET', path: '/v1/models' });
    expect(res.status).toBe(200);
    expect((res.json as { data: { id: string }[] }).data.map((m) => m.id)).toEqual(['gpt-4o', 'qwen3-32b']);
    expect((await rawRequest(gw.url, { method: 'POST', path: '/v1/models', body: '{}' })).status).toBe(405);
  } finally {
    await be.close();
  }
  await gw.close();
  gw = await startGateway({ upstream: 'http://127.0.0.1:9/v1', logger: new Logger('warn', () => undefined), pingIntervalMs: 0 });
  const down = await rawRequest(gw.url, { method: 'GET', path: '/v1/models' });
  expect(down.status).toBe(200);
  expect(down.json).toEqual({ object: 'list', data: [] });
});

test('backend list shapes: OpenAI/Anthropic data[].id, Gemini models[].name; junk ignored', () => {
  expect(backendModelIds({ data: [{ id: 'claude-sonnet-4-5', type: 'model', display_name: 'Claude' }] })).toEqual(['claude-sonnet-4-5']);
  expect(backendModelIds({ models: [{ name: 'models/gemini-2.5-flash' }, { name: 7 }] })).toEqual(['gemini-2.5-flash']);
  expect(backendModelIds('nope')).toEqual([]);
  expect(backendModelIds({ data: [{ id: 'x'.repeat(300) }] })).toEqual([]);
});
