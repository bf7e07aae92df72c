/**
 * Library telemetry for `runTurn` (docs/observability.md, SPEC §11): OpenTelemetry spans and
 * metrics through `@opentelemetry/api` only — the global (or given) tracer and meter providers
 * and the active context. When the application registers nothing, `startTurnTelemetry` returns
 * undefined and the turn pays one provider look-up.
 *
 * - Turn span `sluice.turn`, child of the span active when `runTurn` was called; the turn runs
 *   inside its context (the stream factory's own spans nest under it). Attempts, retries,
 *   discards, completions, releases, results, synthetic results, warnings and aborts are events
 *   on it; usage, outcome and shadow figures are attributes set at the end.
 * - One `execute_tool {name}` span per tool run (GenAI conventions), started when the tool is
 *   invoked, active while it runs (the tool's own spans nest under it), ended with its result.
 * - Metrics once per turn from the summary (never per fragment): see src/telemetry/names.ts.
 *
 * Contents (tool arguments, results) only with `recordContents: true`.
 */
import type * as OtelApi from '@opentelemetry/api';
import type { Attributes, Context, Meter, MeterProvider, Span, TracerProvider } from '@opentelemetry/api';
import type { CallResult, RunToolFn } from '../calls';
import type { CallTiming, TurnController, TurnSummary } from '../engine/controller';
import type { TurnTraceEntry } from '../history/trace';
import type { InvariantViolation } from '../history/types';
import type { WireFormat } from '../wire/events';
import * as N from './names';
import { type TurnInstruments, instrumentsFor } from './metrics';

/** `runTurn({ telemetry })` (docs/observability.md). */
export interface TelemetryOptions {
  /** false: no spans and no metrics for this turn, whatever the application registered. */
  enabled?: boolean;
  /**
   * Put tool arguments (`gen_ai.tool.call.arguments`) and results (`gen_ai.tool.call.result`)
   * on the tool spans. Default false: spans carry ids, names, sizes and times only.
   */
  recordContents?: boolean;
  /** The requested model (`gen_ai.request.model`, the metrics' model label). Default: the model the stream names. */
  model?: string;
  /** Use these instead of the global providers. */
  tracerProvider?: TracerProvider;
  meterProvider?: MeterProvider;
}

export interface TurnTelemetryStart {
  format: WireFormat;
  /** The policy as given ('shadow' included). */
  earlyStart: string;
  options?: TelemetryOptions;
  /** Is this a registered tool name? (Tool-name labels stay bounded: others count as `other`.) */
  knownTool: (name: string) => boolean;
  /** A registered tool's description (`gen_ai.tool.description` on its spans). */
  toolDescription?: (name: string) => string | undefined;
}

export interface TurnEnd {
  summary: TurnSummary;
  /** `checkHistory` + `checkTrace` on the turn's own output. */
  violations: readonly InvariantViolation[];
  /** Early start on: turn time saved against post-stream dispatch (src/execute/shadow.ts `postStreamOfTurn`). */
  savedMs?: number;
}

/**
 * The API module, loaded on first need: a program that registers no OpenTelemetry never loads it
 * (~45 modules on `require('sluice')`). The API keeps its globals under this key once anything
 * registers a provider, a propagator or a diag logger.
 */
let otel: typeof OtelApi | undefined;
let noopMeterClass: unknown;
const OTEL_GLOBAL_KEY = Symbol.for('opentelemetry.js.api.1');

/**
 * Load `@opentelemetry/api` when this turn may record: an application registered OpenTelemetry,
 * or the options name providers. False: nothing to record (`startTurnTelemetry` returns undefined).
 */
export async function loadTelemetryApi(options?: TelemetryOptions): Promise<boolean> {
  if (options?.enabled === false) return false;
  if (otel !== undefined) return true;
  const registered = (globalThis as Record<symbol, unknown>)[OTEL_GLOBAL_KEY] !== undefined;
  if (!registered && options?.tracerProvider === undefined && options?.meterProvider === undefined) return false;
  useTelemetryApi(await import('@opentelemetry/api'));
  return true;
}

/** For callers that already hold the API module (the gateway's telemetry imports it eagerly). */
export function useTelemetryApi(api: typeof OtelApi): void {
  if (otel !== undefined) return;
  otel = api;
  noopMeterClass = api.createNoopMeter().constructor;
}

/** The loaded API (only reached once `startTurnTelemetry` found it loaded). */
function api(): typeof OtelApi {
  return otel!;
}

function meterIsNoop(m: Meter): boolean {
  return m.constructor === noopMeterClass;
}

/** GenAI `gen_ai.provider.name` for a wire format, when the format names one provider. */
function providerOf(format: WireFormat): string | undefined {
  if (format === 'anthropic') return 'anthropic';
  if (format === 'openai-chat' || format === 'openai-responses') return 'openai';
  if (format === 'gemini') return 'gcp.gemini';
  return undefined;
}

/** At most this many distinct model labels per process; later ones are `other`. */
const MAX_MODEL_LABELS = 50;
const modelLabels = new Set<string>();
function modelLabel(model: string | undefined): string {
  if (model === undefined || model.length === 0) return N.LABEL_UNKNOWN;
  const m = model.length > 128 ? model.slice(0, 128) : model;
  if (modelLabels.has(m)) return m;
  if (modelLabels.size >= MAX_MODEL_LABELS) return N.LABEL_OTHER;
  modelLabels.add(m);
  return m;
}

/** Warnings recorded as span events per turn (a hostile stream can warn per chunk). */
const MAX_WARNING_EVENTS = 100;

export class TurnTelemetry {
  /** The turn span's context: the turn runs in it. */
  readonly context: Context;
  private readonly span: Span;
  private readonly recording: boolean;
  private readonly instruments?: TurnInstruments;
  private readonly contents: boolean;
  private controller?: TurnController;
  private streamEnded = false;
  private warningEvents = 0;
  private ended = false;

  constructor(
    private readonly start: TurnTelemetryStart,
    span: Span,
    parent: Context,
    instruments: TurnInstruments | undefined,
  ) {
    this.span = span;
    this.recording = span.isRecording();
    this.context = api().trace.setSpan(parent, span);
    this.instruments = instruments;
    this.contents = start.options?.recordContents === true;
  }

  /** Run `fn` with the turn span active. */
  run<T>(fn: () => T): T {
    return api().context.with(this.context, fn);
  }

  /** Listen to the controller's lifecycle events (boundaries only, never fragments). */
  attach(controller: TurnController): void {
    this.controller = controller;
    if (!this.recording) return;
    const span = this.span;
    const ev = controller.events;
    ev.on('attempt.begin', (e) => span.addEvent(N.EVENT_ATTEMPT_BEGIN, { [N.ATTR_ATTEMPT]: e.attempt }));
    ev.on('attempt.retry', (e) => {
      span.addEvent(N.EVENT_ATTEMPT_DISCARDED, { [N.ATTR_ATTEMPT]: e.attempt - 1 });
      span.addEvent(N.EVENT_ATTEMPT_RETRY, {
        [N.ATTR_ATTEMPT]: e.attempt,
        [N.ATTR_RETRY_DELAY_MS]: e.delayMs,
        [N.ATTR_RETRY_REASON]: e.reason,
        ...(e.retryAfterMs !== undefined ? { [N.ATTR_RETRY_AFTER_MS]: e.retryAfterMs } : {}),
        [N.ATTR_ERROR_TYPE]: e.error.type,
      });
    });
    ev.on('call.ready', (t) => span.addEvent(N.EVENT_CALL_COMPLETE, this.callAttrs(t)));
    ev.on('call.released', (t) => span.addEvent(N.EVENT_CALL_RELEASED, this.callAttrs(t)));
    ev.on('call.suppressed', (e) =>
      span.addEvent(N.EVENT_CALL_SUPPRESSED, { [N.ATTR_CALL_INDEX]: e.index, [N.ATTR_CALL_ATTEMPT]: e.attempt, [N.ATTR_SYNTHETIC_REASON]: e.reason }),
    );
    ev.on('tool.result', (t) => {
      const a = this.callAttrs(t);
      a[N.ATTR_CALL_OK] = t.result?.ok ?? false;
      if (t.result?.synthetic) a[N.ATTR_SYNTHETIC_REASON] = t.result.synthetic;
      span.addEvent(N.EVENT_CALL_RESULT, a);
    });
    ev.on('warning', (w) => {
      if (this.warningEvents++ >= MAX_WARNING_EVENTS) return;
      const a: Attributes = { [N.ATTR_WARNING_CODE]: w.code, 'sluice.warning.message': w.message };
      if (w.index !== undefined) a[N.ATTR_CALL_INDEX] = w.index;
      span.addEvent(N.EVENT_WARNING, a);
    });
    ev.on('trace', (e: TurnTraceEntry) => {
      if (e.kind === 'stream.end') {
        this.streamEnded = true;
        span.addEvent(N.EVENT_STREAM_END, { [N.ATTR_ATTEMPT]: e.attempt });
      } else if (e.kind === 'attempt.start') this.streamEnded = false;
    });
  }

  private callAttrs(t: CallTiming): Attributes {
    const a: Attributes = { [N.ATTR_CALL_INDEX]: t.index, [N.ATTR_CALL_ATTEMPT]: t.attempt, [N.ATTR_CALL_ARGS_CHARS]: t.argsChars };
    if (t.id !== undefined) a[N.ATTR_GEN_AI_TOOL_CALL_ID] = t.id;
    if (t.name !== undefined) a[N.ATTR_GEN_AI_TOOL_NAME] = t.name;
    if (t.completeMs !== undefined) a[N.ATTR_CALL_COMPLETE_MS] = t.completeMs;
    if (t.releasedMs !== undefined) a[N.ATTR_CALL_RELEASED_MS] = t.releasedMs;
    if (t.completeMs !== undefined && t.releasedMs !== undefined) a[N.ATTR_CALL_RELEASE_LAG_MS] = t.releasedMs - t.completeMs;
    if (t.startedMs !== undefined) a[N.ATTR_CALL_STARTED_MS] = t.startedMs;
    if (t.resultMs !== undefined) a[N.ATTR_CALL_RESULT_MS] = t.resultMs;
    return a;
  }

  /** A user abort (`signal`), with the turn's abort mode. */
  abort(mode: string): void {
    if (this.recording) this.span.addEvent(N.EVENT_ABORT, { [N.ATTR_ABORT_MODE]: mode });
  }

  /** Wrap the tool runner: one `execute_tool` span per run, active while the tool runs. */
  wrapRun(run: RunToolFn): RunToolFn {
    if (!this.recording) return run;
    const tracer = this.tracerProvider().getTracer(N.INSTRUMENTATION_SCOPE, N.PACKAGE_VERSION);
    return (call, signal) => {
      const now = this.controller?.clock.now();
      const attrs: Attributes = {
        [N.ATTR_GEN_AI_OPERATION_NAME]: N.OPERATION_EXECUTE_TOOL,
        [N.ATTR_GEN_AI_TOOL_NAME]: call.name,
        [N.ATTR_GEN_AI_TOOL_CALL_ID]: call.callId,
        [N.ATTR_GEN_AI_TOOL_TYPE]: 'function',
        [N.ATTR_FORMAT]: this.start.format,
        [N.ATTR_CALL_INDEX]: call.index,
        [N.ATTR_CALL_ATTEMPT]: call.attempt,
        [N.ATTR_CALL_EARLY]: !this.streamEnded,
      };
      if (now !== undefined) attrs[N.ATTR_CALL_STARTED_MS] = now;
      const description = this.start.toolDescription?.(call.name);
      if (description !== undefined && description.length > 0) attrs[N.ATTR_GEN_AI_TOOL_DESCRIPTION] = description;
      if (this.contents) attrs[N.ATTR_GEN_AI_TOOL_CALL_ARGUMENTS] = safeJson(call.input);
      const span = tracer.startSpan(N.executeToolSpanName(call.name), { kind: api().SpanKind.INTERNAL, attributes: attrs }, this.context);
      const onAbort = () => span.addEvent(N.EVENT_TOOL_ABORT);
      signal.addEventListener('abort', onAbort, { once: true });
      const finish = (r: CallResult | undefined, err?: unknown) => {
        signal.removeEventListener('abort', onAbort);
        const end = this.controller?.clock.now();
        if (end !== undefined) span.setAttribute(N.ATTR_CALL_RESULT_MS, end);
        if (r !== undefined) {
          span.setAttribute(N.ATTR_CALL_OK, r.ok);
          if (r.synthetic) span.setAttribute(N.ATTR_SYNTHETIC_REASON, r.synthetic);
          if (this.contents) span.setAttribute(N.ATTR_GEN_AI_TOOL_CALL_RESULT, r.content);
        }
        if (r === undefined || !r.ok) {
          const type = r?.synthetic ?? (err === undefined ? 'tool_error' : errorName(err));
          span.setAttribute(N.ATTR_ERROR_TYPE, type);
          span.setStatus({ code: api().SpanStatusCode.ERROR, message: type });
          // The semconv `exception` event: its type always; its message (the tool's error text,
          // possibly quoting arguments or files) only under recordContents.
          const ex: Attributes = { [N.ATTR_EXCEPTION_TYPE]: type };
          if (this.contents) ex[N.ATTR_EXCEPTION_MESSAGE] = r !== undefined ? r.content : errorMessage(err);
          span.addEvent(N.EVENT_EXCEPTION, ex);
        }
        span.end();
      };
      const p = api().context.with(api().trace.setSpan(this.context, span), () => run(call, signal));
      p.then(
        (r) => finish(r),
        (e: unknown) => finish(undefined, e),
      );
      return p;
    };
  }

  private tracerProvider(): TracerProvider {
    return this.start.options?.tracerProvider ?? api().trace.getTracerProvider();
  }

  /** End the turn: attributes and events on the turn span, then the turn's metrics. Once. */
  end({ summary, violations, savedMs }: TurnEnd): void {
    if (this.ended) return;
    this.ended = true;
    const model = this.start.options?.model ?? summary.model;
    if (this.recording) this.endSpan(summary, violations, model, savedMs);
    if (this.instruments) this.recordMetrics(this.instruments, summary, violations.length, model, savedMs);
  }

  private endSpan(s: TurnSummary, violations: readonly InvariantViolation[], model: string | undefined, savedMs: number | undefined): void {
    const span = this.span;
    for (const r of syntheticResults(s)) {
      span.addEvent(N.EVENT_SYNTHETIC_RESULT, { [N.ATTR_GEN_AI_TOOL_CALL_ID]: r.callId, [N.ATTR_GEN_AI_TOOL_NAME]: r.name, [N.ATTR_SYNTHETIC_REASON]: r.synthetic });
    }
    for (const c of s.calls) {
      if (c.shadowStartMs === undefined) continue;
      const a = this.callAttrs(c);
      a[N.ATTR_CALL_SHADOW_START_MS] = c.shadowStartMs;
      span.addEvent(N.EVENT_CALL_SHADOW, a);
    }
    if (s.outcome === 'failed' || s.outcome === 'dropped') span.addEvent(N.EVENT_ATTEMPT_DISCARDED, { [N.ATTR_ATTEMPT]: s.attempts });
    const a: Attributes = {
      [N.ATTR_TURN_OUTCOME]: s.outcome,
      [N.ATTR_TURN_ATTEMPTS]: s.attempts,
      [N.ATTR_TURN_CALLS]: s.calls.filter((c) => c.attempt === s.attempts).length,
      [N.ATTR_TURN_DONE_MS]: s.turnDoneMs,
      [N.ATTR_TURN_INVARIANT_VIOLATIONS]: violations.length,
    };
    if (s.model !== undefined) a[N.ATTR_GEN_AI_RESPONSE_MODEL] = s.model;
    if (model !== undefined) a[N.ATTR_GEN_AI_REQUEST_MODEL] = model;
    if (s.streamEndMs !== undefined) a[N.ATTR_TURN_STREAM_END_MS] = s.streamEndMs;
    if (s.finish !== undefined) a[N.ATTR_GEN_AI_RESPONSE_FINISH_REASONS] = [s.finish];
    if (s.usage?.inputTokens !== undefined) a[N.ATTR_GEN_AI_USAGE_INPUT_TOKENS] = s.usage.inputTokens;
    if (s.usage?.outputTokens !== undefined) a[N.ATTR_GEN_AI_USAGE_OUTPUT_TOKENS] = s.usage.outputTokens;
    if (s.usage?.cachedInputTokens !== undefined) a[N.ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] = s.usage.cachedInputTokens;
    if (s.shadowSavedMs !== undefined) a[N.ATTR_TURN_SHADOW_SAVED_MS] = s.shadowSavedMs;
    if (savedMs !== undefined) a[N.ATTR_TURN_SAVED_MS] = savedMs;
    if (s.limit !== undefined) a[N.ATTR_LIMIT] = s.limit.limit;
    if (s.outcome === 'failed') {
      const type = s.error?.type ?? 'failed';
      a[N.ATTR_ERROR_TYPE] = type;
      span.setStatus({ code: api().SpanStatusCode.ERROR, message: s.error?.message ?? type });
    }
    span.setAttributes(a);
    span.end();
  }

  private recordMetrics(m: TurnInstruments, s: TurnSummary, violations: number, model: string | undefined, savedMs: number | undefined): void {
    const base: Attributes = { [N.ATTR_FORMAT]: this.start.format, [N.ATTR_MODEL]: modelLabel(model) };
    const early = this.start.earlyStart;
    const policy: Attributes = { ...base, [N.ATTR_EARLY_START]: early };
    m.turns.add(1, { ...policy, [N.ATTR_TURN_OUTCOME]: s.outcome });
    m.turnDuration.record(s.turnDoneMs / 1000, { ...policy, [N.ATTR_TURN_OUTCOME]: s.outcome });
    m.violations.add(violations, policy);
    if (s.usage?.inputTokens !== undefined) m.tokens.add(s.usage.inputTokens, { ...base, [N.ATTR_GEN_AI_TOKEN_TYPE]: 'input' });
    if (s.usage?.outputTokens !== undefined) m.tokens.add(s.usage.outputTokens, { ...base, [N.ATTR_GEN_AI_TOKEN_TYPE]: 'output' });
    if (s.shadowSavedMs !== undefined) m.shadowSaved.record(s.shadowSavedMs / 1000, base);
    if (savedMs !== undefined) m.saved.record(savedMs / 1000, policy);
    const end = s.streamEndMs;
    for (const c of s.calls) {
      if (c.attempt !== s.attempts) continue;
      if (c.completeMs !== undefined && c.releasedMs !== undefined) m.releaseLag.record(Math.max(0, c.releasedMs - c.completeMs) / 1000, base);
      if (c.startedMs === undefined) continue;
      const name = c.name !== undefined && this.start.knownTool(c.name) ? c.name : N.LABEL_OTHER;
      const started = end === undefined || c.startedMs < end ? N.START_EARLY : N.START_POST_STREAM;
      m.starts.add(1, { ...policy, [N.ATTR_START]: started });
      if (c.resultMs === undefined) continue;
      const d: Attributes = { ...base, [N.ATTR_GEN_AI_TOOL_NAME]: name };
      if (c.result && !c.result.ok) d[N.ATTR_ERROR_TYPE] = c.result.synthetic ?? 'tool_error';
      m.duration.record((c.resultMs - c.startedMs) / 1000, d);
      if (end === undefined) continue;
      // Shadow mode: the head start 'safe' would have had (simulated start + the real duration).
      const resultAt = c.shadowStartMs !== undefined ? c.shadowStartMs + (c.resultMs - c.startedMs) : c.resultMs;
      m.headStart.record(Math.max(0, end - resultAt) / 1000, policy);
    }
    for (const r of syntheticResults(s)) m.synthetic.add(1, { ...base, [N.ATTR_SYNTHETIC_REASON]: r.synthetic });
  }
}

function syntheticResults(s: TurnSummary): Array<{ callId: string; name: string; synthetic: string }> {
  const out: Array<{ callId: string; name: string; synthetic: string }> = [];
  for (const m of s.history) if (m.role === 'tool') for (const r of m.results) if (r.synthetic) out.push({ callId: r.callId, name: r.name, synthetic: r.synthetic });
  return out;
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v);
  } catch {
    return '';
  }
}

function errorName(err: unknown): string {
  return err instanceof Error ? err.name : 'tool_error';
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Start a turn's telemetry, or undefined when there is nothing to record (disabled, or no tracer
 * and no meter registered): then the turn runs exactly as without telemetry.
 */
export function startTurnTelemetry(start: TurnTelemetryStart): TurnTelemetry | undefined {
  const o = start.options;
  if (o?.enabled === false || otel === undefined) return undefined;
  const meter = (o?.meterProvider ?? api().metrics.getMeterProvider()).getMeter(N.INSTRUMENTATION_SCOPE, N.PACKAGE_VERSION);
  const instruments = meterIsNoop(meter) ? undefined : instrumentsFor(meter);
  const parent = api().context.active();
  const tracer = (o?.tracerProvider ?? api().trace.getTracerProvider()).getTracer(N.INSTRUMENTATION_SCOPE, N.PACKAGE_VERSION);
  const attrs: Attributes = { [N.ATTR_FORMAT]: start.format, [N.ATTR_EARLY_START]: start.earlyStart };
  const provider = providerOf(start.format);
  if (provider !== undefined) attrs[N.ATTR_GEN_AI_PROVIDER_NAME] = provider;
  if (o?.model !== undefined) attrs[N.ATTR_GEN_AI_REQUEST_MODEL] = o.model;
  const span = tracer.startSpan(N.SPAN_TURN, { kind: api().SpanKind.INTERNAL, attributes: attrs }, parent);
  if (!span.isRecording() && instruments === undefined) {
    span.end();
    return undefined;
  }
  return new TurnTelemetry(start, span, parent, instruments);
}
