import fc from 'fast-check';
import { JsonScanner, scanJson, type ScanStatus } from '../../src/args/scanner';

/** JSON.parse's verdict on a complete text. */
function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Push `text` cut at the given offsets and return the status after each piece. */
function scanPieces(text: string, cuts: number[]): { scanner: JsonScanner; statuses: ScanStatus[] } {
  const scanner = new JsonScanner();
  const statuses: ScanStatus[] = [];
  let prev = 0;
  for (const cut of [...cuts, text.length]) {
    scanner.push(text.slice(prev, cut));
    statuses.push(scanner.status);
    prev = cut;
  }
  return { scanner, statuses };
}

/** Feed `text` one code unit at a time, asserting the status never regresses from invalid/closed. */
function statusesPerChar(text: string): ScanStatus[] {
  const s = new JsonScanner();
  const out: ScanStatus[] = [];
  for (let i = 0; i < text.length; i++) out.push(s.push(text[i]));
  return out;
}

const VALID_SAMPLES: string[] = [
  '{}',
  '[]',
  '{"path":"/tmp/example.txt"}',
  ' { "a" : [ 1 , 2.5 , -3e+7 , 0 , -0.0E-0 ] , "b" : { "c" : null , "d" : true , "e" : false } } ',
  '{"s":"esc \\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\uD83D\\uDE00 end"}',
  '{"emoji":"😀 naïve 日本語 ｜DSML｜ 𝄞"}',
  '{"lone":"\\ud800 and raw \ud800"}',
  '[[[[[[[[[[{"deep":[[[]]]}]]]]]]]]]]',
  '"top-level string with \\u0041"',
  '12345',
  '-0.5e10',
  '0',
  'true',
  'false',
  'null',
  '{"label": "customer-eof", "literal_text": "customer"}',
  '{"a":{"b":{"c":{"d":[1,{"e":"f"}]}}}}',
  '\t\r\n{"ws":\t[\r\n]}\n',
];

const INVALID_SAMPLES: string[] = [
  '{"a":1}x',
  '{"a":1}}',
  '{"a":1,}',
  '[1,]',
  '[1 2]',
  '{"a" 1}',
  '{a:1}',
  "{'a':1}",
  '{"a":01}',
  '{"a":1.}',
  '{"a":.5}',
  '{"a":1e}',
  '{"a":+1}',
  '{"a":-}',
  '{"a":tru}',
  '{"a":True}',
  '{"a":"\\x"}',
  '{"a":"\\u12G4"}',
  '{"a":"tab\there"}',
  '{"a":"nl\nhere"}',
  '[}',
  '{]',
  '\u00a0{}',
  '\ufeff{}',
  '{} {}',
  '12 3',
  '"a""b"',
  'nulll',
];

describe('JsonScanner: fixed samples', () => {
  test.each(VALID_SAMPLES)('valid %j is closed (at finish) and agrees with JSON.parse', (text) => {
    expect(parses(text)).toBe(true);
    expect(scanJson(text).status).toBe('closed');
  });

  test.each(INVALID_SAMPLES)('invalid %j is invalid and JSON.parse rejects it', (text) => {
    expect(parses(text)).toBe(false);
    expect(scanJson(text).status).toBe('invalid');
  });

  test('every split point (two pieces) of every sample gives the same verdict', () => {
    for (const text of [...VALID_SAMPLES, ...INVALID_SAMPLES]) {
      const whole = scanJson(text).status;
      for (let cut = 0; cut <= text.length; cut++) {
        const { scanner } = scanPieces(text, [cut]);
        expect([text, cut, scanner.finish()]).toEqual([text, cut, whole]);
      }
    }
  });

  test('every split point (three pieces) of escape-, surrogate- and number-heavy samples', () => {
    const samples = ['{"k":"\\uD83D\\uDE00\\n😀x"}', '[-12.5e-3,0,"\\"",{"":""}]', '{"multi":"ａ｜ｂ😀"}'];
    for (const text of samples) {
      for (let a = 0; a <= text.length; a++) {
        for (let b = a; b <= text.length; b++) {
          const { scanner } = scanPieces(text, [a, b]);
          expect(scanner.finish()).toBe('closed');
        }
      }
    }
  });

  test('every UTF-8 byte split, decoded with a streaming TextDecoder, then scanned', () => {
    const text = '{"k":"ａ｜ｂ😀 naïve 𝄞","n":[-1.5e3,"\\u00e9"]}';
    const bytes = new TextEncoder().encode(text);
    for (let cut = 0; cut <= bytes.length; cut++) {
      const dec = new TextDecoder('utf-8', { fatal: true });
      const s = new JsonScanner();
      s.push(dec.decode(bytes.subarray(0, cut), { stream: true }));
      expect(s.status).not.toBe('invalid');
      s.push(dec.decode(bytes.subarray(cut)));
      expect(s.status).toBe('closed');
    }
  });

  test('one code unit at a time: valid samples never look invalid before the end', () => {
    for (const text of VALID_SAMPLES) {
      const statuses = statusesPerChar(text);
      expect(statuses).not.toContain('invalid');
    }
  });
});

describe('JsonScanner: status and topLevel', () => {
  test('whitespace only is empty, also at finish', () => {
    const s = new JsonScanner();
    expect(s.status).toBe('empty');
    s.push('  \n\t\r ');
    expect(s.status).toBe('empty');
    expect(s.finish()).toBe('empty');
    expect(s.topLevel).toBeUndefined();
  });

  test('object closes on its closing brace, trailing whitespace keeps it closed, garbage invalidates', () => {
    const s = new JsonScanner();
    expect(s.push('{"a":')).toBe('partial');
    expect(s.topLevel).toBe('object');
    expect(s.push('[1,{"b":"}"}]')).toBe('partial');
    expect(s.push('}')).toBe('closed');
    expect(s.closedAt).toBe(19);
    expect(s.push('  \n')).toBe('closed');
    expect(s.push(' x')).toBe('invalid');
    expect(s.errorAt).toBe(23);
    expect(s.error).toBe('text after the top-level value');
    expect(s.push('}')).toBe('invalid');
  });

  test('a top-level number is closed only at finish() or by whitespace', () => {
    const s = new JsonScanner();
    expect(s.push('12')).toBe('partial');
    expect(s.topLevel).toBe('number');
    expect(s.finish()).toBe('closed');
    expect(s.status).toBe('partial'); // finish() does not change the scanner
    expect(s.push('3')).toBe('partial');
    expect(s.push('.5e')).toBe('partial');
    expect(s.finish()).toBe('partial'); // "123.5e" is cut short
    expect(s.push('-2')).toBe('partial');
    expect(s.finish()).toBe('closed');
    expect(s.push(' ')).toBe('closed');
    expect(s.closedAt).toBe(8);
  });

  test('a number split across fragments inside a container', () => {
    const s = new JsonScanner();
    for (const piece of ['{"n":-', '0', '.', '2', '5', 'E', '+', '1', '0', '}']) s.push(piece);
    expect(s.status).toBe('closed');
  });

  test('top-level kinds', () => {
    expect(scanJson(' [1]').topLevel).toBe('array');
    expect(scanJson('"x"').topLevel).toBe('string');
    expect(scanJson('null').topLevel).toBe('literal');
    expect(scanJson('-1').topLevel).toBe('number');
    expect(scanJson('{').topLevel).toBe('object');
  });

  test('literal and string at top level close as soon as they end', () => {
    const s = new JsonScanner();
    s.push('fal');
    expect(s.status).toBe('partial');
    s.push('se');
    expect(s.status).toBe('closed');
    const t = new JsonScanner();
    t.push('"ab');
    expect(t.status).toBe('partial');
    t.push('\\"');
    expect(t.status).toBe('partial');
    t.push('"');
    expect(t.status).toBe('closed');
  });

  test('escape split after the backslash and inside \\uXXXX', () => {
    const pieces = ['{"a":"x\\', 'u', 'D8', '3D\\', 'uDE0', '0"}'];
    const s = new JsonScanner();
    for (const p of pieces) expect(s.push(p)).not.toBe('invalid');
    expect(s.status).toBe('closed');
  });

  test('surrogate pair halves in separate fragments', () => {
    const text = '{"e":"😀"}';
    const hi = text.indexOf('\ud83d');
    const s = new JsonScanner();
    s.push(text.slice(0, hi + 1));
    s.push(text.slice(hi + 1));
    expect(s.status).toBe('closed');
  });

  test('length counts every pushed code unit; empty pushes are no-ops', () => {
    const s = new JsonScanner();
    s.push('');
    s.push('{"a"');
    s.push('');
    expect(s.length).toBe(4);
    expect(s.nesting).toBe(1);
  });

  test('deep nesting (100k levels) does not overflow', () => {
    const depth = 100_000;
    const s = new JsonScanner();
    s.push('['.repeat(depth));
    expect(s.nesting).toBe(depth);
    s.push(']'.repeat(depth));
    expect(s.status).toBe('closed');
  });
});

describe('JsonScanner vs JSON.parse (property)', () => {
  /** Random cut points for a text. */
  const withCuts = (textArb: fc.Arbitrary<string>) =>
    textArb.chain((text) =>
      fc.tuple(
        fc.constant(text),
        fc
          .uniqueArray(fc.integer({ min: 0, max: text.length }), { maxLength: 8 })
          .map((a) => a.sort((x, y) => x - y)),
      ),
    );

  /** Whitespace JSON allows, plus some it does not. */
  const wsArb = fc.constantFrom('', ' ', '\n', '\t', '\r\n', '  ');

  const jsonArb = fc.tuple(wsArb, fc.json({ maxDepth: 4 }), wsArb).map(([a, j, b]) => a + j + b);

  test('valid JSON split at random points: every prefix is non-invalid, the whole is closed', () => {
    fc.assert(
      fc.property(withCuts(jsonArb), ([text, cuts]) => {
        const { scanner, statuses } = scanPieces(text, cuts);
        if (statuses.includes('invalid')) return false;
        return scanner.finish() === 'closed';
      }),
      { numRuns: 3000 },
    );
  });

  /** Mutations: insert, delete, replace or duplicate characters of a valid JSON text. */
  const MUTATION_CHARS = [
    ...'{}[],:"\\ \t\n\r0123456789-+.eEtrufalsn/bxu',
    '\u0000',
    '\u001f',
    '\u00a0',
    '\ud83d',
    '😀',
  ];
  const mutationArb = fc.record({
    op: fc.constantFrom('insert', 'delete', 'replace', 'truncate', 'append'),
    pos: fc.nat(),
    ch: fc.constantFrom(...MUTATION_CHARS),
  });

  const mutatedArb = fc
    .tuple(jsonArb, fc.array(mutationArb, { minLength: 1, maxLength: 3 }))
    .map(([text, muts]) => {
      let t = text;
      for (const m of muts) {
        const p = t.length === 0 ? 0 : m.pos % (t.length + 1);
        if (m.op === 'insert') t = t.slice(0, p) + m.ch + t.slice(p);
        else if (m.op === 'delete') t = t.slice(0, p) + t.slice(p + 1);
        else if (m.op === 'replace') t = t.slice(0, p) + m.ch + t.slice(p + 1);
        else if (m.op === 'truncate') t = t.slice(0, p);
        else t = t + m.ch;
      }
      return t;
    });

  test('mutated JSON: closed at finish iff JSON.parse accepts; invalid prefix implies JSON.parse rejects', () => {
    fc.assert(
      fc.property(withCuts(mutatedArb), ([text, cuts]) => {
        const { scanner, statuses } = scanPieces(text, cuts);
        const ok = parses(text);
        const verdict = scanner.finish();
        if ((verdict === 'closed') !== ok) return false;
        // Once invalid, it stays invalid.
        const firstInvalid = statuses.indexOf('invalid');
        if (firstInvalid >= 0 && statuses.slice(firstInvalid).some((s) => s !== 'invalid')) return false;
        if (verdict === 'invalid' && ok) return false;
        return true;
      }),
      { numRuns: 20000 },
    );
  });

  test('prefixes of valid JSON are never invalid; a char that makes a prefix invalid has no parsing completion among witnesses', () => {
    fc.assert(
      fc.property(jsonArb, fc.constantFrom(...MUTATION_CHARS), fc.nat(), (text, ch, pos) => {
        const p = text.length === 0 ? 0 : pos % (text.length + 1);
        const prefix = text.slice(0, p);
        const s = new JsonScanner();
        s.push(prefix);
        if (s.status === 'invalid') return false;
        // If the scanner calls `prefix + ch` invalid, no completion of it can parse: try the
        // completion "prefix + ch + rest-of-original" as one witness and a few closers.
        if (s.push(ch) === 'invalid') {
          for (const tail of [text.slice(p), text.slice(p + 1), '"}', ']', '}', '"]}', '0}', '']) {
            if (parses(prefix + ch + tail)) return false;
          }
        }
        return true;
      }),
      { numRuns: 5000 },
    );
  });

  test('random unicode strings and objects with string values (surrogates split)', () => {
    const arb = fc
      .dictionary(fc.string({ unit: 'binary', maxLength: 8 }), fc.string({ unit: 'binary', maxLength: 20 }))
      .map((o) => JSON.stringify(o));
    fc.assert(
      fc.property(withCuts(arb), ([text, cuts]) => {
        const { scanner, statuses } = scanPieces(text, cuts);
        return !statuses.includes('invalid') && scanner.finish() === 'closed';
      }),
      { numRuns: 2000 },
    );
  });
});
