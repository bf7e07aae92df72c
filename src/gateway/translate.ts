/**
 * Anthropic Messages request → OpenAI Chat Completions request (the gateway's request side).
 *
 * `parseMessagesRequest(body)` validates the client's JSON (throws `GatewayError` 400 with an
 * Anthropic-shaped message on anything it cannot translate faithfully) and `toChatRequest()`
 * builds the upstream body. Decisions (also in docs/gateway.md):
 *
 * - `system` (string or text blocks) → one leading `system` message (blocks joined with "\n").
 *   Messages with `role: "system"` inside `messages` (Claude Code sends them) become `system`
 *   messages in place, or are merged into the leading one (`systemMessages: 'merge'`).
 * - user text blocks → one string content (joined with "\n") unless the message has images, then
 *   an array of `text` / `image_url` parts. Images: base64 → `data:` URL, url → the URL.
 * - user `tool_result` blocks → `tool` messages (`tool_call_id` = the block's `tool_use_id`), in
 *   block order and *before* the rest of that user message (chat requires tool messages right
 *   after the assistant message that made the calls). Their content is the joined text; an image
 *   inside a tool result is moved to the user message that follows, and the tool message says
 *   so. `is_error: true` prefixes the content with "Error: ".
 * - assistant text → `content` (null when only tool calls); `thinking` → `reasoning_content`
 *   (what vLLM / SGLang / DeepSeek-style servers read back); `redacted_thinking` is dropped;
 *   `tool_use` → `tool_calls` with the same id and `arguments = JSON.stringify(input)`.
 * - `document` blocks with a plain-text source become text; other document sources, server-tool
 *   blocks and unknown block types are rejected (400) rather than silently dropped.
 * - tools: `{name, description, input_schema}` → `{type:"function", function:{name, description,
 *   parameters}}`; server tools (a `type` other than "custom") are rejected.
 * - tool_choice: auto→"auto", any→"required", tool→{type:"function",function:{name}}, none→"none";
 *   `disable_parallel_tool_use` true/false → `parallel_tool_calls` false/true (absent: not sent).
 * - max_tokens → `max_tokens` (or `max_completion_tokens`, configurable); stop_sequences → `stop`;
 *   temperature, top_p, top_k passed through. `thinking`, `metadata`, `cache_control`, beta
 *   fields and other unknown top-level fields are ignored.
 * - The upstream request always streams, with `stream_options.include_usage: true`; a
 *   non-streaming client request is assembled from the stream.
 */
import { invalidRequest } from './errors';

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

// ------------------------------------------------------------------ Anthropic request (validated)

export type ImageSource = { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };

export type UserBlock =
  | { type: 'text'; text: string }
  | { type: 'image'; source: ImageSource }
  | { type: 'tool_result'; tool_use_id: string; text: string; images: ImageSource[]; is_error: boolean };

export type AssistantBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string }
  | { type: 'tool_use'; id: string; name: string; input: Obj };

export type MessageParam =
  | { role: 'user'; content: UserBlock[] }
  | { role: 'assistant'; content: AssistantBlock[] }
  /** A mid-conversation system message (Claude Code sends these; text only). */
  | { role: 'system'; text: string };

export interface ToolParam {
  name: string;
  description?: string;
  input_schema: Obj;
}

export type ToolChoice =
  | { type: 'auto' | 'any' | 'none'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean };

export interface MessagesRequest {
  model: string;
  max_tokens: number;
  system?: string;
  messages: MessageParam[];
  tools?: ToolParam[];
  tool_choice?: ToolChoice;
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  top_k?: number;
  stream: boolean;
  /** Characters of content counted for the token estimate (system, messages, tools). */
  contentChars: number;
  /** Number of images (each counted as a fixed token cost in the estimate). */
  imageCount: number;
}

/** Tokens counted per image in the estimate (Anthropic: about (w·h)/750; ~1.2 MP → 1,600). */
export const IMAGE_TOKEN_ESTIMATE = 1600;

/** Input-token estimate: ceil(characters / 3) over system, messages and tools, plus images. */
export function estimateInputTokens(req: Pick<MessagesRequest, 'contentChars' | 'imageCount'>): number {
  return Math.ceil(req.contentChars / 3) + req.imageCount * IMAGE_TOKEN_ESTIMATE;
}

class Counter {
  chars = 0;
  images = 0;
}

function str(v: unknown, where: string): string {
  if (typeof v !== 'string') throw invalidRequest(`${where}: expected a string`);
  return v;
}

function nonEmptyStr(v: unknown, where: string): string {
  const s = str(v, where);
  if (s.length === 0) throw invalidRequest(`${where}: must not be empty`);
  return s;
}

function optNumber(body: Obj, key: string, min: number, max: number): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max)
    throw invalidRequest(`${key}: expected a number between ${min} and ${max}`);
  return v;
}

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
  return { type: 'tool_result', tool_use_id: id, text, images, is_error: b.is_error === true };
}

function parseUserBlock(b: unknown, where: string, count: Counter): UserBlock {
  if (!isObj(b)) throw invalidRequest(`${where}: expected a content block object`);
  switch (b.type) {
    case 'text': {
      const text = str(b.text, `${where}.text`);
      count.chars += text.length;
      return { type: 'text', text };
    }
    case 'image':
      count.images++;
      return { type: 'image', source: parseImageSource(b.source, where) };
    case 'document': {
      const text = documentText(b, where);
      count.chars += text.length;
      return { type: 'text', text };
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
      return { type: 'text', text };
    }
    case 'thinking': {
      const thinking = str(b.thinking, `${where}.thinking`);
      count.chars += thinking.length;
      return { type: 'thinking', thinking };
    }
    case 'redacted_thinking':
      return undefined;
    case 'tool_use': {
      const id = nonEmptyStr(b.id, `${where}.id`);
      const name = nonEmptyStr(b.name, `${where}.name`);
      if (!isObj(b.input)) throw invalidRequest(`${where}.input: expected an object`);
      count.chars += name.length + JSON.stringify(b.input).length;
      return { type: 'tool_use', id, name, input: b.input };
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
    const tool: ToolParam = { name, input_schema: t.input_schema };
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
export function parseMessagesRequest(body: unknown, opts: { requireMaxTokens?: boolean } = {}): MessagesRequest {
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
  const req: MessagesRequest = {
    model,
    max_tokens: maxTokens,
    messages,
    stream: body.stream === true,
    contentChars: count.chars,
    imageCount: count.images,
  };
  if (system !== undefined) req.system = system;
  if (tools !== undefined) req.tools = tools;
  if (toolChoice !== undefined) req.tool_choice = toolChoice;
  if (stop !== undefined && stop.length > 0) req.stop_sequences = stop;
  const temperature = optNumber(body, 'temperature', 0, 2);
  if (temperature !== undefined) req.temperature = temperature;
  const topP = optNumber(body, 'top_p', 0, 1);
  if (topP !== undefined) req.top_p = topP;
  const topK = optNumber(body, 'top_k', 0, Number.MAX_SAFE_INTEGER);
  if (topK !== undefined) req.top_k = topK;
  return req;
}

// ------------------------------------------------------------------ OpenAI chat request

export type ChatContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | ChatContentPart[] }
  | { role: 'assistant'; content: string | null; reasoning_content?: string; tool_calls?: ChatToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface ChatTool {
  type: 'function';
  function: { name: string; description?: string; parameters: Obj };
}

export type ChatToolChoice = 'auto' | 'required' | 'none' | { type: 'function'; function: { name: string } };

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  stream: true;
  stream_options: { include_usage: true };
  max_tokens?: number;
  max_completion_tokens?: number;
  stop?: string[];
  temperature?: number;
  top_p?: number;
  top_k?: number;
  tools?: ChatTool[];
  tool_choice?: ChatToolChoice;
  parallel_tool_calls?: boolean;
}

export interface ChatRequestOptions {
  /** The upstream model name (after model mapping). */
  model: string;
  /** Which field carries max_tokens upstream. Default 'max_tokens' (understood by every compatible server). */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
  /**
   * Mid-conversation system messages: 'inline' (default) sends each as a `system` message in place;
   * 'merge' appends their text to the one leading system message (for chat templates that accept
   * a system message only first).
   */
  systemMessages?: 'inline' | 'merge';
}

function imageUrl(src: ImageSource): string {
  return src.type === 'base64' ? `data:${src.media_type};base64,${src.data}` : src.url;
}

function userMessage(texts: string[], images: ImageSource[]): ChatMessage | undefined {
  if (images.length === 0) {
    if (texts.length === 0) return undefined;
    return { role: 'user', content: texts.join('\n') };
  }
  const parts: ChatContentPart[] = texts.map((text) => ({ type: 'text', text }));
  for (const img of images) parts.push({ type: 'image_url', image_url: { url: imageUrl(img) } });
  return { role: 'user', content: parts };
}

function translateUser(m: { role: 'user'; content: UserBlock[] }, out: ChatMessage[]): void {
  // Tool results first (chat requires them right after the assistant's tool calls), then the rest.
  const texts: string[] = [];
  const images: ImageSource[] = [];
  const extraImages: ImageSource[] = [];
  let mixedParts: ChatContentPart[] | undefined;
  for (const b of m.content) {
    if (b.type === 'tool_result') {
      let content = b.text;
      if (b.images.length > 0) {
        const note = `[${b.images.length} image${b.images.length > 1 ? 's' : ''} attached in the next user message]`;
        content = content.length > 0 ? `${content}\n${note}` : note;
        extraImages.push(...b.images);
      }
      if (b.is_error && !/^error\b/i.test(content)) content = `Error: ${content}`;
      out.push({ role: 'tool', tool_call_id: b.tool_use_id, content });
    } else if (b.type === 'text') {
      texts.push(b.text);
      mixedParts?.push({ type: 'text', text: b.text });
    } else {
      images.push(b.source);
      mixedParts ??= texts.map((text) => ({ type: 'text', text }));
      mixedParts.push({ type: 'image_url', image_url: { url: imageUrl(b.source) } });
    }
  }
  let msg: ChatMessage | undefined;
  if (mixedParts) {
    for (const img of extraImages) mixedParts.push({ type: 'image_url', image_url: { url: imageUrl(img) } });
    msg = { role: 'user', content: mixedParts };
  } else {
    msg = userMessage(texts, extraImages);
  }
  if (msg) out.push(msg);
}

function translateAssistant(m: { role: 'assistant'; content: AssistantBlock[] }, out: ChatMessage[]): void {
  const texts: string[] = [];
  const thinking: string[] = [];
  const calls: ChatToolCall[] = [];
  for (const b of m.content) {
    if (b.type === 'text') texts.push(b.text);
    else if (b.type === 'thinking') thinking.push(b.thinking);
    else calls.push({ id: b.id, type: 'function', function: { name: b.name, arguments: JSON.stringify(b.input) } });
  }
  const text = texts.join('');
  const msg: ChatMessage = { role: 'assistant', content: text.length > 0 || calls.length === 0 ? text : null };
  const r = thinking.join('');
  if (r.length > 0) msg.reasoning_content = r;
  if (calls.length > 0) msg.tool_calls = calls;
  out.push(msg);
}

/** Build the upstream Chat Completions body. */
export function toChatRequest(req: MessagesRequest, opts: ChatRequestOptions): ChatRequest {
  const messages: ChatMessage[] = [];
  const merge = opts.systemMessages === 'merge';
  const systemParts: string[] = req.system !== undefined && req.system.length > 0 ? [req.system] : [];
  if (merge) for (const m of req.messages) if (m.role === 'system' && m.text.length > 0) systemParts.push(m.text);
  if (systemParts.length > 0) messages.push({ role: 'system', content: systemParts.join('\n\n') });
  for (const m of req.messages) {
    if (m.role === 'user') translateUser(m, messages);
    else if (m.role === 'assistant') translateAssistant(m, messages);
    else if (!merge && m.text.length > 0) messages.push({ role: 'system', content: m.text });
  }
  const out: ChatRequest = {
    model: opts.model,
    messages,
    stream: true,
    stream_options: { include_usage: true },
  };
  if (req.max_tokens > 0) {
    if ((opts.maxTokensField ?? 'max_tokens') === 'max_tokens') out.max_tokens = req.max_tokens;
    else out.max_completion_tokens = req.max_tokens;
  }
  if (req.stop_sequences) out.stop = req.stop_sequences;
  if (req.temperature !== undefined) out.temperature = req.temperature;
  if (req.top_p !== undefined) out.top_p = req.top_p;
  if (req.top_k !== undefined) out.top_k = req.top_k;
  if (req.tools && req.tools.length > 0) {
    out.tools = req.tools.map((t) => {
      const fn: ChatTool['function'] = { name: t.name, parameters: t.input_schema };
      if (t.description !== undefined) fn.description = t.description;
      return { type: 'function', function: fn };
    });
  }
  const tc = req.tool_choice;
  if (tc) {
    switch (tc.type) {
      case 'auto':
        out.tool_choice = 'auto';
        break;
      case 'any':
        out.tool_choice = 'required';
        break;
      case 'none':
        out.tool_choice = 'none';
        break;
      case 'tool':
        out.tool_choice = { type: 'function', function: { name: tc.name } };
        break;
    }
    if (tc.disable_parallel_tool_use !== undefined && out.tools) out.parallel_tool_calls = !tc.disable_parallel_tool_use;
  }
  return out;
}

/** True when the client asked for at most one tool call (SPEC §5.5). */
export function singleToolRequested(req: MessagesRequest): boolean {
  return req.tool_choice?.disable_parallel_tool_use === true;
}

// ------------------------------------------------------------------ model mapping

export interface ModelMapping {
  /** Pattern → upstream model; `*` matches any run of characters. First match wins. */
  rules: { pattern: string; target: string }[];
  /** Used when no rule matches; undefined: pass the client's model through. */
  fallback?: string;
}

/** Parse `a=b,claude-*=qwen3` (comma or newline separated). Throws Error on a malformed entry. */
export function parseModelMap(spec: string): ModelMapping['rules'] {
  const rules: ModelMapping['rules'] = [];
  for (const raw of spec.split(/[,\n]/)) {
    const entry = raw.trim();
    if (entry.length === 0) continue;
    const eq = entry.indexOf('=');
    if (eq <= 0 || eq === entry.length - 1) throw new Error(`model map entry "${entry}" is not pattern=model`);
    rules.push({ pattern: entry.slice(0, eq).trim(), target: entry.slice(eq + 1).trim() });
  }
  return rules;
}

function globToRegExp(pattern: string): RegExp {
  const escaped = pattern.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${escaped.join('.*')}$`);
}

export function mapModel(mapping: ModelMapping, clientModel: string): string {
  for (const r of mapping.rules) if (globToRegExp(r.pattern).test(clientModel)) return r.target;
  return mapping.fallback ?? clientModel;
}
