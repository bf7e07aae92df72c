/**
 * `sluice serve` as a process: starts, answers, stops cleanly on SIGTERM; --help covers every flag.
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { ENV, HELP, SPEC } from '../../src/cli/serve';
import { startScriptedUpstream, turnScript } from '../../src/gateway/scripted';
import { describeFixtures, FIXTURES_DIR, listFixtures } from '../helpers/fixtures';
import { childCli, childEnv } from '../journal/childBuild';
import { rawRequest, type ServeProcess, spawnServe } from './helpers';

test('--help explains every flag and its environment variable', () => {
  for (const flag of Object.keys(SPEC)) expect(HELP).toContain(`--${flag}`);
  for (const env of Object.values(ENV)) expect(HELP).toContain(env);
  expect(HELP).toContain('SLUICE_STRICT_STOP_REASON');
});

test('sluice serve starts, proxies a request, and exits 0 on SIGTERM', async () => {
  const up = await startScriptedUpstream({ script: turnScript({ text: ['hi'] }) });
  const child = spawn(process.execPath, [childCli(), 'serve', '--upstream', up.url, '--port', '0', '--log-level', 'warn'], {
    cwd: path.resolve(__dirname, '../..'),
    env: childEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    let err = '';
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listening line; stderr: ${err}`)), 25_000);
      child.stderr.on('data', (c: Buffer) => (err += c.toString()));
      child.stdout.on('data', (c: Buffer) => {
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

/** `sluice serve` quiet, on any free port. */
function serve(args: string[]): Promise<ServeProcess> {
  return spawnServe(['--port', '0', '--log-level', 'warn', ...args]);
}

test('sluice serve --upstream scripted:demo serves the demo turn to a Chat client, no backend needed', async () => {
  const s = await serve(['--upstream', 'scripted:demo']);
  try {
    expect(s.url).toBeDefined();
    expect(s.out).toContain('scripted:demo (openai-chat');
    const res = await rawRequest(s.url!, { path: '/v1/chat/completions', body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'go' }] }) });
    expect(res.status).toBe(200);
    const msg = (res.json as { choices: { message: { tool_calls: { function: { name: string } }[] }; finish_reason: string }[] }).choices[0]!;
    expect(msg.message.tool_calls.map((c) => c.function.name)).toEqual(['read_file', 'read_file', 'read_file', 'grep', 'edit_file']);
    expect(msg.finish_reason).toBe('tool_calls');
  } finally {
    s.child.kill('SIGTERM');
  }
}, 40_000);

test('sluice serve --upstream scripted:<missing file> exits 1 with one line', async () => {
  const s = await serve(['--upstream', 'scripted:/no/such/file.trace.jsonl']);
  expect(s.code).toBe(1);
  expect(s.err.trim().split('\n')).toEqual(['sluice serve: scripted: no such trace file "/no/such/file.trace.jsonl" (or use scripted:demo)']);
}, 40_000);

describeFixtures('sluice serve --upstream scripted:<recorded fixture>', () => {
  test('an Anthropic recording is served with the anthropic upstream format (from the trace), to a Chat client', async () => {
    const rel = listFixtures('anthropic', /text-then-tool_use__haiku/)[0]!;
    const s = await serve(['--upstream', `scripted:${path.join(FIXTURES_DIR, rel)}`]);
    try {
      expect(s.out).toContain('(anthropic, 1 attempt)');
      const res = await rawRequest(s.url!, { path: '/v1/chat/completions', body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'go' }] }) });
      expect(res.status).toBe(200);
      const calls = (res.json as { choices: { message: { tool_calls?: unknown[] } }[] }).choices[0]!.message.tool_calls;
      expect(calls?.length).toBe(1);
    } finally {
      s.child.kill('SIGTERM');
    }
  }, 40_000);
});
