/**
 * Stage 2, open upstream: send the backend request and wait for its answer. Everything that goes
 * wrong here is before the commit point: a GatewayError the router answers with the inbound API's
 * error body (non-2xx, not an event stream, refused, timed out; 503 when the drain deadline came
 * first), or — the client went away — nothing to answer at all (logged as 499).
 */
import type * as http from 'node:http';
import { performance } from 'node:perf_hooks';
import { GatewayError } from '../errors';
import { checkUpstreamContentType } from '../hygiene';
import type { RequestEnd } from '../observer';
import { SHUTDOWN_MESSAGE } from '../shutdown';
import { clientKey, type Exchange, ms } from './context';

/** The backend's 2xx event-stream (or JSON) response, or the end of a request whose client left. */
export async function openUpstream(x: Exchange, up: { body: string | Uint8Array; url: URL }): Promise<http.IncomingMessage | RequestEnd> {
  const { ctx, obs } = x;
  let upRes: http.IncomingMessage;
  try {
    upRes = await ctx.upstream.open(up.body, {
      signal: x.ac.signal,
      url: up.url,
      clientAuth: ctx.forwardClientKey === false ? undefined : clientKey(x.req),
      auth: ctx.upstreamFormat.authHeaders,
      headers: obs.upstreamHeaders(),
    });
  } catch (err) {
    if (err instanceof Error && err.name === 'AbortError') {
      if (x.shutdownEnded && !x.clientGone) throw new GatewayError(503, SHUTDOWN_MESSAGE, 'overloaded_error');
      const outcome = ctx.closing() ? 'shutdown' : 'client_disconnect';
      ctx.logger.info('request', { ...x.logBase, status: 499, outcome, durationMs: ms(performance.now() - x.t0) });
      return { status: 499, outcome, toolUses: 0, malformedCalls: 0 };
    }
    obs.upstreamFailed(err instanceof GatewayError ? err.type : 'api_error');
    if (err instanceof GatewayError) ctx.metrics?.upstreamError(err.type);
    throw err;
  }
  const status = upRes.statusCode ?? 502;
  obs.upstreamResponse(status);
  if (status < 200 || status >= 300) {
    const ge = await ctx.upstream.errorFrom(upRes);
    ctx.logger.warn('upstream_error', { reqId: x.reqId, upstreamStatus: status });
    ctx.metrics?.upstreamError(ge.type);
    throw ge;
  }
  const notSse = checkUpstreamContentType(upRes);
  if (notSse) {
    upRes.destroy();
    ctx.logger.warn('upstream_error', { reqId: x.reqId, upstreamStatus: status, contentType: String(upRes.headers['content-type'] ?? '').slice(0, 80) });
    ctx.metrics?.upstreamError('not_event_stream');
    throw notSse;
  }
  return upRes;
}
