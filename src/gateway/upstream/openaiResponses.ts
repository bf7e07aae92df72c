/**
 * Upstream: OpenAI Responses (`POST …/v1/responses`, `stream: true`, `store: false`).
 *
 * Decisions:
 * - system prompt → `instructions`; mid-conversation system messages → `{role: "system"}` message
 *   items in place.
 * - user text/images → a `message` item with `input_text` / `input_image` parts (base64 → data URL).
 * - `tool_result` → `function_call_output {call_id, output}` (text; images in a tool result move to
 *   a user message right after, as for Chat; `is_error` prefixes "Error: ").
 * - assistant text → a `message` item with `output_text`; `tool_use` → `function_call {call_id,
 *   name, arguments}`; thinking with a signature → a `reasoning` item `{summary: [{type:
 *   "summary_text", text}], encrypted_content: signature}` in place (what Codex replays with
 *   `store: false`; the signature is the `encrypted_content` this backend produced, which the
 *   gateway hands its clients as the thinking signature), and the request then asks for
 *   `include: ["reasoning.encrypted_content"]` so the next turn has it too (also when reasoning is
 *   requested). Thinking without a signature is not sent (a stateless request cannot replay it).
 * - tools → `{type: "function", name, description, parameters, strict: false}`; tool_choice
 *   auto/any/none/tool → "auto"/"required"/"none"/`{type: "function", name}`;
 *   `disable_parallel_tool_use` → `parallel_tool_calls: false` (and true when false).
 * - structured output → `text.format` (`json_schema` with name, schema, strict; `json_object`);
 * - max_tokens → `max_output_tokens`; temperature, top_p pass through; reasoning effort (or the
 *   effort of a thinking budget) → `reasoning: {effort, summary: "auto"}`.
 * - top_k and stop sequences have no Responses field: 400.
 */
import { type CanonicalRequest, effortForBudget, type ImageSource, type Obj } from '../canonical';
import { invalidRequest } from '../errors';
import { bearer } from './openaiChat';
import type { UpstreamFormat } from './types';
import { endpointUrl } from './url';

function imageUrl(src: ImageSource): string {
  return src.type === 'base64' ? `data:${src.media_type};base64,${src.data}` : src.url;
}

/** Canonical request → Responses body. */
export function toResponsesRequest(req: CanonicalRequest, model: string): Obj {
  if (req.top_k !== undefined) throw invalidRequest('top_k: the upstream (OpenAI Responses API) has no top_k; remove it');
  if (req.stop_sequences) throw invalidRequest('stop sequences: the upstream (OpenAI Responses API) has no stop sequences; remove them');
  const input: Obj[] = [];
  let replaysReasoning = false;
  for (const m of req.messages) {
    if (m.role === 'system') {
      if (m.text.length > 0) input.push({ type: 'message', role: 'system', content: m.text });
      continue;
    }
    if (m.role === 'user') {
      const parts: Obj[] = [];
      const moved: ImageSource[] = [];
      for (const b of m.content) {
        if (b.type === 'tool_result') {
          let output = b.text;
          if (b.images.length > 0) {
            moved.push(...b.images);
            const note = `[${b.images.length} image${b.images.length > 1 ? 's' : ''} attached in the next user message]`;
            output = output.length > 0 ? `${output}\n${note}` : note;
          }
          if (b.is_error && !/^error\b/i.test(output)) output = `Error: ${output}`;
          input.push({ type: 'function_call_output', call_id: b.tool_use_id, output });
        } else if (b.type === 'text') parts.push({ type: 'input_text', text: b.text });
        else parts.push({ type: 'input_image', image_url: imageUrl(b.source) });
      }
      for (const i of moved) parts.push({ type: 'input_image', image_url: imageUrl(i) });
      if (parts.length > 0) input.push({ type: 'message', role: 'user', content: parts });
      continue;
    }
    let text = '';
    const flushText = (): void => {
      if (text.length > 0) input.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] });
      text = '';
    };
    for (const b of m.content) {
      if (b.type === 'text') text += b.text;
      else if (b.type === 'tool_use') {
        flushText();
        input.push({ type: 'function_call', call_id: b.id, name: b.name, arguments: JSON.stringify(b.input) });
      } else if (b.signature) {
        flushText();
        input.push({ type: 'reasoning', summary: b.thinking.length > 0 ? [{ type: 'summary_text', text: b.thinking }] : [], encrypted_content: b.signature });
        replaysReasoning = true;
      }
    }
    flushText();
  }
  const out: Obj = { model, input, stream: true, store: false };
  if (replaysReasoning || req.reasoning) out.include = ['reasoning.encrypted_content'];
  if (req.system !== undefined && req.system.length > 0) out.instructions = req.system;
  if (req.max_tokens > 0) out.max_output_tokens = req.max_tokens;
  if (req.temperature !== undefined) out.temperature = req.temperature;
  if (req.top_p !== undefined) out.top_p = req.top_p;
  if (req.tools && req.tools.length > 0) {
    out.tools = req.tools.map((t) => {
      const tool: Obj = { type: 'function', name: t.name, parameters: t.input_schema, strict: false };
      if (t.description !== undefined) tool.description = t.description;
      return tool;
    });
  }
  const tc = req.tool_choice;
  if (tc) {
    out.tool_choice = tc.type === 'any' ? 'required' : tc.type === 'tool' ? { type: 'function', name: tc.name } : tc.type;
    if (tc.disable_parallel_tool_use !== undefined && out.tools) out.parallel_tool_calls = !tc.disable_parallel_tool_use;
  }
  if (req.reasoning) {
    const effort = req.reasoning.effort ?? effortForBudget(req.reasoning.budgetTokens ?? 0);
    out.reasoning = { effort, summary: 'auto' };
  }
  const rf = req.responseFormat;
  if (rf) out.text = { format: rf.type === 'json_object' ? { type: 'json_object' } : { type: 'json_schema', name: rf.name, schema: rf.schema, ...(rf.strict !== undefined ? { strict: rf.strict } : {}) } };
  return out;
}

/** `…/v1/responses` for a base URL. */
export function responsesUrl(base: string): URL {
  return endpointUrl(base, 'responses');
}

/** A whole Response object (a backend that ignored `stream`) → the stream events it stands for. */
export function responseToEvents(json: unknown): unknown[] | undefined {
  if (typeof json !== 'object' || json === null) return undefined;
  const r = json as Obj;
  if (r.error && r.object !== 'response') return [{ type: 'error', error: r.error }];
  if (!Array.isArray(r.output)) return undefined;
  const out: unknown[] = [{ type: 'response.created', response: { ...r, output: [] } }];
  r.output.forEach((item: unknown, output_index: number) => {
    if (typeof item !== 'object' || item === null) return;
    const it = item as Obj;
    if (it.type === 'message' && Array.isArray(it.content)) {
      for (const c of it.content as Obj[]) {
        if (c && c.type === 'output_text' && typeof c.text === 'string')
          out.push({ type: 'response.output_text.delta', output_index, item_id: it.id, delta: c.text });
      }
    } else if (it.type === 'reasoning' && Array.isArray(it.summary)) {
      for (const s of it.summary as Obj[]) {
        if (s && typeof s.text === 'string') out.push({ type: 'response.reasoning_summary_text.delta', output_index, item_id: it.id, delta: s.text });
      }
    } else {
      out.push({ type: 'response.output_item.done', output_index, item: it });
    }
  });
  out.push({ type: r.status === 'incomplete' ? 'response.incomplete' : 'response.completed', response: r });
  return out;
}

export const openaiResponsesUpstream: UpstreamFormat = {
  name: 'openai-responses',
  wire: 'openai-responses',
  url: (base) => responsesUrl(base),
  authHeaders: bearer,
  body: (req, o) => toResponsesRequest(req, o.model),
  jsonToPayloads: responseToEvents,
};
