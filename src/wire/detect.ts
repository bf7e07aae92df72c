import type { StreamEvent, WireFormat } from './events';

/**
 * Which provider's shape a payload has, and the `format_mismatch` check: a stream whose first
 * decisive payload is another provider's shape (Anthropic SDK events handed to
 * `format: 'openai-chat'`, say) fails its turn with one error naming both formats, instead of
 * turning into a silent empty turn.
 *
 * Per payload, not per fragment: the check looks at payloads only until the first decisive one
 * (or `MAX_CHECKED_PAYLOADS`), then costs one boolean test per payload.
 */

/** `StreamErrorInfo.type` of a stream that does not look like its declared format. */
export const FORMAT_MISMATCH = 'format_mismatch';

/** Payloads looked at before the check gives up (neutral payloads: pings, errors, `[DONE]`). */
export const MAX_CHECKED_PAYLOADS = 16;

/** AI SDK `fullStream` part types (objects only). `error` is left out: other wires use it too. */
const AI_SDK_TYPES = new Set([
  'start',
  'start-step',
  'text-start',
  'text-delta',
  'text-end',
  'reasoning-start',
  'reasoning-delta',
  'reasoning-end',
  'tool-input-start',
  'tool-input-delta',
  'tool-input-end',
  'tool-call',
  'tool-result',
  'tool-error',
  'finish-step',
  'finish',
  'abort',
]);

const ANTHROPIC_TYPES = new Set(['message_start', 'message_delta', 'message_stop', 'content_block_start', 'content_block_delta', 'content_block_stop']);

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The wire format one parsed payload's shape names, or undefined when it names none (pings,
 * errors, `[DONE]`, anything unknown). Plain chat chunks say `openai-chat`; `dynamo` only on
 * Dynamo-only signs (`tool_call_completion`, `nvext`, an annotated `event: error` frame).
 */
export function payloadFormat(payload: unknown): WireFormat | undefined {
  const p = Array.isArray(payload) ? payload[0] : payload; // Gemini's non-SSE array form
  if (!isObj(p)) return undefined;
  if ('tool_call_completion' in p || 'nvext' in p) return 'dynamo';
  if (p.event === 'error' && p.choices === undefined && 'comment' in p) return 'dynamo';
  const type = p.type;
  if (typeof type === 'string') {
    if (type.startsWith('response.')) return 'openai-responses';
    if (ANTHROPIC_TYPES.has(type)) return 'anthropic';
    if (AI_SDK_TYPES.has(type)) return 'ai-sdk';
  }
  if ('candidates' in p || 'usageMetadata' in p || 'promptFeedback' in p) return 'gemini';
  if (p.object === 'chat.completion.chunk' || Array.isArray(p.choices)) {
    if (Array.isArray(p.choices) && p.choices.some((c) => isObj(c) && 'tool_call_completion' in c)) return 'dynamo';
    return 'openai-chat';
  }
  return undefined;
}

/** Can an adapter for `declared` read payloads shaped like `seen`? (Chat, Dynamo and text families share chat chunks.) */
export function formatsCompatible(declared: WireFormat, seen: WireFormat): boolean {
  if (declared === seen) return true;
  const chatLike = (f: WireFormat) => f === 'openai-chat' || f === 'dynamo';
  if (chatLike(seen)) return chatLike(declared) || declared.startsWith('text:');
  return false;
}

/** One line naming both formats. */
export function formatMismatchMessage(declared: WireFormat, seen: WireFormat): string {
  return `format_mismatch: the stream looks like "${seen}" but the declared format is "${declared}"`;
}

/**
 * Watches the first payloads of one stream. `check(payload)` returns the non-retryable
 * `stream.error` to feed on a mismatch (once), else undefined; `done` turns true at the first
 * decisive payload or after `MAX_CHECKED_PAYLOADS`.
 */
export class FormatCheck {
  done = false;
  private seen = 0;
  constructor(readonly format: WireFormat) {}

  check(payload: unknown): StreamEvent | undefined {
    if (this.done) return undefined;
    if (++this.seen >= MAX_CHECKED_PAYLOADS) this.done = true;
    const f = payloadFormat(payload);
    if (f === undefined) return undefined;
    this.done = true;
    if (formatsCompatible(this.format, f)) return undefined;
    return { type: 'stream.error', error: { type: FORMAT_MISMATCH, message: formatMismatchMessage(this.format, f) }, retryable: false };
  }
}

/** The first mismatch in a list of payloads (recordings, traces), as its one-line message. */
export function findFormatMismatch(format: WireFormat, payloads: Iterable<unknown>): string | undefined {
  const c = new FormatCheck(format);
  for (const p of payloads) {
    const e = c.check(p);
    if (e !== undefined && e.type === 'stream.error') return e.error.message;
    if (c.done) return undefined;
  }
  return undefined;
}
