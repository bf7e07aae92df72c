/**
 * Stage 6, finish: end the response and write the request's log line. A client that left gets
 * nothing more (its turn is dropped); a stream gets its terminal frame if the turn produced none;
 * a non-streaming request gets its one JSON body.
 */
import { performance } from 'node:perf_hooks';
import type { RequestEnd } from '../observer';
import { endOf, type Exchange, ms, statFields } from './context';
import type { Turn } from './control';
import type { ClientSink } from './sink';

export function finishExchange(x: Exchange, turn: Turn, sink: ClientSink): RequestEnd {
  const { ctx, stats } = x;
  if (x.clientGone || x.ac.signal.aborted) {
    turn.ctrl.abort('drop');
    sink.abandon();
    const outcome = ctx.closing() ? 'shutdown' : 'client_disconnect';
    ctx.logger.info('request', { ...x.logBase, status: 200, outcome, toolUses: stats.toolUses, durationMs: ms(performance.now() - x.t0) });
    if (!x.res.destroyed) x.res.destroy();
    return endOf(200, outcome, stats);
  }
  const status = sink.close();
  const outcome = status !== 200 || stats.errorType !== undefined ? 'stream_error' : 'ok';
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
