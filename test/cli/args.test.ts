import { numberFlag, parseArgs, UsageError } from '../../src/cli/args';

const spec = { out: { type: 'string' as const }, json: { type: 'boolean' as const }, mode: { type: 'string' as const, choices: ['a', 'b'] } };
const fail = (argv: string[]): string => {
  try {
    parseArgs(argv, spec);
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error('no error');
};

describe('parseArgs (util.parseArgs underneath, the CLI’s checks and messages on top)', () => {
  test('values, booleans, positionals and --', () => {
    expect(parseArgs(['a.jsonl', '--out', 'x.svg', '--json', '--mode=b', 'b', '--', '--json', '-z'], spec)).toEqual({
      positionals: ['a.jsonl', 'b', '--json', '-z'],
      flags: { out: 'x.svg', json: true, mode: 'b' },
    });
    expect(parseArgs(['--out='], spec).flags).toEqual({ out: '' });
    expect(parseArgs(['-'], spec).positionals).toEqual(['-']); // stdin
    expect(parseArgs(['--out', 'a', '--out', 'b'], spec).flags.out).toBe('b'); // the last one wins
  });

  test('user errors are one-line UsageErrors', () => {
    expect(fail(['--nope'])).toBe('unknown option --nope');
    expect(fail(['--nope=1'])).toBe('unknown option --nope');
    expect(fail(['-j'])).toBe('unknown option -j');
    expect(fail(['--json=yes'])).toBe('--json takes no value');
    expect(fail(['--out'])).toBe('--out needs a value');
    expect(fail(['--mode', 'c'])).toBe('--mode must be one of: a, b (got "c")');
    expect(fail(['--toString'])).toBe('unknown option --toString');
  });

  test('numberFlag', () => {
    expect(numberFlag('2.5', 'x')).toBe(2.5);
    expect(numberFlag(undefined, 'x', 7)).toBe(7);
    expect(() => numberFlag('-1', 'x')).toThrow('--x must be a non-negative number');
    expect(() => numberFlag(true, 'x')).toThrow(UsageError);
  });
});
