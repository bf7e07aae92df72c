/**
 * One request body → what the gateway sends its backend: JSON.parse → the route's `parse`
 * (canonical request) → the gateway's validation → model mapping → the upstream module's `body`
 * → JSON text. The same function runs inline on the event loop (bodies under the worker
 * threshold, or when no worker can run) and in the body worker (bodyWorker.ts): one piece of code
 * for both paths, so their backend bodies are byte-identical.
 *
 * What comes back is small: the request's head (the canonical request without its conversation,
 * what the stages after parse read), the mapped model, the token estimate and the backend body as
 * text. A failure is a plain record (it crosses the thread boundary): the GatewayError's status,
 * message and type, plus what is known of the request for the observer and the log.
 */
import { type CanonicalRequest, estimateInputTokens, type ModelMapping, mapModel } from '../canonical';
import { GatewayError, invalidRequest } from '../errors';
import { checkModelName } from '../modelMatch';
import { parseMessagesRequest } from '../inbound/messages';
import type { InboundApi } from '../inbound/types';
import type { UpstreamBodyOptions, UpstreamFormat } from '../upstream/types';
import { answeredCallIds } from '../sessionLink';

/**
 * The canonical request without its conversation (messages, system prompt): what the stages after
 * parse read. Plain data by design — it comes back from the body worker as a structured-clone copy,
 * which keeps no methods and no class instances — so what the main thread needs beyond data is
 * rebuilt there from it (inbound/responsesTools.ts `clientToolLookup`). `PLAIN_HEAD` below fails
 * to compile when a field that is not plain data is added.
 */
export type RequestHead = Omit<CanonicalRequest, 'messages' | 'system' | 'systemBlocks'> & {
  /** How many messages the request had (for the log). */
  messageCount: number;
  /** The tool-call ids its trailing tool results answer (sessionLink.ts `answeredCallIds`; ids only). */
  answers?: string[];
};

/** True when T survives a structured clone unchanged: no functions, no class instances with methods, no Map/Set. */
export type IsPlainData<T> = T extends (...args: never[]) => unknown
  ? false
  : T extends readonly (infer U)[]
    ? IsPlainData<U>
    : T extends object
      ? { [K in keyof T]-?: IsPlainData<T[K]> }[keyof T] extends true
        ? true
        : false
      : true;
/** Compile-time check: the head the worker hands back is plain data. */
export const PLAIN_HEAD: IsPlainData<RequestHead> & IsPlainData<ErrorRecord> = true;

/** What the translation needs from the gateway (the inline path reads it from the ExchangeContext). */
export interface TranslateSetup {
  api: InboundApi;
  /** The gateway's check of the canonical request (validate.ts); throws GatewayError(400). */
  validate?: (creq: CanonicalRequest) => void;
  models: ModelMapping;
  upstreamFormat: UpstreamFormat;
  bodyOptions: Omit<UpstreamBodyOptions, 'model'>;
}

/** A GatewayError as data (it crosses the worker boundary). */
export interface ErrorRecord {
  status: number;
  message: string;
  type: string;
  headers?: Record<string, string>;
  /** Set when the error was not a GatewayError (a bug): its name, for the log (never its message). */
  internal?: string;
}

export type Translated<P = string> =
  | { ok: true; head: RequestHead; upstreamModel: string; estimate: number; payload: P }
  | { ok: false; error: ErrorRecord; model: string; stream: boolean; upstreamModel?: string };

/** The body's UTF-8 bytes as text (a view on `bytes`, no copy of the bytes). */
export function bodyText(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

/** Translate one request body (UTF-8 JSON bytes, already checked by body.ts's scanner). Never throws. */
export function translateBody(bytes: Uint8Array, s: TranslateSetup): Translated {
  let body: unknown;
  try {
    body = JSON.parse(bodyText(bytes));
  } catch {
    return { ok: false, error: errorRecord(invalidRequest('request body is not valid JSON')), model: '', stream: false };
  }
  let creq: CanonicalRequest;
  try {
    creq = s.api.parse(body);
    checkModelName(creq.model);
    s.validate?.(creq);
  } catch (err) {
    const b = (typeof body === 'object' && body !== null ? body : {}) as { model?: unknown; stream?: unknown };
    const model = typeof b.model === 'string' ? b.model : '';
    return { ok: false, error: errorRecord(err), model, stream: b.stream === true };
  }
  body = undefined;
  const upstreamModel = mapModel(s.models, creq.model);
  let payload: string;
  try {
    payload = JSON.stringify(s.upstreamFormat.body(creq, { ...s.bodyOptions, model: upstreamModel }));
  } catch (err) {
    return { ok: false, error: errorRecord(err), model: creq.model, stream: creq.stream, upstreamModel };
  }
  return { ok: true, head: headOf(creq), upstreamModel, estimate: estimateInputTokens(creq), payload };
}

/** What `/v1/messages/count_tokens` answers: the input token estimate, or the request's error. */
export type Counted = { ok: true; estimate: number } | { ok: false; error: ErrorRecord };

/**
 * One count_tokens body (a Messages request; max_tokens not required) → its input token estimate,
 * under the gateway's checks (`validate`: messages and tools). Runs inline or in the body worker,
 * like `translateBody`. Never throws.
 */
export function countBody(bytes: Uint8Array, validate: (creq: Pick<CanonicalRequest, 'messages' | 'tools'>) => void): Counted {
  try {
    const m = parseMessagesRequest(JSON.parse(bodyText(bytes)), { requireMaxTokens: false });
    validate({ messages: m.messages, ...(m.tools ? { tools: m.tools } : {}) });
    return { ok: true, estimate: estimateInputTokens(m) };
  } catch (err) {
    return { ok: false, error: errorRecord(err instanceof SyntaxError ? invalidRequest('request body is not valid JSON') : err) };
  }
}

/** The request without its conversation. */
export function headOf(creq: CanonicalRequest): RequestHead {
  const { messages, system: _system, systemBlocks: _blocks, ...rest } = creq;
  const answers = answeredCallIds(messages);
  return answers.length > 0 ? { ...rest, messageCount: messages.length, answers } : { ...rest, messageCount: messages.length };
}

export function errorRecord(err: unknown): ErrorRecord {
  if (err instanceof GatewayError) {
    const r: ErrorRecord = { status: err.status, message: err.message, type: err.type };
    if (err.headers) r.headers = err.headers;
    return r;
  }
  return { status: 500, message: 'internal gateway error', type: 'api_error', internal: err instanceof Error ? err.name : typeof err };
}

export function errorOf(r: ErrorRecord): GatewayError {
  return new GatewayError(r.status, r.message, r.type, r.headers);
}
