/**
 * `sluice report` reads its inputs line by line in bounded memory: the peak RSS of a report over
 * a generated gateway log grows by less than the log's size (holding a log whole, as the
 * reader once did, cost ~3× its size: +167 MB for 50 MB). 30 MB by default; ~50 MB with SLUICE_HEAVY=1 (npm run test:heavy:report).
 * Each run is its own process (test/report/memoryChild.ts), which prints its peak RSS.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Report } from '../../src/report/model';
import { gatewayTurnRecord } from './generate';

const MB = 1024 * 1024;
const heavy = process.env.SLUICE_HEAVY === '1';
if (!heavy) process.stderr.write('\n[sluice tests] report memory: the ~50 MB log is SKIPPED (SLUICE_HEAVY=1 runs it).\n');
let tmp = '';

/** A gateway log of at least `bytes`: turn records with two calls each and the A/B fields, four models. */
function generate(file: string, bytes: number): number {
  const fd = fs.openSync(file, 'w');
  let written = 0;
  let i = 0;
  try {
    while (written < bytes) {
      const lines: string[] = [];
      for (let k = 0; k < 1000; k++, i++) {
        const model = `m${i % 4}`;
        lines.push(
          gatewayTurnRecord({
            reqId: `req_${i.toString(36)}`,
            model,
            upstreamModel: model,
            durationMs: 1200,
            calls: [
              { i: 0, id: `call_a${i}`, name: 'read_file', completeMs: 300, releasedMs: 301 },
              { i: 1, id: `call_b${i}`, name: 'grep', completeMs: 900, releasedMs: 901 },
            ],
            streamEndMs: 1000,
            arm: i % 2 ? 'early' : 'holdout',
            // The earlier response's arm alternates per model: holdout clients come back 400 ms later.
            continues: { requestId: `req_${(i - 4).toString(36)}`, arm: (i >> 2) % 2 ? 'holdout' : 'early', format: 'openai-chat', model, turnMs: 1000, gapMs: 300 + ((i >> 2) % 2) * 400 + (i % 50), calls: 2 },
          }),
        );
      }
      const s = lines.join('\n') + '\n';
      fs.writeSync(fd, s);
      written += Buffer.byteLength(s);
    }
  } finally {
    fs.closeSync(fd);
  }
  return i;
}

function peakRss(file: string): { maxRss: number; report: Report } {
  const out = path.join(tmp, 'out.json');
  const r = spawnSync(process.execPath, ['-r', 'ts-node/register/transpile-only', path.join(__dirname, 'memoryChild.ts'), file, out], {
    cwd: path.resolve(__dirname, '../..'),
    env: { ...process.env, TS_NODE_TRANSPILE_ONLY: '1' },
    encoding: 'utf8',
    timeout: 300_000,
  });
  if (r.status !== 0) throw new Error(`memoryChild failed (${r.status}): ${r.stderr}`);
  const line = JSON.parse(r.stderr.trim().split('\n').at(-1)!) as { code: number; maxRss: number };
  expect(line.code).toBe(0);
  return { maxRss: line.maxRss, report: JSON.parse(fs.readFileSync(out, 'utf8')) as Report };
}

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-report-mem-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const cases: [string, number][] = [['30 MB', 30 * MB], ...(heavy ? ([['50 MB', 50 * MB]] as [string, number][]) : [])];

test.each(cases)('a %s log: peak RSS grows by less than the log size over a tiny log', (_name, bytes) => {
  const tiny = path.join(tmp, 'tiny.log');
  generate(tiny, 1);
  const big = path.join(tmp, 'big.log');
  const turns = generate(big, bytes);
  const base = peakRss(tiny);
  const run = peakRss(big);
  const growth = run.maxRss - base.maxRss;
  process.stderr.write(`[report memory] ${(fs.statSync(big).size / MB).toFixed(1)} MB log, ${turns} turns: peak RSS ${(run.maxRss / MB).toFixed(0)} MB (tiny log ${(base.maxRss / MB).toFixed(0)} MB, growth ${(growth / MB).toFixed(0)} MB)\n`);
  expect(run.report.totals.turns).toBe(turns);
  expect(run.report.rows.map((r) => r.decision)).toEqual(['enable', 'enable', 'enable', 'enable']);
  expect(growth).toBeLessThan(Math.min(bytes, 40 * MB)); // measured: +19 MB (30 MB log), +21 MB (50 MB)
}, 600_000);
