import * as fs from 'node:fs';
import * as path from 'node:path';
import { run } from '../../src/cli/demo';

/** Runs `sluice demo` in-process (scripted model on 127.0.0.1, real tools on a temp copy), captured. */
async function demo(argv: string[]): Promise<{ code: number; out: string }> {
  const chunks: string[] = [];
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((c: string | Uint8Array) => {
    chunks.push(typeof c === 'string' ? c : Buffer.from(c).toString('utf8'));
    return true;
  });
  try {
    const code = await run(argv);
    return { code, out: chunks.join('') };
  } finally {
    spy.mockRestore();
  }
}

interface CallJson {
  index: number;
  name: string;
  kind: string;
  state: string;
  startedMs?: number;
  resultMs?: number;
  completeMs?: number;
  ok?: boolean;
}
interface RunJson {
  streamEndMs: number;
  turnDoneMs: number;
  outcome: string;
  calls: CallJson[];
  invariants: unknown[];
  workspaceEdited: boolean;
}

describe('sluice demo', () => {
  it('runs the turn over HTTP with real tools, streaming then post-stream, and saves time (--json)', async () => {
    const { code, out } = await demo(['--time-scale', '0.3', '--json']);
    expect(code).toBe(0);
    const j = JSON.parse(out) as { savedMs: number; ok: boolean; streaming: RunJson; postStream: RunJson };
    expect(j.ok).toBe(true);
    const s = j.streaming;
    const p = j.postStream;
    expect(s.calls.map((c) => c.name)).toEqual(['read_file', 'read_file', 'read_file', 'grep', 'edit_file']);
    for (const r of [s, p]) {
      expect(r.outcome).toBe('done');
      expect(r.workspaceEdited).toBe(true);
      expect(r.invariants).toEqual([]);
      for (const c of r.calls) {
        expect(c.state).toBe('resulted');
        expect(c.ok).toBe(true);
      }
    }
    // Streaming: the reads and the grep start before the stream ends; the edit only after it.
    for (const c of s.calls.slice(0, 4)) expect(c.startedMs!).toBeLessThan(s.streamEndMs);
    expect(s.calls[4]!.startedMs!).toBeGreaterThanOrEqual(s.streamEndMs);
    // Post-stream: nothing starts before the end of the stream.
    for (const c of p.calls) expect(c.startedMs!).toBeGreaterThanOrEqual(p.streamEndMs);
    expect(j.savedMs).toBeGreaterThan(0);
    expect(j.savedMs).toBeCloseTo(p.turnDoneMs - s.turnDoneMs, 5);
    // No argument or result contents in the output.
    expect(out).not.toContain('strict: true');
    expect(out).not.toContain('parseConfig');
    expect(out).not.toContain('orders-service');
  });

  it('prints plain lines without a TTY and ends with the time saved', async () => {
    const { code, out } = await demo(['--time-scale', '0.2']);
    expect(code).toBe(0);
    expect(out).not.toContain(String.fromCharCode(27)); // no escape codes when stdout is not a terminal
    expect(out).toContain('streaming dispatch');
    expect(out).toContain('post-stream dispatch');
    expect(out).toMatch(/#0 read_file\s+(streaming → )?complete → emittable → released → running/);
    expect(out).toMatch(/#4 edit_file\s+(streaming → )?complete → emittable → released {2}\(arguments \d+ B\)/);
    expect(out).toMatch(/saved\s+-?\d+\.\d\d s/);
    expect(out).not.toContain('strict: true');
    // The closing hint names a trace that exists from here (the package ships it beside the workspace).
    const hinted = /next: (?:node \S+|npx sluice|sluice) replay (\S+)/.exec(out)?.[1];
    expect(hinted).toMatch(/coding-turn\.anthropic\.trace\.jsonl$/);
    expect(fs.existsSync(path.resolve(hinted!))).toBe(true);
  });

  it('rejects unknown options and bad values as usage errors', async () => {
    await expect(demo(['--bogus'])).rejects.toThrow(/unknown option --bogus/);
    await expect(demo(['--time-scale', '0'])).rejects.toThrow(/time-scale/);
    await expect(demo(['--timeline', 'x.png'])).rejects.toThrow(/\.svg or \.html/);
  });
});

describe('demo terminal chart', () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { renderChart, fit } = require('../../src/demo/render') as typeof import('../../src/demo/render');
  const turn = {
    dispatch: 'streaming' as const,
    now: () => 1000,
    textChars: 10,
    streamEndMs: 600,
    finish: 'tool_calls',
    turnDoneMs: 900,
    calls: [
      { index: 0, attempt: 1, name: 'read_file', kind: 'read', phase: 'resulted' as const, phases: [], openMs: 100, completeMs: 200, startedMs: 200, resultMs: 500, argsBytes: 20, ok: true, resultChars: 2048 },
      { index: 1, attempt: 1, name: 'edit_file', kind: 'edit', phase: 'resulted' as const, phases: [], openMs: 300, completeMs: 400, startedMs: 600, resultMs: 900, argsBytes: 40, ok: true, resultChars: 10 },
    ],
  };

  it('draws argument streaming, waiting and running at their times (one column = 100 ms here)', () => {
    const lines = renderChart(turn, { scaleMs: 1000, width: 10, color: false });
    const bar = (l: string) => l.slice(2 + 16, 2 + 16 + 10);
    expect(bar(lines[1]!)).toBe('━━━━━━┊   '); // stream until 600 ms, then its end marker
    expect(bar(lines[2]!)).toBe(' ░███ ┊   '); // read: args 100–200, runs 200–500 (early)
    expect(bar(lines[3]!)).toBe('   ░··███ '); // edit: args 300–400, waits for the stream end, runs 600–900
    expect(lines[2]).toContain('resulted   ok 2.0 KB');
  });

  it('cuts lines to the terminal width without breaking colour codes', () => {
    const esc = String.fromCharCode(27);
    expect(fit(`${esc}[1mhello${esc}[0m world`, 7)).toBe(`${esc}[1mhello${esc}[0m w`);
    expect(fit('abc', 10)).toBe('abc');
  });
});
