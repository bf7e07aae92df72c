/**
 * `format: 'ai-sdk'`: the parts of the real AI SDK's `streamText(...).fullStream`.
 *
 * Provider tests: the real @ai-sdk/anthropic, @ai-sdk/openai (chat and responses), @ai-sdk/google
 * and @ai-sdk/openai-compatible read the recorded fixtures through a custom `fetch`; the fixture is
 * delivered one provider payload at a time. The same payloads go through sluice's own adapter. Both
 * event streams drive a TurnController: the released calls (names and inputs) must be the same,
 * and each call must be released after the same source payload (same completion evidence).
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { jsonSchema, type LanguageModel, streamText, tool, type ToolSet } from 'ai';
import { type CompletionMode, TurnController } from '../../src/engine/controller';
import { runTurn } from '../../src/engine/runTurn';
import { defineTool } from '../../src/execute/tools';
import { parseTrace } from '../../src/trace/trace';
import { AiSdkAdapter, aiSdkError, createAdapter } from '../../src/wire';
import type { StreamEvent, WireFormat } from '../../src/wire/events';
import { z } from 'zod';
import { describeFixtures, listFixtures, readFixture } from '../helpers/fixtures';

const push = (parts: object[]): StreamEvent[] => {
  const a = new AiSdkAdapter();
  const out: StreamEvent[] = [];
  for (const p of parts) out.push(...a.push(p));
  out.push(...a.end());
  return out;
};

describe('AiSdkAdapter (hand-written parts)', () => {
  test('streamed input: identity at start, fragments, completion at tool-input-end', () => {
    const ev = push([
      { type: 'start' },
      { type: 'start-step', request: {}, warnings: [] },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', text: 'Reading.' },
      { type: 'tool-input-start', id: 'c1', toolName: 'read_file' },
      { type: 'tool-input-delta', id: 'c1', delta: '{"path":' },
      { type: 'tool-input-delta', id: 'c1', delta: '"a.ts"}' },
      { type: 'tool-input-end', id: 'c1' },
      { type: 'tool-call', toolCallId: 'c1', toolName: 'read_file', input: { path: 'a.ts' } },
      { type: 'finish-step', finishReason: 'tool-calls' },
      { type: 'finish', finishReason: 'tool-calls', rawFinishReason: 'tool_use', totalUsage: { inputTokens: 10, outputTokens: 5, inputTokenDetails: { cacheReadTokens: 4 } } },
    ]);
    expect(ev).toEqual([
      { type: 'message.start' },
      { type: 'text.delta', text: 'Reading.' },
      { type: 'call.identity', index: 0, id: 'c1', name: 'read_file' },
      { type: 'call.fragment', index: 0, text: '{"path":' },
      { type: 'call.fragment', index: 0, text: '"a.ts"}' },
      { type: 'call.complete', index: 0 },
      { type: 'usage', usage: { promptTokens: 10, cachedTokens: 4, outputTokens: 5 } },
      { type: 'finish', reason: 'tool_calls', raw: 'tool_use' },
      { type: 'stream.end' },
    ]);
  });

  test('whole input in the tool-call part (no deltas): one fragment, completion at the tool-call', () => {
    const ev = push([
      { type: 'tool-input-start', id: 'g1', toolName: 'weather' },
      { type: 'tool-input-end', id: 'g1' },
      { type: 'tool-call', toolCallId: 'g1', toolName: 'weather', input: { city: 'Paris' } },
      { type: 'tool-call', toolCallId: 'g2', toolName: 'noargs', input: {} },
    ]);
    expect(ev.filter((e) => e.type.startsWith('call.'))).toEqual([
      { type: 'call.identity', index: 0, id: 'g1', name: 'weather' },
      { type: 'call.fragment', index: 0, text: '{"city":"Paris"}' },
      { type: 'call.complete', index: 0 },
      { type: 'call.identity', index: 1, id: 'g2', name: 'noargs' },
      { type: 'call.fragment', index: 1, text: '{}' },
      { type: 'call.complete', index: 1 },
    ]);
  });

  test('provider-executed and free-text calls are skipped with a warning and take no index', () => {
    const ev = push([
      { type: 'tool-input-start', id: 's1', toolName: 'web_search', providerExecuted: true },
      { type: 'tool-input-delta', id: 's1', delta: '{"q":"x"}' },
      { type: 'tool-call', toolCallId: 's1', toolName: 'web_search', input: { q: 'x' }, providerExecuted: true },
      { type: 'tool-input-start', id: 'p1', toolName: 'apply_patch', inputEncoding: 'text' },
      { type: 'tool-input-start', id: 'c1', toolName: 'grep' },
      { type: 'tool-input-delta', id: 'c1', delta: '{}' },
      { type: 'tool-input-end', id: 'c1' },
    ]);
    expect(ev.filter((e) => e.type === 'warning').map((e) => (e as { code: string }).code)).toEqual(['server_block_skipped', 'server_block_skipped']);
    expect(ev.filter((e) => e.type.startsWith('call.'))).toEqual([
      { type: 'call.identity', index: 0, id: 'c1', name: 'grep' },
      { type: 'call.fragment', index: 0, text: '{}' },
      { type: 'call.complete', index: 0 },
    ]);
  });

  test('reasoning, signatures, errors, abort, tool results and unknown parts', () => {
    const ev = push([
      { type: 'reasoning-start', id: 'r' },
      { type: 'reasoning-delta', id: 'r', text: 'think' },
      { type: 'reasoning-delta', id: 'r', text: '', providerMetadata: { anthropic: { signature: 'sig' } } },
      { type: 'tool-result', toolCallId: 'x', toolName: 'y', output: 'secret' },
      { type: 'mystery' },
      { type: 'mystery' },
      { type: 'error', error: { statusCode: 529, message: 'Overloaded', isRetryable: true } },
      { type: 'abort' },
    ]);
    expect(ev).toEqual([
      { type: 'thinking.delta', text: 'think' },
      { type: 'thinking.signature', signature: 'sig' },
      { type: 'warning', code: 'ai_sdk_tool_executed', message: expect.stringContaining('without execute') },
      { type: 'warning', code: 'unknown_event', message: expect.stringContaining('mystery') },
      { type: 'stream.error', error: { type: 'overloaded_error', message: 'Overloaded' }, retryable: true },
      { type: 'stream.error', error: { type: 'aborted', message: expect.any(String) }, retryable: false },
      { type: 'stream.end' },
    ]);
    // No argument or result content in any warning.
    expect(JSON.stringify(ev)).not.toContain('secret');
  });

  test('error mapping prefers the provider’s own type, then the HTTP status', () => {
    expect(aiSdkError({ statusCode: 400, data: { error: { type: 'invalid_request_error', message: 'bad' } }, message: 'bad' })).toEqual({
      type: 'invalid_request_error',
      message: 'bad',
      retryable: false,
    });
    expect(aiSdkError({ type: 'error', error: { type: 'overloaded_error', message: 'o' } })).toMatchObject({ type: 'overloaded_error', retryable: true });
    expect(aiSdkError({ statusCode: 429, message: 'slow down' })).toMatchObject({ type: 'rate_limit_error', retryable: true });
    expect(aiSdkError({ statusCode: 502, message: 'bad gateway' })).toMatchObject({ type: 'api_error', retryable: true });
    expect(aiSdkError(new TypeError('fetch failed'))).toMatchObject({ type: 'TypeError', message: 'fetch failed' });
    expect(aiSdkError('boom')).toMatchObject({ type: 'api_error', message: 'boom' });
  });
});

// ---------------------------------------------------------------------------------------------
// Real providers over the recorded fixtures.

type Provider = 'anthropic' | 'openai-chat' | 'openai-responses' | 'google' | 'openai-compatible';

const SOURCE: Record<Provider, WireFormat> = {
  anthropic: 'anthropic',
  'openai-chat': 'openai-chat',
  'openai-compatible': 'openai-chat',
  'openai-responses': 'openai-responses',
  google: 'gemini',
};

/** A fetch that serves `payloads` as SSE, one payload per pull, and reports how many were read. */
class FixtureServer {
  delivered = 0;
  private pending: (() => void)[] = [];
  private allowed = 0;
  constructor(private readonly payloads: unknown[]) {}

  /** Let one more payload through. */
  release(): void {
    this.allowed++;
    for (const f of this.pending.splice(0)) f();
  }

  readonly fetch = async (_url: string | URL | Request, _init?: RequestInit): Promise<Response> => {
    const enc = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      pull: async (c) => {
        while (this.delivered >= this.allowed) await new Promise<void>((r) => this.pending.push(r));
        if (this.delivered >= this.payloads.length) {
          c.close();
          return;
        }
        const p = this.payloads[this.delivered++];
        c.enqueue(enc.encode(`data: ${p === '[DONE]' ? '[DONE]' : JSON.stringify(p)}\n\n`));
      },
    });
    return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
  };
}

function model(provider: Provider, fetchFn: typeof fetch): LanguageModel {
  const common = { apiKey: 'test-key', fetch: fetchFn };
  switch (provider) {
    case 'anthropic':
      return createAnthropic(common)('claude-sonnet-4-5');
    case 'openai-chat':
      return createOpenAI(common).chat('gpt-4o');
    case 'openai-responses':
      return createOpenAI(common).responses('gpt-5.1');
    case 'google':
      return createGoogleGenerativeAI(common)('gemini-2.5-pro');
    case 'openai-compatible':
      return createOpenAICompatible({ ...common, name: 'local', baseURL: 'http://127.0.0.1:9/v1' }).chatModel('qwen3');
  }
}

interface Released {
  name: string;
  input: unknown;
  /** How many source payloads had been delivered when the call was released. */
  at: number;
}

function controllerFor(format: WireFormat, released: Released[], at: () => number, completion?: CompletionMode): TurnController {
  const c = new TurnController({ mode: 'gateway', format, completion });
  c.events.on('call.released', (t) => released.push({ name: t.name ?? '', input: t.input, at: at() }));
  return c;
}

/** Tool names the stream calls (from the source events) → permissive schemas without execute. */
function toolsFor(events: StreamEvent[]): ToolSet {
  const tools: ToolSet = {};
  for (const e of events) if (e.type === 'call.identity' && e.name) tools[e.name] = tool({ inputSchema: jsonSchema({ type: 'object' }) });
  return tools;
}

async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise((r) => setTimeout(r, 0));
}

async function compare(
  provider: Provider,
  rel: string,
  completion?: CompletionMode,
): Promise<{ direct: Released[]; viaSdk: Released[]; payloads: unknown[] }> {
  const trace = parseTrace(readFixture(rel));
  const payloads = trace.attempts[0]!.lines.filter((l) => l.kind === 'data').map((l) => (l as { data: unknown }).data);

  // sluice's own adapter, payload by payload.
  const direct: Released[] = [];
  let k = 0;
  const dc = controllerFor(SOURCE[provider], direct, () => k);
  const adapter = createAdapter(SOURCE[provider]);
  const sourceEvents: StreamEvent[] = [];
  for (const p of payloads) {
    k++;
    for (const e of adapter.push(p)) {
      sourceEvents.push(e);
      dc.feed(e);
    }
  }
  for (const e of adapter.end()) dc.feed(e);

  // The real AI SDK provider over the same payloads.
  const server = new FixtureServer(payloads);
  const viaSdk: Released[] = [];
  const sc = controllerFor('ai-sdk', viaSdk, () => server.delivered, completion);
  const sdkAdapter = createAdapter('ai-sdk');
  const result = streamText({ model: model(provider, server.fetch), prompt: 'go', tools: toolsFor(sourceEvents), maxRetries: 0 });
  const consume = (async () => {
    for await (const part of result.fullStream) for (const e of sdkAdapter.push(part)) sc.feed(e);
    for (const e of sdkAdapter.end()) sc.feed(e);
  })();
  for (let i = 0; i <= payloads.length; i++) {
    server.release();
    await settle();
  }
  await consume;
  return { direct, viaSdk, payloads };
}

const cases = (provider: Provider, sub: string, re?: RegExp): [Provider, string][] => listFixtures(sub, re).map((f) => [provider, f]);

// Multi-message splices (a second message_start / response.created in one byte stream) are left
// out: one AI SDK stream is one model response.
const CASES: [Provider, string][] = [
  ...cases('anthropic', 'anthropic', /^vercel__(text-then|tool_use-only)|^sdk-python__text-then/),
  ...cases('openai-chat', 'openai-chat'),
  ...cases('openai-compatible', 'openai-chat'),
  ...cases('openai-responses', 'openai-responses', /function_call-item/),
  ...cases('google', 'gemini', /whole-functionCall|parallel-functionCalls/),
];

/**
 * 1-based positions of the payloads that carry the AI SDK provider's own end of each client call:
 * Anthropic content_block_stop of a tool_use block, Responses output_item.done of a function_call.
 */
function sdkEvidence(provider: Provider, payloads: unknown[]): number[] {
  const out: number[] = [];
  const toolBlocks = new Set<number>();
  payloads.forEach((p, i) => {
    const o = p as { type?: string; index?: number; item?: { type?: string }; content_block?: { type?: string } };
    if (provider === 'anthropic') {
      if (o.type === 'content_block_start' && o.content_block?.type === 'tool_use') toolBlocks.add(o.index ?? -1);
      if (o.type === 'content_block_stop' && toolBlocks.has(o.index ?? -1)) out.push(i + 1);
    } else if (o.type === 'response.output_item.done' && o.item?.type === 'function_call') out.push(i + 1);
  });
  return out;
}

describeFixtures('format ai-sdk: real AI SDK providers over the recorded fixtures', () => {
  test('every provider package is covered', () => {
    expect(new Set(CASES.map(([p]) => p))).toEqual(new Set<Provider>(['anthropic', 'openai-chat', 'openai-compatible', 'openai-responses', 'google']));
  });

  // Default completion for 'ai-sdk' is inferred (the top-level JSON closing), because the AI SDK's
  // chat-based providers send tool-input-end only at the end of the stream. Chat-wire and Gemini
  // streams release exactly where sluice's own adapter does; Anthropic and Responses never later.
  test.each(CASES)('%s %s: same calls, released no later than through sluice’s own adapter', async (provider, rel) => {
    const { direct, viaSdk } = await compare(provider, rel);
    expect(direct.length).toBeGreaterThan(0);
    expect(viaSdk.map(({ name, input }) => ({ name, input }))).toEqual(direct.map(({ name, input }) => ({ name, input })));
    viaSdk.forEach((r, i) => expect(r.at).toBeLessThanOrEqual(direct[i]!.at));
    if (SOURCE[provider] === 'openai-chat' || SOURCE[provider] === 'gemini') expect(viaSdk.map((r) => r.at)).toEqual(direct.map((r) => r.at));
  });

  // Evidence only: the AI SDK's own tool-input-end / tool-call. Gemini (the whole part) matches
  // sluice's adapter exactly; Anthropic ends at content_block_stop like sluice's adapter (a no-input
  // call too: the AI SDK hands over `{}` there, where sluice's own adapter waits for the end of the
  // stream for empty arguments); @ai-sdk/openai's Responses model ends a call at
  // response.output_item.done (sluice's adapter already at function_call_arguments.done, one
  // payload earlier).
  test.each(CASES.filter(([p]) => p === 'anthropic' || p === 'google' || p === 'openai-responses'))(
    '%s %s with completion evidence-only: released at the AI SDK’s own evidence',
    async (provider, rel) => {
      const { direct, viaSdk, payloads } = await compare(provider, rel, 'evidence-only');
      expect(viaSdk.map(({ name, input }) => ({ name, input }))).toEqual(direct.map(({ name, input }) => ({ name, input })));
      const want = provider === 'google' ? direct.map((r) => r.at) : sdkEvidence(provider, payloads);
      expect(viaSdk.map((r) => r.at)).toEqual(want);
    },
  );
});

// ---------------------------------------------------------------------------------------------
// runTurn consumes fullStream directly; sluice runs the tools, the AI SDK runs none.

describe('runTurn with format ai-sdk', () => {
  test('an AI SDK stream runs sluice tools and returns a valid history', async () => {
    const payloads = [
      { type: 'message_start', message: { id: 'msg_1', model: 'm', usage: { input_tokens: 1, output_tokens: 1 } } },
      { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: {} } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"path":"a.txt"}' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } },
      { type: 'message_stop' },
    ];
    const server = new FixtureServer(payloads);
    for (let i = 0; i <= payloads.length; i++) server.release();
    const ran: string[] = [];
    const readFile = defineTool({
      name: 'read_file',
      kind: 'read',
      input: z.object({ path: z.string() }),
      run: async ({ path }) => {
        ran.push(path);
        return `contents of ${path}`;
      },
    });
    const { messages, summary } = await runTurn({
      format: 'ai-sdk',
      stream: () =>
        streamText({
          model: model('anthropic', server.fetch),
          prompt: 'read a.txt',
          tools: { read_file: tool({ inputSchema: jsonSchema({ type: 'object', properties: { path: { type: 'string' } } }) }) },
        }).fullStream,
      tools: [readFile],
    });
    expect(ran).toEqual(['a.txt']);
    expect(summary.warnings.map((w) => w.code)).not.toContain('ai_sdk_tool_executed');
    expect(messages).toHaveLength(2);
    expect(JSON.stringify(messages[1])).toContain('contents of a.txt');
  });
});
