import type { Classification, RunToolFn } from '../calls';
import { classifyCall, prepareSafety } from '../execute/safety';
import { type AnyTool, createToolRegistry, runTool, type ToolRegistry } from '../execute/tools';
import type { EarlyStart } from '../execute/schedule';
import type { HistoryMessage } from '../history/types';
import { createAdapter, createStreamReader } from '../wire';
import { FormatCheck } from '../wire/detect';
import { type Adapter, type StreamEvent } from '../wire/events';
import { postStreamOfTurn, shadowOfTurn } from '../execute/shadow';
import { checkTurn } from '../trace/invariants';
import { loadTelemetryApi, startTurnTelemetry, type TurnTelemetry } from '../telemetry/turn';
import { type Clock, realClock } from './clock';
import { classifyStreamError, contentTypeOf, openStream, type StreamItem } from './streamSource';
import { type CallTiming, type ControllerEvents, type RetryRecord, type TurnSummary, TurnController } from './controller';
import { checkRunTurnOptions } from './options';
import type { RunTurnOptions } from './runTurnOptions';
import { LIMIT_ERROR_TYPE, SluiceLimitError } from './limits';
import { DEFAULT_RETRY_BASE_MS, DEFAULT_RETRY_MAX_DELAY_MS, retryAfterExceedsMax } from './retry';

/**
 * Default run-time cap of one tool run in `runTurn` (10 minutes): a tool that never settles gets a
 * `timeout` error result instead of hanging the turn. Override per tool (`defineTool({ timeoutMs })`)
 * or per turn (`policy.toolTimeoutMs`; 0 or Infinity turns the default off).
 */
export const DEFAULT_TOOL_TIMEOUT_MS = 600_000;

/**
 * `runTurn`: the turn controller a coding agent embeds (SPEC §6).
 *
 *   const { messages } = await runTurn({
 *     format: 'anthropic',
 *     stream: (attempt) => client.messages.create({ ...req, stream: true }),   // SDK events
 *     tools: [readFile, grep, editFile],
 *     approve: async (call) => ask(call.name),
 *     signal,
 *   });
 *   history.push(...messages);
 *
 * The stream may yield SDK event objects (Anthropic raw stream events, OpenAI chat chunks or
 * Responses events, Gemini responses) or raw SSE bytes/strings. Retryable stream errors (thrown
 * by the iterator, reported by the provider, or the idle watchdog) start a new attempt: the
 * discarded attempt's tools are aborted and nothing of it reaches the returned messages.
 */

export type { StreamItem } from './streamSource';
export type { ApprovalRequest, RunTurnOptions, StreamSource, TurnPolicy } from './runTurnOptions';

/**
 * @deprecated `runTurn` no longer rejects when a limit ends the turn: it resolves with
 * `outcome: 'failed'` and `summary.limit` (one rule: misuse rejects, run-time failures resolve).
 * Kept for one release for code that checks `instanceof TurnLimitError`; `limitErrorOf(summary)`
 * builds one from a summary.
 */
export class TurnLimitError extends SluiceLimitError {
  constructor(readonly summary: TurnSummary) {
    super(summary.limit!, summary.error?.message);
  }
}

export interface RunTurnResult {
  /** The messages to append: the assistant message, then one tool message with every result in call order. */
  messages: HistoryMessage[];
  calls: CallTiming[];
  summary: TurnSummary;
}

/** A `TurnLimitError` for a turn a limit ended, else undefined (for code that wants to throw it). */
export function limitErrorOf(summary: TurnSummary): TurnLimitError | undefined {
  return summary.outcome === 'failed' && summary.limit !== undefined && summary.error?.type === LIMIT_ERROR_TYPE ? new TurnLimitError(summary) : undefined;
}

export function streamingDispatchDisabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.SLUICE_STREAMING_DISPATCH === '0' || env.SLUICE_STREAMING_DISPATCH === 'false';
}

/** Tool-aware classification (src/execute/safety.ts) plus the structured-output flag. */
export function classifierFor(registry: ToolRegistry, structuredOutputTool = 'structured_output') {
  return (name: string, input: Record<string, unknown>): Classification => ({
    ...classifyCall(registry, name, input),
    structuredOutput: name === structuredOutputTool,
    ...(registry.get(name)?.reusable === false ? { reusable: false } : {}),
  });
}

/** What a raced await returns when the turn was aborted or finished meanwhile. */
const STOPPED: unique symbol = Symbol('stopped');

function withUserClassify(
  base: (name: string, input: Record<string, unknown>) => Classification,
  user: RunTurnOptions['classify'],
): (name: string, input: Record<string, unknown>) => Classification {
  if (!user) return base;
  return (name, input) => {
    const defaults = base(name, input);
    try {
      return user(name, input, defaults);
    } catch {
      return { ...defaults, safe: false, needsApproval: !defaults.problem };
    }
  };
}

function knownIds(opts: RunTurnOptions): string[] {
  const ids = [...(opts.knownCallIds ?? [])];
  for (const m of opts.history ?? []) if (m.role === 'assistant') for (const c of m.calls) ids.push(c.id);
  return ids;
}

class StreamFailure extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

/** SDK, AI SDK and fetch errors are classified by status and code in one place (streamSource.ts). */
function toStreamError(err: unknown): { type: string; message: string; retryable: boolean; retryAfterMs?: number } {
  if (err instanceof StreamFailure) return { type: err.type, message: err.message, retryable: err.retryable };
  const { type, message, retryable, retryAfterMs } = classifyStreamError(err);
  return { type, message, retryable, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
}

/** The stream error fed to the turn: a provider's wait longer than `retryMaxDelayMs` is not retried, and the message says so. */
export function streamErrorEvent(
  e: { type: string; message: string; retryable: boolean; retryAfterMs?: number },
  retryMaxDelayMs: number,
): StreamEvent & { type: 'stream.error' } {
  const error = { type: e.type, message: e.message, ...(e.retryAfterMs !== undefined ? { retryAfterMs: e.retryAfterMs } : {}) };
  if (e.retryable && retryAfterExceedsMax({ maxDelayMs: retryMaxDelayMs }, e.retryAfterMs)) {
    error.message = `${e.message} (not retried: the provider asked to wait ${e.retryAfterMs} ms, more than policy.retryMaxDelayMs ${retryMaxDelayMs})`;
    return { type: 'stream.error', error, retryable: false };
  }
  return { type: 'stream.error', error, retryable: e.retryable };
}

/** Misuse fails loudly, before the stream is opened: every option is checked in src/engine/options.ts. */
export { checkRunTurnOptions } from './options';

export async function runTurn(opts: RunTurnOptions): Promise<RunTurnResult> {
  checkRunTurnOptions(opts);
  const policy = opts.policy ?? {};
  const registry = Array.isArray(opts.tools) ? createToolRegistry(opts.tools) : (opts.tools as ToolRegistry);
  await prepareSafety(registry); // the shell parser, loaded only when an execute tool needs it
  const clock = opts.clock ?? realClock();
  const toolTimeoutMs = policy.toolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
  const withTimeout = (tool: AnyTool | undefined): AnyTool | undefined =>
    tool === undefined || tool.timeoutMs !== undefined || toolTimeoutMs === 0 || toolTimeoutMs === Infinity
      ? tool
      : { ...tool, timeoutMs: toolTimeoutMs };
  const requested = policy.earlyStart ?? (streamingDispatchDisabled() ? 'none' : 'safe');
  // Shadow mode runs exactly like 'none'; the 'safe' schedule is simulated when the turn is done.
  const earlyStart: EarlyStart = requested === 'shadow' ? 'none' : requested;
  const maxConcurrent = policy.maxConcurrent ?? 10;
  await loadTelemetryApi(opts.telemetry); // @opentelemetry/api is loaded only when an application registered it
  const tel = startTurnTelemetry({ format: opts.format, earlyStart: requested, options: opts.telemetry, knownTool: (name) => registry.get(name) !== undefined, toolDescription: (name) => registry.get(name)?.description });
  const run: RunToolFn = (call, signal) => runTool(withTimeout(registry.get(call.name)), call.input, { signal, callId: call.callId, name: call.name });
  const controller = new TurnController({
    mode: 'execute',
    format: opts.format,
    clock,
    inspect: opts.inspect,
    completion: policy.completion,
    singleTool: policy.singleTool,
    maxAttempts: policy.maxAttempts ?? 3,
    retryBaseMs: policy.retryBaseMs ?? DEFAULT_RETRY_BASE_MS,
    retryMaxDelayMs: policy.retryMaxDelayMs ?? DEFAULT_RETRY_MAX_DELAY_MS,
    retryJitter: policy.retryJitter ?? 'full',
    earlyStart,
    maxConcurrent,
    onAbort: policy.onAbort ?? 'commit',
    reuseResults: policy.reuseResults ?? 'safe',
    classify: withUserClassify(classifierFor(registry, policy.structuredOutputTool), opts.classify),
    knownCallIds: knownIds(opts),
    runTool: tel ? tel.wrapRun(run) : run,
    limits: opts.limits,
  });
  tel?.attach(controller);
  // The turn runs with its span active: the stream factory's, the approver's and the tools' own spans nest under it.
  const body = () => driveTurn(controller, opts, clock, tel);
  const summary = await (tel ? tel.run(body) : body());
  if (requested === 'shadow' && summary.outcome === 'done') {
    const shadow = shadowOfTurn(summary, maxConcurrent);
    if (shadow) {
      for (const c of summary.calls) {
        const s = c.attempt === summary.attempts ? shadow.startMs.get(c.index) : undefined;
        if (s !== undefined) c.shadowStartMs = s;
      }
      summary.shadowSavedMs = shadow.savedMs;
    }
  }
  if (tel) {
    // The RFC's rollout signal: SPEC §7 on the turn's own output; with early start on, the saving
    // against post-stream dispatch from the real durations (only when telemetry records).
    const early = summary.outcome === 'done' && earlyStart !== 'none';
    tel.end({
      summary,
      violations: checkTurn(summary.history, summary.trace, earlyStart),
      ...(early ? { savedMs: postStreamOfTurn(summary, maxConcurrent)?.savedMs } : {}),
    });
  }
  return { messages: summary.history, calls: summary.calls, summary };
}

/** Runs the turn to its end: attempts, retries, abort; resolves with the summary (never rejects for run-time failures). */
async function driveTurn(controller: TurnController, opts: RunTurnOptions, clock: Clock, tel: TurnTelemetry | undefined): Promise<TurnSummary> {
  const policy = opts.policy ?? {};
  opts.journal?.attach(controller);
  for (const [name, fn] of Object.entries(opts.on ?? {})) {
    controller.events.on(name as keyof ControllerEvents, fn as (e: unknown) => void);
  }
  const retries: RetryRecord[] = [];
  controller.events.on('attempt.retry', (e) =>
    retries.push({
      attempt: e.attempt,
      delayMs: e.delayMs,
      reason: e.reason,
      ...(e.retryAfterMs !== undefined ? { retryAfterMs: e.retryAfterMs } : {}),
      errorType: e.error.type,
    }),
  );
  controller.events.on('approval.request', (req) => {
    if (!opts.approve) {
      controller.deny(req.index, `Tool ${req.name} needs approval and no approver is configured.`);
      return;
    }
    Promise.resolve()
      .then(() => opts.approve!({ index: req.index, id: req.id, name: req.name, input: req.input }))
      .then(
        (ok) => (ok ? controller.approve(req.index) : controller.deny(req.index)),
        () => controller.deny(req.index, `The approval check for ${req.name} failed, so the call was not run.`),
      );
  });

  let turnDone = false;
  void controller.done.then(() => (turnDone = true));
  // Abort wins over every pending await of the stream side (the source factory, a stalled
  // `next()`): `stopped` settles on abort or when the turn is done, and every such await races it.
  let stop!: () => void;
  const stopped = new Promise<typeof STOPPED>((resolve) => (stop = () => resolve(STOPPED)));
  void controller.done.then(stop);
  const onAbort = () => {
    stop();
    if (!turnDone) tel?.abort(policy.onAbort ?? 'commit');
    controller.abort(policy.onAbort);
  };
  if (opts.signal) {
    if (opts.signal.aborted) onAbort();
    else opts.signal.addEventListener('abort', onAbort, { once: true });
  }

  try {
    while (!turnDone) {
      const attempt = controller.currentAttempt;
      // Listen before consuming: the next attempt may begin while this one is still closing.
      const begun = new Promise<'retry'>((resolve) => {
        const h = () => {
          controller.events.off('attempt.begin', h);
          resolve('retry');
        };
        controller.events.on('attempt.begin', h);
      });
      await consumeAttempt(controller, opts, attempt, policy.idleTimeoutMs, clock, stopped);
      if (turnDone) break;
      // Either a retry is coming (attempt.begin) or the turn finishes (draining tools, or failed).
      const next = controller.currentAttempt !== attempt ? 'retry' : await Promise.race([controller.done.then(() => 'done' as const), begun]);
      if (next === 'done') break;
    }
    const summary = await controller.done;
    if (retries.length > 0) summary.retries = retries;
    await opts.journal?.flush();
    return summary;
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
  }
}

async function consumeAttempt(
  controller: TurnController,
  opts: RunTurnOptions,
  attempt: number,
  idleTimeoutMs: number | undefined,
  clock: Clock,
  stopped: Promise<typeof STOPPED>,
): Promise<void> {
  let adapter: Adapter | undefined;
  let reader: ReturnType<typeof createStreamReader> | undefined;
  const formatCheck = new FormatCheck(opts.format);
  const feedAll = (events: StreamEvent[]) => {
    for (const e of events) {
      if (controller.currentAttempt !== attempt || !controller.attemptOpen) return;
      controller.feed(e);
    }
  };
  let idleTimer: unknown;
  let idleReject: ((e: StreamFailure) => void) | undefined;
  const idle = new Promise<never>((_, reject) => (idleReject = reject));
  idle.catch(() => undefined);
  const arm = () => {
    if (!idleTimeoutMs) return;
    if (idleTimer !== undefined) clock.clearTimeout(idleTimer);
    idleTimer = clock.setTimeout(
      () => idleReject?.(new StreamFailure('idle_timeout', `no stream activity for ${idleTimeoutMs} ms`, true)),
      idleTimeoutMs,
    );
  };
  let iterator: AsyncIterator<StreamItem> | Iterator<StreamItem> | undefined;
  try {
    const source = typeof opts.stream === 'function' ? await Promise.race([opts.stream(attempt), stopped]) : opts.stream;
    if (source === STOPPED) return;
    // A Promise source (or a fetch still waiting for its headers) must not outlive an abort.
    const opening = openStream(source);
    const opened = await Promise.race([opening, stopped]);
    if (opened === STOPPED) {
      opening.then(closeQuietly, () => undefined);
      return;
    }
    iterator = opened;
    arm();
    while (controller.currentAttempt === attempt && controller.attemptOpen) {
      const step = await Promise.race([Promise.resolve(iterator.next()), idle, stopped]);
      if (step === STOPPED) {
        // Aborted (or the turn ended) while waiting for the stream: leave the read pending and
        // close the source without waiting for it (a stalled source may never answer).
        closeQuietly(iterator);
        return;
      }
      if (step.done) break;
      arm();
      const item = step.value;
      // Raw SSE (strings/bytes) or SDK event objects; the first item decides. In object mode the
      // OpenAI-style '[DONE]' sentinel is a payload, not bytes.
      const raw = reader !== undefined || (adapter === undefined && (item instanceof Uint8Array || (typeof item === 'string' && item !== '[DONE]')));
      if (raw) {
        if (typeof item !== 'string' && !(item instanceof Uint8Array))
          throw new StreamFailure('bad_stream', 'the stream mixed raw bytes and event objects', false);
        reader ??= createStreamReader(opts.format, { checkFormat: true, contentType: contentTypeOf(iterator) });
        feedAll(reader.write(item));
      } else {
        if (item instanceof Uint8Array) throw new StreamFailure('bad_stream', 'the stream mixed raw bytes and event objects', false);
        adapter ??= createAdapter(opts.format);
        // The first payloads must look like the declared format (src/wire/detect.ts): else format_mismatch.
        if (!formatCheck.done) {
          const mismatch = formatCheck.check(item);
          if (mismatch !== undefined) {
            feedAll([mismatch]);
            break;
          }
        }
        feedAll(adapter.push(item));
      }
    }
    if (controller.currentAttempt === attempt && controller.attemptOpen) {
      if (reader) feedAll(reader.end());
      else if (adapter) feedAll(adapter.end());
      // Nothing at all arrived: an empty body (SPEC §12: bad_stream, not a cut stream).
      else feedAll(createStreamReader(opts.format, { contentType: contentTypeOf(iterator) }).end());
    }
  } catch (err) {
    const e = toStreamError(err);
    const maxDelay = opts.policy?.retryMaxDelayMs ?? DEFAULT_RETRY_MAX_DELAY_MS;
    if (controller.currentAttempt === attempt && controller.attemptOpen) controller.feed(streamErrorEvent(e, maxDelay));
    // Close the abandoned source without waiting for it (a stalled source may never answer).
    closeQuietly(iterator);
  } finally {
    if (idleTimer !== undefined) clock.clearTimeout(idleTimer);
  }
}

/** Ask an abandoned iterator to finish, without waiting for it and without an unhandled rejection. */
function closeQuietly(iterator: AsyncIterator<StreamItem> | Iterator<StreamItem> | undefined): void {
  Promise.resolve()
    .then(() => iterator?.return?.())
    .catch(() => undefined);
}
