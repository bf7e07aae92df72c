/**
 * The tool layer: tool definitions with a Standard Schema input validator (zod 4, zod 3.24+,
 * valibot, arktype, …), a registry, input validation, running a tool with its timeout and
 * AbortSignal, and provider tool specs from the input's JSON Schema (SPEC §6.1).
 *
 * JSON Schema for the provider tool specs: the `jsonSchema` option when given, else the
 * validator's own converter (`~standard.jsonSchema`, Standard JSON Schema v1: zod ≥ 4.2,
 * arktype). A validator without one (zod 3, valibot) needs `jsonSchema`; defineTool says so.
 *
 * Result convention (one rule, no guessing):
 * - `run` resolves with a **string** (given to the model as is) or any other
 *   **JSON-serialisable value** (given to the model as `JSON.stringify(value)`; `undefined`
 *   becomes the empty string).
 * - A tool signals an error by **throwing** (or rejecting). The error's `message` becomes the
 *   error result. A returned `{ error: '…' }` object is NOT an error: it is an ordinary value,
 *   because a legitimate result may well contain an `error` field.
 */
import { isStandardSchema, jsonSchemaConverterOf, type StandardSchemaV1 } from './standardSchema';

export type { StandardSchemaV1 } from './standardSchema';

export type ToolKind = 'read' | 'search' | 'fetch' | 'edit' | 'delete' | 'move' | 'execute' | 'think' | 'other';

export const TOOL_KINDS: readonly ToolKind[] = [
  'read',
  'search',
  'fetch',
  'edit',
  'delete',
  'move',
  'execute',
  'think',
  'other',
];

/** A JSON Schema object (from the validator's converter, given explicitly, or passed through from MCP). */
export type JsonSchema = { [key: string]: unknown };

/** Any Standard Schema validator whose input and output are JSON objects (tool input is always an object). */
export type ToolInputSchema = StandardSchemaV1<Record<string, unknown>, Record<string, unknown>>;

/** The validated input type of a tool's schema. */
export type ToolInput<S extends StandardSchemaV1> = StandardSchemaV1.InferOutput<S> & Record<string, unknown>;

export interface ToolRunContext {
  /** Aborted when the call is cancelled (user abort, discarded attempt, timeout). */
  signal: AbortSignal;
  /** The call id as the model wrote it (made unique by sluice when the model repeated one). */
  callId: string;
}

export interface ToolDefinition<I extends Record<string, unknown> = Record<string, unknown>, O = unknown> {
  name: string;
  kind: ToolKind;
  description?: string;
  /** Validates (and may transform) the raw input before `run` sees it (any Standard Schema v1 validator). */
  input: StandardSchemaV1<Record<string, unknown>, I>;
  /** JSON Schema of the input, used for provider tool specs. */
  parameters: JsonSchema;
  /** true, or a predicate over the validated input: the call needs approval before it may start. */
  needsApproval?: boolean | ((input: I) => boolean);
  /**
   * May this call start while the model still streams, next to other calls? When given, it
   * decides (over the validated input) instead of the kind rules; a throw counts as "no".
   */
  isConcurrencySafe?: (input: I) => boolean;
  /**
   * false: a retry never reuses this tool's result from a discarded attempt (`policy.reuseResults`),
   * e.g. a read-only tool whose answer changes from one moment to the next. Default: reusable.
   */
  reusable?: boolean;
  /** Abort the run and give an error result (synthetic 'timeout') after this many ms. */
  timeoutMs?: number;
  /**
   * For `kind: 'execute'`: the input field holding the shell command, classified by
   * `classifyCommand` to decide whether the call is safe (default `command`).
   */
  commandField?: string;
  run(input: I, ctx: ToolRunContext): Promise<O> | O;
}

/** Any tool, for registries and heterogeneous lists. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- `run`/`needsApproval` are contravariant in the input; a registry holds tools of many input types and only ever calls them with the tool's own validated input.
export type AnyTool = ToolDefinition<any, unknown>;

export interface DefineToolOptions<S extends ToolInputSchema, O> {
  name: string;
  kind: ToolKind;
  description?: string;
  /** A Standard Schema v1 validator of a JSON object: zod 4, zod 3.24+ (`zod/v3`), valibot, arktype, … */
  input: S;
  /**
   * JSON Schema of the input for the provider tool specs. Needed when the validator has no
   * converter of its own (zod 3, valibot); when given it always wins over the converter.
   */
  jsonSchema?: JsonSchema;
  /** Older name of `jsonSchema` (same meaning; `jsonSchema` wins when both are given). */
  parameters?: JsonSchema;
  needsApproval?: boolean | ((input: ToolInput<S>) => boolean);
  /** Per-call safety over the validated input (e.g. a shell tool: safe for `ls`, not for `rm`). */
  isConcurrencySafe?: (input: ToolInput<S>) => boolean;
  /** false: never reuse this tool's result on a retry (see ToolDefinition.reusable). */
  reusable?: boolean;
  timeoutMs?: number;
  commandField?: string;
  run(input: ToolInput<S>, ctx: ToolRunContext): Promise<O> | O;
}

/** Provider tool names: Anthropic and OpenAI both accept `^[a-zA-Z0-9_-]{1,64}$`. */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * Define a tool. Throws (a programming error, at definition time) when the name is not a valid
 * provider tool name, the kind is unknown, the input is not a Standard Schema validator, no
 * JSON Schema can be had for it, or the schema does not describe a JSON object.
 */
export function defineTool<S extends ToolInputSchema, O>(opts: DefineToolOptions<S, O>): ToolDefinition<ToolInput<S>, O> {
  if (!TOOL_NAME_PATTERN.test(opts.name)) {
    throw new Error(`defineTool: invalid tool name ${JSON.stringify(opts.name)} (allowed: ${TOOL_NAME_PATTERN.source})`);
  }
  if (!TOOL_KINDS.includes(opts.kind)) {
    throw new Error(`defineTool: unknown kind ${JSON.stringify(opts.kind)} for tool ${opts.name}`);
  }
  if (opts.timeoutMs !== undefined && !(opts.timeoutMs > 0)) {
    throw new Error(`defineTool: timeoutMs must be a positive number (tool ${opts.name})`);
  }
  if (!isStandardSchema(opts.input)) throw new Error(`defineTool: tool ${opts.name}: ${notASchema(opts.input)}`);
  const given = opts.jsonSchema ?? opts.parameters;
  if (given !== undefined && (typeof given !== 'object' || given === null || Array.isArray(given))) {
    throw new Error(`defineTool: tool ${opts.name}: jsonSchema must be a JSON Schema object, e.g. { type: 'object', properties: { … } }`);
  }
  const parameters = given ?? jsonSchemaFor(opts.input, opts.name);
  if (parameters.type !== 'object') {
    throw new Error(`defineTool: the input schema of tool ${opts.name} must describe a JSON object`);
  }
  if (opts.reusable !== undefined && typeof opts.reusable !== 'boolean') {
    throw new Error(`defineTool: tool ${opts.name}: reusable must be a boolean`);
  }
  if (typeof (opts.run as unknown) !== 'function') {
    throw new Error(`defineTool: tool ${opts.name}: run is required (an async function (input, ctx) => result)`);
  }
  if (opts.isConcurrencySafe !== undefined && typeof opts.isConcurrencySafe !== 'function') {
    throw new Error(`defineTool: tool ${opts.name}: isConcurrencySafe must be a function (input) => boolean`);
  }
  return {
    name: opts.name,
    kind: opts.kind,
    description: opts.description,
    input: opts.input as unknown as StandardSchemaV1<Record<string, unknown>, ToolInput<S>>,
    parameters,
    needsApproval: opts.needsApproval,
    ...(opts.isConcurrencySafe ? { isConcurrencySafe: opts.isConcurrencySafe } : {}),
    ...(opts.reusable === false ? { reusable: false } : {}),
    timeoutMs: opts.timeoutMs,
    commandField: opts.commandField,
    run: opts.run,
  };
}

/** Why `value` is not accepted as an input validator, with the fix. */
function notASchema(value: unknown): string {
  const v = value as { _def?: unknown; safeParse?: unknown } | null | undefined;
  if (v && typeof v === 'object' && v._def !== undefined && typeof v.safeParse === 'function') {
    return 'this zod schema predates Standard Schema (zod < 3.24); upgrade zod to 3.24+ or 4';
  }
  const kind = value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
  const hint = kind === 'object' ? ' (a plain JSON Schema object goes in jsonSchema, with a validator in input)' : '';
  return `input must be a Standard Schema validator (zod 4, zod 3.24+, valibot, arktype, …), got ${kind}${hint}`;
}

/**
 * JSON Schema (draft 2020-12, input side) of a validator, from its own converter, without the
 * `$schema` key. Throws, naming the fix (`jsonSchema`), when the validator has no converter.
 */
export function schemaToJsonSchema(schema: StandardSchemaV1, toolName = '(unnamed)'): JsonSchema {
  return jsonSchemaFor(schema, toolName);
}

function jsonSchemaFor(schema: StandardSchemaV1, toolName: string): JsonSchema {
  const vendor = schema['~standard'].vendor;
  const conv = jsonSchemaConverterOf(schema);
  if (!conv) {
    throw new Error(
      `defineTool: tool ${toolName}: this ${vendor} schema has no JSON Schema converter; pass jsonSchema: { type: 'object', properties: { … } } (for valibot: toJsonSchema() from @valibot/to-json-schema)`,
    );
  }
  let out: JsonSchema;
  try {
    // zod: schemas it cannot represent (transforms, dates, …) become {} instead of throwing.
    const libraryOptions = vendor === 'zod' ? { unrepresentable: 'any' } : undefined;
    out = { ...conv.input({ target: 'draft-2020-12', ...(libraryOptions ? { libraryOptions } : {}) }) };
  } catch (err) {
    throw new Error(`defineTool: tool ${toolName}: the ${vendor} schema could not be converted to JSON Schema (${errorName(err)}); pass jsonSchema`);
  }
  delete out.$schema;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Registry

export interface ToolRegistry {
  get(name: string): AnyTool | undefined;
  has(name: string): boolean;
  list(): AnyTool[];
  readonly names: readonly string[];
}

/** A registry of tools by name. Duplicate names throw (a programming error). */
export function createToolRegistry(tools: Iterable<AnyTool>): ToolRegistry {
  const byName = new Map<string, AnyTool>();
  for (const tool of tools) {
    if (byName.has(tool.name)) throw new Error(`createToolRegistry: duplicate tool name ${JSON.stringify(tool.name)}`);
    byName.set(tool.name, tool);
  }
  const list = [...byName.values()];
  const names = Object.freeze(list.map((t) => t.name));
  return {
    get: (name) => byName.get(name),
    has: (name) => byName.has(name),
    list: () => list.slice(),
    names,
  };
}

// ---------------------------------------------------------------------------------------------
// Validation

export type ValidationResult<I> = { ok: true; value: I } | { ok: false; message: string };

const MAX_ISSUES = 5;
const MAX_ISSUE_CHARS = 200;

/**
 * Validate raw call input against the tool's schema. The message names the tool, the paths
 * and the validator's message for each issue (at most 5); it never echoes argument values.
 * Synchronous; a validator that answers with a Promise (async refinements) cannot be judged
 * here and gives an error that says so: use `validateInputAsync` (what `runTool` uses).
 */
export function validateInput<I extends Record<string, unknown>>(tool: ToolDefinition<I, unknown>, input: unknown): ValidationResult<I> {
  const r = beginValidation(tool, input);
  if (!(r instanceof Promise)) return r;
  r.catch(() => undefined);
  return { ok: false, message: `Invalid input for tool ${tool.name}: the schema validates asynchronously; use validateInputAsync` };
}

/** `validateInput` for any validator, synchronous or not. Never rejects. */
export async function validateInputAsync<I extends Record<string, unknown>>(tool: ToolDefinition<I, unknown>, input: unknown): Promise<ValidationResult<I>> {
  return beginValidation(tool, input);
}

/** The result at once for a synchronous validator, a Promise for an asynchronous one. Never throws or rejects. */
export function beginValidation<I extends Record<string, unknown>>(
  tool: ToolDefinition<I, unknown>,
  input: unknown,
): ValidationResult<I> | Promise<ValidationResult<I>> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return { ok: false, message: `Invalid input for tool ${tool.name}: arguments must be a JSON object` };
  }
  const threw = (err: unknown): ValidationResult<I> =>
    // A throwing refinement/transform is the tool author's bug; report it without its contents.
    ({ ok: false, message: `Invalid input for tool ${tool.name}: schema check threw (${errorName(err)})` });
  let result: StandardSchemaV1.Result<I> | Promise<StandardSchemaV1.Result<I>>;
  try {
    result = tool.input['~standard'].validate(input);
  } catch (err) {
    return threw(err);
  }
  if (result instanceof Promise) return result.then((r) => toValidation(tool.name, r), threw);
  return toValidation(tool.name, result);
}

function toValidation<I>(toolName: string, r: StandardSchemaV1.Result<I>): ValidationResult<I> {
  if (r.issues === undefined) return { ok: true, value: r.value };
  return { ok: false, message: formatIssues(toolName, r.issues) };
}

function formatIssues(toolName: string, issues: ReadonlyArray<StandardSchemaV1.Issue>): string {
  const parts = issues.slice(0, MAX_ISSUES).map((issue) => {
    const segs = (issue.path ?? []).map((p) => (typeof p === 'object' && p !== null ? p.key : p));
    const path = segs.length ? segs.map((p) => (typeof p === 'number' ? `[${p}]` : String(p))).join('.') : '(root)';
    const msg = issue.message.length > MAX_ISSUE_CHARS ? `${issue.message.slice(0, MAX_ISSUE_CHARS)}…` : issue.message;
    return `${path.replace(/\.\[/g, '[')}: ${msg}`;
  });
  const more = issues.length > MAX_ISSUES ? ` (and ${issues.length - MAX_ISSUES} more)` : '';
  return `Invalid input for tool ${toolName}: ${parts.join('; ')}${more}`;
}

function errorName(err: unknown): string {
  return err instanceof Error ? err.name : typeof err;
}

/** Does this call need approval? A throwing predicate counts as "yes" (fail closed). */
export function needsApproval<I extends Record<string, unknown>>(tool: ToolDefinition<I, unknown>, input: I): boolean {
  const n = tool.needsApproval;
  if (typeof n === 'function') {
    try {
      return n(input) !== false;
    } catch {
      return true;
    }
  }
  return n === true;
}

// ---------------------------------------------------------------------------------------------
// Running

/** What a run produced; the same shape the call actor settles with (src/calls.ts CallResult). */
export interface ToolRunResult {
  ok: boolean;
  content: string;
  synthetic?: 'interrupted' | 'invalid_input' | 'timeout' | 'unknown_tool';
}

/** Turn a tool's return value into the text given to the model. */
export function formatToolOutput(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  try {
    const text = JSON.stringify(value);
    return text === undefined ? '' : text;
  } catch (err) {
    throw new Error(`tool returned a value that is not JSON-serialisable (${errorName(err)})`);
  }
}

/** The error text of a thrown value: `Error.message`, a thrown string, or a generic line. */
export function toolErrorText(err: unknown): string {
  if (err instanceof Error) return err.message || err.name || 'Tool failed';
  if (typeof err === 'string' && err) return err;
  return 'Tool failed';
}

/**
 * Validate and run one call: schema-invalid input → error result (synthetic 'invalid_input');
 * a throw → error result with its message; `timeoutMs` → the run's signal is aborted and the
 * result is an error (synthetic 'timeout'); an abort of `ctx.signal` → error result (synthetic
 * 'interrupted') as soon as the signal fires, whether or not the tool honours it.
 * Never rejects.
 */
export async function runTool(tool: AnyTool | undefined, rawInput: unknown, ctx: ToolRunContext & { name?: string }): Promise<ToolRunResult> {
  if (!tool) {
    return { ok: false, content: `Unknown tool${ctx.name ? ` ${ctx.name}` : ''}: it is not registered, so it was not run.`, synthetic: 'unknown_tool' };
  }
  const valid = await validateInputAsync(tool, rawInput);
  if (!valid.ok) return { ok: false, content: valid.message, synthetic: 'invalid_input' };
  if (ctx.signal.aborted) return { ok: false, content: interruptedText(tool.name), synthetic: 'interrupted' };

  const controller = new AbortController();
  const cleanups: Array<() => void> = [];
  const stop = new Promise<ToolRunResult>((resolve) => {
    const onAbort = (): void => {
      controller.abort(ctx.signal.reason);
      resolve({ ok: false, content: interruptedText(tool.name), synthetic: 'interrupted' });
    };
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    cleanups.push(() => ctx.signal.removeEventListener('abort', onAbort));
    if (tool.timeoutMs !== undefined) {
      const timer = setTimeout(() => {
        controller.abort(new Error('timeout'));
        resolve({ ok: false, content: `Tool ${tool.name} timed out after ${tool.timeoutMs} ms.`, synthetic: 'timeout' });
      }, tool.timeoutMs);
      cleanups.push(() => clearTimeout(timer));
    }
  });
  const work = (async (): Promise<ToolRunResult> => {
    try {
      const out = await tool.run(valid.value, { signal: controller.signal, callId: ctx.callId });
      return { ok: true, content: formatToolOutput(out) };
    } catch (err) {
      return { ok: false, content: toolErrorText(err) };
    }
  })();
  try {
    return await Promise.race([work, stop]);
  } finally {
    for (const c of cleanups) c();
  }
}

function interruptedText(name: string): string {
  return `Tool ${name} was interrupted before it finished.`;
}

// ---------------------------------------------------------------------------------------------
// Provider tool specs

export interface AnthropicToolSpec {
  name: string;
  description?: string;
  input_schema: JsonSchema & { type: 'object' };
}

export interface OpenAIChatToolSpec {
  type: 'function';
  function: { name: string; description?: string; parameters: JsonSchema; strict?: boolean };
}

export interface OpenAIResponsesToolSpec {
  type: 'function';
  name: string;
  description?: string;
  parameters: JsonSchema;
  /**
   * Required by the Responses API type. sluice sends `false`: generated schemas do not follow the
   * strict-mode rules (every property required, `additionalProperties: false`).
   */
  strict: boolean;
}

export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  /** OpenAPI-subset schema (the classic field). */
  parameters?: JsonSchema;
  /** Full JSON Schema (newer API field), with `{ jsonSchema: true }`. */
  parametersJsonSchema?: JsonSchema;
}

export interface GeminiToolSpec {
  functionDeclarations: GeminiFunctionDeclaration[];
}

/** `{ ...head, description?, ...tail }`: keeps the key order providers show in their docs. */
function withDescription<T extends object>(head: T, description: string | undefined, tail: object = {}): T {
  return (description ? { ...head, description, ...tail } : { ...head, ...tail }) as T;
}

export function toAnthropicTools(tools: Iterable<AnyTool>): AnthropicToolSpec[] {
  return [...tools].map((t) =>
    withDescription({ name: t.name } as AnthropicToolSpec, t.description, { input_schema: { ...t.parameters, type: 'object' as const } }),
  );
}

export function toOpenAIChatTools(tools: Iterable<AnyTool>): OpenAIChatToolSpec[] {
  return [...tools].map((t) => ({
    type: 'function' as const,
    function: withDescription({ name: t.name } as OpenAIChatToolSpec['function'], t.description, { parameters: t.parameters }),
  }));
}

export function toOpenAIResponsesTools(tools: Iterable<AnyTool>): OpenAIResponsesToolSpec[] {
  return [...tools].map((t) =>
    withDescription({ type: 'function', name: t.name } as OpenAIResponsesToolSpec, t.description, { parameters: t.parameters, strict: false }),
  );
}

/**
 * The symbol by which the AI SDK (ai 5 and 6) recognises a schema object (`jsonSchema()` marks its
 * result with it; a registered symbol, so sluice need not import `ai`).
 */
const AI_SDK_SCHEMA: unique symbol = Symbol.for('vercel.ai.schema') as never;

/** What `jsonSchema(schema)` from `ai` returns, built without `ai` (no validator: sluice validates). */
export interface AiSdkJsonSchema {
  readonly [AI_SDK_SCHEMA]: true;
  readonly jsonSchema: JsonSchema;
  readonly validate: undefined;
}

/** An AI SDK `tool()` definition without `execute`: the model may call it, the AI SDK runs nothing. */
export interface AiSdkToolSpec<S = AiSdkJsonSchema> {
  description?: string;
  inputSchema: S;
}

/**
 * AI SDK tool definitions **without `execute`**, keyed by name — `streamText({ tools })` then
 * stops after one step and sluice runs each call from the `fullStream` (`format: 'ai-sdk'`).
 *
 * Pass `ai`'s own `jsonSchema` helper for definitions typed as the AI SDK's `ToolSet`
 * (`toAiSdkTools(tools, jsonSchema)`); without it the schema objects are built here in the shape
 * `jsonSchema()` returns (the AI SDK accepts them at run time; TypeScript cannot name `ai`'s
 * private schema symbol, so typed code should pass the helper).
 */
export function toAiSdkTools(tools: Iterable<AnyTool>): Record<string, AiSdkToolSpec>;
export function toAiSdkTools<S>(tools: Iterable<AnyTool>, jsonSchema: (schema: never) => S): Record<string, AiSdkToolSpec<S>>;
export function toAiSdkTools(tools: Iterable<AnyTool>, jsonSchema?: (schema: never) => unknown): Record<string, AiSdkToolSpec<unknown>> {
  // The helper's parameter is typed `never` above so `ai`'s `jsonSchema(JSONSchema7)` fits; it takes a JSON Schema object.
  const wrap = (jsonSchema as ((schema: JsonSchema) => unknown) | undefined) ?? ((schema: JsonSchema): AiSdkJsonSchema => ({ [AI_SDK_SCHEMA]: true, jsonSchema: schema, validate: undefined }));
  const out: Record<string, AiSdkToolSpec<unknown>> = {};
  for (const t of tools) out[t.name] = withDescription({} as AiSdkToolSpec<unknown>, t.description, { inputSchema: wrap({ ...t.parameters, type: 'object' }) });
  return out;
}

/**
 * Gemini `tools: [{ functionDeclarations }]`. By default the schema goes in `parameters`,
 * reduced to the OpenAPI subset Gemini accepts (see `toGeminiSchema`); with
 * `{ jsonSchema: true }` it goes unchanged in `parametersJsonSchema`.
 */
export function toGeminiTools(tools: Iterable<AnyTool>, opts: { jsonSchema?: boolean } = {}): GeminiToolSpec[] {
  const functionDeclarations = [...tools].map((t) => {
    const decl: GeminiFunctionDeclaration = withDescription({ name: t.name }, t.description);
    if (opts.jsonSchema) decl.parametersJsonSchema = t.parameters;
    else decl.parameters = toGeminiSchema(t.parameters);
    return decl;
  });
  return [{ functionDeclarations }];
}

/** Keys of Gemini's `Schema` object (OpenAPI 3.0 subset). Everything else is dropped. */
const GEMINI_SCHEMA_KEYS = new Set([
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'items',
  'minItems',
  'maxItems',
  'properties',
  'required',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'maximum',
  'default',
  'example',
  'anyOf',
  'propertyOrdering',
]);

/**
 * Reduce a JSON Schema to what Gemini's `functionDeclarations[].parameters` accepts: drops
 * `$schema`, `additionalProperties`, `$ref`/`$defs`, `const` (→ `enum`), exclusive bounds and
 * other keywords outside the subset; turns `type: [T, 'null']` and `anyOf: [X, {type:'null'}]`
 * into `nullable: true`; keeps only string enums; `format` only when Gemini knows it.
 */
export function toGeminiSchema(schema: unknown): JsonSchema {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return {};
  const src = schema as JsonSchema;
  const out: JsonSchema = {};
  let nullable = false;

  // type: string | string[]
  if (Array.isArray(src.type)) {
    const types = src.type.filter((t): t is string => typeof t === 'string');
    nullable = types.includes('null');
    const rest = types.filter((t) => t !== 'null');
    if (rest.length === 1) out.type = rest[0];
    else if (rest.length > 1) out.anyOf = rest.map((t) => ({ type: t }));
  } else if (typeof src.type === 'string') {
    if (src.type === 'null') nullable = true;
    else out.type = src.type;
  }
  if ('const' in src && !('enum' in src)) {
    if (typeof src.const === 'string') {
      out.enum = [src.const];
      out.type = 'string';
    } else if (!out.type) {
      const t = jsonType(src.const);
      if (t) out.type = t;
    }
  }

  for (const [key, value] of Object.entries(src)) {
    if (!GEMINI_SCHEMA_KEYS.has(key) || key === 'type') continue;
    switch (key) {
      case 'properties': {
        if (typeof value !== 'object' || value === null) break;
        const props: JsonSchema = {};
        for (const [name, sub] of Object.entries(value as JsonSchema)) props[name] = toGeminiSchema(sub);
        out.properties = props;
        break;
      }
      case 'items':
        if (typeof value === 'object' && value !== null && !Array.isArray(value)) out.items = toGeminiSchema(value);
        break;
      case 'anyOf': {
        if (!Array.isArray(value)) break;
        const variants = value.filter((v) => !(typeof v === 'object' && v !== null && (v as JsonSchema).type === 'null'));
        if (variants.length !== value.length) nullable = true;
        if (variants.length === 1) Object.assign(out, toGeminiSchema(variants[0]));
        else if (variants.length > 1) out.anyOf = variants.map(toGeminiSchema);
        break;
      }
      case 'enum':
        if (Array.isArray(value)) {
          const values = value.filter((v) => v !== null);
          if (values.length !== value.length) nullable = true;
          // Gemini enums are string enums only; a non-string enum keeps just its type.
          if (values.length > 0 && values.every((v) => typeof v === 'string')) {
            out.enum = values;
            out.type = 'string';
          } else if (!out.type && values.length > 0) {
            const t = jsonType(values[0]);
            if (t) out.type = t;
          }
        }
        break;
      case 'format':
        if (value === 'enum' || value === 'date-time' || value === 'int32' || value === 'int64' || value === 'float' || value === 'double') {
          out.format = value;
        }
        break;
      default:
        out[key] = value;
    }
  }
  if (Array.isArray(out.required) && out.properties && typeof out.properties === 'object') {
    const props = out.properties as JsonSchema;
    out.required = (out.required as unknown[]).filter((r): r is string => typeof r === 'string' && r in props);
  }
  if (nullable) out.nullable = true;
  return out;
}

function jsonType(v: unknown): string | undefined {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  if (typeof v === 'boolean') return 'boolean';
  return undefined;
}
