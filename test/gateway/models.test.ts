/**
 * The models routes with the real SDKs: `GET /v1/models` (openai SDK: OpenAI's list; Anthropic
 * SDK, which sends `anthropic-version`: Anthropic's paged list) — the configured names (literal
 * --model-map patterns, --model) and, when the backend answers its models endpoint, the backend's
 * ids; a backend that is down or answers an error still leaves a 200 list of the configured names —
 * and `GET /v1/models/{id}` (`models.retrieve` in both SDKs; an unknown id is a 404 in each API's
 * error shape).
 */
import Anthropic from '@anthropic-ai/sdk';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Logger } from '../../src/gateway/log';
import { type Gateway, startGateway } from '../../src/gateway/server';
import { backendModels } from '../../src/gateway/upstream/models';
import { openaiClient, rawRequest } from './helpers';

/** A backend whose GET /v1/models answers `answer` (status, body); records the auth it saw. */
async function backend(status: number, body: unknown, path = '/v1/models'): Promise<{ url: string; auth: (string | undefined)[]; close: () => Promise<void> }> {
  const auth: (string | undefined)[] = [];
  const srv = http.createServer((req, res) => {
    const key = req.headers['x-api-key'];
    auth.push(req.headers.authorization ?? (typeof key === 'string' ? key : undefined));
    if (req.method === 'GET' && req.url === path) {
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

test('an Anthropic or Gemini backend is asked for one page of everything (limit=1000, pageSize=1000)', async () => {
  const anth = await backend(200, { data: [{ type: 'model', id: 'claude-opus-4-1', display_name: 'Claude Opus 4.1', created_at: '2025-08-05T00:00:00Z' }], has_more: false }, '/v1/models?limit=1000');
  const gem = await backend(200, { models: [{ name: 'models/gemini-2.5-pro', displayName: 'Gemini 2.5 Pro' }] }, '/v1beta/models?pageSize=1000');
  try {
    gw = await startGateway({ upstream: anth.url, upstreamFormat: 'anthropic', upstreamApiKey: 'ak', logger: new Logger('warn', () => undefined), pingIntervalMs: 0 });
    expect((await openaiClient(gw.url).models.list()).data).toEqual([{ id: 'claude-opus-4-1', object: 'model', created: 1754352000, owned_by: 'upstream' }]);
    expect(anth.auth).toEqual(['ak']);
    await gw.close();
    gw = await startGateway({ upstream: gem.url.replace(/\/v1$/, '/v1beta'), upstreamFormat: 'gemini', upstreamApiKey: 'gk', logger: new Logger('warn', () => undefined), pingIntervalMs: 0 });
    expect((await openaiClient(gw.url).models.list()).data.map((m) => m.id)).toEqual(['gemini-2.5-pro']);
  } finally {
    await anth.close();
    await gem.close();
  }
});

test('backend list shapes: OpenAI/Anthropic data[].id, Gemini models[].name; created, created_at, display_name kept; junk ignored', () => {
  expect(backendModels({ data: [{ id: 'claude-sonnet-4-5', type: 'model', display_name: 'Claude', created_at: '2025-09-29T00:00:00Z' }] })).toEqual([
    { id: 'claude-sonnet-4-5', owner: 'upstream', created: 1759104000, displayName: 'Claude' },
  ]);
  expect(backendModels({ data: [{ id: 'qwen3', created: 1700000000 }] })).toEqual([{ id: 'qwen3', owner: 'upstream', created: 1700000000 }]);
  expect(backendModels({ models: [{ name: 'models/gemini-2.5-flash', displayName: 'Gemini 2.5 Flash' }, { name: 7 }] })).toEqual([
    { id: 'gemini-2.5-flash', owner: 'upstream', created: 0, displayName: 'Gemini 2.5 Flash' },
  ]);
  expect(backendModels('nope')).toEqual([]);
  expect(backendModels({ data: [{ id: 'x'.repeat(300) }, { id: 'y', created: -5, created_at: 'garbage' }] })).toEqual([{ id: 'y', owner: 'upstream', created: 0 }]);
});

describe('retrieve and the Anthropic shapes', () => {
  const BACKEND = {
    data: [
      { id: 'Qwen/Qwen3-32B', object: 'model', created: 1700000000, owned_by: 'vllm' },
      { id: 'claude-haiku-4-5', type: 'model', display_name: 'Claude Haiku 4.5', created_at: '2025-10-01T00:00:00Z' },
      { id: 'qwen3-coder' },
    ],
  };
  let be: Awaited<ReturnType<typeof backend>> | undefined;
  beforeEach(async () => {
    be = await backend(200, BACKEND);
    gw = await startGateway({ upstream: be.url, upstreamApiKey: 'backend-key', models, logger: new Logger('warn', () => undefined), pingIntervalMs: 0 });
  });
  afterEach(async () => {
    await be?.close();
    be = undefined;
  });
  const anthropic = () => new Anthropic({ baseURL: gw!.url, apiKey: 'dummy-key', maxRetries: 0 });

  test('openai SDK models.retrieve: a configured name, a backend id with a slash, an id a * pattern matches', async () => {
    const openai = openaiClient(gw!.url);
    expect(await openai.models.retrieve('gpt-4o')).toEqual({ id: 'gpt-4o', object: 'model', created: 0, owned_by: 'sluice' });
    expect(await openai.models.retrieve('Qwen/Qwen3-32B')).toEqual({ id: 'Qwen/Qwen3-32B', object: 'model', created: 1700000000, owned_by: 'upstream' });
    expect(await openai.models.retrieve('claude-sonnet-4-5')).toEqual({ id: 'claude-sonnet-4-5', object: 'model', created: 0, owned_by: 'sluice' });
    const raw = await rawRequest(gw!.url, { method: 'GET', path: '/models/qwen3-coder' });
    expect(raw.json).toEqual({ id: 'qwen3-coder', object: 'model', created: 0, owned_by: 'upstream' });
  });

  test('openai SDK: an unknown id is a 404 NotFoundError with code model_not_found', async () => {
    const err = await openaiClient(gw!.url)
      .models.retrieve('gpt-nope')
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 404, code: 'model_not_found', type: 'invalid_request_error', param: 'model' });
    expect((err as Error).constructor.name).toBe('NotFoundError');
    expect((err as Error).message).toContain('"gpt-nope" does not exist on this gateway');
  });

  test('Anthropic SDK models.list: Anthropic pages (limit, after_id auto-paging, before_id), display names and dates kept', async () => {
    const ids: string[] = [];
    for await (const m of anthropic().models.list({ limit: 2 })) ids.push(m.id);
    expect(ids).toEqual(['gpt-4o', 'qwen3-32b', 'Qwen/Qwen3-32B', 'claude-haiku-4-5', 'qwen3-coder']);
    const first = await anthropic().models.list({ limit: 2 });
    expect(first.has_more).toBe(true);
    expect({ first: first.first_id, last: first.last_id }).toEqual({ first: 'gpt-4o', last: 'qwen3-32b' });
    expect(first.data[0]).toEqual({
      type: 'model',
      id: 'gpt-4o',
      display_name: 'gpt-4o',
      created_at: '1970-01-01T00:00:00Z',
      capabilities: null,
      deprecated_at: null,
      lifecycle: 'active',
      line: null,
      max_input_tokens: null,
      max_tokens: null,
      retires_at: null,
    });
    const whole = await anthropic().models.list();
    expect(whole.has_more).toBe(false);
    expect(whole.data.find((m) => m.id === 'claude-haiku-4-5')).toMatchObject({ display_name: 'Claude Haiku 4.5', created_at: '2025-10-01T00:00:00Z' });
    expect(whole.data.find((m) => m.id === 'Qwen/Qwen3-32B')?.created_at).toBe('2023-11-14T22:13:20Z');
    const back = await anthropic().models.list({ before_id: 'claude-haiku-4-5', limit: 2 });
    expect(back.data.map((m) => m.id)).toEqual(['qwen3-32b', 'Qwen/Qwen3-32B']);
    expect(back.has_more).toBe(true);
    const bad = await anthropic()
      .models.list({ limit: 0 })
      .catch((e: unknown) => e);
    expect(bad).toMatchObject({ status: 400, error: { type: 'error', error: { type: 'invalid_request_error', message: 'limit: expected an integer from 1 to 1000' } } });
  });

  test('Anthropic SDK models.retrieve: one ModelInfo; an unknown id is a 404 not_found_error', async () => {
    expect(await anthropic().models.retrieve('claude-haiku-4-5')).toMatchObject({ type: 'model', id: 'claude-haiku-4-5', display_name: 'Claude Haiku 4.5' });
    const err = await anthropic()
      .models.retrieve('mistral-nope-1')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.NotFoundError);
    expect(err).toMatchObject({ status: 404, error: { type: 'error', error: { type: 'not_found_error', message: 'model: mistral-nope-1' } } });
  });
});

test('with gateway keys: a missing key is a 401 in the asking client’s shape', async () => {
  gw = await startGateway({ upstream: 'http://127.0.0.1:9/v1', apiKeys: ['gk'], logger: new Logger('warn', () => undefined), pingIntervalMs: 0 });
  const plain = await rawRequest(gw.url, { method: 'GET', path: '/v1/models' });
  expect(plain.status).toBe(401);
  expect(plain.json).toMatchObject({ error: { type: 'authentication_error' } });
  const anth = await rawRequest(gw.url, { method: 'GET', path: '/v1/models/x', headers: { 'anthropic-version': '2023-06-01' } });
  expect(anth.status).toBe(401);
  expect(anth.json).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
  const ok = await rawRequest(gw.url, { method: 'GET', path: '/v1/models', headers: { 'anthropic-version': '2023-06-01', 'x-api-key': 'gk' } });
  expect(ok.json).toEqual({ data: [], has_more: false, first_id: null, last_id: null });
});
