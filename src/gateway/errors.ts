/**
 * Anthropic-shaped errors for the gateway.
 *
 * Every failure the gateway reports is `{"type":"error","error":{"type":<anthropic type>,"message":…}}`.
 * Before the response is committed it goes out with an HTTP status; after `message_start` it is the
 * single terminal `event: error` frame (the encoder writes it).
 *
 * Status → type (server_anchors.md §1.5): 400 invalid_request_error, 401 authentication_error,
 * 403 permission_error, 404 not_found_error, 409 conflict_error, 413 request_too_large,
 * 429 rate_limit_error, 499 api_error, 503/529 overloaded_error, 504 timeout_error,
 * other 4xx invalid_request_error, other 5xx api_error.
 */

export type AnthropicErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'conflict_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'api_error'
  | 'overloaded_error'
  | 'timeout_error';

export function statusToErrorType(status: number): AnthropicErrorType {
  switch (status) {
    case 400:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 409:
      return 'conflict_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 499:
      return 'api_error';
    case 503:
    case 529:
      return 'overloaded_error';
    case 504:
      return 'timeout_error';
  }
  if (status >= 400 && status < 500) return 'invalid_request_error';
  return 'api_error';
}

const ANTHROPIC_TYPES = new Set<string>([
  'invalid_request_error',
  'authentication_error',
  'permission_error',
  'not_found_error',
  'conflict_error',
  'request_too_large',
  'rate_limit_error',
  'api_error',
  'overloaded_error',
  'timeout_error',
]);

/**
 * A backend's error type (an OpenAI-style error chunk, an engine limit) → the Anthropic error type
 * an Anthropic client understands. Anthropic types pass through; `server_error` and anything
 * unknown become `api_error`.
 */
export function toAnthropicErrorType(type: string): AnthropicErrorType {
  if (ANTHROPIC_TYPES.has(type)) return type as AnthropicErrorType;
  const t = type.toLowerCase();
  if (/rate_limit|quota|too_many_requests/.test(t)) return 'rate_limit_error';
  if (/overload|unavailable|capacity/.test(t)) return 'overloaded_error';
  if (/timeout|timed_out|deadline/.test(t)) return 'timeout_error';
  if (/auth|api_key/.test(t)) return 'authentication_error';
  if (/permission|forbidden/.test(t)) return 'permission_error';
  if (/not_found|model_not_found/.test(t)) return 'not_found_error';
  if (/context_length|invalid|bad_request/.test(t)) return 'invalid_request_error';
  return 'api_error';
}

/**
 * The HTTP status of a non-streaming answer whose turn ended with an error event of this type.
 * Such errors come from the backend's stream (an error chunk, a dropped connection, a stream that
 * carried no valid event), so `api_error` / `server_error` are 502 Bad Gateway.
 */
export function errorTypeToStatus(type: string): number {
  switch (type) {
    case 'api_error':
    case 'server_error':
    case 'stream_truncated': // the backend stream ended without its finish (SPEC §12)
    case 'bad_stream': // the backend's body was not an event stream of its format
      return 502;
    case 'invalid_request_error':
      return 400;
    case 'authentication_error':
      return 401;
    case 'permission_error':
      return 403;
    case 'not_found_error':
      return 404;
    case 'conflict_error':
      return 409;
    case 'request_too_large':
      return 413;
    case 'rate_limit_error':
      return 429;
    case 'overloaded_error':
      return 529;
    case 'timeout_error':
      return 504;
    default:
      return 500;
  }
}

export interface AnthropicErrorBody {
  type: 'error';
  error: { type: string; message: string };
}

/** An error the gateway answers with before the response is committed. */
export class GatewayError extends Error {
  readonly status: number;
  readonly type: string;
  /** Extra response headers (e.g. retry-after). */
  readonly headers?: Record<string, string>;

  constructor(status: number, message: string, type?: string, headers?: Record<string, string>) {
    super(message);
    this.name = 'GatewayError';
    this.status = status;
    this.type = type ?? statusToErrorType(status);
    if (headers) this.headers = headers;
  }

  body(): AnthropicErrorBody {
    return { type: 'error', error: { type: this.type, message: this.message } };
  }
}

export function invalidRequest(message: string): GatewayError {
  return new GatewayError(400, message, 'invalid_request_error');
}

/** Characters of a backend's error message the client sees (the debug log has the capped body). */
export const UPSTREAM_MESSAGE_MAX = 300;

/**
 * The client's message for a backend error: `upstream: HTTP <status>: <message>`, the message
 * pulled out of the body (OpenAI `{error:{message}}`, `{message}`, `{detail}`, `{error:"…"}` or
 * plain text; never an HTML page), control characters removed, cut at UPSTREAM_MESSAGE_MAX
 * characters. The client never gets the body verbatim.
 */
export function upstreamErrorMessage(status: number, bodyText: string): string {
  let msg: string | undefined;
  const t = bodyText.trim();
  if (t.startsWith('{')) {
    try {
      const j = JSON.parse(t) as Record<string, unknown>;
      const e = j.error;
      if (typeof e === 'string') msg = e;
      else if (e && typeof e === 'object' && typeof (e as Record<string, unknown>).message === 'string')
        msg = (e as Record<string, unknown>).message as string;
      else if (typeof j.message === 'string') msg = j.message;
      else if (typeof j.detail === 'string') msg = j.detail;
    } catch {
      // not JSON (or cut at the read cap)
    }
  }
  if (msg === undefined && t.length > 0 && !t.startsWith('<') && !t.startsWith('{')) msg = t;
  msg = msg === undefined ? undefined : clientMessage(msg);
  return msg ? `upstream: HTTP ${status}: ${msg}` : `upstream returned HTTP ${status}`;
}

/**
 * A backend's error text as the client may see it (an HTTP error body's message, or the message of
 * an error event in its stream): control characters removed, cut at UPSTREAM_MESSAGE_MAX
 * characters (`…` marks the cut). The full text goes to the debug log only.
 */
export function clientMessage(text: string): string {
  // eslint-disable-next-line no-control-regex -- removing control characters is the point
  const msg = text.slice(0, UPSTREAM_MESSAGE_MAX * 2).replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return msg.length > UPSTREAM_MESSAGE_MAX ? msg.slice(0, UPSTREAM_MESSAGE_MAX) + '…' : msg;
}
