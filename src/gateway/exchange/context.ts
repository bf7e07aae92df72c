/**
 * What every stage of an exchange shares: the gateway-wide `ExchangeContext` (built once in
 * startGateway) and one request's `Exchange` (built by the parse stage, handed from stage to stage).
 */
import type * as http from 'node:http';
import type { InspectionEvent } from 'xstate';
import type { IdGenerator } from '../../encode/anthropicSse';
import type { CompletionMode } from '../../engine/controller';
import type { WireFormat } from '../../wire/events';
import type { StreamReader } from '../../wire/index';
import type { CanonicalRequest, ModelMapping, ToolParam } from '../canonical';
import type { MemoryBudget } from '../body';
import type { BodyWorkerPool } from '../worker/pool';
import type { RequestHead } from '../worker/translate';
import type { InboundApi } from '../inbound/types';
import type { ClientToolLookup } from '../inbound/responsesTools';
import type { Logger } from '../log';
import type { GatewayMetrics } from '../metrics';
import type { ExchangeObserver, RequestEnd, RequestInfo, RequestObservation } from '../observer';
import type { SessionLinks } from '../sessionLink';
import type { Drain } from '../shutdown';
import type { UpstreamClient } from '../upstream';
import type { UpstreamBodyOptions, UpstreamFormat } from '../upstream/types';

/** The exchange pipeline's stages (exchange.ts), as the log and the metric name them. */
export type PipelineStage = 'parse' | 'open' | 'decode' | 'control' | 'encode' | 'finish';

/** What a malformed call becomes: passed to the client with a marker input, or dropped with a text marker. */
export type MalformedCallMode = 'pass' | 'drop';

/** Everything an exchange needs from the gateway (built once in startGateway). */
export interface ExchangeContext {
  upstream: UpstreamClient;
  upstreamFormat: UpstreamFormat;
  upstreamBase: string;
  /** The reader's format (the upstream module's, or dynamo / text:<family> over chat). */
  wire: WireFormat;
  newReader(tools: ToolParam[]): StreamReader;
  models: ModelMapping;
  bodyOptions: Omit<UpstreamBodyOptions, 'model'>;
  logger: Logger;
  completion?: CompletionMode;
  inspect?: (event: InspectionEvent) => void;
  toolUseOnStop: boolean;
  malformedCalls: MalformedCallMode;
  maxBodyBytes: number;
  /**
   * The gateway's memory budget (body.ts): a backend's whole JSON answer (one that ignored
   * `stream: true`) is charged to it while it is read, like a request body; absent: not counted.
   */
  budget?: MemoryBudget;
  idleTimeoutMs: number;
  pingIntervalMs: number;
  idGenerator?: IdGenerator;
  /** True once the gateway is closing (for the log's outcome). */
  closing(): boolean;
  /** Operations (metrics.ts, shutdown.ts, hygiene.ts); each optional for embedders of runExchange. */
  metrics?: GatewayMetrics;
  drain?: Drain;
  /** One request from start to its last byte; then it ends with timeout_error. */
  requestDeadlineMs?: number;
  /** False when gateway auth consumed the client's key: it must not reach the backend. Default true. */
  forwardClientKey?: boolean;
  /** Per-request stage hooks (telemetry); default NOOP_OBSERVER. */
  observer?: ExchangeObserver;
  /** Checks every route's canonical request (gateway/validate.ts); throws GatewayError(400). */
  validate?: (creq: CanonicalRequest) => void;
  /** Large bodies are translated here, off the event loop (worker/pool.ts); absent: always inline. */
  bodyWorker?: BodyWorkerPool;
  /** Share of requests (0–1) whose calls are all held to the end of the stream (`--release-holdout`; holdout.ts). */
  releaseHoldout?: number;
  /** Draws each request's arm (default Math.random). */
  random?: () => number;
  /** Which earlier response a request continues (sessionLink.ts); absent: no links recorded. */
  links?: SessionLinks;
}

/** What the request log line and the observer's end report (counted as events go to the client). */
export interface ExchangeStats {
  toolUses: number;
  malformed: number;
  stopReason?: string;
  outputTokens?: number;
  promptTokens?: number;
  firstByteMs?: number;
  errorType?: string;
  /** How the backend's stream ended (SPEC §12), set when the turn's terminal output goes out. */
  backendEnd?: BackendEnd;
  warnings: number;
}

/**
 * How a backend stream ended, as the `turn` log record's `backendEnd` says it: `finished` (its
 * terminal signal arrived), `truncated` (it ended without one: `stream_truncated`), `bad_stream`
 * (no event stream of its format at all), `error` (an error event, a reset, a timeout, …).
 */
export type BackendEnd = 'finished' | 'truncated' | 'bad_stream' | 'error';

/** The `backendEnd` of a turn that ended with an error event of this (engine) type. */
export function backendEndOf(errorType: string): BackendEnd {
  return errorType === 'stream_truncated' ? 'truncated' : errorType === 'bad_stream' ? 'bad_stream' : 'error';
}

/** One request in flight: the parse stage builds it, every later stage reads and updates it. */
export interface Exchange {
  readonly ctx: ExchangeContext;
  readonly api: InboundApi;
  readonly req: http.IncomingMessage;
  readonly res: http.ServerResponse;
  readonly reqId: string;
  /** performance.now() when the request arrived. */
  readonly t0: number;
  /** Aborted when the client goes away or the gateway drains before the commit point. */
  readonly ac: AbortController;
  /** The canonical request without its conversation (worker/translate.ts): plain data. */
  readonly creq: RequestHead;
  /** Responses: how backend tool names map back to the client's (`clientToolLookup` of `creq.clientTools`). */
  readonly clientTool?: ClientToolLookup;
  /** The backend body (JSON), from the parse stage until `upstreamRequest` hands it over. */
  upstreamBody?: string | Uint8Array;
  readonly upstreamModel: string;
  /** Input-token estimate until the backend reports usage. */
  readonly estimate: number;
  readonly obs: RequestObservation;
  /** The fields every `request` log line of this exchange starts with. */
  readonly logBase: Record<string, unknown>;
  readonly stats: ExchangeStats;
  /** The client closed its connection before the response finished. */
  clientGone: boolean;
  /** The gateway's drain deadline ended this request. */
  shutdownEnded: boolean;
  /** After the commit point: how a drain deadline ends the stream (set by the decode stage). */
  endForShutdown?: (message: string) => void;
  /** Set when an exception inside this request ended it (fault.ts): the stage it came from. */
  fault?: PipelineStage;
  /** What the observers were told at the start (arm, continuation, session, span). */
  readonly info: RequestInfo;
  /** The tool-call ids the client got in this response (the encoders mint them; sessionLink.ts). */
  readonly callIds: string[];
}

/** The key the client presented (one reading for auth and pass-through: auth.ts `presentedKey`). */
export { presentedKey as clientKey } from '../auth';

export function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

export function ms(x: number): number {
  return Math.round(x * 100) / 100;
}

/** The observer's end record from the exchange's stats. */
export function endOf(status: number, outcome: string, s: ExchangeStats): RequestEnd {
  const e: RequestEnd = { status, outcome, toolUses: s.toolUses, malformedCalls: s.malformed };
  if (s.errorType !== undefined) e.errorType = s.errorType;
  if (s.backendEnd !== undefined) e.backendEnd = s.backendEnd;
  if (s.stopReason !== undefined) e.stopReason = s.stopReason;
  if (s.promptTokens !== undefined) e.inputTokens = s.promptTokens;
  if (s.outputTokens !== undefined) e.outputTokens = s.outputTokens;
  return e;
}

/** The stats fields of the `request` log line (unset and zero counts left out). */
export function statFields(s: ExchangeStats): Record<string, unknown> {
  const f: Record<string, unknown> = { toolUses: s.toolUses };
  if (s.malformed > 0) f.malformedCalls = s.malformed;
  if (s.stopReason !== undefined) f.stopReason = s.stopReason;
  if (s.errorType !== undefined) f.errorType = s.errorType;
  if (s.outputTokens !== undefined) f.outputTokens = s.outputTokens;
  if (s.promptTokens !== undefined) f.promptTokens = s.promptTokens;
  if (s.firstByteMs !== undefined) f.firstByteMs = s.firstByteMs;
  if (s.warnings > 0) f.warnings = s.warnings;
  return f;
}
