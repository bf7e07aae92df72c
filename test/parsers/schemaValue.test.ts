/**
 * The shared value typing (src/parsers/core/schemaValue.ts): schema compilation, typing of one
 * complete value, Python literals, and the streaming sink (ValueSink) that uses them.
 */
import {
  compileSchema,
  NOT_PARSED,
  parseLoose,
  parsePythonLiteral,
  typeValue,
  valueStreams,
  type TypingOptions,
} from '../../src/parsers/core/schemaValue';
import { convertValue, ToolSchemas, ValueSink, type Trim } from '../../src/parsers/core/params';

const types = (schema: unknown): string[] | undefined => {
  const t = compileSchema(schema)?.types;
  return t === undefined ? undefined : [...t].sort();
};

describe('compileSchema', () => {
  const rows: [string, unknown, string[] | undefined][] = [
    ['type string', { type: 'string' }, ['string']],
    ['type array with null', { type: ['integer', 'null'] }, ['integer', 'null']],
    ['anyOf with null', { anyOf: [{ type: 'string' }, { type: 'null' }] }, ['null', 'string']],
    [
      'oneOf of objects and arrays',
      { oneOf: [{ type: 'object' }, { type: 'array', items: {} }] },
      ['array', 'object'],
    ],
    ['enum of strings', { enum: ['a', 'b'] }, ['string']],
    ['enum of mixed values', { enum: ['a', 1, null] }, ['integer', 'null', 'string']],
    ['const', { const: 3.5 }, ['number']],
    ['properties without type', { properties: { a: {} } }, ['object']],
    ['items without type', { items: { type: 'string' } }, ['array']],
    ['OpenAPI nullable', { type: 'boolean', nullable: true }, ['boolean', 'null']],
    ['allOf takes the first typed member', { allOf: [{ description: 'x' }, { type: 'number' }] }, ['number']],
    ['an alternative without a type means any', { anyOf: [{ type: 'string' }, {}] }, undefined],
    ['empty schema', {}, undefined],
    ['unknown type names are ignored', { type: 'str' }, undefined],
  ];
  it.each(rows)('%s', (_n, schema, want) => expect(types(schema)).toEqual(want));

  it('resolves local $ref (both $defs and definitions), with sibling nullable', () => {
    const root = {
      $defs: { Mode: { enum: ['fast', 'slow'] } },
      definitions: { N: { type: 'integer' } },
    };
    expect([...(compileSchema({ $ref: '#/$defs/Mode' }, root)?.types ?? [])]).toEqual(['string']);
    expect(compileSchema({ $ref: '#/$defs/Mode' }, root)?.values).toEqual(['fast', 'slow']);
    expect(
      [...(compileSchema({ $ref: '#/definitions/N', nullable: true }, root)?.types ?? [])].sort(),
    ).toEqual(['integer', 'null']);
    expect(compileSchema({ $ref: '#/$defs/Missing' }, root)).toBeUndefined();
    expect(compileSchema({ $ref: 'https://example.com/s.json' }, root)).toBeUndefined();
  });

  it('does not loop on a self-referencing $ref', () => {
    const root = { $defs: { A: { $ref: '#/$defs/A' } } };
    expect(compileSchema({ $ref: '#/$defs/A' }, root)).toBeUndefined();
  });
});

describe('typeValue', () => {
  const rows: [string, string, unknown, string, TypingOptions?][] = [
    // [name, raw, schema, expected JSON text, opts]
    ['string keeps whitespace', '  a b \n', { type: 'string' }, '"  a b \\n"'],
    ['string keeps digits as text', '007', { type: 'string' }, '"007"'],
    ['integer', ' 42 ', { type: 'integer' }, '42'],
    ['integer written 5.0', '5.0', { type: 'integer' }, '5'],
    ['number', '-1.5e3', { type: 'number' }, '-1500'],
    ['not a number stays text', 'abc', { type: 'integer' }, '"abc"'],
    ['boolean any case', 'TRUE', { type: 'boolean' }, 'true'],
    ['nullable integer null', 'null', { type: ['integer', 'null'] }, 'null'],
    ['nullable integer number', '3', { type: ['integer', 'null'] }, '3'],
    ['nullable string null', 'null', { anyOf: [{ type: 'string' }, { type: 'null' }] }, 'null'],
    ['nullable string text', 'nullish', { anyOf: [{ type: 'string' }, { type: 'null' }] }, '"nullish"'],
    ['string-only "null" stays a string', 'null', { type: 'string' }, '"null"'],
    ['None is null only with Python literals', 'None', { type: ['integer', 'null'] }, '"None"'],
    ['None with Python literals', 'None', { type: ['integer', 'null'] }, 'null', { python: true }],
    ['object', '{"a": [1, 2]}', { type: 'object' }, '{"a":[1,2]}'],
    ['object given an array stays text', '[1]', { type: 'object' }, '"[1]"'],
    ['array', '[1, "x"]', { type: 'array' }, '[1,"x"]'],
    ['object or null: object', '{}', { oneOf: [{ type: 'object' }, { type: 'null' }] }, '{}'],
    ['enum of numbers', '2', { enum: [1, 2, 3] }, '2'],
    ['enum of strings keeps a digit string', '2', { enum: ['1', '2'] }, '"2"'],
    ['const object', '{"a":1}', { const: { a: 1 } }, '{"a":1}'],
    ['union string|integer prefers the string', '5', { type: ['string', 'integer'] }, '"5"'],
    ['no types: JSON', '[true]', {}, '[true]'],
    ['no types: text', 'hello', {}, '"hello"'],
    [
      'Python dict for an object',
      "{'a': True, 'b': None}",
      { type: 'object' },
      '{"a":true,"b":null}',
      { python: true },
    ],
    ['Python dict without the option stays text', "{'a': 1}", { type: 'object' }, '"{\'a\': 1}"'],
    [
      'escaped JSON for an array',
      '[{\\"a\\": \\"x\\"}]',
      { type: 'array' },
      '[{"a":"x"}]',
      { unescape: true },
    ],
    ['escaped JSON without the option stays text', '[\\"a\\"]', { type: 'array' }, '"[\\\\\\"a\\\\\\"]"'],
  ];
  // A rest parameter: jest would take a declared fifth parameter for a `done` callback on 4-item rows.
  it.each(rows)('%s', (...[, raw, schema, want, opts]) => {
    const out = typeValue(raw, compileSchema(schema), opts);
    expect(out).toBe(want);
    expect(() => JSON.parse(out) as unknown).not.toThrow();
  });

  it('without a schema: JSON, then the repairs, else the text', () => {
    expect(typeValue(' 1 ', undefined)).toBe('1');
    expect(typeValue('True', undefined, { python: true })).toBe('true');
    expect(typeValue(' plain ', undefined)).toBe('" plain "');
  });
});

describe('Python literals', () => {
  const rows: [string, unknown][] = [
    ['True', true],
    ['None', null],
    ['-3.25', -3.25],
    ["'it\\'s'", "it's"],
    ['"a\\nb"', 'a\nb'],
    ["'\\u00e9\\x41'", 'éA'],
    ["{'a': [1, (2, 3)], 'b': {'c': False}}", { a: [1, [2, 3]], b: { c: false } }],
    ["{1: 'x'}", { '1': 'x' }],
    ['[]', []],
    ['[1, 2,]', [1, 2]],
  ];
  it.each(rows)('%s', (src, want) => expect(parsePythonLiteral(src)).toEqual(want));

  it.each(['', 'abc', "{'a': }", "'open", '[1 2]', 'True False', 'os.system("x")'])('rejects %p', (src) =>
    expect(parsePythonLiteral(src)).toBe(NOT_PARSED),
  );

  it('a deeply nested literal is rejected, not a stack overflow', () => {
    expect(parsePythonLiteral('['.repeat(10_000) + ']'.repeat(10_000))).toBe(NOT_PARSED);
  });

  it('parseLoose tries JSON first', () => {
    expect(parseLoose('null')).toBeNull();
    expect(parseLoose('nope')).toBe(NOT_PARSED);
  });
});

describe('valueStreams', () => {
  it.each([
    [{ type: 'string' }, 'string'],
    [{ type: ['string', 'null'] }, 'nullable'],
    [{ enum: ['a', 'b'] }, 'string'],
    [{ enum: ['a', 1] }, 'typed'],
    [{ type: 'integer' }, 'typed'],
  ])('%j → %s', (schema, want) => expect(valueStreams(compileSchema(schema))).toBe(want));
  it('no schema is typed', () => expect(valueStreams(undefined)).toBe('typed'));
});

describe('ValueSink with a schema', () => {
  /** Feeds `raw` in pieces of `size` characters; returns the emitted JSON and the emit calls. */
  const feed = (raw: string, schema: unknown, trim: Trim, size: number, opts?: TypingOptions) => {
    const out: string[] = [];
    const sink = new ValueSink((s) => out.push(s), 'auto', trim, compileSchema(schema), opts);
    const beforeEnd: string[] = [];
    for (let i = 0; i < raw.length; i += size) sink.push(raw.slice(i, i + size));
    beforeEnd.push(...out);
    sink.end();
    return { json: out.join(''), beforeEnd: beforeEnd.join('') };
  };

  it.each([1, 2, 3, 7])('a nullable string streams once it cannot be null (pieces of %i)', (size) => {
    const long = 'no, this is a long value';
    const r = feed(long, { type: ['string', 'null'] }, 'none', size);
    expect(JSON.parse(r.json)).toBe(long);
    // Everything but the held tail is out before end().
    expect(r.beforeEnd.length).toBeGreaterThan(long.length - 8);
    expect(JSON.parse(feed(' null ', { type: ['string', 'null'] }, 'none', size).json)).toBeNull();
    expect(JSON.parse(feed('nul', { type: ['string', 'null'] }, 'none', size).json)).toBe('nul');
    expect(JSON.parse(feed('\nnull\n', { type: ['string', 'null'] }, 'newline', size).json)).toBeNull();
    expect(
      JSON.parse(feed('\nNone\n', { type: ['string', 'null'] }, 'newline', size, { python: true }).json),
    ).toBeNull();
  });

  it('a string-only value streams from its first character', () => {
    const r = feed('abcdef', { type: 'string' }, 'none', 1);
    expect(r.beforeEnd).toBe('"abcdef');
    expect(r.json).toBe('"abcdef"');
  });

  it('a typed value is emitted whole at end()', () => {
    const r = feed(' [1, 2] ', { type: 'array' }, 'none', 2);
    expect(r.beforeEnd).toBe('');
    expect(r.json).toBe('[1,2]');
  });
});

describe('ToolSchemas (compatibility of the older API)', () => {
  const schemas = new ToolSchemas([
    {
      name: 'a',
      input_schema: {
        type: 'object',
        properties: { s: { type: 'string' }, n: { type: ['integer', 'null'] } },
      },
    },
    { function: { name: 'b', parameters: { type: 'object', properties: { e: { enum: ['x'] } } } } },
    { name: 'c' },
  ]);
  it('typeOf answers as before', () => {
    expect(schemas.typeOf('a', 's', 'auto')).toBe('string');
    expect(schemas.typeOf('a', 'n', 'auto')).toBe('integer');
    expect(schemas.typeOf('b', 'e', 'auto')).toBe('string');
    expect(schemas.typeOf('a', 'missing', 'auto')).toBe('auto');
    expect(schemas.typeOf('zzz', 's', 'string')).toBe('string');
  });
  it('knows tool names, also without a schema', () => {
    expect(schemas.hasTool('c')).toBe(true);
    expect(schemas.hasTool('d')).toBe(false);
    expect(schemas.size).toBe(2);
    expect(schemas.toolCount).toBe(3);
  });
  it('convertValue is unchanged', () => {
    expect(convertValue(' 7 ', 'integer')).toBe('7');
    expect(convertValue('True', 'json')).toBe('true');
    expect(convertValue('x', 'object')).toBe('"x"');
  });
});
