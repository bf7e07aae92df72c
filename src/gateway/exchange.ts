/**
 * One inbound request, whatever its API, against the configured upstream, as a pipeline of named
 * stages (each in src/gateway/exchange/):
 *
 *   1. parse    (parse.ts)   client JSON → route module `parse` → canonical request; backend body/URL
 *   2. open     (open.ts)    backend request → its 2xx response (failures: HTTP errors, pre-commit)
 *   3. decode   (decode.ts)  backend bytes → src/wire reader → StreamEvents, one socket read at a time
 *   4. control  (control.ts) StreamEvents → TurnController (gateway mode) → ordered OutputEvents
 *   5. encode   (sink.ts)    OutputEvents → route module encoder → SSE (one write per backend
 *                            socket read) or one JSON body
 *   6. finish   (finish.ts)  terminal frame / body, the `request` log line, the observer's end
 *
 * Where one backend chunk goes: decode.ts `Decoder.data` keeps it; the `read` microtask (after the
 * socket read's last chunk) → `reader.write` (src/wire: SSE scan, skim.ts fast path for a text
 * delta) → `Turn.feed` → `TurnController.feed` (text: limits, history runs, no machine event) →
 * `Turn.output` → `ClientSink.push` (the route's encoder: a text delta is one string frame) →
 * `flush` → one `res.write` for the whole read.
 *
 * Commit point: the response is committed (HTTP 200 + the API's first frames) when the backend
 * answers 2xx. Before that, failures are HTTP errors with the inbound API's error body (the router
 * answers what this function throws); after it, a failure is the API's one terminal error frame.
 * A client disconnect aborts the backend request; the drain deadline ends the request (503 before
 * the commit point, an error frame after it). The observer (observer.ts) sees each stage once and
 * the end exactly once, on every path.
 */
import type * as http from 'node:http';
import { performance } from 'node:perf_hooks';
import type { AnsweredResponse } from './sessionLink';
import type { RequestEnd } from './observer';
import type { InboundApi } from './inbound/types';
import { type Exchange, type ExchangeContext } from './exchange/context';
import { parseRequest, thrownEnd, upstreamRequest } from './exchange/parse';
import { openUpstream } from './exchange/open';
import { Turn } from './exchange/control';
import { clientSink } from './exchange/sink';
import { decodeUpstream } from './exchange/decode';
import { finishExchange } from './exchange/finish';
import { contained, type PipelineStage, reportFault } from './exchange/fault';
import type { ClientSink } from './exchange/sink';
import { GatewayError } from './errors';

export { clientKey, type ExchangeContext, type MalformedCallMode, ms, sendJson } from './exchange/context';
export { MALFORMED_KEY, MALFORMED_RAW_KEY, MALFORMED_RAW_MAX, malformedInput } from './exchange/control';

/** Run one request. `api` is the route's inbound module; throws GatewayErrors before the commit point. */
export async function runExchange(
  ctx: ExchangeContext,
  api: InboundApi,
  body: Uint8Array,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  reqId: string,
  t0: number,
  ac: AbortController,
  path: string,
): Promise<void> {
  let x: Exchange;
  try {
    x = await parseRequest({ ctx, api, body, req, res, reqId, t0, ac, path });
  } catch (err) {
    throw contained({ ctx, reqId }, 'parse', err);
  }
  let end: RequestEnd | undefined;
  let stage = 'invalid_request'; // what a throw from here on is, for the observer
  let step: PipelineStage = 'open'; // where a throw from here on came from, for the log and the metric
  let unwatch: (() => void) | undefined;
  let turn: Turn | undefined;
  let sink: ClientSink | undefined;
  try {
    const upstream = upstreamRequest(x);
    unwatch = watchClientAndDrain(x);
    stage = 'upstream_error';
    const upRes = await openUpstream(x, upstream);
    if (!isResponse(upRes)) return void (end = upRes);
    stage = 'stream_error';
    step = 'control';
    sink = clientSink(x);
    turn = new Turn(x, sink);
    step = 'encode';
    sink.commit();
    step = 'decode';
    await decodeUpstream(x, upRes, turn, sink);
    step = 'finish';
    const streamEndAt = performance.now();
    await sink.settled?.(); // a huge call's last pieces (src/encode/pieces.ts) before the response ends
    end = finishExchange(x, turn, sink);
    if (end.outcome === 'ok') rememberCalls(x, streamEndAt);
  } catch (err) {
    if (!(err instanceof GatewayError) && x.res.headersSent) {
      // After the commit point: the stream ends with the API's error frame, here and nowhere else.
      end = endAfterFault(x, turn, sink, step, err);
      return;
    }
    end = thrownEnd(err, stage);
    throw contained(x, step, err);
  } finally {
    unwatch?.();
    try {
      x.obs.end(end ?? thrownEnd(undefined, stage));
    } catch (err) {
      reportFault(x, 'finish', err);
    }
  }
}

/** A committed response whose request threw outside the turn's own guards (fault.ts). */
function endAfterFault(x: Exchange, turn: Turn | undefined, sink: ClientSink | undefined, step: PipelineStage, err: unknown): RequestEnd {
  if (turn && sink) {
    turn.fault(step, err);
    return finishExchange(x, turn, sink);
  }
  reportFault(x, step, err);
  if (!x.res.destroyed) x.res.destroy();
  return { status: 200, outcome: 'internal_error', errorType: 'api_error', toolUses: x.stats.toolUses, malformedCalls: x.stats.malformed };
}

/** The call ids this response gave its client, for linking the request that answers them (sessionLink.ts). */
function rememberCalls(x: Exchange, streamEndAt: number): void {
  const { links } = x.ctx;
  if (links === undefined || x.callIds.length === 0) return;
  const r: AnsweredResponse = { requestId: x.reqId, arm: x.info.arm ?? 'early', format: x.ctx.wire, model: x.upstreamModel, arrivedAt: x.t0, streamEndAt };
  if (x.info.trace !== undefined) r.trace = x.info.trace;
  links.remember(x.callIds, r);
}

function isResponse(r: http.IncomingMessage | RequestEnd): r is http.IncomingMessage {
  return !('outcome' in r);
}

/**
 * The client leaving aborts the backend request. Graceful shutdown: before the commit point the
 * drain deadline aborts the backend request and the client gets 503; after it, the decode stage's
 * `endForShutdown` writes one error event. Returns the drain registration's release.
 */
function watchClientAndDrain(x: Exchange): (() => void) | undefined {
  const onClose = (): void => {
    if (!x.res.writableFinished) {
      x.clientGone = true;
      x.ac.abort();
    }
  };
  x.res.on('close', onClose);
  if (x.req.socket.destroyed) onClose();
  return x.ctx.drain?.register((message) => {
    x.shutdownEnded = true;
    if (x.endForShutdown) x.endForShutdown(message);
    else x.ac.abort();
  });
}
