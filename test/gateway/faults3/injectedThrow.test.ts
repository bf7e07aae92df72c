/**
 * No exception ends the process: a throw inside one request — at each stage of the exchange
 * pipeline (parse → open → control → encode → decode → finish) or in the turn's actors — ends that
 * request only, with the API's error (500 before the commit point, the API's error frame after it),
 * is logged once (`internal_error` with the request id and the stage) and counted in /metrics
 * (`sluice_gateway_internal_errors_total{stage}`), while a concurrent healthy stream completes.
 *
 * The throws are injected through the gateway's observer seam (observer.ts): production gateways
 * run NOOP_OBSERVER or the telemetry observers, so the seam costs nothing there. A request asks for
 * its fault by its model name (`fault:<where>`); every other request is observed normally.
 */
import { Logger, type LogRecord } from '../../../src/gateway/log';
import type { ExchangeObserver, RequestObservation } from '../../../src/gateway/observer';
import { type Gateway, startGateway } from '../../../src/gateway/server';
import { chatChunk, Gate, type RecordedRequest, startScriptedUpstream, type ScriptedUpstream } from '../../../src/gateway/scripted';
import { rawRequest, type RawResponse } from '../helpers';

/** SSE frames as `{event, data}` (`data: [DONE]` kept as the string). */
function sseFrames(text: string): { event: string; data: unknown }[] {
  return text
    .split('\n\n')
    .filter((f) => f.trim().length > 0 && !f.startsWith(':'))
    .map((f) => {
      const data = /^data: (.*)$/m.exec(f)?.[1] ?? '';
      return { event: /^event: (.*)$/m.exec(f)?.[1] ?? '', data: data === '[DONE]' ? data : (JSON.parse(data) as unknown) };
    });
}

jest.setTimeout(60_000);

type Where = 'parse' | 'open' | 'control' | 'encode' | 'decode' | 'finish' | 'actor' | 'listener';

/** Throws at the hook of its stage when the request's model says `fault:<where>`. */
const faultyObserver: ExchangeObserver = {
  start(info) {
    const where = info.model.startsWith('fault:') ? (info.model.slice(6) as Where) : undefined;
    const boom = (at: Where): void => {
      if (where === at) throw new TypeError(`injected fault at ${at}`);
    };
    boom('parse');
    const o: RequestObservation = {
      upstreamHeaders: () => (boom('open'), undefined),
      upstreamResponse: () => undefined,
      upstreamFailed: () => undefined,
      firstByte: () => boom('decode'),
      firstClientByte: () => boom('encode'),
      controller: (ctrl) => {
        boom('control');
        // Inside the turn's actor: a listener the machine runs while it releases a call.
        if (where === 'actor') ctrl.events.on('call.released', () => boom('actor'));
        // Beside the route's encoder: an output listener that throws on the call.
        if (where === 'listener') ctrl.events.on('output', (e) => e.type === 'tool_use' && boom('listener'));
      },
      end: () => boom('finish'),
    };
    return o;
  },
};

/** Text, one tool call, finish. The healthy request (`model: healthy`) waits at the gate in the middle. */
function script(req: RecordedRequest): Record<string, unknown>[] {
  const model = String((req.body as { model?: string }).model);
  return [
    { t: 0, data: chatChunk({ content: 'hello ' }) },
    ...(model.startsWith('healthy-') ? [{ t: 1, gate: model }] : []),
    { t: 1, data: chatChunk({ tool: { index: 0, id: 'call_1', name: 'read', args: '{"path":"a"}' } }) },
    { t: 2, data: chatChunk({ finish: 'tool_calls' }) },
    { t: 2, data: '[DONE]' },
  ];
}

const ROUTES = {
  messages: {
    path: '/v1/messages',
    body: (model: string, stream: boolean) => ({ model, max_tokens: 64, stream, messages: [{ role: 'user', content: 'hi' }], tools: [{ name: 'read', input_schema: { type: 'object', properties: { path: { type: 'string' } } } }] }),
  },
  chat: {
    path: '/v1/chat/completions',
    body: (model: string, stream: boolean) => ({ model, stream, messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: { name: 'read', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }] }),
  },
  responses: {
    path: '/v1/responses',
    body: (model: string, stream: boolean) => ({ model, stream, input: 'hi', tools: [{ type: 'function', name: 'read', parameters: { type: 'object', properties: { path: { type: 'string' } } } }] }),
  },
} as const;
type Route = keyof typeof ROUTES;

let up: ScriptedUpstream;
let gw: Gateway;
let healthyN = 0;
const logs: LogRecord[] = [];

beforeAll(async () => {
  up = await startScriptedUpstream({ script: (r) => script(r) as never });
  gw = await startGateway({ upstream: up.url, logger: new Logger('info', (r) => logs.push(r)), pingIntervalMs: 0, observer: faultyObserver });
});
afterAll(async () => {
  for (const g of up.gates.values()) g.release();
  await gw.close();
  await up.close();
});

const send = (route: Route, model: string, stream = true): Promise<RawResponse> => rawRequest(gw.url, { path: ROUTES[route].path, body: JSON.stringify(ROUTES[route].body(model, stream)) });

/** The terminal frame each API writes for an error after the commit point. */
function streamError(route: Route, text: string): unknown {
  const frames = sseFrames(text);
  if (route === 'messages') return frames.find((f) => f.event === 'error')?.data;
  if (route === 'responses') return frames.find((f) => f.event === 'response.failed')?.data;
  return frames.map((f) => f.data as { error?: unknown }).find((d) => d && typeof d === 'object' && 'error' in d);
}

function succeeded(route: Route, r: RawResponse): boolean {
  const events = sseFrames(r.text).map((f) => f.event);
  if (route === 'messages') return events.includes('message_stop') && !events.includes('error');
  if (route === 'responses') return events.includes('response.completed');
  return r.text.includes('"finish_reason":"tool_calls"') && r.text.includes('[DONE]') && !r.text.includes('"error"');
}

async function internalCount(stage: string): Promise<number> {
  const m = await gw.metrics.internalErrors.get();
  return m.values.find((v) => v.labels.stage === stage)?.value ?? 0;
}

/**
 * Run one faulty request while a healthy stream on the same gateway is parked mid-stream; the
 * healthy one must complete after the fault.
 */
async function withHealthy(route: Route, faulty: () => Promise<RawResponse>): Promise<RawResponse> {
  const name = `healthy-${++healthyN}`;
  const parked = new Gate();
  up.gates.set(name, parked);
  const healthy = send(route, name);
  await parked.reached();
  const r = await faulty();
  parked.release();
  const h = await healthy;
  expect(h.status).toBe(200);
  expect(succeeded(route, h)).toBe(true);
  return r;
}

const logOf = (reqId: unknown): LogRecord[] => logs.filter((l) => l.msg === 'internal_error' && l.reqId === reqId);

describe.each(['parse', 'open', 'control'] as const)('before the commit point: a throw at %s', (stage) => {
  test.each(Object.keys(ROUTES) as Route[])('%s: 500 in the API error shape, logged once, counted; the healthy stream completes', async (route) => {
    const before = await internalCount(stage);
    const r = await withHealthy(route, () => send(route, `fault:${stage}`));
    expect(r.status).toBe(500);
    expect(JSON.stringify(r.json)).toContain('internal gateway error');
    const recs = logOf(r.headers['request-id']);
    expect(recs).toHaveLength(1);
    expect(recs[0]).toMatchObject({ stage, error: 'TypeError' });
    expect(await internalCount(stage)).toBe(before + 1);
  });
});

describe.each([
  ['encode', 'encode'],
  ['decode', 'decode'],
  ['actor', 'control'],
  ['listener', 'control'], // an output listener beside the encoder runs inside the turn's actor
] as const)('after the commit point: a throw at %s', (where, stage) => {
  test.each(Object.keys(ROUTES) as Route[])('%s: the API error frame ends this stream, logged once, counted; the healthy stream completes', async (route) => {
    const before = await internalCount(stage);
    const r = await withHealthy(route, () => send(route, `fault:${where}`));
    expect(r.status).toBe(200);
    expect(JSON.stringify(streamError(route, r.text))).toContain('internal gateway error');
    expect(succeeded(route, r)).toBe(false);
    const recs = logOf(r.headers['request-id']);
    expect(recs).toHaveLength(1);
    expect(recs[0]).toMatchObject({ stage });
    expect(await internalCount(stage)).toBe(before + 1);
    expect(logs.find((l) => l.msg === 'request' && l.reqId === r.headers['request-id'])).toMatchObject({ outcome: 'internal_error' });
  });
});

test.each(['decode', 'actor'] as const)('non-streaming: a throw at %s is a 500 in the API error shape', async (where) => {
  const r = await withHealthy('responses', () => send('responses', `fault:${where}`, false));
  expect(r.status).toBe(500);
  expect(JSON.stringify(r.json)).toContain('internal gateway error');
  expect(logOf(r.headers['request-id'])).toHaveLength(1);
});

test('a throw at finish (the observer end hook): the answer stands, the fault is logged once and counted', async () => {
  const before = await internalCount('finish');
  const r = await withHealthy('messages', () => send('messages', 'fault:finish'));
  expect(r.status).toBe(200);
  expect(succeeded('messages', r)).toBe(true);
  expect(logOf(r.headers['request-id'])).toMatchObject([{ stage: 'finish' }]);
  expect(await internalCount('finish')).toBe(before + 1);
  const text = await gw.metrics.registry.metrics();
  expect(text).toMatch(/sluice_gateway_internal_errors_total\{stage="finish"\} \d+/);
});
