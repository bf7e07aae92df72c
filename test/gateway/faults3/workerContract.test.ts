/**
 * One contract across the body worker's thread boundary: what the worker hands back (the request's
 * head) is plain data, and the main thread reads the Responses client-tool table through one
 * function (`clientToolLookup`) on both paths.
 *
 * - Every tool kind the inbound APIs accept (function, namespace with function and custom members,
 *   custom/freeform, client tool_search; Chat and Messages function tools) translates to the same
 *   head through the worker and inline, and the head survives a structured clone unchanged.
 * - Regression: a `/v1/responses` body of at least 512 KiB (the worker's default threshold) with a
 *   namespace, custom or tool_search tool, answered by a backend that calls it, used to end the
 *   process (`names.ref is not a function`). Over a real gateway: each call reaches the client in
 *   its own shape (streaming and not), worker and inline answers agree, the gateway keeps serving.
 */
import { Logger, type LogRecord } from '../../../src/gateway/log';
import { MemoryBudget } from '../../../src/gateway/body';
import { chatApi } from '../../../src/gateway/inbound/chat';
import { messagesApi } from '../../../src/gateway/inbound/messages';
import { responsesApi } from '../../../src/gateway/inbound/responses';
import { clientToolLookup } from '../../../src/gateway/inbound/responsesTools';
import type { InboundApi } from '../../../src/gateway/inbound/types';
import { type Gateway, startGateway } from '../../../src/gateway/server';
import { chatChunk, startScriptedUpstream, type ScriptedUpstream } from '../../../src/gateway/scripted';
import { upstreamFormatFor } from '../../../src/gateway/upstream/index';
import { REQUEST_LIMIT_DEFAULTS, validateCanonical } from '../../../src/gateway/validate';
import { BodyWorkerPool } from '../../../src/gateway/worker/pool';
import { translateBody } from '../../../src/gateway/worker/translate';
import { rawRequest, sseFrames } from '../helpers';

jest.setTimeout(120_000);

const fn = (name: string): Record<string, unknown> => ({
  type: 'function',
  name,
  description: `${name} does things`,
  strict: false,
  parameters: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] },
});
const NAMESPACE = { type: 'namespace', name: 'mcp__wordbook', description: 'wordbook', tools: [fn('lookup_word'), { type: 'custom', name: 'patch', description: 'patch it' }] };
const CUSTOM = { type: 'custom', name: 'apply_patch', description: 'Apply a patch', format: { type: 'grammar', syntax: 'lark', definition: 'start: "x"' } };
const TOOL_SEARCH = { type: 'tool_search', execution: 'client', description: 'find tools', parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } };
const RESPONSES_TOOLS = [fn('exec_command'), NAMESPACE, CUSTOM, TOOL_SEARCH];

/** A body of about `pad` bytes of conversation (a long Codex session). */
function responsesBody(pad: number, stream: boolean, tools: unknown[] = RESPONSES_TOOLS): Buffer {
  return Buffer.from(
    JSON.stringify({
      model: 'gpt-5-codex',
      stream,
      instructions: 'be brief',
      input: [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'x'.repeat(pad) }] },
        // A loaded tool from an earlier search: its tools join the backend's list.
        { type: 'tool_search_call', call_id: 'ts1', execution: 'client', arguments: { query: 'time' }, status: 'completed' },
        { type: 'tool_search_output', call_id: 'ts1', execution: 'client', status: 'completed', tools: [{ type: 'namespace', name: 'mcp__clock', description: 'clock', tools: [fn('now')] }] },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'go on' }] },
      ],
      tools,
    }),
  );
}

const chatBody = (pad: number): Buffer =>
  Buffer.from(JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'x'.repeat(pad) }], tools: [{ type: 'function', function: { name: 'read', parameters: { type: 'object', properties: {} } } }] }));
const messagesBody = (pad: number): Buffer =>
  Buffer.from(JSON.stringify({ model: 'm', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'x'.repeat(pad) }], tools: [{ name: 'read', input_schema: { type: 'object', properties: {} } }] }));

describe('the worker hands back plain data, read by one function on the main thread', () => {
  const logger = new Logger('error', () => undefined);
  let pool: BodyWorkerPool;
  beforeAll(() => {
    pool = new BodyWorkerPool({ upstreamFormat: 'openai-chat', models: { rules: [] }, bodyOptions: {}, limits: REQUEST_LIMIT_DEFAULTS }, new MemoryBudget(256 * 1024 * 1024), logger, 4 * 1024 * 1024, { aboveBytes: 1 });
  });
  afterAll(() => pool.close());

  const inline = (api: InboundApi, bytes: Buffer): ReturnType<typeof translateBody> =>
    translateBody(bytes, { api, validate: (c) => validateCanonical(c, REQUEST_LIMIT_DEFAULTS), models: { rules: [] }, upstreamFormat: upstreamFormatFor('openai-chat'), bodyOptions: {} });

  const cases: [string, InboundApi, Buffer][] = [
    ['responses: function, namespace (function + custom members), custom, client tool_search, loaded namespace', responsesApi, responsesBody(1000, true)],
    ['responses: namespace only', responsesApi, responsesBody(1000, true, [NAMESPACE])],
    ['responses: custom only', responsesApi, responsesBody(1000, false, [CUSTOM])],
    ['responses: client tool_search only', responsesApi, responsesBody(1000, true, [TOOL_SEARCH])],
    ['responses: plain functions', responsesApi, responsesBody(1000, true, [fn('exec_command')])],
    ['chat: function tools', chatApi, chatBody(1000)],
    ['messages: tools', messagesApi, messagesBody(1000)],
  ];

  test.each(cases)('%s: worker result equals the inline one; the head is structured-clone stable', async (_name, api, bytes) => {
    const local = inline(api, bytes);
    expect(local.ok).toBe(true);
    const r = await pool.translate(api.name, Buffer.from(bytes));
    expect(r.kind).toBe('done');
    if (r.kind !== 'done' || !r.result.ok || !local.ok) throw new Error('translation failed');
    const remote = r.result;
    // Plain data: a structured clone changes nothing (no methods, no class instances).
    expect(structuredClone(local.head)).toStrictEqual(local.head);
    expect(remote.head).toStrictEqual(local.head);
    expect(Buffer.from(remote.payload).toString('utf8')).toBe(local.payload);
    // The one reader gives the same answer for every backend tool name, on both paths.
    const a = clientToolLookup(local.head.clientTools);
    const b = clientToolLookup(remote.head.clientTools);
    expect(b === undefined).toBe(a === undefined);
    for (const t of local.head.tools ?? []) expect(b?.(t.name)).toEqual(a?.(t.name));
    if (api === responsesApi && local.head.clientTools) expect(a).toBeDefined();
  });
});

/** The backend calls one tool by its flat name, then `finish_reason: tool_calls`. */
function callScript(flat: string, args: string): Record<string, unknown>[] {
  return [
    { t: 0, data: chatChunk({ content: 'ok ' }) },
    { t: 1, data: chatChunk({ tool: { index: 0, id: 'call_1', name: flat, args } }) },
    { t: 2, data: chatChunk({ finish: 'tool_calls' }) },
    { t: 2, data: '[DONE]' },
  ];
}

const CALLS: { kind: string; flat: string; args: string; expected: Record<string, unknown> }[] = [
  { kind: 'namespace member', flat: 'mcp__wordbook__lookup_word', args: '{"word":"sluice"}', expected: { type: 'function_call', name: 'lookup_word', namespace: 'mcp__wordbook', arguments: '{"word":"sluice"}' } },
  { kind: 'namespace custom member', flat: 'mcp__wordbook__patch', args: '{"input":"*** x"}', expected: { type: 'custom_tool_call', name: 'patch', namespace: 'mcp__wordbook', input: '*** x' } },
  { kind: 'custom (apply_patch)', flat: 'apply_patch', args: '{"input":"*** Begin Patch"}', expected: { type: 'custom_tool_call', name: 'apply_patch', input: '*** Begin Patch' } },
  { kind: 'client tool_search', flat: 'tool_search', args: '{"query":"clock"}', expected: { type: 'tool_search_call', execution: 'client', arguments: { query: 'clock' } } },
  { kind: 'loaded namespace member', flat: 'mcp__clock__now', args: '{"word":"t"}', expected: { type: 'function_call', name: 'now', namespace: 'mcp__clock' } },
];

describe('regression: a large /v1/responses body with client tools through the body worker', () => {
  let up: ScriptedUpstream;
  let gw: Gateway;
  let inlineGw: Gateway;
  const logs: LogRecord[] = [];
  let next = CALLS[0]!;
  beforeAll(async () => {
    up = await startScriptedUpstream({ script: () => callScript(next.flat, next.args) as never });
    gw = await startGateway({ upstream: up.url, logger: new Logger('debug', (r) => logs.push(r)), pingIntervalMs: 0 });
    inlineGw = await startGateway({ upstream: up.url, logger: new Logger('error', () => undefined), pingIntervalMs: 0, bodyWorker: false });
  });
  afterAll(async () => {
    await gw.close();
    await inlineGw.close();
    await up.close();
  });

  const post = (url: string, body: Buffer): ReturnType<typeof rawRequest> => rawRequest(url, { path: '/v1/responses', body });

  /** The call item the client got (streaming: `response.output_item.done`; else the body's output). */
  function callItem(text: string, stream: boolean): Record<string, unknown> | undefined {
    if (!stream) {
      const out = (JSON.parse(text) as { output: Record<string, unknown>[] }).output;
      return out.find((i) => i.type !== 'message' && i.type !== 'reasoning');
    }
    const done = sseFrames(text).filter((f) => f.event === 'response.output_item.done');
    return done.map((f) => (f.data as { item: Record<string, unknown> }).item).find((i) => i.type !== 'message');
  }

  const strip = (i: Record<string, unknown> | undefined): Record<string, unknown> => {
    const { id: _id, call_id: _c, ...rest } = i ?? {};
    return rest;
  };

  test.each(CALLS.flatMap((c) => [{ ...c, stream: true }, { ...c, stream: false }]))('$kind (stream: $stream): the call reaches the client; worker and inline agree', async (c) => {
    next = c;
    const body = responsesBody(600 * 1024, c.stream);
    expect(body.length).toBeGreaterThanOrEqual(512 * 1024);
    const r = await post(gw.url, body);
    expect(r.status).toBe(200);
    if (c.stream) {
      const frames = sseFrames(r.text);
      expect(frames.map((f) => f.event)).toContain('response.completed');
      expect(frames.map((f) => f.event)).not.toContain('response.failed');
    }
    const item = callItem(r.text, c.stream);
    expect(item).toMatchObject(c.expected);
    const viaInline = await post(inlineGw.url, body);
    expect(viaInline.status).toBe(200);
    expect(strip(callItem(viaInline.text, c.stream))).toEqual(strip(item));
    // The worker translated it (its debug record), and the gateway still answers.
    expect(logs.some((l) => l.msg === 'body_worker')).toBe(true);
    expect(logs.filter((l) => l.msg === 'internal_error')).toEqual([]);
    const health = await rawRequest(gw.url, { method: 'GET', path: '/health' });
    expect(health.status).toBe(200);
  });
});
