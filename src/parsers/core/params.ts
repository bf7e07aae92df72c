/**
 * Builds a call's argument JSON from XML-ish parameters (Qwen3-Coder `<parameter=k>`, GLM
 * `<arg_key>/<arg_value>`, DSML `<parameter name=… string=…>`), streaming it as fragments:
 * `{"k":` when a parameter opens, the value as it arrives when it is a string (escaped, with the
 * family's whitespace trimming), or once the parameter closes for typed values, and `}` at the
 * end of the call.
 *
 * Value typing (docs/parsers.md): with a tool schema, the parameter's JSON-Schema `type` decides;
 * without one, the family's rule (`string` or `auto`). `auto` keeps a value as a string unless the
 * whole trimmed value is JSON (number, true/false/null, object, array, quoted string) or a Python
 * literal `True`/`False`/`None`; a value whose first character cannot start JSON streams as a
 * string right away.
 */
import type { ToolSpecLike } from '../types';
import { escapeJsonPiece } from './json';
import { isWs } from './markers';

export type ValueType = 'string' | 'auto' | 'number' | 'integer' | 'boolean' | 'object' | 'array' | 'json';
/** 'all': strip surrounding whitespace; 'newline': strip one leading and one trailing \n; 'none'. */
export type Trim = 'all' | 'newline' | 'none';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** name → (param → declared types) from tool specs in the usual shapes. */
export class ToolSchemas {
  private readonly map = new Map<string, Map<string, string[]>>();

  constructor(tools: readonly ToolSpecLike[] | undefined) {
    for (const t of tools ?? []) {
      if (!isObj(t)) continue;
      const fn = isObj(t.function) ? t.function : undefined;
      const name = typeof t.name === 'string' ? t.name : typeof fn?.name === 'string' ? fn.name : undefined;
      const schema = t.parameters ?? t.input_schema ?? t.inputSchema ?? fn?.parameters;
      if (name === undefined || !isObj(schema) || !isObj(schema.properties)) continue;
      const params = new Map<string, string[]>();
      for (const [k, v] of Object.entries(schema.properties)) params.set(k, schemaTypes(v));
      this.map.set(name, params);
    }
  }

  get size(): number {
    return this.map.size;
  }

  /** The value type for a parameter, or `fallback` when the tool or parameter is unknown. */
  typeOf(tool: string, param: string, fallback: ValueType): ValueType {
    const types = this.map.get(tool)?.get(param);
    if (types === undefined || types.length === 0) return fallback;
    if (types.includes('string')) return 'string';
    const t = types.find((x) => x !== 'null') ?? 'null';
    if (t === 'integer' || t === 'number' || t === 'boolean' || t === 'object' || t === 'array') return t;
    return 'json';
  }
}

function schemaTypes(s: unknown): string[] {
  if (!isObj(s)) return [];
  const t = s.type;
  if (typeof t === 'string') return [t];
  if (Array.isArray(t)) return t.filter((x): x is string => typeof x === 'string');
  if (Array.isArray(s.enum) && s.enum.length > 0 && s.enum.every((x) => typeof x === 'string'))
    return ['string'];
  for (const k of ['anyOf', 'oneOf']) {
    const alts = s[k];
    if (Array.isArray(alts)) return alts.flatMap(schemaTypes);
  }
  if (isObj(s.properties)) return ['object'];
  return [];
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

/** Strip whitespace (space, tab, CR, LF) at both ends. */
export function trimWs(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && isWs(s.charCodeAt(a))) a++;
  while (b > a && isWs(s.charCodeAt(b - 1))) b--;
  return s.slice(a, b);
}

function applyTrim(v: string, trim: Trim): string {
  if (trim === 'all') return trimWs(v);
  if (trim === 'newline') {
    if (v.startsWith('\n')) v = v.slice(1);
    if (v.endsWith('\n')) v = v.slice(0, -1);
  }
  return v;
}

/**
 * One parameter value, fed in pieces. String values stream (escaped) as they arrive, holding back
 * only what trimming might remove (leading/trailing whitespace or newline) and a trailing high
 * surrogate; typed values are collected and converted at `end`.
 */
export class ValueSink {
  private mode: 'undecided' | 'stream' | 'buffer';
  private started = false; // a non-whitespace character was seen
  private opened = false; // the opening quote was emitted
  private lead = ''; // leading whitespace not yet emitted
  private hold = ''; // trailing text not yet emitted
  private parts: string[] = [];
  private first = true;

  constructor(
    private readonly emit: (s: string) => void,
    private readonly type: ValueType,
    private readonly trim: Trim,
  ) {
    this.mode = type === 'string' ? 'stream' : type === 'auto' ? 'undecided' : 'buffer';
  }

  push(s: string): void {
    if (s.length === 0) return;
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
    if (this.mode === 'buffer') {
      // With 'newline' trimming the leading newline was already dropped by push (not in buffer
      // mode from the start, which only typed values use: those are trimmed whole).
      const v = this.parts.join('');
      this.parts = [];
      const t = this.type === 'auto' ? 'json' : this.type;
      this.emit(convertValue(this.first ? applyTrim(v, this.trim) : trimTail(v, this.trim), t));
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
  ) {}

  get params(): number {
    return this.count;
  }

  /** A parameter opens; `type` overrides the schema/fallback typing (DSML string="true"). */
  open(name: string, type?: ValueType): ValueSink {
    this.emit((this.count === 0 ? '{' : ',') + JSON.stringify(name) + ':');
    this.count++;
    const t = type ?? this.schemas.typeOf(this.tool, name, this.fallback);
    this.value = new ValueSink(this.emit, t, this.trim);
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
