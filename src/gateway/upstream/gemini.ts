/**
 * Upstream: Gemini (`POST …/v1beta/models/{model}:streamGenerateContent?alt=sse`).
 *
 * Decisions:
 * - system prompt + mid-conversation system messages → `systemInstruction` (joined with a blank
 *   line; Gemini has no system role in `contents`).
 * - user → `{role: "user"}` parts: text → `{text}`, base64 image → `{inlineData}`; an image URL
 *   cannot be sent (Gemini takes uploaded-file URIs, not web URLs): 400.
 * - `tool_result` → `{functionResponse: {id, name, response: {result | error}}}`; the name is the one
 *   of the `tool_use` with that id earlier in the conversation (unknown id: 400). Images in a tool
 *   result → `inlineData` parts after it.
 * - assistant → `{role: "model"}`: text → `{text}`, `tool_use` → `{functionCall: {id, name, args}}`;
 *   a thinking block's signature travels on the next part of that message as `thoughtSignature`
 *   (where Gemini put it), the thought text itself is not sent back.
 * - tools → one `{functionDeclarations: [{name, description, parametersJsonSchema}]}`; tool_choice
 *   auto/any/none/tool → `functionCallingConfig` AUTO/ANY/NONE/ANY + `allowedFunctionNames`.
 *   Gemini has no parallel-call switch: `disable_parallel_tool_use` is enforced by the gateway (at
 *   most one call is released), not sent.
 * - structured output → `responseMimeType: "application/json"` + `responseJsonSchema`;
 * - max_tokens → `maxOutputTokens`; temperature, top_p, top_k, stop sequences →
 *   `temperature`, `topP`, `topK`, `stopSequences`; reasoning → `thinkingConfig {thinkingBudget,
 *   includeThoughts: true}` (an effort alone → its budget).
 * - auth: `x-goog-api-key`.
 */
import { budgetForEffort, type CanonicalRequest, type ImageSource, type Obj } from '../canonical';
import { invalidRequest } from '../errors';
import type { UpstreamFormat } from './types';

function inline(src: ImageSource, where: string): Obj {
  if (src.type !== 'base64')
    throw invalidRequest(`${where}: the upstream (Gemini) cannot fetch image URLs; send the image as base64 data`);
  return { inlineData: { mimeType: src.media_type, data: src.data } };
}

/** Canonical request → Gemini generateContent body. */
export function toGeminiRequest(req: CanonicalRequest): Obj {
  const system: string[] = req.system !== undefined && req.system.length > 0 ? [req.system] : [];
  const names = new Map<string, string>();
  const contents: Obj[] = [];
  req.messages.forEach((m, i) => {
    const where = `messages[${i}]`;
    if (m.role === 'system') {
      if (m.text.length > 0) system.push(m.text);
      return;
    }
    const parts: Obj[] = [];
    if (m.role === 'user') {
      m.content.forEach((b, j) => {
        if (b.type === 'text') parts.push({ text: b.text });
        else if (b.type === 'image') parts.push(inline(b.source, `${where}.content[${j}]`));
        else {
          const name = names.get(b.tool_use_id);
          if (name === undefined)
            throw invalidRequest(`${where}.content[${j}]: tool result for ${JSON.stringify(b.tool_use_id)} has no matching tool call earlier in the conversation (Gemini needs the function name)`);
          parts.push({ functionResponse: { id: b.tool_use_id, name, response: b.is_error ? { error: b.text } : { result: b.text } } });
          b.images.forEach((img) => parts.push(inline(img, `${where}.content[${j}]`)));
        }
      });
      if (parts.length > 0) contents.push({ role: 'user', parts });
      return;
    }
    let signature: string | undefined;
    for (const b of m.content) {
      if (b.type === 'thinking') {
        if (b.signature) signature = b.signature;
        continue;
      }
      const part: Obj = b.type === 'text' ? { text: b.text } : { functionCall: { id: b.id, name: b.name, args: b.input } };
      if (b.type === 'tool_use') names.set(b.id, b.name);
      if (b.type === 'text' && b.text.length === 0) continue;
      if (signature !== undefined) {
        part.thoughtSignature = signature;
        signature = undefined;
      }
      parts.push(part);
    }
    if (parts.length > 0) contents.push({ role: 'model', parts });
  });
  const out: Obj = { contents };
  if (system.length > 0) out.systemInstruction = { parts: [{ text: system.join('\n\n') }] };
  if (req.tools && req.tools.length > 0) {
    out.tools = [
      {
        functionDeclarations: req.tools.map((t) => {
          const d: Obj = { name: t.name, parametersJsonSchema: t.input_schema };
          if (t.description !== undefined) d.description = t.description;
          return d;
        }),
      },
    ];
  }
  const tc = req.tool_choice;
  if (tc) {
    const mode = tc.type === 'auto' ? 'AUTO' : tc.type === 'none' ? 'NONE' : 'ANY';
    const cfg: Obj = { mode };
    if (tc.type === 'tool') cfg.allowedFunctionNames = [tc.name];
    out.toolConfig = { functionCallingConfig: cfg };
  }
  const gen: Obj = {};
  if (req.max_tokens > 0) gen.maxOutputTokens = req.max_tokens;
  if (req.temperature !== undefined) gen.temperature = req.temperature;
  if (req.top_p !== undefined) gen.topP = req.top_p;
  if (req.top_k !== undefined) gen.topK = req.top_k;
  if (req.stop_sequences) gen.stopSequences = req.stop_sequences;
  if (req.reasoning) gen.thinkingConfig = { thinkingBudget: req.reasoning.budgetTokens ?? budgetForEffort(req.reasoning.effort), includeThoughts: true };
  if (req.responseFormat) {
    gen.responseMimeType = 'application/json';
    if (req.responseFormat.type === 'json_schema') gen.responseJsonSchema = req.responseFormat.schema;
  }
  if (Object.keys(gen).length > 0) out.generationConfig = gen;
  return out;
}

/**
 * The streaming URL for a base URL and model: `…/v1beta/models/{model}:streamGenerateContent?alt=sse`.
 * A base that already ends in a version (`/v1beta`, `/v1`) keeps it; a full `…:streamGenerateContent`
 * URL is used as is (plus `alt=sse`).
 */
export function geminiUrl(base: string, model: string): URL {
  const u = new URL(base);
  const p = u.pathname.replace(/\/+$/, '');
  if (/:streamGenerateContent$/.test(p)) u.pathname = p;
  else {
    if (!/^[A-Za-z0-9._\-/]+$/.test(model) || model.includes('..')) throw new Error('model name not usable in a URL');
    const m = model.startsWith('models/') ? model : `models/${model}`;
    u.pathname = /\/v\d+[a-z0-9]*$/.test(p) ? `${p}/${m}:streamGenerateContent` : `${p}/v1beta/${m}:streamGenerateContent`;
  }
  u.searchParams.set('alt', 'sse');
  return u;
}

export const geminiUpstream: UpstreamFormat = {
  name: 'gemini',
  wire: 'gemini',
  url: geminiUrl,
  authHeaders: (key): Record<string, string> => (key ? { 'x-goog-api-key': key } : {}),
  body: (req) => toGeminiRequest(req),
  jsonToPayloads: (json) => (Array.isArray(json) ? json : typeof json === 'object' && json !== null ? [json] : undefined),
};
