/**
 * The seam between one gateway request and whatever watches it (traces, metrics, logs for the
 * rollout report). The exchange calls these hooks at its stage boundaries; `NOOP_OBSERVER` is the
 * default, so a gateway without telemetry pays one empty call per stage, never per chunk.
 *
 * Implementations: src/telemetry/gateway.ts (OpenTelemetry spans and metrics). Hooks must not
 * throw and must not block; they never see argument contents or results (ids, names, sizes only).
 */
import type * as http from 'node:http';
import type { TurnController } from '../engine/controller';

export interface RequestInfo {
  reqId: string;
  /** The inbound API's name (`messages`, `responses`, `chat`). */
  api: string;
  path: string;
  stream: boolean;
  model: string;
  upstreamModel: string;
  /** The backend's API (`openai-chat`, `openai-responses`, `anthropic`, `gemini`). */
  upstreamFormat: string;
  /** The reader's wire format (may be `dynamo` or `text:<family>` over a chat backend). */
  wire: string;
  /** The client's request headers (for `traceparent` / `tracestate`). */
  headers: http.IncomingHttpHeaders;
  /** `performance.now()` when the request arrived (before its body was read). */
  arrivedAt: number;
}

export interface RequestEnd {
  /** HTTP status the client got (200 once the response was committed). */
  status: number;
  /** `ok`, `stream_error`, `client_disconnect`, `shutdown`, `upstream_error`, … */
  outcome: string;
  errorType?: string;
  stopReason?: string;
  inputTokens?: number;
  outputTokens?: number;
  toolUses: number;
  malformedCalls: number;
}

export interface RequestObservation {
  /** Extra headers for the backend request (W3C `traceparent` / `tracestate`). */
  upstreamHeaders(): Record<string, string> | undefined;
  /** The backend answered with this status (headers in). */
  upstreamResponse(status: number): void;
  /** The backend request failed before it answered (refused, timeout, …). */
  upstreamFailed(errorType: string): void;
  /** The first byte of the backend's body arrived. */
  firstByte(): void;
  /** The first byte went to the client. */
  firstClientByte(): void;
  /** The request's turn controller, once made: subscribe to its events (call.released, warning, …). */
  controller(ctrl: TurnController): void;
  /** Exactly once, when the request is over (any outcome). */
  end(result: RequestEnd): void;
}

export interface ExchangeObserver {
  /** Called once per request that reaches an inbound route. */
  start(info: RequestInfo): RequestObservation;
}

const NOOP_OBSERVATION: RequestObservation = {
  upstreamHeaders: () => undefined,
  upstreamResponse: () => undefined,
  upstreamFailed: () => undefined,
  firstByte: () => undefined,
  firstClientByte: () => undefined,
  controller: () => undefined,
  end: () => undefined,
};

export const NOOP_OBSERVER: ExchangeObserver = { start: () => NOOP_OBSERVATION };
