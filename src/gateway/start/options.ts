/**
 * startGateway's first stage (server.ts): the options. `GatewayOptions` is what an embedder passes;
 * `startOptions` gives each its default and checks them together. A configuration that cannot work
 * (a holdout out of range, a text format without its parser, a body budget smaller than one
 * maximum body, a non-loopback bind — main port or operations listener — without client keys or
 * `noAuth`) throws here, before anything is started: no socket, no thread, no timer.
 */
import type { AnthropicEncodeOptions } from '../../encode/anthropicSse';
import type { CompletionMode } from '../../engine/controller';
import type { Adapter, WireFormat } from '../../wire/events';
import { createStreamReader, type StreamReader } from '../../wire/index';
import type { InspectionEvent } from 'xstate';
import { resolveAuth } from '../auth';
import { BODY_MEMORY_FACTOR, DEFAULT_BODY_BUDGET_BYTES, DEFAULT_DRAIN_LIMITS, type DrainLimits } from '../body';
import type { ModelMapping, ToolParam } from '../canonical';
import type { MalformedCallMode } from '../exchange';
import { HYGIENE_DEFAULTS, type HygieneLimits } from '../hygiene';
import { Logger } from '../log';
import type { ExchangeObserver } from '../observer';
import type { SessionLinkOptions } from '../sessionLink';
import { REQUEST_LIMIT_DEFAULTS } from '../validate';
import { upstreamFormatFor } from '../upstream/index';
import type { UpstreamFormatName } from '../upstream/types';
import type { BodyWorkerOptions } from '../worker/pool';

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
 * Default listen backlog. Node's own default is 511: at 2,000 streams plus reconnecting idle
 * sockets the queue overflowed (bench/soak.ts: 993 fresh client connections reset, /health SYNs
 * dropped); 4096 is what `net.core.somaxconn` allows by default on Linux ≥ 5.4 (docs/gateway.md).
 */
export const DEFAULT_BACKLOG = 4096;

/** Default largest request body: 32 MiB (the Anthropic API's own request size limit). */
export const DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024;

/** Defaults of the options the gateway reads as `opts` (startOptions). */
export const DEFAULTS = {
  host: '127.0.0.1',
  maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
  maxConcurrent: 256,
  connectTimeoutMs: 10_000,
  idleTimeoutMs: 300_000,
  pingIntervalMs: 10_000,
};

/**
 * startGateway's first stage: the options with their defaults, checked. A configuration that
 * cannot work throws here, before anything is started (no socket, no thread, no timer).
 */
export function startOptions(options: GatewayOptions) {
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
  // The operations listener's client auth: the main port's rule for its own bind address.
  const opsAuth = options.ops
    ? resolveAuth({ host: options.ops.host ?? DEFAULTS.host, ...(options.apiKeys ? { apiKeys: options.apiKeys } : {}), ...(options.noAuth ? { noAuth: true } : {}), flag: '--ops-host', what: 'the operations listener (/health, /readyz, /metrics)' })
    : undefined;
  return { opts, holdout, logger, upstreamFormat, format, limits, requestLimits, auth, opsAuth, drainLimits, bodyBudgetBytes, newReader };
}

/** What startOptions returns: the options every later stage reads. */
export type StartOptions = ReturnType<typeof startOptions>;

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
