import { nodeCrypto } from '../nodeCrypto';
import type { FinishReason, Usage } from '../wire/events';

/**
 * Pieces the encoders share: ids, usage (also anthropicSse.ts) and the Chat finish mapping.
 */

export const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Random bytes for ids, drawn 4 KiB at a time (one `randomBytes` call per ~100 ids, not one per id). */
let pool: Buffer | undefined;
let poolAt = 0;

/**
 * `count` random characters of `alphabet` (uniform: rejection sampling skips bytes at or above the
 * largest multiple of the alphabet's size). Ids only — not secrets.
 */
export function randomChars(alphabet: string, count: number): string {
  const limit = 256 - (256 % alphabet.length);
  let out = '';
  while (out.length < count) {
    if (pool === undefined || poolAt >= pool.length) {
      pool = nodeCrypto().randomBytes(4096);
      poolAt = 0;
    }
    const b = pool[poolAt++]!;
    if (b < limit) out += alphabet[b % alphabet.length];
  }
  return out;
}

/** `prefix` + `count` random base62 characters. */
export function randomId(prefix: string, count = 24): string {
  return prefix + randomChars(BASE62, count);
}

/**
 * Running usage for every encoder: the last prompt/cached counts seen, output never decreasing;
 * the input estimate until the backend reports a prompt count.
 */
export class UsageCounter {
  private prompt: number | undefined;
  private cached = 0;
  private output = 0;

  constructor(private readonly estimate: number) {}

  update(u: Usage | undefined): void {
    if (!u) return;
    if (u.promptTokens !== undefined && Number.isFinite(u.promptTokens)) this.prompt = Math.max(0, Math.floor(u.promptTokens));
    if (u.cachedTokens !== undefined && Number.isFinite(u.cachedTokens)) this.cached = Math.max(0, Math.floor(u.cachedTokens));
    if (u.outputTokens !== undefined && Number.isFinite(u.outputTokens)) this.output = Math.max(this.output, Math.floor(u.outputTokens));
  }

  get input(): number {
    return this.prompt ?? Math.max(0, Math.floor(this.estimate));
  }
  get cachedInput(): number {
    return this.prompt === undefined ? 0 : Math.min(this.cached, this.prompt);
  }
  get outputTokens(): number {
    return this.output;
  }
}

/** Chat `finish_reason` for the end of a turn that released `released` calls. */
export function chatFinishReason(finish: FinishReason | undefined, released: number, toolUseOnStop: boolean): 'stop' | 'length' | 'tool_calls' | 'content_filter' {
  switch (finish) {
    case 'length':
      return 'length';
    case 'content_filter':
      return 'content_filter';
    case 'stop':
      return toolUseOnStop && released > 0 ? 'tool_calls' : 'stop';
    case 'stop_sequence':
      return 'stop';
    default:
      return released > 0 ? 'tool_calls' : 'stop';
  }
}

/** The OpenAI error body `{error: {message, type, param, code}}` for an error type sluice uses. */
export function openaiErrorBody(type: string, message: string): { error: { message: string; type: string; param: null; code: string } } {
  return { error: { message, type: openaiErrorType(type), param: null, code: type } };
}

/** Anthropic-style error type → the OpenAI `error.type` a client expects. */
export function openaiErrorType(type: string): string {
  switch (type) {
    case 'invalid_request_error':
    case 'request_too_large':
    case 'not_found_error':
      return 'invalid_request_error';
    case 'authentication_error':
      return 'authentication_error';
    case 'permission_error':
      return 'permission_error';
    case 'rate_limit_error':
      return 'rate_limit_error';
    case 'timeout_error':
      return 'timeout';
    default:
      return 'server_error';
  }
}
