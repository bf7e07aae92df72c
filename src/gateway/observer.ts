/**
 * The seam between one gateway request and whatever watches it (traces, metrics, logs for the
 * rollout report). The exchange calls these hooks at its stage boundaries; `NOOP_OBSERVER` is the
 * default, so a gateway without telemetry pays one empty call per stage, never per chunk.
 *
 * Implementations: src/telemetry/gateway.ts (OpenTelemetry spans and metrics, loaded by otel.ts
 * only when `OTEL_*` asks for it) and log.ts `turnLogObserver` (the per-turn JSON log record the
 * rollout report reads); `composeObservers` runs several. Hooks must not
 * throw and must not block; they never see argument contents or results (ids, names, sizes only).
 */
import type * as http from 'node:http';
import { performance } from 'node:perf_hooks';
import type { CallTiming, TurnController } from '../engine/controller';
import { checkTrace } from '../history/check';
import type { ReleaseArm } from './holdout';
import type { Continuation, TraceRef } from './sessionLink';

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
  /** Its release arm (`--release-holdout`, holdout.ts); absent means `early`. */
  arm?: ReleaseArm;
  /** The earlier response whose tool calls it answers (sessionLink.ts). */
  continues?: Continuation;
  /** The client's session id (Claude Code's `x-claude-code-session-id`, Codex's `session_id`, …). */
  sessionId?: string;
  /** Set by the telemetry observer at `start`: the request's SERVER span, for a later request's span link. */
  trace?: TraceRef;
}

export interface RequestEnd {
  /** HTTP status the client got (200 once the response was committed). */
  status: number;
  /** `ok`, `stream_error`, `client_disconnect`, `shutdown`, `upstream_error`, … */
  outcome: string;
  errorType?: string;
  /** How the backend's stream ended (`finished`, `truncated`, `bad_stream`, `error`; SPEC §12). */
  backendEnd?: 'finished' | 'truncated' | 'bad_stream' | 'error';
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

/** Several observers as one (undefined entries skipped; none → NOOP_OBSERVER, one → itself). */
export function composeObservers(...list: (ExchangeObserver | undefined)[]): ExchangeObserver {
  const obs = list.filter((o): o is ExchangeObserver => o !== undefined);
  if (obs.length === 0) return NOOP_OBSERVER;
  if (obs.length === 1) return obs[0]!;
  return {
    start(info) {
      const all = obs.map((o) => o.start(info));
      return {
        upstreamHeaders() {
          let h: Record<string, string> | undefined;
          for (const o of all) {
            const x = o.upstreamHeaders();
            if (x) h = { ...h, ...x };
          }
          return h;
        },
        upstreamResponse: (status) => all.forEach((o) => o.upstreamResponse(status)),
        upstreamFailed: (t) => all.forEach((o) => o.upstreamFailed(t)),
        firstByte: () => all.forEach((o) => o.firstByte()),
        firstClientByte: () => all.forEach((o) => o.firstClientByte()),
        controller: (c) => all.forEach((o) => o.controller(c)),
        end: (r) => all.forEach((o) => o.end(r)),
      };
    },
  };
}

/** One released tool call, times in ms since the request arrived (`RequestInfo.arrivedAt`). Never contents. */
export interface CallFact {
  index: number;
  id?: string;
  name?: string;
  /** Its arguments were complete (evidence or inference). */
  completeMs?: number;
  /** It went to the client. */
  releasedMs?: number;
  argsChars: number;
}

/** What a request's turn amounted to, read once at its end (ms since the request arrived). */
export interface TurnFacts {
  attempts: number;
  /** The backend stream ended normally (undefined: it failed, was cut, or never started). */
  streamEndMs?: number;
  /** Released calls of the last attempt, in release order. */
  calls: CallFact[];
  /** Engine warnings by code (invalid_call included). */
  warnings: Record<string, number>;
  /** SPEC §7 I4–I6 violations `checkTrace` finds in the turn's lifecycle trace (must be 0). */
  violations: number;
}

/**
 * Watches one request's controller for `TurnFacts`: one listener per released call and per
 * warning, nothing per chunk; the rest is read from the controller's trace at the end.
 */
export class TurnWatch {
  private ctrl?: TurnController;
  /** performance.now() of the controller's time 0. */
  private origin = 0;
  private readonly released: CallTiming[] = [];
  private readonly warnings: Record<string, number> = {};

  constructor(private readonly arrivedAt: number) {}

  attach(ctrl: TurnController): void {
    this.ctrl = ctrl;
    this.origin = performance.now() - ctrl.clock.now();
    ctrl.events.on('call.released', (t) => this.released.push(t));
    ctrl.events.on('warning', (w) => {
      this.warnings[w.code] = (this.warnings[w.code] ?? 0) + 1;
    });
  }

  /** Controller time → ms since the request arrived. */
  since(t: number): number {
    return Math.round((this.origin + t - this.arrivedAt) * 100) / 100;
  }

  /** Controller time → performance.now() time. */
  perf(t: number): number {
    return this.origin + t;
  }

  facts(): TurnFacts {
    const ctrl = this.ctrl;
    if (!ctrl) return { attempts: 0, calls: [], warnings: this.warnings, violations: 0 };
    const attempt = ctrl.currentAttempt;
    let streamEnd: number | undefined;
    for (const e of ctrl.traceLog) if (e.kind === 'stream.end' && e.attempt === attempt) streamEnd = e.t;
    const calls: CallFact[] = [];
    for (const t of this.released) {
      if (t.attempt !== attempt) continue;
      const c: CallFact = { index: t.index, argsChars: t.argsChars };
      if (t.id !== undefined) c.id = t.id;
      if (t.name !== undefined) c.name = t.name;
      if (t.completeMs !== undefined) c.completeMs = this.since(t.completeMs);
      if (t.releasedMs !== undefined) c.releasedMs = this.since(t.releasedMs);
      calls.push(c);
    }
    const f: TurnFacts = {
      attempts: attempt,
      calls,
      warnings: this.warnings,
      violations: checkTrace(ctrl.traceLog).violations.length,
    };
    if (streamEnd !== undefined) f.streamEndMs = this.since(streamEnd);
    return f;
  }
}
