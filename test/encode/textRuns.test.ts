/**
 * TextRuns (src/textRuns.ts) keeps exactly the concatenation of its pieces — across run boundaries,
 * with surrogate pairs split between pieces, after repeated reads and after clear — and its length
 * counts UTF-16 units like a string's.
 */
import { TextRuns } from '../../src/textRuns';

const PIECES = ['a', '', 'word ', '"q"', '\\', '\n', '\ud83d', '\ude00', '\u2028', 'ü', '\u0000'];

function seeded(seed: number, n: number): string[] {
  let s = seed;
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    out.push(PIECES[s % PIECES.length]!);
  }
  return out;
}

describe('TextRuns', () => {
  test.each([0, 1, 255, 256, 257, 511, 512, 1000, 5000])('%i pieces: the same text and length as +=', (n) => {
    const pieces = seeded(n + 1, n);
    const runs = new TextRuns();
    let rope = '';
    for (const p of pieces) {
      runs.add(p);
      rope += p;
      expect(runs.length).toBe(rope.length);
    }
    expect(runs.toString()).toBe(rope);
    expect(runs.toString()).toBe(rope); // a second read
    runs.add('tail');
    expect(runs.toString()).toBe(rope + 'tail');
  });

  test('reads between adds keep the order', () => {
    const runs = new TextRuns();
    let rope = '';
    for (let i = 0; i < 2000; i++) {
      runs.add(`${i},`);
      rope += `${i},`;
      if (i % 97 === 0) expect(runs.toString()).toBe(rope);
    }
    expect(runs.toString()).toBe(rope);
  });

  test('clear starts over', () => {
    const runs = new TextRuns();
    for (let i = 0; i < 600; i++) runs.add('x');
    const before = runs.toString();
    runs.clear();
    expect(runs.length).toBe(0);
    expect(runs.toString()).toBe('');
    runs.add('y');
    expect(runs.toString()).toBe('y');
    expect(before).toBe('x'.repeat(600));
  });
});
