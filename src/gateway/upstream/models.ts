/**
 * `GET /v1/models` (OpenAI list shape), which OpenAI-style clients probe before they send a
 * request: the model names the gateway is configured with — literal `--model-map` patterns (a
 * pattern with `*` names no model) and `--model` — then, when the backend answers its own models
 * endpoint within `timeoutMs`, the backend's ids (OpenAI/Anthropic `{data:[{id}]}`, Gemini
 * `{models:[{name:"models/…"}]}`). A backend that is down, slow or answers an error adds nothing
 * (the list is still 200); only ids (strings ≤ 256 characters, at most 1,000) are read from it.
 */
import type { ModelMapping } from '../canonical';
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
}

const MAX_BACKEND_MODELS = 1000;
const MAX_ID_CHARS = 256;

/** Ids from a backend's models answer (OpenAI, Anthropic or Gemini shape); [] when unreadable. */
export function backendModelIds(json: unknown): string[] {
  if (typeof json !== 'object' || json === null) return [];
  const o = json as Record<string, unknown>;
  const list = Array.isArray(o.data) ? o.data : Array.isArray(o.models) ? o.models : [];
  const ids: string[] = [];
  for (const m of list.slice(0, MAX_BACKEND_MODELS)) {
    if (typeof m !== 'object' || m === null) continue;
    const e = m as Record<string, unknown>;
    const raw = typeof e.id === 'string' ? e.id : typeof e.name === 'string' ? e.name.replace(/^models\//, '') : undefined;
    if (raw && raw.length <= MAX_ID_CHARS) ids.push(raw);
  }
  return ids;
}

/** The configured names: literal model-map patterns, then the fallback (`--model`). */
export function configuredModelIds(models: ModelMapping): string[] {
  const ids = models.rules.filter((r) => !r.pattern.includes('*')).map((r) => r.pattern);
  if (models.fallback !== undefined) ids.push(models.fallback);
  return ids;
}

export async function listModels(o: ListModelsOptions): Promise<ModelList> {
  const seen = new Set<string>();
  const data: ModelEntry[] = [];
  const add = (id: string, owner: string): void => {
    if (seen.has(id)) return;
    seen.add(id);
    data.push({ id, object: 'model', created: 0, owned_by: owner });
  };
  for (const id of configuredModelIds(o.models)) add(id, 'sluice');
  for (const id of await fetchBackendIds(o)) add(id, 'upstream');
  return { object: 'list', data };
}

async function fetchBackendIds(o: ListModelsOptions): Promise<string[]> {
  try {
    const res = await fetch(endpointUrl(o.upstreamBase, 'models'), {
      headers: { accept: 'application/json', ...o.headers, ...o.format.authHeaders(o.key) },
      signal: AbortSignal.timeout(o.timeoutMs ?? 2000),
    });
    if (!res.ok) {
      await res.body?.cancel();
      return [];
    }
    return backendModelIds(await res.json());
  } catch {
    return []; // down, slow, not JSON: the configured names still answer
  }
}
