/**
 * The operations listener (`ops` / `sluice serve --ops-port`) and the listen backlog (issue 20
 * goal 4): probes on their own socket and thread answer while the main port cannot take a
 * connection — its accept queue full, or every connection busy at the cap — and while the main
 * event loop is blocked (503 `stalled` once it has not ticked for `stallMs`); readiness turns 503 there while the
 * gateway drains (the main port has stopped accepting by then), /metrics keeps the main port's
 * auth rule, and the flags fail loudly. Real servers, real sockets, the kernel's accept queue.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import { performance } from 'node:perf_hooks';
import { UsageError } from '../../src/cli/args';
import { main } from '../../src/cli/main';
import { optionsFrom } from '../../src/cli/serve';
import { Logger } from '../../src/gateway/log';
import { type Gateway, type GatewayOptions, startGateway } from '../../src/gateway/server';
import { Gate, type ScriptedUpstream, startScriptedUpstream, turnScript } from '../../src/gateway/scripted';

jest.setTimeout(30_000);

const quiet = new Logger('silent');

/** GET on a fresh connection: status, body and how long it took (status 0: no answer within `timeoutMs`). */
function get(url: string, headers: Record<string, string> = {}, timeoutMs = 5_000): Promise<{ status: number; body: string; ms: number }> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const req = http.get(url, { agent: false, headers, timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, ms: performance.now() - t0 }));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve({ status: 0, body: '', ms: performance.now() - t0 }));
  });
}

/** The kernel's TcpExt ListenOverflows (system-wide), undefined off Linux. */
function listenOverflows(): number | undefined {
  try {
    const lines = fs.readFileSync('/proc/net/netstat', 'utf8').split('\n').filter((l) => l.startsWith('TcpExt:'));
    return Number(lines[1]!.split(/\s+/)[lines[0]!.split(/\s+/).indexOf('ListenOverflows')]);
  } catch {
    return undefined;
  }
}

let up: ScriptedUpstream;
let gw: Gateway | undefined;
const open: net.Socket[] = [];

beforeAll(async () => {
  up = await startScriptedUpstream({ script: turnScript({ text: ['hi'] }) });
});
afterEach(async () => {
  for (const s of open.splice(0)) s.destroy();
  await gw?.close();
  gw = undefined;
});
afterAll(async () => up.close());

const start = (o: Partial<GatewayOptions> = {}): Promise<Gateway> =>
  startGateway({ upstream: up.url, logger: quiet, ops: { port: 0 }, bodyWorker: false, ...o }).then((g) => (gw = g));

test('the operations listener serves /health, /livez, /readyz and /metrics, and nothing else', async () => {
  const g = await start();
  expect(g.ops!.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(g.ops!.port).not.toBe(g.port);
  for (const p of ['/health', '/livez', '/healthz', '/']) {
    const r = await get(g.ops!.url + p);
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toMatchObject({ status: 'ok', active: 0 });
  }
  expect(JSON.parse((await get(g.ops!.url + '/readyz')).body)).toMatchObject({ status: 'ready', active: 0 });
  expect(JSON.parse((await get(g.ops!.url + '/health')).body).loopAgeMs).toBeLessThan(5_000);
  expect((await get(g.ops!.url + '/metrics')).body).toContain('sluice_gateway_open_connections');
  const model = await get(g.ops!.url + '/v1/models');
  expect(model.status).toBe(404);
  expect(JSON.parse(model.body).error.type).toBe('not_found_error');
  // The main port still answers the probes (backwards compatible).
  expect((await get(g.url + '/health')).status).toBe(200);
});

test("/health on the operations listener answers at once while the main port's accept queue is full", async () => {
  // Backlog 1: the kernel queues two completed connections on the main port; more SYNs are dropped
  // and retried by the client after 1 s (the initial retransmission timeout).
  const g = await start({ backlog: 1 });
  const before = listenOverflows();
  for (let i = 0; i < 20; i++) {
    const s = net.connect(g.port, '127.0.0.1');
    s.on('error', () => undefined);
    open.push(s);
  }
  const main = get(g.url + '/health');
  const ops = get(g.ops!.url + '/health');
  // Keep the gateway (this process) from accepting for 150 ms while every SYN arrives.
  await new Promise<void>((r) =>
    setTimeout(() => {
      const until = performance.now() + 150;
      while (performance.now() < until);
      r();
    }, 20),
  );
  const [m, o] = await Promise.all([main, ops]);
  expect(o.status).toBe(200);
  expect(o.ms).toBeLessThan(900);
  // The main port's probe waited for its SYN to be sent again: the queue really was full.
  expect(m.ms).toBeGreaterThan(900);
  expect(m.status).toBe(200);
  const after = listenOverflows();
  if (before !== undefined) expect(after!).toBeGreaterThan(before);
});

test('/health on the operations listener answers while the main event loop is blocked, and says 503 stalled once it has not ticked for stallMs', async () => {
  const g = await start({ ops: { port: 0, stallMs: 1_500 } });
  // A client in another process: this one (the gateway's main thread) is about to be blocked.
  const child = spawn(
    process.execPath,
    ['-e', `const http = require('node:http'); const at = (ms) => new Promise((r) => setTimeout(r, ms));
const get = () => new Promise((r) => http.get(process.argv[1], { agent: false }, (res) => { let b = ''; res.on('data', (c) => (b += c)); res.on('end', () => r({ status: res.statusCode, body: JSON.parse(b), at: Date.now() })); }).on('error', (e) => r({ error: e.message })));
process.stdin.once('data', async () => { await at(100); const a = await get(); await at(2000); const b = await get(); process.stdout.write(JSON.stringify([a, b])); });
process.stdout.write('ready\\n');`, g.ops!.url + '/health'],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout.setEncoding('utf8');
  const ready = new Promise<void>((r) => child.stdout.on('data', (c: string) => ((out += c), out.startsWith('ready\n') && r())));
  const exited = new Promise((r) => child.on('exit', r));
  const killer = setTimeout(() => child.kill('SIGKILL'), 20_000); // never outlive the test
  await ready;
  out = '';
  child.stdin.end('go\n');
  const until = performance.now() + 3_500;
  while (performance.now() < until); // the gateway's loop is blocked for 3.5 s
  const blockEnd = Date.now();
  await exited;
  clearTimeout(killer);
  const [a, b] = JSON.parse(out.replace(/^ready\n/, '')) as { status: number; body: { status: string; loopAgeMs: number }; at: number }[];
  expect(a).toMatchObject({ status: 200, body: { status: 'ok' } });
  expect(b).toMatchObject({ status: 503, body: { status: 'stalled' } });
  expect(b!.body.loopAgeMs).toBeGreaterThan(1_500);
  // Both answered while the gateway's main thread was still blocked.
  expect(a!.at).toBeLessThan(blockEnd);
  expect(b!.at).toBeLessThan(blockEnd);
  // Once the loop runs again, healthy again.
  await new Promise((r) => setTimeout(r, 300));
  expect((await get(g.ops!.url + '/health')).status).toBe(200);
});

test('/health on the operations listener answers while every main-port connection is busy at the cap', async () => {
  const g = await start({ maxConnections: 3 });
  // Three requests whose bodies never finish: busy sockets, so none can be evicted.
  for (let i = 0; i < 3; i++) {
    const s = net.connect(g.port, '127.0.0.1', () => s.write(`POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{`));
    s.on('error', () => undefined);
    open.push(s);
  }
  for (let i = 0; i < 100 && g.openSockets() < 3; i++) await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 50)); // the request lines are parsed: the sockets are busy
  const main = await get(g.url + '/health');
  expect(main.status).toBe(503);
  expect(main.body).toContain('too many open connections');
  const ops = await get(g.ops!.url + '/health');
  expect(ops.status).toBe(200);
  expect(JSON.parse(ops.body).status).toBe('ok');
});

test('while draining, /readyz says 503 draining on both listeners and a new model request gets 503 (the main port stays open until the stream ends); closed with the gateway', async () => {
  const gate = new Gate();
  const held = await startScriptedUpstream({ script: [{ t: 0, gate: true }, ...turnScript({ text: ['late'] })], gate });
  try {
    const g = await startGateway({ upstream: held.url, logger: quiet, ops: { port: 0 }, bodyWorker: false });
    gw = g;
    const body = JSON.stringify({ model: 'm', max_tokens: 5, stream: true, messages: [{ role: 'user', content: 'x' }] });
    const stream = new Promise<number>((resolve) => {
      const req = http.request(g.url + '/v1/messages', { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', () => resolve(0));
      req.end(body);
    });
    await gate.reached();
    const drained = g.drain(10_000);
    await new Promise((r) => setTimeout(r, 50));
    const ready = await get(g.ops!.url + '/readyz');
    expect(ready.status).toBe(503);
    expect(JSON.parse(ready.body)).toMatchObject({ status: 'draining', active: 1 });
    expect((await get(g.ops!.url + '/health')).status).toBe(200);
    expect((await get(g.url + '/readyz', {}, 1_000)).status).toBe(503); // main listener open, not ready
    const refused = await new Promise<number>((resolve) => {
      const req = http.request(g.url + '/v1/messages', { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', () => resolve(0));
      req.end(body);
    });
    expect(refused).toBe(503);
    gate.release();
    expect(await stream).toBe(200);
    expect(await drained).toBe(0);
    expect((await get(g.ops!.url + '/health', {}, 1_000)).status).toBe(0);
  } finally {
    gate.release();
    await held.close();
  }
});

test('/metrics on the operations listener needs the client key when keys are set; probes do not', async () => {
  const g = await start({ apiKeys: ['k-ops-test'] });
  expect((await get(g.ops!.url + '/metrics')).status).toBe(401);
  expect((await get(g.ops!.url + '/metrics', { 'x-api-key': 'wrong' })).status).toBe(401);
  expect((await get(g.ops!.url + '/metrics', { authorization: 'Bearer k-ops-test' })).status).toBe(200);
  expect((await get(g.ops!.url + '/health')).status).toBe(200);
  expect((await get(g.ops!.url + '/readyz')).status).toBe(200);
});

test('a non-loopback operations host needs keys (or noAuth), like --host', async () => {
  await expect(startGateway({ upstream: up.url, logger: quiet, bodyWorker: false, ops: { port: 0, host: '0.0.0.0' } })).rejects.toThrow(
    /^--ops-host 0\.0\.0\.0 exposes .*--api-key/,
  );
});

describe('flags', () => {
  const opts = (argv: string[], env: NodeJS.ProcessEnv = {}): GatewayOptions => optionsFrom(['--upstream', 'http://127.0.0.1:9/v1', ...argv], env).options;
  const usage = (argv: string[], env: NodeJS.ProcessEnv = {}): string => {
    try {
      opts(argv, env);
    } catch (e) {
      expect(e).toBeInstanceOf(UsageError);
      return (e as Error).message;
    }
    throw new Error('no usage error');
  };

  test('--ops-port, --ops-host, --ops-stall, --backlog and their environment variables', () => {
    expect(opts(['--ops-port', '9090']).ops).toEqual({ port: 9090 });
    expect(opts(['--ops-port', '0', '--ops-host', '::1']).ops).toEqual({ port: 0, host: '::1' });
    expect(opts([], { SLUICE_OPS_PORT: '9191', SLUICE_OPS_HOST: '127.0.0.2' }).ops).toEqual({ port: 9191, host: '127.0.0.2' });
    expect(opts([]).ops).toBeUndefined();
    expect(opts(['--ops-port', '0', '--ops-stall', '30000']).ops).toEqual({ port: 0, stallMs: 30_000 });
    expect(opts(['--ops-port', '0'], { SLUICE_OPS_STALL_MS: '5000' }).ops).toEqual({ port: 0, stallMs: 5_000 });
    expect(opts(['--backlog', '2048']).backlog).toBe(2048);
    expect(opts([], { SLUICE_BACKLOG: '100' }).backlog).toBe(100);
    expect(opts([]).backlog).toBeUndefined();
  });

  test('bad values are one-line usage errors', () => {
    expect(usage(['--ops-port', '99999'])).toBe('--ops-port (or SLUICE_OPS_PORT) must be an integer from 0 to 65535 (got "99999")');
    expect(usage(['--ops-port', 'x'])).toMatch(/^--ops-port .*must be an integer/);
    expect(usage([], { SLUICE_OPS_PORT: '-1' })).toMatch(/^--ops-port \(or SLUICE_OPS_PORT\)/);
    expect(usage(['--backlog', '0'])).toBe('--backlog (or SLUICE_BACKLOG) must be an integer from 1 to 65535 (got "0")');
    expect(usage(['--ops-host', '127.0.0.1'])).toBe('--ops-host needs --ops-port (or SLUICE_OPS_PORT)');
    expect(usage(['--ops-stall', '5000'])).toBe('--ops-stall needs --ops-port (or SLUICE_OPS_PORT)');
    expect(usage(['--ops-port', '0', '--ops-stall', '0'])).toMatch(/^--ops-stall \(or SLUICE_OPS_STALL_MS\) must be an integer from 1 to/);
    expect(usage(['--ops-port', '8787'])).toBe('--ops-port must differ from --port (both 8787)');
    expect(usage(['--port', '9000', '--ops-port', '9000'])).toBe('--ops-port must differ from --port (both 9000)');
    expect(opts(['--port', '9000', '--ops-port', '9000', '--ops-host', '127.0.0.2']).ops).toEqual({ port: 9000, host: '127.0.0.2' });
  });

  test('sluice serve: a usage error exits 2, an operations port in use exits 1, each with one line', async () => {
    // main() in this process (what the `sluice` binary runs), its stderr captured.
    const lines: string[] = [];
    const write = jest.spyOn(process.stderr, 'write').mockImplementation((c: string | Uint8Array) => (lines.push(String(c)), true));
    const taken = net.createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    try {
      expect(await main(['serve', '--upstream', 'http://127.0.0.1:9/v1', '--backlog', 'lots'])).toBe(2);
      expect(lines.join('').trim().split('\n')).toEqual(['sluice serve: --backlog (or SLUICE_BACKLOG) must be an integer from 1 to 65535 (got "lots") (see sluice serve --help)']);
      lines.length = 0;
      const port = (taken.address() as net.AddressInfo).port;
      expect(await main(['serve', '--upstream', 'http://127.0.0.1:9/v1', '--port', '0', '--log-level', 'silent', '--ops-port', String(port)])).toBe(1);
      expect(lines.join('').trim().split('\n')).toEqual([`sluice serve: operations listener: listen EADDRINUSE: address already in use 127.0.0.1:${port}`]);
    } finally {
      write.mockRestore();
      taken.close();
    }
  });
});
