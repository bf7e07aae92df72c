/**
 * Inbound API: OpenAI Chat Completions (`POST /v1/chat/completions`) — qwen-code, opencode, aider,
 * the openai SDK and most agent tools.
 *
 * Request → canonical (400 with an OpenAI error body on anything that cannot be carried):
 * - leading `system` / `developer` messages → the system prompt (joined with a blank line); later
 *   ones → mid-conversation system messages in place. Content: a string or text parts.
 * - `user`: a string or parts: `text`, `image_url` (a `data:` URL → base64 image, else a URL image);
 *   audio/file parts → 400.
 * - `assistant`: `content` (string or text/refusal parts), `reasoning_content` (or `reasoning`) →
 *   thinking, `tool_calls` → tool_use blocks (`arguments` must be a JSON object text).
 * - `tool` messages → tool_result blocks (consecutive ones form one user turn); `function` role and
 *   the legacy `functions` / `function_call` fields → 400.
 * - tools (`type: "function"` only), tool_choice (auto / none / required / a named function),
 *   `parallel_tool_calls`, `max_tokens` / `max_completion_tokens`, `stop`, temperature, top_p,
 *   top_k, `reasoning_effort`, `stream`, `stream_options.include_usage`.
 * - `response_format` `json_schema` / `json_object` → structured output (each upstream's own field).
 * - `n` > 1, `logprobs`, audio output → 400. Other fields (seed, user,
 *   metadata, penalties, service_tier, …) are ignored.
 * Output: src/encode/chatSse.ts.
 */
import { ChatSseEncoder, toChatCompletion } from '../../encode/chatSse';
import { openaiErrorBody } from '../../encode/openaiCommon';
import {
  type AssistantBlock,
  type CanonicalRequest,
  type ImageSource,
  isObj,
  type MessageParam,
  type Obj,
  type ReasoningSetting,
  type ResponseFormat,
  type ToolChoice,
  type ToolParam,
  type UserBlock,
} from '../canonical';
import { errorTypeToStatus, invalidRequest } from '../errors';
import type { InboundApi } from './types';
import { Counter, nonEmptyStr, optNumber, str } from './validate';

/** `data:image/png;base64,…` → base64 source; any other URL → URL source. */
export function imageFromUrl(url: string, where: string): ImageSource {
  const m = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (m) {
    if (m[2]!.length === 0) throw invalidRequest(`${where}: empty image data`);
    return { type: 'base64', media_type: m[1]!, data: m[2]! };
  }
  if (url.startsWith('data:')) throw invalidRequest(`${where}: only base64 data URLs are supported`);
  return { type: 'url', url };
}

/** Text of a content value: a string, or an array of text-like parts. */
function textOf(v: unknown, where: string, count: Counter, allowed: string[] = ['text']): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') {
    count.chars += v.length;
    return v;
  }
  if (!Array.isArray(v)) throw invalidRequest(`${where}: expected a string or an array of content parts`);
  const parts = v.map((p, i) => {
    if (!isObj(p) || !allowed.includes(String(p.type)))
      throw invalidRequest(`${where}[${i}]: unsupported content part type ${JSON.stringify(isObj(p) ? String(p.type) : typeof p)} here (expected ${allowed.join(' or ')})`);
    return str(p.type === 'refusal' ? p.refusal : p.text, `${where}[${i}].${p.type === 'refusal' ? 'refusal' : 'text'}`);
  });
  const s = parts.join('\n');
  count.chars += s.length;
  return s;
}

function userBlocks(v: unknown, where: string, count: Counter): UserBlock[] {
  if (typeof v === 'string') {
    count.chars += v.length;
    return [{ type: 'text', text: v }];
  }
  if (!Array.isArray(v)) throw invalidRequest(`${where}: expected a string or an array of content parts`);
  return v.map((p, i): UserBlock => {
    const w = `${where}[${i}]`;
    if (!isObj(p)) throw invalidRequest(`${w}: expected a content part object`);
    if (p.type === 'text') {
      const text = str(p.text, `${w}.text`);
      count.chars += text.length;
      return { type: 'text', text };
    }
    if (p.type === 'image_url') {
      const iu = p.image_url;
      const url = typeof iu === 'string' ? iu : isObj(iu) ? iu.url : undefined;
      count.images++;
      return { type: 'image', source: imageFromUrl(nonEmptyStr(url, `${w}.image_url.url`), `${w}.image_url`) };
    }
    throw invalidRequest(`${w}.type: content part ${JSON.stringify(String(p.type))} is not supported by this gateway (text and image_url are)`);
  });
}

/** A tool call's `arguments` text → input object (400 when it is not a JSON object). */
export function argumentsObject(v: unknown, where: string): Obj {
  if (isObj(v)) return v;
  const s = typeof v === 'string' ? v.trim() : '';
  if (s.length === 0) return {};
  try {
    const o: unknown = JSON.parse(s);
    if (isObj(o)) return o;
  } catch {
    // fall through
  }
  throw invalidRequest(`${where}: expected the JSON text of an object`);
}

function parseMessages(raw: unknown[], count: Counter): { system?: string; messages: MessageParam[] } {
  const systemParts: string[] = [];
  const messages: MessageParam[] = [];
  let leading = true;
  let toolTurn: UserBlock[] | undefined;
  raw.forEach((m, i) => {
    const where = `messages[${i}]`;
    if (!isObj(m)) throw invalidRequest(`${where}: expected an object`);
    const role = m.role;
    if (role !== 'tool') toolTurn = undefined;
    if (role === 'system' || role === 'developer') {
      const text = textOf(m.content, `${where}.content`, count);
      if (leading) systemParts.push(text);
      else messages.push({ role: 'system', text });
      return;
    }
    leading = false;
    if (role === 'user') {
      messages.push({ role: 'user', content: userBlocks(m.content, `${where}.content`, count) });
    } else if (role === 'assistant') {
      const content: AssistantBlock[] = [];
      const reasoning = m.reasoning_content ?? m.reasoning;
      if (typeof reasoning === 'string' && reasoning.length > 0) {
        count.chars += reasoning.length;
        content.push({ type: 'thinking', thinking: reasoning });
      }
      const text = textOf(m.content, `${where}.content`, count, ['text', 'refusal']);
      if (text.length > 0) content.push({ type: 'text', text });
      if (m.tool_calls !== undefined && m.tool_calls !== null) {
        if (!Array.isArray(m.tool_calls)) throw invalidRequest(`${where}.tool_calls: expected an array`);
        m.tool_calls.forEach((tc, j) => {
          const w = `${where}.tool_calls[${j}]`;
          if (!isObj(tc) || !isObj(tc.function)) throw invalidRequest(`${w}: expected {id, type: "function", function: {name, arguments}}`);
          if (tc.type !== undefined && tc.type !== 'function') throw invalidRequest(`${w}.type: only function tool calls are supported`);
          const name = nonEmptyStr(tc.function.name, `${w}.function.name`);
          const input = argumentsObject(tc.function.arguments, `${w}.function.arguments`);
          count.chars += name.length + JSON.stringify(input).length;
          content.push({ type: 'tool_use', id: nonEmptyStr(tc.id, `${w}.id`), name, input });
        });
      }
      if (m.function_call !== undefined && m.function_call !== null) throw invalidRequest(`${where}.function_call: legacy function calls are not supported; use tool_calls`);
      if (content.length === 0) content.push({ type: 'text', text: '' });
      messages.push({ role: 'assistant', content });
    } else if (role === 'tool') {
      const text = textOf(m.content, `${where}.content`, count);
      const block: UserBlock = { type: 'tool_result', tool_use_id: nonEmptyStr(m.tool_call_id, `${where}.tool_call_id`), text, images: [], is_error: false };
      if (toolTurn) toolTurn.push(block);
      else {
        toolTurn = [block];
        messages.push({ role: 'user', content: toolTurn });
      }
    } else if (role === 'function') {
      throw invalidRequest(`${where}.role: legacy "function" messages are not supported; use "tool"`);
    } else {
      throw invalidRequest(`${where}.role: must be one of system, developer, user, assistant, tool`);
    }
  });
  const system = systemParts.filter((s) => s.length > 0).join('\n\n');
  return system.length > 0 ? { system, messages } : { messages };
}

/**
 * OpenAI function tools: Chat nests them (`{type: "function", function: {name, description,
 * parameters}}`), Responses does not (`{type: "function", name, …}`). Other tool types → 400.
 */
export function parseFunctionTools(v: unknown, count: Counter, shape: 'nested' | 'flat'): ToolParam[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw invalidRequest('tools: expected an array');
  const seen = new Set<string>();
  return v.map((t, i) => {
    const at = `tools[${i}]`;
    if (!isObj(t)) throw invalidRequest(`${at}: expected an object`);
    const f = shape === 'nested' ? t.function : t;
    if (t.type !== 'function' || !isObj(f))
      throw invalidRequest(`${at}.type: tool type ${JSON.stringify(String(t.type))} is not supported by this gateway (function tools are; hosted tools run at the provider)`);
    const where = shape === 'nested' ? `${at}.function` : at;
    const name = nonEmptyStr(f.name, `${where}.name`);
    if (seen.has(name)) throw invalidRequest(`${where}.name: duplicate tool name`);
    seen.add(name);
    const params = f.parameters ?? { type: 'object', properties: {} };
    if (!isObj(params)) throw invalidRequest(`${where}.parameters: expected a JSON Schema object`);
    const tool: ToolParam = { name, input_schema: params };
    if (typeof f.description === 'string') tool.description = f.description;
    count.chars += name.length + (tool.description?.length ?? 0) + JSON.stringify(params).length;
    return tool;
  });
}

/**
 * OpenAI `allowed_tools` (Chat `{type: "allowed_tools", allowed_tools: {mode, tools}}`, Responses
 * `{type: "allowed_tools", mode, tools}`): the model may call only these. No backend API shares
 * one spelling for it (Anthropic has none), so the gateway sends only the allowed tools with
 * tool choice auto / required — the same constraint, at the cost of the backend's prompt-cache
 * prefix when the list changes. `resolve` names each entry's backend tool (undefined: an entry for
 * a tool the gateway leaves out anyway, e.g. a hosted one).
 */
export function allowedTools(
  v: Record<string, unknown>,
  tools: ToolParam[] | undefined,
  resolve: (entry: Record<string, unknown>, where: string) => string | undefined,
): { mode: 'auto' | 'required'; tools: ToolParam[] } {
  const spec = isObj(v.allowed_tools) ? v.allowed_tools : v;
  const at = isObj(v.allowed_tools) ? 'tool_choice.allowed_tools' : 'tool_choice';
  if (spec.mode !== 'auto' && spec.mode !== 'required') throw invalidRequest(`${at}.mode: must be "auto" or "required"`);
  if (!Array.isArray(spec.tools)) throw invalidRequest(`${at}.tools: expected an array of tools`);
  const allowed = new Set<string>();
  spec.tools.forEach((t, i) => {
    if (!isObj(t)) throw invalidRequest(`${at}.tools[${i}]: expected an object`);
    const name = resolve(t, `${at}.tools[${i}]`);
    if (name !== undefined) allowed.add(name);
  });
  const kept = (tools ?? []).filter((t) => allowed.has(t.name));
  if (spec.mode === 'required' && kept.length === 0) throw invalidRequest(`${at}.tools: mode "required" but none of the allowed tools is offered in tools`);
  return { mode: spec.mode, tools: kept };
}

/** The name of a Chat `allowed_tools` entry (`{type: "function", function: {name}}`); it must be offered. */
function chatAllowedEntry(tools: ToolParam[] | undefined): (t: Record<string, unknown>, where: string) => string {
  return (t, where) => {
    const name = nonEmptyStr(t.type === 'function' && isObj(t.function) ? t.function.name : t.name, `${where}.function.name`);
    if (!tools?.some((x) => x.name === name)) throw invalidRequest(`${where}: no tool named ${JSON.stringify(name)} in tools`);
    return name;
  };
}

/** OpenAI tool_choice (Chat: `{type:"function", function:{name}}`; Responses: `{type:"function", name}`). */
export function parseOpenAIToolChoice(v: unknown, parallel: unknown, tools: ToolParam[] | undefined): ToolChoice | undefined {
  if (parallel !== undefined && parallel !== null && typeof parallel !== 'boolean') throw invalidRequest('parallel_tool_calls: expected a boolean');
  const extra = typeof parallel === 'boolean' ? { disable_parallel_tool_use: !parallel } : {};
  if (v === undefined || v === null) return typeof parallel === 'boolean' && tools ? { type: 'auto', ...extra } : undefined;
  if (v === 'auto' || v === 'none') return { type: v, ...extra };
  if (v === 'required') return { type: 'any', ...extra };
  if (isObj(v) && v.type === 'function') {
    const name = isObj(v.function) ? v.function.name : v.name;
    const n = nonEmptyStr(name, 'tool_choice.function.name');
    if (!tools || !tools.some((t) => t.name === n)) throw invalidRequest(`tool_choice: no tool named ${JSON.stringify(n)} in tools`);
    return { type: 'tool', name: n, ...extra };
  }
  throw invalidRequest('tool_choice: must be "auto", "none", "required", a named function or allowed_tools');
}

/**
 * Structured output, in each API's spelling: Chat `response_format` (`{type: "json_schema",
 * json_schema: {name, schema, strict}}`, nested), Responses `text.format` and Messages
 * `output_config.format` (`{type: "json_schema", name?, schema, strict?}`, flat); `json_object`;
 * `text` (or nothing) is free text. A json_schema without a schema is `json_object`.
 */
export function parseResponseFormat(v: unknown, where: string, shape: 'nested' | 'flat', count: Counter): ResponseFormat | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObj(v)) throw invalidRequest(`${where}: expected an object`);
  if (v.type === 'text') return undefined;
  if (v.type === 'json_object') return { type: 'json_object' };
  if (v.type !== 'json_schema') throw invalidRequest(`${where}.type: must be "text", "json_object" or "json_schema"`);
  const spec = shape === 'nested' ? v.json_schema : v;
  const at = shape === 'nested' ? `${where}.json_schema` : where;
  if (!isObj(spec)) throw invalidRequest(`${at}: expected an object`);
  if (spec.schema === undefined || spec.schema === null) return { type: 'json_object' };
  if (!isObj(spec.schema)) throw invalidRequest(`${at}.schema: expected a JSON Schema object`);
  const rf: ResponseFormat = { type: 'json_schema', name: spec.name === undefined ? 'output' : nonEmptyStr(spec.name, `${at}.name`), schema: spec.schema };
  if (typeof spec.strict === 'boolean') rf.strict = spec.strict;
  count.chars += JSON.stringify(spec.schema).length;
  return rf;
}

export function parseEffort(v: unknown, where: string): ReasoningSetting | undefined {
  if (v === undefined || v === null) return undefined;
  if (v === 'minimal' || v === 'low' || v === 'medium' || v === 'high') return { effort: v };
  if (v === 'none') return undefined;
  throw invalidRequest(`${where}: must be one of minimal, low, medium, high`);
}

/** Validate a Chat Completions body into the canonical request. */
export function parseChatRequest(body: unknown): CanonicalRequest {
  if (!isObj(body)) throw invalidRequest('request body must be a JSON object');
  const model = body.model;
  if (typeof model !== 'string' || model.length === 0) throw invalidRequest('model: field required (a non-empty string)');
  if (!Array.isArray(body.messages) || body.messages.length === 0) throw invalidRequest('messages: field required (a non-empty array)');
  if (body.n !== undefined && body.n !== null && body.n !== 1) throw invalidRequest('n: only n = 1 is supported by this gateway');
  if (body.logprobs === true) throw invalidRequest('logprobs: not supported by this gateway');
  if (body.functions !== undefined || body.function_call !== undefined) throw invalidRequest('functions / function_call: legacy fields are not supported; use tools / tool_choice');
  if (body.audio !== undefined && body.audio !== null) throw invalidRequest('audio: audio output is not supported by this gateway');
  const count = new Counter();
  const responseFormat = parseResponseFormat(body.response_format, 'response_format', 'nested', count);
  const { system, messages } = parseMessages(body.messages, count);
  let tools = parseFunctionTools(body.tools, count, 'nested');
  let choice = body.tool_choice;
  if (isObj(choice) && choice.type === 'allowed_tools') {
    const a = allowedTools(choice, tools, chatAllowedEntry(tools));
    tools = a.tools;
    choice = a.mode;
  }
  const toolChoice = parseOpenAIToolChoice(choice, body.parallel_tool_calls, tools);
  const mt = body.max_completion_tokens ?? body.max_tokens;
  let maxTokens = 0;
  if (mt !== undefined && mt !== null) {
    if (typeof mt !== 'number' || !Number.isInteger(mt) || mt < 1) throw invalidRequest('max_tokens: expected a positive integer');
    maxTokens = mt;
  }
  let stop: string[] | undefined;
  if (typeof body.stop === 'string') stop = [body.stop];
  else if (Array.isArray(body.stop)) {
    if (body.stop.some((s) => typeof s !== 'string')) throw invalidRequest('stop: expected a string or an array of strings');
    stop = body.stop as string[];
  } else if (body.stop !== undefined && body.stop !== null) throw invalidRequest('stop: expected a string or an array of strings');
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') throw invalidRequest('stream: expected a boolean');
  const req: CanonicalRequest = { model, max_tokens: maxTokens, messages, stream: body.stream === true, contentChars: count.chars, imageCount: count.images };
  if (system !== undefined) req.system = system;
  if (tools !== undefined && tools.length > 0) req.tools = tools;
  if (toolChoice !== undefined) req.tool_choice = toolChoice;
  if (stop !== undefined && stop.length > 0) req.stop_sequences = stop;
  const so = body.stream_options;
  if (isObj(so) && so.include_usage === true) req.includeUsage = true;
  const temperature = optNumber(body, 'temperature', 0, 2);
  if (temperature !== undefined) req.temperature = temperature;
  const topP = optNumber(body, 'top_p', 0, 1);
  if (topP !== undefined) req.top_p = topP;
  const topK = optNumber(body, 'top_k', 0, Number.MAX_SAFE_INTEGER);
  if (topK !== undefined && topK > 0) req.top_k = topK;
  const reasoning = parseEffort(body.reasoning_effort, 'reasoning_effort');
  if (reasoning) req.reasoning = reasoning;
  if (responseFormat) req.responseFormat = responseFormat;
  return req;
}

/** The `/v1/chat/completions` inbound module. */
export const chatApi: InboundApi = {
  name: 'chat',
  parse: parseChatRequest,
  stream: (o) => {
    const enc = new ChatSseEncoder({ model: o.model, inputTokens: o.inputTokens, toolUseOnStop: o.toolUseOnStop, includeUsage: o.includeUsage === true, ...(o.onCallId ? { onCallId: o.onCallId } : {}) });
    return enc;
  },
  body(events, o) {
    const r = toChatCompletion(events, { model: o.model, inputTokens: o.inputTokens, toolUseOnStop: o.toolUseOnStop, ...(o.onCallId ? { onCallId: o.onCallId } : {}) });
    if ('error' in r) return { status: errorTypeToStatus(r.error.type), body: openaiErrorBody(r.error.type, r.error.message) };
    return { status: 200, body: r };
  },
  errorBody: openaiErrorBody,
};
