/**
 * Run one of this folder's traffic generators (day.ts, shadowDay.ts) as a ts-node child writing
 * into `dir`; rejects with its stderr when it fails.
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
