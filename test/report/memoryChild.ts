/**
 * Child of test/report/memory.test.ts: runs `sluice report LOG --json`, writes the JSON to OUT and
 * prints the process's peak resident set size (bytes) on stderr.
 *   node -r ts-node/register/transpile-only test/report/memoryChild.ts LOG OUT
 */
import * as fs from 'node:fs';
import { main } from '../../src/cli/main';

const [log, out] = process.argv.slice(2) as [string, string];
const chunks: string[] = [];
process.stdout.write = ((c: string | Uint8Array) => (chunks.push(String(c)), true)) as typeof process.stdout.write;
main(['report', log, '--json']).then(
  (code) => {
    fs.writeFileSync(out, chunks.join(''));
    process.stderr.write(`${JSON.stringify({ code, maxRss: process.resourceUsage().maxRSS * 1024 })}\n`);
    process.exit(0);
  },
  (e: unknown) => {
    process.stderr.write(`memoryChild: ${e instanceof Error ? e.stack : String(e)}\n`);
    process.exit(1);
  },
);
