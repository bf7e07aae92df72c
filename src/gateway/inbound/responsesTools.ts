/**
 * Responses tools a backend cannot take as they are, flattened into function tools and mapped back.
 *
 * Codex (≥ 0.120) groups tools into namespaces — `{"type":"namespace","name":"mcp__wordbook",
 * "tools":[{"type":"function","name":"lookup_word",…}]}`: each MCP server, and its multi-agent
 * tools — and answers a call of one with a `function_call` item carrying `namespace` beside the
 * member's `name`. With a model it knows, it also offers `{"type":"tool_search","execution":
 * "client",…}`: the model searches deferred tools, Codex answers with a `tool_search_output` item
 * whose `tools` (namespaces or functions) become callable from then on.
 *
 * Backends know only flat function tools, so:
 * - a namespace member becomes the function `<namespace>__<name>` (Codex's own flat spelling,
 *   `ToolName::canonical_flat_name`: underscores at the seam trimmed), made unique against every
 *   other tool (`_2`, `_3`, … on a clash) and cut to 64 characters (OpenAI's limit) with a hash;
 * - `tool_search` (client execution) becomes a function of the same name and parameters;
 * - history: a `function_call` with `namespace` → that flat name; `tool_search_call` → a call of
 *   the search function; `tool_search_output` → its result (the loaded tools' flat names and
 *   descriptions as JSON) and its tools join the backend's tool list;
 * - output: the request carries the table as plain data (`ClientToolTable`: it may come back from
 *   the body worker, which hands over data only — no methods, no class instances); the main thread
 *   reads it through `clientToolLookup`, the one reader for the worker and the inline path alike,
 *   and the encoder asks that lookup for a flat name and writes a namespace member's call as
 *   `function_call {name, namespace}` and a search as `tool_search_call {execution: "client",
 *   arguments}` (src/encode/responsesSse.ts).
 *
 * Freeform `custom` tools (Codex's `apply_patch` for GPT-5 models: `{"type":"custom","name",
 * "description","format":{"type":"grammar","syntax":"lark","definition"}}`) take raw text, not
 * JSON. The backend gets a function of the same name with one string parameter `input` (the
 * grammar in its description); its call goes back as `custom_tool_call {name, input}` and
 * `custom_tool_call` / `custom_tool_call_output` history items map to that call and its result.
 */
import { createHash } from 'node:crypto';
import { type ClientToolRef, type ClientToolTable, isObj, type ToolChoice, type ToolParam } from '../canonical';
import { invalidRequest } from '../errors';
import { allowedTools, parseFunctionTools, parseOpenAIToolChoice } from './chat';
import type { ClientToolLookup } from './types';
import { Counter, nonEmptyStr } from './validate';

/** The client-tool table (plain data) and its entries are defined with the canonical request. */
export type { ClientToolRef, ClientToolTable } from '../canonical';

/** The reader of that table (types.ts, beside the encode options that carry it). */
export type { ClientToolLookup } from './types';

/**
 * The one way the main thread reads a request's client-tool table, whichever path translated the
 * request (body worker or inline): the plain table → a lookup (undefined when nothing maps back).
 */
export function clientToolLookup(table: ClientToolTable | undefined): ClientToolLookup | undefined {
  if (table === undefined || table.length === 0) return undefined;
  const byFlat = new Map<string, ClientToolRef>();
  for (const { flat, ref } of table) byFlat.set(flat, ref);
  return (flat) => byFlat.get(flat);
}

/** Codex's namespace for top-level tools (`DEFAULT_FUNCTION_NAMESPACE`): its members keep their own names. */
const DEFAULT_NAMESPACE = 'functions';

/** The one parameter of a freeform custom tool offered as a function. */
const CUSTOM_INPUT_SCHEMA = { type: 'object', properties: { input: { type: 'string', description: 'The raw input text.' } }, required: ['input'] };

/** OpenAI's limit for a function name (Anthropic and Gemini allow at least as many). */
const MAX_NAME = 64;

/** Flat backend names ↔ the client's tool names, for one request. */
export class ClientToolNames {
  private readonly refs = new Map<string, ClientToolRef>();
  private readonly byMember = new Map<string, string>();
  private readonly taken = new Set<string>();

  /** True when some tool needs mapping back (else the encoder writes plain function calls). */
  get size(): number {
    return this.refs.size;
  }

  /** The client's name for a backend tool name (undefined: a plain function). */
  ref(flat: string): ClientToolRef | undefined {
    return this.refs.get(flat);
  }

  /** The mapping as plain data, for the canonical request (copies: later changes do not leak in). */
  table(): ClientToolTable {
    return [...this.refs].map(([flat, ref]) => ({ flat, ref: { ...ref } }));
  }

  /** A plain function tool's name is taken as it is. */
  reserve(name: string): void {
    this.taken.add(name);
  }

  has(name: string): boolean {
    return this.taken.has(name);
  }

  /**
   * The flat name of a namespace member (the same one for the same member within a request); a
   * member of Codex's default namespace `functions` keeps its own name (unless that clashes).
   */
  member(namespace: string, name: string, kind: 'function' | 'custom' = 'function'): string {
    const key = `${namespace}\u0000${name}`;
    const known = this.byMember.get(key);
    if (known !== undefined) return known;
    const flat = this.unique(namespace === DEFAULT_NAMESPACE ? name : `${namespace.replace(/_+$/, '')}__${name.replace(/^_+/, '')}`);
    this.byMember.set(key, flat);
    this.refs.set(flat, kind === 'custom' ? { kind: 'custom', name, namespace } : { kind: 'namespace', namespace, name });
    return flat;
  }

  /**
   * The backend name of a call in the history that carries a namespace. A top-level function can
   * come back namespaced too — in Codex's default namespace `functions`, or, after OpenAI's own
   * tool search, with `namespace` equal to its name (openai-agents-python
   * `is_reserved_synthetic_tool_namespace`): a plain tool of that name is meant then.
   */
  called(namespace: string, name: string, kind: 'function' | 'custom' = 'function'): string {
    const plain = (namespace === DEFAULT_NAMESPACE || namespace === name) && !this.byMember.has(`${namespace}\u0000${name}`);
    if (plain && kind === 'function' && this.taken.has(name) && this.refs.get(name) === undefined) return name;
    if (plain && kind === 'custom') {
      const flat = this.find({ kind: 'custom', name });
      if (flat !== undefined) return flat;
    }
    return this.member(namespace, name, kind);
  }

  /** The backend name of a freeform custom tool (its own name unless that clashes). */
  custom(name: string): string {
    for (const [flat, r] of this.refs) if (r.kind === 'custom' && r.name === name && r.namespace === undefined) return flat;
    const flat = this.unique(name);
    this.refs.set(flat, { kind: 'custom', name });
    return flat;
  }

  /** The flat name of a member, a custom tool or the tool search already known (never minted). */
  find(want: ClientToolRef): string | undefined {
    if (want.kind !== 'tool_search' && want.namespace !== undefined) return this.byMember.get(`${want.namespace}\u0000${want.name}`);
    for (const [flat, r] of this.refs) if (r.kind === want.kind && (r.kind !== 'custom' || (want.kind === 'custom' && r.name === want.name && r.namespace === undefined))) return flat;
    return undefined;
  }

  /** The flat name of the client-executed tool search. */
  toolSearch(): string {
    for (const [flat, r] of this.refs) if (r.kind === 'tool_search') return flat;
    const flat = this.unique('tool_search');
    this.refs.set(flat, { kind: 'tool_search' });
    return flat;
  }

  private unique(base: string): string {
    const fit = (s: string): string => (s.length <= MAX_NAME ? s : `${s.slice(0, MAX_NAME - 9)}_${createHash('sha256').update(s).digest('hex').slice(0, 8)}`);
    let name = fit(base);
    for (let n = 2; this.taken.has(name); n++) name = fit(`${base}_${n}`);
    this.taken.add(name);
    return name;
  }
}

/**
 * Tool types that run at the provider (OpenAI), not at the client: Codex offers `web_search` by
 * default. No backend behind the gateway can run them, so they are left out (named in
 * `droppedTools`) instead of failing the whole request. Any other unknown type is a 400.
 */
export const HOSTED_TOOL_TYPES = new Set([
  'web_search',
  'web_search_preview',
  'file_search',
  'code_interpreter',
  'image_generation',
  'computer_use_preview',
  'mcp',
]);

/** The request's tools: plain functions, flattened namespaces and tool search; hosted ones dropped. */
export class ResponsesTools {
  readonly names = new ClientToolNames();
  readonly list: ToolParam[] = [];
  readonly dropped: string[] = [];
  /** Set by an `allowed_tools` tool_choice: the only backend tools to send. */
  allowed?: Set<string>;

  constructor(private readonly count: Counter) {}

  /** The request's `tools` field. */
  parse(v: unknown): void {
    if (v === undefined || v === null) return;
    if (!Array.isArray(v)) throw invalidRequest('tools: expected an array');
    const plain: unknown[] = [];
    const groups: { at: string; t: Record<string, unknown> }[] = [];
    v.forEach((t, i) => {
      if (!isObj(t) || typeof t.type !== 'string' || t.type === 'function') plain.push(t);
      else if (t.type === 'namespace' || t.type === 'tool_search' || t.type === 'custom') groups.push({ at: `tools[${i}]`, t });
      else if (HOSTED_TOOL_TYPES.has(t.type)) this.dropped.push(t.type);
      else plain.push(t); // parseFunctionTools names the unsupported type
    });
    for (const f of parseFunctionTools(plain, this.count, 'flat') ?? []) this.addPlain(f);
    for (const g of groups) this.addGroup(g.t, g.at);
  }

  /**
   * The request's `tool_choice`, naming the tool the backend knows (call after the input is read:
   * a `tool_search_output` adds tools). Besides "auto" / "none" / "required" and
   * `{type: "function", name}` of a plain function it takes a namespace member as
   * `{type: "function", namespace, name}` or by its qualified name `{type: "function", name:
   * "<namespace>.<name>"}` (what the OpenAI Agents SDK sends), `{type: "custom", name}` and
   * `{type: "tool_search"}` (the client tool search): each becomes the member's flat backend
   * name. Anything that names no offered tool is a 400 that says which tool and why.
   */
  toolChoice(v: unknown, parallel: unknown): ToolChoice | undefined {
    const tools = this.list.length > 0 ? this.list : undefined;
    if (isObj(v) && v.type === 'allowed_tools') {
      const a = allowedTools(v, tools, (t) => {
        const type = String(t.type);
        if (HOSTED_TOOL_TYPES.has(type) || (type !== 'function' && type !== 'custom' && this.dropped.includes(type))) return undefined;
        const e = type === 'function' && isObj(t.function) && t.name === undefined ? { ...t, name: t.function.name } : t;
        return type === 'function' && typeof e.namespace !== 'string' && this.list.some((x) => x.name === e.name) ? String(e.name) : this.chosen(e);
      });
      this.allowed = new Set(a.tools.map((t) => t.name));
      return parseOpenAIToolChoice(a.mode, parallel, a.tools);
    }
    // The Chat spelling {type: "function", function: {name}} is accepted here too.
    if (isObj(v) && v.type === 'function' && isObj(v.function) && v.name === undefined) v = { ...v, name: v.function.name };
    if (!isObj(v) || (v.type === 'function' && typeof v.namespace !== 'string' && this.list.some((t) => t.name === v.name))) return parseOpenAIToolChoice(v, parallel, tools);
    const flat = this.chosen(v);
    return parseOpenAIToolChoice({ type: 'function', name: flat }, parallel, tools);
  }

  /** The flat name a tool_choice object names (400 when it names no offered tool). */
  private chosen(v: Record<string, unknown>): string {
    const offered = (flat: string | undefined, what: string): string => {
      if (flat === undefined || !this.list.some((t) => t.name === flat)) throw invalidRequest(`tool_choice: no ${what} in tools`);
      return flat;
    };
    const type = String(v.type);
    if (type === 'function') {
      const name = nonEmptyStr(v.name, 'tool_choice.name');
      if (v.namespace !== undefined && v.namespace !== null) {
        const namespace = nonEmptyStr(v.namespace, 'tool_choice.namespace');
        return offered(this.names.find({ kind: 'namespace', namespace, name }), `function ${JSON.stringify(name)} in namespace ${JSON.stringify(namespace)}`);
      }
      const dot = name.lastIndexOf('.');
      if (dot > 0 && dot < name.length - 1) {
        const ref: ClientToolRef = { kind: 'namespace', namespace: name.slice(0, dot), name: name.slice(dot + 1) };
        return offered(this.names.find(ref), `function ${JSON.stringify(ref.name)} in namespace ${JSON.stringify(ref.namespace)}`);
      }
      throw invalidRequest(`tool_choice: no tool named ${JSON.stringify(name)} in tools (name a namespace member as {"type": "function", "namespace": …, "name": …} or "<namespace>.<name>")`);
    }
    if (type === 'custom') {
      const name = nonEmptyStr(v.name, 'tool_choice.name');
      if (v.namespace !== undefined && v.namespace !== null) {
        const namespace = nonEmptyStr(v.namespace, 'tool_choice.namespace');
        return offered(this.names.find({ kind: 'custom', namespace, name }), `custom tool ${JSON.stringify(name)} in namespace ${JSON.stringify(namespace)}`);
      }
      return offered(this.names.find({ kind: 'custom', name }), `custom tool named ${JSON.stringify(name)}`);
    }
    if (type === 'tool_search') {
      if (this.dropped.includes('tool_search') && this.names.find({ kind: 'tool_search' }) === undefined)
        throw invalidRequest('tool_choice: {"type": "tool_search"} names the server-executed tool search, which this gateway leaves out (no backend behind it can run it); offer {"type": "tool_search", "execution": "client"} instead');
      return offered(this.names.find({ kind: 'tool_search' }), 'client tool_search ({"type": "tool_search", "execution": "client"})');
    }
    if (type === 'namespace') throw invalidRequest('tool_choice: a namespace cannot be forced as a whole; name one of its functions as {"type": "function", "namespace": …, "name": …}');
    if (HOSTED_TOOL_TYPES.has(type) || this.dropped.includes(type))
      throw invalidRequest(`tool_choice: {"type": ${JSON.stringify(type)}} names a provider-hosted tool, which this gateway leaves out (no backend behind it can run it)`);
    throw invalidRequest('tool_choice: must be "auto", "none", "required", {"type": "function", "name"} (with "namespace" for a namespace member), {"type": "custom", "name"} or {"type": "tool_search"}');
  }

  /** The tools a `tool_search_output` loaded (namespaces or functions); returns their flat names. */
  load(tools: unknown, where: string): ToolParam[] {
    if (!Array.isArray(tools)) throw invalidRequest(`${where}: expected an array of tools`);
    const before = this.list.length;
    tools.forEach((t, i) => {
      if (isObj(t) && t.type === 'namespace') this.addGroup(t, `${where}[${i}]`);
      else {
        const [f] = parseFunctionTools([t], this.count, 'flat') ?? [];
        if (f && !this.names.has(f.name)) this.addPlain(f);
      }
    });
    return this.list.slice(before);
  }

  private addPlain(f: ToolParam): void {
    this.names.reserve(f.name);
    this.list.push(f);
  }

  private addGroup(t: Record<string, unknown>, at: string): void {
    if (t.type === 'custom') {
      this.addCustom(t, this.names.custom(nonEmptyStr(t.name, `${at}.name`)));
      return;
    }
    if (t.type === 'tool_search') {
      // OpenAI runs the search itself unless `execution` says "client" (ToolSearchTool: "server"
      // is the default); no backend behind the gateway can, so it is left out (docs/gateway.md).
      if (t.execution !== 'client') {
        this.dropped.push('tool_search');
        return;
      }
      const params = t.parameters ?? { type: 'object', properties: {} };
      if (!isObj(params)) throw invalidRequest(`${at}.parameters: expected a JSON Schema object`);
      const flat = this.names.toolSearch();
      if (this.list.some((x) => x.name === flat)) return;
      const tool: ToolParam = { name: flat, input_schema: params };
      if (typeof t.description === 'string') tool.description = t.description;
      this.count.chars += (tool.description?.length ?? 0) + JSON.stringify(params).length;
      this.list.push(tool);
      return;
    }
    const namespace = nonEmptyStr(t.name, `${at}.name`);
    if (!Array.isArray(t.tools)) throw invalidRequest(`${at}.tools: expected an array of function tools`);
    // Members are functions or freeform custom tools (NamespaceTool.tools; Codex's responses-lite
    // `functions` namespace holds apply_patch).
    const customs = t.tools.flatMap((m, j) => (isObj(m) && m.type === 'custom' ? [{ m, j }] : []));
    for (const f of parseFunctionTools(t.tools.filter((m) => !(isObj(m) && m.type === 'custom')), this.count, 'flat') ?? []) {
      const flat = this.names.member(namespace, f.name);
      if (!this.list.some((x) => x.name === flat)) this.list.push({ ...f, name: flat });
    }
    for (const { m, j } of customs) {
      const flat = this.names.member(namespace, nonEmptyStr(m.name, `${at}.tools[${j}].name`), 'custom');
      if (!this.list.some((x) => x.name === flat)) this.addCustom(m, flat);
    }
  }

  /** A freeform custom tool as a function with one string parameter `input` (grammar in its description). */
  private addCustom(t: Record<string, unknown>, flat: string): void {
    const format = isObj(t.format) ? t.format : undefined;
    const grammar = format && typeof format.definition === 'string' ? `\n\nThe input follows this ${typeof format.syntax === 'string' ? format.syntax : ''} grammar:\n${format.definition}` : '';
    const description = `${typeof t.description === 'string' ? t.description : ''}\n\nPass the raw input as the string parameter "input" (not JSON-encoded content).${grammar}`.trim();
    this.count.chars += flat.length + description.length;
    this.list.push({ name: flat, description, input_schema: CUSTOM_INPUT_SCHEMA });
  }
}
