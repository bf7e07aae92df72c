/**
 * The demo's closing hint names a command that works where the demo ran: in a checkout the built
 * CLI through node (sluice is not on PATH there), `sluice` when that name on PATH is this CLI (a
 * global install), `npx sluice` when the package is installed in a project.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { cliCommand, demoHint } from '../../src/cli/demo';

const ROOT = path.resolve(__dirname, '../..');

describe('the demo hint', () => {
  let tmp: string;
  beforeAll(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-hint-'));
  });
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  /** A package root as an install has it: the CLI, no sources. */
  function installed(name: string): { root: string; main: string } {
    const root = path.join(tmp, name, 'node_modules', 'sluice');
    const main = path.join(root, 'dist/src/cli/main.js');
    fs.mkdirSync(path.dirname(main), { recursive: true });
    fs.writeFileSync(main, '#!/usr/bin/env node\n');
    return { root, main };
  }

  test('in a checkout: node and the built CLI, and that command runs the hinted replay from here', async () => {
    const hint = demoHint(path.join(ROOT, 'examples/workspace'), { PATH: process.env.PATH });
    const cwd = process.cwd();
    expect(cwd).toBe(ROOT); // jest runs from the repository root, as `npm start` does
    const m = /^node (\S+) replay (\S+) --timeline turn\.svg · node \S+ analyze <trace> · node \S+ serve --upstream URL$/.exec(hint);
    expect(m).not.toBeNull();
    expect(m![1]).toBe('dist/src/cli/main.js');
    if (!fs.existsSync(path.join(ROOT, m![1]!))) return; // no build here: the packed-install test runs the installed form
    const { stdout } = await promisify(execFile)(process.execPath, [m![1]!, 'replay', m![2]!, '--json'], { cwd: ROOT });
    expect((JSON.parse(stdout) as { calls: unknown[] }).calls.length).toBeGreaterThan(0);
  });

  test('installed in a project: npx sluice, also while npx itself put node_modules/.bin on PATH', () => {
    const { root, main } = installed('project');
    const bin = path.join(tmp, 'project', 'node_modules', '.bin');
    fs.mkdirSync(bin, { recursive: true });
    fs.symlinkSync(main, path.join(bin, 'sluice'));
    expect(cliCommand(root, { PATH: ['/usr/bin', bin].join(path.delimiter) })).toBe('npx sluice');
    expect(cliCommand(root, {})).toBe('npx sluice');
  });

  test('installed globally (its bin on PATH is this CLI): sluice; another sluice on PATH does not count', () => {
    const { root, main } = installed('global');
    const bin = path.join(tmp, 'global-bin');
    fs.mkdirSync(bin);
    fs.symlinkSync(main, path.join(bin, 'sluice'));
    expect(cliCommand(root, { PATH: ['/nonexistent', bin].join(path.delimiter) })).toBe('sluice');
    const other = installed('other');
    expect(cliCommand(other.root, { PATH: bin })).toBe('npx sluice');
  });
});
