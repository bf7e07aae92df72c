/**
 * One inbound request, whatever its API, against the configured upstream:
 *
 *   client JSON → inbound module `parse` → canonical request → upstream module `body` → backend
 *   backend bytes → src/wire reader → StreamEvents → TurnController (gateway mode) → OutputEvents
 *   → inbound module stream (SSE) or `body` (one JSON answer)
 *
 * Each completed tool call is released as a whole call as soon as the engine judges it ready
 * (SPEC §5), not at the end of the turn. Frames produced by one backend chunk are written in one
 * `res.write`.
 *
 * Commit point: the response is committed (HTTP 200 + the API's first frames) when the backend
 * answers 2xx. Before that, failures are HTTP errors with the inbound API's error body; after it,
 * a failure is the API's one terminal error frame. Keep-alive pings go out while the backend is
 * silent; a client disconnect aborts the backend request; the idle timeout bounds every backend
 * silence.
 *
 * Malformed calls (arguments that are not a complete JSON object when the call is done) are never
 * silent: `pass` (default) hands the call to the client with a marker input (see `malformedInput`),
 * `drop` leaves it out and says so in a text marker; both log `malformed_call` at warn. A request
 * for at most one call (`disable_parallel_tool_use` / `parallel_tool_calls: false`) always drops.
 */
import type * as http from 'node:http';
import { performance } from 'node:perf_hooks';
import type { InspectionEvent } from 'xstate';
import type { IdGenerator } from '../encode/anthropicSse';
import { mapStopReason } from '../encode/anthropicSse';
import { type CompletionMode, TurnController } from '../engine/controller';
import type { OutputEvent } from '../release/output';
import type { StreamEvent, WireFormat } from '../wire/events';
import type { StreamReader } from '../wire/index';
import { type CanonicalRequest, estimateInputTokens, mapModel, type ModelMapping, singleToolRequested, type ToolParam } from './canonical';
import { presentedKey } from './auth';
import { GatewayError, invalidRequest, toAnthropicErrorType } from './errors';
import { checkUpstreamContentType, IdleTimer, sseProgress, StreamFence } from './hygiene';
import type { GatewayMetrics } from './metrics';
import { type Drain, SHUTDOWN_MESSAGE } from './shutdown';
import type { InboundApi, InboundEncodeOptions, InboundStream } from './inbound/types';
import type { Logger } from './log';
import { type ExchangeObserver, NOOP_OBSERVER, type RequestEnd, type RequestInfo, type RequestObservation } from './observer';
import type { UpstreamBodyOptions, UpstreamFormat } from './upstream/types';
import type { UpstreamClient } from './upstream';

/** What a malformed call becomes: passed to the client with a marker input, or dropped with a text marker. */
export type MalformedCallMode = 'pass' | 'drop';

/** The marker key of a passed-through malformed call's input (documented in docs/gateway.md). */
export const MALFORMED_KEY = '_sluice_malformed_call';
/** The raw argument text of a passed-through malformed call (capped at MALFORMED_RAW_MAX characters). */
export const MALFORMED_RAW_KEY = '_sluice_raw_arguments';
export const MALFORMED_RAW_MAX = 16_384;

/** Everything an exchange needs from the gateway (built once in startGateway). */
export interface ExchangeContext {
  upstream: UpstreamClient;
  upstreamFormat: UpstreamFormat;
  upstreamBase: string;
  /** The reader's format (the upstream module's, or dynamo / text:<family> over chat). */
  wire: WireFormat;
  newReader(tools: ToolParam[]): StreamReader;
  models: ModelMapping;
  bodyOptions: Omit<UpstreamBodyOptions, 'model'>;
  logger: Logger;
  completion?: CompletionMode;
  inspect?: (event: InspectionEvent) => void;
  toolUseOnStop: boolean;
  malformedCalls: MalformedCallMode;
  maxBodyBytes: number;
  idleTimeoutMs: number;
  pingIntervalMs: number;
  idGenerator?: IdGenerator;
  /** True once the gateway is closing (for the log's outcome). */
  closing(): boolean;
  /** Operations (metrics.ts, shutdown.ts, hygiene.ts); each optional for embedders of runExchange. */
  metrics?: GatewayMetrics;
  drain?: Drain;
  /** One request from start to its last byte; then it ends with timeout_error. */
  requestDeadlineMs?: number;
  /** False when gateway auth consumed the client's key: it must not reach the backend. Default true. */
  forwardClientKey?: boolean;
  /** Per-request stage hooks (telemetry); default NOOP_OBSERVER. */
  observer?: ExchangeObserver;
  /** Checks every route's canonical request (gateway/validate.ts); throws GatewayError(400). */
  validate?: (creq: CanonicalRequest) => void;
}

interface ExchangeStats {
  toolUses: number;
  malformed: number;
  stopReason?: string;
  outputTokens?: number;
  promptTokens?: number;
  firstByteMs?: number;
  errorType?: string;
  warnings: number;
}

/** The key the client presented (one reading for auth and pass-through: auth.ts `presentedKey`). */
export const clientKey: (req: http.IncomingMessage) => string | undefined = presentedKey;

export function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

/** Per-index identity and raw argument fragments, kept only to describe a malformed call. */
class CallNotes {
  private readonly notes = new Map<number, { name?: string; parts: string[] }>();
  see(e: StreamEvent): void {
    if (e.type === 'call.fragment') this.get(e.index).parts.push(e.text);
    else if (e.type === 'call.identity' && e.name) this.get(e.index).name = e.name;
  }
  private get(index: number): { name?: string; parts: string[] } {
    let n = this.notes.get(index);
    if (!n) {
      n = { parts: [] };
      this.notes.set(index, n);
    }
    return n;
  }
  name(index: number): string | undefined {
    return this.notes.get(index)?.name;
  }
  raw(index: number): string {
    return (this.notes.get(index)?.parts ?? []).join('');
  }
}

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

/** Run one request. `api` is the route's inbound module. */
export async function runExchange(
  ctx: ExchangeContext,
  api: InboundApi,
  body: unknown,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  reqId: string,
  t0: number,
  ac: AbortController,
  path: string,
): Promise<void> {
  const observer = ctx.observer ?? NOOP_OBSERVER;
  let creq: CanonicalRequest;
  try {
    creq = api.parse(body);
    ctx.validate?.(creq);
  } catch (err) {
    const b = (typeof body === 'object' && body !== null ? body : {}) as { model?: unknown; stream?: unknown };
    const model = typeof b.model === 'string' ? b.model : '';
    const obs = observer.start(requestInfo(ctx, api, req, reqId, t0, path, b.stream === true, model, model));
    obs.end(thrownEnd(err, 'invalid_request'));
    throw err;
  }
  const obs = observer.start(requestInfo(ctx, api, req, reqId, t0, path, creq.stream, creq.model, mapModel(ctx.models, creq.model)));
  let result: RequestEnd | undefined;
  let stage = 'invalid_request';
  try {
    result = await exchange(ctx, api, creq, req, res, reqId, t0, ac, path, obs, (s) => (stage = s));
  } catch (err) {
    result = thrownEnd(err, stage);
    throw err;
  } finally {
    obs.end(result ?? thrownEnd(undefined, stage));
  }
}

function requestInfo(
  ctx: ExchangeContext,
  api: InboundApi,
  req: http.IncomingMessage,
  reqId: string,
  t0: number,
  path: string,
  stream: boolean,
  model: string,
  upstreamModel: string,
): RequestInfo {
  return { reqId, api: api.name, path, stream, model, upstreamModel, upstreamFormat: ctx.upstreamFormat.name, wire: ctx.wire, headers: req.headers, arrivedAt: t0 };
}

/** The end of a request that threw before its response was committed (the router answers the error). */
function thrownEnd(err: unknown, stage: string): RequestEnd {
  if (err instanceof GatewayError) {
    const outcome = err.status === 503 && err.type === 'overloaded_error' ? 'shutdown' : stage;
    return { status: err.status, outcome, errorType: err.type, toolUses: 0, malformedCalls: 0 };
  }
  return { status: 500, outcome: 'internal_error', errorType: 'api_error', toolUses: 0, malformedCalls: 0 };
}

async function exchange(
  ctx: ExchangeContext,
  api: InboundApi,
  creq: CanonicalRequest,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  reqId: string,
  t0: number,
  ac: AbortController,
  path: string,
  obs: RequestObservation,
  setStage: (stage: string) => void,
): Promise<RequestEnd> {
  const { logger } = ctx;
  const upstreamModel = mapModel(ctx.models, creq.model);
  const upstreamBody = ctx.upstreamFormat.body(creq, { ...ctx.bodyOptions, model: upstreamModel });
  let upstreamUrl: URL;
  try {
    upstreamUrl = ctx.upstreamFormat.url(ctx.upstreamBase, upstreamModel);
  } catch {
    throw invalidRequest(`model ${JSON.stringify(upstreamModel)} cannot be used in the upstream URL`);
  }
  const estimate = estimateInputTokens(creq);
  const base = {
    reqId,
    path,
    stream: creq.stream,
    model: creq.model,
    upstreamModel,
    messages: creq.messages.length,
    tools: creq.tools?.length ?? 0,
  };

  if (creq.droppedTools) {
    res.setHeader('x-sluice-dropped-tools', creq.droppedTools.join(', '));
    logger.warn('tools_dropped', { reqId, tools: creq.droppedTools });
  }

  let clientGone = false;
  const onClose = (): void => {
    if (!res.writableFinished) {
      clientGone = true;
      ac.abort();
    }
  };
  res.on('close', onClose);
  if (req.socket.destroyed) onClose();

  // Graceful shutdown: before the commit point the drain deadline aborts the backend request and
  // the client gets 503; after it, `endForShutdown` (set below) writes one error event.
  let shutdownEnded = false;
  let endForShutdown: ((message: string) => void) | undefined;
  const unregister = ctx.drain?.register((message) => {
    shutdownEnded = true;
    if (endForShutdown) endForShutdown(message);
    else ac.abort();
  });
  try {
    return await exchangeBody();
  } finally {
    unregister?.();
  }

  async function exchangeBody(): Promise<RequestEnd> {
  let upRes: http.IncomingMessage;
  setStage('upstream_error');
  try {
    upRes = await ctx.upstream.open(upstreamBody, {
      signal: ac.signal,
      url: upstreamUrl,
      clientAuth: ctx.forwardClientKey === false ? undefined : clientKey(req),
      auth: ctx.upstreamFormat.authHeaders,
      headers: obs.upstreamHeaders(),
    });
  } catch (err) {
    if (err instanceof Error && err.name === 'AbortError') {
      if (shutdownEnded && !clientGone) throw new GatewayError(503, SHUTDOWN_MESSAGE, 'overloaded_error');
      const outcome = ctx.closing() ? 'shutdown' : 'client_disconnect';
      logger.info('request', { ...base, status: 499, outcome, durationMs: ms(performance.now() - t0) });
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
    logger.warn('upstream_error', { reqId, upstreamStatus: status });
    ctx.metrics?.upstreamError(ge.type);
    throw ge;
  }
  const notSse = checkUpstreamContentType(upRes);
  if (notSse) {
    upRes.destroy();
    logger.warn('upstream_error', { reqId, upstreamStatus: status, contentType: String(upRes.headers['content-type'] ?? '').slice(0, 80) });
    ctx.metrics?.upstreamError('not_event_stream');
    throw notSse;
  }

  const stats: ExchangeStats = { toolUses: 0, malformed: 0, warnings: 0 };
  const ctrl = new TurnController({
    mode: 'gateway',
    singleTool: singleToolRequested(creq),
    format: ctx.wire,
    completion: ctx.completion,
    inspect: ctx.inspect,
  });
  ctx.metrics?.observeTurn(ctrl.events);
  obs.controller(ctrl);
  setStage('stream_error');
  const notes = new CallNotes();
  // A single-tool request keeps the drop rule: a valid sibling must not lose its one slot to a broken call.
  const malformedMode: MalformedCallMode = singleToolRequested(creq) ? 'drop' : ctx.malformedCalls;
  const encOpts: InboundEncodeOptions = { model: creq.model, inputTokens: estimate, toolUseOnStop: ctx.toolUseOnStop };
  if (creq.includeUsage !== undefined) encOpts.includeUsage = creq.includeUsage;
  if (ctx.idGenerator) encOpts.idGenerator = ctx.idGenerator;

  let terminal!: () => void;
  const terminated = new Promise<void>((r) => (terminal = r));
  const track = (e: OutputEvent): void => {
    if (e.type === 'tool_use') stats.toolUses++;
    else if (e.type === 'usage') {
      if (e.usage.outputTokens !== undefined) stats.outputTokens = e.usage.outputTokens;
      if (e.usage.promptTokens !== undefined) stats.promptTokens = e.usage.promptTokens;
    } else if (e.type === 'end') {
      stats.stopReason = mapStopReason(e.finish, e.released, ctx.toolUseOnStop);
      terminal();
    } else if (e.type === 'error') {
      stats.errorType = e.error.type;
      if (!shutdownEnded) ctx.metrics?.upstreamError(e.error.type);
      terminal();
    }
  };

  // ---- sink: SSE (streaming) or collected events (non-streaming)
  const enc: InboundStream | undefined = creq.stream ? api.stream(encOpts) : undefined;
  const collected: OutputEvent[] = [];
  let pendingOut = '';
  let lastWrite = performance.now();
  let clientByteSent = false;
  // Assigned once the backend stream is wired below; `flush` (used before that) must see it.
  // eslint-disable-next-line prefer-const -- a closure above reads it before its assignment
  let idle: IdleTimer | undefined;
  const flush = (): void => {
    if (!enc || pendingOut.length === 0) return;
    const text = pendingOut;
    pendingOut = '';
    if (res.destroyed || clientGone) return;
    lastWrite = performance.now();
    if (!clientByteSent) {
      clientByteSent = true;
      obs.firstClientByte();
    }
    if (!res.write(text) && !upRes.isPaused()) {
      // Backpressure: stop reading the backend until the client drains; the idle clock stops too
      // (a slow reader is not a silent backend).
      upRes.pause();
      idle?.pause();
      res.once('drain', () => {
        idle?.resume();
        upRes.resume();
      });
    }
  };
  if (enc) {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    pendingOut += enc.start();
    flush();
  }
  const emit = (e0: OutputEvent): void => {
    // Anthropic clients get Anthropic error types (a backend's `server_error` is an `api_error`).
    const e: OutputEvent = e0.type === 'error' && api.name === 'messages' ? { ...e0, error: { ...e0.error, type: toAnthropicErrorType(e0.error.type) } } : e0;
    track(e);
    if (enc) pendingOut += enc.push(e);
    else collected.push(e);
  };
  ctrl.events.on('output', (e) => {
    // Passed-through malformed calls count as released calls for the stop reason.
    if (e.type === 'end' && stats.malformed > 0) emit({ ...e, released: e.released + stats.malformed });
    else emit(e);
  });
  ctrl.events.on('warning', (w) => {
    stats.warnings++;
    if (w.code === 'invalid_call' && w.index !== undefined) {
      // Sent before the engine resolves the call's slot, so whatever we emit keeps the call's place.
      const name = notes.name(w.index);
      const raw = notes.raw(w.index);
      logger.warn('malformed_call', { reqId, index: w.index, name: name ?? null, argsBytes: Buffer.byteLength(raw), action: name ? malformedMode : 'drop' });
      if (name && malformedMode === 'pass') {
        stats.malformed++;
        const input = malformedInput(raw);
        emit({ type: 'tool_use', index: w.index, backendId: '', name, input, argsText: JSON.stringify(input), repaired: false });
      } else {
        emit({
          type: 'text',
          text: `\n[sluice: dropped tool call${name ? ` "${name}"` : ' without a name'} (call ${w.index}): its arguments were not a complete JSON object]\n`,
        });
      }
      return;
    }
    logger.warn('engine_warning', { reqId, code: w.code, ...(w.index !== undefined ? { index: w.index } : {}), message: w.message });
  });

  // ---- backend bytes → events → controller
  const reader = ctx.newReader(creq.tools ?? []);
  const fence = new StreamFence();
  let upstreamDone = false;
  const feed = (evs0: StreamEvent[]): void => {
    // A call that begins after the backend's finish (or after [DONE]) is not another block.
    const evs = fence.filter(evs0);
    for (let i = 0; i < evs.length; i++) {
      const ev = evs[i]!;
      if (ev.type === 'call.fragment' || ev.type === 'call.identity') notes.see(ev);
      ctrl.feed(ev);
    }
  };
  const fail = (type: string, message: string): void => {
    if (upstreamDone) return;
    upstreamDone = true;
    ctrl.feed({ type: 'stream.error', error: { type, message }, retryable: false });
    flush();
  };
  // Idle: re-armed only by bytes that are more than SSE comments; paused during backpressure.
  idle = new IdleTimer(ctx.idleTimeoutMs, () => {
    fail('timeout_error', `upstream sent nothing for ${ctx.idleTimeoutMs} ms`);
    upRes.destroy();
  });
  // Overall deadline: a backend that keeps sending forever cannot hold a slot forever.
  const deadlineMs = ctx.requestDeadlineMs;
  const deadline =
    deadlineMs !== undefined && deadlineMs > 0
      ? setTimeout(() => {
          fail('timeout_error', `request deadline of ${deadlineMs} ms reached`);
          upRes.destroy();
        }, Math.max(1, deadlineMs - (performance.now() - t0)))
      : undefined;
  endForShutdown = (message) => {
    fail('overloaded_error', message);
    upRes.destroy();
  };
  const isJson = /application\/json/i.test(String(upRes.headers['content-type'] ?? ''));
  const jsonParts: Buffer[] = [];
  let jsonSize = 0;
  upRes.on('data', (chunk: Buffer) => {
    if (upstreamDone) return;
    if (isJson || sseProgress(chunk)) idle?.touch();
    if (stats.firstByteMs === undefined) {
      stats.firstByteMs = ms(performance.now() - t0);
      obs.firstByte();
    }
    if (isJson) {
      if (jsonSize < ctx.maxBodyBytes) jsonParts.push(chunk);
      jsonSize += chunk.length;
      return;
    }
    feed(reader.write(chunk));
    flush();
  });
  upRes.on('end', () => {
    if (upstreamDone) return;
    upstreamDone = true;
    if (isJson) {
      let payloads: unknown[] | undefined;
      try {
        payloads = ctx.upstreamFormat.jsonToPayloads(JSON.parse(Buffer.concat(jsonParts).toString('utf8')));
      } catch {
        payloads = undefined;
      }
      if (payloads) for (const p of payloads) feed(reader.write(`data: ${p === '[DONE]' ? p : JSON.stringify(p)}\n\n`));
      else feed([{ type: 'stream.error', error: { type: 'api_error', message: 'upstream: unreadable JSON response' }, retryable: false }]);
    }
    feed(reader.end());
    flush();
  });
  upRes.on('error', () => fail('api_error', 'upstream connection lost mid-stream'));
  upRes.on('close', () => {
    if (!upstreamDone && !clientGone) fail('api_error', 'upstream connection closed mid-stream');
  });

  // ---- keep-alive pings while the backend is silent
  let pingTimer: NodeJS.Timeout | undefined;
  if (enc && ctx.pingIntervalMs > 0) {
    pingTimer = setInterval(
      () => {
        if (performance.now() - lastWrite >= ctx.pingIntervalMs * 0.9) {
          pendingOut += enc.ping();
          flush();
        }
      },
      Math.max(10, Math.floor(ctx.pingIntervalMs / 2)),
    );
  }

  // ---- wait for the end: terminal output, client gone, or the turn finishing some other way
  const gone = new Promise<void>((r) => {
    if (ac.signal.aborted) r();
    else ac.signal.addEventListener('abort', () => r(), { once: true });
  });
  await Promise.race([terminated, gone, ctrl.done.then(() => undefined)]);
  idle.stop();
  if (deadline) clearTimeout(deadline);
  endForShutdown = undefined;
  if (pingTimer) clearInterval(pingTimer);
  if (!upRes.complete) upRes.destroy();

  if (clientGone || ac.signal.aborted) {
    ctrl.abort('drop');
    const outcome = ctx.closing() ? 'shutdown' : 'client_disconnect';
    logger.info('request', { ...base, status: 200, outcome, toolUses: stats.toolUses, durationMs: ms(performance.now() - t0) });
    if (!res.destroyed) res.destroy();
    return endOf(200, outcome, stats);
  }
  if (enc) {
    // A started stream always gets a terminal event (SPEC §5.9).
    if (!enc.terminated) pendingOut += enc.push({ type: 'error', error: { type: 'api_error', message: 'the turn ended without a result' } });
    flush();
    res.end();
    const outcome = stats.errorType ? 'stream_error' : 'ok';
    logger.info('request', {
      ...base,
      status: 200,
      outcome,
      ...statFields(stats),
      inputTokensEstimate: estimate,
      durationMs: ms(performance.now() - t0),
    });
    return endOf(200, outcome, stats);
  }
  const answer = api.body(collected, encOpts);
  obs.firstClientByte();
  sendJson(res, answer.status, answer.body);
  const outcome = answer.status === 200 ? 'ok' : 'stream_error';
  logger.info('request', {
    ...base,
    status: answer.status,
    outcome,
    ...statFields(stats),
    ...(answer.status === 200 ? { inputTokensEstimate: estimate } : {}),
    durationMs: ms(performance.now() - t0),
  });
  return endOf(answer.status, outcome, stats);
  }
}

function endOf(status: number, outcome: string, s: ExchangeStats): RequestEnd {
  const e: RequestEnd = { status, outcome, toolUses: s.toolUses, malformedCalls: s.malformed };
  if (s.errorType !== undefined) e.errorType = s.errorType;
  if (s.stopReason !== undefined) e.stopReason = s.stopReason;
  if (s.promptTokens !== undefined) e.inputTokens = s.promptTokens;
  if (s.outputTokens !== undefined) e.outputTokens = s.outputTokens;
  return e;
}

function statFields(s: ExchangeStats): Record<string, unknown> {
  const f: Record<string, unknown> = { toolUses: s.toolUses };
  if (s.malformed > 0) f.malformedCalls = s.malformed;
  if (s.stopReason !== undefined) f.stopReason = s.stopReason;
  if (s.errorType !== undefined) f.errorType = s.errorType;
  if (s.outputTokens !== undefined) f.outputTokens = s.outputTokens;
  if (s.promptTokens !== undefined) f.promptTokens = s.promptTokens;
  if (s.firstByteMs !== undefined) f.firstByteMs = s.firstByteMs;
  if (s.warnings > 0) f.warnings = s.warnings;
  return f;
}

export function ms(x: number): number {
  return Math.round(x * 100) / 100;
}
