/**
 * Stream integrity (SPEC §12): a stream that did not finish is not a finished turn.
 *
 * Every wire format has a terminal signal, and an adapter that reaches the end of its input
 * without it ends with a `stream.error` instead of a plain `stream.end`:
 *
 * | format | terminal signal |
 * |---|---|
 * | openai-chat (and dynamo, text families) | a choice's `finish_reason` (`[DONE]` alone is not enough; a finish without `[DONE]` is fine) |
 * | anthropic | `message_stop` after `message_delta.stop_reason` |
 * | openai-responses | `response.completed` / `response.incomplete` (`response.failed` is an error) |
 * | gemini | a candidate's `finishReason` (or `promptFeedback.blockReason`) |
 * | ai-sdk | a `finish` part |
 *
 * Two errors, both `stream.error` events:
 * - `stream_truncated` (retryable): the format's stream began but ended (clean EOF) before its
 *   terminal signal. The attempt is discarded like any failed attempt (SPEC §6.7).
 * - `bad_stream` (not retryable): the body is not an event stream of that format at all — a unary
 *   JSON completion, an HTML page, an empty body, a JSON error body with a 200. The message says
 *   what arrived (content type when known, the first bytes) and, for a unary completion, "looks
 *   like a non-streaming completion: did you forget stream: true?".
 *
 * A unary completion is never read as a turn: it is always `bad_stream` (one rule, one place to
 * fix: send `stream: true`). Gemini is the exception by construction: its unary response has the
 * shape of one stream chunk, so a whole `GenerateContentResponse` given as the stream is read as a
 * one-chunk stream (it carries its `finishReason`).
 */
import type { StreamEvent, WireFormat } from './events';

export const STREAM_TRUNCATED = 'stream_truncated';
export const BAD_STREAM = 'bad_stream';

/** Characters of a body's start quoted in a `bad_stream` message. */
export const BODY_HEAD_CHARS = 120;

/** What a format's terminal signal is called, for error messages. */
export function terminalSignal(format: WireFormat | string): string {
  switch (format) {
    case 'anthropic':
      return 'message_stop after message_delta.stop_reason';
    case 'openai-responses':
      return 'response.completed / response.incomplete';
    case 'gemini':
      return 'a candidate finishReason';
    case 'ai-sdk':
      return 'a finish part';
    default:
      return 'a choice with finish_reason'; // openai-chat, dynamo, text:<family>
  }
}

/** A `stream_truncated` error: `what` says what arrived instead of the terminal signal. */
export function truncatedError(format: WireFormat | string, what?: string): StreamEvent {
  return {
    type: 'stream.error',
    error: { type: STREAM_TRUNCATED, message: `the ${format} stream ended before ${terminalSignal(format)}${what ? ` (${what})` : ''}: the stream was cut, the attempt is discarded` },
    retryable: true,
  };
}

/** A `bad_stream` error (never retryable). */
export function badStreamError(message: string): StreamEvent {
  return { type: 'stream.error', error: { type: BAD_STREAM, message }, retryable: false };
}

const UNARY_HINT = 'looks like a non-streaming completion: did you forget stream: true?';

/**
 * A payload that is a whole (non-streaming) completion of some provider, or undefined. Gemini's
 * unary response is not listed: it is a valid one-chunk stream.
 */
export function unaryCompletion(p: unknown): string | undefined {
  if (typeof p !== 'object' || p === null || Array.isArray(p)) return undefined;
  const o = p as Record<string, unknown>;
  if (o.object === 'chat.completion' || o.object === 'text_completion') return `an OpenAI ${String(o.object)} object`;
  if (Array.isArray(o.choices) && o.choices.some((c) => typeof c === 'object' && c !== null && 'message' in c)) return 'an OpenAI chat completion (choices[].message)';
  if (o.type === 'message' && o.role === 'assistant' && Array.isArray(o.content)) return 'an Anthropic Message object';
  if (o.object === 'response' && o.type === undefined) return 'an OpenAI Responses response object';
  return undefined;
}

/** `bad_stream` for a unary completion payload given where stream events were expected. */
export function unaryError(format: WireFormat | string, what: string): StreamEvent {
  return badStreamError(`the ${format} stream is ${what}, not stream events: ${UNARY_HINT}`);
}

/**
 * Describe a body that is not an SSE stream: its content type (when known), its first characters
 * (quoted, at most BODY_HEAD_CHARS) and what it looks like.
 */
export function describeBody(head: string, contentType?: string): string {
  const text = head.replace(/^\uFEFF/, '').trimStart();
  const ct = contentType !== undefined && contentType.length > 0 ? `content-type ${contentType}, ` : '';
  if (text.length === 0) return `the response body was empty (${ct}no bytes): expected an SSE event stream`;
  const quoted = JSON.stringify(text.length > BODY_HEAD_CHARS ? `${text.slice(0, BODY_HEAD_CHARS)}…` : text);
  let kind = 'not an SSE event stream';
  const c = text[0];
  if (c === '<') kind = 'an HTML/XML page, not an SSE event stream';
  else if (c === '{' || c === '[') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const unary = unaryCompletion(parsed) ?? (/"object"\s*:\s*"(chat\.completion|response)"|"type"\s*:\s*"message"/.test(text) ? 'a JSON completion' : undefined);
    if (unary !== undefined) kind = `${unary}: ${UNARY_HINT}`;
    else if (/^\{\s*"(error|type"\s*:\s*"error)"/.test(text)) kind = 'a JSON error body, not an SSE event stream';
    else kind = 'JSON, not an SSE event stream';
  }
  return `the response body is ${kind} (${ct}starts with ${quoted})`;
}

/** True when the first line of a body is SSE framing (a field line or a comment). */
export function isSseStart(firstLine: string): boolean {
  return /^(data|event|id|retry)(:|$)/.test(firstLine) || firstLine.startsWith(':');
}
