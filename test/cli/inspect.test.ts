import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { redact } from '../../src/cli/inspect';
import { childCli, childEnv } from '../journal/childBuild';

const ROOT = path.join(__dirname, '..', '..');
const TRACE = path.join(ROOT, 'examples', 'early-call.anthropic.trace.jsonl');

/**
 * The CLI in a child process: @statelyai/inspect is ESM-only, which Jest's module loader cannot
 * load, while plain Node (≥ 20.19, require(esm)) can.
 */
function sluice(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [childCli(), ...args], {
    cwd: ROOT,
    env: childEnv(),
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

interface Logged {
  type: string;
  name?: string;
  definition?: string;
  event?: { type: string; phase?: string };
}

describe('inspection redaction', () => {
  it('replaces contents by their size, actor refs by their id, drops functions and cuts cycles', () => {
    const ref = { id: 'a1-c0', send: () => undefined, getSnapshot: () => ({}) };
    const cyc: Record<string, unknown> = { n: 1 };
    cyc.self = cyc;
    const v = redact({
      type: 'call.status',
      input: { path: '/etc/secret' },
      result: { ok: true, content: 'file body' },
      text: 'hello',
      ref,
      fn: () => 1,
      cyc,
      keep: [1, 'two', null],
    }) as Record<string, unknown>;
    expect(v.input).toBe('[redacted]');
    expect(v.result).toEqual({ ok: true, content: '[redacted: 9 chars]' });
    expect(v.text).toBe('[redacted: 5 chars]');
    expect(v.ref).toEqual({ actor: 'a1-c0' });
    expect('fn' in v).toBe(false);
    expect(v.cyc).toEqual({ n: 1, self: '[cycle]' });
    expect(v.keep).toEqual([1, 'two', null]);
    expect(JSON.stringify(v)).not.toContain('secret');
  });

  it('keeps contents when asked', () => {
    expect(redact({ input: { path: 'a' } }, true)).toEqual({ input: { path: 'a' } });
  });
});

describe('--inspect-log', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-inspect-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('records the actors, events and snapshots of a replay as JSONL, argument contents redacted', () => {
    const log = path.join(dir, 'replay.jsonl');
    const r = sluice(['replay', TRACE, '--inspect-log', log]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('saved'); // the report is unchanged
    const text = fs.readFileSync(log, 'utf8');
    const events = text.trim().split('\n').map((l) => JSON.parse(l) as Logged);
    const actors = events.filter((e) => e.type === '@xstate.actor');
    // The turn actor and the call actor (named by its spawn id), each with its machine definition.
    expect(actors.map((a) => a.name)).toEqual(expect.arrayContaining(['turn', 'a1-c0']));
    expect(actors.find((a) => a.name === 'turn')!.definition).toContain('"draining"');
    expect(actors.find((a) => a.name === 'a1-c0')!.definition).toContain('"id":"toolCall"');
    const phases = events.filter((e) => e.type === '@xstate.event' && e.event?.type === 'call.status').map((e) => e.event!.phase);
    expect(phases).toEqual(expect.arrayContaining(['streaming', 'complete', 'emittable', 'released', 'running', 'resulted']));
    expect(events.some((e) => e.type === '@xstate.snapshot')).toBe(true);
    expect(text).toContain('[redacted');
    expect(text).not.toContain('config/settings.json'); // the call's argument
  });

  it('keeps contents with --inspect-contents', () => {
    const log = path.join(dir, 'contents.jsonl');
    const r = sluice(['replay', TRACE, '--inspect-log', log, '--inspect-contents', '--json']);
    expect(r.status).toBe(0);
    expect(fs.readFileSync(log, 'utf8')).toContain('config/settings.json');
  });
});
