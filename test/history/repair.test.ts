import fc from 'fast-check';
import { checkHistory } from '../../src/history/check';
import { REPAIRED_RESULT_TEXT, repairHistory } from '../../src/history/repair';
import type { HistoryMessage, ToolResultRecord } from '../../src/history/types';

const call = (id: string, name = 'read') => ({ id, name, input: {} });
const res = (callId: string, name = 'read'): ToolResultRecord => ({ callId, name, ok: true, content: `r-${callId}` });
const synthetic = (callId: string, name = 'read'): ToolResultRecord => ({ callId, name, ok: false, content: REPAIRED_RESULT_TEXT, synthetic: 'repaired' });

describe('repairHistory', () => {
  test('leaves a valid history unchanged', () => {
    const h: HistoryMessage[] = [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: 'x', thinking: 't', calls: [call('a'), call('b')] },
      { role: 'tool', results: [res('a'), { ...res('b'), ok: false, synthetic: 'interrupted' }] },
      { role: 'assistant', content: 'done', calls: [] },
    ];
    const r = repairHistory(h);
    expect(r.changes).toEqual([]);
    expect(r.messages).toEqual(h);
    expect(r.messages).not.toBe(h);
  });

  test('orphan call gets a synthetic error result, also at the very end', () => {
    const r = repairHistory([
      { role: 'assistant', content: '', calls: [call('a'), call('b')] },
      { role: 'tool', results: [res('a')] },
      { role: 'user', content: 'next' },
      { role: 'assistant', content: '', calls: [call('c', 'grep')] },
    ]);
    expect(r.messages).toEqual([
      { role: 'assistant', content: '', calls: [call('a'), call('b')] },
      { role: 'tool', results: [res('a'), synthetic('b')] },
      { role: 'user', content: 'next' },
      { role: 'assistant', content: '', calls: [call('c', 'grep')] },
      { role: 'tool', results: [synthetic('c', 'grep')] },
    ]);
    expect(r.changes).toHaveLength(2);
    expect(checkHistory(r.messages).ok).toBe(true);
  });

  test('orphan results and orphan tool messages are removed', () => {
    const r = repairHistory([
      { role: 'tool', results: [res('zz')] },
      { role: 'user', content: 'q' },
      { role: 'assistant', content: '', calls: [call('a')] },
      { role: 'tool', results: [res('a'), res('ghost')] },
      { role: 'assistant', content: 'no calls', calls: [] },
      { role: 'tool', results: [res('a')] },
    ]);
    expect(r.messages).toEqual([
      { role: 'user', content: 'q' },
      { role: 'assistant', content: '', calls: [call('a')] },
      { role: 'tool', results: [res('a')] },
      { role: 'assistant', content: 'no calls', calls: [] },
    ]);
    expect(r.changes.join('\n')).toMatch(/ghost/);
  });

  test('results reordered to call order, duplicates deduped keeping the first, split tool messages merged', () => {
    const first = { ...res('a'), content: 'first' };
    const r = repairHistory([
      { role: 'assistant', content: '', calls: [call('a'), call('b'), call('c')] },
      { role: 'tool', results: [res('c'), first] },
      { role: 'tool', results: [{ ...res('a'), content: 'second' }, res('b')] },
    ]);
    expect(r.messages).toEqual([
      { role: 'assistant', content: '', calls: [call('a'), call('b'), call('c')] },
      { role: 'tool', results: [first, res('b'), res('c')] },
    ]);
    expect(r.changes.join('\n')).toMatch(/merged 2 tool messages/);
    expect(r.changes.join('\n')).toMatch(/duplicate result for a/);
    expect(r.changes.join('\n')).toMatch(/call order/);
  });

  test('duplicate call ids and malformed entries', () => {
    const r = repairHistory([{ role: 'assistant', content: '', calls: [call('a'), call('a', 'other'), { bad: true }] }, null, { role: 'tool', results: [res('a'), 7] }]);
    expect(checkHistory(r.messages).ok).toBe(true);
    expect(r.messages[0]).toEqual({ role: 'assistant', content: '', calls: [call('a')] });
    expect(() => repairHistory('junk' as never)).not.toThrow();
    expect(repairHistory('junk' as never).messages).toEqual([]);
  });

  test('does not mutate its input', () => {
    const h = [{ role: 'assistant', content: '', calls: [call('a')] }, { role: 'tool', results: [res('b')] }];
    const copy = JSON.parse(JSON.stringify(h));
    repairHistory(h);
    expect(h).toEqual(copy);
  });
});

// ---------------------------------------------------------------------------------------------
// Property: random broken histories → repaired history passes checkHistory, and repair is idempotent.

const ids = ['a', 'b', 'c', 'd', 'e'];
const names = ['read', 'grep', 'bash'];
const arbCall = fc.record({ id: fc.constantFrom(...ids), name: fc.constantFrom(...names), input: fc.constant({}) });
const arbResult = fc.record({
  callId: fc.constantFrom(...ids, 'zz'),
  name: fc.constantFrom(...names),
  ok: fc.boolean(),
  content: fc.string({ maxLength: 5 }),
});
const arbMessage: fc.Arbitrary<unknown> = fc.oneof(
  fc.record({ role: fc.constant('user'), content: fc.string({ maxLength: 5 }) }),
  fc.record({ role: fc.constant('assistant'), content: fc.string({ maxLength: 5 }), calls: fc.array(arbCall, { maxLength: 4 }) }),
  fc.record({ role: fc.constant('tool'), results: fc.array(arbResult, { maxLength: 5 }) }),
  fc.constantFrom(null, 42, { role: 'system' }, { role: 'tool' }, { role: 'assistant', content: '' }),
);

describe('repairHistory properties', () => {
  test('any history → repaired history satisfies I1–I3', () => {
    fc.assert(
      fc.property(fc.array(arbMessage, { maxLength: 12 }), (h) => {
        const r = repairHistory(h);
        const check = checkHistory(r.messages);
        expect(check.violations).toEqual([]);
        // An id reused by a later turn is only a warning, and repair keeps ids as the provider saw them.
        expect(check.warnings.filter((w) => !/ was already used in message /.test(w))).toEqual([]);
      }),
      { numRuns: 500 },
    );
  });

  test('idempotent: a second repair changes nothing', () => {
    fc.assert(
      fc.property(fc.array(arbMessage, { maxLength: 12 }), (h) => {
        const once = repairHistory(h);
        const twice = repairHistory(once.messages);
        expect(twice.changes).toEqual([]);
        expect(twice.messages).toEqual(once.messages);
      }),
      { numRuns: 500 },
    );
  });

  test('a valid history is a fixed point; broken ones report changes', () => {
    fc.assert(
      fc.property(fc.array(arbMessage, { maxLength: 12 }), (h) => {
        const r = repairHistory(h);
        if (checkHistory(h).ok && h.every((m) => typeof m === 'object' && m !== null && ['user', 'assistant', 'tool'].includes((m as { role: string }).role))) {
          // valid input may still be normalised (e.g. malformed calls); when nothing changed it is returned as is
          if (r.changes.length === 0) expect(r.messages).toEqual(h);
        } else if (!checkHistory(h).ok) {
          expect(r.changes.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 300 },
    );
  });
});
