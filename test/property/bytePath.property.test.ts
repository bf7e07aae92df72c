import fc from 'fast-check';
import type { StreamEvent } from '../../src/wire/events';
import {
  chatCheck,
  chatEvents,
  type ChatScenario,
  chatScenario,
  concat,
  frac,
  type GenCall,
  genCalls,
  interleave,
  newEngine,
  oracle,
  pieces,
  type Received,
  runChatBytes,
  structuralProblems,
  unfinishedRule,
} from './bytePath';

/**
 * Property-based tests of the byte path: bytes → SSE decoder → OpenAI-chat adapter → argument
 * buffers → release (TurnController, gateway mode), and canonical events with completion evidence.
 * The released calls must equal the oracle (parse at the end), never be released twice, and come
 * out in model order — under random fragmentation (any byte split, multi-byte UTF-8, surrogate
 * pairs), interleaved indices, pings, duplicated and reordered evidence, and stream cuts.
 *
 * Seeds are printed by fast-check on failure; rerun one with `FC_SEED=<seed> npx jest test/property`.
 */

const SEED = process.env.FC_SEED ? Number(process.env.FC_SEED) : undefined;
const runs = (n: number) => ({ numRuns: n, ...(SEED !== undefined ? { seed: SEED } : {}) });
const counts: Record<string, number> = {};
const count = (k: string) => (counts[k] = (counts[k] ?? 0) + 1);

// ---------------------------------------------------------------- OpenAI chat bytes

describe('OpenAI-chat bytes → release', () => {
  const check = (s: ChatScenario, cut?: number) => {
    const r = chatCheck(s, cut);
    expect(r.problems).toEqual([]);
    expect(r.released).toEqual(r.expected);
    count(`chat${cut === undefined ? '' : ' (cut)'}: ${r.expected.length} released`);
  };

  test('random fragmentation, interleaved indices, pings, multi-byte UTF-8: released = oracle, once, in order', () => {
    fc.assert(fc.property(chatScenario, (s) => check(s)), runs(250));
  });

  test('random stream cuts: released = oracle of what was received, and the message still ends', () => {
    fc.assert(fc.property(chatScenario, frac, (s, cut) => check(s, cut)), runs(250));
  });

  test('any interleaving, also a higher index appearing first: released = oracle, once, in order', () => {
    fc.assert(
      fc.property(chatScenario, fc.option(frac, { nil: undefined, freq: 3 }), (s, cut) => {
        const r = chatCheck(s, cut, false);
        expect(r.problems).toEqual([]);
        expect(r.released).toEqual(r.expected);
        count(`chat (any order${cut === undefined ? '' : ', cut'}): ${r.expected.length} released`);
      }),
      runs(200),
    );
  });

  describe('every split of one realistic stream', () => {
    const calls: GenCall[] = [
      { id: 'call_0', name: 'read_file', args: JSON.stringify({ path: 'src/é/中文.ts', note: '😀 ok' }), cuts: [5, 17, 23], lateName: false },
      { id: 'call_1', name: 'grep', args: JSON.stringify({ q: '𝄞 and ß', n: [1, 2, { x: '👩‍👩‍👧' }] }), cuts: [3, 9, 10, 21], lateName: true },
      { id: 'call_2', name: 'web_fetch', args: '', cuts: [], lateName: false },
    ];
    const s: ChatScenario = { calls, picks: [0, 1, 0, 1, 1, 0, 2, 1, 0, 1], pings: [2, 5], crlf: true, finish: true, done: true, splits: [] };
    const bytes = concat(chatEvents(s).map((e) => e.bytes));
    const expected = oracle(calls.map((c, index) => ({ index, id: c.id, name: c.name, args: c.args })));

    test('the stream is what it claims (3 calls, multi-byte, surrogate pairs)', () => {
      expect(expected.map((r) => r.index)).toEqual([0, 1, 2]);
      const decoded = new TextDecoder().decode(bytes);
      expect(bytes.length).toBeGreaterThan(decoded.length); // multi-byte UTF-8 present
      expect(/[\uD800-\uDBFF][\uDC00-\uDFFF]/.test(decoded)).toBe(true); // surrogate pairs present
    });

    test(`every single split point gives the same releases`, () => {
      const bad: number[] = [];
      for (let p = 1; p < bytes.length; p++) {
        const run = runChatBytes(bytes, [p]);
        if (structuralProblems(run).length > 0 || JSON.stringify(run.released) !== JSON.stringify(expected)) bad.push(p);
      }
      count(`every-split: ${bytes.length - 1} split points`);
      expect(bad).toEqual([]);
    });

    test('one byte at a time gives the same releases', () => {
      const run = runChatBytes(bytes, Array.from({ length: bytes.length }, (_, k) => k));
      expect(structuralProblems(run)).toEqual([]);
      expect(run.released).toEqual(expected);
    });
  });

  // Regression (found by these properties): a lower index whose first chunk arrives after a higher
  // one was never released and the message never ended. A missing index is now a barrier until the
  // stream ends (src/release/rules.ts passesBarrier).
  test('an index that first appears after a higher one (1 before 0): both released in order, the message ends', () => {
    const s: ChatScenario = {
      calls: [
        { id: 'call_0', name: 'read_file', args: '{"a":0}', cuts: [], lateName: false },
        { id: 'call_1', name: 'read_file', args: '{"b":1}', cuts: [], lateName: false },
      ],
      picks: [1, 0],
      pings: [],
      crlf: false,
      finish: true,
      done: true,
      splits: [],
    };
    const r = chatCheck(s, undefined, false);
    expect(r.problems).toEqual([]);
    expect(r.released).toEqual(r.expected);
  });
});

// ---------------------------------------------------------------- canonical events with evidence

interface EvidenceScenario {
  calls: GenCall[];
  picks: number[];
  completion: 'inferred' | 'evidence-only';
  /** Evidence (call.complete) insertions: for call `call % n` at position `pos` in its own event list. */
  evidence: Array<{ call: number; pos: number }>;
  pings: number[];
  finish: boolean;
  /** Keep only this fraction of the events (a cut stream), then stream.end. */
  cut: number | null;
  /** Calls may first appear in any order (else in index order). */
  anyOrder: boolean;
}

const evidenceScenario = genCalls.chain((calls) =>
  fc.record({
    calls: fc.constant(calls),
    picks: fc.array(fc.nat({ max: 7 }), { maxLength: 40 }),
    completion: fc.constantFrom('inferred' as const, 'evidence-only' as const),
    evidence: fc.array(fc.record({ call: fc.nat({ max: 3 }), pos: fc.nat({ max: 12 }) }), { maxLength: 8 }),
    pings: fc.array(fc.nat({ max: 40 }), { maxLength: 4 }),
    finish: fc.boolean(),
    cut: fc.option(frac, { nil: null, freq: 2 }),
    anyOrder: fc.boolean(),
  }),
);

function callEvents(s: EvidenceScenario): StreamEvent[][] {
  return s.calls.map((c, index) => {
    const evs: StreamEvent[] = [];
    evs.push(c.lateName ? { type: 'call.identity', index, id: c.id } : { type: 'call.identity', index, id: c.id, name: c.name });
    for (const text of pieces(c)) evs.push({ type: 'call.fragment', index, text });
    if (c.lateName) evs.push({ type: 'call.identity', index, name: c.name });
    // Evidence anywhere in the call's own events, possibly several times, possibly first.
    for (const e of s.evidence.filter((x) => x.call % s.calls.length === index)) {
      evs.splice(e.pos % (evs.length + 1), 0, { type: 'call.complete', index });
    }
    return evs;
  });
}

describe('canonical events with completion evidence → release', () => {
  test('duplicated and reordered evidence, late identity, pings, cuts, both completion modes: released = oracle, once, in order, never before evidence', () => {
    fc.assert(
      fc.property(evidenceScenario, (s) => {
        let events = interleave(callEvents(s), s.picks, !s.anyOrder);
        for (const p of s.pings) events.splice(p % (events.length + 1), 0, { type: 'ping' });
        if (s.finish) events.push({ type: 'finish', reason: 'tool_calls' });
        if (s.cut !== null) events = events.slice(0, Math.floor(s.cut * events.length));
        events.push({ type: 'stream.end' });

        const received = new Map<number, Received>();
        for (const e of events) {
          if (e.type !== 'call.identity' && e.type !== 'call.fragment') continue;
          const r = received.get(e.index) ?? { index: e.index, args: '' };
          if (e.type === 'call.identity') {
            r.id ??= e.id;
            r.name ??= e.name;
          } else r.args += e.text;
          received.set(e.index, r);
        }
        const finished = events.some((e) => e.type === 'finish');

        const { controller, run } = newEngine(s.completion);
        const evidence = new Set<number>();
        let closed = false; // finish or end seen
        const early: number[] = [];
        controller.events.on('output', (o) => {
          if (o.type === 'tool_use' && s.completion === 'evidence-only' && !evidence.has(o.index) && !closed) early.push(o.index);
        });
        for (const e of events) {
          if (e.type === 'call.complete') evidence.add(e.index);
          if (e.type === 'finish' || e.type === 'stream.end') closed = true;
          controller.feed(e);
        }
        expect(early).toEqual([]);
        expect(structuralProblems(run, finished)).toEqual([]);
        const { expected, released } = unfinishedRule(oracle([...received.values()]), run, finished);
        expect(released).toEqual(expected);
        count(`evidence (${s.completion}${s.cut === null ? '' : ', cut'}): ${expected.length} released`);
      }),
      runs(300),
    );
  });
});

afterAll(() => {
  const keys = Object.keys(counts).sort();
  process.stdout.write(
    `\n── byte-path properties ───────────────────────────────────────────────────\n${keys.map((k) => `  ${k}: ${counts[k]} runs`).join('\n')}\n`,
  );
});
