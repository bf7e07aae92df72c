/**
 * Retries that respect the provider, against a real HTTP server on 127.0.0.1: a 429 with
 * `retry-after: 2` is retried no sooner than 2 s; `retry-after-ms`; a wait above
 * `policy.retryMaxDelayMs` is not retried. And the SDK-retries recipe of docs/embedding.md
 * ("Retries") with the real openai and Anthropic SDKs, their own retries off and on.
 * Wall-clock (lower bounds only): in jest.config.ts's SERIAL list.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { runTurn } from '../../src/engine/runTurn';
import * as N from '../../src/telemetry/names';
import { registerOtel } from '../telemetry/helpers';

type Behaviour = (res: http.ServerResponse) => void;

/** A server answering request n with behaviours[n] (then the last one again), recording when each arrived. */
async function server(behaviours: Behaviour[]): Promise<{ url: string; arrivals: number[]; close: () => Promise<void> }> {
  const arrivals: number[] = [];
  const srv = http.createServer((req, res) => {
    const n = arrivals.length;
    arrivals.push(performance.now());
    req.resume();
    req.on('end', () => behaviours[Math.min(n, behaviours.length - 1)]!(res));
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`,
    arrivals,
    close: () =>
      new Promise((r) => {
        srv.closeAllConnections();
        srv.close(() => r());
      }),
  };
}

const tooMany =
  (headers: Record<string, string>, body = '{"error":{"type":"rate_limit_error","message":"slow down"}}'): Behaviour =>
  (res) => {
    res.writeHead(429, { 'content-type': 'application/json', ...headers });
    res.end(body);
  };

const chatStream: Behaviour = (res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (delta: object, finish: string | null) =>
    `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  res.end(`${chunk({ role: 'assistant', content: 'ok' }, null)}${chunk({}, 'stop')}data: [DONE]\n\n`);
};

const anthropicStream: Behaviour = (res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const ev = (data: Record<string, unknown>) => `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`;
  res.end(
    [
      ev({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: null, usage: { input_tokens: 1, output_tokens: 1 } } }),
      ev({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
      ev({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'ok' } }),
      ev({ type: 'content_block_stop', index: 0 }),
      ev({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } }),
      ev({ type: 'message_stop' }),
    ].join(''),
  );
};

const assistantText = (messages: Array<{ role: string; content?: unknown }>) => messages.find((m) => m.role === 'assistant')?.content;

describe('retry-after sets the floor of the next delay (fetch)', () => {
  test('429 with retry-after: 2 → the next attempt no sooner than 2 s; the summary says why', async () => {
    const s = await server([tooMany({ 'retry-after': '2' }), chatStream]);
    try {
      const { summary, messages } = await runTurn({ format: 'openai-chat', stream: () => fetch(`${s.url}/v1/chat/completions`, { method: 'POST' }), tools: [] });
      expect(summary.outcome).toBe('done');
      expect(assistantText(messages)).toBe('ok');
      expect(s.arrivals).toHaveLength(2);
      expect(s.arrivals[1]! - s.arrivals[0]!).toBeGreaterThanOrEqual(1995); // timers may fire up to ~1 ms early
      expect(summary.retries).toEqual([{ attempt: 2, delayMs: 2000, reason: 'retry-after', retryAfterMs: 2000, errorType: 'rate_limit_error' }]);
    } finally {
      await s.close();
    }
  });

  test('the turn span records each retry: delay, reason, the provider\'s wait', async () => {
    const s = await server([tooMany({ 'retry-after-ms': '200' }), chatStream]);
    const otel = registerOtel();
    try {
      const { summary } = await runTurn({ format: 'openai-chat', stream: () => fetch(s.url, { method: 'POST' }), tools: [], policy: { retryBaseMs: 0 } });
      expect(summary.outcome).toBe('done');
      const turn = otel.spans.getFinishedSpans().find((sp) => sp.events.some((e) => e.name === N.EVENT_ATTEMPT_RETRY));
      const retry = turn?.events.find((e) => e.name === N.EVENT_ATTEMPT_RETRY);
      expect(retry?.attributes).toMatchObject({
        [N.ATTR_ATTEMPT]: 2,
        [N.ATTR_RETRY_DELAY_MS]: 200,
        [N.ATTR_RETRY_REASON]: 'retry-after',
        [N.ATTR_RETRY_AFTER_MS]: 200,
        [N.ATTR_ERROR_TYPE]: 'rate_limit_error',
      });
    } finally {
      await otel.shutdown();
      await s.close();
    }
  });

  test('retry-after-ms is read (and preferred over retry-after)', async () => {
    const s = await server([tooMany({ 'retry-after-ms': '700', 'retry-after': '5' }), chatStream]);
    try {
      const { summary } = await runTurn({ format: 'openai-chat', stream: () => fetch(s.url, { method: 'POST' }), tools: [], policy: { retryBaseMs: 0 } });
      expect(summary.outcome).toBe('done');
      expect(s.arrivals[1]! - s.arrivals[0]!).toBeGreaterThanOrEqual(695);
      expect(summary.retries).toEqual([{ attempt: 2, delayMs: 700, reason: 'retry-after', retryAfterMs: 700, errorType: 'rate_limit_error' }]);
    } finally {
      await s.close();
    }
  });

  test('a retry-after above policy.retryMaxDelayMs is not retried: the turn fails at once, saying why', async () => {
    const s = await server([tooMany({ 'retry-after': '3600' }), chatStream]);
    try {
      const t0 = performance.now();
      const { summary } = await runTurn({ format: 'openai-chat', stream: () => fetch(s.url, { method: 'POST' }), tools: [], policy: { retryMaxDelayMs: 10_000 } });
      expect(performance.now() - t0).toBeLessThan(5000);
      expect(s.arrivals).toHaveLength(1);
      expect(summary.outcome).toBe('failed');
      expect(summary.error).toMatchObject({ type: 'rate_limit_error', retryAfterMs: 3_600_000 });
      expect(summary.error?.message).toMatch(/\(not retried: the provider asked to wait 3600000 ms, more than policy.retryMaxDelayMs 10000\)$/);
      expect(summary.retries).toBeUndefined();
    } finally {
      await s.close();
    }
  });

  test('without retry-after the delay is the jittered backoff (reason backoff)', async () => {
    const s = await server([tooMany({}), tooMany({}), chatStream]);
    try {
      const { summary } = await runTurn({ format: 'openai-chat', stream: () => fetch(s.url, { method: 'POST' }), tools: [], policy: { retryBaseMs: 100 } });
      expect(summary.outcome).toBe('done');
      expect(summary.retries).toHaveLength(2);
      expect(summary.retries![0]).toMatchObject({ attempt: 2, reason: 'backoff' });
      expect(summary.retries![0]!.delayMs).toBeLessThanOrEqual(100);
      expect(summary.retries![1]!.delayMs).toBeLessThanOrEqual(200);
    } finally {
      await s.close();
    }
  });
});

/**
 * docs/embedding.md "Retries": retry in one place. Recommended: the SDK's retries off
 * (`maxRetries: 0`) and sluice's on — sluice reads the SDK error's `headers`, so the provider's
 * `retry-after` still sets the floor, and it also retries failures after the stream opened. The
 * other way works too: the SDK waits `retry-after` itself before the stream opens, sluice sees
 * one good stream.
 */
describe.each([
  {
    sdk: 'openai',
    format: 'openai-chat' as const,
    good: chatStream,
    open: (url: string, maxRetries: number) => () =>
      new OpenAI({ baseURL: url, apiKey: 'k', maxRetries }).chat.completions.create({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
  },
  {
    sdk: '@anthropic-ai/sdk',
    format: 'anthropic' as const,
    good: anthropicStream,
    open: (url: string, maxRetries: number) => () =>
      new Anthropic({ baseURL: url, apiKey: 'k', maxRetries }).messages.create({ model: 'm', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
  },
])('the SDK-retries recipe with the real $sdk SDK', ({ format, good, open }) => {
  const body = format === 'anthropic' ? '{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}' : undefined;

  test('SDK retries off (recommended): sluice retries, no sooner than retry-after', async () => {
    const s = await server([tooMany({ 'retry-after': '1' }, body), good]);
    try {
      const { summary, messages } = await runTurn({ format, stream: open(s.url, 0), tools: [] });
      expect(summary.outcome).toBe('done');
      expect(assistantText(messages)).toBe('ok');
      expect(s.arrivals).toHaveLength(2);
      expect(s.arrivals[1]! - s.arrivals[0]!).toBeGreaterThanOrEqual(995);
      expect(summary.retries).toEqual([{ attempt: 2, delayMs: 1000, reason: 'retry-after', retryAfterMs: 1000, errorType: 'rate_limit_error' }]);
    } finally {
      await s.close();
    }
  });

  test('SDK retries on: the SDK waits retry-after itself, sluice sees one good attempt', async () => {
    const s = await server([tooMany({ 'retry-after': '1' }, body), good]);
    try {
      const { summary, messages } = await runTurn({ format, stream: open(s.url, 2), tools: [] });
      expect(summary.outcome).toBe('done');
      expect(assistantText(messages)).toBe('ok');
      expect(s.arrivals).toHaveLength(2);
      expect(s.arrivals[1]! - s.arrivals[0]!).toBeGreaterThanOrEqual(995);
      expect(summary.attempts).toBe(1);
      expect(summary.retries).toBeUndefined();
    } finally {
      await s.close();
    }
  });

  test('both on: the SDK retries first; when it gives up, sluice retries after retry-after', async () => {
    const s = await server([tooMany({ 'retry-after-ms': '300' }, body), tooMany({ 'retry-after-ms': '300' }, body), good]);
    try {
      const { summary } = await runTurn({ format, stream: open(s.url, 1), tools: [] });
      expect(summary.outcome).toBe('done');
      expect(s.arrivals).toHaveLength(3);
      expect(s.arrivals[2]! - s.arrivals[1]!).toBeGreaterThanOrEqual(295);
      // The floor is 300 ms; the jittered backoff (up to 500 ms) may be longer, and then it is kept.
      expect(summary.retries).toHaveLength(1);
      expect(summary.retries![0]).toMatchObject({ attempt: 2, retryAfterMs: 300, errorType: 'rate_limit_error' });
      expect(summary.retries![0]!.delayMs).toBeGreaterThanOrEqual(300);
    } finally {
      await s.close();
    }
  });
});
