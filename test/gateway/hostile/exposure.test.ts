/**
 * Exposure of `sluice serve` (issue 11): a non-loopback --host needs a key (or --no-auth, warned),
 * and the --inspect relay binds loopback with a per-run token unless --inspect-host exposes it.
 * Child processes: the relay's modules are ESM-only, which Jest's loader cannot import.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import { type ChildGateway, serveSync, spawnGateway } from './clients';

jest.setTimeout(120_000);

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
  const r = serveSync(['--upstream', 'http://127.0.0.1:9/v1', '--host', '0.0.0.0', '--port', '0']);
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

  const relayLine = async (): Promise<string> => {
    for (let i = 0; i < 100 && !gw.stderr.some((l) => l.includes('inspector relay')); i++) await new Promise((r) => setTimeout(r, 100));
    return gw.stderr.find((l) => l.includes('inspector relay'))!;
  };

  test('binds loopback only, wants the per-run token, and keeps the token out of the output (a 0600 file)', async () => {
    port = await freePort();
    gw = await spawnGateway(['--upstream', 'http://127.0.0.1:9/v1', '--port', '0', '--inspect'], { SLUICE_INSPECT_PORT: String(port) });
    const line = await relayLine();
    const file = /is in (\S+) \(mode 0600\)/.exec(line)![1]!;
    expect((fs.statSync(file).mode & 0o777).toString(8)).toBe('600');
    const url = fs.readFileSync(file, 'utf8').trim();
    expect(url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/\\?token=[0-9a-f]{32}$`));
    const token = new URL(url).searchParams.get('token')!;
    expect(gw.stderr.join('\n')).not.toContain(token); // stdout and stderr both
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

  test('--inspect-host 0.0.0.0 needs --api-key (exit 2, one line); with it, it is exposed with a warning', async () => {
    port = await freePort();
    const r = serveSync(['--upstream', 'http://127.0.0.1:9/v1', '--port', '0', '--inspect', '--inspect-host', '0.0.0.0'], { SLUICE_INSPECT_PORT: String(port) });
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/--inspect-host 0\.0\.0\.0 .*needs --api-key/);
    gw = await spawnGateway(['--upstream', 'http://127.0.0.1:9/v1', '--port', '0', '--inspect', '--inspect-host', '0.0.0.0', '--api-key', 'k1'], { SLUICE_INSPECT_PORT: String(port) });
    await relayLine();
    expect(gw.stderr.join('\n')).toMatch(/warning: --inspect-host 0\.0\.0\.0 exposes the inspector relay .* every network interface/);
  });
});

test('serve --port 99999 is a usage error: exit 2 with one line naming the flag', () => {
  const r = serveSync(['--upstream', 'http://127.0.0.1:9/v1', '--port', '99999']);
  expect(r.status).toBe(2);
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
  expect(r.stderr).toMatch(/--port \(or SLUICE_PORT\) must be an integer from 0 to 65535 \(got "99999"\)/);
});
