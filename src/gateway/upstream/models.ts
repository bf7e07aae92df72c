/**
 * The models routes, which clients probe before they send a request:
 * - `GET /v1/models` — OpenAI list shape `{object: "list", data: [{id, object: "model", created,
 *   owned_by}]}`; with an `anthropic-version` header (every Anthropic SDK sends one) Anthropic's
 *   page `{data: [{type: "model", id, display_name, created_at, …}], has_more, first_id, last_id}`
 *   with its `limit` (default 20, 1–1000), `after_id` and `before_id` paging.
 * - `GET /v1/models/{id}` — one entry in the same shape; an id the gateway does not serve is a 404
 *   in that API's error shape (OpenAI `model_not_found`, Anthropic `not_found_error`).
 * The names: the literal `--model-map` patterns (a pattern with `*` names no model, but an id it
 * matches can be retrieved) and `--model`, then, when the backend answers its own models endpoint
 * within `timeoutMs`, the backend's ids (OpenAI/Anthropic `{data:[{id}]}`, Gemini
 * `{models:[{name:"models/…"}]}`; a backend's `created` / `created_at` / `display_name` are
 * kept). A backend that is down, slow or answers an error adds nothing (the list is still 200);
 * only ids (strings ≤ 256 characters, at most 1,000) and those three fields are read from it.
 *
 * The backend's answer is not trusted (answer.ts): it is read within a size cap (8 MiB) and the
 * JSON depth limit while it arrives, charged to the gateway's memory budget, and an answer that is
 * too large or too deep is a 502 (one that is not JSON adds nothing, like an error status). The list is kept for a few seconds (`MODELS_TTL_MS`)
 * and one fetch serves every client that asks while it runs.
 */
import { type ModelMapping, patternMatches } from '../canonical';
import { checkModelName } from '../modelMatch';
import { createHash } from 'node:crypto';
import type { MemoryBudget } from '../body';
import { GatewayError, invalidRequest } from '../errors';
import { ANSWER_MAX_DEPTH, AnswerCache, MODELS_ANSWER_MAX_BYTES, readAnswerJson } from './answer';
import type { UpstreamFormat } from './types';
import { endpointUrl } from './url';

export interface ModelEntry {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
}

export interface ModelList {
  object: 'list';
  data: ModelEntry[];
}

/** What the gateway knows of one model (both shapes are written from it). */
export interface KnownModel {
  id: string;
  /** `sluice` (configured) or `upstream` (the backend listed it). */
  owner: 'sluice' | 'upstream';
  /** Unix seconds (0: unknown). */
  created: number;
  displayName?: string;
}

/** Anthropic's `ModelInfo` (@anthropic-ai/sdk resources/models.d.ts); unknown fields are null. */
export interface AnthropicModelInfo {
  type: 'model';
  id: string;
  display_name: string;
  created_at: string;
  capabilities: null;
  deprecated_at: null;
  lifecycle: 'active';
  line: null;
  max_input_tokens: null;
  max_tokens: null;
  retires_at: null;
}

/** Anthropic's list page (`Page<ModelInfo>`). */
export interface AnthropicModelPage {
  data: AnthropicModelInfo[];
  has_more: boolean;
  first_id: string | null;
  last_id: string | null;
}

export interface ListModelsOptions {
  models: ModelMapping;
  upstreamBase: string;
  format: UpstreamFormat;
  /** The configured backend key, else the client's (when the gateway forwards it). */
  key?: string;
  /** Extra headers sent to the backend on every request (`--upstream-header`). */
  headers?: Record<string, string>;
  /** How long the backend may take (default 2 s). */
  timeoutMs?: number;
  /** Backend answers are charged here while they are read (the request bodies' budget). */
  budget?: MemoryBudget;
  /** The backend's list, kept and shared (`modelsCache()`); absent: fetched per call. */
  cache?: AnswerCache<KnownModel[]>;
  /** The backend's answer in bytes at most (default 8 MiB; then 502). */
  maxBytes?: number;
  /** Its JSON nesting at most (default 128; then 502). */
  maxDepth?: number;
}

/** How long a backend's model list is kept. */
export const MODELS_TTL_MS = 5_000;

/** One gateway's cache of backend model lists (per backend URL, key and headers). */
export function modelsCache(ttlMs = MODELS_TTL_MS): AnswerCache<KnownModel[]> {
  return new AnswerCache<KnownModel[]>(ttlMs);
}

const MAX_BACKEND_MODELS = 1000;
const MAX_ID_CHARS = 256;

/** Models from a backend's answer (OpenAI, Anthropic or Gemini shape); [] when unreadable. */
export function backendModels(json: unknown): KnownModel[] {
  if (typeof json !== 'object' || json === null) return [];
  const o = json as Record<string, unknown>;
  const list = Array.isArray(o.data) ? o.data : Array.isArray(o.models) ? o.models : [];
  const out: KnownModel[] = [];
  for (const m of list.slice(0, MAX_BACKEND_MODELS)) {
    if (typeof m !== 'object' || m === null) continue;
    const e = m as Record<string, unknown>;
    const id = typeof e.id === 'string' ? e.id : typeof e.name === 'string' ? e.name.replace(/^models\//, '') : undefined;
    if (!id || id.length > MAX_ID_CHARS) continue;
    const at = typeof e.created_at === 'string' ? Date.parse(e.created_at) : NaN;
    const created = typeof e.created === 'number' && Number.isSafeInteger(e.created) && e.created >= 0 ? e.created : Number.isFinite(at) && at >= 0 ? Math.floor(at / 1000) : 0;
    const name = typeof e.display_name === 'string' ? e.display_name : typeof e.displayName === 'string' ? e.displayName : undefined;
    out.push(name !== undefined && name.length <= MAX_ID_CHARS ? { id, owner: 'upstream', created, displayName: name } : { id, owner: 'upstream', created });
  }
  return out;
}

/** The configured names: literal model-map patterns, then the fallback (`--model`). */
export function configuredModelIds(models: ModelMapping): string[] {
  const ids = models.rules.filter((r) => !r.pattern.includes('*')).map((r) => r.pattern);
  if (models.fallback !== undefined) ids.push(models.fallback);
  return ids;
}

/** Configured names, then the backend's (first one wins on a repeated id). */
export async function knownModels(o: ListModelsOptions): Promise<KnownModel[]> {
  const seen = new Set<string>();
  const out: KnownModel[] = [];
  const add = (m: KnownModel): void => {
    if (seen.has(m.id)) return;
    seen.add(m.id);
    out.push(m);
  };
  for (const id of configuredModelIds(o.models)) add({ id, owner: 'sluice', created: 0 });
  for (const m of await fetchBackendModels(o)) add(m);
  return out;
}

export function toOpenAIModel(m: KnownModel): ModelEntry {
  return { id: m.id, object: 'model', created: m.created, owned_by: m.owner };
}

export function toAnthropicModel(m: KnownModel): AnthropicModelInfo {
  return {
    type: 'model',
    id: m.id,
    display_name: m.displayName ?? m.id,
    // "May be set to an epoch value if the release date is unknown" (ModelInfo.created_at).
    created_at: new Date(m.created * 1000).toISOString().replace('.000Z', 'Z'),
    capabilities: null,
    deprecated_at: null,
    lifecycle: 'active',
    line: null,
    max_input_tokens: null,
    max_tokens: null,
    retires_at: null,
  };
}

/** Anthropic paging over the list: `limit` (default 20, 1–1000), `after_id`, `before_id`. */
export function anthropicPage(models: KnownModel[], query: URLSearchParams): AnthropicModelPage {
  const raw = query.get('limit');
  const limit = raw === null ? 20 : Number(raw);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw invalidRequest('limit: expected an integer from 1 to 1000');
  const after = query.get('after_id');
  const before = query.get('before_id');
  let start = 0;
  let end = models.length;
  const at = (id: string, name: string): number => {
    const i = models.findIndex((m) => m.id === id);
    if (i < 0) throw invalidRequest(`${name}: no model ${JSON.stringify(id)} in the list`);
    return i;
  };
  if (before !== null) {
    end = at(before, 'before_id');
    start = Math.max(0, end - limit);
  } else {
    if (after !== null) start = at(after, 'after_id') + 1;
    end = Math.min(models.length, start + limit);
  }
  const data = models.slice(start, end).map(toAnthropicModel);
  return { data, has_more: before !== null ? start > 0 : end < models.length, first_id: data[0]?.id ?? null, last_id: data[data.length - 1]?.id ?? null };
}

/**
 * The model a client retrieves by id: one the list names, or (configured, `owned_by: "sluice"`)
 * one a `*` pattern of the model map matches. `--model` alone does not make every id known.
 */
export function findModel(models: KnownModel[], mapping: ModelMapping, id: string): KnownModel | undefined {
  checkModelName(id, 'model id');
  const listed = models.find((m) => m.id === id);
  if (listed) return listed;
  const wild = mapping.rules.some((r) => r.pattern.includes('*') && patternMatches(r.pattern, id));
  return wild ? { id, owner: 'sluice', created: 0 } : undefined;
}

function fetchBackendModels(o: ListModelsOptions): Promise<KnownModel[]> {
  if (!o.cache) return fetchBackendModelsNow(o);
  // The key names the backend, the credential (hashed: never kept as it is) and the extra headers.
  const key = createHash('sha256')
    .update(JSON.stringify([o.upstreamBase, o.format.name, o.key ?? '', o.headers ?? {}]))
    .digest('hex');
  return o.cache.get(key, () => fetchBackendModelsNow(o));
}

async function fetchBackendModelsNow(o: ListModelsOptions): Promise<KnownModel[]> {
  try {
    const url = endpointUrl(o.upstreamBase, 'models');
    // Everything in one page: Anthropic pages 20 models by default, Gemini 50.
    if (o.format.name === 'anthropic') url.searchParams.set('limit', '1000');
    else if (o.format.name === 'gemini') url.searchParams.set('pageSize', '1000');
    const res = await fetch(url, {
      headers: { accept: 'application/json', ...o.headers, ...o.format.authHeaders(o.key) },
      signal: AbortSignal.timeout(o.timeoutMs ?? 2000),
    });
    if (!res.ok) {
      await res.body?.cancel();
      return [];
    }
    const json = await readAnswerJson(res, { maxBytes: o.maxBytes ?? MODELS_ANSWER_MAX_BYTES, maxDepth: o.maxDepth ?? ANSWER_MAX_DEPTH, budget: o.budget, what: 'upstream models answer' });
    return backendModels(json);
  } catch (err) {
    if (err instanceof GatewayError) throw err; // too large or too deep: 502; no memory for it: 503
    return []; // down, slow or not JSON: the configured names still answer
  }
}
