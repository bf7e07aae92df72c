/**
 * Directory walks that end (src/walk.ts, used by `sluice analyze` and `sluice report`): two `.`
 * symlink loops and a second link to a subdirectory — every directory entered once (device +
 * inode), one warning, every file read once.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Report } from '../../src/report/model';
import { Walker } from '../../src/walk';
import { runCli } from '../helpers/cli';

const EXAMPLES = path.resolve(__dirname, '../../examples');
let tmp = '';

/** dir/{a.trace.jsonl, loop1 -> ., loop2 -> ., sub/b.trace.jsonl, link -> sub, again.trace.jsonl -> a.trace.jsonl} */
function loopy(dir: string, files: [string, string][]): void {
  fs.mkdirSync(path.join(dir, 'sub'), { recursive: true });
  fs.writeFileSync(path.join(dir, files[0]![0]), files[0]![1]);
  fs.writeFileSync(path.join(dir, 'sub', files[1]![0]), files[1]![1]);
  fs.symlinkSync('.', path.join(dir, 'loop1'));
  fs.symlinkSync('.', path.join(dir, 'loop2'));
  fs.symlinkSync('sub', path.join(dir, 'link'));
  fs.symlinkSync(files[0]![0], path.join(dir, `again-${files[0]![0]}`));
}

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-walk-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const run = runCli;

test('the walk: each directory and file once, loops skipped, one warning', () => {
  const dir = path.join(tmp, 'plain');
  loopy(dir, [
    ['a.txt', 'a'],
    ['b.txt', 'b'],
  ]);
  const w = new Walker();
  expect(w.add(dir)).toBe(2);
  expect(w.files.map((f) => path.relative(dir, f)).sort()).toEqual(['a.txt', 'link/b.txt'].sort());
  expect(w.warning()).toBe(`skipped 3 links to a directory already walked (a symlink loop or a second link), first ${path.join(dir, 'loop1')}`);
  // Named again: nothing new.
  expect(w.add(dir)).toBe(0);
});

test('sluice analyze on a directory with two `.` loops and a second link: each trace analysed once, one warning', async () => {
  const dir = path.join(tmp, 'traces');
  loopy(dir, [
    ['a.trace.jsonl', fs.readFileSync(path.join(EXAMPLES, 'early-call.anthropic.trace.jsonl'), 'utf8')],
    ['b.trace.jsonl', fs.readFileSync(path.join(EXAMPLES, 'early-call.openai-chat.trace.jsonl'), 'utf8')],
  ]);
  // The directory named twice, and its subdirectory named too: still each trace once.
  const r = await run(['analyze', dir, dir, path.join(dir, 'sub'), '--json']);
  expect(r.code).toBe(0);
  const rows = r.out.trim().split('\n').map((l) => JSON.parse(l) as { file: string; format: string });
  expect(rows.map((x) => x.format).sort()).toEqual(['anthropic', 'openai-chat']);
  expect(r.err.trim().split('\n')).toEqual([expect.stringMatching(/^sluice analyze: skipped 3 links to a directory already walked \(a symlink loop or a second link\), first /)]);
}, 20_000);

test('sluice report on the same kind of directory: each log line counted once', async () => {
  const dir = path.join(tmp, 'logs');
  const rec = (i: number): string =>
    JSON.stringify({ level: 'info', msg: 'turn', format: 'openai-chat', upstreamModel: 'm', outcome: 'completed', attempts: 1, calls: [], streamEndMs: 100 + i, violations: 0 });
  loopy(dir, [
    ['a.log', `${rec(1)}\n${rec(2)}\n`],
    ['b.log', `${rec(3)}\n`],
  ]);
  const r = await run(['report', dir, '--json']);
  expect(r.code).toBe(0);
  const rep = JSON.parse(r.out) as Report;
  expect(rep.totals).toMatchObject({ turns: 3, inputs: 2 });
  expect(r.err.trim().split('\n')).toEqual([expect.stringMatching(/^sluice report: skipped 3 links to a directory already walked/)]);
}, 20_000);
