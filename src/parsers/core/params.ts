/**
 * Builds a call's argument JSON from XML-ish parameters (Qwen3-Coder `<parameter=k>`, GLM
 * `<arg_key>/<arg_value>`, DSML `<parameter name=… string=…>`), streaming it as fragments:
 * `{"k":` when a parameter opens, the value as it arrives when it is a string (escaped, with the
 * family's whitespace trimming), or once the parameter closes for typed values, and `}` at the
 * end of the call.
 *
 * Value typing (docs/parsers.md, "Value typing"): with a tool schema, the parameter's compiled
 * schema decides (core/schemaValue.ts: type arrays, anyOf/oneOf with null, enum/const, $ref);
 * without one, the family's rule (`string` or `auto`). `auto` keeps a value as a string unless the
 * whole trimmed value is JSON (number, true/false/null, object, array, quoted string) or a Python
 * literal `True`/`False`/`None` (plus the family's repairs); a value whose first character cannot
 * start JSON streams as a string right away.
 *
 * Exported for family code: `ToolSchemas` (`schemaOf`, `typeOf`, `hasTool`), `ValueSink`,
 * `ParamObject`, `convertValue` (the older single-type conversion), `trimWs`, and the types
 * `ValueType`, `Trim`, `TypingOptions`, `ValueSchema`.
 */
import type { ToolSpecLike } from '../types';
import { escapeJsonPiece } from './json';
import { isWs, trimWs } from './markers';
import {
  compileSchema,
  NOT_PARSED,
  parseLoose,
  typeValue,
  valueStreams,
  type TypingOptions,
  type ValueSchema,
} from './schemaValue';

export { trimWs };
export type { TypingOptions, ValueSchema };

export type ValueType = 'string' | 'auto' | 'number' | 'integer' | 'boolean' | 'object' | 'array' | 'json';
/** 'all': strip surrounding whitespace; 'newline': strip one leading and one trailing \n; 'none'. */
export type Trim = 'all' | 'newline' | 'none';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * name → (param → compiled schema) from tool specs in the usual shapes (OpenAI, Anthropic, MCP,
 * bare). `schemaOf` gives the compiled `ValueSchema` (core/schemaValue.ts); `typeOf` keeps the
 * older single-type answer for callers that still want it.
 */
export class ToolSchemas {
  private readonly map = new Map<string, Map<string, ValueSchema | undefined>>();
  private readonly names = new Set<string>();

  constructor(tools: readonly ToolSpecLike[] | undefined) {
    for (const t of tools ?? []) {
      if (!isObj(t)) continue;
      const fn = isObj(t.function) ? t.function : undefined;
      const name = typeof t.name === 'string' ? t.name : typeof fn?.name === 'string' ? fn.name : undefined;
      if (name === undefined) continue;
      this.names.add(name);
      const schema = t.parameters ?? t.input_schema ?? t.inputSchema ?? fn?.parameters;
      if (!isObj(schema) || !isObj(schema.properties)) continue;
      const params = new Map<string, ValueSchema | undefined>();
      for (const [k, v] of Object.entries(schema.properties)) params.set(k, compileSchema(v, schema));
      this.map.set(name, params);
    }
  }

  /** Number of tools with a parameter schema. */
  get size(): number {
    return this.map.size;
  }

  /** Number of named tools (with or without a schema). */
  get toolCount(): number {
    return this.names.size;
  }

  /** Whether a tool of that name was given. */
  hasTool(name: string): boolean {
    return this.names.has(name);
  }

  /** The compiled schema of a parameter, or undefined when the tool or parameter is unknown. */
  schemaOf(tool: string, param: string): ValueSchema | undefined {
    return this.map.get(tool)?.get(param);
  }

  /** The value type for a parameter, or `fallback` when the tool or parameter is unknown. */
  typeOf(tool: string, param: string, fallback: ValueType): ValueType {
    const types = this.schemaOf(tool, param)?.types;
    if (types === undefined || types.size === 0) return fallback;
    if (types.has('string')) return 'string';
    const t = [...types].find((x) => x !== 'null') ?? 'null';
    if (t === 'integer' || t === 'number' || t === 'boolean' || t === 'object' || t === 'array') return t;
    return 'json';
  }
}

/** Convert a complete (trimmed) value according to its type; returns JSON text. */
export function convertValue(v: string, type: ValueType): string {
  const t = v.trim();
  switch (type) {
    case 'string':
      return JSON.stringify(v);
    case 'integer':
    case 'number': {
      if (/^-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/.test(t)) {
        const n = Number(t);
        if (Number.isFinite(n))
          return type === 'integer' && Number.isInteger(n) ? String(n) : JSON.stringify(n);
      }
      return JSON.stringify(v);
    }
    case 'boolean': {
      const l = t.toLowerCase();
      if (l === 'true' || l === 'false') return l;
      return JSON.stringify(v);
    }
    default: {
      const py = t === 'True' ? 'true' : t === 'False' ? 'false' : t === 'None' ? 'null' : undefined;
      if (py !== undefined) return py;
      try {
        const parsed: unknown = JSON.parse(t);
        if ((type === 'object' && !isObj(parsed)) || (type === 'array' && !Array.isArray(parsed))) {
          return JSON.stringify(v);
        }
        return JSON.stringify(parsed);
      } catch {
        return JSON.stringify(v);
      }
    }
  }
}

/** Characters a JSON value can start with (plus Python literals T/F/N). */
function canStartJson(c: number): boolean {
  return (
    c === 123 ||
    c === 91 ||
    c === 34 ||
    c === 45 ||
    (c >= 48 && c <= 57) ||
    c === 116 ||
    c === 102 ||
    c === 110 ||
    c === 84 ||
    c === 70 ||
    c === 78
  );
}

function applyTrim(v: string, trim: Trim): string {
  if (trim === 'all') return trimWs(v);
  if (trim === 'newline') {
    if (v.startsWith('\n')) v = v.slice(1);
    if (v.endsWith('\n')) v = v.slice(0, -1);
  }
  return v;
}

/** Literal spellings of null a nullable string value is held for (`None` only with Python literals). */
function maybeNull(pending: string, python: boolean): 'yes' | 'prefix' | 'no' {
  const core = trimWs(pending);
  if (core.length === 0) return 'prefix';
  const full = core === 'null' || (python && core === 'None');
  if (full) return 'yes';
  let a = 0;
  while (isWs(pending.charCodeAt(a))) a++;
  const trailingWs = a + core.length < pending.length;
  if (!trailingWs && ('null'.startsWith(core) || (python && 'None'.startsWith(core)))) return 'prefix';
  return 'no';
}

/** A nullable string value held longer than this (whitespace around `null`) streams as a string. */
const NULL_HOLD_CAP = 256;

/**
 * One parameter value, fed in pieces. String values stream (escaped) as they arrive, holding back
 * only what trimming might remove (leading/trailing whitespace or newline) and a trailing high
 * surrogate; typed values are collected and converted at `end`.
 *
 * With a compiled `schema` (core/schemaValue.ts) the schema decides: a value that may only be a
 * string streams; one that may be a string or null is held while it can still be the literal
 * `null` (at most a few characters), then streams; anything else is typed by `typeValue` at
 * `end`. Without a schema, `type` decides as before (`auto`: the schema-less rule).
 */
export class ValueSink {
  private mode: 'undecided' | 'stream' | 'buffer' | 'nullable';
  private started = false; // a non-whitespace character was seen
  private opened = false; // the opening quote was emitted
  private lead = ''; // leading whitespace not yet emitted
  private hold = ''; // trailing text not yet emitted
  private parts: string[] = [];
  private first = true;
  private pending = ''; // nullable: the raw text while it can still be `null`

  constructor(
    private readonly emit: (s: string) => void,
    private readonly type: ValueType,
    private readonly trim: Trim,
    private readonly schema?: ValueSchema,
    private readonly opts: TypingOptions = {},
  ) {
    if (schema !== undefined) {
      const how = valueStreams(schema);
      this.mode = how === 'string' ? 'stream' : how === 'nullable' ? 'nullable' : 'buffer';
    } else this.mode = type === 'string' ? 'stream' : type === 'auto' ? 'undecided' : 'buffer';
  }

  push(s: string): void {
    if (s.length === 0) return;
    if (this.mode === 'nullable') {
      this.pending += s;
      if (this.pending.length <= NULL_HOLD_CAP && maybeNull(this.pending, this.opts.python === true) !== 'no')
        return;
      this.mode = 'stream';
      s = this.pending;
      this.pending = '';
    }
    if (this.mode === 'buffer') {
      this.parts.push(s);
      return;
    }
    if (this.first) {
      this.first = false;
      if (this.trim === 'newline' && s.charCodeAt(0) === 10) s = s.slice(1);
    }
    if (!this.started) {
      let i = 0;
      while (i < s.length && isWs(s.charCodeAt(i))) i++;
      if (this.trim !== 'all') this.lead += s.slice(0, i);
      if (i >= s.length) return;
      this.started = true;
      if (this.mode === 'undecided') {
        if (canStartJson(s.charCodeAt(i))) {
          this.mode = 'buffer';
          this.parts.push(this.lead + s.slice(i));
          this.lead = '';
          return;
        }
        this.mode = 'stream';
      }
      s = this.lead + s.slice(i);
      this.lead = '';
    }
    this.streamPiece(s);
  }

  private streamPiece(s: string): void {
    let text = this.hold + s;
    let cut = text.length;
    if (this.trim === 'all') {
      while (cut > 0 && isWs(text.charCodeAt(cut - 1))) cut--;
    } else if (this.trim === 'newline' && text.charCodeAt(cut - 1) === 10) {
      cut--;
    }
    if (cut > 0) {
      const c = text.charCodeAt(cut - 1);
      if (c >= 0xd800 && c <= 0xdbff) cut--;
    }
    this.hold = text.slice(cut);
    text = text.slice(0, cut);
    if (text.length === 0) return;
    if (!this.opened) {
      this.opened = true;
      this.emit('"');
    }
    this.emit(escapeJsonPiece(text));
  }

  /** The parameter closed: emit the rest of the value. */
  end(): void {
    if (this.mode === 'nullable') {
      const p = this.pending;
      this.pending = '';
      if (maybeNull(p, this.opts.python === true) === 'yes') {
        this.emit('null');
        return;
      }
      this.mode = 'stream';
      this.push(p);
    }
    if (this.mode === 'buffer') {
      // With 'newline' trimming the leading newline was already dropped by push (not in buffer
      // mode from the start, which only typed values use: those are trimmed whole).
      const raw = this.parts.join('');
      this.parts = [];
      const v = this.first ? applyTrim(raw, this.trim) : trimTail(raw, this.trim);
      this.emit(this.typed(v));
      return;
    }
    let rest = (this.started ? '' : this.lead) + this.hold;
    this.lead = '';
    this.hold = '';
    rest = trimTail(rest, this.trim);
    if (!this.opened) {
      this.opened = true;
      this.emit('"' + escapeJsonPiece(rest) + '"');
      return;
    }
    this.emit(escapeJsonPiece(rest) + '"');
  }

  private typed(v: string): string {
    if (this.schema !== undefined) return typeValue(v, this.schema, this.opts);
    const t = this.type === 'auto' ? 'json' : this.type;
    const out = convertValue(v, t);
    // The family's repairs (Python literals, escaped JSON) for what plain JSON did not read.
    if ((t === 'json' || t === 'object' || t === 'array') && out.charCodeAt(0) === 34 /* " */) {
      const r = parseLoose(trimWs(v), this.opts);
      if (r !== NOT_PARSED && typeof r === 'object' && r !== null) {
        if (t === 'json' || (t === 'array') === Array.isArray(r)) return JSON.stringify(r);
      }
    }
    return out;
  }
}

function trimTail(v: string, trim: Trim): string {
  if (trim === 'all') {
    let b = v.length;
    while (b > 0 && isWs(v.charCodeAt(b - 1))) b--;
    return v.slice(0, b);
  }
  if (trim === 'newline' && v.endsWith('\n')) return v.slice(0, -1);
  return v;
}

/** Streams `{"k1":v1,"k2":v2}` for one call. */
export class ParamObject {
  private count = 0;
  private value: ValueSink | null = null;

  constructor(
    private readonly emit: (s: string) => void,
    private readonly schemas: ToolSchemas,
    private readonly tool: string,
    private readonly fallback: ValueType,
    private readonly trim: Trim,
    /** The family's typing repairs (Python literals, escaped JSON); see core/schemaValue.ts. */
    private readonly opts: TypingOptions = {},
  ) {}

  get params(): number {
    return this.count;
  }

  /**
   * A parameter opens. `type` overrides the schema (DSML `string="true"`); otherwise the tool's
   * schema for the parameter types it, and the family's `fallback` applies without one.
   */
  open(name: string, type?: ValueType): ValueSink {
    this.emit((this.count === 0 ? '{' : ',') + JSON.stringify(name) + ':');
    this.count++;
    const schema = type === undefined ? this.schemas.schemaOf(this.tool, name) : undefined;
    this.value = new ValueSink(this.emit, type ?? this.fallback, this.trim, schema, this.opts);
    return this.value;
  }

  closeValue(): void {
    this.value?.end();
    this.value = null;
  }

  /** The call closed. */
  close(): void {
    if (this.value) this.closeValue();
    this.emit(this.count === 0 ? '{}' : '}');
  }
}
