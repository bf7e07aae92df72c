/**
 * Linking a request to the response it continues (SPEC §13; src/gateway/sessionLink.ts): the
 * table (bounded, TTL, ids only), the three inbound APIs' answer ids (Messages `tool_use_id`,
 * Chat `tool_call_id`, Responses `call_id`) through a real gateway with the real SDKs, the span
 * link and `session.id` on the SERVER span, the holdout arm's post-stream release, and the
 * `--release-holdout` flag's validation.
 */
import { spawn } from 'node:child_process';
import Anthropic from '@anthropic-ai/sdk';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { chooseArm, parseHoldoutFraction } from '../../src/gateway/holdout';
import { Logger, type LogSink, turnLogObserver } from '../../src/gateway/log';
import { composeObservers } from '../../src/gateway/observer';
import { startGateway, type Gateway } from '../../src/gateway/server';
import { chatChunk, type RecordedRequest, type ScriptLine, startScriptedUpstream, type ScriptedUpstream } from '../../src/gateway/scripted';
import { answeredCallIds, SessionLinks, sessionIdOf, type AnsweredResponse } from '../../src/gateway/sessionLink';
import { createGatewayObserver } from '../../src/telemetry/gateway';
import { childCli, childEnv } from '../journal/childBuild';
import { openaiClient, READ_FILE_CHAT_TOOL, READ_FILE_RESPONSES_TOOL, READ_FILE_TOOL, spawnServe } from './helpers';

type Rec = Record<string, unknown>;

const resp = (requestId: string, streamEndAt: number, arm: 'early' | 'holdout' = 'early'): AnsweredResponse => ({ requestId, arm, format: 'openai-chat', model: 'm', arrivedAt: streamEndAt - 100, streamEndAt });

describe('SessionLinks', () => {
  test('a request answering ids of a response continues it, with turn and gap times; the response is continued once', () => {
    const links = new SessionLinks({ now: () => 1000 });
    links.remember(['a', 'b'], resp('r1', 900, 'holdout'));
    links.remember(['c'], resp('r2', 950));
    expect(links.continues(['zz'], 1000)).toBeUndefined();
    const c = links.continues(['a', 'b'], 1000);
    expect(c).toEqual({ requestId: 'r1', arm: 'holdout', format: 'openai-chat', model: 'm', turnMs: 100, gapMs: 100, calls: 2 });
    expect(links.continues(['a'], 1001)).toBeUndefined();
    expect(links.size).toBe(1);
  });

  test('several responses named: the one with the most answered ids wins', () => {
    const links = new SessionLinks({ now: () => 0 });
    links.remember(['a'], resp('r1', 0));
    links.remember(['b', 'c'], resp('r2', 0));
    expect(links.continues(['a', 'b', 'c'], 5)?.requestId).toBe('r2');
  });

  test('bounded: at most maxEntries ids (oldest dropped), none older than the TTL', () => {
    let now = 0;
    const links = new SessionLinks({ maxEntries: 3, ttlMs: 1000, now: () => now });
    links.remember(['a', 'b'], resp('r1', 0));
    links.remember(['c', 'd'], resp('r2', 0));
    expect(links.size).toBe(3);
    expect(links.continues(['a'], 1)).toBeUndefined();
    now = 500;
    links.remember(['e'], resp('r3', 500));
    now = 1200; // r2 expired, r3 not
    expect(links.continues(['c'], now)).toBeUndefined();
    expect(links.continues(['e'], now)?.requestId).toBe('r3');
    expect(links.size).toBe(0);
  });

  test('answered ids: the tool results after the last assistant message only', () => {
    const ids = answeredCallIds([
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'old', name: 'x', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'old', text: '', images: [], is_error: false }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'n1', name: 'x', input: {} }, { type: 'tool_use', id: 'n2', name: 'x', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'n1', text: 'secret', images: [], is_error: false }, { type: 'tool_result', tool_use_id: 'n2', text: '', images: [], is_error: true }] },
    ]);
    expect(ids).toEqual(['n1', 'n2']);
  });

  test('session id headers: Claude Code first, then Codex; odd values ignored', () => {
    expect(sessionIdOf({ 'x-claude-code-session-id': 'cc-1', session_id: 'codex-1' })).toBe('cc-1');
    expect(sessionIdOf({ session_id: 'codex-1' })).toBe('codex-1');
    expect(sessionIdOf({ 'session-id': 'codex-2', conversation_id: 'conv' })).toBe('codex-2');
    expect(sessionIdOf({ conversation_id: 'conv' })).toBe('conv');
    expect(sessionIdOf({ 'x-session-id': 'has space' })).toBeUndefined();
    expect(sessionIdOf({ 'x-session-id': 'x'.repeat(129) })).toBeUndefined();
    expect(sessionIdOf({})).toBeUndefined();
  });

  test('arms and the flag value', () => {
    expect(chooseArm(0, () => 0)).toBe('early');
    expect(chooseArm(1, () => 0.99)).toBe('holdout');
    expect(chooseArm(0.5, () => 0.49)).toBe('holdout');
    expect(chooseArm(0.5, () => 0.5)).toBe('early');
    expect(parseHoldoutFraction('0.25')).toEqual({ fraction: 0.25 });
    expect(parseHoldoutFraction('1')).toEqual({ fraction: 1 });
    for (const bad of ['-0.1', '1.5', 'abc', '', '0x1', 'NaN']) expect(parseHoldoutFraction(bad)).toHaveProperty('error');
  });
});

/** One call complete at once, then a tail; a continuation (last message a tool result) gets text. */
function backendScript(req: RecordedRequest): ScriptLine[] {
  const body = req.body as { messages?: { role: string }[] };
  if (body.messages?.[body.messages.length - 1]?.role === 'tool')
    return [{ t: 0, data: chatChunk({ content: 'ok' }) }, { t: 0, data: chatChunk({ finish: 'stop' }) }, { t: 0, data: '[DONE]' }];
  return [
    { t: 0, data: chatChunk({ tool: { index: 0, id: 'call_up', name: 'read_file', args: '{"path":"SECRET-PATH"}' } }) },
    { t: 80, data: chatChunk({ content: 'tail' }) },
    { t: 80, data: chatChunk({ finish: 'tool_calls' }) },
    { t: 80, data: '[DONE]' },
  ];
}

describe('the gateway links answers to responses (all three APIs), with spans', () => {
  let up: ScriptedUpstream;
  let gw: Gateway;
  const logs: Rec[] = [];
  const spans = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  let draw = 0.9; // early unless a test says otherwise

  beforeAll(async () => {
    up = await startScriptedUpstream({ script: backendScript });
    const sink: LogSink = (r) => logs.push(r);
    const logger = new Logger('info', sink);
    const observer = composeObservers(turnLogObserver(logger), createGatewayObserver({ tracer: provider.getTracer('test') }));
    gw = await startGateway({ upstream: up.url, logger, observer, pingIntervalMs: 0, releaseHoldout: 0.5, random: () => draw });
  });
  afterAll(async () => {
    await gw?.close();
    await up?.close();
    await provider.shutdown();
  });

  const turns = (): Rec[] => logs.filter((r) => r.msg === 'turn');

  test('Messages: tool_use_id links; the span links to the earlier span and carries session.id, arm and the gap', async () => {
    logs.length = 0;
    spans.reset();
    draw = 0.1; // holdout
    const client = new Anthropic({ baseURL: gw.url, apiKey: 'k', maxRetries: 0, defaultHeaders: { 'x-claude-code-session-id': 'cc-sess' } });
    const messages: Anthropic.Messages.MessageParam[] = [{ role: 'user', content: 'read' }];
    const first = await client.messages.create({ model: 'm', max_tokens: 64, messages, tools: [READ_FILE_TOOL] });
    const use = first.content.find((b) => b.type === 'tool_use');
    expect(use).toBeDefined();
    draw = 0.9;
    messages.push({ role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use!.id, content: 'x' }] });
    await client.messages.create({ model: 'm', max_tokens: 64, messages, tools: [READ_FILE_TOOL] });
    const [a, b] = turns();
    expect(a!.arm).toBe('holdout');
    expect(b!.arm).toBe('early');
    expect(b!.continues).toMatchObject({ requestId: a!.reqId, arm: 'holdout', format: 'openai-chat', model: 'm', calls: 1 });
    // The holdout arm released the call at the end of the stream, not at its completion.
    const call = (a!.calls as { completeMs: number; releasedMs: number }[])[0]!;
    expect(call.releasedMs).toBeGreaterThanOrEqual(70);
    // Ids only: no argument or result text in the log.
    expect(JSON.stringify(logs)).not.toContain('SECRET-PATH');

    const servers = spans.getFinishedSpans().filter((s) => s.name === 'POST /v1/messages');
    expect(servers).toHaveLength(2);
    const [s1, s2] = servers;
    expect(s1!.attributes['sluice.release.arm']).toBe('holdout');
    expect(s2!.attributes['sluice.release.arm']).toBe('early');
    expect(s1!.attributes['session.id']).toBe('cc-sess');
    expect(s1!.attributes['gen_ai.conversation.id']).toBe('cc-sess');
    expect(s2!.attributes['sluice.continues.request_id']).toBe(a!.reqId);
    expect(s2!.attributes['sluice.continues.gap_ms']).toBe((b!.continues as Rec).gapMs);
    expect(s2!.links).toHaveLength(1);
    expect(s2!.links[0]!.context.spanId).toBe(s1!.spanContext().spanId);
    expect(s2!.links[0]!.context.traceId).toBe(s1!.spanContext().traceId);
    expect(s2!.links[0]!.attributes).toEqual({ 'sluice.link.kind': 'continues' });
    expect(s1!.links).toHaveLength(0);
  });

  test('Chat: tool_call_id links (streaming, the openai SDK)', async () => {
    logs.length = 0;
    const client = openaiClient(gw.url);
    const stream = await client.chat.completions.create({ model: 'm', stream: true, messages: [{ role: 'user', content: 'read' }], tools: [READ_FILE_CHAT_TOOL] });
    let id = '';
    for await (const ch of stream) for (const tc of ch.choices[0]?.delta.tool_calls ?? []) if (tc.id) id = tc.id;
    expect(id).toMatch(/^call_/);
    await client.chat.completions.create({
      model: 'm',
      messages: [
        { role: 'user', content: 'read' },
        { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'read_file', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: id, content: 'x' },
      ],
      tools: [READ_FILE_CHAT_TOOL],
    });
    const [a, b] = turns();
    expect(a!.continues).toBeUndefined();
    expect(b!.continues).toMatchObject({ requestId: a!.reqId, arm: 'early', calls: 1 });
  });

  test('Responses: call_id links (non-streaming body)', async () => {
    logs.length = 0;
    const client = openaiClient(gw.url);
    const r = await client.responses.create({ model: 'm', input: 'read', tools: [READ_FILE_RESPONSES_TOOL] });
    const fc = r.output.find((o) => o.type === 'function_call');
    expect(fc).toBeDefined();
    const callId = (fc as { call_id: string }).call_id;
    await client.responses.create({
      model: 'm',
      input: [
        { role: 'user', content: 'read' },
        { type: 'function_call', call_id: callId, name: 'read_file', arguments: '{}' },
        { type: 'function_call_output', call_id: callId, output: 'x' },
      ],
      tools: [READ_FILE_RESPONSES_TOOL],
    });
    const [a, b] = turns();
    expect(b!.continues).toMatchObject({ requestId: a!.reqId, calls: 1 });
  });
});

describe('sluice serve --release-holdout', () => {
  const run = (args: string[], env: Record<string, string> = {}) =>
    new Promise<{ code: number | null; err: string }>((resolve) => {
      const child = spawn(process.execPath, [childCli(), 'serve', '--upstream', 'http://127.0.0.1:9/v1', '--port', '0', ...args], { env: { ...childEnv(), ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      child.stderr.on('data', (c: Buffer) => (err += c.toString()));
      const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      child.on('close', (code) => {
        clearTimeout(killer);
        resolve({ code, err });
      });
    });

  test('--release-holdout 1: every request is in the holdout arm, on its turn record', async () => {
    const up = await startScriptedUpstream({ script: backendScript });
    const serve = await spawnServe(['--upstream', up.url, '--port', '0', '--release-holdout', '1']);
    try {
      expect(serve.url).toBeDefined();
      const client = new Anthropic({ baseURL: serve.url!, apiKey: 'k', maxRetries: 0 });
      const r = await client.messages.create({ model: 'm', max_tokens: 64, messages: [{ role: 'user', content: 'read' }], tools: [READ_FILE_TOOL] });
      expect(r.content.some((b) => b.type === 'tool_use')).toBe(true);
      const turnLine = async (): Promise<Rec | undefined> => {
        for (let i = 0; i < 100; i++) {
          const line = serve.lines.map((l) => l.text).find((t) => t.includes('"msg":"turn"'));
          if (line) return JSON.parse(line) as Rec;
          await new Promise((res) => setTimeout(res, 50));
        }
        return undefined;
      };
      expect((await turnLine())?.arm).toBe('holdout');
    } finally {
      serve.child.kill('SIGTERM');
      await new Promise((res) => serve.child.once('close', res));
      await up.close();
    }
  }, 60_000);

  test('a value outside 0-1 fails before listening, in one line naming the flag', async () => {
    for (const [args, env] of [[['--release-holdout', '1.5'], {}], [[], { SLUICE_RELEASE_HOLDOUT: 'half' }]] as const) {
      const r = await run([...args], { ...env });
      expect(r.code).toBe(2);
      expect(r.err).toContain('--release-holdout must be a fraction from 0 to 1');
      expect(r.err.trim().split('\n')).toHaveLength(1);
    }
  }, 60_000);
});
