/**
 * startGateway's telemetry stage (server.ts): this gateway's Prometheus registry (metrics.ts; its
 * own registry, so two gateways in one process never share counters), whether `GET /metrics`
 * serves it, and the per-request observer. OpenTelemetry comes in as that observer
 * (src/telemetry/gateway.ts, built by `sluice serve` when OTEL_* asks for it: otel.ts).
 */
import { GatewayMetrics } from '../metrics';
import type { ExchangeObserver } from '../observer';
import type { GatewayOptions } from './options';

export interface Telemetry {
  metrics: GatewayMetrics;
  /** `GET /metrics` is served (main port and operations listener). */
  serveMetrics: boolean;
  observer: ExchangeObserver | undefined;
}

export function startTelemetry(options: GatewayOptions): Telemetry {
  return { metrics: new GatewayMetrics(), serveMetrics: options.metrics !== false, observer: options.observer };
}
