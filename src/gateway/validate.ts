/**
 * The checks the Anthropic API itself makes, applied to the canonical request (canonical.ts) of
 * every inbound API — /v1/messages, /v1/chat/completions and /v1/responses alike — so a request
 * the real API would refuse is refused here too (400 `invalid_request_error`, in the route's own
 * error shape, the Anthropic API's wording) instead of being forwarded to a backend that may
 * accept it:
 *
 * - `max_tokens` above `maxOutputTokens` (`1e308` is an integer to JavaScript);
 * - tool names outside `^[a-zA-Z0-9_-]{1,64}$` (`../..`, spaces, 1,800 characters);
 * - `input_schema.type` (Chat/Responses: `parameters.type`) other than `"object"`;
 * - a `tool_result` whose `tool_use_id` matches no `tool_use` in the preceding assistant message.
 *
 * JSON nesting is not checked here: the body reader (body.ts) refuses an over-deep body while it
 * arrives, before anything is parsed. Shape errors (wrong types, missing fields) are the inbound
 * parsers' (inbound/*.ts), which name them; positions (`tools.N`, `messages.N`) are the canonical
 * request's, which for /v1/messages are the client's own.
 */
import { TOOL_NAME_PATTERN } from '../execute/tools';
import type { CanonicalRequest, MessageParam } from './canonical';
import { invalidRequest } from './errors';

export interface RequestLimits {
  /** Deepest JSON nesting accepted anywhere in a request body (checked by body.ts). Default 128. */
  maxDepth: number;
  /** Largest `max_tokens` accepted. Default 1,048,576. */
  maxOutputTokens: number;
}

export const REQUEST_LIMIT_DEFAULTS: RequestLimits = { maxDepth: 128, maxOutputTokens: 1_048_576 };

/** Throws 400 `invalid_request_error` for the first check above that `req` fails. */
export function validateCanonical(req: Pick<CanonicalRequest, 'messages' | 'tools'> & { max_tokens?: number }, limits: RequestLimits = REQUEST_LIMIT_DEFAULTS): void {
  const mt = req.max_tokens;
  if (mt !== undefined && !(mt <= limits.maxOutputTokens))
    throw invalidRequest(`max_tokens: ${mt} > ${limits.maxOutputTokens}, which is the maximum allowed number of output tokens for this gateway`);
  req.tools?.forEach((t, i) => {
    if (!TOOL_NAME_PATTERN.test(t.name)) throw invalidRequest(`tools.${i}.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`);
    if (t.input_schema.type !== 'object') throw invalidRequest(`tools.${i}.input_schema.type: Input should be 'object'`);
  });
  checkToolResults(req.messages);
}

/** Every `tool_result` must answer a `tool_use` of the assistant message just before it. */
function checkToolResults(messages: MessageParam[]): void {
  let prevToolUses: Set<string> | undefined;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role === 'system') continue; // Claude Code's inline system messages sit between turns
    if (m.role === 'user') {
      for (let j = 0; j < m.content.length; j++) {
        const b = m.content[j]!;
        if (b.type !== 'tool_result') continue;
        if (!prevToolUses || !prevToolUses.has(b.tool_use_id))
          throw invalidRequest(
            `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${b.tool_use_id.slice(0, 128)}. ` +
              'Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
          );
      }
    }
    prevToolUses = undefined;
    if (m.role === 'assistant') {
      for (const b of m.content) if (b.type === 'tool_use') (prevToolUses ??= new Set()).add(b.id);
    }
  }
}
