/**
 * The execution scenario matrix (issue 3): policy × abort point × retry point × tool outcome,
 * each replayed on the virtual clock through the real turn actor, with SPEC §7 I1–I6 checked on
 * the resulting history and lifecycle trace. The scenario count is printed.
 */
import type { CallResult } from '../../machines/toolCall.machine';
import { replayTrace } from '../../src/trace/replay';
import { synthesizeTrace, type TurnScript } from '../../src/trace/synth';
import type { Trace, TraceLine } from '../../src/trace/trace';

const TOOLS = [
  { name: 'read_file', kind: 'read', durationMs: 1500 },
  { name: 'grep', kind: 'search', durationMs: 1000 },
  { name: 'edit_file', kind: 'edit', durationMs: 500 },
];

function script(tag: string): TurnScript {
  return {
    text: 'Checking.',
    calls: [
      { name: 'read_file', args: { path: 'a.ts' }, openMs: 500, completeMs: 1000, id: `toolu_${tag}_0` },
      { name: 'edit_file', args: { path: 'a.ts', text: 'x' }, openMs: 1500, completeMs: 2000, id: `toolu_${tag}_1` },
      { name: 'grep', args: { pattern: 'x' }, openMs: 2500, completeMs: 3000, id: `toolu_${tag}_2` },
    ],
    endMs: 4000,
    tools: TOOLS,
  };
}

/** Attempt 1 fails with a retryable error at `retryAt`; attempt 2 replays the turn from there. */
function traceWithRetry(retryAt: number | undefined): Trace {
  const first = synthesizeTrace('anthropic', script('a1'));
  if (retryAt === undefined) return first;
  const second = synthesizeTrace('anthropic', script('a2'));
  const a1: TraceLine[] = first.attempts[0]!.lines.filter((l) => l.t < retryAt);
  a1.push({ t: retryAt, kind: 'error', error: { type: 'overloaded_error', message: 'Overloaded' }, retryable: true });
  const a2 = second.attempts[0]!.lines.map((l) => ({ ...l, t: l.t + retryAt }));
  return { ...first, attempts: [{ startMs: 0, lines: a1 }, { startMs: retryAt, lines: a2 }] };
}

type Outcome = 'ok' | 'error' | 'throws' | 'hangs';

function toolBehaviour(outcome: Outcome) {
  return (call: { name: string }, signal: AbortSignal, clock: { setTimeout(fn: () => void, ms: number): unknown; clearTimeout(h: unknown): void }) =>
    new Promise<CallResult>((resolve, reject) => {
      if (outcome === 'hangs') return; // never settles; only an abort or discard ends it
      const ms = TOOLS.find((t) => t.name === call.name)?.durationMs ?? 0;
      const h = clock.setTimeout(() => {
        if (outcome === 'ok') resolve({ ok: true, content: `${call.name} done` });
        else if (outcome === 'error') resolve({ ok: false, content: `${call.name} failed` });
        else reject(new Error(`${call.name} threw`));
      }, ms);
      signal.addEventListener('abort', () => clock.clearTimeout(h), { once: true });
    });
}

const POLICIES = ['streaming', 'post-stream'] as const;
const ABORTS: Array<[string, number | undefined, 'commit' | 'drop']> = [
  ['no abort', undefined, 'commit'],
  ['abort mid-stream, commit', 1800, 'commit'],
  ['abort mid-stream, drop', 1800, 'drop'],
  ['abort after stream end, commit', 4600, 'commit'],
];
const RETRIES: Array<[string, number | undefined]> = [
  ['no retry', undefined],
  ['retry before any call', 300],
  ['retry after an early start', 1200],
];
const OUTCOMES: Outcome[] = ['ok', 'error', 'throws', 'hangs'];

const scenarios = POLICIES.flatMap((p) =>
  ABORTS.flatMap(([al, at, mode]) => RETRIES.flatMap(([rl, rt]) => OUTCOMES.map((o) => ({ p, al, at, mode, rl, rt, o })))),
);

let checked = 0;
afterAll(() => {
  process.stdout.write(`execution matrix: ${scenarios.length} scenarios, ${checked} passed every invariant check (I1–I6)\n`);
});

test.each(scenarios)('$p · $al · $rl · tools $o', async ({ p, at, mode, rt, o }) => {
  const report = await replayTrace(traceWithRetry(rt), {
    dispatch: p,
    abortAtMs: at,
    onAbort: mode,
    tools: TOOLS,
    runTool: toolBehaviour(o),
    horizonMs: 60_000,
  });
  expect(report.invariants.violations).toEqual([]);
  const assistant = report.history[0];
  const ids = assistant && assistant.role === 'assistant' ? assistant.calls.map((c) => c.id) : [];
  if (rt !== undefined) {
    // Nothing of the discarded attempt reaches history.
    expect(ids.every((id) => !id.includes('_a1_'))).toBe(true);
  }
  if (at !== undefined && mode === 'drop' && report.outcome === 'dropped') expect(report.history).toEqual([]);
  if (at === undefined && o !== 'hangs') {
    expect(report.outcome).toBe('done');
    expect(ids).toHaveLength(3);
    const tool = report.history[1];
    const results = tool && tool.role === 'tool' ? tool.results : [];
    expect(results.map((r) => r.ok)).toEqual([o === 'ok', o === 'ok', o === 'ok']);
  }
  checked++;
});
