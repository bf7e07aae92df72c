/**
 * Request checks the Anthropic API itself makes, so a request the real API would refuse is
 * refused here too (400 `invalid_request_error`, the API's own error body shape and wording) instead
 * of being forwarded to a backend that may accept it, or crashing the gateway:
 *
 * - JSON nested deeper than `maxDepth` anywhere in the body (e.g. 100k-level `input_schema` or
 *   `tool_use.input`: serialising it again would overflow the stack → it used to be a 500);
 * - `max_tokens` above `maxOutputTokens` (`1e308` is an integer to JavaScript);
 * - tool names outside `^[a-zA-Z0-9_-]{1,64}$`;
 * - `input_schema.type` other than `"object"`;
 * - a `tool_result` whose `tool_use_id` matches no `tool_use` in the preceding assistant message.
 *
 * Everything here walks the body once (iteratively: no recursion on client-controlled depth).
 * Shape errors (wrong types, missing fields) are left to the request parser, which names them.
 */
import { invalidRequest } from './errors';

export interface RequestLimits {
  /** Deepest JSON nesting accepted anywhere in a request body. Default 128. */
  maxDepth: number;
  /** Largest `max_tokens` accepted. Default 1,048,576. */
  maxOutputTokens: number;
}

export const REQUEST_LIMIT_DEFAULTS: RequestLimits = { maxDepth: 128, maxOutputTokens: 1_048_576 };

export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The top-level key under which `value` nests deeper than `limit` (`'(body)'` for the root), or
 * undefined when it does not. Iterative; visits each container once.
 */
export function deepestOver(value: unknown, limit: number): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const stack: unknown[] = [value];
  const depths: number[] = [1];
  const roots: string[] = ['(body)'];
  while (stack.length > 0) {
    const v = stack.pop()!;
    const d = depths.pop()!;
    const root = roots.pop()!;
    if (d > limit) return root;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const c = v[i];
        if (typeof c === 'object' && c !== null) {
          stack.push(c);
          depths.push(d + 1);
          roots.push(d === 1 ? String(i) : root);
        }
      }
    } else {
      for (const k in v as Obj) {
        const c = (v as Obj)[k];
        if (typeof c === 'object' && c !== null) {
          stack.push(c);
          depths.push(d + 1);
          roots.push(d === 1 ? k : root);
        }
      }
    }
  }
  return undefined;
}

/** 400 when any part of the body nests deeper than `maxDepth`. For every inbound API. */
export function checkNesting(body: unknown, maxDepth: number): void {
  const where = deepestOver(body, maxDepth);
  if (where !== undefined)
    throw invalidRequest(`${where}: JSON nested deeper than ${maxDepth} levels is not accepted by this gateway`);
}

/**
 * The Anthropic Messages checks above (nesting included). Runs on the parsed JSON before the
 * request parser; anything that is not the expected shape is skipped here and reported there.
 */
export function validateMessagesBody(body: unknown, limits: RequestLimits = REQUEST_LIMIT_DEFAULTS): void {
  checkNesting(body, limits.maxDepth);
  if (!isObj(body)) return;
  const mt = body.max_tokens;
  if (typeof mt === 'number' && mt > limits.maxOutputTokens)
    throw invalidRequest(
      `max_tokens: ${mt} > ${limits.maxOutputTokens}, which is the maximum allowed number of output tokens for this gateway`,
    );
  if (Array.isArray(body.tools)) {
    body.tools.forEach((t, i) => {
      if (!isObj(t) || (t.type !== undefined && t.type !== 'custom')) return;
      if (typeof t.name === 'string' && !TOOL_NAME_PATTERN.test(t.name))
        throw invalidRequest(`tools.${i}.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`);
      const s = t.input_schema;
      if (isObj(s) && s.type !== 'object') throw invalidRequest(`tools.${i}.input_schema.type: Input should be 'object'`);
    });
  }
  if (Array.isArray(body.messages)) checkToolResults(body.messages);
}

/** Every `tool_result` must answer a `tool_use` of the assistant message just before it. */
function checkToolResults(messages: unknown[]): void {
  let prevToolUses: Set<string> | undefined;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (!isObj(m)) return;
    if (m.role === 'system') continue; // Claude Code's inline system messages sit between turns
    if (m.role === 'user' && Array.isArray(m.content)) {
      for (let j = 0; j < m.content.length; j++) {
        const b = m.content[j];
        if (!isObj(b) || b.type !== 'tool_result' || typeof b.tool_use_id !== 'string') continue;
        if (!prevToolUses || !prevToolUses.has(b.tool_use_id))
          throw invalidRequest(
            `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${b.tool_use_id.slice(0, 128)}. ` +
              'Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
          );
      }
    }
    prevToolUses = undefined;
    if (m.role === 'assistant' && Array.isArray(m.content)) {
      for (const b of m.content) {
        if (isObj(b) && b.type === 'tool_use' && typeof b.id === 'string') (prevToolUses ??= new Set()).add(b.id);
      }
    }
  }
}
