/**
 * The headline benchmark's smoke run (`--quick`: two fast profiles, five turns, one round) on
 * the real clock: read-only calls start while the stream is still running, edits and the
 * post-stream runs only after it, and the table it prints names every profile. Wall-clock
 * sensitive (SERIAL in jest.config.ts); its bounds are generous.
 */
import { benchHeadline, formatHeadline, formatHeadlineNotes, HEADLINE_TURNS, type HeadlineResult, PROFILES, streamTimeline, turnTokens } from '../../bench/headline';

describe('headline benchmark (quick)', () => {
  let r: HeadlineResult;
  beforeAll(async () => {
    r = await benchHeadline({ quick: true, repo: process.cwd() });
  }, 120_000);

  test('one row per quick profile, five turns each', () => {
    expect(r.rows.map((x) => x.profile)).toEqual(['flash', 'wafer']);
    for (const row of r.rows) expect(row.turns).toBe(5);
    expect(r.turns).toHaveLength(10);
  });

  test('post-stream runs start nothing before the stream ended', () => {
    for (const t of r.turns) {
      for (const run of t.post) for (const c of run.calls) expect(c.startedMs).toBeGreaterThanOrEqual(run.streamMs - 1);
    }
  });

  test('early runs start a read before the stream ends, soon after its completion; edits wait for the end', () => {
    for (const t of r.turns.filter((x) => x.turn === 'read-grep-read' && x.profile === 'flash')) {
      const run = t.early[0]!;
      const first = run.calls[0]!;
      expect(first.name).toBe('read_file');
      // The first read completes ~300 ms before the stream ends at 190 tok/s.
      expect(first.startedMs).toBeLessThan(run.streamMs);
      expect(first.startedMs - first.completeMs).toBeLessThan(100);
      expect(t.dispatchMs.length).toBeGreaterThan(0);
    }
    for (const t of r.turns.filter((x) => x.turn === 'edit')) {
      for (const run of t.early) for (const c of run.calls) expect(c.startedMs).toBeGreaterThanOrEqual(run.streamMs - 1);
    }
  });

  test('the table and notes name every profile and the corpus', () => {
    const table = formatHeadline(r);
    for (const p of PROFILES.filter((x) => x.id === 'flash' || x.id === 'wafer')) expect(table).toContain(p.label);
    expect(formatHeadlineNotes(r)).toMatch(/^Corpus: 5 agent steps/);
  });
});

describe('headline corpus and streams', () => {
  test('tool calls per step: mostly one, at most four, two text-only steps', () => {
    const calls = HEADLINE_TURNS.map((t) => t.segments.filter((s) => 'call' in s).length);
    expect(calls.filter((n) => n === 0)).toHaveLength(2);
    expect(calls.filter((n) => n === 1).length).toBeGreaterThan(HEADLINE_TURNS.length / 2);
    expect(Math.max(...calls)).toBe(4);
  });

  test.each(PROFILES.map((p) => [p.id, p] as const))('%s: the timeline is ordered and as long as its tokens at that speed', (_id, p) => {
    for (const turn of HEADLINE_TURNS) {
      const tl = streamTimeline(turn, p);
      for (let i = 1; i < tl.length; i++) expect(tl[i]!.t).toBeGreaterThanOrEqual(tl[i - 1]!.t);
      const expected = ((turnTokens(turn) + 1) * 1000) / p.tokensPerSec;
      expect(tl[tl.length - 1]!.t).toBeCloseTo(expected, 0);
    }
  });
});
