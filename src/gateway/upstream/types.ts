/**
 * The contract between the exchange and an upstream module (openaiChat.ts, openaiResponses.ts,
 * anthropic.ts, gemini.ts): canonical request → the backend's HTTP request; the backend's bytes are
 * read by the src/wire adapter for `wire`.
 */
import type { WireFormat } from '../../wire/events';
import type { CanonicalRequest } from '../canonical';

export type UpstreamFormatName = 'openai-chat' | 'openai-responses' | 'anthropic' | 'gemini';

export const UPSTREAM_FORMATS: readonly UpstreamFormatName[] = ['openai-chat', 'openai-responses', 'anthropic', 'gemini'];

export interface UpstreamBodyOptions {
  /** The backend model (after model mapping). */
  model: string;
  /** Chat only: which field carries max_tokens. */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
  /** Chat only: mid-conversation system messages inline (default) or merged into the first. */
  systemMessages?: 'inline' | 'merge';
}

export interface UpstreamFormat {
  readonly name: UpstreamFormatName;
  /** The wire format its streaming answer is read with. */
  readonly wire: WireFormat;
  /** The request URL for a configured base URL and backend model. */
  url(base: string, model: string): URL;
  /** Auth headers for a key (the configured one or the client's). */
  authHeaders(key: string | undefined): Record<string, string>;
  /** The backend body; throws GatewayError(400) for what this API cannot express. */
  body(req: CanonicalRequest, opts: UpstreamBodyOptions): unknown;
  /** A whole JSON (non-SSE) answer → stream payloads for the reader (undefined: unreadable). */
  jsonToPayloads(json: unknown): unknown[] | undefined;
}
