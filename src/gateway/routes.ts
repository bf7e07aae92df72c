/**
 * The gateway's request routing: one function per route family, all reading one explicit
 * `RouteContext` (built by startGateway, server.ts). `routeRequest` answers the operations routes
 * (liveness, readiness, metrics), the model list (`/v1/models`, `/v1/models/{id}`), the token
 * estimate (`/v1/messages/count_tokens`) and the three model APIs, whose requests take a
 * concurrency slot and run through the exchange pipeline (exchange.ts `runExchange`).
 *
 * Query strings are ignored (Claude Code sends `?beta=true`). Errors answered before a response is
 * committed use the route's API error shape (Anthropic for /v1/messages and unknown routes, OpenAI
 * for the other two; the models routes choose by the client's `anthropic-version` header).
 */
import { randomBytes } from 'node:crypto';
import type * as http from 'node:http';
import { performance } from 'node:perf_hooks';
import { type AuthConfig, authenticate, presentedKey } from './auth';
import { type DrainLimits, drainRefused, type MemoryBudget, readBodyBytes } from './body';
import { GatewayError } from './errors';
import { type ExchangeContext, ms, runExchange, sendJson } from './exchange';
import { countTokens } from './exchange/parse';
import { Slots } from './hygiene';
import { chatApi } from './inbound/chat';
import { messagesApi } from './inbound/messages';
import { responsesApi } from './inbound/responses';
import type { InboundApi } from './inbound/types';
import type { GatewayMetrics } from './metrics';
import type { Drain } from './shutdown';
import { type RequestLimits, validateCanonical } from './validate';
import { anthropicPage, findModel, knownModels, type modelsCache, toAnthropicModel, toOpenAIModel } from './upstream/models';

/** Everything the routes read: one per gateway. */
export interface RouteContext {
  /** The exchange context (exchange.ts): backend client, models, logger, closing(), … */
  ctx: ExchangeContext;
  /** The client-key rule of the main port (undefined: no keys). */
  auth: AuthConfig | undefined;
  budget: MemoryBudget;
  slots: Slots;
  maxConcurrent: number;
  metrics: GatewayMetrics;
  /** `GET /metrics` is served. */
  serveMetrics: boolean;
  drain: Drain;
  /** Abort controllers of the model requests in flight (a model request adds its own). */
  inflight: Set<AbortController>;
  /** The canonical request's limits (validate.ts), checked on every route that reads one. */
  requestLimits: RequestLimits;
  /** Largest body and deepest nesting accepted (body.ts readBodyBytes). */
  bodyLimits: { maxBytes: number; maxDepth: number };
  /** An upload answered before its body was read is drained this far (body.ts drainRefused). */
  drainLimits: DrainLimits;
  /** The backend's model list, kept for a few seconds and fetched once for concurrent GETs (upstream/models.ts). */
  modelLists: ReturnType<typeof modelsCache>;
}

/** Model API routes (`/chat/completions` and `/responses` for clients whose base URL has no /v1). */
const MODEL_ROUTES = new Map<string, InboundApi>([
  ['/v1/messages', messagesApi],
  ['/v1/responses', responsesApi],
  ['/v1/chat/completions', chatApi],
  ['/chat/completions', chatApi],
  ['/responses', responsesApi],
]);

function requestId(): string {
  return 'req_' + randomBytes(12).toString('hex');
}

/** One client request on the main port, from its route to its answer (errors included). */
export async function routeRequest(rc: RouteContext, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const { metrics, ctx } = rc;
  const reqId = requestId();
  res.setHeader('request-id', reqId);
  const path = (req.url ?? '/').split('?')[0]!.replace(/\/+$/, '') || '/';
  const method = req.method ?? 'GET';
  const t0 = performance.now();
  const api = MODEL_ROUTES.get(path);
  // Metrics label: known routes only (an arbitrary path must not create a time series).
  const route = api || path === '/v1/messages/count_tokens' || path === '/metrics' ? path : 'other';
  let errorType: string | undefined;
  /** The error shape for a route that is not a model route (the models routes choose theirs). */
  let errorApi: InboundApi | undefined;
  res.once('close', () => {
    if (route === 'other' && res.statusCode === 200) return; // /health, /livez, /readyz probes
    metrics.request(route, res.writableFinished ? res.statusCode : 499, errorType);
  });
  try {
    const op = operations(rc, path, method, req, res);
    if (op !== undefined) {
      await op;
      return;
    }
    const modelId = /^\/(?:v1\/)?models(?:\/(.+))?$/.exec(path);
    if (modelId) {
      // Anthropic SDKs (which send `anthropic-version`) get Anthropic's shapes, everyone else OpenAI's.
      errorApi = req.headers['anthropic-version'] !== undefined ? messagesApi : chatApi;
      return await models(rc, modelId[1], errorApi === messagesApi, path, method, req, res);
    }
    if (path === '/v1/messages/count_tokens') return await tokenCount(rc, path, method, req, res, reqId, t0);
    if (api) {
      if (method !== 'POST') throw new GatewayError(405, `method ${method} not allowed on ${path}; use POST`, 'invalid_request_error');
      await modelRequest(rc, api, req, res, reqId, t0, path);
      return;
    }
    req.resume();
    throw new GatewayError(404, `no route for ${method} ${path}`, 'not_found_error');
  } catch (err) {
    const ge = err instanceof GatewayError ? err : new GatewayError(500, 'internal gateway error', 'api_error');
    errorType = ge.type;
    if (ge.status === 401) req.resume();
    if (!(err instanceof GatewayError)) {
      // Outside a model request's pipeline (which reports its own: exchange/fault.ts).
      ctx.logger.error('internal_error', { reqId, path, stage: 'route', error: err instanceof Error ? err.name : 'unknown' });
      metrics.internalError('route');
    }
    // Answered before the body was read: the rest of the upload is drained (bounded), not reset.
    const answer = drainRefused(req, ge, rc.drainLimits);
    sendJson(res, answer.status, (api ?? errorApi ?? messagesApi).errorBody(answer.type, answer.message), answer.headers);
    ctx.logger.info('request', { reqId, path, status: ge.status, errorType: ge.type, durationMs: ms(performance.now() - t0) });
  }
}

/**
 * The operations routes on the main port (liveness, readiness, metrics; the operations listener
 * has its own thread, ops.ts): undefined when `path` is none of them, else the answer (a promise
 * for /metrics).
 */
function operations(rc: RouteContext, path: string, method: string, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> | true | undefined {
  const probe = path === '/health' || path === '/healthz' || path === '/livez' || path === '/';
  const metricsRoute = path === '/metrics' && rc.serveMetrics;
  if (!probe && path !== '/readyz' && !metricsRoute) return undefined;
  // `HEAD /` is Claude Code's connectivity probe.
  if (method !== 'GET' && method !== 'HEAD') throw new GatewayError(405, `method ${method} not allowed on ${path}`, 'invalid_request_error');
  if (probe) {
    sendJson(res, 200, { status: 'ok', active: rc.slots.active, maxConcurrent: rc.maxConcurrent, bodyBudgetInUse: rc.budget.inUse });
    return true;
  }
  if (path === '/readyz') {
    const ready = !rc.drain.draining && !rc.ctx.closing();
    sendJson(res, ready ? 200 : 503, { status: ready ? 'ready' : 'draining', active: rc.slots.active });
    return true;
  }
  authenticate(rc.auth, req);
  return rc.metrics.serve(res, method === 'HEAD');
}

/**
 * `GET /v1/models` and `/v1/models/{id}` (`rawId`): clients probe the model list, or one model
 * (upstream/models.ts), in Anthropic's shapes (`anthropic`) or OpenAI's.
 */
async function models(
  rc: RouteContext,
  rawId: string | undefined,
  anthropic: boolean,
  path: string,
  method: string,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const { ctx } = rc;
  if (method !== 'GET' && method !== 'HEAD') throw new GatewayError(405, `method ${method} not allowed on ${path}`, 'invalid_request_error');
  authenticate(rc.auth, req);
  const upstream = ctx.upstream;
  const key = upstream.config.apiKey ?? (ctx.forwardClientKey ? presentedKey(req) : undefined);
  const known = await knownModels({ models: ctx.models, upstreamBase: ctx.upstreamBase, format: ctx.upstreamFormat, budget: rc.budget, cache: rc.modelLists, ...(key ? { key } : {}), ...(upstream.config.headers ? { headers: upstream.config.headers } : {}) });
  if (rawId === undefined) {
    const query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
    sendJson(res, 200, anthropic ? anthropicPage(known, query) : { object: 'list', data: known.map(toOpenAIModel) });
    return;
  }
  let id: string;
  try {
    id = decodeURIComponent(rawId);
  } catch {
    throw new GatewayError(400, 'model id: malformed percent-encoding', 'invalid_request_error');
  }
  const m = findModel(known, ctx.models, id);
  if (m) sendJson(res, 200, anthropic ? toAnthropicModel(m) : toOpenAIModel(m));
  else if (anthropic) sendJson(res, 404, messagesApi.errorBody('not_found_error', `model: ${id}`));
  else sendJson(res, 404, { error: { message: `The model ${JSON.stringify(id)} does not exist on this gateway (GET /v1/models lists the models it serves)`, type: 'invalid_request_error', param: 'model', code: 'model_not_found' } });
}

/** `POST /v1/messages/count_tokens`: an estimate, parsed in a body worker when large (exchange/parse.ts), like a model request. */
async function tokenCount(
  rc: RouteContext,
  path: string,
  method: string,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  reqId: string,
  t0: number,
): Promise<void> {
  if (method !== 'POST') throw new GatewayError(405, `method ${method} not allowed on ${path}; use POST`, 'invalid_request_error');
  authenticate(rc.auth, req);
  const { bytes, charged } = await readBodyBytes(req, rc.bodyLimits, rc.budget);
  try {
    sendJson(res, 200, { input_tokens: await countTokens(rc.ctx, bytes, (c) => validateCanonical(c, rc.requestLimits), reqId) });
  } finally {
    rc.budget.give(charged);
  }
  rc.ctx.logger.info('request', { reqId, path, status: 200, durationMs: ms(performance.now() - t0) });
}

/** One model request (any inbound API): concurrency slot, body, exchange. */
async function modelRequest(
  rc: RouteContext,
  api: InboundApi,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  reqId: string,
  t0: number,
  path: string,
): Promise<void> {
  const { ctx, drain, slots, metrics } = rc;
  if (ctx.closing() || drain.draining) {
    req.resume();
    throw new GatewayError(503, 'gateway is shutting down', 'overloaded_error');
  }
  authenticate(rc.auth, req);
  // A full gateway answers before reading the body (nothing is buffered for a request that
  // cannot run).
  if (slots.active >= rc.maxConcurrent) {
    req.resume();
    throw Slots.overloaded(rc.maxConcurrent, true);
  }
  // The slot is taken only once the body is in and valid: slow bodies hold a socket (bounded
  // by the body timeout) and their share of the body memory budget, never a slot.
  const { bytes: body, charged } = await readBodyBytes(req, rc.bodyLimits, rc.budget);
  let release: (() => void) | undefined;
  const ac = new AbortController();
  try {
    if (ctx.closing() || drain.draining) throw new GatewayError(503, 'gateway is shutting down', 'overloaded_error');
    release = slots.take();
    if (!release) throw Slots.overloaded(rc.maxConcurrent);
    metrics.activeStreams.set(slots.active);
    rc.inflight.add(ac);
    await runExchange(ctx, api, body, req, res, reqId, t0, ac, path);
  } finally {
    rc.budget.give(charged);
    release?.();
    metrics.activeStreams.set(slots.active);
    rc.inflight.delete(ac);
  }
}
