/**
 * An exception inside one request — a bug in a stage, a route module's encoder, an observer hook,
 * or an engine listener — ends that request only: 500 with the inbound API's error body before the
 * commit point, the API's error frame after it. The process and every other stream carry on.
 *
 * `reportFault` is the one place such an exception is told: logged once per request at error
 * (`internal_error` with the request id, the stage, the error's name and where it was thrown —
 * never its message, which could quote a body) and counted (`sluice_gateway_internal_errors_total`
 * by stage).
 */
import { GatewayError } from '../errors';
import type { OutputEvent } from '../../release/output';
import type { Exchange, ExchangeContext, PipelineStage } from './context';

/** The exchange pipeline's stages, declared with the exchange's context (context.ts). */
export type { PipelineStage } from './context';

/** What the client is told (no detail of the bug: the log has it, under the same request id). */
export const INTERNAL_MESSAGE = 'internal gateway error';

/** The API's error frame after the commit point. */
export const INTERNAL_ERROR_EVENT: OutputEvent = { type: 'error', error: { type: 'api_error', message: INTERNAL_MESSAGE } };

/** Where an exception was thrown: the first stack frame (a file and line, no data). */
function thrownAt(err: unknown): string | undefined {
  const stack = err instanceof Error ? err.stack : undefined;
  const frame = stack?.split('\n').find((l) => l.trimStart().startsWith('at '));
  return frame?.trim().slice(3, 300);
}

/** Log and count one request's exception (the first one only; later ones are consequences). */
export function reportFault(x: { ctx: ExchangeContext; reqId: string; fault?: PipelineStage }, stage: PipelineStage, err: unknown): void {
  if (x.fault !== undefined) return;
  x.fault = stage;
  const at = thrownAt(err);
  x.ctx.logger.error('internal_error', { reqId: x.reqId, stage, error: err instanceof Error ? err.name : typeof err, ...(at !== undefined ? { at } : {}) });
  x.ctx.metrics?.internalError(stage);
}

/**
 * A throw before the commit point, as the router answers it: a GatewayError as it is; anything else
 * reported (once) and answered as a 500 `api_error`.
 */
export function contained(x: { ctx: ExchangeContext; reqId: string; fault?: PipelineStage }, stage: PipelineStage, err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  reportFault(x, stage, err);
  return new GatewayError(500, INTERNAL_MESSAGE, 'api_error');
}

/** True once the client has the response's head (the commit point is passed). */
export function committed(x: Exchange): boolean {
  return x.res.headersSent;
}
