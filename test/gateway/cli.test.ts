/**
 * `sluice serve` as a process: starts, answers, stops cleanly on SIGTERM; --help covers every flag.
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { ENV, HELP, SPEC } from '../../src/cli/serve';
import { startScriptedUpstream, turnScript } from '../../src/gateway/scripted';
import { rawRequest } from './helpers';

test('--help explains every flag and its environment variable', () => {
  for (const flag of Object.keys(SPEC)) expect(HELP).toContain(`--${flag}`);
  for (const env of Object.values(ENV)) expect(HELP).toContain(env);
  expect(HELP).toContain('SLUICE_STRICT_STOP_REASON');
});

test('sluice serve starts, proxies a request, and exits 0 on SIGTERM', async () => {
  const up = await startScriptedUpstream({ script: turnScript({ text: ['hi'] }) });
  const main = path.resolve(__dirname, '../../src/cli/main.ts');
  const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', main, 'serve', '--upstream', up.url, '--port', '0', '--log-level', 'warn'], {
    cwd: path.resolve(__dirname, '../..'),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    let err = '';
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listening line; stderr: ${err}`)), 25_000);
      child.stderr.on('data', (c: Buffer) => {
        err += c.toString();
        const m = /sluice gateway on (http:\/\/[\d.]+:\d+)/.exec(err);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
      child.on('exit', (code) => reject(new Error(`exited early (${code}): ${err}`)));
    });
    const res = await rawRequest(url, { path: '/v1/messages', body: JSON.stringify({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }) });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ content: [{ type: 'text', text: 'hi' }] });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    await up.close();
  }
}, 40_000);
