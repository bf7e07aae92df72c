/**
 * Span, attribute, event and metric names sluice emits (docs/observability.md). One list shared
 * by the library telemetry (src/telemetry/turn.ts), the gateway telemetry and `sluice report`,
 * so a name is spelled once. Plain strings: this file imports nothing (not even
 * `@opentelemetry/api`), so anything may import it.
 *
 * `gen_ai.*` names follow the OpenTelemetry GenAI semantic conventions as released with schema
 * `https://opentelemetry.io/schemas/gen-ai/1.42.0` (status Development; now in the
 * open-telemetry/semantic-conventions-genai repository); renames still unreleased on its main
 * branch are listed in docs/observability.md, "Conventions followed". `sluice.*` names are this
 * project's own.
 */

/** Tracer and meter name (instrumentation scope). */
export const INSTRUMENTATION_SCOPE = 'sluice';
/** The package's version: the instrumentation scope's version (test/telemetry checks it against package.json). */
export const PACKAGE_VERSION = '0.1.0';

// ------------------------------------------------------------------ spans

/** The turn span (one per `runTurn`; attempts are events on it). */
export const SPAN_TURN = 'sluice.turn';
/** Tool spans are named `execute_tool {gen_ai.tool.name}` (GenAI conventions). */
export const SPAN_EXECUTE_TOOL_PREFIX = 'execute_tool';
export function executeToolSpanName(toolName: string): string {
  return `${SPAN_EXECUTE_TOOL_PREFIX} ${toolName}`;
}

// ------------------------------------------------------------------ GenAI attributes

export const ATTR_GEN_AI_OPERATION_NAME = 'gen_ai.operation.name';
/** Value of `gen_ai.operation.name` on tool spans. */
export const OPERATION_EXECUTE_TOOL = 'execute_tool';
export const ATTR_GEN_AI_TOOL_NAME = 'gen_ai.tool.name';
export const ATTR_GEN_AI_TOOL_CALL_ID = 'gen_ai.tool.call.id';
/** Always `function` for sluice tools. */
export const ATTR_GEN_AI_TOOL_TYPE = 'gen_ai.tool.type';
/** The registered tool's description, when it has one. */
export const ATTR_GEN_AI_TOOL_DESCRIPTION = 'gen_ai.tool.description';
/** Opt-in (`telemetry.recordContents`): the call's arguments as JSON text. */
export const ATTR_GEN_AI_TOOL_CALL_ARGUMENTS = 'gen_ai.tool.call.arguments';
/** Opt-in (`telemetry.recordContents`): the tool's result text. */
export const ATTR_GEN_AI_TOOL_CALL_RESULT = 'gen_ai.tool.call.result';
export const ATTR_GEN_AI_PROVIDER_NAME = 'gen_ai.provider.name';
export const ATTR_GEN_AI_REQUEST_MODEL = 'gen_ai.request.model';
export const ATTR_GEN_AI_RESPONSE_MODEL = 'gen_ai.response.model';
export const ATTR_GEN_AI_RESPONSE_FINISH_REASONS = 'gen_ai.response.finish_reasons';
export const ATTR_GEN_AI_USAGE_INPUT_TOKENS = 'gen_ai.usage.input_tokens';
export const ATTR_GEN_AI_USAGE_OUTPUT_TOKENS = 'gen_ai.usage.output_tokens';
export const ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS = 'gen_ai.usage.cache_read.input_tokens';
/** General semconv: the error class on a failed span / metric point. */
export const ATTR_ERROR_TYPE = 'error.type';
/** General semconv: the `exception` span event on a failed tool span, with its type (always) and message (recordContents only). */
export const EVENT_EXCEPTION = 'exception';
export const ATTR_EXCEPTION_TYPE = 'exception.type';
export const ATTR_EXCEPTION_MESSAGE = 'exception.message';

// ------------------------------------------------------------------ sluice attributes

/** Wire format (`anthropic`, `openai-chat`, …, `text:<family>`): a metric label. */
export const ATTR_FORMAT = 'sluice.format';
/** Model label on metrics: `telemetry.model`, else the stream's model, else `unknown` (bounded). */
export const ATTR_MODEL = ATTR_GEN_AI_REQUEST_MODEL;
/** The turn's `policy.earlyStart` (`safe` | `none` | `all` | `shadow`). */
export const ATTR_EARLY_START = 'sluice.early_start';
export const ATTR_TURN_OUTCOME = 'sluice.turn.outcome';
export const ATTR_TURN_ATTEMPTS = 'sluice.turn.attempts';
export const ATTR_TURN_CALLS = 'sluice.turn.calls';
/** ms since `runTurn` was called (the `summary.*Ms` time base). */
export const ATTR_TURN_STREAM_END_MS = 'sluice.turn.stream_end_ms';
export const ATTR_TURN_DONE_MS = 'sluice.turn.done_ms';
/** Shadow mode: the turn time `'safe'` would have saved (ms). */
export const ATTR_TURN_SHADOW_SAVED_MS = 'sluice.turn.shadow_saved_ms';
/** Early start on ('safe' / 'all'): turn time saved against post-stream dispatch, estimated from the real tool durations (ms). */
export const ATTR_TURN_SAVED_MS = 'sluice.turn.saved_ms';
export const ATTR_TURN_INVARIANT_VIOLATIONS = 'sluice.turn.invariant_violations';
export const ATTR_LIMIT = 'sluice.limit';

export const ATTR_CALL_INDEX = 'sluice.call.index';
export const ATTR_CALL_ATTEMPT = 'sluice.call.attempt';
/** Did the tool start while the model was still streaming? */
export const ATTR_CALL_EARLY = 'sluice.call.early';
export const ATTR_CALL_SAFE = 'sluice.call.safe';
export const ATTR_CALL_ARGS_CHARS = 'sluice.call.args_chars';
export const ATTR_CALL_OPEN_MS = 'sluice.call.open_ms';
export const ATTR_CALL_COMPLETE_MS = 'sluice.call.complete_ms';
export const ATTR_CALL_RELEASED_MS = 'sluice.call.released_ms';
export const ATTR_CALL_STARTED_MS = 'sluice.call.started_ms';
export const ATTR_CALL_RESULT_MS = 'sluice.call.result_ms';
/** Shadow mode: when `'safe'` would have started the call (ms, same base as started_ms). */
export const ATTR_CALL_SHADOW_START_MS = 'sluice.call.shadow_start_ms';
/** Stream end − result time, ≥ 0 (ms): how much of the tool's work the stream hid. */
export const ATTR_CALL_HEAD_START_MS = 'sluice.call.head_start_ms';
/** Release − completion (ms). */
export const ATTR_CALL_RELEASE_LAG_MS = 'sluice.call.release_lag_ms';
export const ATTR_CALL_OK = 'sluice.call.ok';
/** Why sluice made a result up: interrupted | suppressed | invalid_input | denied | unknown_tool | timeout. */
export const ATTR_SYNTHETIC_REASON = 'sluice.synthetic.reason';
/** Metric label: `early` (started before the stream ended) or `post_stream`. */
export const ATTR_START = 'sluice.start';
export const START_EARLY = 'early';
export const START_POST_STREAM = 'post_stream';
export const ATTR_WARNING_CODE = 'sluice.warning.code';
export const ATTR_ATTEMPT = 'sluice.attempt';
export const ATTR_RETRY_DELAY_MS = 'sluice.retry.delay_ms';
/** Why the retry waits what it waits: `retry-after` (the provider's wait, the floor) or `backoff`. */
export const ATTR_RETRY_REASON = 'sluice.retry.reason';
/** The wait the provider asked for (`retry-after-ms` / `retry-after`), when it did. */
export const ATTR_RETRY_AFTER_MS = 'sluice.retry.after_ms';
export const ATTR_ABORT_MODE = 'sluice.abort.mode';

// ------------------------------------------------------------------ gateway A/B and sessions (SPEC §13)

/** General semconv (session namespace): the client's session id, when its headers name one. */
export const ATTR_SESSION_ID = 'session.id';
/** GenAI semconv: the conversation (session, thread) id; the gateway sets it to the same session id. */
export const ATTR_GEN_AI_CONVERSATION_ID = 'gen_ai.conversation.id';
/** The request's release arm: `early` or `holdout` (`--release-holdout`). */
export const ATTR_RELEASE_ARM = 'sluice.release.arm';
/** On a request that answers tool calls of an earlier response: that request's id, arm, times and answered calls. */
export const ATTR_CONTINUES_REQUEST_ID = 'sluice.continues.request_id';
export const ATTR_CONTINUES_ARM = 'sluice.continues.arm';
/** The earlier request's arrival → its backend stream end (ms). */
export const ATTR_CONTINUES_TURN_MS = 'sluice.continues.turn_ms';
/** The earlier response's backend stream end → this request's arrival (ms). */
export const ATTR_CONTINUES_GAP_MS = 'sluice.continues.gap_ms';
export const ATTR_CONTINUES_CALLS = 'sluice.continues.calls';
/** On the span link to the earlier request's SERVER span: `continues`. */
export const ATTR_LINK_KIND = 'sluice.link.kind';

// ------------------------------------------------------------------ span events

/** On the turn span. */
export const EVENT_ATTEMPT_BEGIN = 'sluice.attempt.begin';
export const EVENT_ATTEMPT_RETRY = 'sluice.attempt.retry';
/** An attempt's calls were thrown away (retry, failed or dropped turn). */
export const EVENT_ATTEMPT_DISCARDED = 'sluice.attempt.discarded';
export const EVENT_STREAM_END = 'sluice.stream.end';
export const EVENT_CALL_COMPLETE = 'sluice.call.complete';
export const EVENT_CALL_RELEASED = 'sluice.call.released';
export const EVENT_CALL_SUPPRESSED = 'sluice.call.suppressed';
export const EVENT_CALL_RESULT = 'sluice.call.result';
export const EVENT_SYNTHETIC_RESULT = 'sluice.call.synthetic';
/** Shadow mode, at the end of the turn, per run call: its simulated 'safe' start (`sluice.call.shadow_start_ms`). */
export const EVENT_CALL_SHADOW = 'sluice.call.shadow';
export const EVENT_WARNING = 'sluice.warning';
export const EVENT_ABORT = 'sluice.turn.abort';
/** On a tool span: the call's signal fired (discard, interrupt, timeout). */
export const EVENT_TOOL_ABORT = 'sluice.tool.abort';

// ------------------------------------------------------------------ metrics

/** Histogram, seconds: one tool run (GenAI-style name). Labels: format, model, tool name, error.type. */
export const METRIC_EXECUTE_TOOL_DURATION = 'gen_ai.execute_tool.duration';
/** Histogram, seconds: stream end − result time (≥ 0) per executed call. Labels: format, model. */
export const METRIC_HEAD_START = 'sluice.tool.head_start';
/** Histogram, seconds: release − completion per released call. Labels: format, model. */
export const METRIC_RELEASE_LAG = 'sluice.call.release_lag';
/** Counter: tool runs by `sluice.start` (early | post_stream). Labels: format, model. */
export const METRIC_TOOL_STARTS = 'sluice.tool.starts';
/** Counter: synthetic results by `sluice.synthetic.reason`. Labels: format, model. */
export const METRIC_SYNTHETIC_RESULTS = 'sluice.tool.synthetic_results';
/** Counter: invariant violations `checkHistory`/`checkTrace` found in a turn's own output (must stay 0). */
export const METRIC_INVARIANT_VIOLATIONS = 'sluice.turn.invariant_violations';
/** Counter: turns by outcome. Labels: format, model, sluice.early_start, sluice.turn.outcome. */
export const METRIC_TURNS = 'sluice.turns';
/** Histogram, seconds: shadow mode's projected saving per turn. Labels: format, model. */
export const METRIC_SHADOW_SAVED = 'sluice.turn.shadow_saved';
/** Histogram, seconds: early start on, the saving against post-stream dispatch (estimated from the real durations). Labels: format, model, early_start. */
export const METRIC_SAVED = 'sluice.turn.saved';
/** Histogram, seconds: `runTurn` call → turn done. Labels: format, model, sluice.early_start, sluice.turn.outcome. */
export const METRIC_TURN_DURATION = 'sluice.turn.duration';
/** Counter, tokens: `gen_ai.token.type` input | output (GenAI `gen_ai.client.token.usage` is a histogram; this is a sum). */
export const METRIC_TOKENS = 'sluice.turn.tokens';
export const ATTR_GEN_AI_TOKEN_TYPE = 'gen_ai.token.type';

/** Label value for a model or tool name outside the bounded set. */
export const LABEL_OTHER = 'other';
export const LABEL_UNKNOWN = 'unknown';
