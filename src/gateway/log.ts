/**
 * Structured JSON logs for the gateway: one JSON object per line. Records carry ids, names,
 * counts, sizes, statuses and timings — never message text, tool arguments or tool results.
 *
 * `turnLogObserver` adds one `turn` record per model request (what `sluice report` reads from a
 * deployment's logs): format, model, outcome, attempts, stream end, and per released call its id,
 * name, completion and release time (ms since the request arrived), its release arm (`arm`:
 * `early`, or `holdout` under `--release-holdout`), and when it answers the tool calls of an
 * earlier response, `continues: {requestId, arm, format, model, turnMs, gapMs, calls}` — that
 * response's request id, arm, format and backend model, its arrival → backend stream end, that
 * stream end → this request's arrival, and how many of its call ids this request answers
 * (src/gateway/sessionLink.ts); `sessionId` when the client names its session in a header.
 */
import { performance } from 'node:perf_hooks';
import { type ExchangeObserver, type RequestObservation, TurnWatch } from './observer';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface LogRecord {
  level: Exclude<LogLevel, 'silent'>;
  msg: string;
  [key: string]: unknown;
}

export type LogSink = (record: LogRecord & { ts: string }) => void;

export class Logger {
  constructor(
    private readonly level: LogLevel = 'info',
    private readonly sink: LogSink = (r) => process.stderr.write(JSON.stringify(r) + '\n'),
  ) {}

  enabled(level: Exclude<LogLevel, 'silent'>): boolean {
    return RANK[level] >= RANK[this.level];
  }

  log(record: LogRecord): void {
    if (!this.enabled(record.level)) return;
    this.sink({ ts: new Date().toISOString(), ...record });
  }

  debug(msg: string, fields: Record<string, unknown> = {}): void {
    this.log({ level: 'debug', msg, ...fields });
  }
  info(msg: string, fields: Record<string, unknown> = {}): void {
    this.log({ level: 'info', msg, ...fields });
  }
  warn(msg: string, fields: Record<string, unknown> = {}): void {
    this.log({ level: 'warn', msg, ...fields });
  }
  error(msg: string, fields: Record<string, unknown> = {}): void {
    this.log({ level: 'error', msg, ...fields });
  }
}

export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];

/** The `msg` of the per-turn record (src/report reads it). */
export const TURN_RECORD = 'turn';

/**
 * One `turn` record per model request whose backend answered (at info), and a warn record when
 * the backend could not be reached (a dead backend is an operator's problem, not a client's).
 */
export function turnLogObserver(logger: Logger): ExchangeObserver {
  return {
    start(info): RequestObservation {
      const watch = new TurnWatch(info.arrivedAt);
      let firstByte: number | undefined;
      let attached = false;
      const nothing = (): void => undefined;
      return {
        upstreamHeaders: () => undefined,
        upstreamResponse: nothing,
        upstreamFailed: (errorType) =>
          logger.warn('upstream_unreachable', { reqId: info.reqId, upstreamFormat: info.upstreamFormat, errorType }),
        firstByte: () => {
          firstByte ??= performance.now();
        },
        firstClientByte: nothing,
        controller: (ctrl) => {
          attached = true;
          watch.attach(ctrl);
        },
        end: (r) => {
          if (!attached || !logger.enabled('info')) return;
          const f = watch.facts();
          const rec: LogRecord = {
            level: 'info',
            msg: TURN_RECORD,
            reqId: info.reqId,
            api: info.api,
            format: info.wire,
            upstreamFormat: info.upstreamFormat,
            model: info.model,
            upstreamModel: info.upstreamModel,
            status: r.status,
            outcome: r.outcome,
            attempts: f.attempts,
            durationMs: Math.round((performance.now() - info.arrivedAt) * 100) / 100,
            calls: f.calls.map((c) => ({
              i: c.index,
              id: c.id ?? null,
              name: c.name ?? null,
              completeMs: c.completeMs ?? null,
              releasedMs: c.releasedMs ?? null,
            })),
            malformedCalls: r.malformedCalls,
            warnings: f.warnings,
            violations: f.violations,
            arm: info.arm ?? 'early',
          };
          if (info.continues !== undefined) {
            const c = info.continues;
            rec.continues = { requestId: c.requestId, arm: c.arm, format: c.format, model: c.model, turnMs: c.turnMs, gapMs: c.gapMs, calls: c.calls };
          }
          if (info.sessionId !== undefined) rec.sessionId = info.sessionId;
          if (f.streamEndMs !== undefined) rec.streamEndMs = f.streamEndMs;
          if (firstByte !== undefined) rec.firstByteMs = Math.round((firstByte - info.arrivedAt) * 100) / 100;
          if (r.errorType !== undefined) rec.errorType = r.errorType;
          // How the backend's stream ended (SPEC §12; `sluice report` counts truncated ones per provider).
          rec.backendEnd = r.backendEnd ?? 'error';
          if (r.inputTokens !== undefined) rec.inputTokens = r.inputTokens;
          if (r.outputTokens !== undefined) rec.outputTokens = r.outputTokens;
          logger.log(rec);
        },
      };
    },
  };
}
