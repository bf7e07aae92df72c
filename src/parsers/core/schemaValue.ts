/**
 * One way to type a parameter value from a tool's JSON Schema, shared by every family whose
 * arguments arrive as untyped text (Qwen3-Coder `<parameter=k>`, GLM `<arg_value>`, DSML
 * `string="false"`, and the families added beside them).
 *
 * API (docs/parsers.md, "Value typing"):
 * - `compileSchema(schema, root?)` → `ValueSchema | undefined`: the allowed JSON types of a value
 *   (`type` string or array, OpenAPI `nullable`, `anyOf`/`oneOf` alternatives including
 *   `{"type": "null"}`, `allOf` members, `enum`/`const` values, `properties` ⇒ object, `items` ⇒
 *   array, `$ref` to `#/$defs/…` or `#/definitions/…` of `root`). `undefined` means "no usable
 *   schema" (the family's schema-less rule applies).
 * - `typeValue(raw, schema, opts)` → JSON text for one complete value (see the rules there).
 * - `valueStreams(schema)`: how a value with that schema can be streamed (`'string'`: as a JSON
 *   string from its first character; `'nullable'`: as a string once it cannot be the literal
 *   `null`; `'typed'`: only when complete).
 * - `parseLoose(text, opts)`: JSON, else (opts) a Python literal, else (opts) JSON whose quotes
 *   were backslash-escaped; `NOT_PARSED` when none applies.
 * - `parsePythonLiteral(text)`: `True`/`False`/`None`, numbers, quoted strings (single or double),
 *   lists, tuples and dicts, as a JSON value; `NOT_PARSED` otherwise. Our own small reader (no
 *   eval), bounded by the text length.
 *
 * Typing never throws: a value that fits none of the allowed types is kept as the model's text
 * (a JSON string), and the tool's own input validation reports it.
 */
import { isWs, trimWs } from './markers';

export type JsonType = 'string' | 'number' | 'integer' | 'boolean' | 'null' | 'object' | 'array';

export interface ValueSchema {
  /** The allowed JSON types; undefined: any type (e.g. `{}` or an enum of mixed values). */
  readonly types?: ReadonlySet<JsonType>;
  /** `enum` / `const` values, when the schema lists them. */
  readonly values?: readonly unknown[];
}

export interface TypingOptions {
  /** Accept Python literals (`True`, `False`, `None`, single-quoted strings, dicts, tuples). */
  python?: boolean;
  /** Accept JSON whose quotes were backslash-escaped (`{\"a\": 1}`), as GLM sometimes writes. */
  unescape?: boolean;
}

/** Returned by the parsers when the text is not a value of their kind. */
export const NOT_PARSED: unique symbol = Symbol('not parsed');
export type Parsed = unknown;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const JSON_TYPES = new Set<string>(['string', 'number', 'integer', 'boolean', 'null', 'object', 'array']);
const MAX_DEPTH = 16;

function typeOfValue(v: unknown): JsonType {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  const t = typeof v;
  if (t === 'string') return 'string';
  if (t === 'boolean') return 'boolean';
  if (t === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return 'object';
}

function resolveRef(ref: string, root: unknown): unknown {
  const m = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref);
  if (!m || !isObj(root)) return undefined;
  const defs = root[m[1]];
  if (!isObj(defs)) return undefined;
  const key = m[2].replace(/~1/g, '/').replace(/~0/g, '~');
  return defs[key];
}

/** Compiles one (sub)schema; `root` resolves local `$ref`s (defaults to `schema`). */
export function compileSchema(schema: unknown, root: unknown = schema): ValueSchema | undefined {
  return compile(schema, root, 0);
}

function compile(s: unknown, root: unknown, depth: number): ValueSchema | undefined {
  if (!isObj(s) || depth > MAX_DEPTH) return undefined;
  if (typeof s.$ref === 'string') {
    const target = resolveRef(s.$ref, root);
    const base = compile(target, root, depth + 1);
    // Sibling keywords (e.g. `nullable`) still apply below on top of the target.
    if (base !== undefined && s.type === undefined && s.anyOf === undefined && s.oneOf === undefined)
      return withNullable(base, s.nullable === true);
  }
  let types: Set<JsonType> | undefined;
  let any = false;
  const add = (t: JsonType): void => {
    (types ??= new Set()).add(t);
  };
  const t = s.type;
  if (typeof t === 'string' && JSON_TYPES.has(t)) add(t as JsonType);
  else if (Array.isArray(t))
    for (const x of t) if (typeof x === 'string' && JSON_TYPES.has(x)) add(x as JsonType);

  let values: unknown[] | undefined;
  if (Array.isArray(s.enum)) values = [...(s.enum as unknown[])];
  if ('const' in s) values = [s.const];

  if (types === undefined) {
    for (const k of ['anyOf', 'oneOf'] as const) {
      const alts = s[k];
      if (!Array.isArray(alts)) continue;
      for (const alt of alts) {
        const c = compile(alt, root, depth + 1);
        if (c === undefined || c.types === undefined) {
          if (c?.values === undefined) any = true;
          else for (const v of c.values) add(typeOfValue(v));
          if (c?.values) values = [...(values ?? []), ...c.values];
          continue;
        }
        for (const x of c.types) add(x);
        if (c.values) values = [...(values ?? []), ...c.values];
      }
    }
  }
  if (types === undefined && Array.isArray(s.allOf)) {
    for (const part of s.allOf) {
      const c = compile(part, root, depth + 1);
      if (c?.types) {
        types = new Set(c.types);
        break;
      }
    }
  }
  if (types === undefined && values !== undefined && values.length > 0)
    for (const v of values) add(typeOfValue(v));
  if (types === undefined && !any) {
    if (isObj(s.properties) || isObj(s.additionalProperties)) add('object');
    else if (s.items !== undefined || Array.isArray(s.prefixItems)) add('array');
  }
  if (s.nullable === true) add('null');
  if (any) types = undefined;
  if (types === undefined && values === undefined) return undefined;
  const out: { types?: Set<JsonType>; values?: unknown[] } = {};
  if (types !== undefined) out.types = types;
  if (values !== undefined) out.values = values;
  return out;
}

function withNullable(s: ValueSchema, nullable: boolean): ValueSchema {
  if (!nullable || s.types === undefined || s.types.has('null')) return s;
  return { ...s, types: new Set([...s.types, 'null']) };
}

/** How a value with this schema can be streamed (see the header). */
export function valueStreams(s: ValueSchema | undefined): 'string' | 'nullable' | 'typed' {
  if (s === undefined || s.types === undefined || !s.types.has('string')) return 'typed';
  if (s.values !== undefined && !s.values.every((v) => typeof v === 'string' || v === null)) return 'typed';
  return s.types.has('null') ? 'nullable' : 'string';
}

const NUM_RE = /^-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * JSON text for one complete value (`raw` after the family's own trimming), by the schema:
 * 1. the literal `null` (or Python `None` with `opts.python`) is JSON null when null is allowed;
 * 2. `enum`/`const`: the listed value the text spells (as a string, or as JSON);
 * 3. a value that may be a string stays the text as is (whitespace kept);
 * 4. numbers (`integer`, `number`), booleans (`true`/`false`, any case), objects and arrays
 *    (JSON, then the `opts` repairs) when their type is allowed;
 * 5. anything else stays the model's text, as a string.
 * Without a schema (or with one that allows any type): JSON, then the `opts` repairs, else the
 * text as a string.
 */
export function typeValue(raw: string, s: ValueSchema | undefined, opts: TypingOptions = {}): string {
  const t = trimWs(raw);
  const types = s?.types;
  if (types === undefined) {
    if (s?.values?.includes(raw)) return JSON.stringify(raw);
    const v = parseLoose(t, opts);
    return v === NOT_PARSED ? JSON.stringify(raw) : JSON.stringify(v);
  }
  if (types.has('null') && (t === 'null' || (opts.python === true && t === 'None'))) return 'null';
  if (s?.values !== undefined) {
    if (s.values.includes(raw)) return JSON.stringify(raw);
    if (s.values.includes(t)) return JSON.stringify(t);
    const v = parseLoose(t, opts);
    if (v !== NOT_PARSED && s.values.some((x) => sameJson(x, v))) return JSON.stringify(v);
  }
  if (types.has('string')) return JSON.stringify(raw);
  if ((types.has('integer') || types.has('number')) && NUM_RE.test(t)) {
    const n = Number(t);
    if (Number.isFinite(n)) return JSON.stringify(n);
  }
  if (types.has('boolean')) {
    const l = t.toLowerCase();
    if (l === 'true' || l === 'false') return l;
  }
  if (types.has('object') || types.has('array')) {
    const v = parseLoose(t, opts);
    if ((types.has('object') && isObj(v)) || (types.has('array') && Array.isArray(v)))
      return JSON.stringify(v);
  }
  return JSON.stringify(raw);
}

/** JSON, else a Python literal (opts.python), else escaped JSON (opts.unescape); NOT_PARSED otherwise. */
export function parseLoose(t: string, opts: TypingOptions = {}): Parsed | typeof NOT_PARSED {
  if (t.length === 0) return NOT_PARSED;
  try {
    return JSON.parse(t) as unknown;
  } catch {
    // not JSON; the repairs below
  }
  if (opts.python === true) {
    const v = parsePythonLiteral(t);
    if (v !== NOT_PARSED) return v;
  }
  if (opts.unescape === true && t.includes('\\"')) {
    const c = t.charCodeAt(0);
    if (c === 123 /* { */ || c === 91 /* [ */) {
      try {
        const inner: unknown = JSON.parse(`"${t}"`);
        if (typeof inner === 'string') return JSON.parse(inner) as unknown;
      } catch {
        // not escaped JSON either
      }
    }
  }
  return NOT_PARSED;
}

// ---- Python literals ------------------------------------------------------------------------

const PY_ESC: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  '0': '\0',
  '\\': '\\',
  "'": "'",
  '"': '"',
  a: '\x07',
  b: '\b',
  f: '\f',
  v: '\v',
  '\n': '',
};

class PyReader {
  i = 0;
  constructor(private readonly s: string) {}

  ws(): void {
    while (this.i < this.s.length && isWs(this.s.charCodeAt(this.i))) this.i++;
  }

  value(depth: number): unknown {
    if (depth > 64) throw new Error('too deep');
    this.ws();
    const s = this.s;
    const c = s[this.i];
    if (c === '{') return this.dict(depth);
    if (c === '[' || c === '(') return this.list(depth, c === '[' ? ']' : ')');
    if (c === "'" || c === '"') return this.str();
    const m = /^(?:True|False|None|-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)/.exec(
      s.slice(this.i, this.i + 64),
    );
    if (!m) throw new Error('not a literal');
    this.i += m[0].length;
    if (m[0] === 'True') return true;
    if (m[0] === 'False') return false;
    if (m[0] === 'None') return null;
    return Number(m[0]);
  }

  private dict(depth: number): Obj {
    const out: Obj = {};
    this.i++;
    for (;;) {
      this.ws();
      if (this.s[this.i] === '}') {
        this.i++;
        return out;
      }
      const k = this.value(depth + 1);
      if (typeof k !== 'string' && typeof k !== 'number') throw new Error('bad key');
      this.ws();
      if (this.s[this.i] !== ':') throw new Error('no colon');
      this.i++;
      out[String(k)] = this.value(depth + 1);
      this.ws();
      if (this.s[this.i] === ',') this.i++;
      else if (this.s[this.i] !== '}') throw new Error('bad dict');
    }
  }

  private list(depth: number, close: string): unknown[] {
    const out: unknown[] = [];
    this.i++;
    for (;;) {
      this.ws();
      if (this.s[this.i] === close) {
        this.i++;
        return out;
      }
      out.push(this.value(depth + 1));
      this.ws();
      if (this.s[this.i] === ',') this.i++;
      else if (this.s[this.i] !== close) throw new Error('bad list');
    }
  }

  private str(): string {
    const s = this.s;
    const q = s[this.i++];
    let out = '';
    let run = this.i;
    while (this.i < s.length) {
      const c = s[this.i];
      if (c === q) {
        out += s.slice(run, this.i);
        this.i++;
        return out;
      }
      if (c === '\\') {
        out += s.slice(run, this.i);
        const e = s[this.i + 1] ?? '';
        if (e === 'u' || e === 'x') {
          const len = e === 'u' ? 4 : 2;
          const hex = s.slice(this.i + 2, this.i + 2 + len);
          if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== len) throw new Error('bad escape');
          out += String.fromCharCode(parseInt(hex, 16));
          this.i += 2 + len;
        } else {
          out += PY_ESC[e] ?? '\\' + e;
          this.i += 2;
        }
        run = this.i;
        continue;
      }
      this.i++;
    }
    throw new Error('unterminated string');
  }
}

/** A Python literal (see the header) as a JSON value, or NOT_PARSED. */
export function parsePythonLiteral(text: string): Parsed | typeof NOT_PARSED {
  const r = new PyReader(text);
  try {
    const v = r.value(0);
    r.ws();
    return r.i === text.length ? v : NOT_PARSED;
  } catch {
    return NOT_PARSED;
  }
}
