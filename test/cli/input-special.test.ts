/**
 * CLI inputs that are not ordinary files (issue 18 item 3), on REAL special files: /dev/zero, a
 * FIFO with no writer, a directory, a sparse 2 GB file (truncate), and a 200,000-deep JSON line.
 * `sluice resume` goes through the same input rules as replay/convert/analyze (src/cli/input.ts):
 * regular files only (else exit 2), the size limit (exit 1), one line on stderr, never a hang, a
 * stack trace or unbounded memory.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { encodeRecord } from '../../src/journal/codec';
import { crc32 } from '../../src/journal/crc32';
import { FileJournalStore } from '../../src/journal/fileStore';
import { buildForChildren, childEnv } from '../journal/childBuild';

let main = '';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-special-'));
beforeAll(() => {
  main = path.join(buildForChildren(), 'src/cli/main.js');
}, 180_000); // one transpile of the tree: slow on a loaded machine
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const sluice = (...args: string[]) => spawnSync(process.execPath, [main, ...args], { env: childEnv(), encoding: 'utf8', timeout: 30_000 });

const fifo = path.join(dir, 'a.fifo');
const sparse = path.join(dir, 'big.journal');
const folder = path.join(dir, 'a-dir');
beforeAll(() => {
  execFileSync('mkfifo', [fifo]);
  fs.mkdirSync(folder);
  execFileSync('truncate', ['-s', '2G', sparse]); // 2 GiB that take no disk
});

describe.each([['resume'], ['replay']])('sluice %s on special files', (cmd) => {
  test.each<[string, () => string, number, RegExp]>([
    ['/dev/zero', () => '/dev/zero', 2, /is a device, expected a regular file/],
    ['a FIFO with no writer', () => fifo, 2, /is a FIFO \(named pipe\), expected a regular file/],
    ['a directory', () => folder, 2, /is a directory/],
    ['a sparse 2 GB file', () => sparse, 1, /over the input limit/],
  ])('%s: the exit code, one line, at once', (_name, file, code, msg) => {
    const t0 = Date.now();
    const r = sluice(cmd, file());
    expect(r.error).toBeUndefined(); // not killed by the timeout: no hang
    expect(r.status).toBe(code);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(msg);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(Date.now() - t0).toBeLessThan(30_000);
  });
});

describe('a 200,000-deep JSON line', () => {
  const deep = '['.repeat(200_000) + ']'.repeat(200_000);

  test('in a journal record (valid CRC): resume refuses it in one line, no stack overflow', () => {
    const jdir = path.join(dir, 'deep');
    fs.mkdirSync(jdir);
    const head = encodeRecord({ n: 0, k: 'turn', v: 1, turn: 'turn.journal', t: 0 });
    const json = Buffer.from(`{"n":1,"k":"released","a":1,"i":0,"t":1,"id":"c","name":"x","input":{"deep":${deep}},"safe":false}`);
    const line = Buffer.concat([Buffer.from(crc32(json).toString(16).padStart(8, '0') + ' '), json, Buffer.from('\n')]);
    fs.writeFileSync(path.join(jdir, 'turn.journal'), Buffer.concat([head, encodeRecord({ n: 1, k: 'attempt', a: 1, t: 0 }), line]));
    const r = sluice('resume', path.join(jdir, 'turn.journal'));
    expect(r.status).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/record 2 nests deeper than 512 levels/);
    // The library says the same (a typed JournalError), for the file store's read.
    return expect(new FileJournalStore(jdir).read('turn.journal')).rejects.toMatchObject({ code: 'corrupt', record: 2 });
  });

  test('in a trace: replay and analyze answer in one piece (V8 parses it iteratively; nothing walks it)', () => {
    const trace = fs.readFileSync(path.resolve(__dirname, '../../examples/coding-turn.anthropic.trace.jsonl'), 'utf8').split('\n').filter(Boolean);
    const l = trace[1]!;
    trace[1] = `${l.slice(0, l.lastIndexOf('}'))},"deep":${deep}}`;
    const file = path.join(dir, 'deep.trace.jsonl');
    fs.writeFileSync(file, trace.join('\n') + '\n');
    for (const cmd of ['replay', 'analyze']) {
      const r = sluice(cmd, file);
      expect(r.error).toBeUndefined();
      expect(r.stderr).not.toMatch(/Maximum call stack|\n\s+at /);
      expect(r.status).toBe(0);
    }
  });
});
