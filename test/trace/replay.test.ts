/**
 * `sluice replay` on the example traces (SPEC §8 report): early release is real in every wire
 * format, and the coding turn finishes at the ideal time (issue 2 and 3 "must show" numbers).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCli } from '../helpers/cli';
import { exampleFiles } from '../../scripts/make-examples';
import type { ReplayReport } from '../../src/trace/replay';

const EXAMPLES = path.resolve(__dirname, '..', '..', 'examples');

const cli = (args: string[]) => runCli(args);

async function replayJson(file: string, ...flags: string[]): Promise<ReplayReport> {
  const r = await cli(['replay', path.join(EXAMPLES, file), '--json', ...flags]);
  expect(r.code).toBe(0);
  return JSON.parse(r.out) as ReplayReport;
}

test('the example traces are what scripts/make-examples.ts generates', () => {
  for (const [name, text] of exampleFiles()) {
    expect(fs.readFileSync(path.join(EXAMPLES, name), 'utf8')).toBe(text);
  }
});

test.each(['anthropic', 'openai-responses', 'gemini', 'openai-chat'])(
  'early release: a call complete at 2,700 ms of a 5,800 ms stream is released by 2,701 ms (%s)',
  async (format) => {
    const r = await replayJson(`early-call.${format}.trace.jsonl`);
    expect(r.streamEndMs).toBe(5800);
    expect(r.calls[0]!.completeMs).toBe(2700);
    expect(r.calls[0]!.releasedMs).toBeLessThanOrEqual(2701);
    expect(r.calls[0]!.startedMs).toBeLessThanOrEqual(2701);
  },
);

test('raw open-model text (--format text:hermes): released at the closing marker, not at the end', async () => {
  const r = await replayJson('early-call.text-hermes.trace.jsonl');
  expect(r.format).toBe('text:hermes');
  expect(r.calls[0]!.releasedMs).toBe(2700); // the </tool_call> chunk, not 2,000 (the arguments close) or 5,800
  expect(r.calls[0]!.input).toEqual({ path: 'config/settings.json' });
  expect(r.history[0]).toMatchObject({ role: 'assistant', thinking: 'Need the config.' });
});

test('--completion evidence-only: the OpenAI-chat call is released at the finish chunk', async () => {
  const r = await replayJson('early-call.openai-chat.trace.jsonl', '--completion', 'evidence-only');
  expect(r.calls[0]!.releasedMs).toBe(5800);
});

test.each(['anthropic', 'openai-chat', 'openai-responses', 'gemini'])('coding turn (%s): 6,500 / 8,500 / 6,500 ms', async (format) => {
  const r = await replayJson(`coding-turn.${format}.trace.jsonl`);
  expect(r.turnDoneMs).toBe(6500);
  expect(r.postStreamMs).toBe(8500);
  expect(r.idealMs).toBe(6500);
  expect(r.invariants).toEqual({ ok: true, violations: [] });
  expect(r.calls.map((c) => c.startedMs)).toEqual([1000, 2000, 3000, 6000]);
  expect(r.calls.every((c) => c.state === 'resulted' && c.attempt === 1)).toBe(true);
  expect(r.history.map((m) => m.role)).toEqual(['assistant', 'tool']);
});

test('--dispatch post-stream and SLUICE_STREAMING_DISPATCH=0 run the classic scheduler', async () => {
  const r = await replayJson('coding-turn.anthropic.trace.jsonl', '--dispatch', 'post-stream');
  expect(r.turnDoneMs).toBe(8500);
  process.env.SLUICE_STREAMING_DISPATCH = '0';
  try {
    const e = await replayJson('coding-turn.anthropic.trace.jsonl');
    expect(e.dispatch).toBe('post-stream');
    expect(e.turnDoneMs).toBe(8500);
  } finally {
    delete process.env.SLUICE_STREAMING_DISPATCH;
  }
});

test('--abort-at: released calls keep their place with real or interrupted results', async () => {
  const r = await replayJson('coding-turn.anthropic.trace.jsonl', '--abort-at', '2500');
  expect(r.outcome).toBe('aborted');
  const tool = r.history[1];
  expect(tool?.role).toBe('tool');
  if (tool?.role === 'tool') expect(tool.results.map((x) => x.synthetic)).toEqual(['interrupted', 'interrupted']);
  expect(r.invariants.ok).toBe(true);
});

test('bad input gives a clear message and exit code 2, never a stack trace', async () => {
  const missing = await cli(['replay', 'does-not-exist.jsonl']);
  expect(missing.code).toBe(2);
  expect(missing.err).toContain('no such file');
  const tmp = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-')), 'bad.jsonl');
  fs.writeFileSync(tmp, '{"t":5,"data":{}}\n{"t":1,"data":{}}\n');
  const bad = await cli(['replay', tmp, '--format', 'anthropic']);
  expect(bad.code).toBe(2);
  expect(bad.err).toMatch(/"t" decreases/);
  expect(bad.err).not.toMatch(/\n\s+at /);
  const flag = await cli(['replay', tmp, '--dispatch', 'sometimes']);
  expect(flag.code).toBe(2);
  expect(flag.err).toContain('--dispatch must be one of');
});
