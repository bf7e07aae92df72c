/**
 * Structured JSON logs for the gateway: one JSON object per line. Records carry ids, names,
 * counts, sizes, statuses and timings — never message text, tool arguments or tool results.
 */

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
