/**
 * Throughput guard (SPEC §9): one call with a large argument in ~10-byte deltas. sluice's reader
 * (decoder + JSON.parse + adapter events + concat + one final parse) against the minimal
 * eventsource-parser consumer doing the same job, same UTF-8 byte chunks, medians of interleaved
 * CPU-time runs, in a plain node child process (Jest's module sandbox distorts the timings).
 * The target is ≤ 1.25×; this guard fails only well above it (≥ 1.6×) so a busy CI machine does
 * not flake. For the numbers: `npx ts-node --transpile-only test/wire/perfRun.ts`.
 */
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { anthropicSse, makeArgs, minimalConsumer, sluiceConsumer, toBytes } from './workload';

test('both consumers compute the same result', () => {
  const bytes = toBytes(anthropicSse(makeArgs(5_000)));
  expect(sluiceConsumer('anthropic', bytes)).toEqual(JSON.parse(makeArgs(5_000)));
  expect(minimalConsumer('anthropic', bytes)).toEqual(JSON.parse(makeArgs(5_000)));
});

test('reader throughput stays near the minimal consumer (200 KB argument, bytes)', () => {
  const root = path.resolve(__dirname, '..', '..');
  const out = execFileSync(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', 'test/wire/perfRun.ts', '200000'],
    {
      cwd: root,
      encoding: 'utf8',
      timeout: 120_000,
    },
  );
  const rows = out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { format: string; ratioBytes: number });
  expect(rows.map((r) => r.format)).toEqual(['anthropic', 'openai-chat']);
  for (const r of rows) expect([r.format, r.ratioBytes < 1.6]).toEqual([r.format, true]);
}, 180_000);
