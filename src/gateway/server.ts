import type { InspectionEvent } from 'xstate';
/**
 * `sluice serve`: an Anthropic Messages gateway over an OpenAI-compatible backend.
 *
 * Routes: `POST /v1/messages` (streaming and not), `POST /v1/messages/count_tokens` (estimate, no
 * backend call), `GET /health`. Query strings are ignored (Claude Code sends `?beta=true`).
 *
 * One request: read the body (size-capped) → validate and translate (translate.ts) → open the
 * backend stream (upstream.ts; always `stream: true`) → backend bytes go through the wire reader
 * (`createStreamReader`) into a `TurnController` in gateway mode, whose ordered output goes to the
 * Anthropic SSE encoder. Each completed tool call is released as a whole `tool_use` block as soon
 * as the engine judges it ready (SPEC §5), not at the end of the turn. Frames produced by one
 * backend chunk are written in one `res.write`.
 *
 * Commit point: the response is committed (HTTP 200 + `message_start`) when the backend answers
 * 2xx. Before that, failures are HTTP errors with an Anthropic error body (errors.ts); after it,
 * a failure is exactly one `event: error` frame and the stream ends (no `message_stop`).
 * Keep-alive `ping` frames go out while the backend is silent; a client disconnect aborts the
 * backend request; connect and idle timeouts bound every backend exchange.
 */
import { randomBytes } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { type AnthropicEncodeOptions, AnthropicSseEncoder, mapStopReason, toAnthropicMessage } from '../encode/anthropicSse';
import { type CompletionMode, TurnController } from '../engine/controller';
import type { OutputEvent } from '../release/output';
import type { StreamEvent, WireFormat } from '../wire/events';
import type { Adapter } from '../wire/events';
import { createStreamReader, type StreamReader } from '../wire/index';
import { errorTypeToStatus, GatewayError, invalidRequest } from './errors';
import { Logger } from './log';
import {
  type ChatRequestOptions,
  estimateInputTokens,
  type MessagesRequest,
  type ModelMapping,
  mapModel,
  parseMessagesRequest,
  singleToolRequested,
  toChatRequest,
  type ToolParam,
} from './translate';
import { UpstreamClient } from './upstream';

export interface GatewayOptions {
  /** Backend base URL (`http://host:8000`, `…/v1` or the full `…/chat/completions`). */
  upstream: string;
  /** Bind address. Default 127.0.0.1 (loopback only). */
  host?: string;
  /** Port. Default 0 (any free port) for the library; the CLI defaults to 8787. */
  port?: number;
  /** Fixed bearer token for the backend. Default: pass the client's `x-api-key` / bearer token through. */
  upstreamApiKey?: string;
  /** Extra headers sent to the backend. */
  upstreamHeaders?: Record<string, string>;
  /** Client model → backend model. Default: pass the client's model through. */
  models?: ModelMapping;
  /** Backend wire format: 'openai-chat' (default), 'dynamo' (completion records), or `text:<family>`. */
  format?: WireFormat;
  /** Adapter factory for `text:<family>` formats (src/parsers `createTextAdapter`), called per request with its tools. */
  textAdapter?: GatewayTextAdapterFactory;
  /** Completion inference for chat streams (SPEC §4). Default 'inferred'. */
  completion?: CompletionMode;
  /** XState inspection observer for every request's turn (`sluice serve --inspect`, `--inspect-log`). */
  inspect?: (event: InspectionEvent) => void;
  /** Largest accepted request body in bytes. Default 32 MiB. */
  maxBodyBytes?: number;
  /** Concurrent /v1/messages requests; more get 529 overloaded_error. Default 256. */
  maxConcurrent?: number;
  /** Backend TCP connect timeout. Default 10 s. */
  connectTimeoutMs?: number;
  /** Backend silence (no response headers / no bytes) before the request fails. Default 300 s. */
  idleTimeoutMs?: number;
  /** Send an SSE `ping` when nothing was written for this long. Default 10 s; 0 disables. */
  pingIntervalMs?: number;
  /** Which field carries max_tokens upstream. Default 'max_tokens'. */
  maxTokensField?: ChatRequestOptions['maxTokensField'];
  /** Mid-conversation system messages: 'inline' (default) or 'merge' into the leading system message. */
  systemMessages?: ChatRequestOptions['systemMessages'];
  /**
   * Report `tool_use` when a backend ends a turn that released tool blocks with finish `stop`
   * (common on Ollama / llama.cpp). Default true; false = strict SPEC map (stop → end_turn).
   */
  toolUseOnStop?: boolean;
  logger?: Logger;
  /** Id minting for msg_/toolu_ ids (deterministic tests). */
  idGenerator?: AnthropicEncodeOptions['idGenerator'];
}

/** Builds the adapter for a `text:<family>` backend; gets the request's tools (parsers use their schemas). */
export type GatewayTextAdapterFactory = (family: string, ctx: { tools: ToolParam[] }) => Adapter | undefined;

/**
 * The open-model text parsers (src/parsers) when this build has them: `createTextAdapter(family,
 * {tools})`. Loaded lazily so the gateway does not depend on them at compile time.
 */
export function loadTextAdapterFactory(): GatewayTextAdapterFactory | undefined {
  try {
    // A computed path: src/parsers is optional for the gateway (and lands separately).
    const modPath = '../parsers';
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- optional module, resolved at run time
    const mod = require(modPath) as { createTextAdapter?: (family: string, opts: { tools?: unknown[] }) => Adapter };
    const create = mod.createTextAdapter;
    if (typeof create !== 'function') return undefined;
    return (family, ctx) => create(family, { tools: ctx.tools });
  } catch {
    return undefined;
  }
}

export interface Gateway {
  /** e.g. http://127.0.0.1:8787 (what ANTHROPIC_BASE_URL should be). */
  url: string;
  port: number;
  server: http.Server;
  /** /v1/messages requests in flight. */
  active(): number;
  /** Client sockets currently open. */
  openSockets(): number;
  /** Stop accepting, abort requests in flight, close every socket. Idempotent. */
  close(): Promise<void>;
}

const DEFAULTS = {
  host: '127.0.0.1',
  maxBodyBytes: 32 * 1024 * 1024,
  maxConcurrent: 256,
  connectTimeoutMs: 10_000,
  idleTimeoutMs: 300_000,
  pingIntervalMs: 10_000,
};

function requestId(): string {
  return 'req_' + randomBytes(12).toString('hex');
}

function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

function sendError(res: http.ServerResponse, err: GatewayError): void {
  sendJson(res, err.status, err.body(), err.headers);
}

/** Read the request body, capped. Rejects GatewayError(413) when over the cap. */
function readBody(req: http.IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    const tooLarge = (): GatewayError =>
      new GatewayError(413, `request body is larger than the gateway limit of ${limit} bytes`, 'request_too_large', { connection: 'close' });
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      reject(tooLarge());
      return;
    }
    const parts: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (c: Buffer) => {
      if (failed) return;
      size += c.length;
      if (size > limit) {
        failed = true;
        parts.length = 0;
        reject(tooLarge());
        return;
      }
      parts.push(c);
    });
    let ended = false;
    req.on('end', () => {
      ended = true;
      if (!failed) resolve(Buffer.concat(parts, size));
    });
    const gone = (): void => {
      if (failed || ended) return;
      failed = true;
      reject(new GatewayError(499, 'the client closed the connection before the request body was complete', 'api_error'));
    };
    req.on('error', gone);
    req.on('close', gone);
  });
}

async function readJson(req: http.IncomingMessage, limit: number): Promise<unknown> {
  const enc = req.headers['content-encoding'];
  if (enc !== undefined && enc !== 'identity') {
    req.resume();
    throw invalidRequest(`content-encoding "${enc}" is not supported; send an uncompressed JSON body`);
  }
  const buf = await readBody(req, limit);
  if (buf.length === 0) throw invalidRequest('request body is empty; expected a JSON object');
  try {
    return JSON.parse(buf.toString('utf8'));
  } catch {
    throw invalidRequest('request body is not valid JSON');
  }
}

/** The key the client presented: `x-api-key`, else `Authorization: Bearer …`. */
function clientKey(req: http.IncomingMessage): string | undefined {
  const k = req.headers['x-api-key'];
  if (typeof k === 'string' && k.length > 0) return k;
  const a = req.headers.authorization;
  if (typeof a === 'string') {
    const m = /^Bearer\s+(.+)$/i.exec(a.trim());
    if (m) return m[1];
  }
  return undefined;
}

/** A whole (non-streaming) chat completion → one chat chunk, so backends that ignore `stream` still work. */
export function completionToChunk(json: unknown): Record<string, unknown> | undefined {
  if (typeof json !== 'object' || json === null) return undefined;
  const j = json as Record<string, unknown>;
  const choices = j.choices;
  if (!Array.isArray(choices) || choices.length === 0) return j.error ? j : undefined;
  const c = choices[0] as Record<string, unknown>;
  const msg = (c.message ?? {}) as Record<string, unknown>;
  const delta: Record<string, unknown> = {};
  if (msg.reasoning_content !== undefined) delta.reasoning_content = msg.reasoning_content;
  else if (msg.reasoning !== undefined) delta.reasoning = msg.reasoning;
  if (msg.content !== undefined) delta.content = msg.content;
  if (Array.isArray(msg.tool_calls)) {
    delta.tool_calls = msg.tool_calls.map((tc: unknown, i: number) =>
      typeof tc === 'object' && tc !== null ? { index: i, ...(tc as Record<string, unknown>) } : tc,
    );
  }
  const out: Record<string, unknown> = {
    id: j.id,
    model: j.model,
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta, finish_reason: c.finish_reason ?? null }],
  };
  if (j.usage !== undefined) out.usage = j.usage;
  return out;
}

interface ExchangeStats {
  toolUses: number;
  stopReason?: string;
  outputTokens?: number;
  promptTokens?: number;
  firstByteMs?: number;
  errorType?: string;
  warnings: number;
}

export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const opts = { ...DEFAULTS, ...options };
  const logger = options.logger ?? new Logger('info');
  const format: WireFormat = options.format ?? 'openai-chat';
  const toolUseOnStop = options.toolUseOnStop ?? true;
  const upstream = new UpstreamClient(
    {
      url: opts.upstream,
      ...(opts.upstreamApiKey !== undefined ? { apiKey: opts.upstreamApiKey } : {}),
      ...(opts.upstreamHeaders !== undefined ? { headers: opts.upstreamHeaders } : {}),
      connectTimeoutMs: opts.connectTimeoutMs,
      idleTimeoutMs: opts.idleTimeoutMs,
    },
    opts.maxConcurrent,
  );
  const models: ModelMapping = options.models ?? { rules: [] };
  const sockets = new Set<Socket>();
  const inflight = new Set<AbortController>();
  let active = 0;
  let closing = false;

  const family = format.startsWith('text:') ? format.slice(5) : undefined;
  const textAdapter = options.textAdapter;
  if (family !== undefined) {
    // Fail fast on a text format without a parser (a configuration error, not a request error).
    if (!textAdapter) throw new Error(`format ${format}: no text parser available in this build`);
    if (!textAdapter(family, { tools: [] })) throw new Error(`format ${format}: unknown parser family "${family}"`);
  } else {
    createStreamReader(format);
  }
  const newReader = (tools: ToolParam[]): StreamReader =>
    family !== undefined ? createStreamReader(format, { adapter: textAdapter!(family, { tools })! }) : createStreamReader(format);

  const server = http.createServer({ noDelay: true }, (req, res) => {
    void handle(req, res);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
    else socket.destroy();
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const reqId = requestId();
    res.setHeader('request-id', reqId);
    const path = (req.url ?? '/').split('?')[0]!.replace(/\/+$/, '') || '/';
    const method = req.method ?? 'GET';
    const t0 = performance.now();
    try {
      if (path === '/health' || path === '/healthz' || path === '/') {
        // `HEAD /` is Claude Code's connectivity probe.
        if (method !== 'GET' && method !== 'HEAD') throw new GatewayError(405, `method ${method} not allowed on ${path}`, 'invalid_request_error');
        sendJson(res, 200, { status: 'ok', active, maxConcurrent: opts.maxConcurrent });
        return;
      }
      if (path === '/v1/messages' || path === '/v1/messages/count_tokens') {
        if (method !== 'POST') throw new GatewayError(405, `method ${method} not allowed on ${path}; use POST`, 'invalid_request_error');
        if (path === '/v1/messages/count_tokens') {
          const body = await readJson(req, opts.maxBodyBytes);
          const m = parseMessagesRequest(body, { requireMaxTokens: false });
          sendJson(res, 200, { input_tokens: estimateInputTokens(m) });
          logger.info('request', { reqId, path, status: 200, durationMs: ms(performance.now() - t0) });
          return;
        }
        await messages(req, res, reqId, t0);
        return;
      }
      req.resume();
      throw new GatewayError(404, `no route for ${method} ${path}`, 'not_found_error');
    } catch (err) {
      const ge = err instanceof GatewayError ? err : new GatewayError(500, 'internal gateway error', 'api_error');
      if (!(err instanceof GatewayError)) logger.error('internal_error', { reqId, path, error: err instanceof Error ? err.name : 'unknown' });
      sendError(res, ge);
      logger.info('request', { reqId, path, status: ge.status, errorType: ge.type, durationMs: ms(performance.now() - t0) });
    }
  }

  async function messages(req: http.IncomingMessage, res: http.ServerResponse, reqId: string, t0: number): Promise<void> {
    if (closing) {
      req.resume();
      throw new GatewayError(503, 'gateway is shutting down', 'overloaded_error');
    }
    if (active >= opts.maxConcurrent) {
      req.resume();
      throw new GatewayError(529, `too many concurrent requests (limit ${opts.maxConcurrent})`, 'overloaded_error', { 'retry-after': '1' });
    }
    active++;
    const ac = new AbortController();
    inflight.add(ac);
    try {
      await exchange(req, res, reqId, t0, ac);
    } finally {
      active--;
      inflight.delete(ac);
    }
  }

  async function exchange(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    reqId: string,
    t0: number,
    ac: AbortController,
  ): Promise<void> {
    const body = await readJson(req, opts.maxBodyBytes);
    const mreq: MessagesRequest = parseMessagesRequest(body);
    const upstreamModel = mapModel(models, mreq.model);
    const chatOpts: ChatRequestOptions = { model: upstreamModel };
    if (opts.maxTokensField) chatOpts.maxTokensField = opts.maxTokensField;
    if (opts.systemMessages) chatOpts.systemMessages = opts.systemMessages;
    const chatReq = toChatRequest(mreq, chatOpts);
    const estimate = estimateInputTokens(mreq);
    const base = {
      reqId,
      path: '/v1/messages',
      stream: mreq.stream,
      model: mreq.model,
      upstreamModel,
      messages: mreq.messages.length,
      tools: mreq.tools?.length ?? 0,
    };

    let clientGone = false;
    const onClose = (): void => {
      if (!res.writableFinished) {
        clientGone = true;
        ac.abort();
      }
    };
    res.on('close', onClose);
    if (req.socket.destroyed) onClose();

    let upRes: http.IncomingMessage;
    try {
      upRes = await upstream.open(chatReq, { signal: ac.signal, clientAuth: clientKey(req) });
    } catch (err) {
      if (err instanceof Error && err.name === 'AbortError') {
        logger.info('request', { ...base, status: 499, outcome: closing ? 'shutdown' : 'client_disconnect', durationMs: ms(performance.now() - t0) });
        return;
      }
      throw err;
    }
    const status = upRes.statusCode ?? 502;
    if (status < 200 || status >= 300) {
      const ge = await upstream.errorFrom(upRes);
      logger.warn('upstream_error', { reqId, upstreamStatus: status });
      throw ge;
    }

    const stats: ExchangeStats = { toolUses: 0, warnings: 0 };
    const ctrl = new TurnController({
      mode: 'gateway',
      singleTool: singleToolRequested(mreq),
      format,
      completion: opts.completion,
      inspect: opts.inspect,
    });
    ctrl.events.on('warning', (w) => {
      stats.warnings++;
      logger.warn('engine_warning', { reqId, code: w.code, ...(w.index !== undefined ? { index: w.index } : {}), message: w.message });
    });
    const encOpts: AnthropicEncodeOptions = { model: mreq.model, inputTokens: estimate, toolUseOnStop };
    if (opts.idGenerator) encOpts.idGenerator = opts.idGenerator;

    let terminal!: () => void;
    const terminated = new Promise<void>((r) => (terminal = r));
    const track = (e: OutputEvent): void => {
      if (e.type === 'tool_use') stats.toolUses++;
      else if (e.type === 'usage') {
        if (e.usage.outputTokens !== undefined) stats.outputTokens = e.usage.outputTokens;
        if (e.usage.promptTokens !== undefined) stats.promptTokens = e.usage.promptTokens;
      } else if (e.type === 'end') {
        stats.stopReason = mapStopReason(e.finish, e.released, toolUseOnStop);
        terminal();
      } else if (e.type === 'error') {
        stats.errorType = e.error.type;
        terminal();
      }
    };

    // ---- sink: SSE (streaming) or collected events (non-streaming)
    const enc = mreq.stream ? new AnthropicSseEncoder(encOpts) : undefined;
    const collected: OutputEvent[] = [];
    let pendingOut = '';
    let lastWrite = performance.now();
    const flush = (): void => {
      if (!enc || pendingOut.length === 0) return;
      const text = pendingOut;
      pendingOut = '';
      if (res.destroyed || clientGone) return;
      lastWrite = performance.now();
      if (!res.write(text) && !upRes.isPaused()) {
        // Backpressure: stop reading the backend until the client drains.
        upRes.pause();
        res.once('drain', () => upRes.resume());
      }
    };
    if (enc) {
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      pendingOut += enc.push({ type: 'message.start' });
      flush();
    }
    ctrl.events.on('output', (e) => {
      track(e);
      if (enc) pendingOut += enc.push(e);
      else collected.push(e);
    });

    // ---- backend bytes → events → controller
    const reader = newReader(mreq.tools ?? []);
    let upstreamDone = false;
    const feed = (evs: StreamEvent[]): void => {
      for (let i = 0; i < evs.length; i++) ctrl.feed(evs[i]!);
    };
    const fail = (type: string, message: string): void => {
      if (upstreamDone) return;
      upstreamDone = true;
      ctrl.feed({ type: 'stream.error', error: { type, message }, retryable: false });
      flush();
    };
    let idleTimer: NodeJS.Timeout | undefined;
    const armIdle = (): void => {
      if (idleTimer) clearTimeout(idleTimer);
      idleTimer = setTimeout(() => {
        fail('timeout_error', `upstream sent nothing for ${opts.idleTimeoutMs} ms`);
        upRes.destroy();
      }, opts.idleTimeoutMs);
    };
    armIdle();
    const isJson = /application\/json/i.test(String(upRes.headers['content-type'] ?? ''));
    const jsonParts: Buffer[] = [];
    let jsonSize = 0;
    upRes.on('data', (chunk: Buffer) => {
      if (upstreamDone) return;
      armIdle();
      stats.firstByteMs ??= ms(performance.now() - t0);
      if (isJson) {
        if (jsonSize < opts.maxBodyBytes) jsonParts.push(chunk);
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
        let chunk: Record<string, unknown> | undefined;
        try {
          chunk = completionToChunk(JSON.parse(Buffer.concat(jsonParts).toString('utf8')));
        } catch {
          chunk = undefined;
        }
        if (chunk) feed(reader.write(`data: ${JSON.stringify(chunk)}\n\n`));
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
    if (enc && opts.pingIntervalMs > 0) {
      pingTimer = setInterval(
        () => {
          if (performance.now() - lastWrite >= opts.pingIntervalMs * 0.9) {
            pendingOut += enc.ping();
            flush();
          }
        },
        Math.max(10, Math.floor(opts.pingIntervalMs / 2)),
      );
    }

    // ---- wait for the end: terminal output, client gone, or the turn finishing some other way
    const gone = new Promise<void>((r) => {
      if (ac.signal.aborted) r();
      else ac.signal.addEventListener('abort', () => r(), { once: true });
    });
    await Promise.race([terminated, gone, ctrl.done.then(() => undefined)]);
    if (idleTimer) clearTimeout(idleTimer);
    if (pingTimer) clearInterval(pingTimer);
    if (!upRes.complete) upRes.destroy();

    if (clientGone || ac.signal.aborted) {
      ctrl.abort('drop');
      logger.info('request', {
        ...base,
        status: 200,
        outcome: closing ? 'shutdown' : 'client_disconnect',
        toolUses: stats.toolUses,
        durationMs: ms(performance.now() - t0),
      });
      if (!res.destroyed) res.destroy();
      return;
    }
    if (enc) {
      // A started message always gets a terminal event (SPEC §5.9).
      if (!enc.terminated) pendingOut += enc.push({ type: 'error', error: { type: 'api_error', message: 'the turn ended without a result' } });
      flush();
      res.end();
      logger.info('request', {
        ...base,
        status: 200,
        outcome: stats.errorType ? 'stream_error' : 'ok',
        ...statFields(stats),
        inputTokensEstimate: estimate,
        durationMs: ms(performance.now() - t0),
      });
      return;
    }
    const msg = toAnthropicMessage(collected, encOpts);
    if (msg.type === 'error') {
      const st = errorTypeToStatus(msg.error.type);
      sendJson(res, st, msg);
      logger.info('request', { ...base, status: st, outcome: 'stream_error', ...statFields(stats), durationMs: ms(performance.now() - t0) });
      return;
    }
    sendJson(res, 200, msg);
    logger.info('request', { ...base, status: 200, outcome: 'ok', ...statFields(stats), inputTokensEstimate: estimate, durationMs: ms(performance.now() - t0) });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const hostForUrl = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  const url = `http://${hostForUrl === '0.0.0.0' ? '127.0.0.1' : hostForUrl}:${port}`;

  let closed: Promise<void> | undefined;
  return {
    url,
    port,
    server,
    active: () => active,
    openSockets: () => sockets.size,
    close: () => {
      closed ??= (async () => {
        closing = true;
        for (const ac of inflight) ac.abort();
        const done = new Promise<void>((r) => server.close(() => r()));
        for (const s of sockets) s.destroy();
        upstream.close();
        await done;
      })();
      return closed;
    },
  };
}

function statFields(s: ExchangeStats): Record<string, unknown> {
  const f: Record<string, unknown> = { toolUses: s.toolUses };
  if (s.stopReason !== undefined) f.stopReason = s.stopReason;
  if (s.errorType !== undefined) f.errorType = s.errorType;
  if (s.outputTokens !== undefined) f.outputTokens = s.outputTokens;
  if (s.promptTokens !== undefined) f.promptTokens = s.promptTokens;
  if (s.firstByteMs !== undefined) f.firstByteMs = s.firstByteMs;
  if (s.warnings > 0) f.warnings = s.warnings;
  return f;
}

function ms(x: number): number {
  return Math.round(x * 100) / 100;
}
