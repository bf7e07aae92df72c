/**
 * Stage 6, finish: end the response and write the request's log line. A client that left gets
 * nothing more (its turn is dropped); a stream gets its terminal frame if the turn produced none;
 * a non-streaming request gets its one JSON body.
 */
import { performance } from 'node:perf_hooks';
import type { RequestEnd } from '../observer';
import { endOf, type Exchange, ms, sendJson, statFields } from './context';
import { INTERNAL_MESSAGE } from './fault';
import type { Turn } from './control';
import type { ClientSink } from './sink';

export function finishExchange(x: Exchange, turn: Turn, sink: ClientSink): RequestEnd {
  const { ctx, stats } = x;
  if ((x.clientGone || x.ac.signal.aborted) && x.fault === undefined) {
    turn.ctrl.abort('drop');
    sink.abandon();
    const outcome = ctx.closing() ? 'shutdown' : 'client_disconnect';
    ctx.logger.info('request', { ...x.logBase, status: 200, outcome, toolUses: stats.toolUses, durationMs: ms(performance.now() - x.t0) });
    if (!x.res.destroyed) x.res.destroy();
    return endOf(200, outcome, stats);
  }
  let status: number;
  try {
    // A request that faulted may have a broken encoder or a closed connection: its end is best effort.
    if (x.fault !== undefined && !x.res.headersSent && !x.res.destroyed) {
      // Not committed yet (a whole-body answer): the API's 500.
      sendJson(x.res, 500, x.api.errorBody('api_error', INTERNAL_MESSAGE));
      status = 500;
    } else status = x.fault !== undefined && x.res.destroyed ? 200 : sink.close();
  } catch (err) {
    if (x.fault === undefined) throw err;
    if (!x.res.destroyed) x.res.destroy();
    status = x.res.headersSent ? 200 : 500;
  }
  const outcome = x.fault !== undefined ? 'internal_error' : status !== 200 || stats.errorType !== undefined ? 'stream_error' : 'ok';
  ctx.logger.info('request', {
    ...x.logBase,
    status,
    outcome,
    ...statFields(stats),
    ...(status === 200 ? { inputTokensEstimate: x.estimate } : {}),
    durationMs: ms(performance.now() - x.t0),
  });
  return endOf(status, outcome, stats);
}
