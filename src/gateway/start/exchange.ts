/**
 * startGateway's exchange stage (server.ts): the parts every request shares — the backend client,
 * the body memory budget, the concurrency slots, the drain state, the abort controllers of the
 * model requests in flight — and the exchange context (exchange.ts) built from them and the
 * options. Nothing here listens or starts a thread.
 */
import { MemoryBudget } from '../body';
import type { ExchangeContext } from '../exchange';
import { Slots } from '../hygiene';
import { SessionLinks } from '../sessionLink';
import { Drain } from '../shutdown';
import { UpstreamClient } from '../upstream';
import { validateCanonical } from '../validate';
import type { GatewayOptions, StartOptions } from './options';
import type { Telemetry } from './telemetry';

export interface GatewayParts {
  upstream: UpstreamClient;
  budget: MemoryBudget;
  slots: Slots;
  drain: Drain;
  /** Abort controllers of the model requests in flight (close() aborts them). */
  inflight: Set<AbortController>;
  /** Set once close() starts: new requests are refused. */
  state: { closing: boolean };
  ctx: ExchangeContext;
}

export function startExchange(options: GatewayOptions, o: StartOptions, telemetry: Telemetry): GatewayParts {
  const { opts, logger, limits, requestLimits, auth } = o;
  const budget = new MemoryBudget(o.bodyBudgetBytes, undefined, options.collectAfterBurst === true);
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
  const state = { closing: false };
  const drain = new Drain();
  const ctx: ExchangeContext = {
    upstream,
    upstreamFormat: o.upstreamFormat,
    upstreamBase: opts.upstream,
    wire: o.format,
    newReader: o.newReader,
    models: options.models ?? { rules: [] },
    bodyOptions: {
      ...(opts.maxTokensField ? { maxTokensField: opts.maxTokensField } : {}),
      ...(opts.systemMessages ? { systemMessages: opts.systemMessages } : {}),
    },
    logger,
    ...(opts.completion ? { completion: opts.completion } : {}),
    ...(opts.inspect ? { inspect: opts.inspect } : {}),
    ...(telemetry.observer ? { observer: telemetry.observer } : {}),
    toolUseOnStop: options.toolUseOnStop ?? true,
    malformedCalls: options.malformedCalls ?? 'pass',
    maxBodyBytes: opts.maxBodyBytes,
    budget,
    idleTimeoutMs: opts.idleTimeoutMs,
    pingIntervalMs: opts.pingIntervalMs,
    ...(opts.idGenerator ? { idGenerator: opts.idGenerator } : {}),
    closing: () => state.closing,
    metrics: telemetry.metrics,
    drain,
    requestDeadlineMs: limits.requestDeadlineMs,
    // With gateway auth the client's key is the gateway's secret: never forward it.
    forwardClientKey: auth === undefined,
    // One validation of the canonical request, whatever the route.
    validate: (creq) => validateCanonical(creq, requestLimits),
    releaseHoldout: o.holdout,
    ...(options.random ? { random: options.random } : {}),
    ...(options.sessionLinks !== false ? { links: new SessionLinks(options.sessionLinks ?? {}) } : {}),
  };
  return { upstream, budget, slots: new Slots(opts.maxConcurrent), drain, inflight: new Set(), state, ctx };
}
