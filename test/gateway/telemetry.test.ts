/**
 * Gateway telemetry end to end: `sluice serve` as a child process with the standard OTEL_*
 * variables pointing at a real OTLP/HTTP receiver of our own (node http on 127.0.0.1); a client
 * `traceparent` is continued, forwarded to the backend, and each released tool call is on the
 * spans (never its arguments). Without OTEL_* the SDK is never loaded. Also: the per-turn JSON
 * log record, the banner on stdout / off under --log-format json, and the usage errors.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { Logger, type LogRecord, turnLogObserver } from '../../src/gateway/log';
import { OTEL_PACKAGES, otelConfigFromEnv, otelMissingPackages } from '../../src/gateway/otel';
import { startGateway } from '../../src/gateway/server';
import { wantsJsonLogs } from '../../src/cli/serve';
import { chatChunk, type ScriptLine, startScriptedUpstream, type ScriptedUpstream } from '../../src/gateway/scripted';
import { childCli, childEnv } from '../journal/childBuild';
import { rawRequest, spawnServe } from './helpers';
import { type Receiver, spansOf, startReceiver } from './otlpReceiver';

const ROOT = path.resolve(__dirname, '../..');
const SECRET = 'TOP-SECRET-ARGUMENT';
const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';

/** Two calls complete early (each closes 150 ms before the next), finish 300 ms later. */
function script(): ScriptLine[] {
  return [
    { t: 0, data: chatChunk({ tool: { index: 0, id: 'call_a', name: 'read_file', args: `{"path":"${SECRET}"}` } }) },
    { t: 150, data: chatChunk({ tool: { index: 1, id: 'call_b', name: 'grep', args: '{"q":"x"}' } }) },
    { t: 300, data: chatChunk({ finish: 'tool_calls' }) },
    { t: 300, data: { id: 'u', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: { prompt_tokens: 11, completion_tokens: 7 } } },
    { t: 300, data: '[DONE]' },
  ];
}

interface Serve {
  child: ChildProcess;
  url: string;
  out: () => string;
  err: () => string;
  stop(): Promise<number | null>;
}

/** `sluice serve` with exactly this environment (no inherited OTEL_*), and a preload that lists loaded OTel SDK modules at exit. */
async function serve(args: string[], env: Record<string, string>, loadedFile: string): Promise<Serve> {
  const p = await spawnServe(['--port', '0', ...args], { env: { SLUICE_TEST_LOADED: loadedFile, ...env }, dropOtelEnv: true, nodeArgs: ['-r', PRELOAD], startMs: 90_000 });
  if (p.url === undefined) throw new Error(`serve exited (${p.code}): ${p.err}`);
  return { child: p.child, url: p.url, out: p.outNow, err: p.errNow, stop: p.stop };
}

let PRELOAD = '';
let tmp = '';
let receiver: Receiver;
let up: ScriptedUpstream;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-gwtel-'));
  PRELOAD = path.join(tmp, 'preload.js');
  // At exit: which OpenTelemetry SDK / exporter modules did this process load?
  fs.writeFileSync(
    PRELOAD,
    `process.on('exit', () => { const m = Object.keys(require.cache).filter((k) => /@opentelemetry[\\\\/](sdk-|exporter-|context-async-hooks|resources)/.test(k)); require('fs').writeFileSync(process.env.SLUICE_TEST_LOADED, JSON.stringify(m)); });\n`,
  );
  receiver = await startReceiver();
  up = await startScriptedUpstream({ script: script() });
});

afterAll(async () => {
  await receiver?.close();
  await up?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const chatBody = JSON.stringify({ model: 'qwen-x', stream: true, messages: [{ role: 'user', content: 'go' }], tools: [] });

type Json = Record<string, unknown>;
function attr(list: { key: string; value: Json }[] | undefined, key: string): unknown {
  const v = list?.find((a) => a.key === key)?.value;
  if (!v) return undefined;
  return v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.doubleValue ?? v.boolValue;
}

test('OTLP http/json: the client trace continues through the gateway to the backend, with each released call on the spans', async () => {
  const loaded = path.join(tmp, 'loaded-on.json');
  const s = await serve(['--upstream', up.url], {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_SERVICE_NAME: 'gw-under-test',
    OTEL_METRIC_EXPORT_INTERVAL: '60000',
  }, loaded);
  let code: number | null;
  try {
    const res = await rawRequest(s.url, {
      path: '/v1/chat/completions',
      body: chatBody,
      headers: { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`, tracestate: 'vendor=1' },
    });
    expect(res.status).toBe(200);
  } finally {
    code = await s.stop();
  }
  expect(code).toBe(0);

  // The backend saw the client's trace, with the gateway's CLIENT span as parent.
  const tp = String(up.requests.at(-1)!.headers.traceparent);
  expect(tp).toMatch(new RegExp(`^00-${CLIENT_TRACE}-[0-9a-f]{16}-01$`));
  expect(tp).not.toContain(CLIENT_SPAN);
  expect(up.requests.at(-1)!.headers.tracestate).toBe('vendor=1');

  // Flushed on SIGTERM: spans arrived as OTLP JSON.
  const traces = receiver.posts.filter((p) => p.path === '/v1/traces');
  expect(traces.length).toBeGreaterThan(0);
  expect(traces[0]!.contentType).toContain('application/json');
  const spans = spansOf(receiver.posts);
  const server = spans.find((x) => x.kind === 2)!;
  const client = spans.find((x) => x.kind === 3)!;
  expect(server.traceId).toBe(CLIENT_TRACE);
  expect(server.parentSpanId).toBe(CLIENT_SPAN);
  expect(server.name).toBe('POST /v1/chat/completions');
  expect(client.traceId).toBe(CLIENT_TRACE);
  expect(client.parentSpanId).toBe(server.spanId);
  expect(tp.split('-')[2]).toBe(client.spanId);
  // The library's turn span nests under the request span.
  const turn = spans.find((x) => x.name === 'sluice.turn')!;
  expect(turn.parentSpanId).toBe(server.spanId);
  expect(attr(turn.attributes, 'sluice.early_start')).toBe('gateway');
  expect((turn.events ?? []).filter((e) => e.name === 'sluice.call.released')).toHaveLength(2);
  expect(attr(server.attributes, 'http.response.status_code')).toBe(200);
  expect(attr(server.attributes, 'gen_ai.usage.input_tokens')).toBe(11);
  expect(attr(server.attributes, 'gen_ai.usage.output_tokens')).toBe(7);
  expect(attr(server.attributes, 'sluice.turn.calls')).toBe(2);
  expect(attr(server.attributes, 'sluice.turn.invariant_violations')).toBe(0);

  for (const span of [server, client]) {
    const calls = (span.events ?? []).filter((e) => e.name === 'sluice.call.released');
    expect(calls.map((e) => [attr(e.attributes, 'gen_ai.tool.name'), attr(e.attributes, 'gen_ai.tool.call.id')])).toEqual([
      ['read_file', 'call_a'],
      ['grep', 'call_b'],
    ]);
    // Released long before the stream ended: call_a completes when call_b opens (~150 ms).
    const streamEnd = Number(attr(server.attributes, 'sluice.turn.stream_end_ms'));
    const released = Number(attr(calls[0]!.attributes, 'sluice.call.released_ms'));
    expect(Number(attr(calls[0]!.attributes, 'sluice.call.complete_ms'))).toBeLessThanOrEqual(released);
    expect(streamEnd - released).toBeGreaterThan(100);
  }
  const resource = JSON.parse(traces[0]!.body.toString('utf8')) as { resourceSpans: { resource: { attributes: { key: string; value: Json }[] } }[] };
  expect(attr(resource.resourceSpans[0]!.resource.attributes, 'service.name')).toBe('gw-under-test');

  // Metrics flushed at shutdown, by name.
  const metricNames = new Set<string>();
  for (const p of receiver.posts.filter((x) => x.path === '/v1/metrics')) {
    const m = JSON.parse(p.body.toString('utf8')) as { resourceMetrics: { scopeMetrics: { metrics: { name: string }[] }[] }[] };
    for (const rm of m.resourceMetrics) for (const sm of rm.scopeMetrics) for (const x of sm.metrics) metricNames.add(x.name);
  }
  for (const n of ['http.server.request.duration', 'sluice.gateway.time_to_first_byte', 'sluice.gateway.upstream.latency', 'gen_ai.client.token.usage', 'sluice.gateway.tool_call.head_start'])
    expect(metricNames).toContain(n);

  // No argument contents anywhere in what was exported.
  for (const p of receiver.posts) expect(p.body.toString('utf8')).not.toContain(SECRET);
  expect(JSON.parse(fs.readFileSync(loaded, 'utf8')).length).toBeGreaterThan(0);
}, 150_000);

test('without OTEL_* nothing is loaded or exported; --log-format json keeps stdout empty and stderr pure JSON with a turn record', async () => {
  const before = receiver.posts.length;
  const loaded = path.join(tmp, 'loaded-off.json');
  const s = await serve(['--upstream', up.url, '--log-format', 'json'], {}, loaded);
  try {
    const res = await rawRequest(s.url, { path: '/v1/chat/completions', body: chatBody, headers: { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` } });
    expect(res.status).toBe(200);
  } finally {
    expect(await s.stop()).toBe(0);
  }
  expect(receiver.posts.length).toBe(before);
  expect(JSON.parse(fs.readFileSync(loaded, 'utf8'))).toEqual([]);
  // Without telemetry the gateway does not invent a trace: nothing is forwarded.
  expect(up.requests.at(-1)!.headers.traceparent).toBeUndefined();
  expect(s.out()).toBe('');
  const records = s
    .err()
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Json);
  const turn = records.find((r) => r.msg === 'turn')!;
  expect(turn).toMatchObject({ level: 'info', format: 'openai-chat', upstreamFormat: 'openai-chat', model: 'qwen-x', outcome: 'ok', violations: 0 });
  const calls = turn.calls as { id: string; name: string; completeMs: number; releasedMs: number }[];
  expect(calls.map((c) => [c.name, c.id])).toEqual([
    ['read_file', 'call_a'],
    ['grep', 'call_b'],
  ]);
  expect(Number(turn.streamEndMs) - calls[0]!.releasedMs).toBeGreaterThan(100);
  expect(s.err()).not.toContain(SECRET);
}, 150_000);

test('misconfigured OTEL_* values are one-line usage errors (exit 2) before anything starts', async () => {
  expect(() => otelConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(
    'OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported: use http/protobuf or http/json',
  );
  expect(() => otelConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' })).toThrow('OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL');
  expect(() => otelConfigFromEnv({ OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow('OTEL_TRACES_EXPORTER=zipkin is not supported');
  expect(otelConfigFromEnv({})).toBeUndefined();
  expect(otelConfigFromEnv({ OTEL_SERVICE_NAME: 'x' })).toBeUndefined();
  expect(otelConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
  expect(otelConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/', OTEL_METRICS_EXPORTER: 'none' })).toEqual({
    serviceName: 'sluice-gateway',
    traces: { url: 'http://c:4318/v1/traces', protocol: 'http/protobuf' },
  });
  expect(
    otelConfigFromEnv({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:1/x', OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'http/json', OTEL_METRICS_EXPORTER: 'otlp' }),
  ).toEqual({
    serviceName: 'sluice-gateway',
    traces: { url: 'http://t:1/x', protocol: 'http/protobuf' },
    metrics: { url: 'http://localhost:4318/v1/metrics', protocol: 'http/json', intervalMs: 60_000 },
  });

  const child = spawn(process.execPath, [childCli(), 'serve', '--upstream', 'http://127.0.0.1:9/v1'], {
    cwd: ROOT,
    env: childEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
  expect(code).toBe(2);
  expect(err.trim().split('\n')).toEqual(['sluice serve: OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported: use http/protobuf or http/json (see sluice serve --help)']);
}, 150_000);

/** `sluice serve` that is expected not to start: its exit code and what it wrote. */
async function serveFails(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; out: string; err: string }> {
  const p = await spawnServe(args, { env });
  if (p.url !== undefined) {
    await p.stop();
    throw new Error(`sluice serve started on ${p.url}; it was expected to fail`);
  }
  return { code: p.code ?? null, out: p.out, err: p.err };
}

test('--log-format json: a start-up failure is one JSON error record too (usage_error exit 2, startup_failed exit 1), stdout empty', async () => {
  expect(wantsJsonLogs(['--log-format', 'json'], {})).toBe(true);
  expect(wantsJsonLogs(['--log-format=json'], {})).toBe(true);
  expect(wantsJsonLogs([], { SLUICE_LOG_FORMAT: 'json' })).toBe(true);
  expect(wantsJsonLogs(['--log-format', 'text'], { SLUICE_LOG_FORMAT: 'json' })).toBe(false);
  expect(wantsJsonLogs(['--', '--log-format', 'json'], {})).toBe(false);

  const usage = await serveFails(['--upstream', up.url, '--log-format', 'json', '--port', 'nope']);
  expect(usage.code).toBe(2);
  expect(usage.out).toBe('');
  const lines = usage.err.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'error', msg: 'usage_error', error: '--port (or SLUICE_PORT) must be an integer from 0 to 65535 (got "nope")', help: 'sluice serve --help' });

  // The environment chooses JSON as well; a misconfigured OTEL_* is a usage error like a flag.
  const otel = await serveFails(['--upstream', up.url], { SLUICE_LOG_FORMAT: 'json', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' });
  expect(otel.code).toBe(2);
  expect(otel.err.trim().split('\n').map((l) => (JSON.parse(l) as Json).msg)).toEqual(['usage_error']);

  // The port is taken: the gateway cannot listen.
  const taken = http.createServer();
  await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
  try {
    const port = String((taken.address() as AddressInfo).port);
    const failed = await serveFails(['--upstream', up.url, '--log-format', 'json', '--port', port]);
    expect(failed.code).toBe(1);
    expect(failed.out).toBe('');
    const records = failed.err.trim().split('\n').map((l) => JSON.parse(l) as Json);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ level: 'error', msg: 'startup_failed' });
    expect(String(records[0]!.error)).toContain(port);
    // Text mode says the same in one plain line.
    const text = await serveFails(['--upstream', up.url, '--port', port]);
    expect(text.code).toBe(1);
    expect(text.err.trim().split('\n')).toEqual([`sluice serve: ${String(records[0]!.error)}`]);
  } finally {
    await new Promise<void>((r) => taken.close(() => r()));
  }
}, 150_000);

test('a dead backend: the client gets 502 and the log says so at warn (no turn record: there was no turn)', async () => {
  const records: LogRecord[] = [];
  const logger = new Logger('info', (r) => records.push(r));
  // A port that was free a moment ago: connection refused.
  const probe = http.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const dead = `http://127.0.0.1:${(probe.address() as AddressInfo).port}/v1`;
  await new Promise<void>((r) => probe.close(() => r()));
  const gw = await startGateway({ upstream: dead, logger, observer: turnLogObserver(logger) });
  try {
    const res = await rawRequest(gw.url, { path: '/v1/chat/completions', body: chatBody });
    expect(res.status).toBe(502);
  } finally {
    await gw.close();
  }
  const warn = records.filter((r) => r.level === 'warn');
  expect(warn.map((r) => r.msg)).toEqual(['upstream_unreachable']);
  expect(warn[0]).toMatchObject({ upstreamFormat: 'openai-chat', errorType: 'api_error' });
  expect(records.some((r) => r.msg === 'turn')).toBe(false);
}, 30_000);

test('the OpenTelemetry SDK is an optional peer: a missing package is named in one install line, only what OTEL_* needs', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as Record<string, Record<string, unknown>>;
  const all = [...new Set(Object.values(OTEL_PACKAGES).flat())];
  for (const name of all) {
    expect([name, pkg.dependencies?.[name]]).toEqual([name, undefined]); // never installed with the library
    expect([name, pkg.peerDependenciesMeta?.[name]]).toEqual([name, { optional: true }]);
    expect([name, typeof pkg.devDependencies?.[name]]).toEqual([name, 'string']); // a checkout has it
  }
  const config = otelConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_METRICS_EXPORTER: 'none' })!;
  expect(otelMissingPackages(config)).toBeUndefined(); // the checkout's devDependencies
  const none = (name: string): never => {
    throw new Error(`Cannot find module '${name}'`);
  };
  expect(otelMissingPackages(config, none)).toBe(
    'OTEL_* asks for OTLP export, which needs the OpenTelemetry SDK (optional peer dependencies of sluice): npm install @opentelemetry/resources @opentelemetry/context-async-hooks @opentelemetry/core @opentelemetry/sdk-trace-base @opentelemetry/exporter-trace-otlp-http',
  );
  const both = otelConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })!;
  const onlyExporters = (name: string): string => (name.includes('exporter-') ? none(name) : name);
  expect(otelMissingPackages(both, onlyExporters)).toMatch(/: npm install @opentelemetry\/exporter-trace-otlp-proto @opentelemetry\/exporter-metrics-otlp-proto$/);
});
