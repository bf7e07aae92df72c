/**
 * Stage 1, parse: the client's JSON body → the canonical request (the route's inbound module),
 * validated, → the backend's body and URL, and the request's observation. A body of at least the
 * body worker's threshold is translated in a worker (worker/pool.ts), a smaller one inline: both
 * run `translateBody` (worker/translate.ts). A body the route rejects is a GatewayError(400) the
 * router answers; a worker that crashes, runs out of memory or times out is a 500/504 the router
 * answers too (logged as `body_worker_failed`). The observer sees that request start and end.
 */
import type * as http from 'node:http';
import { performance } from 'node:perf_hooks';
import { GatewayError, invalidRequest } from '../errors';
import type { InboundApi } from '../inbound/types';
import { clientToolLookup } from '../inbound/responsesTools';
import { NOOP_OBSERVER, type RequestEnd, type RequestInfo } from '../observer';
import { chooseArm } from '../holdout';
import { sessionIdOf } from '../sessionLink';
import type { CanonicalRequest } from '../canonical';
import { type Counted, countBody, errorOf, errorRecord, type Translated, translateBody } from '../worker/translate';
import { type Exchange, type ExchangeContext, ms } from './context';

export interface Arrival {
  ctx: ExchangeContext;
  api: InboundApi;
  /** The body's UTF-8 bytes, checked by body.ts (complete JSON, depth, size). */
  body: Uint8Array;
  req: http.IncomingMessage;
  res: http.ServerResponse;
  reqId: string;
  t0: number;
  ac: AbortController;
  path: string;
}

/** The request as the later stages see it; throws (observed) when the body is not a valid request. */
export async function parseRequest(a: Arrival): Promise<Exchange> {
  const { ctx, api, req, res, reqId, t0, ac, path } = a;
  const observer = ctx.observer ?? NOOP_OBSERVER;
  const t = await translate(a);
  if (!t.ok) {
    const err = errorOf(t.error);
    if (t.error.internal) {
      ctx.logger.error('internal_error', { reqId, path, stage: 'parse', error: t.error.internal });
      ctx.metrics?.internalError('parse');
    }
    observer.start(requestInfo(a, t.stream, t.model, t.upstreamModel ?? t.model)).end(thrownEnd(err, 'invalid_request'));
    throw err;
  }
  const { head, upstreamModel } = t;
  const info = requestInfo(a, head.stream, head.model, upstreamModel);
  info.arm = chooseArm(ctx.releaseHoldout ?? 0, ctx.random);
  const continues = ctx.links?.continues(head.answers ?? [], t0);
  if (continues !== undefined) info.continues = continues;
  const sessionId = sessionIdOf(req.headers);
  if (sessionId !== undefined) info.sessionId = sessionId;
  const obs = observer.start(info);
  const x: Exchange = {
    ctx,
    api,
    req,
    res,
    reqId,
    t0,
    ac,
    creq: head,
    upstreamModel,
    estimate: t.estimate,
    obs,
    logBase: { reqId, path, stream: head.stream, model: head.model, upstreamModel, messages: head.messageCount, tools: head.tools?.length ?? 0 },
    stats: { toolUses: 0, malformed: 0, warnings: 0 },
    clientGone: false,
    shutdownEnded: false,
    upstreamBody: t.payload,
    info,
    callIds: [],
  };
  // The head is plain data on both paths (a structured-clone copy from the body worker, or the
  // inline translation's own): the one reader rebuilds what the encoder asks.
  const clientTool = clientToolLookup(head.clientTools);
  return clientTool ? { ...x, clientTool } : x;
}

/** The body translated in a worker (large bodies, when one can run here) or inline. */
async function translate(a: Arrival): Promise<Translated<string | Uint8Array>> {
  const { ctx, api } = a;
  const pool = ctx.bodyWorker;
  if (pool && a.body.byteLength >= pool.options.aboveBytes) {
    const t0 = performance.now();
    const bodyBytes = a.body.byteLength;
    const r = await pool.translate(api.name, a.body);
    if (r.kind === 'done') {
      ctx.logger.debug('body_worker', { reqId: a.reqId, bodyBytes, ms: ms(performance.now() - t0) });
      return r.result;
    }
    if (r.kind === 'failed') {
      ctx.logger.error('body_worker_failed', { reqId: a.reqId, path: a.path, failure: r.failure, code: r.code, bodyBytes });
      return { ok: false, error: errorRecord(r.error), model: '', stream: false };
    }
    // 'inline': no worker can run here (the pool logged why once).
  }
  return translateBody(a.body, { api, validate: ctx.validate, models: ctx.models, upstreamFormat: ctx.upstreamFormat, bodyOptions: ctx.bodyOptions });
}

/**
 * `/v1/messages/count_tokens`: the body's input token estimate, counted in a body worker when the
 * body is at least the worker's threshold (like a model request's translation), else inline.
 * Throws the request's GatewayError (400), or the worker's failure (500/504, logged).
 */
export async function countTokens(
  ctx: ExchangeContext,
  bytes: Uint8Array,
  validate: (creq: Pick<CanonicalRequest, 'messages' | 'tools'>) => void,
  reqId: string,
): Promise<number> {
  let c: Counted | undefined;
  const pool = ctx.bodyWorker;
  if (pool && bytes.byteLength >= pool.options.aboveBytes) {
    const t0 = performance.now();
    const bodyBytes = bytes.byteLength;
    const r = await pool.count(bytes);
    if (r.kind === 'failed') {
      ctx.logger.error('body_worker_failed', { reqId, path: '/v1/messages/count_tokens', failure: r.failure, code: r.code, bodyBytes });
      throw r.error;
    }
    if (r.kind === 'done') {
      ctx.logger.debug('body_worker', { reqId, bodyBytes, ms: ms(performance.now() - t0) });
      c = r.result;
    }
  }
  c ??= countBody(bytes, validate);
  if (!c.ok) throw errorOf(c.error);
  return c.estimate;
}

/**
 * The backend request's body (JSON text or bytes, handed over once: the exchange lets go of it)
 * and URL (a model name that cannot go into the URL is the client's error); tools the backend
 * cannot take are named in a response header and the log.
 */
export function upstreamRequest(x: Exchange): { body: string | Uint8Array; url: URL } {
  const { ctx, creq, upstreamModel } = x;
  const body = x.upstreamBody ?? '';
  x.upstreamBody = undefined;
  let url: URL;
  try {
    url = ctx.upstreamFormat.url(ctx.upstreamBase, upstreamModel);
  } catch {
    throw invalidRequest(`model ${JSON.stringify(upstreamModel)} cannot be used in the upstream URL`);
  }
  if (creq.droppedTools) {
    x.res.setHeader('x-sluice-dropped-tools', creq.droppedTools.join(', '));
    ctx.logger.warn('tools_dropped', { reqId: x.reqId, tools: creq.droppedTools });
  }
  return { body, url };
}

function requestInfo(a: Arrival, stream: boolean, model: string, upstreamModel: string): RequestInfo {
  return {
    reqId: a.reqId,
    api: a.api.name,
    path: a.path,
    stream,
    model,
    upstreamModel,
    upstreamFormat: a.ctx.upstreamFormat.name,
    wire: a.ctx.wire,
    headers: a.req.headers,
    arrivedAt: a.t0,
  };
}

/** The end of a request that threw before its response was committed (the router answers the error). */
export function thrownEnd(err: unknown, stage: string): RequestEnd {
  if (err instanceof GatewayError) {
    // A 503 with `retry-after` is a memory-budget refusal (upstream/answer.ts); without, the drain.
    const outcome = err.status === 503 && err.type === 'overloaded_error' ? (err.headers?.['retry-after'] !== undefined ? 'overloaded' : 'shutdown') : stage;
    return { status: err.status, outcome, errorType: err.type, toolUses: 0, malformedCalls: 0 };
  }
  return { status: 500, outcome: 'internal_error', errorType: 'api_error', toolUses: 0, malformedCalls: 0 };
}
