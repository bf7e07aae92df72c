/**
 * Upstream: Anthropic Messages (`POST …/v1/messages`, `stream: true`).
 *
 * The canonical request is Anthropic-shaped, so this is mostly a re-serialisation. Decisions:
 * - system prompt + mid-conversation system messages → `system` (joined with a blank line; the
 *   Messages API has no system role inside `messages`); a system prompt with cache breakpoints
 *   goes as its blocks (mid-conversation system messages as further text blocks).
 * - `cache_control` on system blocks, content blocks and tools goes back as the client sent it
 *   (Claude Code's prompt caching keeps working through the gateway).
 * - thinking blocks go back with their `signature`; a thinking block without one (history from a
 *   Chat or Responses client) is not sent — the API rejects unsigned thinking.
 * - images (base64 or URL), tool results (text + images, `is_error`) pass through.
 * - structured output → `output_config.format {type: "json_schema", schema}` (a json_object
 *   request → 400: Anthropic constrains output only by a schema);
 * - tool_choice and `disable_parallel_tool_use` pass through; reasoning: a budget → `thinking:
 *   {type: "enabled", budget_tokens}`, an effort alone → the budget of that effort (canonical.ts).
 * - `max_tokens` is required by the API: a client that sent none gets DEFAULT_MAX_TOKENS.
 * - auth: `x-api-key` + `anthropic-version: 2023-06-01`.
 */
import { type AssistantBlock, budgetForEffort, type Cacheable, type CanonicalRequest, type ImageSource, type Obj, type UserBlock } from '../canonical';
import { invalidRequest } from '../errors';
import type { UpstreamFormat } from './types';
import { endpointUrl } from './url';

/** max_tokens sent when the client gave none (Chat / Responses clients may omit it). */
export const DEFAULT_MAX_TOKENS = 8192;

function image(src: ImageSource): Obj {
  return src.type === 'base64'
    ? { type: 'image', source: { type: 'base64', media_type: src.media_type, data: src.data } }
    : { type: 'image', source: { type: 'url', url: src.url } };
}

/** `out` with the client's cache breakpoint, if it set one. */
function cached(b: Cacheable, out: Obj): Obj {
  if (b.cache_control) out.cache_control = b.cache_control;
  return out;
}

function userContent(blocks: UserBlock[]): Obj[] {
  return blocks.map((b): Obj => cached(b, userBlock(b)));
}

function userBlock(b: UserBlock): Obj {
  if (b.type === 'text') return { type: 'text', text: b.text };
  if (b.type === 'image') return image(b.source);
  const content: Obj[] = [];
  if (b.text.length > 0) content.push({ type: 'text', text: b.text });
  for (const i of b.images) content.push(image(i));
  const out: Obj = { type: 'tool_result', tool_use_id: b.tool_use_id, content };
  if (b.is_error) out.is_error = true;
  return out;
}

function assistantContent(blocks: AssistantBlock[]): Obj[] {
  const out: Obj[] = [];
  for (const b of blocks) {
    if (b.type === 'text') {
      if (b.text.length > 0) out.push(cached(b, { type: 'text', text: b.text }));
    } else if (b.type === 'thinking') {
      if (b.signature) out.push({ type: 'thinking', thinking: b.thinking, signature: b.signature });
    } else out.push(cached(b, { type: 'tool_use', id: b.id, name: b.name, input: b.input }));
  }
  return out;
}

/** Canonical request → Anthropic Messages body. */
export function toAnthropicRequest(req: CanonicalRequest, model: string): Obj {
  const mid: string[] = [];
  const messages: Obj[] = [];
  for (const m of req.messages) {
    if (m.role === 'system') {
      if (m.text.length > 0) mid.push(m.text);
    } else if (m.role === 'user') messages.push({ role: 'user', content: userContent(m.content) });
    else {
      const content = assistantContent(m.content);
      if (content.length > 0) messages.push({ role: 'assistant', content });
    }
  }
  const out: Obj = { model, max_tokens: req.max_tokens > 0 ? req.max_tokens : DEFAULT_MAX_TOKENS, messages, stream: true };
  if (req.systemBlocks) out.system = [...req.systemBlocks.map((b) => cached(b, { type: 'text', text: b.text })), ...mid.map((text) => ({ type: 'text', text }))];
  else {
    const system = req.system !== undefined && req.system.length > 0 ? [req.system, ...mid] : mid;
    if (system.length > 0) out.system = system.join('\n\n');
  }
  if (req.tools && req.tools.length > 0)
    out.tools = req.tools.map((t) => cached(t, t.description !== undefined ? { name: t.name, description: t.description, input_schema: t.input_schema } : { name: t.name, input_schema: t.input_schema }));
  if (req.tool_choice) out.tool_choice = { ...req.tool_choice };
  if (req.stop_sequences) out.stop_sequences = req.stop_sequences;
  if (req.temperature !== undefined) out.temperature = req.temperature;
  if (req.top_p !== undefined) out.top_p = req.top_p;
  if (req.top_k !== undefined) out.top_k = req.top_k;
  if (req.reasoning) {
    const budget = req.reasoning.budgetTokens ?? budgetForEffort(req.reasoning.effort);
    out.thinking = { type: 'enabled', budget_tokens: budget };
  }
  const rf = req.responseFormat;
  if (rf?.type === 'json_object')
    throw invalidRequest('json_object output: the upstream (Anthropic) constrains output only by a JSON Schema; send a json_schema format');
  if (rf) out.output_config = { format: { type: 'json_schema', schema: rf.schema } };
  return out;
}

/** `…/v1/messages` for a base URL (`http://h`, `http://h/v1`, or the full endpoint). */
export function messagesUrl(base: string): URL {
  return endpointUrl(base, 'messages');
}

/** A whole Messages response (a backend that ignored `stream`) → the stream events it stands for. */
export function messageToEvents(json: unknown): unknown[] | undefined {
  if (typeof json !== 'object' || json === null) return undefined;
  const m = json as Obj;
  if (m.type === 'error') return [m];
  if (m.type !== 'message' || !Array.isArray(m.content)) return undefined;
  const out: unknown[] = [{ type: 'message_start', message: { ...m, content: [], stop_reason: null } }];
  m.content.forEach((b: unknown, index: number) => {
    if (typeof b !== 'object' || b === null) return;
    const blk = b as Obj;
    if (blk.type === 'text') {
      out.push({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      out.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: blk.text } });
    } else if (blk.type === 'thinking') {
      out.push({ type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      out.push({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: blk.thinking } });
      if (typeof blk.signature === 'string') out.push({ type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: blk.signature } });
    } else if (blk.type === 'tool_use') {
      out.push({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: blk.id, name: blk.name, input: {} } });
      out.push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(blk.input ?? {}) } });
    } else {
      out.push({ type: 'content_block_start', index, content_block: blk });
    }
    out.push({ type: 'content_block_stop', index });
  });
  out.push({ type: 'message_delta', delta: { stop_reason: m.stop_reason ?? null, stop_sequence: m.stop_sequence ?? null }, usage: m.usage ?? {} });
  out.push({ type: 'message_stop' });
  return out;
}

export const anthropicUpstream: UpstreamFormat = {
  name: 'anthropic',
  wire: 'anthropic',
  url: (base) => messagesUrl(base),
  authHeaders: (key) => ({ 'anthropic-version': '2023-06-01', ...(key ? { 'x-api-key': key } : {}) }),
  body: (req, o) => toAnthropicRequest(req, o.model),
  jsonToPayloads: messageToEvents,
};
