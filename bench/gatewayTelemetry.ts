/**
 * Gateway telemetry cost (SPEC §11: telemetry off ≤ 3% CPU per chunk): CPU per backend chunk of
 * one streaming request through an in-process gateway, three gateways side by side in one
 * process, samples alternating between them:
 *
 * - `none`: no observer at all (the NOOP seam);
 * - `off`: what `sluice serve` runs without OTEL_* — the per-turn log record (turnLogObserver,
 *   JSON-encoded into a sink that drops it) and nothing else;
 * - `on`: the log record plus the OpenTelemetry observer with the real SDK registered
 *   (BasicTracerProvider + BatchSpanProcessor into an exporter that drops, a MeterProvider whose
 *   reader never exports during the run): SERVER + CLIENT span, one event per call, the metrics.
 *
 * The turn, the scripted backend and the client are bench/gatewayInbound.ts's (~50 chunks, four
 * calls). The process's CPU includes the backend and the client, the same for every side, so the
 * ratios understate nothing that the observer adds.
 *
 *   npx ts-node --transpile-only bench/gatewayTelemetry.ts [--budget-ms N]
 */
import * as http from 'node:http';
import { MeterProvider, PeriodicExportingMetricReader, InMemoryMetricExporter, AggregationTemporality } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { AsyncHooksContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { Logger, turnLogObserver } from '../src/gateway/log';
import { composeObservers, type ExchangeObserver } from '../src/gateway/observer';
import { type Gateway, startGateway } from '../src/gateway/server';
import { createGatewayObserver, registerGlobalTelemetry } from '../src/telemetry/gateway';
import { DEFAULT_SHAPE, isCorrect, roundTrip, startTurnUpstream, turnScript } from './gatewayInbound';
import { median } from './throughput';

export interface GatewayTelemetryRow {
  side: 'none' | 'off' | 'on';
  /** Median CPU µs per backend chunk (the whole process: gateway, backend and client). */
  cpuUsPerChunk: number;
  /** vs `none`. */
  ratio: number;
  samples: number;
  chunksPerRequest: number;
}

class DropExporter implements SpanExporter {
  export(_spans: ReadableSpan[], done: (r: { code: number }) => void): void {
    done({ code: 0 });
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

export async function benchGatewayTelemetry(opts: { budgetMs?: number; requestsPerSample?: number; log?: (s: string) => void } = {}): Promise<GatewayTelemetryRow[]> {
  const budgetMs = opts.budgetMs ?? 6000;
  const perSample = opts.requestsPerSample ?? 20;
  const chunks = turnScript('x', 0, DEFAULT_SHAPE).lines.length;
  const up = await startTurnUpstream(() => 0);
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(new DropExporter())] });
  const meterProvider = new MeterProvider({
    readers: [new PeriodicExportingMetricReader({ exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE), exportIntervalMillis: 3_600_000 })],
  });
  const unregister = registerGlobalTelemetry({
    contextManager: new AsyncHooksContextManager().enable(),
    propagator: new W3CTraceContextPropagator(),
    tracerProvider,
    meterProvider,
  });
  // The log record is built and JSON-encoded as on stderr, then dropped.
  const logger = new Logger('info', (r) => void JSON.stringify(r));
  const sides: { side: GatewayTelemetryRow['side']; observer?: ExchangeObserver }[] = [
    { side: 'none' },
    { side: 'off', observer: turnLogObserver(logger) },
    { side: 'on', observer: composeObservers(turnLogObserver(logger), createGatewayObserver()) },
  ];
  const gws: Gateway[] = [];
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  let seq = 0;
  try {
    for (const s of sides) gws.push(await startGateway({ upstream: up.url, logger, pingIntervalMs: 0, keepAliveTimeoutMs: 600_000, ...(s.observer ? { observer: s.observer } : {}) }));
    const batch = async (k: number): Promise<void> => {
      const all: Promise<void>[] = [];
      for (let i = 0; i < perSample; i++) {
        const tag = `req${++seq}x`;
        // One retry: on a loaded machine a pooled backend socket can be closed by its keep-alive
        // timeout just as it is reused (the gateway answers 502); every side sees that alike.
        all.push(
          roundTrip(gws[k]!.url, 'chat', tag, agent)
            .catch(() => roundTrip(gws[k]!.url, 'chat', tag, agent))
            .then((got) => {
              if (!isCorrect(got, tag)) throw new Error(`gateway telemetry bench: wrong answer on side ${sides[k]!.side}`);
            }),
        );
      }
      await Promise.all(all);
    };
    for (let k = 0; k < sides.length; k++) await batch(k); // warm-up
    const cpu: number[][] = sides.map(() => []);
    const until = performance.now() + budgetMs;
    let round = 0;
    while (performance.now() < until || round < 5) {
      // Rotate the order each round so no side always runs right after another.
      for (let j = 0; j < sides.length; j++) {
        const k = (j + round) % sides.length;
        const c0 = process.cpuUsage();
        await batch(k);
        const c = process.cpuUsage(c0);
        cpu[k]!.push((c.user + c.system) / (perSample * chunks));
      }
      round++;
    }
    const none = median(cpu[0]!);
    const rows = sides.map((s, k) => ({ side: s.side, cpuUsPerChunk: Math.round(median(cpu[k]!) * 100) / 100, ratio: Math.round((median(cpu[k]!) / none) * 1000) / 1000, samples: cpu[k]!.length, chunksPerRequest: chunks }));
    opts.log?.(formatGatewayTelemetry(rows));
    return rows;
  } finally {
    agent.destroy();
    for (const g of gws) await g.close();
    await up.close();
    await tracerProvider.shutdown();
    await meterProvider.shutdown();
    unregister();
  }
}

export function formatGatewayTelemetry(rows: GatewayTelemetryRow[]): string {
  const lines = ['| observer | CPU µs / chunk | vs none | samples |', '|---|--:|--:|--:|'];
  for (const r of rows) lines.push(`| ${r.side} | ${r.cpuUsPerChunk.toFixed(2)} | ${r.ratio.toFixed(3)} | ${r.samples} |`);
  return lines.join('\n') + `\n\n(${rows[0]?.chunksPerRequest ?? 0} backend chunks per request; CPU of the whole process: gateway, backend and client)\n`;
}

if (require.main === module) {
  const i = process.argv.indexOf('--budget-ms');
  const budgetMs = i >= 0 ? Number(process.argv[i + 1]) : undefined;
  benchGatewayTelemetry({ ...(budgetMs ? { budgetMs } : {}), log: (s) => process.stdout.write(s) }).catch((e: unknown) => {
    process.stderr.write(`bench/gatewayTelemetry: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  });
}
