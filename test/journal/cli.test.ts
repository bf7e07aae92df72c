/**
 * `sluice replay --journal FILE --crash-at MS` and `sluice resume FILE` as real processes: the
 * replay dies by SIGKILL at the virtual time, the resume finishes the turn and reports how each
 * call was resumed.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildForChildren, childEnv } from './childBuild';

const TRACE = path.resolve(__dirname, '../../examples/coding-turn.anthropic.trace.jsonl');
let main = '';
beforeAll(() => {
  main = path.join(buildForChildren(), 'src/cli/main.js');
});

const sluice = (...args: string[]) => spawnSync(process.execPath, [main, ...args], { env: childEnv(), encoding: 'utf8' });

interface Report {
  outcome: string;
  calls: Array<{ index: number; resumed?: string; result?: { synthetic?: string } }>;
  invariants: { ok: boolean };
  history: Array<{ role: string }>;
}

describe('sluice replay --journal / --crash-at, sluice resume', () => {
  // The example turn: reads at 1 s and 2 s (3 s each), grep at 3 s (3 s), stream end 5 s, the
  // edit starts at 6 s (0.5 s).
  const cases: Array<[number, string[]]> = [
    [2500, ['rerun', 'rerun']], // two reads started, none resulted; nothing else released yet
    [4500, ['kept', 'rerun', 'rerun', 'rerun']], // the first read resulted; the edit was released, not started
    [6200, ['kept', 'kept', 'kept', 'unknown-outcome']], // the edit started at 6 s and had no result
  ];
  test.each(cases)('crash at %i ms, resume', (crashAt, expected) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-cli-journal-'));
    const file = path.join(dir, 'turn.journal');
    const r = sluice('replay', TRACE, '--journal', file, '--crash-at', String(crashAt));
    expect(r.signal).toBe('SIGKILL');
    expect(fs.existsSync(file)).toBe(true);
    const res = sluice('resume', file, '--json');
    expect(res.stderr).toBe('');
    expect(res.status).toBe(0);
    const rep = JSON.parse(res.stdout) as Report;
    expect(rep.outcome).toBe('done');
    expect(rep.invariants.ok).toBe(true);
    expect(rep.calls.map((c) => c.resumed)).toEqual(expected);
    expect(rep.history.map((m) => m.role)).toEqual(['assistant', 'tool']);
    // A second resume of the committed turn runs nothing and reports every call kept.
    const again = JSON.parse(sluice('resume', file, '--json').stdout) as Report;
    expect(again.calls.every((c) => c.resumed === 'kept')).toBe(true);
  });

  test('usage errors are one line, exit 2; --help for both', () => {
    const a = sluice('replay', TRACE, '--crash-at', '5');
    expect(a.status).toBe(2);
    expect(a.stderr).toMatch(/--crash-at needs --journal FILE/);
    const b = sluice('resume', path.join(os.tmpdir(), 'no-such-journal-file'));
    expect(b.status).toBe(2);
    expect(b.stderr.split('\n')[0]).toMatch(/no such file/);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-cli-journal-'));
    fs.writeFileSync(path.join(dir, 'x'), 'not a journal\n');
    const c = sluice('resume', path.join(dir, 'x'));
    expect(c.status).toBe(1);
    expect(c.stderr).not.toMatch(/\n\s+at /);
    expect(sluice('resume', '--help').stdout).toMatch(/unknown-outcome/);
    expect(sluice('replay', '--help').stdout).toMatch(/--crash-at MS/);
  });
});
