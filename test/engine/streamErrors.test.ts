/**
 * Failed attempts classified by status and code across the real Anthropic SDK, OpenAI SDK, AI SDK
 * and fetch, against real HTTP servers on 127.0.0.1: a connection that is refused or reset is
 * retried; 408/409/429/5xx are retried, other 4xx are not; a fetch Response with a non-2xx
 * status keeps the first 2 KB of its body in the error.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { streamText } from 'ai';
import { runTurn } from '../../src/engine/runTurn';
import { classifyStreamError, ERROR_BODY_EXCERPT_BYTES, HttpStreamError } from '../../src/engine/streamSource';
import { chatChunk, startScriptedUpstream, type ScriptedUpstream } from '../../src/gateway/scripted';

/** Anthropic SSE for a one-text-block answer. */
function anthropicText(text: string): { t: number; raw: string }[] {
  const ev = (data: Record<string, unknown>) => ({ t: 0, raw: `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n` });
  return [
    ev({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: null, usage: { input_tokens: 1, output_tokens: 1 } } }),
    ev({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    ev({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }),
    ev({ type: 'content_block_stop', index: 0 }),
    ev({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } }),
    ev({ type: 'message_stop' }),
  ];
}

/** A server that answers each request with the next behaviour (then the last one again). */
async function server(behaviours: ((req: http.IncomingMessage, res: http.ServerResponse) => void)[]): Promise<{ url: string; hits: () => number; close: () => Promise<void> }> {
  let n = 0;
  const srv = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => behaviours[Math.min(n++, behaviours.length - 1)]!(req, res));
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`,
    hits: () => n,
    close: () =>
      new Promise((r) => {
        srv.closeAllConnections();
        srv.close(() => r());
      }),
  };
}

const reset = (req: http.IncomingMessage): void => {
  req.socket.destroy();
};
const status = (code: number, body: string) => (_req: http.IncomingMessage, res: http.ServerResponse) => {
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(body);
};

/** A port nothing listens on (bound, then closed). */
async function closedPort(): Promise<string> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return `http://127.0.0.1:${port}`;
}

let good: ScriptedUpstream;
beforeAll(async () => {
  good = await startScriptedUpstream({
    script: (req) =>
      req.url.includes('/chat/completions')
        ? [{ t: 0, data: chatChunk({ content: 'ok' }) }, { t: 0, data: chatChunk({ finish: 'stop' }) }, { t: 0, data: '[DONE]' }]
        : anthropicText('ok'),
  });
});
afterAll(async () => good?.close());

const policy = { maxAttempts: 2, retryBaseMs: 0 };

describe('connection errors are retried', () => {
  test('Anthropic SDK: APIConnectionError (refused) → retried, the second attempt answers', async () => {
    const dead = await closedPort();
    const urls = [dead, good.url.replace(/\/v1$/, '')];
    let attempt = 0;
    const { summary } = await runTurn({
      format: 'anthropic',
      stream: () => new Anthropic({ baseURL: urls[attempt++]!, apiKey: 'k', maxRetries: 0 }).messages.create({ model: 'm', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      tools: [],
      policy,
    });
    expect(summary.outcome).toBe('done');
    expect(summary.attempts).toBe(2);
    expect(summary.history[0]).toMatchObject({ role: 'assistant', content: 'ok' });
  });

  test('OpenAI SDK: a connection reset before the answer → retried', async () => {
    const s = await server([reset]);
    const urls = [`${s.url}/v1`, good.url];
    let attempt = 0;
    try {
      const { summary } = await runTurn({
        format: 'openai-chat',
        stream: () => new OpenAI({ baseURL: urls[attempt++]!, apiKey: 'k', maxRetries: 0 }).chat.completions.create({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
        tools: [],
        policy,
      });
      expect(summary.outcome).toBe('done');
      expect(summary.attempts).toBe(2);
    } finally {
      await s.close();
    }
  });

  test('fetch: TypeError "fetch failed" (ECONNREFUSED cause) → retried', async () => {
    const dead = await closedPort();
    const urls = [dead, good.url.replace(/\/v1$/, '')];
    let attempt = 0;
    const { summary } = await runTurn({
      format: 'anthropic',
      stream: () => fetch(`${urls[attempt++]!}/v1/messages`, { method: 'POST', body: '{}' }),
      tools: [],
      policy,
    });
    expect(summary.outcome).toBe('done');
    expect(summary.attempts).toBe(2);
  });

  test('AI SDK (@ai-sdk/anthropic): a refused connection is a retryable error part → retried', async () => {
    const dead = await closedPort();
    const urls = [`${dead}/v1`, good.url];
    let attempt = 0;
    const { summary } = await runTurn({
      format: 'ai-sdk',
      stream: () => streamText({ model: createAnthropic({ baseURL: urls[attempt++]!, apiKey: 'k' })('m'), prompt: 'hi', maxRetries: 0 }).fullStream,
      tools: [],
      policy,
    });
    expect(summary.outcome).toBe('done');
    expect(summary.attempts).toBe(2);
  });
});

describe('HTTP statuses', () => {
  test('Anthropic SDK 404: not retried; the provider error type and body reach the error', async () => {
    const s = await server([status(404, JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: 'model: nope' } }))]);
    try {
      const { summary } = await runTurn({
        format: 'anthropic',
        stream: () => new Anthropic({ baseURL: s.url, apiKey: 'k', maxRetries: 0 }).messages.create({ model: 'nope', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
        tools: [],
        policy,
      });
      expect(summary.outcome).toBe('failed');
      expect(summary.attempts).toBe(1);
      expect(s.hits()).toBe(1);
      expect(summary.error).toMatchObject({ type: 'not_found_error', message: expect.stringContaining('model: nope') });
    } finally {
      await s.close();
    }
  });

  test('OpenAI SDK 503 then success: retried; 429 is retryable, 400 is not', async () => {
    const s = await server([status(503, JSON.stringify({ error: { message: 'busy', type: 'server_error' } }))]);
    const urls = [`${s.url}/v1`, good.url];
    let attempt = 0;
    try {
      const { summary } = await runTurn({
        format: 'openai-chat',
        stream: () => new OpenAI({ baseURL: urls[attempt++]!, apiKey: 'k', maxRetries: 0 }).chat.completions.create({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
        tools: [],
        policy,
      });
      expect(summary.outcome).toBe('done');
      expect(summary.attempts).toBe(2);
    } finally {
      await s.close();
    }
    const s2 = await server([status(400, JSON.stringify({ error: { message: 'bad field', type: 'invalid_request_error' } }))]);
    try {
      const { summary } = await runTurn({
        format: 'openai-chat',
        stream: () => new OpenAI({ baseURL: `${s2.url}/v1`, apiKey: 'k', maxRetries: 0 }).chat.completions.create({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
        tools: [],
        policy,
      });
      expect(summary.outcome).toBe('failed');
      expect(summary.attempts).toBe(1);
      expect(summary.error).toMatchObject({ type: 'invalid_request_error', message: expect.stringContaining('bad field') });
    } finally {
      await s2.close();
    }
  });

  test('fetch 404: not retried; the error keeps a 2 KB excerpt of the body and no more', async () => {
    const big = `{"error":"no such model","pad":"${'x'.repeat(10_000)}"}`;
    const s = await server([status(404, big)]);
    try {
      const { summary } = await runTurn({ format: 'anthropic', stream: () => fetch(`${s.url}/v1/messages`, { method: 'POST', body: '{}' }), tools: [], policy });
      expect(summary.outcome).toBe('failed');
      expect(summary.attempts).toBe(1);
      expect(summary.error?.type).toBe('not_found_error');
      expect(summary.error?.message).toContain('HTTP 404: {"error":"no such model"');
      expect(summary.error!.message.length).toBeLessThan(ERROR_BODY_EXCERPT_BYTES + 100);
    } finally {
      await s.close();
    }
  });

  test('fetch 502 then success: retried', async () => {
    const s = await server([status(502, 'bad gateway')]);
    const urls = [s.url, good.url.replace(/\/v1$/, '')];
    let attempt = 0;
    try {
      const { summary } = await runTurn({ format: 'anthropic', stream: () => fetch(`${urls[attempt++]!}/v1/messages`, { method: 'POST', body: '{}' }), tools: [], policy });
      expect(summary.outcome).toBe('done');
      expect(summary.attempts).toBe(2);
    } finally {
      await s.close();
    }
  });
});

describe('classifyStreamError (the table)', () => {
  test.each([
    [{ status: 408 }, 'timeout_error', true],
    [{ status: 409 }, 'conflict_error', true],
    [{ status: 429, error: { error: { type: 'rate_limit_error' }, type: 'error' } }, 'rate_limit_error', true],
    [{ status: 529, error: { type: 'error', error: { type: 'overloaded_error', message: 'x' } } }, 'overloaded_error', true],
    [{ status: 500 }, 'http_500', true],
    [{ status: 401 }, 'authentication_error', false],
    [{ status: 422, error: { type: 'invalid_request_error', message: 'x' } }, 'invalid_request_error', false],
    [{ statusCode: 503, isRetryable: true, name: 'AI_APICallError' }, 'http_503', true],
    [{ name: 'APIConnectionError', message: 'Connection error.' }, 'connection_error', true],
    [{ name: 'APIConnectionTimeoutError', message: 'Request timed out.' }, 'timeout_error', true],
    [Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } }), 'connection_error', true],
    [Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), 'connection_error', true],
    [Object.assign(new TypeError('terminated'), { cause: { code: 'UND_ERR_SOCKET' } }), 'connection_error', true],
    [Object.assign(new Error('getaddrinfo ENOTFOUND nope'), { code: 'ENOTFOUND' }), 'stream_error', false],
    [Object.assign(new Error('aborted'), { name: 'AbortError' }), 'aborted', false],
    [new HttpStreamError(404, 'gone'), 'not_found_error', false],
  ])('%j → %s (retryable %s)', (err, type, retryable) => {
    expect(classifyStreamError(err)).toMatchObject({ type, retryable });
  });

  test("the OpenAI SDK's own connection errors (name 'Error') are classified by their class", () => {
    const refused = new OpenAI.APIConnectionError({ message: 'Connection error.', cause: new TypeError('fetch failed', { cause: new Error('bad port') }) });
    expect(refused.name).toBe('Error');
    expect(classifyStreamError(refused)).toMatchObject({ type: 'connection_error', retryable: true });
    expect(classifyStreamError(new OpenAI.APIConnectionTimeoutError())).toMatchObject({ type: 'timeout_error', retryable: true });
    expect(classifyStreamError(new OpenAI.APIUserAbortError())).toMatchObject({ type: 'aborted', retryable: false });
  });

  test('a huge message is cut', () => {
    expect(classifyStreamError(new Error('x'.repeat(100_000))).message.length).toBeLessThan(5000);
  });
});
