/**
 * The canonical request: what every inbound API (inbound/messages.ts, inbound/responses.ts,
 * inbound/chat.ts) parses its client's body into, and what every upstream module
 * (upstream/openaiChat.ts, upstream/openaiResponses.ts, upstream/anthropic.ts, upstream/gemini.ts)
 * builds its backend body from. One model in the middle, not one converter per pair.
 *
 * It is Anthropic-shaped (content blocks, tool_use/tool_result pairs by id) because that shape
 * holds everything the other three can say: a system prompt plus mid-conversation system messages,
 * thinking with its signature, images (base64 or URL), tool results with images, tool choice with
 * the parallel-call flag, stop sequences, sampling, and a reasoning setting (effort or budget).
 * Fields a given upstream cannot express make that upstream module answer 400 (never a silent drop).
 */

import { globMatches } from './modelMatch';

export type Obj = Record<string, unknown>;

export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export type ImageSource = { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };

/**
 * An Anthropic prompt-caching breakpoint (`{type: "ephemeral", ttl?}`) as the client sent it:
 * kept on the block, tool or system part it marks and sent again to an Anthropic backend only
 * (the other APIs cache automatically and have no such field).
 */
export interface Cacheable {
  cache_control?: Obj;
}

export type UserBlock =
  | ({ type: 'text'; text: string } & Cacheable)
  | ({ type: 'image'; source: ImageSource } & Cacheable)
  | ({ type: 'tool_result'; tool_use_id: string; text: string; images: ImageSource[]; is_error: boolean } & Cacheable);

export type AssistantBlock =
  | ({ type: 'text'; text: string } & Cacheable)
  | { type: 'thinking'; thinking: string; signature?: string }
  | ({ type: 'tool_use'; id: string; name: string; input: Obj } & Cacheable);

export type MessageParam =
  | { role: 'user'; content: UserBlock[] }
  | { role: 'assistant'; content: AssistantBlock[] }
  /** A mid-conversation system message (Claude Code sends these; text only). */
  | { role: 'system'; text: string };

export interface ToolParam extends Cacheable {
  name: string;
  description?: string;
  input_schema: Obj;
}

/** One block of a system prompt that carries a cache breakpoint (see `CanonicalRequest.systemBlocks`). */
export interface SystemBlock extends Cacheable {
  text: string;
}

export type ToolChoice =
  | { type: 'auto' | 'any' | 'none'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean };

/**
 * Structured output the client asked for: a JSON Schema (Chat `response_format`, Responses
 * `text.format`, Messages `output_config.format`), or any JSON object (`json_object`).
 */
export type ResponseFormat = { type: 'json_schema'; name: string; schema: Obj; strict?: boolean } | { type: 'json_object' };

/** How the client knows a tool the backend sees under a flat name (inbound/responsesTools.ts). */
export type ClientToolRef = { kind: 'namespace'; namespace: string; name: string } | { kind: 'tool_search' } | { kind: 'custom'; name: string; namespace?: string };

/**
 * The client-tool table as plain data: what the canonical request carries (it crosses the body
 * worker's thread boundary as a structured-clone copy, so it has no methods). A list, not an
 * object keyed by name: a tool named `constructor` or `__proto__` must not meet Object.prototype.
 * Built and read by inbound/responsesTools.ts; defined here, with the request, so the canonical
 * request imports nothing from the inbound APIs.
 */
export type ClientToolTable = readonly { readonly flat: string; readonly ref: ClientToolRef }[];

/** Reasoning / thinking setting: an effort level (OpenAI) and/or a token budget (Anthropic, Gemini). */
export interface ReasoningSetting {
  effort?: 'minimal' | 'low' | 'medium' | 'high';
  budgetTokens?: number;
}

export interface CanonicalRequest {
  model: string;
  max_tokens: number;
  system?: string;
  messages: MessageParam[];
  /**
   * The system prompt's blocks, when the client marked some with `cache_control` (Claude Code
   * does): an Anthropic backend gets them as blocks so its prompt cache still works; every other
   * upstream reads `system` (the same text joined with "\n").
   */
  systemBlocks?: SystemBlock[];
  tools?: ToolParam[];
  tool_choice?: ToolChoice;
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  top_k?: number;
  stream: boolean;
  /**
   * Provider-hosted tools the client offered (Responses `web_search`, `file_search`, …) that no
   * backend behind this gateway can run: left out of the upstream request and named in the
   * `x-sluice-dropped-tools` response header and a warn log.
   */
  droppedTools?: string[];
  /**
   * Responses clients (Codex): tools flattened for the backend (namespace members, tool_search)
   * and how to name their calls back to the client, as plain data (inbound/responsesTools.ts
   * `clientToolLookup` reads it).
   */
  clientTools?: ClientToolTable;
  /** Chat clients: `stream_options.include_usage` (a usage chunk before `[DONE]`). */
  includeUsage?: boolean;
  /** Reasoning / thinking requested by the client (absent: the backend's default). */
  reasoning?: ReasoningSetting;
  /** Structured output (absent: free text). */
  responseFormat?: ResponseFormat;
  /** Characters of content counted for the token estimate (system, messages, tools). */
  contentChars: number;
  /** Number of images (each counted as a fixed token cost in the estimate). */
  imageCount: number;
}

/** Tokens counted per image in the estimate (Anthropic: about (w·h)/750; ~1.2 MP → 1,600). */
export const IMAGE_TOKEN_ESTIMATE = 1600;

/** Input-token estimate: ceil(characters / 3) over system, messages and tools, plus images. */
export function estimateInputTokens(req: Pick<CanonicalRequest, 'contentChars' | 'imageCount'>): number {
  return Math.ceil(req.contentChars / 3) + req.imageCount * IMAGE_TOKEN_ESTIMATE;
}


/** True when the client asked for at most one tool call (SPEC §5.5). */
export function singleToolRequested(req: Pick<CanonicalRequest, 'tool_choice'>): boolean {
  return req.tool_choice?.disable_parallel_tool_use === true;
}

/** Effort level for a thinking budget (for upstreams that only take an effort). */
export function effortForBudget(budget: number): 'low' | 'medium' | 'high' {
  if (budget < 4096) return 'low';
  if (budget < 16384) return 'medium';
  return 'high';
}

/** Thinking budget for an effort level (for upstreams that only take a budget). */
export function budgetForEffort(effort: ReasoningSetting['effort']): number {
  switch (effort) {
    case 'minimal':
      return 1024;
    case 'low':
      return 2048;
    case 'high':
      return 24576;
    default:
      return 8192;
  }
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

/** True when a model-map pattern (`*` = any run of characters) matches the client's model (modelMatch.ts: linear time). */
export function patternMatches(pattern: string, clientModel: string): boolean {
  return globMatches(pattern, clientModel);
}

export function mapModel(mapping: ModelMapping, clientModel: string): string {
  for (const r of mapping.rules) if (globMatches(r.pattern, clientModel)) return r.target;
  return mapping.fallback ?? clientModel;
}
