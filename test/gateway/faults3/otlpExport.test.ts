/**
 * OpenTelemetry export failures are visible (src/gateway/exportWatch.ts): against a real local
 * HTTP "collector" that is down, answers 500 or hangs, the first failure is one warn line, later
 * ones are counted and told per period (a minute in production; shortened here), every failure
 * counts in `/metrics`, and the first success after failures says so. The SDK and its OTLP/HTTP
 * exporter are the real ones, in `sluice serve` as a child process (OTEL_* environment, metrics
 * exported every 200 ms; the exporter's dynamic imports do not run inside Jest's VM).
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ExportFailures } from '../../../src/gateway/exportWatch';
import { Logger, type LogRecord } from '../../../src/gateway/log';
import { GatewayMetrics } from '../../../src/gateway/metrics';
import { rawRequest, spawnServe } from '../helpers';

jest.setTimeout(60_000);

type Mode = 'ok' | '500' | 'hang';

async function collector(mode: { now: Mode }): Promise<{ url: string; hits: number; close(): Promise<void> }> {
  const c = { url: '', hits: 0, close: async () => undefined as void };
  const server = http.createServer((req, res) => {
    c.hits++;
    req.resume();
    req.on('end', () => {
      if (mode.now === 'hang') return; // never answers
      if (mode.now === '500') res.writeHead(500, { 'content-type': 'text/plain' }).end('collector broke');
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  c.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/metrics`;
  c.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return c;
}

/** A port nothing listens on. */
async function deadUrl(): Promise<string> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return `http://127.0.0.1:${port}/v1/metrics`;
}

/** `sluice serve` with OTLP metrics export to `url` every 200 ms (no inherited OTEL_*). */
async function serve(url: string): Promise<{ url: string; err: () => string; stop(): Promise<number | null> }> {
  const env = { OTEL_METRICS_EXPORTER: 'otlp', OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: url, OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'http/json', OTEL_METRIC_EXPORT_INTERVAL: '200' };
  const p = await spawnServe(['--port', '0', '--upstream', 'http://127.0.0.1:9', '--log-format', 'json'], { env, dropOtelEnv: true, startMs: 90_000 });
  if (p.url === undefined) throw new Error(`serve exited (${p.code}): ${p.err}`);
  return { url: p.url, err: p.errNow, stop: p.stop };
}

const records = (text: string, msg: string): Record<string, unknown>[] =>
  text
    .split('\n')
    .filter((l) => l.includes(`"msg":"${msg}"`))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

async function failuresCounted(gwUrl: string): Promise<number> {
  const r = await rawRequest(gwUrl, { method: 'GET', path: '/metrics' });
  const m = /sluice_gateway_otlp_export_failures_total\{signal="metrics"\} (\d+)/.exec(r.text);
  return m ? Number(m[1]) : 0;
}

/** Failures are told once at warn, counted in /metrics, and summed up at shutdown. */
async function expectVisible(collectorUrl: string, errorPattern: RegExp, more?: (gwUrl: string, err: () => string) => Promise<void>): Promise<void> {
  const gw = await serve(collectorUrl);
  let stopped = false;
  try {
    // A request (its backend is down: a 502) gives the gateway's meters something to export.
    await rawRequest(gw.url, { path: '/v1/messages', body: JSON.stringify({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }) });
    let counted = 0;
    await eventuallyAsync(async () => (counted = await failuresCounted(gw.url)) >= 3, 20_000, 'three failed exports counted in /metrics');
    const first = records(gw.err(), 'otlp_export_failed');
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({ level: 'warn', signal: 'metrics' });
    expect(String(first[0]!.error)).toMatch(errorPattern);
    if (more) await more(gw.url, gw.err);
    await gw.stop();
    stopped = true;
    // The failures after the first, told as a count (every minute, and at shutdown).
    const summed = records(gw.err(), 'otlp_export_failures');
    expect(summed.length).toBeGreaterThanOrEqual(1);
    expect(summed.reduce((n, r) => n + (r.failures as number), 0)).toBeGreaterThanOrEqual(counted - 1);
    expect(records(gw.err(), 'otlp_export_failed')).toHaveLength(1);
  } finally {
    if (!stopped) await gw.stop();
  }
}

async function eventuallyAsync(cond: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('collector down: one warn line, counted in /metrics, the rest as a count', async () => {
  await expectVisible(await deadUrl(), /ECONNREFUSED|connect|no answer within 200 ms/i);
});

test('collector answers 500: visible the same way', async () => {
  const c = await collector({ now: '500' });
  try {
    await expectVisible(c.url, /500|Internal|Server|failed|no answer within 200 ms/i);
  } finally {
    await c.close();
  }
});

test('collector hangs: an export with no answer in time is a failure', async () => {
  const c = await collector({ now: 'hang' });
  try {
    await expectVisible(c.url, /no answer within 200 ms/);
    expect(c.hits).toBeGreaterThanOrEqual(1);
  } finally {
    await c.close();
  }
});

describe('ExportFailures (rate limit)', () => {
  test('first failure at warn, then one count per period; a success after failures says so once', () => {
    jest.useFakeTimers();
    try {
      const logs: LogRecord[] = [];
      const f = new ExportFailures(new Logger('info', (r) => logs.push(r)), 60_000);
      const gm = new GatewayMetrics({ processMetrics: false });
      let answer: { code: number; error?: Error } = { code: 1, error: new Error('Request timed out') };
      const exporter = f.watch({ export: (_items: never, cb: (r: { code: number; error?: Error }) => void) => cb(answer) }, 'traces', 30_000);
      for (let i = 0; i < 5; i++) exporter.export(undefined as never, () => undefined);
      f.countInto(gm);
      for (let i = 0; i < 5; i++) exporter.export(undefined as never, () => undefined);
      expect(logs.map((l) => l.msg)).toEqual(['otlp_export_failed']);
      jest.advanceTimersByTime(60_000);
      expect(logs.map((l) => l.msg)).toEqual(['otlp_export_failed', 'otlp_export_failures']);
      expect(logs[1]).toMatchObject({ level: 'warn', signal: 'traces', failures: 9 });
      jest.advanceTimersByTime(60_000);
      expect(logs).toHaveLength(2); // nothing new: no line
      answer = { code: 0 };
      exporter.export(undefined as never, () => undefined);
      exporter.export(undefined as never, () => undefined);
      expect(logs.map((l) => l.msg)).toEqual(['otlp_export_failed', 'otlp_export_failures', 'otlp_export_recovered']);
      f.stop();
      return gm.otlpExportFailures.get().then((m) => expect(m.values[0]?.value).toBe(10));
    } finally {
      jest.useRealTimers();
    }
  });

  test('an export that never answers counts once after its timeout; its late answer is ignored', () => {
    jest.useFakeTimers();
    try {
      const logs: LogRecord[] = [];
      const f = new ExportFailures(new Logger('info', (r) => logs.push(r)));
      let late: ((r: { code: number }) => void) | undefined;
      const exporter = f.watch({ export: (_items: never, cb: (r: { code: number }) => void) => void (late = cb) }, 'metrics', 500);
      const heard: number[] = [];
      exporter.export(undefined as never, (r) => heard.push(r.code));
      jest.advanceTimersByTime(500);
      expect(logs).toMatchObject([{ msg: 'otlp_export_failed', error: 'no answer within 500 ms' }]);
      late!({ code: 0 });
      expect(heard).toEqual([0]); // the SDK still gets its answer
      expect(logs).toHaveLength(1); // not a recovery: that export already counted as failed
      f.stop();
    } finally {
      jest.useRealTimers();
    }
  });
});
