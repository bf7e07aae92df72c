/**
 * OpenTelemetry for `sluice serve`, switched on by the standard `OTEL_*` environment variables
 * and nothing else (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/).
 *
 * - On when an OTLP endpoint is set (`OTEL_EXPORTER_OTLP_ENDPOINT`, `…_TRACES_ENDPOINT`,
 *   `…_METRICS_ENDPOINT`) or `OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER` says `otlp`.
 *   With none of them (or `OTEL_SDK_DISABLED=true`) nothing is loaded: `otelConfigFromEnv`
 *   answers undefined and the SDK packages are never required.
 * - `OTEL_EXPORTER_OTLP_PROTOCOL` (and the `_TRACES_` / `_METRICS_` variants): `http/protobuf`
 *   (the default) or `http/json`. `grpc` is refused (no gRPC exporter in this build).
 * - `OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER`: `otlp` or `none`.
 * - `OTEL_SERVICE_NAME` / `OTEL_RESOURCE_ATTRIBUTES` name the service (default `sluice-gateway`).
 * - Headers, timeouts, certificates, batch sizes (`OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_BSP_*`, …)
 *   are read by the exporters themselves; `OTEL_METRIC_EXPORT_INTERVAL` (default 60000 ms) here.
 *
 * A value that cannot work (unknown protocol or exporter, an endpoint that is not an http(s) URL)
 * throws `OtelConfigError` before anything starts: `sluice serve` prints it as a usage error.
 *
 * The providers are registered globally (with the async-hooks context manager and the W3C trace
 * context propagator), so the library's own turn and tool spans (src/telemetry) nest under the
 * gateway's request spans. SDK packages are imported only here (and the CLI), never by the library;
 * they are optional peer dependencies (`otelMissingPackages` names what to install).
 */
import type { ExchangeObserver } from './observer';
import { ExportFailures } from './exportWatch';
import { Logger } from './log';

export class OtelConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OtelConfigError';
  }
}

export type OtlpProtocol = 'http/protobuf' | 'http/json';

export interface OtelSignalConfig {
  url: string;
  protocol: OtlpProtocol;
}

export interface OtelConfig {
  serviceName: string;
  traces?: OtelSignalConfig;
  metrics?: OtelSignalConfig & { intervalMs: number };
}

const DEFAULT_ENDPOINT = 'http://localhost:4318';
const PROTOCOLS: readonly string[] = ['http/protobuf', 'http/json'];

function env1(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name]?.trim();
  return v === undefined || v === '' ? undefined : v;
}

function checkUrl(name: string, value: string): string {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new OtelConfigError(`${name} must be an http(s) URL (got "${value.slice(0, 100)}")`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new OtelConfigError(`${name} must be an http(s) URL (got "${value.slice(0, 100)}")`);
  return value;
}

function exporterChoice(env: NodeJS.ProcessEnv, name: string): 'otlp' | 'none' | undefined {
  const v = env1(env, name);
  if (v === undefined) return undefined;
  // The spec allows a comma-separated list; this build exports only to OTLP.
  const parts = v.split(',').map((s) => s.trim().toLowerCase());
  for (const p of parts)
    if (p !== 'otlp' && p !== 'none')
      throw new OtelConfigError(
        `${name}=${p} is not supported: use otlp or none` + (p === 'prometheus' ? ' (Prometheus metrics are at GET /metrics)' : ''),
      );
  return parts.includes('otlp') ? 'otlp' : 'none';
}

function signal(env: NodeJS.ProcessEnv, sig: 'TRACES' | 'METRICS', choice: 'otlp' | 'none' | undefined): OtelSignalConfig | undefined {
  if (choice === 'none') return undefined;
  const specific = env1(env, `OTEL_EXPORTER_OTLP_${sig}_ENDPOINT`);
  const general = env1(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  if (choice === undefined && specific === undefined && general === undefined) return undefined;
  const protoName = env1(env, `OTEL_EXPORTER_OTLP_${sig}_PROTOCOL`) !== undefined ? `OTEL_EXPORTER_OTLP_${sig}_PROTOCOL` : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = env1(env, protoName) ?? 'http/protobuf';
  if (!PROTOCOLS.includes(protocol))
    throw new OtelConfigError(`${protoName}=${protocol} is not supported: use http/protobuf or http/json`);
  const path = sig === 'TRACES' ? 'v1/traces' : 'v1/metrics';
  // Per the spec: the signal-specific endpoint is used as is; the general one gets /v1/<signal>.
  const url =
    specific !== undefined
      ? checkUrl(`OTEL_EXPORTER_OTLP_${sig}_ENDPOINT`, specific)
      : `${checkUrl('OTEL_EXPORTER_OTLP_ENDPOINT', general ?? DEFAULT_ENDPOINT).replace(/\/+$/, '')}/${path}`;
  return { url, protocol: protocol as OtlpProtocol };
}

/** What the environment asks for; undefined when telemetry is off (nothing to load). Throws OtelConfigError. */
export function otelConfigFromEnv(env: NodeJS.ProcessEnv = process.env): OtelConfig | undefined {
  if (env1(env, 'OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return undefined;
  const traces = signal(env, 'TRACES', exporterChoice(env, 'OTEL_TRACES_EXPORTER'));
  const metricsSig = signal(env, 'METRICS', exporterChoice(env, 'OTEL_METRICS_EXPORTER'));
  if (!traces && !metricsSig) return undefined;
  const intervalRaw = env1(env, 'OTEL_METRIC_EXPORT_INTERVAL');
  const intervalMs = intervalRaw === undefined ? 60_000 : Number(intervalRaw);
  if (!Number.isFinite(intervalMs) || intervalMs < 1)
    throw new OtelConfigError(`OTEL_METRIC_EXPORT_INTERVAL must be a positive number of milliseconds (got "${intervalRaw}")`);
  const config: OtelConfig = { serviceName: env1(env, 'OTEL_SERVICE_NAME') ?? 'sluice-gateway' };
  if (traces) config.traces = traces;
  if (metricsSig) config.metrics = { ...metricsSig, intervalMs };
  return config;
}

/**
 * The OpenTelemetry SDK is not a dependency of the package (it would be most of an install that
 * only `sluice serve` with `OTEL_*` uses): these are optional peer dependencies, found next to
 * the package or in the application that installed it (a checkout has them as devDependencies).
 */
export const OTEL_PACKAGES = {
  base: ['@opentelemetry/resources', '@opentelemetry/context-async-hooks', '@opentelemetry/core'],
  traces: ['@opentelemetry/sdk-trace-base'],
  metrics: ['@opentelemetry/sdk-metrics'],
  'traces:http/json': ['@opentelemetry/exporter-trace-otlp-http'],
  'traces:http/protobuf': ['@opentelemetry/exporter-trace-otlp-proto'],
  'metrics:http/json': ['@opentelemetry/exporter-metrics-otlp-http'],
  'metrics:http/protobuf': ['@opentelemetry/exporter-metrics-otlp-proto'],
} as const satisfies Record<string, readonly string[]>;

/** The packages `config` needs, in install order. */
export function otelPackagesFor(config: OtelConfig): string[] {
  const names: string[] = [...OTEL_PACKAGES.base];
  if (config.traces) names.push(...OTEL_PACKAGES.traces, ...OTEL_PACKAGES[`traces:${config.traces.protocol}`]);
  if (config.metrics) names.push(...OTEL_PACKAGES.metrics, ...OTEL_PACKAGES[`metrics:${config.metrics.protocol}`]);
  return names;
}

/**
 * Undefined when everything `config` needs resolves; otherwise one line naming exactly what to
 * install (`sluice serve` prints it and exits 1 before anything starts).
 */
export function otelMissingPackages(config: OtelConfig, resolve: (name: string) => unknown = require.resolve): string | undefined {
  const missing = otelPackagesFor(config).filter((name) => {
    try {
      resolve(name);
      return false;
    } catch {
      return true;
    }
  });
  if (missing.length === 0) return undefined;
  return `OTEL_* asks for OTLP export, which needs the OpenTelemetry SDK (optional peer dependencies of sluice): npm install ${missing.join(' ')}`;
}

export interface GatewayOtel {
  /** The per-request observer (spans and metrics); give it to startGateway({ observer }). */
  observer: ExchangeObserver;
  /** Flush what is buffered and stop the exporters (after the gateway drained). Never rejects. */
  shutdown(): Promise<void>;
  /** Failed exports, logged (rate-limited) and counted (exportWatch.ts): `countInto(gateway.metrics)`. */
  exportFailures: ExportFailures;
}

export interface StartOtelOptions {
  /** Where export failures are told (default: JSON lines on stderr at warn). */
  logger?: Logger;
  /** How often accumulated failures are told (ms; default one minute). */
  reportEveryMs?: number;
}

/* eslint-disable @typescript-eslint/no-require-imports -- the SDK loads only when OTEL_* asks for it */
/** Load the SDK, register global providers, and make the gateway observer. */
export function startOtel(config: OtelConfig, opts: StartOtelOptions = {}): GatewayOtel {
  const exportFailures = new ExportFailures(opts.logger ?? new Logger('warn'), opts.reportEveryMs);
  const { detectResources, envDetector, resourceFromAttributes } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const { AsyncHooksContextManager } = require('@opentelemetry/context-async-hooks') as typeof import('@opentelemetry/context-async-hooks');
  const { W3CTraceContextPropagator } = require('@opentelemetry/core') as typeof import('@opentelemetry/core');
  const telemetry = require('../telemetry/gateway') as typeof import('../telemetry/gateway');

  const resource = resourceFromAttributes({ 'service.name': config.serviceName }).merge(detectResources({ detectors: [envDetector] }));
  const stops: (() => Promise<void>)[] = [];
  const registration: Parameters<typeof telemetry.registerGlobalTelemetry>[0] = {
    contextManager: new AsyncHooksContextManager().enable(),
    propagator: new W3CTraceContextPropagator(),
  };
  if (config.traces) {
    const { BasicTracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base');
    const exporter =
      config.traces.protocol === 'http/json'
        ? new (require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter({ url: config.traces.url })
        : new (require('@opentelemetry/exporter-trace-otlp-proto') as typeof import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter({ url: config.traces.url });
    // BatchSpanProcessor gives an export 30 s (its exportTimeoutMillis default).
    exportFailures.watch(exporter, 'traces', 30_000);
    const provider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
    registration.tracerProvider = provider;
    stops.push(() => provider.shutdown());
  }
  if (config.metrics) {
    const { MeterProvider, PeriodicExportingMetricReader } = require('@opentelemetry/sdk-metrics') as typeof import('@opentelemetry/sdk-metrics');
    const exporter =
      config.metrics.protocol === 'http/json'
        ? new (require('@opentelemetry/exporter-metrics-otlp-http') as typeof import('@opentelemetry/exporter-metrics-otlp-http')).OTLPMetricExporter({ url: config.metrics.url })
        : new (require('@opentelemetry/exporter-metrics-otlp-proto') as typeof import('@opentelemetry/exporter-metrics-otlp-proto')).OTLPMetricExporter({ url: config.metrics.url });
    const interval = config.metrics.intervalMs;
    exportFailures.watch(exporter, 'metrics', Math.min(30_000, interval));
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: interval, exportTimeoutMillis: Math.min(30_000, interval) });
    const provider = new MeterProvider({ resource, readers: [reader] });
    registration.meterProvider = provider;
    stops.push(() => provider.shutdown());
  }
  const unregister = telemetry.registerGlobalTelemetry(registration);
  const observer = telemetry.createGatewayObserver();
  let done: Promise<void> | undefined;
  return {
    observer,
    exportFailures,
    shutdown: () =>
      (done ??= (async () => {
        // Export failures are told by exportFailures (the last ones at stop); shutdown never throws.
        await Promise.all(stops.map((s) => s().catch(() => undefined)));
        exportFailures.stop();
        unregister();
      })()),
  };
}
/* eslint-enable @typescript-eslint/no-require-imports */
