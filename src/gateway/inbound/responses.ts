/**
 * Inbound API: OpenAI Responses (`POST /v1/responses`) — Codex CLI, the OpenAI Agents SDK, the
 * openai SDK's `responses.create`.
 *
 * Request → canonical (400 with an OpenAI error body on anything that cannot be carried). The
 * gateway is stateless: `previous_response_id` and item references are rejected; send the whole
 * conversation in `input` (what Codex does with `store: false`).
 * - `instructions` + leading `system` / `developer` messages → the system prompt; later ones →
 *   mid-conversation system messages in place.
 * - `input`: a string (one user message) or items: `message` (user: `input_text`, `input_image`
 *   with an `image_url`; assistant: `output_text` / `refusal`), `function_call` → tool_use (merged
 *   into the assistant turn before it), `function_call_output` → tool_result (consecutive ones form
 *   one user turn; text or `input_text`/`input_image` parts), `reasoning` → thinking (summary text;
 *   `encrypted_content` kept as its signature), `tool_search_call` / `tool_search_output` and
 *   `custom_tool_call` / `custom_tool_call_output` → a call of the flattened function and its
 *   result. Other item types → 400.
 * - tools: `function` tools; Codex's tool `namespace` groups, client `tool_search` and freeform
 *   `custom` tools, flattened into function tools and mapped back on output (./responsesTools.ts); provider-hosted tools
 *   (`web_search`, `file_search`, …) are left out of the upstream request (header
 *   `x-sluice-dropped-tools`, warn log `tools_dropped`); other tool types → 400;
 *   tool_choice, `parallel_tool_calls`, `max_output_tokens`, temperature, top_p,
 *   `reasoning.effort`, `stream`; `text.format` `json_schema` / `json_object` → structured output
 *   (Codex's `--output-schema`). `store`, `include`,
 *   `metadata`, `prompt_cache_key`, `truncation`, `user`, `service_tier` are ignored.
 * Output: src/encode/responsesSse.ts.
 */
import { openaiErrorBody } from '../../encode/openaiCommon';
import { type ResponsesEncodeOptions, ResponsesSseEncoder, toResponsesBody } from '../../encode/responsesSse';
import { type AssistantBlock, type CanonicalRequest, isObj, type MessageParam, type UserBlock } from '../canonical';
import { errorTypeToStatus, invalidRequest } from '../errors';
import { argumentsObject, imageFromUrl, parseEffort, parseResponseFormat } from './chat';
import { ResponsesTools } from './responsesTools';
import type { InboundApi, InboundEncodeOptions } from './types';
import { Counter, nonEmptyStr, optNumber, str } from './validate';

function partsText(v: unknown, where: string, count: Counter, allowed: string[]): string {
  if (typeof v === 'string') {
    count.chars += v.length;
    return v;
  }
  if (!Array.isArray(v)) throw invalidRequest(`${where}: expected a string or an array of content parts`);
  const s = v
    .map((p, i) => {
      if (!isObj(p) || !allowed.includes(String(p.type)))
        throw invalidRequest(`${where}[${i}]: unsupported content part ${JSON.stringify(isObj(p) ? String(p.type) : typeof p)} here (expected ${allowed.join(' or ')})`);
      return str(p.type === 'refusal' ? p.refusal : p.text, `${where}[${i}].text`);
    })
    .join('\n');
  count.chars += s.length;
  return s;
}

function userParts(v: unknown, where: string, count: Counter): UserBlock[] {
  if (typeof v === 'string') {
    count.chars += v.length;
    return [{ type: 'text', text: v }];
  }
  if (!Array.isArray(v)) throw invalidRequest(`${where}: expected a string or an array of content parts`);
  return v.map((p, i): UserBlock => {
    const w = `${where}[${i}]`;
    if (!isObj(p)) throw invalidRequest(`${w}: expected a content part object`);
    if (p.type === 'input_text' || p.type === 'text') {
      const text = str(p.text, `${w}.text`);
      count.chars += text.length;
      return { type: 'text', text };
    }
    if (p.type === 'input_image') {
      if (typeof p.image_url !== 'string') throw invalidRequest(`${w}: only images given by image_url are supported (file_id needs OpenAI's file store)`);
      count.images++;
      return { type: 'image', source: imageFromUrl(p.image_url, `${w}.image_url`) };
    }
    throw invalidRequest(`${w}.type: content part ${JSON.stringify(String(p.type))} is not supported by this gateway`);
  });
}

/** A `tool_search_call` / `tool_search_output` of a search the provider ran (not the client). */
function serverSearch(it: Record<string, unknown>, tools: ResponsesTools): boolean {
  if (it.execution === 'server') return true;
  return it.execution === undefined && tools.names.find({ kind: 'tool_search' }) === undefined && tools.dropped.includes('tool_search');
}

function parseInput(input: unknown, instructions: string | undefined, count: Counter, tools: ResponsesTools): { system?: string; messages: MessageParam[] } {
  const systemParts: string[] = instructions !== undefined && instructions.length > 0 ? [instructions] : [];
  const messages: MessageParam[] = [];
  if (typeof input === 'string') {
    count.chars += input.length;
    messages.push({ role: 'user', content: [{ type: 'text', text: input }] });
  } else if (Array.isArray(input)) {
    let leading = true;
    const lastAssistant = (): AssistantBlock[] => {
      const last = messages[messages.length - 1];
      if (last && last.role === 'assistant') return last.content;
      const content: AssistantBlock[] = [];
      messages.push({ role: 'assistant', content });
      return content;
    };
    let toolTurn: UserBlock[] | undefined;
    input.forEach((it, i) => {
      const where = `input[${i}]`;
      if (!isObj(it)) throw invalidRequest(`${where}: expected an object`);
      const type = it.type ?? (it.role !== undefined ? 'message' : undefined);
      if (type !== 'function_call_output' && type !== 'tool_search_output' && type !== 'custom_tool_call_output') toolTurn = undefined;
      const addResult = (block: UserBlock): void => {
        if (toolTurn) toolTurn.push(block);
        else {
          toolTurn = [block];
          messages.push({ role: 'user', content: toolTurn });
        }
      };
      if (type === 'message') {
        const role = it.role;
        if (role === 'system' || role === 'developer') {
          const text = partsText(it.content, `${where}.content`, count, ['input_text', 'text']);
          if (leading) systemParts.push(text);
          else messages.push({ role: 'system', text });
          return;
        }
        leading = false;
        if (role === 'user') messages.push({ role: 'user', content: userParts(it.content, `${where}.content`, count) });
        else if (role === 'assistant') {
          const text = partsText(it.content, `${where}.content`, count, ['output_text', 'refusal', 'input_text', 'text']);
          if (text.length > 0) lastAssistant().push({ type: 'text', text });
        } else throw invalidRequest(`${where}.role: must be one of user, assistant, system, developer`);
        return;
      }
      leading = false;
      if (type === 'function_call') {
        const member = nonEmptyStr(it.name, `${where}.name`);
        // Codex: a namespace member's call carries `namespace`; the backend knows it by its flat name.
        const name = it.namespace === undefined || it.namespace === null ? member : tools.names.called(nonEmptyStr(it.namespace, `${where}.namespace`), member);
        const input = argumentsObject(it.arguments, `${where}.arguments`);
        count.chars += name.length + JSON.stringify(input).length;
        lastAssistant().push({ type: 'tool_use', id: nonEmptyStr(it.call_id, `${where}.call_id`), name, input });
      } else if (type === 'custom_tool_call') {
        const input = str(it.input, `${where}.input`);
        count.chars += input.length;
        const member = nonEmptyStr(it.name, `${where}.name`);
        const name = it.namespace === undefined || it.namespace === null ? tools.names.custom(member) : tools.names.called(nonEmptyStr(it.namespace, `${where}.namespace`), member, 'custom');
        lastAssistant().push({ type: 'tool_use', id: nonEmptyStr(it.call_id, `${where}.call_id`), name, input: { input } });
      } else if (type === 'function_call_output' || type === 'custom_tool_call_output') {
        const id = nonEmptyStr(it.call_id, `${where}.call_id`);
        let text = '';
        const images: UserBlock[] = [];
        if (typeof it.output === 'string') text = it.output;
        else if (Array.isArray(it.output)) {
          const blocks = userParts(it.output, `${where}.output`, count);
          text = blocks.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n');
          images.push(...blocks.filter((b) => b.type === 'image'));
        } else throw invalidRequest(`${where}.output: expected a string or an array of content parts`);
        count.chars += text.length;
        addResult({ type: 'tool_result', tool_use_id: id, text, images: images.flatMap((b) => (b.type === 'image' ? [b.source] : [])), is_error: false });
      } else if ((type === 'tool_search_call' || type === 'tool_search_output') && serverSearch(it, tools)) {
        // A search OpenAI ran (a conversation begun there): its tools join the list, the items
        // themselves have no counterpart behind the gateway (no call of an offered tool).
        if (type === 'tool_search_output') tools.load(it.tools, `${where}.tools`);
      } else if (type === 'tool_search_call') {
        const input = isObj(it.arguments) ? it.arguments : argumentsObject(it.arguments, `${where}.arguments`);
        count.chars += JSON.stringify(input).length;
        lastAssistant().push({ type: 'tool_use', id: nonEmptyStr(it.call_id, `${where}.call_id`), name: tools.names.toolSearch(), input });
      } else if (type === 'tool_search_output') {
        // The loaded tools join the backend's tool list; the model reads their names as the result.
        const loaded = tools.load(it.tools, `${where}.tools`).map((t) => (t.description !== undefined ? { name: t.name, description: t.description } : { name: t.name }));
        const text = JSON.stringify({ loaded_tools: loaded });
        count.chars += text.length;
        addResult({ type: 'tool_result', tool_use_id: nonEmptyStr(it.call_id, `${where}.call_id`), text, images: [], is_error: false });
      } else if (type === 'reasoning') {
        const summary = Array.isArray(it.summary) ? it.summary : [];
        const text = summary.map((s, j) => (isObj(s) ? str(s.text, `${where}.summary[${j}].text`) : '')).join('\n');
        count.chars += text.length;
        const blk: AssistantBlock = { type: 'thinking', thinking: text };
        if (typeof it.encrypted_content === 'string' && it.encrypted_content.length > 0) blk.signature = it.encrypted_content;
        lastAssistant().push(blk);
      } else {
        throw invalidRequest(`${where}.type: input item ${JSON.stringify(String(type))} is not supported by this stateless gateway (message, function_call, function_call_output, custom_tool_call, custom_tool_call_output, reasoning, tool_search_call and tool_search_output are)`);
      }
    });
  } else {
    throw invalidRequest('input: field required (a string or an array of items)');
  }
  // An assistant turn that ended up empty (e.g. reasoning with no summary) still needs content.
  for (const m of messages) if (m.role === 'assistant' && m.content.length === 0) m.content.push({ type: 'text', text: '' });
  const system = systemParts.filter((s) => s.length > 0).join('\n\n');
  return system.length > 0 ? { system, messages } : { messages };
}

/** Validate a Responses body into the canonical request. */
export function parseResponsesRequest(body: unknown): CanonicalRequest {
  if (!isObj(body)) throw invalidRequest('request body must be a JSON object');
  const model = body.model;
  if (typeof model !== 'string' || model.length === 0) throw invalidRequest('model: field required (a non-empty string)');
  if (body.previous_response_id !== undefined && body.previous_response_id !== null)
    throw invalidRequest('previous_response_id: this gateway keeps no conversation state; send the whole conversation in input');
  if (body.conversation !== undefined && body.conversation !== null) throw invalidRequest('conversation: this gateway keeps no conversation state');
  const count = new Counter();
  const responseFormat = isObj(body.text) ? parseResponseFormat(body.text.format, 'text.format', 'flat', count) : undefined;
  let instructions: string | undefined;
  if (body.instructions !== undefined && body.instructions !== null) instructions = str(body.instructions, 'instructions');
  if (instructions) count.chars += instructions.length;
  const rt = new ResponsesTools(count);
  rt.parse(body.tools);
  const { system, messages } = parseInput(body.input, instructions, count, rt);
  if (messages.length === 0) throw invalidRequest('input: at least one user or assistant item is required');
  let tools = rt.list.length > 0 || (body.tools !== undefined && body.tools !== null) ? rt.list : undefined;
  const dropped = rt.dropped;
  const toolChoice = rt.toolChoice(body.tool_choice, body.parallel_tool_calls);
  const allowed = rt.allowed;
  if (allowed && tools) tools = tools.filter((t) => allowed.has(t.name));
  let maxTokens = 0;
  const mt = body.max_output_tokens;
  if (mt !== undefined && mt !== null) {
    if (typeof mt !== 'number' || !Number.isInteger(mt) || mt < 1) throw invalidRequest('max_output_tokens: expected a positive integer');
    maxTokens = mt;
  }
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') throw invalidRequest('stream: expected a boolean');
  const req: CanonicalRequest = { model, max_tokens: maxTokens, messages, stream: body.stream === true, contentChars: count.chars, imageCount: count.images };
  if (system !== undefined) req.system = system;
  if (tools !== undefined && tools.length > 0) req.tools = tools;
  if (toolChoice !== undefined) req.tool_choice = toolChoice;
  if (dropped.length > 0) req.droppedTools = dropped;
  if (rt.names.size > 0) req.clientTools = rt.names.table();
  const temperature = optNumber(body, 'temperature', 0, 2);
  if (temperature !== undefined) req.temperature = temperature;
  const topP = optNumber(body, 'top_p', 0, 1);
  if (topP !== undefined) req.top_p = topP;
  if (isObj(body.reasoning)) {
    const r = parseEffort(body.reasoning.effort, 'reasoning.effort');
    if (r) req.reasoning = r;
  }
  if (responseFormat) req.responseFormat = responseFormat;
  return req;
}

function encodeOptions(o: InboundEncodeOptions): ResponsesEncodeOptions {
  const clientTool = o.clientTools;
  const r: ResponsesEncodeOptions = clientTool ? { model: o.model, inputTokens: o.inputTokens, clientTool } : { model: o.model, inputTokens: o.inputTokens };
  if (o.onCallId) r.onCallId = o.onCallId;
  return r;
}

/** The `/v1/responses` inbound module. */
export const responsesApi: InboundApi = {
  name: 'responses',
  parse: parseResponsesRequest,
  stream: (o) => new ResponsesSseEncoder(encodeOptions(o)),
  body(events, o) {
    const r = toResponsesBody(events, encodeOptions(o));
    if (!r.ok) return { status: errorTypeToStatus(r.error.type), body: r.body };
    return { status: 200, body: r.body };
  },
  errorBody: openaiErrorBody,
};
