/**
 * Stage 1, parse: the client's JSON body → the canonical request (the route's inbound module),
 * the backend's model and URL, and the request's observation. A body the route rejects is a
 * GatewayError(400) the router answers; the observer still sees that request start and end.
 */
import type * as http from 'node:http';
import { type CanonicalRequest, estimateInputTokens, mapModel } from '../canonical';
import { GatewayError, invalidRequest } from '../errors';
import type { InboundApi } from '../inbound/types';
import { NOOP_OBSERVER, type RequestEnd, type RequestInfo } from '../observer';
import type { Exchange, ExchangeContext } from './context';

export interface Arrival {
  ctx: ExchangeContext;
  api: InboundApi;
  body: unknown;
  req: http.IncomingMessage;
  res: http.ServerResponse;
  reqId: string;
  t0: number;
  ac: AbortController;
  path: string;
}

/** The request as the later stages see it; throws (observed) when the body is not a valid request. */
export function parseRequest(a: Arrival): Exchange {
  const { ctx, api, req, res, reqId, t0, ac, path } = a;
  const observer = ctx.observer ?? NOOP_OBSERVER;
  let creq: CanonicalRequest;
  try {
    creq = api.parse(a.body);
    ctx.validate?.(creq);
  } catch (err) {
    const b = (typeof a.body === 'object' && a.body !== null ? a.body : {}) as { model?: unknown; stream?: unknown };
    const model = typeof b.model === 'string' ? b.model : '';
    observer.start(requestInfo(a, b.stream === true, model, model)).end(thrownEnd(err, 'invalid_request'));
    throw err;
  }
  const upstreamModel = mapModel(ctx.models, creq.model);
  const obs = observer.start(requestInfo(a, creq.stream, creq.model, upstreamModel));
  const x: Exchange = {
    ctx,
    api,
    req,
    res,
    reqId,
    t0,
    ac,
    creq,
    upstreamModel,
    estimate: estimateInputTokens(creq),
    obs,
    logBase: { reqId, path, stream: creq.stream, model: creq.model, upstreamModel, messages: creq.messages.length, tools: creq.tools?.length ?? 0 },
    stats: { toolUses: 0, malformed: 0, warnings: 0 },
    clientGone: false,
    shutdownEnded: false,
  };
  return x;
}

/**
 * The backend request's body and URL (a model name that cannot go into the URL is the client's
 * error); tools the backend cannot take are named in a response header and the log.
 */
export function upstreamRequest(x: Exchange): { body: unknown; url: URL } {
  const { ctx, creq, upstreamModel } = x;
  const body = ctx.upstreamFormat.body(creq, { ...ctx.bodyOptions, model: upstreamModel });
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
    const outcome = err.status === 503 && err.type === 'overloaded_error' ? 'shutdown' : stage;
    return { status: err.status, outcome, errorType: err.type, toolUses: 0, malformedCalls: 0 };
  }
  return { status: 500, outcome: 'internal_error', errorType: 'api_error', toolUses: 0, malformedCalls: 0 };
}
