/**
 * `sluice report` on a recorded "day" of mixed gateway traffic (test/report/day.ts, generated
 * once for this file in its own process): four upstream APIs, two models each, retries after a
 * backend reset, client aborts; read back from the gateway's JSON log and from the OTLP/HTTP JSON
 * a real receiver got. The table's numbers are checked against the script the day was played from.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runGenerator } from './generate';
import { main } from '../../src/cli/main';
import type { Report, ReportRow } from '../../src/report/model';

/** The day's upstream APIs (test/report/day.ts; not imported: the gateway's sources load only in the generator). */
const FORMATS = ['openai-chat', 'openai-responses', 'anthropic', 'gemini'] as const;

let tmp = '';
const LOG = (): string => path.join(tmp, 'logs', 'gateway.log');
const OTLP = (): string => path.join(tmp, 'otlp', 'traces.jsonl');

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-report-'));
  await runGenerator('day.ts', tmp, 'day');
}, 120_000);

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

async function report(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const o = jest.spyOn(process.stdout, 'write').mockImplementation((c: string | Uint8Array) => ((out += String(c)), true));
  const e = jest.spyOn(process.stderr, 'write').mockImplementation((c: string | Uint8Array) => ((err += String(c)), true));
  try {
    const code = await main(['report', ...args]);
    return { code, out, err };
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
}

async function jsonReport(args: string[]): Promise<Report> {
  const r = await report([...args, '--json']);
  if (r.code !== 0) throw new Error(r.err);
  return JSON.parse(r.out) as Report;
}

const counts = (r: ReportRow): unknown => ({
  format: r.format,
  model: r.model,
  turns: r.turns,
  aborted: r.aborted,
  failed: r.failed,
  calls: r.calls,
  timedCalls: r.timedCalls,
  earlyCalls: r.earlyCalls,
  violations: r.violations,
  synthetic: r.synthetic,
  savedKind: r.savedKind,
});

interface TurnRecord {
  msg: string;
  upstreamModel: string;
  streamEndMs?: number;
  calls: { releasedMs: number }[];
}

test('the gateway log: per format and model, the numbers the day was scripted with', async () => {
  const rep = await jsonReport([LOG()]);
  const records = fs
    .readFileSync(LOG(), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as TurnRecord)
    .filter((r) => r.msg === 'turn');
  expect(records).toHaveLength(32);
  expect(rep.rows.map((r) => `${r.format} ${r.model}`)).toEqual(FORMATS.flatMap((f) => [`${f} ${f}-large`, `${f} ${f}-small`]).sort());
  for (const row of rep.rows) {
    const small = row.model.endsWith('-small');
    // small: 3 good + 1 reset + 1 aborted turn; each released the first call, good ones both.
    expect(counts(row)).toEqual({
      format: row.format,
      model: row.model,
      turns: small ? 5 : 3,
      aborted: small ? 1 : 0,
      failed: small ? 2 : 0,
      calls: small ? 8 : 6,
      timedCalls: 6,
      earlyCalls: small ? 6 : 3,
      violations: 0,
      synthetic: {},
      savedKind: 'n/a',
    });
    // The head start percentiles are exactly those of the recorded calls (stream end − release) …
    const heads = records.filter((t) => t.upstreamModel === row.model && t.streamEndMs !== undefined).flatMap((t) => t.calls.map((c) => t.streamEndMs! - c.releasedMs));
    heads.sort((a, b) => a - b);
    const rank = (p: number): number => Math.round(heads[Math.ceil((p / 100) * heads.length) - 1]! * 10) / 10;
    expect(heads).toHaveLength(6);
    expect(row.headStartP50Ms).toBe(rank(50));
    expect(row.headStartP90Ms).toBe(rank(90));
    // … and what the script says, give or take a busy machine: small ≈ 280 / 400 ms, large ≈ 0 / 400 ms.
    if (small) expect(row.headStartP50Ms!).toBeGreaterThan(150);
    else expect(row.headStartP50Ms!).toBeLessThan(50);
    expect(row.headStartP90Ms!).toBeGreaterThan(250);
  }
  expect(rep.totals).toEqual({ turns: 32, calls: 56, violations: 0, inputs: 1 });
  expect(rep.go).toBe(true);
});

test('the OTLP JSON the receiver got gives the same table; logs and spans of one request count once', async () => {
  const fromLog = await jsonReport([LOG()]);
  const gatewayRows = (rep: Report): unknown[] => rep.rows.filter((r) => !r.model.startsWith('lib-')).map(counts);
  const fromOtlp = await jsonReport([OTLP()]);
  expect(gatewayRows(fromOtlp)).toEqual(fromLog.rows.map(counts));
  expect(fromOtlp.rows.filter((r) => !r.model.startsWith('lib-')).every((r) => r.sources.join() === 'otlp-gateway')).toBe(true);
  const both = await jsonReport([path.join(tmp, 'logs'), path.join(tmp, 'otlp')]);
  expect(gatewayRows(both)).toEqual(fromLog.rows.map(counts));
  expect(both.totals.inputs).toBe(2);
  // The same process exported its metrics as http/protobuf: they arrived, flushed at shutdown.
  const metricPosts = JSON.parse(fs.readFileSync(path.join(tmp, 'metrics-posts.json'), 'utf8')) as { contentType: string; bytes: number }[];
  expect(metricPosts.length).toBeGreaterThan(0);
  expect(metricPosts.every((p) => p.contentType === 'application/x-protobuf' && p.bytes > 100)).toBe(true);
  // Never contents.
  expect(fs.readFileSync(OTLP(), 'utf8')).not.toContain('SECRET_PATH');
  expect(fs.readFileSync(LOG(), 'utf8')).not.toContain('SECRET_PATH');
});

test('library turns: the same numbers from their OTLP sluice.turn spans and from their journals; real and shadow time saved', async () => {
  const fromOtlp = (await jsonReport([OTLP()])).rows.filter((r) => r.model.startsWith('lib-'));
  const fromJournals = (await jsonReport([path.join(tmp, 'journals')])).rows;
  for (const [rows, source] of [
    [fromOtlp, 'otlp-turn'],
    [fromJournals, 'journal'],
  ] as const) {
    expect(rows.map((r) => `${r.format} ${r.model}`)).toEqual(['anthropic lib-safe', 'anthropic lib-shadow', 'openai-chat lib-safe', 'openai-chat lib-shadow']);
    for (const r of rows) {
      // 2 turns × (read_file complete at 100 ms, edit_file at 220 ms; the stream ends at 500 ms).
      expect({ turns: r.turns, calls: r.calls, early: r.earlyCalls, timed: r.timedCalls, violations: r.violations, sources: r.sources }).toEqual({
        turns: 2,
        calls: 4,
        early: 4,
        timed: 4,
        violations: 0,
        sources: [source],
      });
      const shadow = r.model === 'lib-shadow';
      if (shadow && source === 'journal') {
        expect(r.savedKind).toBe('n/a'); // journals do not record the shadow projection
        continue;
      }
      // read_file (200 ms) runs inside the stream instead of after it: about 200 ms per turn.
      expect(r.savedKind).toBe(shadow ? 'shadow' : 'real');
      expect(r.savedPerTurnMs!).toBeGreaterThan(100);
      expect(r.savedPerTurnMs!).toBeLessThan(300);
    }
    // Head start: read_file's result (≈ 300 ms) before the end (≈ 500 ms); edit_file none.
    for (const r of rows.filter((x) => source === 'otlp-turn' || x.model === 'lib-safe')) {
      expect(r.headStartP50Ms!).toBeLessThan(50);
      expect(r.headStartP90Ms!).toBeGreaterThan(100);
    }
  }
  expect(fs.readFileSync(OTLP(), 'utf8')).not.toContain('SECRET_RESULT');
});

test('the Markdown table, the GO line and the chart', async () => {
  const chart = path.join(tmp, 'chart.svg');
  const r = await report([LOG(), '--chart', chart]);
  expect(r.code).toBe(0);
  const rows = r.out.split('\n').filter((l) => l.startsWith('| '));
  expect(rows[0]).toBe(
    '| kind | format | model | turns | retried | aborted | failed | truncated | calls | early | head start p50 | p90 | saved/turn | share | 95% interval | synthetic | violations | decision | reason |',
  );
  const chat = rows.find((l) => l.startsWith('| gateway | openai-chat | openai-chat-small |'))!;
  // Without the A/B fields of --release-holdout the gateway's saving is not measured: more-data.
  expect(chat).toMatch(
    /^\| gateway \| openai-chat \| openai-chat-small \| 5 \| 0 \| 1 \| 2 \| 0 \| 8 \| 100% \| \d+ ms \| \d+ ms \| n\/a \| — \| — \| 0 \| 0 \| more-data \| no A\/B data: run sluice serve --release-holdout to measure the gateway saving \|$/,
  );
  expect(rows.find((l) => l.startsWith('| gateway | gemini | gemini-large |'))).toMatch(/\| 3 \| 0 \| 0 \| 0 \| 0 \| 6 \| 50% \|/);
  expect(r.out.trim().split('\n').at(-1)).toBe('GO: 0 invariant violations in 32 turns, 56 calls (1 input file).');
  const svg = fs.readFileSync(chart, 'utf8');
  expect(svg.startsWith('<svg')).toBe(true);
  for (const f of FORMATS) expect(svg).toContain(`gateway · ${f} · ${f}-small`);
  const html = path.join(tmp, 'chart.html');
  expect((await report([OTLP(), '--chart', html])).code).toBe(0);
  expect(fs.readFileSync(html, 'utf8')).toContain('<table>');
});

test('one ExportTraceServiceRequest per file (pretty-printed, as a receiver stores a request body) reads like one per line', async () => {
  const dir = path.join(tmp, 'per-file');
  fs.mkdirSync(dir);
  fs.readFileSync(OTLP(), 'utf8')
    .trim()
    .split('\n')
    .forEach((line, i) => fs.writeFileSync(path.join(dir, `export-${i}.json`), JSON.stringify(JSON.parse(line), null, 2)));
  const perFile = await jsonReport([dir]);
  const perLine = await jsonReport([OTLP()]);
  expect(perFile.rows.map(counts)).toEqual(perLine.rows.map(counts));
});

test('bad input: one line, exit 2, no stack trace', async () => {
  const junk = path.join(tmp, 'junk.txt');
  fs.writeFileSync(junk, 'hello\n');
  // A journal whose second record was damaged (a flipped byte), with more records after it.
  const journal = fs.readdirSync(path.join(tmp, 'journals'))[0]!;
  const lines = fs.readFileSync(path.join(tmp, 'journals', journal), 'utf8').split('\n');
  const corruptAt = Buffer.byteLength(lines[0]! + '\n');
  lines[1] = lines[1]!.replace('"k"', '"K"');
  const corrupt = path.join(tmp, 'corrupt-journal');
  fs.writeFileSync(corrupt, lines.join('\n'));
  for (const [args, line] of [
    [[junk], `sluice report: ${junk}: not an OTLP JSON file, a sluice gateway log or a journal (see sluice report --help)`],
    [[path.join(tmp, 'nope')], `sluice report: ${path.join(tmp, 'nope')}: no such file or directory (see sluice report --help)`],
    [[], 'sluice report: give at least one file or directory to read (see sluice report --help)'],
    [[LOG(), '--chart', 'x.png'], 'sluice report: --chart must name an .svg or .html file (see sluice report --help)'],
    [[corrupt], `sluice report: ${corrupt}: record 1 (byte ${corruptAt}) is corrupt and is not the last one (see sluice report --help)`],
  ] as const) {
    const r = await report([...args]);
    expect(r.code).toBe(2);
    expect(r.err.trim().split('\n')).toEqual([line]);
  }
  const help = await report(['--help']);
  expect(help.code).toBe(0);
  expect(help.out).toContain('Usage: sluice report');
});
