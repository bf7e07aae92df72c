/**
 * Hostile inputs to the CLI (issue 11): usage errors exit 2 with one line, run failures exit 1
 * with one line, never a stack trace (unless --debug), never a hang on a FIFO or /dev/zero, never
 * a whole-file read past the input limit.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readInputText } from '../../src/cli/input';
import { childCli, childEnv } from '../journal/childBuild';
import { runCli } from '../helpers/cli';

const ROOT = path.resolve(__dirname, '..', '..');
const EXAMPLE = path.join(ROOT, 'examples', 'coding-turn.anthropic.trace.jsonl');

const cli = runCli;

/** Exactly one line on stderr, no stack frame. */
function oneLine(err: string): string {
  const lines = err.split('\n').filter((l) => l.length > 0);
  expect(lines).toHaveLength(1);
  expect(err).not.toMatch(/\n\s+at /);
  return lines[0]!;
}

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-hostile-cli-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('unknown formats are usage errors (exit 2, one line)', () => {
  test('--format nope', async () => {
    for (const cmd of ['replay', 'convert', 'analyze']) {
      const extra = cmd === 'convert' ? ['--to', 'anthropic'] : [];
      const r = await cli([cmd, EXAMPLE, '--format', 'nope', ...extra]);
      expect(r.code).toBe(2);
      expect(oneLine(r.err)).toMatch(new RegExp(`^sluice ${cmd}: --format: unknown format "nope" \\(expected one of: anthropic, .*\\) \\(see sluice ${cmd} --help\\)$`));
    }
  });

  test('an unknown format in the trace header', async () => {
    const f = path.join(dir, 'bad-format.trace.jsonl');
    fs.writeFileSync(f, '{"sluice":"trace","format":"smoke-signals"}\n{"t":0,"data":{"x":1}}\n{"t":5,"end":true}\n');
    const r = await cli(['replay', f]);
    expect(r.code).toBe(2);
    expect(oneLine(r.err)).toContain(`${f}: unknown format "smoke-signals"`);
    const conv = await cli(['convert', f, '--to', 'anthropic']);
    expect(conv.code).toBe(2);
    oneLine(conv.err);
  });

  test('an unknown text family', async () => {
    const r = await cli(['replay', EXAMPLE, '--format', 'text:klingon']);
    expect(r.code).toBe(2);
    expect(oneLine(r.err)).toContain('unknown text family "klingon"');
  });
});

describe('input files: regular files only, size-limited', () => {
  test('a directory', async () => {
    const r = await cli(['replay', dir]);
    expect(r.code).toBe(2);
    expect(oneLine(r.err)).toBe(`sluice replay: ${dir} is a directory, expected a regular file (see sluice replay --help)`);
    const t = await cli(['replay', EXAMPLE, '--tools', dir]);
    expect(t.code).toBe(2);
    oneLine(t.err);
  });

  test('/dev/zero is refused at once, memory untouched', async () => {
    const r = await cli(['replay', '/dev/zero']);
    expect(r.code).toBe(2);
    expect(oneLine(r.err)).toContain('/dev/zero is a device, expected a regular file');
  });

  test('a FIFO with no writer does not block', async () => {
    const fifo = path.join(dir, 'pipe.sse');
    const made = spawnSync('mkfifo', [fifo]);
    if (made.status !== 0) return; // no mkfifo on this system: nothing to test
    const t0 = Date.now();
    const r = await cli(['replay', fifo]);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(r.code).toBe(2);
    expect(oneLine(r.err)).toContain('is a FIFO (named pipe), expected a regular file');
  });

  test('a file over SLUICE_MAX_INPUT_BYTES: exit 1, one line', async () => {
    const big = path.join(dir, 'big.trace.jsonl');
    fs.copyFileSync(EXAMPLE, big);
    const size = fs.statSync(big).size;
    const r = await cli(['replay', big], { SLUICE_MAX_INPUT_BYTES: String(size - 1) });
    expect(r.code).toBe(1);
    expect(oneLine(r.err)).toBe(`sluice replay: ${big} is ${size} bytes, over the input limit of ${size - 1} bytes (SLUICE_MAX_INPUT_BYTES)`);
    const ok = await cli(['replay', big], { SLUICE_MAX_INPUT_BYTES: String(size) });
    expect(ok.code).toBe(0);
    const debug = await cli(['replay', big, '--debug'], { SLUICE_MAX_INPUT_BYTES: String(size - 1) });
    expect(debug.code).toBe(1);
    expect(debug.err).toMatch(/^sluice replay: CliError: .* over the input limit .*\n\s+at /); // --debug: the stack trace
    const badEnv = await cli(['replay', big], { SLUICE_MAX_INPUT_BYTES: 'lots' });
    expect(badEnv.code).toBe(1);
    expect(oneLine(badEnv.err)).toMatch(/SLUICE_MAX_INPUT_BYTES must be a number of bytes/);
  });

  test('the read itself stops at the limit (a file whose size is not known up front)', () => {
    // /proc files report size 0 but have contents: the streaming read enforces the limit.
    if (!fs.existsSync('/proc/self/status')) return;
    expect(() => readInputText('/proc/self/status', 16)).toThrow(/grew past the input limit of 16 bytes/);
    expect(readInputText('/proc/self/status', 1 << 20)).toMatch(/^Name:/);
  });

  test('reads UTF-8 split across chunks correctly', () => {
    const f = path.join(dir, 'utf8.txt');
    const text = 'é'.repeat(1024 * 1024 + 1); // 2 MiB + 2 bytes: multi-byte chars cross the 1 MiB chunk edges
    fs.writeFileSync(f, text);
    expect(readInputText(f)).toBe(text);
  });
});

describe('analyze: non-zero on unusable input', () => {
  test('an unusable file: exit 1, reported in its row and on stderr', async () => {
    const bad = path.join(dir, 'junk.jsonl');
    fs.writeFileSync(bad, 'not json at all\n');
    const r = await cli(['analyze', bad]);
    expect(r.code).toBe(1);
    expect(r.out).toContain('cannot analyze');
    expect(oneLine(r.err)).toMatch(/^sluice analyze: .*junk\.jsonl/);
  });

  test('a directory without trace files: exit 1, one line', async () => {
    const empty = fs.mkdtempSync(path.join(dir, 'empty-'));
    fs.writeFileSync(path.join(empty, 'README.md'), '# nothing here');
    const r = await cli(['analyze', empty]);
    expect(r.code).toBe(1);
    expect(oneLine(r.err)).toBe(`sluice analyze: ${empty}: no trace files (.trace.jsonl, .jsonl, .sse, .json, .txt) in this directory`);
  });

  test('a good file still exits 0', async () => {
    const r = await cli(['analyze', EXAMPLE]);
    expect(r.code).toBe(0);
    expect(r.err).toBe('');
  });
});

describe('hostile trace contents', () => {
  test('tool_calls index 1e9 in a recording: replay ends fast with the limit named', async () => {
    const f = path.join(dir, 'huge-index.jsonl');
    const c = (delta: unknown, finish: string | null = null) => JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] });
    fs.writeFileSync(
      f,
      [
        c({ tool_calls: [{ index: 0, id: 'a', type: 'function', function: { name: 'read_file', arguments: '{"path":"a"}' } }] }),
        c({ tool_calls: [{ index: 1_000_000_000, id: 'b', type: 'function', function: { name: 'read_file', arguments: '{}' } }] }),
        c({}, 'tool_calls'),
        '[DONE]',
      ].join('\n') + '\n',
    );
    const t0 = Date.now();
    const r = await cli(['replay', f, '--format', 'openai-chat', '--json']);
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(r.code).toBe(1);
    expect(oneLine(r.err)).toBe('sluice replay: limit maxCallIndex exceeded: call index 1000000000 (max 100000); the turn was ended');
    expect((JSON.parse(r.out) as { outcome: string }).outcome).toBe('failed');
    const conv = await cli(['convert', f, '--format', 'openai-chat', '--to', 'anthropic']);
    expect(conv.code).toBe(1);
    expect(oneLine(conv.err)).toBe('sluice convert: limit maxCallIndex exceeded: call index 1000000000 (max 100000); the turn was ended');
    expect(conv.out).toContain('event: error');
    const a = await cli(['analyze', f, '--format', 'openai-chat', '--json']);
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(a.out).toContain('"outcome":"failed"');
  });
});

describe('a real process: no stack trace without --debug', () => {
  // One spawn of the CLI (plain node on the cached transpile, test/journal/childBuild.ts): the
  // top-level handler and the exit status are real.
  const run = (args: string[]) =>
    spawnSync(process.execPath, [childCli(), ...args], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
      env: childEnv({ SLUICE_DEBUG: '' }),
    });

  test('a directory as the trace: exit 2, one line', () => {
    const r = run(['replay', dir]);
    expect(r.status).toBe(2);
    expect(oneLine(r.stderr)).toContain('is a directory, expected a regular file');
  });
});
