import { checkHistory, checkTrace } from '../../src/history/check';
import type { TurnTraceEntry } from '../../src/history/trace';
import type { HistoryMessage } from '../../src/history/types';

const call = (id: string, name = 'read') => ({ id, name, input: { path: id } });
const res = (callId: string, name = 'read', ok = true) => ({ callId, name, ok, content: `r-${callId}` });

const valid: HistoryMessage[] = [
  { role: 'user', content: 'hi' },
  { role: 'assistant', content: 'reading', calls: [call('a'), call('b', 'grep')] },
  { role: 'tool', results: [res('a'), res('b', 'grep', false)] },
  { role: 'assistant', content: 'done', calls: [] },
  { role: 'user', content: 'again' },
  { role: 'assistant', content: '', calls: [call('c')] },
  { role: 'tool', results: [res('c')] },
];

const invariants = (messages: unknown[]) => checkHistory(messages).violations.map((v) => v.invariant);

describe('checkHistory', () => {
  test('passes a valid history and an empty one', () => {
    expect(checkHistory(valid)).toEqual({ ok: true, violations: [], warnings: [] });
    expect(checkHistory([]).ok).toBe(true);
  });

  test('I1: missing result', () => {
    const h = [valid[0], valid[1], { role: 'tool', results: [res('a')] }];
    const r = checkHistory(h);
    expect(r.ok).toBe(false);
    expect(r.violations).toEqual([expect.objectContaining({ invariant: 'I1', at: 1, callId: 'b' })]);
  });

  test('I1: result not in the next message (user message in between)', () => {
    const h = [valid[1], { role: 'user', content: 'wait' }, valid[2]];
    expect(invariants(h)).toEqual(['I1', 'I1', 'I2', 'I2']);
  });

  test('I1: duplicate result and duplicate call id', () => {
    expect(invariants([valid[1], { role: 'tool', results: [res('a'), res('a'), res('b', 'grep')] }])).toEqual(['I1']);
    expect(invariants([{ role: 'assistant', content: '', calls: [call('a'), call('a')] }, { role: 'tool', results: [res('a')] }])).toEqual(['I1']);
  });

  test('I1: history ending with calls, unless pending calls are allowed', () => {
    const h = [valid[0], valid[1]];
    expect(invariants(h)).toEqual(['I1', 'I1']);
    expect(checkHistory(h, { allowPendingCalls: true }).ok).toBe(true);
    // only the very last message may be pending
    expect(checkHistory([valid[1], valid[0]], { allowPendingCalls: true }).ok).toBe(false);
  });

  test('I2: result without a call', () => {
    expect(invariants([valid[0], { role: 'tool', results: [res('x')] }])).toEqual(['I2']);
    expect(invariants([{ role: 'tool', results: [res('x')] }])).toEqual(['I2']);
    expect(invariants([valid[1], { role: 'tool', results: [res('a'), res('b', 'grep'), res('zzz')] }])).toEqual(['I2']);
    expect(invariants([{ role: 'assistant', content: 'no calls', calls: [] }, { role: 'tool', results: [res('a')] }])).toEqual(['I2']);
  });

  test('I3: results out of call order', () => {
    const r = checkHistory([valid[1], { role: 'tool', results: [res('b', 'grep'), res('a')] }]);
    expect(r.violations).toEqual([expect.objectContaining({ invariant: 'I3', at: 1, callId: 'a' })]);
  });

  test('warnings for odd but invariant-neutral input; never throws', () => {
    const r = checkHistory([valid[1], { role: 'tool', results: [res('a', 'other'), res('b', 'grep')] }, { role: 'system' }, null]);
    expect(r.ok).toBe(true);
    expect(r.warnings.join('\n')).toMatch(/named other/);
    expect(r.warnings.join('\n')).toMatch(/unknown role/);
    expect(() => checkHistory('nope' as never)).not.toThrow();
    expect(checkHistory([{ role: 'assistant' }, { role: 'tool', results: 'x' }]).warnings.length).toBeGreaterThan(0);
  });

  test('messages name ids and names, never contents', () => {
    const secret = [{ role: 'assistant', content: 'SECRET', calls: [{ id: 'a', name: 'read', input: { path: 'SECRET' } }] }];
    const text = JSON.stringify(checkHistory(secret));
    expect(text).not.toContain('SECRET');
  });
});

const e = (kind: TurnTraceEntry['kind'], index: number | undefined, extra: Partial<TurnTraceEntry> = {}, attempt = 1): TurnTraceEntry => ({
  t: 0,
  kind,
  attempt,
  ...(index === undefined ? {} : { index }),
  ...extra,
});

/** A good turn: safe call 0 early, unsafe call 1 after stream end and after call 0 resulted. */
const goodTrace: TurnTraceEntry[] = [
  e('attempt.start', undefined),
  e('ready', 0, { callId: 'a', safe: true }),
  e('released', 0),
  e('started', 0),
  e('ready', 1, { callId: 'b', safe: false, needsApproval: true }),
  e('released', 1),
  e('approved', 1),
  e('stream.end', undefined),
  e('resulted', 0),
  e('started', 1),
  e('resulted', 1),
  e('committed', undefined, { callIds: ['a', 'b'] }),
];

const traceInvariants = (t: TurnTraceEntry[], opts = {}) => checkTrace(t, opts).violations.map((v) => v.invariant);

describe('checkTrace', () => {
  test('passes a good turn', () => {
    expect(checkTrace(goodTrace)).toEqual({ ok: true, violations: [], warnings: [] });
  });

  test('passes a retried turn whose first attempt was discarded cleanly', () => {
    const t = [
      e('ready', 0, { callId: 'a', safe: true }),
      e('started', 0),
      e('discarded', undefined),
      e('ready', 0, { callId: 'a2', safe: true }, 2),
      e('started', 0, {}, 2),
      e('stream.end', undefined, {}, 2),
      e('resulted', 0, {}, 2),
      e('committed', undefined, { callIds: ['a2'] }, 2),
    ];
    expect(checkTrace(t).ok).toBe(true);
  });

  test('I4: result after discard, start after discard, discarded attempt committed, discarded call id committed', () => {
    const base = [e('ready', 0, { callId: 'a', safe: true }), e('started', 0), e('discarded', undefined)];
    expect(traceInvariants([...base, e('resulted', 0)])).toEqual(['I4']);
    expect(traceInvariants([...base, e('started', 0)])).toEqual(['I4', 'I6']);
    expect(traceInvariants([...base, e('committed', undefined)])).toEqual(['I4']);
    expect(traceInvariants([...base, e('committed', undefined, { callIds: ['a'] }, 2)])).toEqual(['I4']);
    expect(traceInvariants([e('ready', 0, { callId: 'a', safe: true }), e('discarded', 0), e('released', 0)])).toEqual(['I4']);
  });

  test('I4: after an abort only synthetic results, and nothing starts', () => {
    const base = [e('ready', 0, { safe: true }), e('started', 0), e('aborted', undefined)];
    expect(traceInvariants([...base, e('resulted', 0, { synthetic: 'interrupted' })])).toEqual([]);
    expect(traceInvariants([...base, e('resulted', 0)])).toEqual(['I4']);
    expect(traceInvariants([...base, e('ready', 1, { safe: true }), e('started', 1)])).toEqual(['I4']);
  });

  test('I5: start before ready, before approval, after denial', () => {
    expect(traceInvariants([e('started', 0, { safe: true })])).toEqual(['I5']);
    expect(traceInvariants([e('ready', 0, { safe: true, needsApproval: true }), e('started', 0)])).toEqual(['I5']);
    expect(traceInvariants([e('ready', 0, { safe: true, needsApproval: true }), e('denied', 0), e('started', 0)])).toEqual(['I5']);
  });

  test('I5: unsafe start before stream end / before an earlier call resulted / while another runs', () => {
    expect(traceInvariants([e('ready', 0, { safe: false }), e('started', 0)])).toEqual(['I5']);
    expect(
      traceInvariants([e('ready', 0, { safe: true }), e('started', 0), e('ready', 1, { safe: false }), e('stream.end', undefined), e('started', 1)]),
    ).toEqual(['I5', 'I5']);
    // safety unknown counts as unsafe
    expect(traceInvariants([e('ready', 0), e('started', 0)])).toEqual(['I5']);
  });

  test('I5: safe start while an earlier unsafe call has not resulted', () => {
    const t = [
      e('ready', 0, { safe: false }),
      e('ready', 1, { safe: true }),
      e('started', 1),
      e('stream.end', undefined),
      e('started', 0),
    ];
    expect(traceInvariants(t)).toEqual(['I5', 'I5']);
  });

  test("I5 depends on the earlyStart policy: 'none' and 'all'", () => {
    const early = [e('ready', 0, { safe: true }), e('started', 0), e('stream.end', undefined), e('resulted', 0)];
    expect(traceInvariants(early, { earlyStart: 'none' })).toEqual(['I5']);
    expect(traceInvariants(early, { earlyStart: 'safe' })).toEqual([]);
    const unsafeEarly = [e('ready', 0, { safe: false }), e('started', 0), e('resulted', 0), e('stream.end', undefined)];
    expect(traceInvariants(unsafeEarly, { earlyStart: 'all' })).toEqual([]);
    expect(traceInvariants(unsafeEarly, { earlyStart: 'safe' })).toEqual(['I5']);
  });

  test('I6: started twice, released twice, resulted twice', () => {
    const t = [e('ready', 0, { safe: true }), e('released', 0), e('released', 0), e('started', 0), e('started', 0), e('resulted', 0), e('resulted', 0)];
    expect(traceInvariants(t)).toEqual(['I6', 'I6', 'I6']);
    // the same index in another attempt is another call
    expect(traceInvariants([e('ready', 0, { safe: true }), e('started', 0), e('ready', 0, { safe: true }, 2), e('started', 0, {}, 2)])).toEqual([]);
  });

  test('safety falls back to the released entry (the controller records it there)', () => {
    expect(traceInvariants([e('ready', 0), e('released', 0, { safe: true }), e('started', 0)])).toEqual([]);
  });

  test('malformed entries are warnings, never throws', () => {
    const r = checkTrace([null, { kind: 'x', attempt: 1 }, { kind: 'started', attempt: 1 }, { kind: 'ready', attempt: 1, index: 0, t: 5 }, { kind: 'stream.end', attempt: 1, t: 1 }]);
    expect(r.ok).toBe(true);
    expect(r.warnings).toHaveLength(4);
    expect(() => checkTrace('x' as never)).not.toThrow();
  });
});

describe('checkHistory: duplicate call ids (issue 10)', () => {
  test('one id twice in one assistant message, each with a result: reported (I1)', () => {
    const dup: HistoryMessage[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: '', calls: [call('call_dup'), call('call_dup')] },
      { role: 'tool', results: [res('call_dup'), res('call_dup')] },
    ];
    const r = checkHistory(dup);
    expect(r.ok).toBe(false);
    expect(r.violations).toContainEqual({ invariant: 'I1', at: 1, callId: 'call_dup', message: 'message 1: call id call_dup appears twice' });
    expect(r.violations.map((v) => v.message)).toContain('message 1: call call_dup (read) has 2 results in message 2');
  });

  test('an id reused by a later turn: a warning, no violation; the same history in the OpenAI chat shape too', () => {
    const reused: HistoryMessage[] = [
      { role: 'assistant', content: '', calls: [call('functions.read:0')] },
      { role: 'tool', results: [res('functions.read:0')] },
      { role: 'assistant', content: '', calls: [call('functions.read:0')] },
      { role: 'tool', results: [res('functions.read:0')] },
    ];
    const r = checkHistory(reused);
    expect(r).toEqual({ ok: true, violations: [], warnings: ['message 2: call id functions.read:0 was already used in message 0'] });
    expect(checkHistory(valid).warnings).toEqual([]);
  });
});
