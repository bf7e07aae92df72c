/**
 * OpenTelemetry for the gateway: an `ExchangeObserver` (src/gateway/observer.ts) that makes, per
 * request, a SERVER span (continuing the client's W3C `traceparent` / `tracestate`), a CLIENT span
 * for the backend call (its context goes to the backend as `traceparent`), one span event per
 * released tool call (name, id, completion and release time — never arguments), the request
 * metrics, and under the SERVER span the library's own `sluice.turn` span (src/telemetry/turn.ts). Loaded only by src/gateway/otel.ts, i.e. only when `OTEL_*` asks for telemetry.
 *
 * Span events and attributes use ms since the request arrived for the rollout report
 * (src/report reads them back from OTLP JSON); every metric label comes from a bounded set
 * (routes, formats, status codes, warning codes, and at most MAX_MODELS model names).
 */
import {
  type Attributes,
  type Context,
  type ContextManager,
  context,
  type Histogram,
  type Counter,
  type Meter,
  type MeterProvider,
  metrics,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  type TextMapPropagator,
  trace,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import * as otelApi from '@opentelemetry/api';
import type * as http from 'node:http';
import { performance } from 'node:perf_hooks';
import type { TurnController } from '../engine/controller';
import { checkTrace } from '../history/check';
import type { WireFormat } from '../wire/events';
import { startTurnTelemetry, useTelemetryApi } from './turn';
import {
  type ExchangeObserver,
  type RequestEnd,
  type RequestInfo,
  type RequestObservation,
  TurnWatch,
} from '../gateway/observer';
import {
  ATTR_CALL_ARGS_CHARS,
  ATTR_CALL_COMPLETE_MS,
  ATTR_CALL_INDEX,
  ATTR_CALL_RELEASED_MS,
  ATTR_CONTINUES_ARM,
  ATTR_CONTINUES_CALLS,
  ATTR_CONTINUES_GAP_MS,
  ATTR_CONTINUES_REQUEST_ID,
  ATTR_CONTINUES_TURN_MS,
  ATTR_ERROR_TYPE,
  ATTR_FORMAT,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_TOKEN_TYPE,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_LINK_KIND,
  ATTR_RELEASE_ARM,
  ATTR_SESSION_ID,
  ATTR_TURN_ATTEMPTS,
  ATTR_TURN_CALLS,
  ATTR_TURN_INVARIANT_VIOLATIONS,
  ATTR_TURN_OUTCOME,
  ATTR_TURN_STREAM_END_MS,
  ATTR_WARNING_CODE,
  EVENT_CALL_RELEASED,
  EVENT_STREAM_END,
  LABEL_OTHER,
  PACKAGE_VERSION,
} from './names';

// The gateway's telemetry holds the API already: the library's turn telemetry uses the same module.
useTelemetryApi(otelApi);

/**
 * Gateway-only attribute names; everything the library also writes (per-call events and
 * attributes, turn attributes, GenAI names) comes from names.ts, so `sluice report` reads a
 * gateway request span and a library turn span the same way. On the gateway's SERVER span the
 * `sluice.turn.*_ms` / `sluice.call.*_ms` times count from the request's arrival.
 */
export const GATEWAY_ATTR = {
  inboundApi: 'sluice.inbound_api',
  upstreamFormat: 'sluice.upstream.format',
  requestId: 'sluice.request_id',
  /** The backend model (after --model / --model-map); the report groups by it. */
  upstreamModel: 'sluice.upstream.model',
  malformedCalls: 'sluice.malformed_calls',
  firstByteMs: 'sluice.first_byte_ms',
  stream: 'sluice.stream',
} as const;

export const GATEWAY_METRIC = {
  requestDuration: 'http.server.request.duration',
  timeToFirstByte: 'sluice.gateway.time_to_first_byte',
  upstreamLatency: 'sluice.gateway.upstream.latency',
  operationDuration: 'gen_ai.client.operation.duration',
  tokenUsage: 'gen_ai.client.token.usage',
  toolCalls: 'sluice.gateway.tool_calls',
  headStart: 'sluice.gateway.tool_call.head_start',
  malformedCalls: 'sluice.gateway.malformed_calls',
  warnings: 'sluice.gateway.engine_warnings',
  violations: 'sluice.gateway.invariant_violations',
} as const;

/** Distinct model names used as metric labels; later ones are `other` (clients choose model names). */
export const MAX_MODELS = 32;

const SCOPE = 'sluice-gateway';
const HEAD_START_BOUNDARIES = [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120];
const LATENCY_BOUNDARIES = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const TOKEN_BOUNDARIES = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304];

export interface GlobalTelemetry {
  contextManager: ContextManager;
  propagator: TextMapPropagator;
  tracerProvider?: TracerProvider;
  meterProvider?: MeterProvider;
}

/** Register SDK providers as the process's globals (what the library's spans use). Returns the undo. */
export function registerGlobalTelemetry(g: GlobalTelemetry): () => void {
  context.setGlobalContextManager(g.contextManager);
  propagation.setGlobalPropagator(g.propagator);
  if (g.tracerProvider) trace.setGlobalTracerProvider(g.tracerProvider);
  if (g.meterProvider) metrics.setGlobalMeterProvider(g.meterProvider);
  return () => {
    trace.disable();
    metrics.disable();
    propagation.disable();
    context.disable();
  };
}

const headerGetter: TextMapGetter<http.IncomingHttpHeaders> = {
  keys: (c) => Object.keys(c),
  get: (c, k) => c[k],
};

/** `gen_ai.provider.name` for an upstream API (OpenTelemetry GenAI well-known values). */
function providerName(upstreamFormat: string): string {
  if (upstreamFormat === 'anthropic') return 'anthropic';
  if (upstreamFormat === 'gemini') return 'gcp.gemini';
  return 'openai';
}

interface Instruments {
  requestDuration: Histogram;
  timeToFirstByte: Histogram;
  upstreamLatency: Histogram;
  operationDuration: Histogram;
  tokenUsage: Histogram;
  toolCalls: Counter;
  headStart: Histogram;
  malformedCalls: Counter;
  warnings: Counter;
  violations: Counter;
  model(name: string): string;
}

function instruments(meter: Meter): Instruments {
  const seen = new Set<string>();
  const s = { unit: 's' };
  return {
    requestDuration: meter.createHistogram(GATEWAY_METRIC.requestDuration, {
      ...s,
      description: 'Model requests from arrival to the last byte.',
      advice: { explicitBucketBoundaries: LATENCY_BOUNDARIES },
    }),
    timeToFirstByte: meter.createHistogram(GATEWAY_METRIC.timeToFirstByte, {
      ...s,
      description: 'From the request’s arrival to the first byte sent to the client.',
      advice: { explicitBucketBoundaries: LATENCY_BOUNDARIES },
    }),
    upstreamLatency: meter.createHistogram(GATEWAY_METRIC.upstreamLatency, {
      ...s,
      description: 'Backend latency: from opening the backend request to its response headers.',
      advice: { explicitBucketBoundaries: LATENCY_BOUNDARIES },
    }),
    operationDuration: meter.createHistogram(GATEWAY_METRIC.operationDuration, {
      ...s,
      description: 'The backend call, from opening it to the end of its stream.',
      advice: { explicitBucketBoundaries: LATENCY_BOUNDARIES },
    }),
    tokenUsage: meter.createHistogram(GATEWAY_METRIC.tokenUsage, {
      unit: '{token}',
      description: 'Input and output tokens per request (as the backend reported them).',
      advice: { explicitBucketBoundaries: TOKEN_BOUNDARIES },
    }),
    toolCalls: meter.createCounter(GATEWAY_METRIC.toolCalls, { unit: '{call}', description: 'Tool calls released to clients.' }),
    headStart: meter.createHistogram(GATEWAY_METRIC.headStart, {
      ...s,
      description: 'Per released tool call: how long before the end of the backend stream the client had it.',
      advice: { explicitBucketBoundaries: HEAD_START_BOUNDARIES },
    }),
    malformedCalls: meter.createCounter(GATEWAY_METRIC.malformedCalls, {
      unit: '{call}',
      description: 'Calls whose arguments were not a complete JSON object (passed with a marker or dropped).',
    }),
    warnings: meter.createCounter(GATEWAY_METRIC.warnings, { unit: '{warning}', description: 'Engine warnings by code.' }),
    violations: meter.createCounter(GATEWAY_METRIC.violations, {
      unit: '{violation}',
      description: 'SPEC §7 invariant violations found in request lifecycles (must stay 0).',
    }),
    model(name) {
      if (seen.has(name)) return name;
      if (seen.size >= MAX_MODELS) return LABEL_OTHER;
      seen.add(name);
      return name;
    },
  };
}

/** The gateway's observer over the global tracer and meter providers (or the ones given, for tests). */
export function createGatewayObserver(opts: { tracer?: Tracer; meter?: Meter } = {}): ExchangeObserver {
  const tracer = opts.tracer ?? trace.getTracer(SCOPE, PACKAGE_VERSION);
  const inst = instruments(opts.meter ?? metrics.getMeter(SCOPE, PACKAGE_VERSION));
  return { start: (info) => new OtelObservation(tracer, inst, info) };
}

const epoch = (perfMs: number): number => performance.timeOrigin + perfMs;

/** The SERVER span's arm, session and continuation attributes (ids and times only). */
function continuationAttributes(info: RequestInfo): Attributes {
  const a: Attributes = { [ATTR_RELEASE_ARM]: info.arm ?? 'early' };
  if (info.sessionId !== undefined) a[ATTR_SESSION_ID] = a[ATTR_GEN_AI_CONVERSATION_ID] = info.sessionId;
  const c = info.continues;
  if (c !== undefined) {
    a[ATTR_CONTINUES_REQUEST_ID] = c.requestId;
    a[ATTR_CONTINUES_ARM] = c.arm;
    a[ATTR_CONTINUES_TURN_MS] = c.turnMs;
    a[ATTR_CONTINUES_GAP_MS] = c.gapMs;
    a[ATTR_CONTINUES_CALLS] = c.calls;
  }
  return a;
}

class OtelObservation implements RequestObservation {
  private readonly parent: Context;
  private readonly server: Span;
  private client?: Span;
  private upstreamAt?: number;
  private firstByteAt?: number;
  private readonly watch: TurnWatch;
  private readonly model: string;
  private readonly route: string;

  constructor(
    private readonly tracer: Tracer,
    private readonly inst: Instruments,
    private readonly info: RequestInfo,
  ) {
    this.watch = new TurnWatch(info.arrivedAt);
    this.model = inst.model(info.upstreamModel);
    this.route = info.path;
    const incoming = propagation.extract(ROOT_CONTEXT, info.headers, headerGetter);
    const c = info.continues;
    this.server = tracer.startSpan(
      `POST ${info.path}`,
      {
        kind: SpanKind.SERVER,
        startTime: epoch(info.arrivedAt),
        // A session's requests are separate traces (clients send no traceparent): the request
        // whose tool results this one carries is linked, so a trace viewer can walk the session.
        ...(c?.trace !== undefined
          ? { links: [{ context: { traceId: c.trace.traceId, spanId: c.trace.spanId, traceFlags: 1 }, attributes: { [ATTR_LINK_KIND]: 'continues' } }] }
          : {}),
        attributes: {
          ...continuationAttributes(info),
          'http.request.method': 'POST',
          'http.route': info.path,
          'url.path': info.path,
          [ATTR_GEN_AI_OPERATION_NAME]: 'chat',
          [ATTR_GEN_AI_REQUEST_MODEL]: info.model,
          [GATEWAY_ATTR.upstreamModel]: info.upstreamModel,
          [GATEWAY_ATTR.requestId]: info.reqId,
          [GATEWAY_ATTR.inboundApi]: info.api,
          [GATEWAY_ATTR.upstreamFormat]: info.upstreamFormat,
          [ATTR_FORMAT]: info.wire,
          [GATEWAY_ATTR.stream]: info.stream,
        },
      },
      incoming,
    );
    this.parent = trace.setSpan(incoming, this.server);
    const sc = this.server.spanContext();
    if (otelApi.isSpanContextValid(sc)) info.trace = { traceId: sc.traceId, spanId: sc.spanId };
  }

  upstreamHeaders(): Record<string, string> | undefined {
    this.upstreamAt = performance.now();
    this.client = this.tracer.startSpan(
      `chat ${this.info.upstreamModel}`,
      {
        kind: SpanKind.CLIENT,
        startTime: epoch(this.upstreamAt),
        attributes: {
          [ATTR_GEN_AI_OPERATION_NAME]: 'chat',
          [ATTR_GEN_AI_PROVIDER_NAME]: providerName(this.info.upstreamFormat),
          [ATTR_GEN_AI_REQUEST_MODEL]: this.info.upstreamModel,
          [GATEWAY_ATTR.upstreamFormat]: this.info.upstreamFormat,
          [ATTR_FORMAT]: this.info.wire,
        },
      },
      this.parent,
    );
    const carrier: Record<string, string> = {};
    propagation.inject(trace.setSpan(this.parent, this.client), carrier);
    return carrier;
  }

  upstreamResponse(status: number): void {
    this.client?.setAttribute('http.response.status_code', status);
    if (this.upstreamAt !== undefined)
      this.inst.upstreamLatency.record((performance.now() - this.upstreamAt) / 1000, {
        [GATEWAY_ATTR.upstreamFormat]: this.info.upstreamFormat,
        'http.response.status_code': status,
      });
    if (status >= 400) this.client?.setStatus({ code: SpanStatusCode.ERROR });
  }

  upstreamFailed(errorType: string): void {
    if (!this.client) return;
    this.client.setAttribute(ATTR_ERROR_TYPE, errorType);
    this.client.setStatus({ code: SpanStatusCode.ERROR });
    if (this.upstreamAt !== undefined)
      this.inst.upstreamLatency.record((performance.now() - this.upstreamAt) / 1000, {
        [GATEWAY_ATTR.upstreamFormat]: this.info.upstreamFormat,
        [ATTR_ERROR_TYPE]: errorType,
      });
  }

  firstByte(): void {
    this.firstByteAt ??= performance.now();
  }

  firstClientByte(): void {
    this.inst.timeToFirstByte.record((performance.now() - this.info.arrivedAt) / 1000, { 'http.route': this.route });
  }

  controller(ctrl: TurnController): void {
    this.watch.attach(ctrl);
    // The library's own turn telemetry (src/telemetry/turn.ts) under the SERVER span: a
    // `sluice.turn` span with the call lifecycle events and the library's turn metrics, labelled
    // `sluice.early_start = gateway` (the gateway releases calls; its client runs them).
    const tel = context.with(this.parent, () =>
      startTurnTelemetry({ format: this.info.wire as WireFormat, earlyStart: 'gateway', options: { model: this.info.upstreamModel }, knownTool: () => false }),
    );
    if (tel) {
      tel.attach(ctrl);
      void ctrl.done.then((summary) => tel.end({ summary, violations: checkTrace(summary.trace).violations }));
    }
  }

  end(r: RequestEnd): void {
    const now = performance.now();
    const { info, inst, server, client } = this;
    const facts = this.watch.facts();
    const at = (ms: number): number => epoch(info.arrivedAt + ms);
    const labels: Attributes = { [ATTR_FORMAT]: info.wire, [ATTR_GEN_AI_REQUEST_MODEL]: this.model };

    for (const c of facts.calls) {
      const attrs: Attributes = { [ATTR_GEN_AI_TOOL_NAME]: c.name ?? '', [ATTR_GEN_AI_TOOL_CALL_ID]: c.id ?? '', [ATTR_CALL_INDEX]: c.index };
      if (c.completeMs !== undefined) attrs[ATTR_CALL_COMPLETE_MS] = c.completeMs;
      if (c.releasedMs !== undefined) attrs[ATTR_CALL_RELEASED_MS] = c.releasedMs;
      attrs[ATTR_CALL_ARGS_CHARS] = c.argsChars;
      const when = c.releasedMs !== undefined ? at(c.releasedMs) : epoch(now);
      server.addEvent(EVENT_CALL_RELEASED, attrs, when);
      client?.addEvent(EVENT_CALL_RELEASED, attrs, when);
      inst.toolCalls.add(1, labels);
      if (facts.streamEndMs !== undefined && c.releasedMs !== undefined)
        inst.headStart.record(Math.max(0, facts.streamEndMs - c.releasedMs) / 1000, labels);
    }
    if (facts.streamEndMs !== undefined) {
      server.addEvent(EVENT_STREAM_END, { [ATTR_TURN_STREAM_END_MS]: facts.streamEndMs }, at(facts.streamEndMs));
      server.setAttribute(ATTR_TURN_STREAM_END_MS, facts.streamEndMs);
    }
    for (const [code, n] of Object.entries(facts.warnings)) inst.warnings.add(n, { [ATTR_WARNING_CODE]: code, [ATTR_FORMAT]: info.wire });
    if (r.malformedCalls > 0) inst.malformedCalls.add(r.malformedCalls, labels);
    if (facts.violations > 0) inst.violations.add(facts.violations, labels);

    const attrs: Attributes = {
      'http.response.status_code': r.status,
      [ATTR_TURN_OUTCOME]: r.outcome,
      [ATTR_TURN_ATTEMPTS]: facts.attempts,
      [ATTR_TURN_CALLS]: r.toolUses,
      [GATEWAY_ATTR.malformedCalls]: r.malformedCalls,
      [ATTR_TURN_INVARIANT_VIOLATIONS]: facts.violations,
    };
    if (this.firstByteAt !== undefined) attrs[GATEWAY_ATTR.firstByteMs] = Math.round((this.firstByteAt - info.arrivedAt) * 100) / 100;
    if (r.stopReason !== undefined) attrs[ATTR_GEN_AI_RESPONSE_FINISH_REASONS] = [r.stopReason];
    if (r.inputTokens !== undefined) attrs[ATTR_GEN_AI_USAGE_INPUT_TOKENS] = r.inputTokens;
    if (r.outputTokens !== undefined) attrs[ATTR_GEN_AI_USAGE_OUTPUT_TOKENS] = r.outputTokens;
    if (r.errorType !== undefined) attrs[ATTR_ERROR_TYPE] = r.errorType;
    server.setAttributes(attrs);
    const failed = r.status >= 500 || (r.errorType !== undefined && r.status !== 499);
    if (failed) server.setStatus({ code: SpanStatusCode.ERROR });

    if (client) {
      const clientAttrs: Attributes = {};
      if (r.inputTokens !== undefined) clientAttrs[ATTR_GEN_AI_USAGE_INPUT_TOKENS] = r.inputTokens;
      if (r.outputTokens !== undefined) clientAttrs[ATTR_GEN_AI_USAGE_OUTPUT_TOKENS] = r.outputTokens;
      if (r.stopReason !== undefined) clientAttrs[ATTR_GEN_AI_RESPONSE_FINISH_REASONS] = [r.stopReason];
      if (r.errorType !== undefined && r.outcome !== 'client_disconnect') {
        clientAttrs[ATTR_ERROR_TYPE] = r.errorType;
        client.setStatus({ code: SpanStatusCode.ERROR });
      }
      client.setAttributes(clientAttrs);
      const clientEnd = facts.streamEndMs !== undefined ? info.arrivedAt + facts.streamEndMs : now;
      client.end(epoch(clientEnd));
      if (this.upstreamAt !== undefined) {
        const opLabels: Attributes = {
          [ATTR_GEN_AI_OPERATION_NAME]: 'chat',
          [ATTR_GEN_AI_PROVIDER_NAME]: providerName(info.upstreamFormat),
          [ATTR_GEN_AI_REQUEST_MODEL]: this.model,
        };
        if (r.errorType !== undefined) opLabels[ATTR_ERROR_TYPE] = r.errorType;
        inst.operationDuration.record(Math.max(0, clientEnd - this.upstreamAt) / 1000, opLabels);
      }
    }
    const tokenLabels = (type: string): Attributes => ({
      [ATTR_GEN_AI_OPERATION_NAME]: 'chat',
      [ATTR_GEN_AI_PROVIDER_NAME]: providerName(info.upstreamFormat),
      [ATTR_GEN_AI_REQUEST_MODEL]: this.model,
      [ATTR_GEN_AI_TOKEN_TYPE]: type,
    });
    if (r.inputTokens !== undefined) inst.tokenUsage.record(r.inputTokens, tokenLabels('input'));
    if (r.outputTokens !== undefined) inst.tokenUsage.record(r.outputTokens, tokenLabels('output'));
    inst.requestDuration.record((now - info.arrivedAt) / 1000, {
      'http.request.method': 'POST',
      'http.route': this.route,
      'http.response.status_code': r.status,
      ...(r.errorType !== undefined ? { [ATTR_ERROR_TYPE]: r.errorType } : {}),
    });
    server.end(epoch(now));
  }
}
