import fc from 'fast-check';
import { repairTruncated } from '../../src/args/repair';

describe('repairTruncated: Dynamo cases (server_anchors.md §1.7)', () => {
  test('17: truncated trailing string member is dropped', () => {
    expect(repairTruncated('{"label": "customer-eof", "literal_text": "cust')).toEqual({
      label: 'customer-eof',
    });
  });

  test('18: only the incomplete member of the last call is dropped', () => {
    expect(repairTruncated('{"done": "yes"}')).toEqual({ done: 'yes' });
    expect(repairTruncated('{"done": "no", "tail": "cut')).toEqual({ done: 'no' });
  });

  test('23: nothing recoverable gives undefined', () => {
    expect(repairTruncated('{"label": "cut')).toBeUndefined();
  });
});

describe('repairTruncated: truncation points', () => {
  const cases: Array<[string, Record<string, unknown> | undefined]> = [
    ['{', undefined],
    ['{"', undefined],
    ['{"a', undefined],
    ['{"a"', undefined],
    ['{"a":', undefined],
    ['{"a": ', undefined],
    ['{"a":1', undefined], // the number may have been cut
    ['{"a":1 ', { a: 1 }], // ...but whitespace ended it
    ['{"a":1,', { a: 1 }],
    ['{"a":1, "b"', { a: 1 }],
    ['{"a":1, "b":', { a: 1 }],
    ['{"a":1, "b":tr', { a: 1 }],
    ['{"a":1, "b":true', { a: 1, b: true }],
    ['{"a":1, "b":null', { a: 1, b: null }],
    ['{"a":1, "b":fals', { a: 1 }],
    ['{"a":1, "b":-', { a: 1 }],
    ['{"a":1, "b":2.5e', { a: 1 }],
    ['{"a":"x"', { a: 'x' }],
    ['{"a":"x\\', undefined],
    ['{"a":"x","b":"y\\"z', { a: 'x' }],
    ['{"a":"x","b":"\\u00', { a: 'x' }],
    ['{"a":"x","b":"\\"}"', { a: 'x', b: '"}' }],
    ['{"a":"x","b":"😀', { a: 'x' }],
  ];
  test.each(cases)('%j', (text, expected) => {
    expect(repairTruncated(text)).toEqual(expected);
  });
});

describe('repairTruncated: nested truncation', () => {
  test('inner object keeps its complete members and is closed', () => {
    expect(repairTruncated('{"a": {"b": 1, "c": "tr')).toEqual({ a: { b: 1 } });
  });

  test('arrays keep their complete elements', () => {
    expect(repairTruncated('{"path":"x","lines":[1, 2, "three", "fo')).toEqual({
      path: 'x',
      lines: [1, 2, 'three'],
    });
    expect(repairTruncated('{"path":"x","lines":[1, 2, 3')).toEqual({ path: 'x', lines: [1, 2] });
  });

  test('an open container left with no complete member is dropped from its parent', () => {
    expect(repairTruncated('{"x": 1, "a": {"b": "tr')).toEqual({ x: 1 });
    expect(repairTruncated('{"x": 1, "a": [')).toEqual({ x: 1 });
    expect(repairTruncated('{"edits": [{"old": "ab')).toBeUndefined();
  });

  test('several levels deep', () => {
    expect(
      repairTruncated(
        '{"p":"f.ts","edits":[{"old":"a","new":"b"},{"old":"c","new":{"deep":[1,{"k":"v"},{"z":"cu',
      ),
    ).toEqual({
      p: 'f.ts',
      edits: [
        { old: 'a', new: 'b' },
        { old: 'c', new: { deep: [1, { k: 'v' }] } },
      ],
    });
  });

  test('complete nested containers before the cut survive whole', () => {
    expect(repairTruncated('{"a": {"b": {"c": []}}, "d": [{}], "e": "x')).toEqual({
      a: { b: { c: [] } },
      d: [{}],
    });
  });

  test('closers inside strings do not confuse the walk', () => {
    expect(repairTruncated('{"a": "}]", "b": ["{[", "x')).toEqual({ a: '}]', b: ['{['] });
  });
});

describe('repairTruncated: refusals', () => {
  test.each(['', '   ', '[1, 2', '"abc', '42', 'nul', '[{"a":1}'])('non-object top level %j', (text) => {
    expect(repairTruncated(text)).toBeUndefined();
  });

  test.each(['{"a": x', '{"a":1}}', '{"a":1} trailing', '{"a" 1', '{"a":"\\q'])(
    'grammar error %j',
    (text) => {
      expect(repairTruncated(text)).toBeUndefined();
    },
  );

  test('an already complete object is returned as is', () => {
    expect(repairTruncated(' {"a": [1, {"b": null}]} ')).toEqual({ a: [1, { b: null }] });
    expect(repairTruncated('{}')).toEqual({});
  });

  test('linear time on a 1 MB truncated string member', () => {
    const big = '{"path":"a.ts","content":"' + 'x'.repeat(1_000_000);
    expect(repairTruncated(big)).toEqual({ path: 'a.ts' });
  });
});

describe('repairTruncated: property', () => {
  /** r was built from a prefix of o: same keys/elements in order, all but the last equal, the last a prefix. */
  function isPrefixValue(r: unknown, o: unknown): boolean {
    if (isEqual(r, o)) return true;
    if (Array.isArray(r)) {
      if (!Array.isArray(o) || r.length > o.length || r.length === 0) return false;
      for (let i = 0; i < r.length - 1; i++) if (!isEqual(r[i], o[i])) return false;
      return isPrefixValue(r[r.length - 1], o[r.length - 1]);
    }
    if (r !== null && typeof r === 'object') {
      if (o === null || typeof o !== 'object' || Array.isArray(o)) return false;
      const rk = Object.keys(r);
      const ok = Object.keys(o);
      if (rk.length === 0 || rk.length > ok.length) return false;
      for (let i = 0; i < rk.length; i++) if (rk[i] !== ok[i]) return false;
      const rr = r as Record<string, unknown>;
      const oo = o as Record<string, unknown>;
      for (let i = 0; i < rk.length - 1; i++) if (!isEqual(rr[rk[i]], oo[rk[i]])) return false;
      return isPrefixValue(rr[rk[rk.length - 1]], oo[rk[rk.length - 1]]);
    }
    return isEqual(r, o);
  }
  /** Prefix every object key with 'k' (no integer-like keys, which JS reorders; no __proto__). */
  function prefixKeys(v: unknown): unknown {
    if (Array.isArray(v)) return v.map(prefixKeys);
    if (v !== null && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out['k' + k] = prefixKeys(x);
      return out;
    }
    return v;
  }
  const isEqual = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

  test('every truncation of a random object repairs to a prefix of it (or nothing)', () => {
    const objArb = fc
      // Keys prefixed so that none is integer-like (JS would reorder those) or __proto__.
      .dictionary(
        fc.string({ maxLength: 6 }).map((k) => 'k' + k),
        fc.jsonValue({ maxDepth: 3 }).map(prefixKeys),
        { minKeys: 1, maxKeys: 6 },
      );
    fc.assert(
      fc.property(objArb, fc.nat(), fc.boolean(), (obj, pos, pretty) => {
        const text = pretty ? JSON.stringify(obj, null, 1) : JSON.stringify(obj);
        const cut = pos % text.length; // strictly truncated
        const r = repairTruncated(text.slice(0, cut));
        if (r === undefined) return true;
        // Keys are compared in JSON text order: compare against the re-parsed original.
        return isPrefixValue(r, JSON.parse(text));
      }),
      { numRuns: 5000 },
    );
  });
});
