/**
 * Stage 4, control: the request's TurnController (gateway mode) between the decoded events and the
 * client. Its ordered OutputEvents go to the sink; what they say is counted for the log. Text
 * passes straight through (the controller only holds it back behind a call that is still open);
 * calls are released whole, each as soon as the engine judges it ready (SPEC §5).
 *
 * Malformed calls (arguments that are not a complete JSON object when the call is done) are never
 * silent: `pass` (default) hands the call to the client with a marker input (see `malformedInput`),
 * `drop` leaves it out and says so in a text marker; both log `malformed_call` at warn. A request
 * for at most one call (`disable_parallel_tool_use` / `parallel_tool_calls: false`) always drops.
 */
import { mapStopReason } from '../../encode/anthropicSse';
import { type ControllerWarning, TurnController } from '../../engine/controller';
import type { OutputEvent } from '../../release/output';
import type { StreamEvent } from '../../wire/events';
import { singleToolRequested } from '../canonical';
import { clientMessage, toAnthropicErrorType } from '../errors';
import { backendEndOf, type Exchange, type MalformedCallMode } from './context';
import { INTERNAL_ERROR_EVENT, type PipelineStage, reportFault } from './fault';
import type { ClientSink } from './sink';

/** The marker key of a passed-through malformed call's input (documented in docs/gateway.md). */
export const MALFORMED_KEY = '_sluice_malformed_call';
/** The raw argument text of a passed-through malformed call (capped at MALFORMED_RAW_MAX characters). */
export const MALFORMED_RAW_KEY = '_sluice_raw_arguments';
export const MALFORMED_RAW_MAX = 16_384;

/** The marker input a passed-through malformed call carries (the client's validation tells the model). */
export function malformedInput(raw: string): Record<string, unknown> {
  const trimmed = raw.trim();
  const reason =
    trimmed.length === 0
      ? 'the model sent no arguments'
      : trimmed.startsWith('{')
        ? 'the arguments are not a complete JSON object (cut off or invalid)'
        : 'the arguments are not a JSON object';
  return {
    [MALFORMED_KEY]: `sluice: ${reason}; the call was not repaired — send it again with complete arguments`,
    [MALFORMED_RAW_KEY]: trimmed.length > MALFORMED_RAW_MAX ? trimmed.slice(0, MALFORMED_RAW_MAX) + '…' : trimmed,
  };
}

/** One request's turn: the controller, fed by the decode stage, and its way to the client. */
export class Turn {
  readonly ctrl: TurnController;
  /** Resolves when the client's terminal event (`end` or `error`) has been handed to the sink. */
  readonly terminated: Promise<void>;
  private terminate!: () => void;
  /** Identity and raw fragments per call index, kept only to describe a malformed call. */
  private readonly notes = new Map<number, { name?: string; parts: string[] }>();
  private readonly malformedMode: MalformedCallMode;
  /** Anthropic clients get Anthropic error types (a backend's `server_error` is an `api_error`). */
  private readonly anthropicErrors: boolean;

  constructor(
    private readonly x: Exchange,
    private readonly sink: ClientSink,
  ) {
    const { ctx, creq } = x;
    const single = singleToolRequested(creq);
    // The holdout arm (--release-holdout) holds every call to the end of the backend stream.
    const holdToEnd = x.info.arm === 'holdout';
    this.ctrl = new TurnController({ mode: 'gateway', singleTool: single, format: ctx.wire, completion: ctx.completion, inspect: ctx.inspect, holdToEnd });
    this.terminated = new Promise<void>((r) => (this.terminate = r));
    // A single-tool request keeps the drop rule: a valid sibling must not lose its one slot to a broken call.
    this.malformedMode = single ? 'drop' : ctx.malformedCalls;
    this.anthropicErrors = x.api.name === 'messages';
    // The turn's own listeners first: a fault in an observer's listener finds them in place.
    this.ctrl.events.on('fault', ({ error }) => this.fault('control', error));
    this.ctrl.events.on('output', (e) => this.output(e));
    this.ctrl.events.on('warning', (w) => this.warning(w));
    ctx.metrics?.observeTurn(this.ctrl.events);
    x.obs.controller(this.ctrl);
  }

  /** One decoded event (the decode stage's fence has already dropped what came after the finish). */
  feed(ev: StreamEvent): void {
    if (this.faulted) return;
    try {
      if (ev.type === 'call.fragment') this.note(ev.index).parts.push(ev.text);
      else if (ev.type === 'call.identity' && ev.name) this.note(ev.index).name = ev.name;
      this.ctrl.feed(ev);
    } catch (err) {
      this.fault('control', err);
    }
  }

  private faulted = false;

  /**
   * An exception inside this request's turn (fault.ts): reported once, the client gets the API's
   * error frame (or, when even that cannot be written, the connection is closed), and the turn is
   * over — the decode stage stops and the finish stage ends the response. Nothing else is affected.
   */
  fault(stage: PipelineStage, err: unknown): void {
    if (this.faulted) return;
    this.faulted = true;
    const { x } = this;
    reportFault(x, stage, err);
    x.stats.errorType = 'api_error';
    try {
      this.sink.push(INTERNAL_ERROR_EVENT);
      this.sink.flush();
    } catch {
      if (!x.res.destroyed) x.res.destroy();
    }
    this.terminate();
  }

  private output(e: OutputEvent): void {
    if (this.faulted) return;
    try {
      this.encode(e);
    } catch (err) {
      this.fault('encode', err);
    }
  }

  private encode(e: OutputEvent): void {
    if (e.type === 'text') return this.sink.push(e);
    // Passed-through malformed calls count as released calls for the stop reason.
    if (e.type === 'end' && this.x.stats.malformed > 0) e = { ...e, released: e.released + this.x.stats.malformed };
    if (e.type === 'end') {
      this.x.stats.backendEnd = 'finished';
      this.x.ctx.metrics?.backendEnd('finished');
    } else if (e.type === 'error') {
      // SPEC §12: a backend stream that ended without its terminal signal is an error to the
      // client (never a successful end), and says so; counted by how the backend ended.
      const end = backendEndOf(e.error.type);
      this.x.stats.backendEnd = end;
      if (!this.x.shutdownEnded) this.x.ctx.metrics?.backendEnd(end);
      if (end === 'truncated') e = { ...e, error: { ...e.error, message: `the backend stream ended early: ${e.error.message}` } };
      e = this.clientError(e);
    }
    this.count(e);
    this.sink.push(e);
  }

  /**
   * A stream error as the client sees it: the backend's message (an error event in its stream)
   * summarised like an HTTP error body (errors.ts `clientMessage`: 300 characters; the full text
   * only in the debug log); Anthropic clients get Anthropic error types.
   */
  private clientError(e: Extract<OutputEvent, { type: 'error' }>): OutputEvent {
    const message = clientMessage(e.error.message);
    if (message !== e.error.message) this.x.ctx.logger.debug('upstream_error_message', { reqId: this.x.reqId, type: e.error.type, message: e.error.message.slice(0, 16_384) });
    const type = this.anthropicErrors ? toAnthropicErrorType(e.error.type) : e.error.type;
    return message === e.error.message && type === e.error.type ? e : { ...e, error: { ...e.error, type, message } };
  }

  private count(e: OutputEvent): void {
    const { stats, ctx } = this.x;
    if (e.type === 'tool_use') stats.toolUses++;
    else if (e.type === 'usage') {
      if (e.usage.outputTokens !== undefined) stats.outputTokens = e.usage.outputTokens;
      if (e.usage.promptTokens !== undefined) stats.promptTokens = e.usage.promptTokens;
    } else if (e.type === 'end') {
      stats.stopReason = mapStopReason(e.finish, e.released, ctx.toolUseOnStop);
      this.terminate();
    } else if (e.type === 'error') {
      stats.errorType = e.error.type;
      if (!this.x.shutdownEnded) ctx.metrics?.upstreamError(e.error.type);
      this.terminate();
    }
  }

  private warning(w: ControllerWarning): void {
    const { x } = this;
    x.stats.warnings++;
    if (w.code !== 'invalid_call' || w.index === undefined) {
      x.ctx.logger.warn('engine_warning', { reqId: x.reqId, code: w.code, ...(w.index !== undefined ? { index: w.index } : {}), message: w.message });
      return;
    }
    // Sent before the engine resolves the call's slot, so whatever we emit keeps the call's place.
    const note = this.notes.get(w.index);
    const name = note?.name;
    const raw = note?.parts.join('') ?? '';
    x.ctx.logger.warn('malformed_call', { reqId: x.reqId, index: w.index, name: name ?? null, argsBytes: Buffer.byteLength(raw), action: name ? this.malformedMode : 'drop' });
    if (name && this.malformedMode === 'pass') {
      x.stats.malformed++;
      const input = malformedInput(raw);
      this.output({ type: 'tool_use', index: w.index, backendId: '', name, input, argsText: JSON.stringify(input), repaired: false });
    } else {
      const what = name ? ` "${name}"` : ' without a name';
      this.output({ type: 'text', text: `\n[sluice: dropped tool call${what} (call ${w.index}): its arguments were not a complete JSON object]\n` });
    }
  }

  private note(index: number): { name?: string; parts: string[] } {
    let n = this.notes.get(index);
    if (!n) this.notes.set(index, (n = { parts: [] }));
    return n;
  }
}
