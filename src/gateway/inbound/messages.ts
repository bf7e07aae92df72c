/**
/**
 * Inbound API: Anthropic Messages (`POST /v1/messages`, `/v1/messages/count_tokens`).
 *
 * `parseMessagesRequest(body)` validates the client's JSON into the canonical request (throws
 * `GatewayError` 400 with an Anthropic-shaped message on anything it cannot carry faithfully);
 * `messagesApi` is the route's inbound module (parse, SSE stream, non-streaming body, error body).
 * Request decisions (also in docs/gateway.md):
 *
 * - `system` (string or text blocks) → the canonical system prompt (blocks joined with "\n");
 *   messages with `role: "system"` inside `messages` (Claude Code sends them) stay in place.
 * - `output_config.format` (`{type: "json_schema", schema}`) → structured output.
 * - `thinking: {type: "enabled", budget_tokens}` → reasoning budget; thinking blocks keep their
 *   signature; `redacted_thinking` is dropped.
 * - `document` blocks with a plain-text source become text; other document sources, server-tool
 *   blocks and unknown block types are rejected (400) rather than silently dropped.
 * - `cache_control` on system, content blocks (text, image, tool_result, tool_use) and tools is
 *   kept (forwarded to an Anthropic backend only; canonical.ts `Cacheable`).
 * - `metadata`, beta fields and other unknown top-level fields are ignored.
 */
import type { AnthropicEncodeOptions } from '../../encode/anthropicSse';
import { AnthropicSseEncoder, toAnthropicMessage } from '../../encode/anthropicSse';
import type { OutputEvent } from '../../release/output';
import {
  type AssistantBlock,
  type Cacheable,
  type CanonicalRequest,
  type ImageSource,
  isObj,
  type MessageParam,
  type Obj,
  type ReasoningSetting,
  type SystemBlock,
  type ToolChoice,
  type ToolParam,
  type UserBlock,
} from '../canonical';
import { errorTypeToStatus, invalidRequest } from '../errors';
import { parseResponseFormat } from './chat';
import type { InboundApi, InboundStream } from './types';
import { Counter, nonEmptyStr, optNumber, str } from './validate';

function parseImageSource(v: unknown, where: string): ImageSource {
  if (!isObj(v)) throw invalidRequest(`${where}.source: expected an object`);
  if (v.type === 'base64') {
    const media = nonEmptyStr(v.media_type, `${where}.source.media_type`);
    const data = nonEmptyStr(v.data, `${where}.source.data`);
    return { type: 'base64', media_type: media, data };
  }
  if (v.type === 'url') return { type: 'url', url: nonEmptyStr(v.url, `${where}.source.url`) };
  throw invalidRequest(`${where}.source.type: unsupported image source ${JSON.stringify(String(v.type))} (base64 and url are supported)`);
}

function documentText(b: Obj, where: string): string {
  const src = b.source;
  if (isObj(src) && src.type === 'text' && typeof src.data === 'string') return src.data;
  if (isObj(src) && src.type === 'content' && Array.isArray(src.content)) {
    return src.content
      .map((c, i) => {
        if (isObj(c) && c.type === 'text') return str(c.text, `${where}.source.content[${i}].text`);
        throw invalidRequest(`${where}.source.content[${i}]: only text blocks are supported`);
      })
      .join('\n');
  }
  throw invalidRequest(`${where}: only documents with a plain-text source are supported by this gateway`);
}

function parseToolResult(b: Obj, where: string, count: Counter): UserBlock {
  const id = nonEmptyStr(b.tool_use_id, `${where}.tool_use_id`);
  const texts: string[] = [];
  const images: ImageSource[] = [];
  const c = b.content;
  if (typeof c === 'string') texts.push(c);
  else if (Array.isArray(c)) {
    c.forEach((inner, i) => {
      const w = `${where}.content[${i}]`;
      if (!isObj(inner)) throw invalidRequest(`${w}: expected a content block object`);
      if (inner.type === 'text') texts.push(str(inner.text, `${w}.text`));
      else if (inner.type === 'image') {
        images.push(parseImageSource(inner.source, w));
        count.images++;
      } else if (inner.type === 'document') texts.push(documentText(inner, w));
      else throw invalidRequest(`${w}.type: unsupported block type ${JSON.stringify(String(inner.type))} in a tool_result`);
    });
  } else if (c !== undefined && c !== null) throw invalidRequest(`${where}.content: expected a string or an array of blocks`);
  const text = texts.join('\n');
  count.chars += text.length;
  return cacheable(b, { type: 'tool_result', tool_use_id: id, text, images, is_error: b.is_error === true });
}

/** `to` with the client's `cache_control` from `from`, when it is an object. */
function cacheable<T extends object>(from: Obj, to: T): T {
  if (isObj(from.cache_control)) (to as Cacheable).cache_control = from.cache_control;
  return to;
}

function parseUserBlock(b: unknown, where: string, count: Counter): UserBlock {
  if (!isObj(b)) throw invalidRequest(`${where}: expected a content block object`);
  switch (b.type) {
    case 'text': {
      const text = str(b.text, `${where}.text`);
      count.chars += text.length;
      return cacheable(b, { type: 'text' as const, text });
    }
    case 'image':
      count.images++;
      return cacheable(b, { type: 'image', source: parseImageSource(b.source, where) });
    case 'document': {
      const text = documentText(b, where);
      count.chars += text.length;
      return cacheable(b, { type: 'text' as const, text });
    }
    case 'tool_result':
      return parseToolResult(b, where, count);
    case 'tool_use':
    case 'thinking':
    case 'redacted_thinking':
      throw invalidRequest(`${where}.type: a ${b.type} block is only allowed in an assistant message`);
    default:
      throw invalidRequest(`${where}.type: unsupported content block type ${JSON.stringify(String(b.type))}`);
  }
}

function parseAssistantBlock(b: unknown, where: string, count: Counter): AssistantBlock | undefined {
  if (!isObj(b)) throw invalidRequest(`${where}: expected a content block object`);
  switch (b.type) {
    case 'text': {
      const text = str(b.text, `${where}.text`);
      count.chars += text.length;
      return cacheable(b, { type: 'text' as const, text });
    }
    case 'thinking': {
      const thinking = str(b.thinking, `${where}.thinking`);
      count.chars += thinking.length;
      return typeof b.signature === 'string' && b.signature.length > 0
        ? { type: 'thinking', thinking, signature: b.signature }
        : { type: 'thinking', thinking };
    }
    case 'redacted_thinking':
      return undefined;
    case 'tool_use': {
      const id = nonEmptyStr(b.id, `${where}.id`);
      const name = nonEmptyStr(b.name, `${where}.name`);
      if (!isObj(b.input)) throw invalidRequest(`${where}.input: expected an object`);
      count.chars += name.length + JSON.stringify(b.input).length;
      return cacheable(b, { type: 'tool_use' as const, id, name, input: b.input });
    }
    case 'tool_result':
    case 'image':
    case 'document':
      throw invalidRequest(`${where}.type: a ${b.type} block is only allowed in a user message`);
    default:
      throw invalidRequest(`${where}.type: unsupported content block type ${JSON.stringify(String(b.type))}`);
  }
}

function parseMessage(m: unknown, i: number, count: Counter): MessageParam {
  const where = `messages[${i}]`;
  if (!isObj(m)) throw invalidRequest(`${where}: expected an object`);
  const role = m.role;
  if (role === 'system') {
    const text = parseSystem(m.content, count, `${where}.content`);
    return { role, text: text ?? '' };
  }
  if (role !== 'user' && role !== 'assistant') throw invalidRequest(`${where}.role: must be "user", "assistant" or "system"`);
  const c = m.content;
  let raw: unknown[];
  if (typeof c === 'string') {
    raw = [{ type: 'text', text: c }];
  } else if (Array.isArray(c)) {
    if (c.length === 0) throw invalidRequest(`${where}.content: must not be empty`);
    raw = c;
  } else {
    throw invalidRequest(`${where}.content: expected a string or an array of content blocks`);
  }
  if (role === 'user') return { role, content: raw.map((b, j) => parseUserBlock(b, `${where}.content[${j}]`, count)) };
  const content: AssistantBlock[] = [];
  raw.forEach((b, j) => {
    const blk = parseAssistantBlock(b, `${where}.content[${j}]`, count);
    if (blk) content.push(blk);
  });
  return { role, content };
}

function parseSystem(v: unknown, count: Counter, where = 'system'): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') {
    count.chars += v.length;
    return v;
  }
  if (!Array.isArray(v)) throw invalidRequest(`${where}: expected a string or an array of text blocks`);
  const parts = v.map((b, i) => {
    if (!isObj(b) || b.type !== 'text') throw invalidRequest(`${where}[${i}]: only text blocks are allowed in a system prompt`);
    return str(b.text, `${where}[${i}].text`);
  });
  const s = parts.join('\n');
  count.chars += s.length;
  return s;
}

/** The system blocks (already validated by parseSystem) when one of them carries cache_control. */
function cachedSystemBlocks(v: unknown): SystemBlock[] | undefined {
  if (!Array.isArray(v) || !v.some((b) => isObj(b) && isObj(b.cache_control))) return undefined;
  return v.map((b: Obj) => cacheable(b, { text: b.text as string }));
}

function parseTools(v: unknown, count: Counter): ToolParam[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw invalidRequest('tools: expected an array');
  const seen = new Set<string>();
  return v.map((t, i) => {
    const where = `tools[${i}]`;
    if (!isObj(t)) throw invalidRequest(`${where}: expected an object`);
    if (t.type !== undefined && t.type !== null && t.type !== 'custom')
      throw invalidRequest(`${where}.type: server tools (${JSON.stringify(String(t.type))}) are not supported by this gateway`);
    const name = nonEmptyStr(t.name, `${where}.name`);
    if (seen.has(name)) throw invalidRequest(`${where}.name: duplicate tool name`);
    seen.add(name);
    if (!isObj(t.input_schema)) throw invalidRequest(`${where}.input_schema: expected a JSON Schema object`);
    const tool: ToolParam = cacheable(t, { name, input_schema: t.input_schema });
    if (typeof t.description === 'string') tool.description = t.description;
    count.chars += name.length + (tool.description?.length ?? 0) + JSON.stringify(t.input_schema).length;
    return tool;
  });
}

function parseToolChoice(v: unknown, tools: ToolParam[] | undefined): ToolChoice | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObj(v)) throw invalidRequest('tool_choice: expected an object');
  const dp = v.disable_parallel_tool_use;
  if (dp !== undefined && typeof dp !== 'boolean') throw invalidRequest('tool_choice.disable_parallel_tool_use: expected a boolean');
  const extra = dp === undefined ? {} : { disable_parallel_tool_use: dp };
  switch (v.type) {
    case 'auto':
    case 'any':
    case 'none':
      return { type: v.type, ...extra };
    case 'tool': {
      const name = nonEmptyStr(v.name, 'tool_choice.name');
      if (!tools || !tools.some((t) => t.name === name)) throw invalidRequest(`tool_choice.name: no tool named ${JSON.stringify(name)} in tools`);
      return { type: 'tool', name, ...extra };
    }
    default:
      throw invalidRequest('tool_choice.type: must be one of auto, any, tool, none');
  }
}

/** Validate a client's Messages request body (already JSON-parsed). Throws GatewayError(400). */
export function parseMessagesRequest(body: unknown, opts: { requireMaxTokens?: boolean } = {}): CanonicalRequest {
  if (!isObj(body)) throw invalidRequest('request body must be a JSON object');
  const model = body.model;
  if (typeof model !== 'string' || model.length === 0) throw invalidRequest('model: field required (a non-empty string)');
  const requireMax = opts.requireMaxTokens ?? true;
  let maxTokens = 0;
  if (body.max_tokens !== undefined || requireMax) {
    const mt = body.max_tokens;
    if (typeof mt !== 'number' || !Number.isInteger(mt)) throw invalidRequest('max_tokens: field required (an integer)');
    if (mt < 1) throw invalidRequest('max_tokens: must be at least 1');
    maxTokens = mt;
  }
  if (!Array.isArray(body.messages)) throw invalidRequest('messages: field required (an array)');
  if (body.messages.length === 0) throw invalidRequest('messages: at least one message is required');
  const count = new Counter();
  const system = parseSystem(body.system, count);
  const messages = body.messages.map((m, i) => parseMessage(m, i, count));
  const tools = parseTools(body.tools, count);
  const toolChoice = parseToolChoice(body.tool_choice, tools);
  let stop: string[] | undefined;
  if (body.stop_sequences !== undefined && body.stop_sequences !== null) {
    if (!Array.isArray(body.stop_sequences) || body.stop_sequences.some((s) => typeof s !== 'string'))
      throw invalidRequest('stop_sequences: expected an array of strings');
    stop = body.stop_sequences as string[];
  }
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') throw invalidRequest('stream: expected a boolean');
  const req: CanonicalRequest = {
    model,
    max_tokens: maxTokens,
    messages,
    stream: body.stream === true,
    contentChars: count.chars,
    imageCount: count.images,
  };
  if (system !== undefined) req.system = system;
  const systemBlocks = cachedSystemBlocks(body.system);
  if (systemBlocks) req.systemBlocks = systemBlocks;
  if (tools !== undefined) req.tools = tools;
  if (toolChoice !== undefined) req.tool_choice = toolChoice;
  if (stop !== undefined && stop.length > 0) req.stop_sequences = stop;
  const temperature = optNumber(body, 'temperature', 0, 2);
  if (temperature !== undefined) req.temperature = temperature;
  const topP = optNumber(body, 'top_p', 0, 1);
  if (topP !== undefined) req.top_p = topP;
  const topK = optNumber(body, 'top_k', 0, Number.MAX_SAFE_INTEGER);
  if (topK !== undefined) req.top_k = topK;
  const reasoning = parseThinking(body.thinking);
  if (reasoning) req.reasoning = reasoning;
  if (isObj(body.output_config)) {
    const c = new Counter();
    const rf = parseResponseFormat(body.output_config.format, 'output_config.format', 'flat', c);
    if (rf) req.responseFormat = rf;
    req.contentChars += c.chars;
  }
  return req;
}

/**
 * `thinking: {type: "enabled", budget_tokens}` → reasoning budget; `{type: "adaptive"}` → medium
 * effort. Anything else (disabled, absent, shapes this gateway does not know) → no setting, as
 * before this field was read: it never fails a request.
 */
function parseThinking(v: unknown): ReasoningSetting | undefined {
  if (!isObj(v)) return undefined;
  const b = v.budget_tokens;
  if (v.type === 'enabled' && typeof b === 'number' && Number.isInteger(b) && b >= 1) return { budgetTokens: b };
  if (v.type === 'adaptive') return { effort: 'medium' };
  return undefined;
}

/** Anthropic SSE for one request. */
class MessagesStream implements InboundStream {
  private readonly enc: AnthropicSseEncoder;
  constructor(opts: AnthropicEncodeOptions) {
    this.enc = new AnthropicSseEncoder(opts);
  }
  start(): string {
    return this.enc.push({ type: 'message.start' });
  }
  push(e: OutputEvent): string {
    return this.enc.push(e);
  }
  ping(): string {
    return this.enc.ping();
  }
  get terminated(): boolean {
    return this.enc.terminated;
  }
  enablePieces(): void {
    this.enc.enablePieces();
  }
  get pending(): boolean {
    return this.enc.pending;
  }
  more(): string {
    return this.enc.more();
  }
}

/** The `/v1/messages` inbound module. */
export const messagesApi: InboundApi = {
  name: 'messages',
  parse: (body) => parseMessagesRequest(body),
  stream: (o) => new MessagesStream(anthropicOptions(o)),
  body(events, o) {
    const msg = toAnthropicMessage(events, anthropicOptions(o));
    if (msg.type === 'error') return { status: errorTypeToStatus(msg.error.type), body: msg };
    return { status: 200, body: msg };
  },
  errorBody: (type, message) => ({ type: 'error', error: { type, message } }),
};

function anthropicOptions(o: Parameters<InboundApi['stream']>[0]): AnthropicEncodeOptions {
  const out: AnthropicEncodeOptions = { model: o.model, inputTokens: o.inputTokens, toolUseOnStop: o.toolUseOnStop };
  if (o.idGenerator) out.idGenerator = o.idGenerator;
  return out;
}

export type { AssistantBlock, ImageSource, MessageParam, Obj, ToolChoice, ToolParam, UserBlock };
