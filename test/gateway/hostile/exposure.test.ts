/**
 * Exposure of `sluice serve` (issue 11): a non-loopback --host needs a key (or --no-auth, warned),
 * and the --inspect relay binds loopback with a per-run token unless --inspect-host exposes it.
 * Child processes: the relay's modules are ESM-only, which Jest's loader cannot import.
 */
import { spawnSync } from 'node:child_process';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { type ChildGateway, spawnGateway } from './clients';

jest.setTimeout(60_000);

const ROOT = path.resolve(__dirname, '../../..');

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

function status(url: string): Promise<number> {
  return new Promise((r) => http.get(url, { agent: false }, (res) => (res.resume(), r(res.statusCode ?? 0))).on('error', () => r(0)));
}

/** A non-internal IPv4 address of this machine, if it has one. */
function lanAddress(): string | undefined {
  for (const list of Object.values(os.networkInterfaces())) for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return undefined;
}

test('--host 0.0.0.0 without --api-key exits 1 with one line; --no-auth starts with a warning naming the exposure', async () => {
  const r = spawnSync(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/cli/main.ts', 'serve', '--upstream', 'http://127.0.0.1:9/v1', '--host', '0.0.0.0', '--port', '0'], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 30_000,
  });
  expect(r.status).toBe(1);
  const lines = r.stderr.trim().split('\n').filter((l) => !l.includes('warning'));
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/--api-key/);
  expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace

  const gw = await spawnGateway(['--upstream', 'http://127.0.0.1:9/v1', '--host', '0.0.0.0', '--port', '0', '--no-auth']);
  try {
    const text = gw.stderr.join('\n');
    expect(text).toMatch(/warning: --host 0\.0\.0\.0 exposes the gateway to every network interface/);
    expect(text).toMatch(/WITHOUT client authentication/);
  } finally {
    await gw.stop();
  }
});

describe('--inspect relay', () => {
  let gw: ChildGateway;
  let port: number;
  afterEach(async () => gw?.stop());

  test('binds loopback only and wants the per-run token', async () => {
    port = await freePort();
    gw = await spawnGateway(['--upstream', 'http://127.0.0.1:9/v1', '--port', '0', '--inspect'], { SLUICE_INSPECT_PORT: String(port) });
    for (let i = 0; i < 50 && !gw.stderr.some((l) => l.includes('inspector relay')); i++) await new Promise((r) => setTimeout(r, 100));
    const line = gw.stderr.find((l) => l.includes('inspector relay'))!;
    const url = /open (\S+)/.exec(line)![1]!;
    expect(url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/\\?token=[0-9a-f]{32}$`));
    expect(await status(url)).toBe(200);
    expect(await status(`http://127.0.0.1:${port}/`)).toBe(403);
    const lan = lanAddress();
    if (lan) expect(await status(`http://${lan}:${port}/${new URL(url).search}`)).toBe(0);
    // A websocket without the token is closed with 1008 (policy violation).
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- ws is CommonJS, a dependency of @statelyai/inspect
    const { WebSocket } = require('ws') as { WebSocket: new (u: string) => { on(e: 'close', f: (code: number) => void): void; on(e: 'error', f: () => void): void } };
    const code = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/`);
      ws.on('close', resolve);
      ws.on('error', () => undefined);
    });
    expect(code).toBe(1008);
  });

  test('--inspect-host 0.0.0.0 exposes it with a warning', async () => {
    port = await freePort();
    gw = await spawnGateway(['--upstream', 'http://127.0.0.1:9/v1', '--port', '0', '--inspect', '--inspect-host', '0.0.0.0'], { SLUICE_INSPECT_PORT: String(port) });
    for (let i = 0; i < 50 && !gw.stderr.some((l) => l.includes('inspector relay')); i++) await new Promise((r) => setTimeout(r, 100));
    expect(gw.stderr.join('\n')).toMatch(/warning: --inspect-host 0\.0\.0\.0 exposes the inspector relay .* every network interface/);
  });
});
