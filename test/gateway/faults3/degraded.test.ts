/**
 * Degraded answers, round three: a backend's error event in its stream reaches the client
 * summarised like an HTTP error body (300 characters, control characters removed; the full text
 * only in the debug log) on all three inbound APIs; a whole JSON answer where a stream was asked
 * for is read within the size cap and the JSON depth limit.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Logger, type LogRecord } from '../../../src/gateway/log';
import { type Gateway, startGateway } from '../../../src/gateway/server';
import { chatChunk, startScriptedUpstream, type ScriptedUpstream } from '../../../src/gateway/scripted';
import { UPSTREAM_MESSAGE_MAX } from '../../../src/gateway/errors';
import { rawRequest } from '../helpers';

jest.setTimeout(60_000);

const LONG = 'quota exceeded: ' + 'details '.repeat(1000) + '\u0007end';

const ROUTES = {
  messages: { path: '/v1/messages', body: { model: 'm', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'hi' }] } },
  chat: { path: '/v1/chat/completions', body: { model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] } },
  responses: { path: '/v1/responses', body: { model: 'm', stream: true, input: 'hi' } },
} as const;

describe('a backend error event mid-stream', () => {
  let up: ScriptedUpstream;
  let gw: Gateway;
  const logs: LogRecord[] = [];
  beforeAll(async () => {
    up = await startScriptedUpstream({ script: [{ t: 0, data: chatChunk({ content: 'partial ' }) }, { t: 1, error: { type: 'rate_limit_error', message: LONG } }] });
    gw = await startGateway({ upstream: up.url, logger: new Logger('debug', (r) => logs.push(r)), pingIntervalMs: 0 });
  });
  afterAll(async () => {
    await gw.close();
    await up.close();
  });

  test.each(Object.keys(ROUTES) as (keyof typeof ROUTES)[])('%s: the client sees at most 300 characters of it; the debug log has it all', async (route) => {
    const r = await rawRequest(gw.url, { path: ROUTES[route].path, body: JSON.stringify(ROUTES[route].body) });
    expect(r.status).toBe(200);
    expect(r.text).toContain('quota exceeded: details');
    expect(r.text).not.toContain('details '.repeat(60));
    expect(r.text).not.toContain('end"');
    const messages = [...r.text.matchAll(/"message":"((?:[^"\\]|\\.)*)"/g)].map((m) => JSON.parse(`"${m[1]!}"`) as string).filter((m) => m.includes('quota'));
    expect(messages.length).toBeGreaterThanOrEqual(1);
    for (const m of messages) {
      expect(m.length).toBeLessThanOrEqual(UPSTREAM_MESSAGE_MAX + 1);
      expect(m.endsWith('…')).toBe(true);
    }
    const full = logs.filter((l) => l.msg === 'upstream_error_message' && l.reqId === r.headers['request-id']);
    expect(full).toHaveLength(1);
    expect(full[0]).toMatchObject({ level: 'debug', message: LONG });
  });
});

describe('a whole JSON answer where a stream was asked for', () => {
  test('nested 1M levels deep: the stream fails at once with a clear error; the rest is not read', async () => {
    const server = http.createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.on('error', () => undefined);
      res.end('{"choices":' + '['.repeat(1_000_000));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const gw = await startGateway({ upstream: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, logger: new Logger('error', () => undefined), pingIntervalMs: 0 });
    try {
      const t0 = performance.now();
      const r = await rawRequest(gw.url, { path: '/v1/chat/completions', body: JSON.stringify(ROUTES.chat.body) });
      expect(performance.now() - t0).toBeLessThan(2000);
      expect(r.status).toBe(200);
      expect(r.text).toContain('upstream JSON answer: JSON nested deeper than 128 levels');
    } finally {
      await gw.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
