/**
 * `sluice serve`: one gateway for Anthropic Messages, OpenAI Responses and OpenAI Chat Completions
 * clients over an OpenAI Chat, OpenAI Responses, Anthropic Messages or Gemini backend.
 *
 * `startGateway` starts in stages: options (`startOptions`: defaults and checks, nothing started
 * yet) → the backend client, body budget, metrics and exchange context → workers (the body worker
 * pool) → the main port (start/listeners.ts `listenMain`) → shutdown (start/shutdown.ts: `close`,
 * `drain`) → the operations listener (`startOps`, which close() undoes on failure).
 *
 * This module routes and owns connections; the per-request pipeline is exchange.ts, each inbound
 * API is a module in inbound/ (parse → canonical request; OutputEvents → that API's SSE / JSON),
 * each backend API a module in upstream/ (canonical request → backend request), and they meet at
 * the canonical request (canonical.ts) and the canonical event stream (src/wire/events.ts).
 *
 * Routes: `POST /v1/messages` (+ `/v1/messages/count_tokens`, an estimate), `POST /v1/responses`,
 * `POST /v1/chat/completions`, `GET /v1/models` and `/v1/models/{id}` (upstream/models.ts), `GET|HEAD /health`,
 * `/healthz`, `/`. Query strings are ignored (Claude Code sends `?beta=true`). Errors answered
 * before a response is committed use the route's API error shape (Anthropic for /v1/messages and unknown routes, OpenAI for the other two).
 */
import { randomBytes } from 'node:crypto';
import * as http from 'node:http';
import { performance } from 'node:perf_hooks';
import type { InspectionEvent } from 'xstate';
import type { AnthropicEncodeOptions } from '../encode/anthropicSse';
import type { CompletionMode } from '../engine/controller';
import type { WireFormat } from '../wire/events';
import type { Adapter } from '../wire/events';
import { createTextAdapter } from '../parsers/adapter';
import { createStreamReader, type StreamReader } from '../wire/index';
import { type ModelMapping, type ToolParam } from './canonical';
import { GatewayError } from './errors';
import { BODY_MEMORY_FACTOR, DEFAULT_BODY_BUDGET_BYTES, DEFAULT_DRAIN_LIMITS, type DrainLimits, drainRefused, MemoryBudget, readBodyBytes } from './body';
import { BodyWorkerPool, type BodyWorkerOptions } from './worker/pool';
import { type ExchangeContext, type MalformedCallMode, ms, runExchange, sendJson } from './exchange';
import { countTokens } from './exchange/parse';
import type { ExchangeObserver } from './observer';
import { chatApi } from './inbound/chat';
import { messagesApi } from './inbound/messages';
import { responsesApi } from './inbound/responses';
import type { InboundApi } from './inbound/types';
import { authenticate, presentedKey, resolveAuth } from './auth';
import { clientErrorResponse, guardConnections, HYGIENE_DEFAULTS, type HygieneLimits, httpServerOptions, Slots } from './hygiene';
import { Logger } from './log';
import { GatewayMetrics } from './metrics';
import type { OpsListener } from './ops';
import { listenMain, startOps } from './start/listeners';
import { shutdownStage } from './start/shutdown';
import { DEFAULT_DRAIN_MS, Drain } from './shutdown';
import { REQUEST_LIMIT_DEFAULTS, validateCanonical } from './validate';
import { UpstreamClient } from './upstream';
import { upstreamFormatFor } from './upstream/index';
import { anthropicPage, findModel, knownModels, modelsCache, toAnthropicModel, toOpenAIModel } from './upstream/models';
import type { UpstreamFormatName } from './upstream/types';
import { SessionLinks, type SessionLinkOptions } from './sessionLink';

export { completionToChunk } from './upstream/openaiChat';
export type { MalformedCallMode } from './exchange';

export interface GatewayOptions {
  /** Backend base URL (`http://host:8000`, `…/v1` or the full `…/chat/completions`). */
  upstream: string;
  /** Bind address. Default 127.0.0.1 (loopback only). */
  host?: string;
  /** Port. Default 0 (any free port) for the library; the CLI defaults to 8787. */
  port?: number;
  /** Fixed bearer token for the backend. Default: pass the client's `x-api-key` / bearer token through. */
  upstreamApiKey?: string;
  /** Extra headers sent to the backend. */
  upstreamHeaders?: Record<string, string>;
  /** Client model → backend model. Default: pass the client's model through. */
  models?: ModelMapping;
  /**
   * Backend API: 'openai-chat' (default), 'openai-responses', 'anthropic' or 'gemini'. Default:
   * inferred from the URL path (`…/responses` → openai-responses, `…/messages` → anthropic,
   * `…/v1beta…` or `generativelanguage.googleapis.com` → gemini), else openai-chat.
   */
  upstreamFormat?: UpstreamFormatName;
  /**
   * How the backend's stream is read when it differs from the API's own: 'dynamo' (chat with
   * completion records) or `text:<family>` (raw model text). Both need an openai-chat backend.
   */
  format?: WireFormat;
  /** A call whose arguments are not a complete JSON object: 'pass' (default, with a marker) or 'drop' (with a text marker). */
  malformedCalls?: MalformedCallMode;
  /** Adapter factory for `text:<family>` formats (src/parsers `createTextAdapter`), called per request with its tools. */
  textAdapter?: GatewayTextAdapterFactory;
  /** Completion inference for chat streams (SPEC §4). Default 'inferred'. */
  completion?: CompletionMode;
  /** XState inspection observer for every request's turn (`sluice serve --inspect`, `--inspect-log`). */
  inspect?: (event: InspectionEvent) => void;
  /** Per-request stage hooks (telemetry: src/telemetry/gateway.ts); default none. */
  observer?: ExchangeObserver;
  /** Largest accepted request body in bytes. Default 32 MiB. */
  maxBodyBytes?: number;
  /**
   * Memory (bytes) all request bodies in flight may cost together; each body is charged
   * `BODY_MEMORY_FACTOR` × its size until its request ends (body.ts). A body that does not fit
   * gets 503 overloaded_error with retry-after. Default 768 MiB (a 2 GB container).
   */
  bodyBudgetBytes?: number;
  /**
   * An upload answered before its body was read (503, 529, 413, 400, …): the rest is read and
   * discarded up to `bytes`, then the connection is half-closed, and closed after `ms` (body.ts
   * `drainRefused`, docs/limits.md). Default 64 MiB and 10 s.
   */
  earlyAnswerDrain?: Partial<DrainLimits>;
  /**
   * After a burst of large bodies (256 MiB charged), once no body is in flight for 1 s, run one
   * full garbage collection so the memory goes back to the system (body.ts). Default false for
   * the library (the embedder's process, the embedder's policy); `sluice serve` turns it on.
   */
  collectAfterBurst?: boolean;
  /**
   * Bodies of at least `aboveBytes` (default 512 KiB) are parsed, validated and translated in a
   * small pool of worker threads (worker/pool.ts), so one large request never blocks the event
   * loop; `false`: always on the event loop. docs/limits.md "Memory budget".
   */
  bodyWorker?: BodyWorkerOptions | false;
  /** Concurrent model requests (all three APIs); more get 529 overloaded_error. Default 256. */
  maxConcurrent?: number;
  /** Backend TCP connect timeout. Default 10 s. */
  connectTimeoutMs?: number;
  /** Backend silence (no response headers / no bytes) before the request fails. Default 300 s. */
  idleTimeoutMs?: number;
  /** Send an SSE `ping` when nothing was written for this long. Default 10 s; 0 disables. */
  pingIntervalMs?: number;
  /** Which field carries max_tokens upstream. Default 'max_tokens'. */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
  /** Mid-conversation system messages: 'inline' (default) or 'merge' into the leading system message. */
  systemMessages?: 'inline' | 'merge';
  /**
   * Report `tool_use` when a backend ends a turn that released tool blocks with finish `stop`
   * (common on Ollama / llama.cpp). Default true; false = strict SPEC map (stop → end_turn).
   */
  toolUseOnStop?: boolean;
  logger?: Logger;
  /** Id minting for msg_/toolu_ ids (deterministic tests). */
  idGenerator?: AnthropicEncodeOptions['idGenerator'];
  /** Client API keys (`x-api-key` or `Authorization: Bearer`). Required for a non-loopback host unless `noAuth`. */
  apiKeys?: string[];
  /** Run a non-loopback bind without client authentication (explicit opt-out). */
  noAuth?: boolean;
  /** Client request line + headers must arrive within this. Default 30 s. */
  headersTimeoutMs?: number;
  /** The whole client request (body included) must arrive within this; 408 after. Default 120 s. */
  bodyTimeoutMs?: number;
  /** Idle keep-alive client connections close after this. Default 5 s. */
  keepAliveTimeoutMs?: number;
  /** Open client connections (idle ones are evicted first at the cap). Default 1024. */
  maxConnections?: number;
  /** One model request, from arrival to its last byte. Default 30 min. */
  requestDeadlineMs?: number;
  /** Deepest JSON nesting accepted in a request body. Default 128. */
  maxJsonDepth?: number;
  /** Largest `max_tokens` accepted. Default 1,048,576. */
  maxOutputTokens?: number;
  /** Serve `GET /metrics` (Prometheus). Default true. */
  metrics?: boolean;
  /** Default deadline of `drain()` (SIGTERM in `sluice serve`). Default 30 s. */
  drainTimeoutMs?: number;
  /**
   * Listen backlog of the main port: connections the kernel completes and queues until the
   * gateway accepts them. Default `DEFAULT_BACKLOG` (4096); Linux caps it at
   * `net.core.somaxconn`. A full queue drops new SYNs (the client retries after 1 s, 3 s, …) and
   * can reset connections whose handshake already finished.
   */
  backlog?: number;
  /**
   * A second listener for the operations routes only (`/health`, `/livez`, `/healthz`, `/`,
   * `/readyz`, `/metrics`) on its own socket, served by its own thread (ops.ts), so probes wait
   * neither behind client connections nor for a saturated event loop; it reports the main loop's
   * heartbeat and says 503 `stalled` when that is older than `stallMs` (default 10 s). `port` 0 =
   * any free port; `host` default 127.0.0.1. The main port keeps answering the same routes. It
   * stays open while the gateway drains (so `/readyz` answers 503) and closes with it.
   */
  ops?: { port: number; host?: string; stallMs?: number };
  /**
   * The A/B of early release (SPEC §13, holdout.ts): this share of requests (0–1, drawn per
   * request) holds every tool call to the end of the backend stream. Default 0.
   */
  releaseHoldout?: number;
  /** Draws each request's arm (tests); default Math.random. */
  random?: () => number;
  /**
   * The table that links a request to the response whose tool calls it answers (sessionLink.ts):
   * its size and TTL, or false for none. Default 50,000 ids, 30 min.
   */
  sessionLinks?: SessionLinkOptions | false;
}

/** Builds the adapter for a `text:<family>` backend; gets the request's tools (parsers use their schemas). */
export type GatewayTextAdapterFactory = (family: string, ctx: { tools: ToolParam[] }) => Adapter | undefined;

/**
 * The open-model text parsers (src/parsers) as the gateway's text adapter factory:
 * `createTextAdapter(family, {tools})`. A static import, so it works from the ESM and CommonJS
 * builds alike; the parsers come with `sluice/gateway` (and `sluice/parsers`), never with `sluice`.
 */
export function loadTextAdapterFactory(): GatewayTextAdapterFactory | undefined {
  return (family, ctx) => createTextAdapter(family, { tools: ctx.tools });
}

export interface Gateway {
  /** e.g. http://127.0.0.1:8787 (what ANTHROPIC_BASE_URL should be). */
  url: string;
  port: number;
  server: http.Server;
  /** The operations listener (`ops` option): its URL and port. */
  ops?: { url: string; port: number };
  /** Model requests in flight. */
  active(): number;
  /** Client sockets currently open. */
  openSockets(): number;
  /** Stop accepting, abort requests in flight, close every socket. Idempotent. */
  close(): Promise<void>;
  /**
   * Graceful shutdown: readiness false, stop accepting, let streams in flight finish for up to
   * `deadlineMs` (default 30 s), end the rest with an overloaded_error event, then close().
   * Resolves with the number of requests that had to be ended.
   */
  drain(deadlineMs?: number): Promise<number>;
  /** False while draining (what `/readyz` answers). */
  ready(): boolean;
  /** This gateway's metrics (its own prom-client Registry). */
  metrics: GatewayMetrics;
}

/**
 * Default listen backlog. Node's own default is 511: at 2,000 streams plus reconnecting idle
 * sockets the queue overflowed (bench/soak.ts: 993 fresh client connections reset, /health SYNs
 * dropped); 4096 is what `net.core.somaxconn` allows by default on Linux ≥ 5.4 (docs/gateway.md).
 */
export const DEFAULT_BACKLOG = 4096;

/** Default largest request body: 32 MiB (the Anthropic API's own request size limit). */
export const DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024;

const DEFAULTS = {
  host: '127.0.0.1',
  maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
  maxConcurrent: 256,
  connectTimeoutMs: 10_000,
  idleTimeoutMs: 300_000,
  pingIntervalMs: 10_000,
};

function requestId(): string {
  return 'req_' + randomBytes(12).toString('hex');
}

/**
 * startGateway's first stage: the options with their defaults, checked. A configuration that
 * cannot work throws here, before anything is started (no socket, no thread, no timer).
 */
function startOptions(options: GatewayOptions) {
  const opts = { ...DEFAULTS, ...options };
  const holdout = options.releaseHoldout ?? 0;
  if (typeof holdout !== 'number' || !(holdout >= 0 && holdout <= 1)) throw new Error(`releaseHoldout must be a fraction from 0 to 1, got ${String(holdout)}`);
  const logger = options.logger ?? new Logger('info');
  const upstreamFormat = upstreamFormatFor(options.upstreamFormat ?? inferUpstreamFormat(opts.upstream));
  const format: WireFormat = options.format ?? upstreamFormat.wire;
  if (format !== upstreamFormat.wire && upstreamFormat.name !== 'openai-chat')
    throw new Error(`format ${format} needs an openai-chat upstream (the upstream is ${upstreamFormat.name})`);
  const limits: HygieneLimits = {
    headersTimeoutMs: options.headersTimeoutMs ?? HYGIENE_DEFAULTS.headersTimeoutMs,
    bodyTimeoutMs: options.bodyTimeoutMs ?? HYGIENE_DEFAULTS.bodyTimeoutMs,
    keepAliveTimeoutMs: options.keepAliveTimeoutMs ?? HYGIENE_DEFAULTS.keepAliveTimeoutMs,
    maxConnections: options.maxConnections ?? HYGIENE_DEFAULTS.maxConnections,
    requestDeadlineMs: options.requestDeadlineMs ?? HYGIENE_DEFAULTS.requestDeadlineMs,
  };
  const requestLimits = {
    maxDepth: options.maxJsonDepth ?? REQUEST_LIMIT_DEFAULTS.maxDepth,
    maxOutputTokens: options.maxOutputTokens ?? REQUEST_LIMIT_DEFAULTS.maxOutputTokens,
  };
  // Throws (a configuration error) for a non-loopback host without keys or noAuth.
  const auth = resolveAuth({ host: opts.host, ...(options.apiKeys ? { apiKeys: options.apiKeys } : {}), ...(options.noAuth ? { noAuth: true } : {}) });
  const drainLimits: DrainLimits = { ...DEFAULT_DRAIN_LIMITS, ...options.earlyAnswerDrain };
  const bodyBudgetBytes = options.bodyBudgetBytes ?? DEFAULT_BODY_BUDGET_BYTES;
  if (Math.floor(bodyBudgetBytes / BODY_MEMORY_FACTOR) < opts.maxBodyBytes)
    throw new Error(
      `the body memory budget (${bodyBudgetBytes} bytes) is too small for one body of the maximum size ` +
        `(${opts.maxBodyBytes} bytes costs ${opts.maxBodyBytes * BODY_MEMORY_FACTOR}); raise the budget or lower the maximum body size`,
    );
  const family = format.startsWith('text:') ? format.slice(5) : undefined;
  const textAdapter = options.textAdapter;
  if (family !== undefined) {
    // Fail fast on a text format without a parser (a configuration error, not a request error).
    if (!textAdapter) throw new Error(`format ${format}: no text parser available in this build`);
    if (!textAdapter(family, { tools: [] })) throw new Error(`format ${format}: unknown parser family "${family}"`);
  } else {
    createStreamReader(format);
  }
  // The reader for one request: the wire format's adapter, or the text parser given its tools.
  const newReader = (tools: ToolParam[]): StreamReader =>
    family !== undefined ? createStreamReader(format, { adapter: textAdapter!(family, { tools })! }) : createStreamReader(format);
  return { opts, holdout, logger, upstreamFormat, format, limits, requestLimits, auth, drainLimits, bodyBudgetBytes, newReader };
}

export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  // Options: defaults, checks (a configuration error throws before anything starts).
  const { opts, holdout, logger, upstreamFormat, format, limits, requestLimits, auth, drainLimits, bodyBudgetBytes, newReader } = startOptions(options);
  const upstream = new UpstreamClient(
    {
      url: opts.upstream,
      ...(opts.upstreamApiKey !== undefined ? { apiKey: opts.upstreamApiKey } : {}),
      ...(opts.upstreamHeaders !== undefined ? { headers: opts.upstreamHeaders } : {}),
      connectTimeoutMs: opts.connectTimeoutMs,
      idleTimeoutMs: opts.idleTimeoutMs,
      logger,
      onResponseBytes: (n) => budget.noteResponse(n),
    },
    opts.maxConcurrent,
  );
  const inflight = new Set<AbortController>();
  let closing = false;
  /** Set once the operations thread listens; declared here, before any request can end. */
  let opsListener: OpsListener | undefined;
  const budget = new MemoryBudget(bodyBudgetBytes, undefined, options.collectAfterBurst === true);
  const bodyLimits = { maxBytes: opts.maxBodyBytes, maxDepth: requestLimits.maxDepth };
  // Telemetry: this gateway's Prometheus registry (metrics.ts); OTel comes in as options.observer (otel.ts).
  const metrics = new GatewayMetrics();
  const drain = new Drain();
  const slots = new Slots(opts.maxConcurrent);

  const ctx: ExchangeContext = {
    upstream,
    upstreamFormat,
    upstreamBase: opts.upstream,
    wire: format,
    newReader,
    models: options.models ?? { rules: [] },
    bodyOptions: {
      ...(opts.maxTokensField ? { maxTokensField: opts.maxTokensField } : {}),
      ...(opts.systemMessages ? { systemMessages: opts.systemMessages } : {}),
    },
    logger,
    ...(opts.completion ? { completion: opts.completion } : {}),
    ...(opts.inspect ? { inspect: opts.inspect } : {}),
    ...(options.observer ? { observer: options.observer } : {}),
    toolUseOnStop: options.toolUseOnStop ?? true,
    malformedCalls: options.malformedCalls ?? 'pass',
    maxBodyBytes: opts.maxBodyBytes,
    idleTimeoutMs: opts.idleTimeoutMs,
    pingIntervalMs: opts.pingIntervalMs,
    ...(opts.idGenerator ? { idGenerator: opts.idGenerator } : {}),
    closing: () => closing,
    metrics,
    drain,
    requestDeadlineMs: limits.requestDeadlineMs,
    // With gateway auth the client's key is the gateway's secret: never forward it.
    forwardClientKey: auth === undefined,
    // One validation of the canonical request, whatever the route.
    validate: (creq) => validateCanonical(creq, requestLimits),
    releaseHoldout: holdout,
    ...(options.random ? { random: options.random } : {}),
    ...(options.sessionLinks !== false ? { links: new SessionLinks(options.sessionLinks ?? {}) } : {}),
  };
  // Workers: large bodies are parsed and translated on worker threads (worker/pool.ts).
  if (options.bodyWorker !== false)
    ctx.bodyWorker = new BodyWorkerPool(
      { upstreamFormat: upstreamFormat.name, models: ctx.models, bodyOptions: ctx.bodyOptions, limits: requestLimits },
      budget,
      logger,
      opts.maxBodyBytes,
      options.bodyWorker,
    );

  const routes = new Map<string, InboundApi>([
    ['/v1/messages', messagesApi],
    ['/v1/responses', responsesApi],
    ['/v1/chat/completions', chatApi],
    // Clients configured with a base URL without /v1 (some Chat clients) land here.
    ['/chat/completions', chatApi],
    ['/responses', responsesApi],
  ]);

  const server = http.createServer(httpServerOptions(limits), (req, res) => {
    // Publish the request's end (its slot and body memory given back) to the operations thread at
    // once, so its /health agrees with this port's the moment a request ends.
    void handle(req, res).finally(() => opsListener?.beat());
  });
  const { all: sockets, idle: idleSockets } = guardConnections(server, limits, {
    onCount: (n) => metrics.connections.set(n),
    onRejected: () => metrics.rejectedConnections.inc(),
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (socket.writable) socket.end(clientErrorResponse(err));
    else socket.destroy();
  });

  /**
   * The operations routes on the main port (liveness, readiness, metrics; the operations listener
   * has its own thread, ops.ts): undefined when `path` is none of them, else the answer (a
   * promise for /metrics).
   */
  function operations(path: string, method: string, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> | true | undefined {
    const probe = path === '/health' || path === '/healthz' || path === '/livez' || path === '/';
    const metricsRoute = path === '/metrics' && options.metrics !== false;
    if (!probe && path !== '/readyz' && !metricsRoute) return undefined;
    // `HEAD /` is Claude Code's connectivity probe.
    if (method !== 'GET' && method !== 'HEAD') throw new GatewayError(405, `method ${method} not allowed on ${path}`, 'invalid_request_error');
    if (probe) {
      sendJson(res, 200, { status: 'ok', active: slots.active, maxConcurrent: opts.maxConcurrent, bodyBudgetInUse: budget.inUse });
      return true;
    }
    if (path === '/readyz') {
      const ready = !drain.draining && !closing;
      sendJson(res, ready ? 200 : 503, { status: ready ? 'ready' : 'draining', active: slots.active });
      return true;
    }
    authenticate(auth, req);
    return metrics.serve(res, method === 'HEAD');
  }

  /** The backend's model list, kept for a few seconds and fetched once for concurrent GETs (upstream/models.ts). */
  const backendModelLists = modelsCache();

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const reqId = requestId();
    res.setHeader('request-id', reqId);
    const path = (req.url ?? '/').split('?')[0]!.replace(/\/+$/, '') || '/';
    const method = req.method ?? 'GET';
    const t0 = performance.now();
    const api = routes.get(path);
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
      const op = operations(path, method, req, res);
      if (op !== undefined) {
        await op;
        return;
      }
      const modelId = /^\/(?:v1\/)?models(?:\/(.+))?$/.exec(path);
      if (modelId) {
        // Clients probe the model list, or one model (upstream/models.ts); Anthropic SDKs (which
        // send `anthropic-version`) get Anthropic's shapes, everyone else OpenAI's.
        const anthropic = req.headers['anthropic-version'] !== undefined;
        errorApi = anthropic ? messagesApi : chatApi;
        if (method !== 'GET' && method !== 'HEAD') throw new GatewayError(405, `method ${method} not allowed on ${path}`, 'invalid_request_error');
        authenticate(auth, req);
        const key = upstream.config.apiKey ?? (ctx.forwardClientKey ? presentedKey(req) : undefined);
        const known = await knownModels({ models: ctx.models, upstreamBase: opts.upstream, format: upstreamFormat, budget, cache: backendModelLists, ...(key ? { key } : {}), ...(upstream.config.headers ? { headers: upstream.config.headers } : {}) });
        if (modelId[1] === undefined) {
          const query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
          sendJson(res, 200, anthropic ? anthropicPage(known, query) : { object: 'list', data: known.map(toOpenAIModel) });
          return;
        }
        let id: string;
        try {
          id = decodeURIComponent(modelId[1]);
        } catch {
          throw new GatewayError(400, 'model id: malformed percent-encoding', 'invalid_request_error');
        }
        const m = findModel(known, ctx.models, id);
        if (m) sendJson(res, 200, anthropic ? toAnthropicModel(m) : toOpenAIModel(m));
        else if (anthropic) sendJson(res, 404, messagesApi.errorBody('not_found_error', `model: ${id}`));
        else sendJson(res, 404, { error: { message: `The model ${JSON.stringify(id)} does not exist on this gateway (GET /v1/models lists the models it serves)`, type: 'invalid_request_error', param: 'model', code: 'model_not_found' } });
        return;
      }
      if (path === '/v1/messages/count_tokens') {
        if (method !== 'POST') throw new GatewayError(405, `method ${method} not allowed on ${path}; use POST`, 'invalid_request_error');
        authenticate(auth, req);
        // Parsed in a body worker when large (exchange/parse.ts), like a model request.
        const { bytes, charged } = await readBodyBytes(req, bodyLimits, budget);
        try {
          sendJson(res, 200, { input_tokens: await countTokens(ctx, bytes, (c) => validateCanonical(c, requestLimits), reqId) });
        } finally {
          budget.give(charged);
        }
        logger.info('request', { reqId, path, status: 200, durationMs: ms(performance.now() - t0) });
        return;
      }
      if (api) {
        if (method !== 'POST') throw new GatewayError(405, `method ${method} not allowed on ${path}; use POST`, 'invalid_request_error');
        await model(api, req, res, reqId, t0, path);
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
        logger.error('internal_error', { reqId, path, stage: 'route', error: err instanceof Error ? err.name : 'unknown' });
        metrics.internalError('route');
      }
      // Answered before the body was read: the rest of the upload is drained (bounded), not reset.
      const answer = drainRefused(req, ge, drainLimits);
      sendJson(res, answer.status, (api ?? errorApi ?? messagesApi).errorBody(answer.type, answer.message), answer.headers);
      logger.info('request', { reqId, path, status: ge.status, errorType: ge.type, durationMs: ms(performance.now() - t0) });
    }
  }

  /** One model request (any inbound API): concurrency slot, body, exchange. */
  async function model(
    api: InboundApi,
    req: http.IncomingMessage,
    res: http.ServerResponse,
    reqId: string,
    t0: number,
    path: string,
  ): Promise<void> {
    if (closing || drain.draining) {
      req.resume();
      throw new GatewayError(503, 'gateway is shutting down', 'overloaded_error');
    }
    authenticate(auth, req);
    // A full gateway answers before reading the body (nothing is buffered for a request that
    // cannot run).
    if (slots.active >= opts.maxConcurrent) {
      req.resume();
      throw Slots.overloaded(opts.maxConcurrent, true);
    }
    // The slot is taken only once the body is in and valid: slow bodies hold a socket (bounded
    // by the body timeout) and their share of the body memory budget, never a slot.
    const { bytes: body, charged } = await readBodyBytes(req, bodyLimits, budget);
    let release: (() => void) | undefined;
    const ac = new AbortController();
    try {
      if (closing || drain.draining) throw new GatewayError(503, 'gateway is shutting down', 'overloaded_error');
      release = slots.take();
      if (!release) throw Slots.overloaded(opts.maxConcurrent);
      metrics.activeStreams.set(slots.active);
      inflight.add(ac);
      await runExchange(ctx, api, body, req, res, reqId, t0, ac, path);
    } finally {
      budget.give(charged);
      release?.();
      metrics.activeStreams.set(slots.active);
      inflight.delete(ac);
    }
  }

  // The operations listener's client auth: the main port's rule for its own bind address.
  const opsAuth = options.ops
    ? resolveAuth({ host: options.ops.host ?? DEFAULTS.host, ...(options.apiKeys ? { apiKeys: options.apiKeys } : {}), ...(options.noAuth ? { noAuth: true } : {}), flag: '--ops-host', what: 'the operations listener (/health, /readyz, /metrics)' })
    : undefined;

  // Listeners (start/listeners.ts): the main port here, the operations listener once close() exists.
  const { port, url } = await listenMain(server, { port: opts.port ?? 0, host: opts.host, backlog: options.backlog ?? DEFAULT_BACKLOG });
  // Shutdown (start/shutdown.ts): close() at once, drain() gracefully.
  const { close, drain: drainGateway } = shutdownStage({
    server,
    sockets,
    idleSockets,
    inflight,
    drain,
    metrics,
    stopAccepting: () => {
      closing = true;
      budget.stop();
      void ctx.bodyWorker?.close();
    },
    closeUpstream: () => upstream.close(),
    ops: () => opsListener,
    drainTimeoutMs: options.drainTimeoutMs ?? DEFAULT_DRAIN_MS,
  });
  let ops: Gateway['ops'];
  if (options.ops) {
    try {
      const started = await startOps({
        host: options.ops.host ?? DEFAULTS.host,
        port: options.ops.port,
        ...(options.ops.stallMs !== undefined ? { stallMs: options.ops.stallMs } : {}),
        auth: opsAuth,
        limits,
        maxConcurrent: opts.maxConcurrent,
        state: () => ({ active: slots.active, bodyBudgetInUse: budget.inUse, ready: !drain.draining && !closing }),
        metrics: options.metrics !== false ? metrics : undefined,
        logger,
      });
      opsListener = started.listener;
      ops = { url: started.url, port: started.port };
    } catch (err) {
      await close();
      throw new Error(`operations listener: ${(err as Error | undefined)?.message ?? String(err)}`);
    }
  }
  return {
    url,
    port,
    server,
    ...(ops ? { ops } : {}),
    active: () => slots.active,
    openSockets: () => sockets.size,
    close,
    metrics,
    ready: () => !drain.draining && !closing,
    drain: drainGateway,
  };
}

/**
 * The upstream API for a base URL when no format is given: a path ending in `/responses` →
 * openai-responses, in `/messages` → anthropic, containing `/v1beta` or on
 * generativelanguage.googleapis.com → gemini, anything else → openai-chat.
 */
export function inferUpstreamFormat(url: string): UpstreamFormatName {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'openai-chat';
  }
  const p = u.pathname.replace(/\/+$/, '');
  if (/\/responses$/.test(p)) return 'openai-responses';
  if (/\/messages$/.test(p)) return 'anthropic';
  if (/\/v1beta(\/|$)/.test(p) || u.hostname === 'generativelanguage.googleapis.com') return 'gemini';
  return 'openai-chat';
}
