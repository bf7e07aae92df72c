/**
 * Upstream: OpenAI Chat Completions (vLLM, SGLang, llama.cpp, Ollama, Dynamo, OpenAI itself).
 *
 * `toChatRequest(canonical)` builds the backend body. Decisions (also in docs/gateway.md):
 *
 * - system prompt → one leading `system` message. Mid-conversation system messages become
 *   `system` messages in place, or are merged into the leading one (`systemMessages: 'merge'`).
 * - user text blocks → one string content (joined with "\n") unless the message has images, then
 *   an array of `text` / `image_url` parts. Images: base64 → `data:` URL, url → the URL.
 * - `tool_result` blocks → `tool` messages (`tool_call_id` = the block's `tool_use_id`), in
 *   block order and *before* the rest of that user message (chat requires tool messages right
 *   after the assistant message that made the calls). Their content is the joined text; an image
 *   inside a tool result is moved to the user message that follows, and the tool message says
 *   so. `is_error: true` prefixes the content with "Error: ".
 * - assistant text → `content` (null when only tool calls); `thinking` → `reasoning_content`
 *   (what vLLM / SGLang / DeepSeek-style servers read back); `tool_use` → `tool_calls` with the
 *   same id and `arguments = JSON.stringify(input)`.
 * - tools: `{name, description, input_schema}` → `{type:"function", function:{name, description,
 *   parameters}}`.
 * - tool_choice: auto→"auto", any→"required", tool→{type:"function",function:{name}}, none→"none";
 * - structured output → `response_format` (`json_schema` with name, schema, strict; `json_object`);
 *   `disable_parallel_tool_use` true/false → `parallel_tool_calls` false/true (absent: not sent).
 * - max_tokens → `max_tokens` (or `max_completion_tokens`, configurable); stop_sequences → `stop`;
 *   temperature, top_p, top_k passed through. A reasoning *effort* (from a Chat or Responses
 *   client) → `reasoning_effort`; an Anthropic thinking budget is not sent (chat servers take no
 *   budget, and Claude Code's default thinking would otherwise switch reasoning on everywhere).
 * - The upstream request always streams, with `stream_options.include_usage: true`; a
 *   non-streaming client request is assembled from the stream.
 */
import type { AssistantBlock, CanonicalRequest, ImageSource, Obj, UserBlock } from '../canonical';
import type { UpstreamFormat } from './types';
import { endpointUrl } from './url';

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
  response_format?: Obj;
  parallel_tool_calls?: boolean;
  reasoning_effort?: string;
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
export function toChatRequest(req: CanonicalRequest, opts: ChatRequestOptions): ChatRequest {
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
  if (req.reasoning?.effort !== undefined) out.reasoning_effort = req.reasoning.effort;
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
  const rf = req.responseFormat;
  if (rf)
    out.response_format =
      rf.type === 'json_object' ? { type: 'json_object' } : { type: 'json_schema', json_schema: { name: rf.name, schema: rf.schema, ...(rf.strict !== undefined ? { strict: rf.strict } : {}) } };
  return out;
}


/** The chat completions endpoint for a configured upstream URL. */
export function chatCompletionsUrl(base: string): URL {
  return endpointUrl(base, 'chat/completions');
}

/** A whole (non-streaming) chat completion → one chat chunk, so backends that ignore `stream` still work. */
export function completionToChunk(json: unknown): Record<string, unknown> | undefined {
  if (typeof json !== 'object' || json === null) return undefined;
  const j = json as Record<string, unknown>;
  const choices = j.choices;
  if (!Array.isArray(choices) || choices.length === 0) return j.error ? j : undefined;
  const c = choices[0] as Record<string, unknown>;
  const msg = (c.message ?? {}) as Record<string, unknown>;
  const delta: Record<string, unknown> = {};
  if (msg.reasoning_content !== undefined) delta.reasoning_content = msg.reasoning_content;
  else if (msg.reasoning !== undefined) delta.reasoning = msg.reasoning;
  if (msg.content !== undefined) delta.content = msg.content;
  if (Array.isArray(msg.tool_calls)) {
    delta.tool_calls = msg.tool_calls.map((tc: unknown, i: number) =>
      typeof tc === 'object' && tc !== null ? { index: i, ...(tc as Record<string, unknown>) } : tc,
    );
  }
  const out: Record<string, unknown> = {
    id: j.id,
    model: j.model,
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta, finish_reason: c.finish_reason ?? null }],
  };
  if (j.usage !== undefined) out.usage = j.usage;
  return out;
}

/** Bearer auth (OpenAI, vLLM, SGLang, llama.cpp, Ollama). */
export function bearer(key: string | undefined): Record<string, string> {
  return key ? { authorization: `Bearer ${key}` } : {};
}

/** The OpenAI Chat Completions upstream module. */
export const openaiChatUpstream: UpstreamFormat = {
  name: 'openai-chat',
  wire: 'openai-chat',
  url: (base) => chatCompletionsUrl(base),
  authHeaders: bearer,
  body: (req, o) => {
    const opts: ChatRequestOptions = { model: o.model };
    if (o.maxTokensField) opts.maxTokensField = o.maxTokensField;
    if (o.systemMessages) opts.systemMessages = o.systemMessages;
    return toChatRequest(req, opts);
  },
  jsonToPayloads: (json) => {
    const chunk = completionToChunk(json);
    return chunk ? [chunk, '[DONE]'] : undefined;
  },
};
