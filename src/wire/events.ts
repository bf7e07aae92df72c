/**
 * The canonical event vocabulary. Every provider adapter (src/wire/*) and every open-model
 * text parser (src/parsers/*) turns its input into `StreamEvent`s; everything downstream
 * (argument buffers, the turn machine, encoders, the executor) only ever sees these.
 *
 * Rules every producer follows:
 * - `index` is the call's position in the model output (0, 1, 2, ...). Use the provider's own
 *   call ordinal when it has one (OpenAI chat `tool_calls[].index`), otherwise number calls in
 *   order of first appearance (Anthropic tool_use blocks, Responses function_call items, Gemini
 *   functionCall parts, text-family markup). Text/thinking blocks never consume a call index.
 * - A call exists from the first event that names its index. `call.identity` may come before,
 *   between or after fragments; an empty-string id or name means "not known" and is never sent
 *   (producers drop empty strings).
 * - `call.fragment.text` is a piece of the argument JSON text, in order. Producers that receive
 *   whole argument objects (Gemini, some chat servers) send one fragment with
 *   `JSON.stringify(args)` followed by `call.complete`.
 * - `call.complete` is completion evidence (SPEC §4): the payload of that call is final. It may
 *   repeat, and may come before identity or before any fragment (Dynamo completion records).
 *   OpenAI chat has no evidence on the wire; the adapter sends none and the engine infers it.
 * - `finish` carries the normalised finish reason; `stream.end` is the end of the byte stream
 *   (after `[DONE]`, `message_stop`, `response.completed`, or EOF). Producers send exactly one
 *   `stream.end`, last, from `end()`.
 * - Producers never throw on bad input: they send a `warning` (or `stream.error` when the
 *   provider itself reported an error) and carry on.
 */

export type FinishReason =
  | 'stop' // natural end (Anthropic end_turn, OpenAI stop, Gemini STOP)
  | 'tool_calls' // the model stopped to call tools (Anthropic tool_use)
  | 'length' // max_tokens / length / max_output_tokens
  | 'stop_sequence'
  | 'content_filter' // content_filter / refusal / SAFETY
  | 'other';

export interface Usage {
  /** Prompt tokens including cached ones (OpenAI prompt_tokens; Anthropic input + cache_read + cache_creation). */
  promptTokens?: number;
  /** Of promptTokens, how many were served from cache. */
  cachedTokens?: number;
  /** Output tokens so far (cumulative). */
  outputTokens?: number;
}

export interface StreamErrorInfo {
  /** Provider error type, e.g. overloaded_error, rate_limit_error, insufficient_quota, api_error. */
  type: string;
  message: string;
  /** The wait the provider asked for (`retry-after-ms` / `retry-after`), in ms: the floor of the next retry's delay. */
  retryAfterMs?: number;
}

export type StreamEvent =
  | { type: 'message.start'; id?: string; model?: string; usage?: Usage }
  | { type: 'text.delta'; text: string }
  | { type: 'thinking.delta'; text: string }
  | { type: 'thinking.signature'; signature: string }
  | { type: 'call.identity'; index: number; id?: string; name?: string }
  | { type: 'call.fragment'; index: number; text: string }
  | { type: 'call.complete'; index: number }
  | { type: 'usage'; usage: Usage }
  | { type: 'finish'; reason: FinishReason; raw?: string }
  | { type: 'ping' }
  | { type: 'stream.error'; error: StreamErrorInfo; retryable: boolean }
  | { type: 'warning'; code: string; message: string }
  | { type: 'stream.end' };

export type StreamEventType = StreamEvent['type'];

/**
 * The wire formats sluice reads. `text:<family>` is raw model text parsed by src/parsers;
 * `ai-sdk` is the part objects of the AI SDK's `streamText(...).fullStream` (objects only, no bytes).
 */
export type WireFormat =
  'anthropic' | 'openai-chat' | 'openai-responses' | 'gemini' | 'dynamo' | 'ai-sdk' | `text:${string}`;

/**
 * A provider adapter: parsed provider payloads in, canonical events out.
 * `push` takes one parsed JSON payload (an SSE `data:` object, or an SDK stream event object), or
 * the string '[DONE]'. `end` flushes and always returns a trailing `stream.end`.
 */
export interface Adapter {
  readonly format: WireFormat;
  push(payload: unknown): StreamEvent[];
  end(): StreamEvent[];
}

/**
 * Provider error types that are worth retrying (overload, rate limit, transient server errors, a
 * lost connection). Errors with an HTTP status or a socket code are classified by those first
 * (src/engine/streamSource.ts `classifyStreamError`).
 */
export function isRetryableErrorType(type: string): boolean {
  return /overloaded|rate_limit|timeout|unavailable|server_error|api_error|internal|idle|connection/i.test(type);
}
