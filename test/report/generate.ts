/**
 * Traffic for the report tests: run one of this folder's generators (day.ts, shadowDay.ts) as a
 * ts-node child writing into `dir`, or write gateway `turn` log records directly (`gatewayTurnRecord`).
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';

export async function runGenerator(script: string, dir: string, what: string): Promise<void> {
  const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', path.join(__dirname, script), dir], {
    cwd: path.resolve(__dirname, '../..'),
    env: { ...process.env, TS_NODE_TRANSPILE_ONLY: '1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
  if (code !== 0) throw new Error(`the ${what} generator failed (${code}): ${err}`);
}

/**
 * One `turn` log record of the gateway (src/gateway/log.ts): a completed, one-attempt Messages turn
 * over an OpenAI chat backend, with `fields` (model, calls, times, arm, …) on top.
 */
export function gatewayTurnRecord(fields: Record<string, unknown>): string {
  return JSON.stringify({
    level: 'info',
    msg: 'turn',
    api: 'messages',
    format: 'openai-chat',
    upstreamFormat: 'openai-chat',
    status: 200,
    outcome: 'completed',
    attempts: 1,
    violations: 0,
    backendEnd: 'finished',
    ...fields,
  });
}
