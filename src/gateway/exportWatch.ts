/**
 * OpenTelemetry export failures, made visible. The SDK reports a failed OTLP export only to its
 * `diag` logger, which is silent unless someone installs one: a collector that is down, answers
 * 500 or hangs used to produce nothing at all. `ExportFailures.watch` wraps an exporter's `export`
 * and hears every result:
 *
 * - the first failure of a signal (after start, or after it recovered) is one warn line
 *   (`otlp_export_failed`: signal, the error's message cut to 200 characters — the SDK's own text,
 *   a status or a socket error, never telemetry contents);
 * - later failures are counted and told once a minute (`otlp_export_failures`: signal, count);
 * - the first success after failures is one info line (`otlp_export_recovered`);
 * - every failure counts in `/metrics` (`sluice_gateway_otlp_export_failures_total{signal}`) once
 *   the gateway's metrics are attached (`countInto`);
 * - an export that does not answer within `timeoutMs` is a failure (`no answer within N ms`); its
 *   late answer is ignored.
 */
import type { Logger } from './log';
import type { GatewayMetrics } from './metrics';

/** The SDK's `ExportResult` (`@opentelemetry/core`): code 0 is success. */
interface ExportResultLike {
  code: number;
  error?: Error;
}

/** What an OTLP exporter offers (spans or metrics). */
export interface ExporterLike {
  export(items: never, resultCallback: (result: ExportResultLike) => void): void;
}

export type ExportSignal = 'traces' | 'metrics';

interface SignalState {
  /** Failures since the last report line. */
  unreported: number;
  /** Failing now (the first failure was told). */
  failing: boolean;
}

export class ExportFailures {
  private readonly state = new Map<ExportSignal, SignalState>();
  private metrics?: GatewayMetrics;
  /** Failures before the metrics were attached, per signal. */
  private readonly early = new Map<ExportSignal, number>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly logger: Logger,
    /** How often accumulated failures are told (ms). Default one minute. */
    private readonly everyMs = 60_000,
  ) {}

  /** Count failures in this gateway's `/metrics` (those so far included). */
  countInto(metrics: GatewayMetrics): void {
    this.metrics = metrics;
    for (const [signal, n] of this.early) metrics.otlpExportFailures.inc({ signal }, n);
    this.early.clear();
  }

  /** Wrap `exporter.export` in place (and return the exporter). */
  watch<E extends ExporterLike>(exporter: E, signal: ExportSignal, timeoutMs: number): E {
    const original = exporter.export.bind(exporter);
    const wrapped = (items: never, resultCallback: (result: ExportResultLike) => void): void => {
      let settled = false;
      const settle = (result: ExportResultLike): void => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        if (result.code === 0) this.succeeded(signal);
        else this.failed(signal, result.error?.message ?? 'export failed');
      };
      const deadline = setTimeout(() => settle({ code: 1, error: new Error(`no answer within ${timeoutMs} ms`) }), timeoutMs);
      deadline.unref();
      original(items, (result) => {
        settle(result);
        resultCallback(result);
      });
    };
    exporter.export = wrapped;
    return exporter;
  }

  failed(signal: ExportSignal, message: string): void {
    const s = this.of(signal);
    if (this.metrics) this.metrics.otlpExportFailures.inc({ signal });
    else this.early.set(signal, (this.early.get(signal) ?? 0) + 1);
    if (!s.failing) {
      s.failing = true;
      this.logger.warn('otlp_export_failed', { signal, error: message.slice(0, 200) });
      this.startReports();
      return;
    }
    s.unreported++;
  }

  succeeded(signal: ExportSignal): void {
    const s = this.state.get(signal);
    if (!s?.failing) return;
    this.report();
    s.failing = false;
    this.logger.info('otlp_export_recovered', { signal });
  }

  /** Tell the failures counted since the last line (one line per signal that had some). */
  report(): void {
    for (const [signal, s] of this.state) {
      if (s.unreported === 0) continue;
      this.logger.warn('otlp_export_failures', { signal, failures: s.unreported, periodMs: this.everyMs });
      s.unreported = 0;
    }
  }

  /** Stop the minute timer (at shutdown), telling what is left. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.report();
  }

  private startReports(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.report(), this.everyMs);
    this.timer.unref();
  }

  private of(signal: ExportSignal): SignalState {
    let s = this.state.get(signal);
    if (!s) this.state.set(signal, (s = { unreported: 0, failing: false }));
    return s;
  }
}
