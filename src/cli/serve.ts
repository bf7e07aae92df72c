import { INSPECT_FLAGS, inspectionFromFlags } from './inspectFlags';
/**
 * `sluice serve` — the Anthropic Messages gateway over an OpenAI-compatible backend.
 * Flags override environment variables; see HELP.
 */
import { DEFAULT_MAX_BODY_BYTES, loadTextAdapterFactory, startGateway, type GatewayOptions } from '../gateway/server';
import { exposure, isLoopback, parseApiKeys } from '../gateway/auth';
import { Logger, LOG_LEVELS, type LogLevel, turnLogObserver } from '../gateway/log';
import { composeObservers } from '../gateway/observer';
import { parseHoldoutFraction } from '../gateway/holdout';
import { OtelConfigError, otelConfigFromEnv, otelMissingPackages, type OtelConfig, startOtel } from '../gateway/otel';
import { parseModelMap } from '../gateway/canonical';
import type { UpstreamFormatName } from '../gateway/upstream/types';
import { startTraceBackend, type TraceBackend } from '../gateway/scripted';
import type { WireFormat } from '../wire/events';
import { failureLine, parseArgs, UsageError, type FlagSpec } from './args';
import { BODY_MEMORY_FACTOR, DEFAULT_BODY_BUDGET_BYTES } from '../gateway/body';

export const HELP = `sluice serve — one gateway for Anthropic Messages, OpenAI Responses and OpenAI
Chat Completions clients over an OpenAI Chat, OpenAI Responses, Anthropic or Gemini backend

Clients: Claude Code and the Anthropic SDKs (/v1/messages), Codex CLI and the OpenAI Agents SDK
(/v1/responses), qwen-code, opencode, aider and the openai SDK (/v1/chat/completions). Each
completed tool call is sent to the client as soon as it is ready, not at the end of the turn.

Usage: sluice serve --upstream URL [options]
       sluice serve --upstream scripted:demo          (no backend needed: try it offline)
       sluice serve --upstream scripted:FILE.trace.jsonl

Routes: POST /v1/messages, POST /v1/responses (also /responses), POST /v1/chat/completions
        (also /chat/completions), POST /v1/messages/count_tokens (estimate), GET /v1/models,
        GET /v1/models/{id} (both also without /v1), GET|HEAD /health (also /healthz, /livez
        and /), GET /readyz, GET /metrics

Options (each has an environment variable; the flag wins):
  --upstream URL            backend base URL: http://host:8000, http://host:8000/v1 or the full
                            endpoint (.../chat/completions, .../responses, .../messages);
                            scripted:demo or scripted:FILE serves a recorded trace (any of the
                            four wire formats) as a real local backend, in real time
                                                                          [SLUICE_UPSTREAM_URL]
  --upstream-format F       the backend's API: openai-chat, openai-responses, anthropic, gemini,
                            or dynamo (openai-chat with completion records). Default: from the
                            URL path (.../responses, .../messages, .../v1beta or Google's host),
                            else openai-chat; scripted: uses the trace's format
                                                                          [SLUICE_UPSTREAM_API]
  --malformed-calls M       a call whose arguments are not a complete JSON object: pass (default;
                            sent with the marker input {"_sluice_malformed_call": reason,
                            "_sluice_raw_arguments": text} so the client's validation tells the
                            model) or drop (left out, with a text marker saying so). Both log
                            malformed_call at warn                        [SLUICE_MALFORMED_CALLS]
  --port N                  listen port (default 8787; 0 = any free port) [SLUICE_PORT]
  --host ADDR               bind address (default 127.0.0.1, loopback only). Any other address
                            exposes the gateway and needs --api-key (or --no-auth)
                                                                          [SLUICE_HOST]
  --backlog N               listen backlog of the main port: connections the kernel completes
                            and queues until the gateway accepts them (default 4096; Linux caps
                            it at net.core.somaxconn)                     [SLUICE_BACKLOG]
  --ops-port N              a second listener, on its own thread, that serves only /health,
                            /livez, /readyz and /metrics, so probes never queue behind client
                            connections or a busy event loop; /health says 503 "stalled" when
                            the event loop has not ticked for --ops-stall MS (0 = any free port;
                            default none — the main port answers them too) [SLUICE_OPS_PORT]
  --ops-stall MS            event-loop silence after which the operations listener's /health and
                            /readyz say 503 "stalled" (default 10000)    [SLUICE_OPS_STALL_MS]
  --ops-host ADDR           its bind address (default 127.0.0.1). Any other address needs
                            --api-key (or --no-auth), like --host         [SLUICE_OPS_HOST]
  --api-key KEY             client API key(s), comma-separated; clients send x-api-key or
                            Authorization: Bearer; others get 401. With it the client's key is
                            never forwarded to the backend                [SLUICE_API_KEY]
  --no-auth                 allow a non-loopback --host without client keys (warned)
                                                                          [SLUICE_NO_AUTH=1]
  --model NAME              backend model for every request not matched by --model-map
                            (default: the client's model name is passed through)
                                                                          [SLUICE_MODEL]
  --model-map SPEC          client model → backend model, "pattern=model" entries separated by
                            commas; * matches anything, first match wins
                            (e.g. "claude-*-haiku-*=qwen3-8b,claude-*=qwen3-32b")
                                                                          [SLUICE_MODEL_MAP]
  --upstream-api-key KEY    fixed bearer token for the backend. Without it the client's
                            x-api-key (or Authorization: Bearer) is passed through as
                            Authorization: Bearer                         [SLUICE_UPSTREAM_API_KEY]
  --format F                older spelling of --upstream-format         [SLUICE_UPSTREAM_FORMAT]
  --parser FAMILY           the backend returns raw model text (no server-side tool parser):
                            parse tool calls with sluice's FAMILY parser (e.g. hermes, qwen3);
                            overrides --format                            [SLUICE_PARSER]
  --completion MODE         inferred (default: a call is complete when the next call starts or
                            its JSON object closes) or evidence-only (wait for a completion
                            record, the finish or the end of the stream)  [SLUICE_COMPLETION]
  --release-holdout F       A/B of early release: a share F (0-1, default 0) of requests, drawn
                            at random, holds every tool call to the end of the backend stream;
                            the turn log's arm/continues fields feed sluice report
                            (docs/gateway.md "Measuring the gain")     [SLUICE_RELEASE_HOLDOUT]
  --max-body SIZE           largest request body, bytes or with k/m suffix (default 32m);
                            larger bodies get 413 request_too_large      [SLUICE_MAX_BODY]
  --max-concurrency N       /v1/messages requests in flight (default 256); more get
                            529 overloaded_error with retry-after         [SLUICE_MAX_CONCURRENCY]
  --body-memory SIZE        memory all request bodies in flight may cost together (default 768m,
                            for a 2 GB container; each body counts 8x its size until its request
                            ends); a body that does not fit gets 503 overloaded_error with
                            retry-after. Must be at least 8x --max-body   [SLUICE_BODY_MEMORY]
  --body-worker SIZE|off    bodies of at least SIZE are parsed and translated in a worker thread
                            (default 512k); off: always on the event loop [SLUICE_BODY_WORKER]
  --connect-timeout MS      backend TCP connect timeout (default 10000)   [SLUICE_CONNECT_TIMEOUT_MS]
  --idle-timeout MS         backend silence (no headers / no bytes) before the request fails
                            with timeout_error (default 300000)          [SLUICE_IDLE_TIMEOUT_MS]
  --ping-interval MS        SSE ping to the client after this much silence (default 10000;
                            0 = off)                                      [SLUICE_PING_INTERVAL_MS]
  --max-tokens-field F      max_tokens (default) or max_completion_tokens: the backend field
                            that carries the client's max_tokens          [SLUICE_MAX_TOKENS_FIELD]
  --system-messages M       inline (default): system messages inside "messages" (Claude Code
                            sends them) go to the backend as system messages in place; merge:
                            appended to the leading system message, for chat templates that
                            allow only one system message first          [SLUICE_SYSTEM_MESSAGES]
  --strict-stop-reason      map a backend "stop" finish to end_turn even when tool_use blocks
                            were sent (default: tool_use in that case, for backends that end
                            tool-calling turns with "stop")               [SLUICE_STRICT_STOP_REASON=1]
  --max-connections N       open client connections (default 1024); at the cap the longest-idle
                            connection is closed, and when all are busy new ones get 503
                                                                          [SLUICE_MAX_CONNECTIONS]
  --headers-timeout MS      a client's request line and headers (default 30000)
                                                                          [SLUICE_HEADERS_TIMEOUT_MS]
  --body-timeout MS         a client's whole request, body included; 408 after (default 120000)
                                                                          [SLUICE_BODY_TIMEOUT_MS]
  --keep-alive-timeout MS   idle keep-alive client connections close after (default 5000)
                                                                          [SLUICE_KEEP_ALIVE_TIMEOUT_MS]
  --request-deadline MS     one model request from arrival to its last byte; then it ends with
                            timeout_error (default 1800000 = 30 min)     [SLUICE_REQUEST_DEADLINE_MS]
  --drain-timeout MS        on SIGTERM/SIGINT: streams in flight get this long to finish, then
                            end with an overloaded_error event (default 30000)
                                                                          [SLUICE_DRAIN_TIMEOUT_MS]
  --max-json-depth N        deepest JSON nesting in a request body (default 128); deeper is 400
                                                                          [SLUICE_MAX_JSON_DEPTH]
  --max-output-tokens N     largest max_tokens accepted (default 1048576); larger is 400
                                                                          [SLUICE_MAX_OUTPUT_TOKENS]
  --log-level L             debug | info (default) | warn | error | silent. Logs are JSON lines
                            on stderr with ids, names, counts and timings — never message
                            text, tool arguments or results; one "turn" record per request
                            is what \`sluice report\` reads                 [SLUICE_LOG_LEVEL]
  --log-format F            text (default: a short banner on stdout) or json (no banner:
                            stdout stays empty, stderr is only JSON lines, a failure to
                            start included)                            [SLUICE_LOG_FORMAT]
  --inspect                 relay every request's actors to the Stately inspector (local
                            websocket relay, port SLUICE_INSPECT_PORT or 8080)
  --inspect-log FILE        record XState inspection events as JSONL (contents redacted)
  --inspect-contents        keep argument and result contents in inspection events
  --inspect-host ADDR       relay bind address (default 127.0.0.1). Any other address needs
                            --api-key (or --no-auth), like --host, and is warned
                                                                          [SLUICE_INSPECT_HOST]
                            The relay URL carries an access token: on a terminal it is shown once,
                            otherwise it is written to a 0600 file (its path is printed) in
                            SLUICE_INSPECT_TOKEN_DIR (default: the temp directory)
  Operations: GET /metrics (Prometheus; needs the key when --api-key is set), GET /livez (also
  /health), GET /readyz (503 while draining), on the main port and on --ops-port. See
  docs/gateway.md "Operations".
  OpenTelemetry: traces and metrics go out over OTLP (http/protobuf or http/json) when the
  standard variables ask for it: OTEL_EXPORTER_OTLP_ENDPOINT (or _TRACES_/_METRICS_ENDPOINT),
  OTEL_EXPORTER_OTLP_PROTOCOL, OTEL_TRACES_EXPORTER / OTEL_METRICS_EXPORTER (otlp|none),
  OTEL_SERVICE_NAME, OTEL_SDK_DISABLED. Without them nothing is loaded. The SDK is an optional
  install (exit 1 with the npm install line when it is missing). docs/observability.md
  --help                    this text

Point a client at it:  ANTHROPIC_BASE_URL=http://127.0.0.1:8787 ANTHROPIC_API_KEY=dummy claude
                       OPENAI_BASE_URL=http://127.0.0.1:8787/v1 OPENAI_API_KEY=dummy <chat client>
                       Codex: a model provider with base_url = "http://127.0.0.1:8787/v1",
                       wire_api = "responses" (docs/gateway.md)
Exit codes: 0 stopped by SIGINT/SIGTERM, 1 could not start (port in use, bad parser), 2 usage error.
`;

const UPSTREAM_CHOICES = ['openai-chat', 'openai-responses', 'anthropic', 'gemini', 'dynamo'];

export const SPEC: Record<string, FlagSpec> = {
  upstream: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  backlog: { type: 'string' },
  'ops-port': { type: 'string' },
  'ops-host': { type: 'string' },
  'ops-stall': { type: 'string' },
  'api-key': { type: 'string' },
  'no-auth': { type: 'boolean' },
  'max-connections': { type: 'string' },
  'headers-timeout': { type: 'string' },
  'body-timeout': { type: 'string' },
  'keep-alive-timeout': { type: 'string' },
  'request-deadline': { type: 'string' },
  'drain-timeout': { type: 'string' },
  'max-json-depth': { type: 'string' },
  'max-output-tokens': { type: 'string' },
  model: { type: 'string' },
  'model-map': { type: 'string' },
  'upstream-api-key': { type: 'string' },
  format: { type: 'string', choices: UPSTREAM_CHOICES },
  'upstream-format': { type: 'string', choices: UPSTREAM_CHOICES },
  'malformed-calls': { type: 'string', choices: ['pass', 'drop'] },
  parser: { type: 'string' },
  completion: { type: 'string', choices: ['inferred', 'evidence-only'] },
  'release-holdout': { type: 'string' },
  'max-body': { type: 'string' },
  'body-memory': { type: 'string' },
  'body-worker': { type: 'string' },
  'max-concurrency': { type: 'string' },
  'connect-timeout': { type: 'string' },
  'idle-timeout': { type: 'string' },
  'ping-interval': { type: 'string' },
  'max-tokens-field': { type: 'string', choices: ['max_tokens', 'max_completion_tokens'] },
  'system-messages': { type: 'string', choices: ['inline', 'merge'] },
  'strict-stop-reason': { type: 'boolean' },
  'log-level': { type: 'string', choices: LOG_LEVELS },
  'log-format': { type: 'string', choices: ['text', 'json'] },
  ...INSPECT_FLAGS,
  help: { type: 'boolean' },
};

export const ENV: Record<string, string> = {
  upstream: 'SLUICE_UPSTREAM_URL',
  port: 'SLUICE_PORT',
  host: 'SLUICE_HOST',
  backlog: 'SLUICE_BACKLOG',
  'ops-port': 'SLUICE_OPS_PORT',
  'ops-host': 'SLUICE_OPS_HOST',
  'ops-stall': 'SLUICE_OPS_STALL_MS',
  'api-key': 'SLUICE_API_KEY',
  'max-connections': 'SLUICE_MAX_CONNECTIONS',
  'headers-timeout': 'SLUICE_HEADERS_TIMEOUT_MS',
  'body-timeout': 'SLUICE_BODY_TIMEOUT_MS',
  'keep-alive-timeout': 'SLUICE_KEEP_ALIVE_TIMEOUT_MS',
  'request-deadline': 'SLUICE_REQUEST_DEADLINE_MS',
  'drain-timeout': 'SLUICE_DRAIN_TIMEOUT_MS',
  'max-json-depth': 'SLUICE_MAX_JSON_DEPTH',
  'max-output-tokens': 'SLUICE_MAX_OUTPUT_TOKENS',
  model: 'SLUICE_MODEL',
  'model-map': 'SLUICE_MODEL_MAP',
  'upstream-api-key': 'SLUICE_UPSTREAM_API_KEY',
  format: 'SLUICE_UPSTREAM_FORMAT',
  'upstream-format': 'SLUICE_UPSTREAM_API',
  'malformed-calls': 'SLUICE_MALFORMED_CALLS',
  parser: 'SLUICE_PARSER',
  completion: 'SLUICE_COMPLETION',
  'release-holdout': 'SLUICE_RELEASE_HOLDOUT',
  'max-body': 'SLUICE_MAX_BODY',
  'body-memory': 'SLUICE_BODY_MEMORY',
  'body-worker': 'SLUICE_BODY_WORKER',
  'max-concurrency': 'SLUICE_MAX_CONCURRENCY',
  'connect-timeout': 'SLUICE_CONNECT_TIMEOUT_MS',
  'idle-timeout': 'SLUICE_IDLE_TIMEOUT_MS',
  'ping-interval': 'SLUICE_PING_INTERVAL_MS',
  'max-tokens-field': 'SLUICE_MAX_TOKENS_FIELD',
  'system-messages': 'SLUICE_SYSTEM_MESSAGES',
  'log-level': 'SLUICE_LOG_LEVEL',
  'log-format': 'SLUICE_LOG_FORMAT',
};

/** `32m`, `512k`, `1048576` → bytes; between `min` and `max` bytes. */
export function parseSize(v: string, name: string, min = 1, max = 64 * 1024 ** 3): number {
  const m = /^(\d+(?:\.\d+)?)\s*([kmg]?)i?b?$/i.exec(v.trim());
  if (!m) throw new UsageError(`--${name} must be a size like 1048576, 512k or 32m`);
  const mult = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[m[2]!.toLowerCase() as '' | 'k' | 'm' | 'g'];
  const n = Math.floor(Number(m[1]) * mult);
  if (n < min || n > max) throw new UsageError(`--${name} must be between ${min} and ${max} bytes (got ${v})`);
  return n;
}

/** Longest timer Node can arm (setTimeout fires at once above it). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Every numeric serve flag: its option, its range. A value outside the range (or not an integer)
 * is a usage error (exit 2) naming the flag and the range — `--port 99999` never reaches listen().
 */
type NumericOption =
  | 'port'
  | 'maxConcurrent'
  | 'connectTimeoutMs'
  | 'idleTimeoutMs'
  | 'pingIntervalMs'
  | 'maxConnections'
  | 'headersTimeoutMs'
  | 'bodyTimeoutMs'
  | 'keepAliveTimeoutMs'
  | 'requestDeadlineMs'
  | 'drainTimeoutMs'
  | 'maxJsonDepth'
  | 'maxOutputTokens'
  | 'backlog';
export const NUMERIC_FLAGS: [flag: string, option: NumericOption, min: number, max: number][] = [
  ['port', 'port', 0, 65_535],
  ['max-concurrency', 'maxConcurrent', 1, 1_000_000],
  ['connect-timeout', 'connectTimeoutMs', 1, MAX_TIMER_MS],
  ['idle-timeout', 'idleTimeoutMs', 1, MAX_TIMER_MS],
  ['ping-interval', 'pingIntervalMs', 0, MAX_TIMER_MS],
  ['max-connections', 'maxConnections', 1, 1_000_000],
  ['headers-timeout', 'headersTimeoutMs', 1, MAX_TIMER_MS],
  ['body-timeout', 'bodyTimeoutMs', 1, MAX_TIMER_MS],
  ['keep-alive-timeout', 'keepAliveTimeoutMs', 1, MAX_TIMER_MS],
  ['request-deadline', 'requestDeadlineMs', 1, MAX_TIMER_MS],
  ['drain-timeout', 'drainTimeoutMs', 1, MAX_TIMER_MS],
  ['max-json-depth', 'maxJsonDepth', 1, 100_000],
  ['max-output-tokens', 'maxOutputTokens', 1, Number.MAX_SAFE_INTEGER],
  ['backlog', 'backlog', 1, 65_535],
];

/** An integer flag value within [min, max], else a UsageError naming the flag (and its env variable). */
export function intFlag(v: string | undefined, name: string, min: number, max: number): number | undefined {
  if (v === undefined) return undefined;
  const n = /^\s*\d+\s*$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    const env = ENV[name] ? ` (or ${ENV[name]})` : '';
    throw new UsageError(`--${name}${env} must be an integer from ${min} to ${max} (got "${v}")`);
  }
  return n;
}

/** Build gateway options from argv + env (exported for tests). */
export function optionsFrom(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
): { options: GatewayOptions; help: boolean; level: LogLevel; scripted?: string; json?: boolean; otel?: OtelConfig } {
  const { positionals, flags } = parseArgs(argv, SPEC);
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const get = (name: string): string | undefined => {
    const f = flags[name];
    if (typeof f === 'string') return f;
    const e = ENV[name] ? env[ENV[name]!] : undefined;
    if (e === undefined || e === '') return undefined;
    const choices = SPEC[name]!.choices;
    if (choices && !choices.includes(e))
      throw new UsageError(`${ENV[name]} must be one of: ${choices.join(', ')} (got "${e}")`);
    return e;
  };
  const level = (get('log-level') ?? 'info') as LogLevel;
  if (flags.help === true) return { options: { upstream: '' }, help: true, level };
  const json = get('log-format') === 'json';
  let otel: OtelConfig | undefined;
  try {
    otel = otelConfigFromEnv(env);
  } catch (e) {
    if (e instanceof OtelConfigError) throw new UsageError(e.message);
    throw e;
  }
  const upstream = get('upstream');
  if (!upstream) throw new UsageError('--upstream URL is required (or set SLUICE_UPSTREAM_URL; scripted:demo needs no backend)');
  const scripted = upstream.startsWith('scripted:') ? upstream.slice('scripted:'.length) : undefined;
  if (scripted === '') throw new UsageError('--upstream scripted: needs a trace file or "demo" (e.g. scripted:demo)');
  if (scripted === undefined) {
    try {
      const u = new URL(upstream);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('protocol');
    } catch {
      throw new UsageError(`--upstream must be an http(s) URL or scripted:FILE / scripted:demo (got "${upstream}")`);
    }
  }
  const options: GatewayOptions = { upstream, port: 8787, host: get('host') ?? '127.0.0.1', collectAfterBurst: true };
  for (const [flag, key, min, max] of NUMERIC_FLAGS) {
    const v = intFlag(get(flag), flag, min, max);
    if (v !== undefined) options[key] = v;
  }
  const opsPort = intFlag(get('ops-port'), 'ops-port', 0, 65_535);
  const opsHost = get('ops-host');
  const opsStall = intFlag(get('ops-stall'), 'ops-stall', 1, MAX_TIMER_MS);
  if (opsPort === undefined && opsHost !== undefined) throw new UsageError('--ops-host needs --ops-port (or SLUICE_OPS_PORT)');
  if (opsPort === undefined && opsStall !== undefined) throw new UsageError('--ops-stall needs --ops-port (or SLUICE_OPS_PORT)');
  if (opsPort !== undefined) {
    if (opsPort !== 0 && opsPort === options.port && (opsHost ?? '127.0.0.1') === options.host)
      throw new UsageError(`--ops-port must differ from --port (both ${opsPort})`);
    options.ops = { port: opsPort, ...(opsHost !== undefined ? { host: opsHost } : {}), ...(opsStall !== undefined ? { stallMs: opsStall } : {}) };
  }
  const model = get('model');
  const mapSpec = get('model-map');
  if (model !== undefined || mapSpec !== undefined) {
    let rules: ReturnType<typeof parseModelMap> = [];
    try {
      rules = mapSpec !== undefined ? parseModelMap(mapSpec) : [];
    } catch (e) {
      throw new UsageError(`--model-map: ${(e as Error).message}`);
    }
    options.models = model !== undefined ? { rules, fallback: model } : { rules };
  }
  const key = get('upstream-api-key');
  if (key !== undefined) options.upstreamApiKey = key;
  const parser = get('parser');
  if (parser !== undefined) options.format = `text:${parser}` as WireFormat;
  const upFormat = get('upstream-format') ?? get('format');
  if (upFormat === 'dynamo') {
    if (parser === undefined) options.format = 'dynamo';
    options.upstreamFormat = 'openai-chat';
  } else if (upFormat !== undefined) options.upstreamFormat = upFormat as UpstreamFormatName;
  const malformed = get('malformed-calls');
  if (malformed !== undefined) options.malformedCalls = malformed as GatewayOptions['malformedCalls'];
  const completion = get('completion');
  if (completion !== undefined) options.completion = completion as GatewayOptions['completion'];
  const holdout = get('release-holdout');
  if (holdout !== undefined) {
    const h = parseHoldoutFraction(holdout);
    if ('error' in h) throw new UsageError(h.error);
    options.releaseHoldout = h.fraction;
  }
  const maxBody = get('max-body');
  if (maxBody !== undefined) options.maxBodyBytes = parseSize(maxBody, 'max-body', 1, 1024 ** 3);
  const bodyMemory = get('body-memory');
  if (bodyMemory !== undefined) options.bodyBudgetBytes = parseSize(bodyMemory, 'body-memory');
  const bodyWorker = get('body-worker');
  if (bodyWorker !== undefined) options.bodyWorker = bodyWorker === 'off' ? false : { aboveBytes: parseSize(bodyWorker, 'body-worker', 0, 1024 ** 3) };
  const need = (options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES) * BODY_MEMORY_FACTOR;
  if ((options.bodyBudgetBytes ?? DEFAULT_BODY_BUDGET_BYTES) < need)
    throw new UsageError(
      `--body-memory must be at least ${BODY_MEMORY_FACTOR}x --max-body (${need} bytes) so that one body of the maximum size fits`,
    );
  const mtf = get('max-tokens-field');
  if (mtf !== undefined) options.maxTokensField = mtf as GatewayOptions['maxTokensField'];
  const sm = get('system-messages');
  if (sm !== undefined) options.systemMessages = sm as GatewayOptions['systemMessages'];
  const keys = parseApiKeys(get('api-key'));
  if (keys.length > 0) options.apiKeys = keys;
  const noAuthEnv = env.SLUICE_NO_AUTH;
  if (flags['no-auth'] === true || noAuthEnv === '1' || noAuthEnv === 'true') options.noAuth = true;
  const strictEnv = env.SLUICE_STRICT_STOP_REASON;
  if (flags['strict-stop-reason'] === true || strictEnv === '1' || strictEnv === 'true')
    options.toolUseOnStop = false;
  return { options, help: false, level, ...(scripted !== undefined ? { scripted } : {}), ...(json ? { json } : {}), ...(otel ? { otel } : {}) };
}

/** Remove credentials from a URL before logging it. */
function safeUrl(u: string): string {
  try {
    const x = new URL(u);
    x.username = '';
    x.password = '';
    return x.toString();
  } catch {
    return '(invalid url)';
  }
}

/**
 * `--log-format json` (or SLUICE_LOG_FORMAT=json) read before the full parse, so that a start-up
 * failure, a usage error included, keeps the promise that stderr holds only JSON lines.
 */
export function wantsJsonLogs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): boolean {
  let flag: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') break;
    if (a === '--log-format') flag = argv[i + 1];
    else if (a.startsWith('--log-format=')) flag = a.slice('--log-format='.length);
  }
  return (flag ?? env[ENV['log-format']!]) === 'json';
}

/**
 * Why `sluice serve` did not start: one line on stderr, whatever --log-level says (the exit code
 * alone would leave an operator guessing). Text: `sluice serve: <why>`; JSON: one `error` record,
 * `msg` `usage_error` (exit 2) or `startup_failed` (exit 1), the reason in `error`.
 */
function startupFailure(json: boolean, error: string, kind: 'usage_error' | 'startup_failed' = 'startup_failed'): void {
  if (!json) {
    process.stderr.write(`sluice serve: ${error}\n`);
    return;
  }
  new Logger('error').error(kind, kind === 'usage_error' ? { error, help: 'sluice serve --help' } : { error });
}

export async function run(argv: string[]): Promise<number> {
  if (!wantsJsonLogs(argv)) return serve(argv);
  try {
    return await serve(argv);
  } catch (err) {
    // In text mode src/cli/main.ts prints these; here they become the same one line, as JSON.
    const usage = err instanceof UsageError;
    startupFailure(true, failureLine(err, false), usage ? 'usage_error' : 'startup_failed');
    return usage ? 2 : 1;
  }
}

async function serve(argv: string[]): Promise<number> {
  const { options, help, level, scripted, json, otel: otelConfig } = optionsFrom(argv);
  if (help) {
    process.stdout.write(HELP);
    return 0;
  }
  const otelMissing = otelConfig ? otelMissingPackages(otelConfig) : undefined;
  if (otelMissing !== undefined) {
    startupFailure(json === true, otelMissing);
    return 1;
  }
  const logger = new Logger(level);
  options.logger = logger;
  let backend: TraceBackend | undefined;
  if (scripted !== undefined) {
    try {
      backend = await startTraceBackend(scripted);
    } catch (err) {
      startupFailure(json === true, failureLine(err, false));
      return 1;
    }
    options.upstream = backend.upstream.url;
    const f = backend.format;
    if (f === 'openai-chat' || f === 'openai-responses' || f === 'anthropic' || f === 'gemini') {
      if (options.upstreamFormat !== undefined && options.upstreamFormat !== f) {
        await backend.upstream.close();
        startupFailure(json === true, `the trace is ${f}, not ${options.upstreamFormat}; drop --upstream-format`, 'usage_error');
        return 2;
      }
      options.upstreamFormat = f;
    } else {
      options.upstreamFormat = 'openai-chat';
      if (options.format === undefined) options.format = f;
    }
  }
  const { flags } = parseArgs(argv, SPEC);
  const inspection = await inspectionFromFlags(flags, undefined, options.apiKeys !== undefined || options.noAuth === true);
  options.inspect = inspection?.observer;
  if (options.format?.startsWith('text:')) {
    const factory = loadTextAdapterFactory();
    if (!factory) {
      startupFailure(json === true, '--parser needs the open-model text parsers (src/parsers), which this build does not include');
      return 1;
    }
    options.textAdapter = factory;
  }
  const host = options.host ?? '127.0.0.1';
  // Exposure warnings for a configuration that starts; without keys or --no-auth startGateway
  // refuses it with one line of its own.
  const authSet = options.apiKeys !== undefined || options.noAuth === true;
  if (!isLoopback(host) && authSet && json) logger.warn('exposed', { host, exposure: exposure(host), auth: options.apiKeys ? 'keys' : 'none' });
  else if (!isLoopback(host) && authSet && level !== 'silent')
    process.stderr.write(
      `sluice serve: warning: --host ${host} exposes the gateway to ${exposure(host)}` +
        (options.apiKeys ? ' (client API keys required)\n' : ' WITHOUT client authentication (--no-auth)\n'),
    );
  const opsHost = options.ops?.host;
  if (opsHost !== undefined && !isLoopback(opsHost) && authSet) {
    if (json) logger.warn('exposed', { opsHost, exposure: exposure(opsHost), auth: options.apiKeys ? 'keys' : 'none' });
    else if (level !== 'silent')
      process.stderr.write(
        `sluice serve: warning: --ops-host ${opsHost} exposes /health, /readyz and /metrics to ${exposure(opsHost)}` +
          (options.apiKeys ? ' (/metrics needs a client API key)\n' : ' WITHOUT client authentication (--no-auth)\n'),
      );
  }
  // OpenTelemetry only when OTEL_* asked for it: startOtel loads the SDK, nothing else does.
  const otel = otelConfig ? startOtel(otelConfig, { logger }) : undefined;
  options.observer = composeObservers(turnLogObserver(logger), otel?.observer);
  let gw;
  try {
    gw = await startGateway(options);
  } catch (err) {
    startupFailure(json === true, failureLine(err, false));
    await backend?.upstream.close();
    await otel?.shutdown();
    return 1;
  }
  otel?.exportFailures.countInto(gw.metrics);
  const bound = gw.server.address();
  logger.info('listening', {
    url: gw.url,
    ...(gw.ops ? { opsUrl: gw.ops.url } : {}),
    ...(bound && typeof bound === 'object' ? { address: bound.address, port: bound.port } : {}),
    auth: options.apiKeys ? `${options.apiKeys.length} key${options.apiKeys.length > 1 ? 's' : ''}` : 'off',
    upstream: safeUrl(options.upstream),
    upstreamFormat: options.upstreamFormat ?? 'inferred',
    format: options.format ?? 'default',
    ...(backend ? { scripted: backend.name } : {}),
    upstreamKey: options.upstreamApiKey !== undefined ? 'fixed' : 'pass-through',
  });
  if (level !== 'silent' && !json)
    process.stdout.write(
      `sluice gateway on ${gw.url} → ${backend ? `scripted:${backend.name} (${backend.format}, ${backend.attempts} attempt${backend.attempts > 1 ? 's' : ''}) at ` : ''}${safeUrl(options.upstream)}\n` +
        `  ANTHROPIC_BASE_URL=${gw.url}   OPENAI_BASE_URL=${gw.url}/v1\n` +
        (gw.ops ? `  operations (/health /readyz /metrics) on ${gw.ops.url}\n` : ''),
    );
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  // Graceful: readiness off, stop accepting, streams in flight finish (up to --drain-timeout), the
  // rest end with an error event. A second signal stops at once.
  logger.info('stopping', { active: gw.active() });
  const now = (): void => void gw.close();
  process.once('SIGINT', now);
  process.once('SIGTERM', now);
  const ended = await gw.drain();
  process.off('SIGINT', now);
  process.off('SIGTERM', now);
  logger.info('stopped', { endedByShutdown: ended });
  await backend?.upstream.close();
  await inspection?.close();
  await otel?.shutdown(); // flush spans and metrics after the last request ended
  return 0;
}
