import Anthropic from '@anthropic-ai/sdk';
import { type ChildProcess, spawn } from 'node:child_process';
import * as http from 'node:http';
import * as path from 'node:path';
import { type Gateway, type GatewayOptions, startGateway } from '../../src/gateway/server';
import { Logger, type LogSink } from '../../src/gateway/log';
import { type ScriptedUpstream, type ScriptedUpstreamOptions, startScriptedUpstream } from '../../src/gateway/scripted';
import { childCli, childEnv } from '../journal/childBuild';

export type RawEvent = Anthropic.Messages.RawMessageStreamEvent;

export interface Rig {
  up: ScriptedUpstream;
  gw: Gateway;
  client: Anthropic;
  logs: Record<string, unknown>[];
  close(): Promise<void>;
}

/** A scripted upstream + a gateway in front of it + an Anthropic SDK client pointed at the gateway. */
export async function rig(upOpts: ScriptedUpstreamOptions, gwOpts: Partial<GatewayOptions> = {}): Promise<Rig> {
  const up = await startScriptedUpstream(upOpts);
  const logs: Record<string, unknown>[] = [];
  const sink: LogSink = (r) => logs.push(r);
  const gw = await startGateway({ upstream: up.url, logger: new Logger('debug', sink), pingIntervalMs: 0, ...gwOpts });
  const client = new Anthropic({ baseURL: gw.url, apiKey: 'dummy-key', maxRetries: 0, timeout: 20_000 });
  return {
    up,
    gw,
    client,
    logs,
    close: async () => {
      await gw.close();
      await up.close();
    },
  };
}

/** Consume an SDK event stream in the background; `until(pred)` waits for a matching event. */
export class Collector {
  readonly events: RawEvent[] = [];
  error?: unknown;
  readonly done: Promise<void>;
  private waiters: { pred: (e: RawEvent) => boolean; resolve: () => void }[] = [];

  constructor(stream: AsyncIterable<RawEvent>) {
    this.done = (async () => {
      try {
        for await (const e of stream) {
          this.events.push(e);
          this.waiters = this.waiters.filter((w) => {
            if (w.pred(e)) {
              w.resolve();
              return false;
            }
            return true;
          });
        }
      } catch (err) {
        this.error = err;
      } finally {
        for (const w of this.waiters) w.resolve();
        this.waiters = [];
      }
    })();
  }

  until(pred: (e: RawEvent) => boolean): Promise<void> {
    if (this.events.some(pred)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ pred, resolve }));
  }

  types(): string[] {
    return this.events.map((e) => e.type);
  }
}

export interface ToolBlock {
  index: number;
  id: string;
  name: string;
  json: string;
  stops: number;
}

/** Assemble tool_use blocks from raw events and check the one-block-open-at-a-time rule. */
export function toolBlocks(events: RawEvent[]): ToolBlock[] {
  const blocks = new Map<number, ToolBlock>();
  let open: number | undefined;
  let next = 0;
  for (const e of events) {
    if (e.type === 'content_block_start') {
      if (open !== undefined) throw new Error(`block ${e.index} started while ${open} is open`);
      if (e.index !== next) throw new Error(`block index ${e.index}, expected ${next}`);
      next++;
      open = e.index;
      if (e.content_block.type === 'tool_use')
        blocks.set(e.index, { index: e.index, id: e.content_block.id, name: e.content_block.name, json: '', stops: 0 });
    } else if (e.type === 'content_block_delta') {
      if (open !== e.index) throw new Error(`delta for ${e.index} while ${String(open)} is open`);
      if (e.delta.type === 'input_json_delta') blocks.get(e.index)!.json += e.delta.partial_json;
    } else if (e.type === 'content_block_stop') {
      if (open !== e.index) throw new Error(`stop for ${e.index} while ${String(open)} is open`);
      open = undefined;
      const b = blocks.get(e.index);
      if (b) b.stops++;
    }
  }
  return [...blocks.values()];
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json?: unknown;
}

/** A plain HTTP request (for malformed bodies and raw SSE). */
export function rawRequest(
  url: string,
  opts: { method?: string; path: string; body?: string | Buffer; headers?: Record<string, string> },
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const u = new URL(opts.path, url);
    const req = http.request(
      u,
      { method: opts.method ?? 'POST', headers: { 'content-type': 'application/json', connection: 'close', ...opts.headers }, agent: false },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('end', () => {
          const text = Buffer.concat(parts).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** Parse SSE text into `{event, data}` frames. */
export function sseFrames(text: string): { event: string; data: unknown }[] {
  return text
    .split('\n\n')
    .filter((f) => f.trim().length > 0)
    .map((f) => {
      const ev = /^event: (.*)$/m.exec(f)?.[1] ?? '';
      const data = /^data: (.*)$/m.exec(f)?.[1] ?? '';
      return { event: ev, data: JSON.parse(data) as unknown };
    });
}

export const READ_FILE_TOOL = {
  name: 'read_file',
  description: 'Read a file',
  input_schema: { type: 'object' as const, properties: { path: { type: 'string' } }, required: ['path'] },
};

/** Poll until `cond()` holds (or fail after `ms`). */
export async function eventually(cond: () => boolean, ms = 2000, what = 'condition'): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** An openai SDK client for a gateway (`/v1` base, no retries). */
export function openaiClient(gwUrl: string): import('openai').default {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the openai SDK is only needed by the OpenAI-client tests
  const OpenAI = (require('openai') as { default: typeof import('openai').default }).default;
  return new OpenAI({ baseURL: `${gwUrl}/v1`, apiKey: 'dummy-key', maxRetries: 0, timeout: 20_000 });
}

/** Chat tool: read_file in OpenAI Chat shape. */
export const READ_FILE_CHAT_TOOL = {
  type: 'function' as const,
  function: { name: READ_FILE_TOOL.name, description: READ_FILE_TOOL.description, parameters: READ_FILE_TOOL.input_schema },
};

/** Responses tool: read_file in OpenAI Responses shape. */
export const READ_FILE_RESPONSES_TOOL = {
  type: 'function' as const,
  name: READ_FILE_TOOL.name,
  description: READ_FILE_TOOL.description,
  parameters: READ_FILE_TOOL.input_schema,
  strict: false,
};

export interface TimedLine {
  /** Date.now() when the line arrived. */
  at: number;
  text: string;
}

/** Split a stream into lines, each stamped with its arrival time. */
function timedLines(stream: NodeJS.ReadableStream, into: TimedLine[], onText?: (all: string) => void): void {
  let buf = '';
  let all = '';
  stream.on('data', (c: Buffer) => {
    const s = c.toString();
    all += s;
    buf += s;
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      into.push({ at: Date.now(), text: buf.slice(0, nl) });
      buf = buf.slice(nl + 1);
    }
    onText?.(all);
  });
}

export interface ServeProcess {
  child: ChildProcess;
  /** The listening URL, when it started. */
  url?: string;
  /** The exit code, when it exited before listening. */
  code?: number | null;
  /** stderr so far (when it resolved). */
  err: string;
  /** stdout so far (the banner), when it resolved. */
  out: string;
  /** Every stderr line (log lines included), stamped. */
  lines: TimedLine[];
  /** stderr and stdout as they are now (they keep growing after it resolved). */
  errNow(): string;
  outNow(): string;
  /** SIGTERM; resolves with the exit code. */
  stop(): Promise<number | null>;
}

export interface ServeOptions {
  /** Added to the environment (after `childEnv()`). */
  env?: Record<string, string>;
  /** Leave out the test process's own OTEL_* variables (the child sees only `env`'s). */
  dropOtelEnv?: boolean;
  /** Node options before the CLI (e.g. `-r preload.js`). */
  nodeArgs?: string[];
  /** How long it may take to listen (default 30 s). */
  startMs?: number;
}

/**
 * `sluice serve ARGS` as a process (plain node on the cached transpile of the sources,
 * test/journal/childBuild.ts: no ts-node): resolves once it listens (the banner on stdout, or with
 * `--log-format json` the `listening` log record on stderr), or when it exits first.
 */
export function spawnServe(args: string[], opts: ServeOptions = {}): Promise<ServeProcess> {
  const base = childEnv();
  if (opts.dropOtelEnv) for (const k of Object.keys(base)) if (k.startsWith('OTEL_')) delete base[k];
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), childCli(), 'serve', ...args], {
    cwd: path.resolve(__dirname, '../..'),
    env: { ...base, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: TimedLine[] = [];
  let err = '';
  let out = '';
  const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  const handle = (fields: { url?: string; code?: number | null }): ServeProcess => ({
    child,
    ...fields,
    err,
    out,
    lines,
    errNow: () => err,
    outNow: () => out,
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  });
  return new Promise((resolve, reject) => {
    const startMs = opts.startMs ?? 30_000;
    const timer = setTimeout(() => reject(new Error(`sluice serve did not start within ${startMs} ms; stderr: ${err}`)), startMs);
    const listening = (m: RegExpExecArray | null): void => {
      if (m === null) return;
      clearTimeout(timer);
      resolve(handle({ url: m[1]! }));
    };
    timedLines(child.stderr!, lines, (all) => {
      err = all;
      listening(/"msg":"listening","url":"(http:\/\/[\d.]+:\d+)"/.exec(all));
    });
    // The human banner is on stdout (the logs are JSON lines on stderr).
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      listening(/sluice gateway on (http:\/\/[\d.]+:\d+)/.exec(out));
    });
    void exited.then((code) => {
      clearTimeout(timer);
      resolve(handle({ code }));
    });
  });
}

/** Run a CLI to its end (killed after `timeoutMs`); stdout lines are stamped as they arrive. */
export async function runCli(
  bin: string,
  args: string[],
  opts: { cwd: string; env: Record<string, string>; timeoutMs?: number; tag: string },
): Promise<{ code: number | null; out: string; lines: TimedLine[]; err: string }> {
  const child = spawn(bin, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: TimedLine[] = [];
  let out = '';
  let err = '';
  timedLines(child.stdout, lines, (all) => (out = all));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
  const code = await new Promise<number | null>((res) => child.on('close', res));
  clearTimeout(killer);
  if (code !== 0) process.stderr.write(`[${opts.tag}] exit ${code}\nstdout: ${out.slice(0, 3000)}\nstderr: ${err.slice(0, 2000)}\n`);
  return { code, out, lines, err };
}
