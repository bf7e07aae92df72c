import { ArgBuffer } from '../../src/args/buffer';

function feed(pieces: string[]): ArgBuffer {
  const b = new ArgBuffer();
  for (const p of pieces) b.append(p);
  return b;
}

describe('ArgBuffer', () => {
  test('accumulates fragments; status, length, text', () => {
    const b = new ArgBuffer();
    expect(b.status).toBe('empty');
    expect(b.append('')).toBe('empty');
    expect(b.append('{"path":')).toBe('partial');
    expect(b.append('"/tmp/example')).toBe('partial');
    expect(b.objectClosed).toBe(false);
    expect(b.append('.txt"}')).toBe('closed');
    expect(b.objectClosed).toBe(true);
    expect(b.text()).toBe('{"path":"/tmp/example.txt"}');
    expect(b.length).toBe(27);
    expect(b.fragments).toBe(4);
    expect(b.parse()).toEqual({ kind: 'object', value: { path: '/tmp/example.txt' } });
  });

  test('parse kinds', () => {
    expect(feed([]).parse()).toEqual({ kind: 'empty' });
    expect(feed(['', '  ']).parse()).toEqual({ kind: 'empty' });
    expect(feed(['{}']).parse()).toEqual({ kind: 'object', value: {} });
    for (const t of ['[]', 'null', '42', 'true', '"hello"', '-1.5']) {
      expect([t, feed([t]).parse().kind]).toEqual([t, 'non-object']);
    }
    expect(feed(['{"label": "cut']).parse()).toEqual({ kind: 'incomplete' });
    expect(feed(['{"a":1']).parse()).toEqual({ kind: 'incomplete' });
    expect(feed(['4', '2.']).parse()).toEqual({ kind: 'incomplete' });
    expect(feed(['{"label": "cut"']).parse().kind).toBe('incomplete');
    expect(feed(['{"a":1}', 'x']).parse()).toEqual({ kind: 'invalid' });
    expect(feed(['{"unit": celsius}']).parse()).toEqual({ kind: 'invalid' });
  });

  test('JSON.parse runs exactly once, only for a complete object, and the result is cached', () => {
    const spy = jest.spyOn(JSON, 'parse');
    try {
      const b = feed(['{"a":', '[1,2]', '}']);
      expect(spy).not.toHaveBeenCalled();
      const first = b.parse();
      const second = b.parse();
      expect(second).toBe(first);
      expect(spy).toHaveBeenCalledTimes(1);
      b.append('  '); // trailing whitespace: still the same object, no re-parse
      expect(b.parse()).toBe(first);
      expect(spy).toHaveBeenCalledTimes(1);
      // Non-objects and incomplete texts are judged by the scanner alone.
      feed(['[1]']).parse();
      feed(['{"a"']).parse();
      expect(spy).toHaveBeenCalledTimes(1);
    } finally {
      spy.mockRestore();
    }
  });

  test('late fragments: counted after close, whitespace keeps the object, garbage invalidates', () => {
    const b = feed(['{"a":1', '}']);
    expect(b.lateFragments).toBe(0);
    b.append('');
    expect(b.lateFragments).toBe(0); // an empty fragment is not late text
    b.append(' \n');
    expect(b.lateFragments).toBe(1);
    expect(b.status).toBe('closed');
    expect(b.parse()).toEqual({ kind: 'object', value: { a: 1 } });
    b.append('{"b":2}');
    expect(b.lateFragments).toBe(2);
    expect(b.lateChars).toBe(9);
    expect(b.status).toBe('invalid');
    expect(b.parse()).toEqual({ kind: 'invalid' });
  });

  test('a growing top-level number is not late', () => {
    const b = feed(['1', '2', '3']);
    expect(b.lateFragments).toBe(0);
    expect(b.parse()).toEqual({ kind: 'non-object' });
  });

  test('parse before the end, then more text arrives', () => {
    const b = feed(['{"a":']);
    expect(b.parse()).toEqual({ kind: 'incomplete' });
    b.append('1}');
    expect(b.parse()).toEqual({ kind: 'object', value: { a: 1 } });
  });

  test('100k ten-byte fragments: correct and linear-sized work', () => {
    const b = new ArgBuffer();
    b.append('{"content":"');
    const piece = 'abcdefghi\u00e9';
    for (let i = 0; i < 100_000; i++) b.append(piece);
    b.append('"}');
    const r = b.parse();
    expect(r.kind).toBe('object');
    if (r.kind === 'object') expect((r.value.content as string).length).toBe(1_000_000);
  });
});
