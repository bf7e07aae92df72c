/**
 * MCP tools as sluice tools (SPEC §6.1): a `tools/list` result becomes ToolDefinitions.
 *
 * - kind: `annotations.readOnlyHint === true` → `read` (safe, may start early); anything else →
 *   `other` (unsafe). `destructiveHint` etc. are not trusted for anything more.
 * - input: validated permissively — the arguments must be a JSON object, the schema's top-level
 *   `required` properties must be present and simple top-level `type`s must match. The MCP
 *   server validates fully; this only catches what the model obviously got wrong, early.
 * - provider specs: the server's `inputSchema` is passed through unchanged.
 * - run: calls `call(name, args, { signal })` — e.g. `(name, args, o) => client.callTool({ name,
 *   arguments: args }, undefined, o)` — and turns the CallToolResult into text: text blocks joined
 *   by newlines; other blocks as short placeholders; `structuredContent` as JSON when there is no
 *   text. `isError: true` becomes an error result (thrown, per the tool convention).
 * - names: MCP names may hold characters providers reject (`.`, `/`, …); they are mapped to
 *   `[a-zA-Z0-9_-]` (with `prefix` if given, cut to 64 characters, de-duplicated with a
 *   numeric suffix) while `call` always gets the server's own name.
 */
import type { StandardSchemaV1 } from './standardSchema';
import { type JsonSchema, type ToolDefinition, type ToolKind, TOOL_NAME_PATTERN } from './tools';

/**
 * What sluice reads of an MCP `CallToolResult` (the MCP SDK's type is assignable to it). Declared
 * here so the published types need no MCP package: `@modelcontextprotocol/sdk` is optional.
 */
export interface McpCallToolResult {
  content: Array<{ type: string; [key: string]: unknown }>;
  structuredContent?: unknown;
  isError?: boolean;
}

/** One content block of a CallToolResult, as far as sluice reads it. */
interface McpBlock {
  type: string;
  text?: string;
  data?: string;
  mimeType?: string;
  uri?: string;
  resource?: { uri: string; text?: unknown };
}

export type McpCall = (
  name: string,
  args: Record<string, unknown>,
  opts: { signal: AbortSignal },
) => Promise<McpCallToolResult | unknown> | McpCallToolResult | unknown;

export interface McpToolOptions {
  /** Prepended to every tool name (e.g. `github_`). */
  prefix?: string;
  /** Approval policy for the imported tools (default: none). */
  needsApproval?: boolean | ((name: string, input: Record<string, unknown>) => boolean);
  timeoutMs?: number;
}

export interface McpToolDefinition extends ToolDefinition<Record<string, unknown>, string> {
  /** The tool's name on the MCP server (what `call` receives). */
  mcpName: string;
}

/** Turn a `tools/list` result into tool definitions. Malformed entries are skipped, never thrown. */
export function toolsFromMcp(listing: { tools: readonly unknown[] }, call: McpCall, opts: McpToolOptions = {}): McpToolDefinition[] {
  const out: McpToolDefinition[] = [];
  const used = new Set<string>();
  const tools = Array.isArray(listing?.tools) ? listing.tools : [];
  for (const raw of tools) {
    if (typeof raw !== 'object' || raw === null) continue;
    const t = raw as { name?: unknown; description?: unknown; inputSchema?: unknown; annotations?: { readOnlyHint?: unknown } };
    if (typeof t.name !== 'string' || t.name === '') continue;
    const mcpName = t.name;
    const name = uniqueName(providerName(`${opts.prefix ?? ''}${mcpName}`), used);
    used.add(name);
    const kind: ToolKind = t.annotations?.readOnlyHint === true ? 'read' : 'other';
    const parameters = objectSchema(t.inputSchema);
    const approval = opts.needsApproval;
    const def: McpToolDefinition = {
      name,
      mcpName,
      kind,
      description: typeof t.description === 'string' ? t.description : undefined,
      input: permissiveSchema(parameters),
      parameters,
      needsApproval: typeof approval === 'function' ? (input) => approval(mcpName, input) : approval,
      timeoutMs: opts.timeoutMs,
      run: async (input, { signal }) => mcpResultText(await call(mcpName, input, { signal })),
    };
    out.push(def);
  }
  return out;
}

function providerName(name: string): string {
  const clean = name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64);
  return clean || 'tool';
}

function uniqueName(name: string, used: Set<string>): string {
  if (!used.has(name)) return name;
  for (let i = 2; ; i++) {
    const suffix = `_${i}`;
    const candidate = name.slice(0, 64 - suffix.length) + suffix;
    if (!used.has(candidate) && TOOL_NAME_PATTERN.test(candidate)) return candidate;
  }
}

/** The input schema as given, or `{ type: 'object' }` when missing/not an object schema. */
function objectSchema(schema: unknown): JsonSchema {
  if (typeof schema === 'object' && schema !== null && !Array.isArray(schema) && (schema as JsonSchema).type === 'object') {
    return schema as JsonSchema;
  }
  return { type: 'object' };
}

const JSON_TYPE_CHECKS: Record<string, (v: unknown) => boolean> = {
  string: (v) => typeof v === 'string',
  number: (v) => typeof v === 'number' && Number.isFinite(v),
  integer: (v) => typeof v === 'number' && Number.isInteger(v),
  boolean: (v) => typeof v === 'boolean',
  array: (v) => Array.isArray(v),
  object: (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
  null: (v) => v === null,
};

/**
 * A Standard Schema validator for "a JSON object with these required keys and simple top-level
 * types" (written out, not zod: the tool layer needs no validator package of its own).
 */
export function permissiveSchema(schema: JsonSchema): StandardSchemaV1<Record<string, unknown>, Record<string, unknown>> {
  const required = Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : [];
  const props = typeof schema.properties === 'object' && schema.properties !== null ? (schema.properties as Record<string, unknown>) : {};
  const validate = (value: unknown): StandardSchemaV1.Result<Record<string, unknown>> => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return { issues: [{ message: `Expected a JSON object, got ${Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value}` }] };
    }
    const obj = value as Record<string, unknown>;
    const issues: StandardSchemaV1.Issue[] = [];
    for (const key of required) {
      if (!(key in obj)) issues.push({ path: [key], message: 'Required property is missing' });
    }
    for (const [key, v] of Object.entries(obj)) {
      const prop = props[key];
      if (typeof prop !== 'object' || prop === null) continue;
      const type = (prop as JsonSchema).type;
      const types = typeof type === 'string' ? [type] : Array.isArray(type) ? type.filter((x): x is string => typeof x === 'string') : [];
      const known = types.filter((x) => x in JSON_TYPE_CHECKS);
      if (known.length === 0 || known.length !== types.length) continue;
      if (!known.some((x) => JSON_TYPE_CHECKS[x](v))) issues.push({ path: [key], message: `Expected ${known.join(' or ')}` });
    }
    return issues.length > 0 ? { issues } : { value: obj };
  };
  return { '~standard': { version: 1, vendor: 'sluice', validate } };
}

/**
 * A CallToolResult as result text; `isError` → throws with that text. Anything that is not a
 * CallToolResult: a string as is, other values as JSON.
 */
export function mcpResultText(result: unknown): string {
  if (typeof result === 'string') return result;
  if (typeof result !== 'object' || result === null || !Array.isArray((result as { content?: unknown }).content)) {
    return result === undefined ? '' : JSON.stringify(result);
  }
  const r = result as McpCallToolResult;
  const parts: string[] = [];
  for (const raw of r.content) {
    const block = raw as McpBlock;
    switch (block.type) {
      case 'text':
        parts.push(block.text ?? '');
        break;
      case 'image':
      case 'audio':
        parts.push(`[${block.type}: ${block.mimeType}, ${Math.floor(((block.data ?? '').length * 3) / 4)} bytes]`);
        break;
      case 'resource': {
        const res = block.resource;
        parts.push(typeof res?.text === 'string' ? res.text : `[resource: ${res?.uri}]`);
        break;
      }
      case 'resource_link':
        parts.push(`[resource: ${block.uri}]`);
        break;
      default:
        parts.push(`[${block.type}]`);
    }
  }
  let text = parts.join('\n');
  if (text === '' && r.structuredContent !== undefined) text = JSON.stringify(r.structuredContent);
  if (r.isError === true) throw new Error(text || 'MCP tool reported an error');
  return text;
}
