import * as fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { exposure, isLoopback } from '../gateway/auth';
import type { AnyActorRef, InspectionEvent } from 'xstate';
import { UsageError } from './args';

/**
 * `--inspect` and `--inspect-log FILE` for demo / replay / serve.
 *
 * - `--inspect` starts `@statelyai/inspect`'s local relay (`createInspectorServer`: an HTTP page
 *   plus a websocket server) and connects the actors to it with `createWebSocketInspector`. Open
 *   the printed URL in a browser: the page embeds the Stately inspector UI (stately.ai/inspect,
 *   which needs internet in the browser; sluice itself needs none).
 * - `--inspect-log FILE` records the same inspection events (the Stately format: `@xstate.actor`
 *   with the machine definition, `@xstate.event`, `@xstate.snapshot`) as JSON lines, to look at
 *   or import later without a browser.
 *
 * Argument and result contents are redacted by default (`[redacted: N chars]`); ids, names,
 * states, flags and sizes stay. `contents: true` (`--inspect-contents`) keeps them.
 *
 * `@statelyai/inspect` is an optional peer dependency and ESM-only: it is loaded with a dynamic
 * import at run time, never at module load, so nothing else pays for it; without it the flags
 * fail with a one-line usage error that says what to install.
 */

export interface InspectionOptions {
  inspect?: boolean;
  logFile?: string;
  /** Relay port for --inspect (default SLUICE_INSPECT_PORT or 8080, the inspector's own default). */
  port?: number;
  /**
   * Relay bind address (`--inspect-host`, SLUICE_INSPECT_HOST). Default 127.0.0.1: only this
   * machine can watch. Anything else prints a warning naming the exposure.
   */
  host?: string;
  /** Keep argument/result contents (default: redacted). */
  contents?: boolean;
  /** Where to print the relay URL and problems. */
  write?: (s: string) => void;
  /**
   * A non-loopback relay host is allowed only with this (sluice serve: `--api-key` or `--no-auth`,
   * the same rule as `--host`); otherwise it is a usage error.
   */
  exposureAllowed?: boolean;
  /** Whether `write` shows on an interactive terminal (default: stderr is a TTY). */
  tty?: boolean;
}

export interface Inspection {
  /** Pass to `TurnController({ inspect })`; undefined when inspection is off. */
  observer?: (e: InspectionEvent) => void;
  /**
   * Flush deferred events and close the log. With --inspect on a terminal, the relay stays up
   * until Enter or Ctrl+C so the inspector page can still be looked at; then it stops.
   */
  close(): Promise<void>;
}

/** Wait for Enter or Ctrl+C on an interactive terminal (resolves at once otherwise). */
function waitForQuit(write: (s: string) => void): Promise<void> {
  if (!process.stdin.isTTY) return Promise.resolve();
  write('inspector relay still running — press Enter (or Ctrl+C) to stop it\n');
  return new Promise((resolve) => {
    const done = (): void => {
      process.stdin.off('data', done);
      process.off('SIGINT', done);
      process.stdin.pause();
      resolve();
    };
    process.stdin.resume();
    process.stdin.once('data', done);
    process.once('SIGINT', done);
  });
}

/** Keys whose values are contents (tool arguments, results, model text). */
const CONTENT_KEYS = new Set([
  'input',
  'content',
  'text',
  'args',
  'arguments',
  'argsText',
  'partial_json',
  'thinking',
]);

/**
 * A JSON-safe copy of `value`: functions dropped, actor refs replaced by their id, cycles cut,
 * depth limited, and (unless `contents`) every content field replaced by its size.
 */
export function redact(
  value: unknown,
  contents = false,
  depth = 8,
  seen: WeakSet<object> = new WeakSet(),
): unknown {
  if (value === null || typeof value !== 'object') return typeof value === 'function' ? undefined : value;
  if (seen.has(value)) return '[cycle]';
  if (depth <= 0) return '[…]';
  const o = value as Record<string, unknown>;
  if (typeof o.send === 'function' && typeof o.getSnapshot === 'function') {
    return { actor: typeof o.id === 'string' ? o.id : String(o.sessionId ?? '?') };
  }
  seen.add(value);
  try {
    if (Array.isArray(value)) return value.map((v) => redact(v, contents, depth - 1, seen) ?? null);
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(o)) {
      if (typeof v === 'function') continue;
      if (!contents && CONTENT_KEYS.has(k) && v !== undefined && v !== null) {
        out[k] = typeof v === 'string' ? `[redacted: ${v.length} chars]` : '[redacted]';
        continue;
      }
      const r = redact(v, contents, depth - 1, seen);
      if (r !== undefined) out[k] = r;
    }
    return out;
  } finally {
    seen.delete(value);
  }
}

/** Keep what the inspector shows of a snapshot (status, value, context, output), not the machine. */
function slim(ev: unknown): unknown {
  if (typeof ev !== 'object' || ev === null) return ev;
  const e = ev as Record<string, unknown>;
  const snap = e.snapshot as Record<string, unknown> | undefined;
  if (!snap || typeof snap !== 'object') return ev;
  const keep: Record<string, unknown> = {};
  for (const k of ['status', 'value', 'context', 'output', 'error'])
    if (snap[k] !== undefined) keep[k] = snap[k];
  return { ...e, snapshot: keep };
}

interface StatelyInspector {
  inspect: { next: (e: InspectionEvent) => void };
  stop(): void;
}
interface InspectModule {
  createInspector(
    adapter: { send(e: unknown): void; start?(): void; stop?(): void },
    options?: Record<string, unknown>,
  ): StatelyInspector;
  createWebSocketInspector(options: Record<string, unknown>): StatelyInspector;
}
/** The parts of `ws` (a dependency of @statelyai/inspect) the relay uses. */
interface WsSocket {
  readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  on(event: 'message', fn: (data: unknown) => void): void;
  on(event: 'close', fn: () => void): void;
}
interface WsModule {
  WebSocketServer: new (opts: { server: http.Server }) => {
    on(event: 'connection', fn: (ws: WsSocket, req: http.IncomingMessage) => void): void;
    close(): void;
  };
}

async function load<T>(spec: string): Promise<T> {
  const pkg = spec.split('/').slice(0, 2).join('/');
  try {
    // A computed specifier: TypeScript leaves the ESM-only package alone; Node's require(esm) loads it.
    return (await import(spec)) as T;
  } catch (err) {
    const code = (err as { code?: unknown })?.code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      // An optional peer dependency of sluice: only inspection needs it.
      throw new UsageError(`--inspect and --inspect-log need the optional package ${pkg}: npm install ${pkg}`);
    }
    throw new UsageError(`${pkg} could not be loaded for inspection: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** SLUICE_INSPECT_PORT (default 8080): a port number, else a usage error. */
function inspectPort(v: string | undefined): number {
  if (v === undefined || v === '') return 8080;
  const n = /^\d+$/.test(v.trim()) ? Number(v) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > 65_535) throw new UsageError(`SLUICE_INSPECT_PORT must be an integer from 1 to 65535 (got "${v}")`);
  return n;
}

/**
 * Write the viewer URL to `viewer-url` in a fresh private directory (0700) as a 0600 file;
 * SLUICE_INSPECT_TOKEN_DIR picks the parent (default: the system temp directory). Returns the path.
 */
function writeTokenFile(url: string): string {
  const parent = process.env.SLUICE_INSPECT_TOKEN_DIR || os.tmpdir();
  const dir = fs.mkdtempSync(path.join(parent, 'sluice-inspect-'));
  fs.chmodSync(dir, 0o700);
  const file = path.join(dir, 'viewer-url');
  fs.writeFileSync(file, url + '\n', { mode: 0o600, flag: 'wx' });
  return file;
}

/** The relay cannot report a busy port itself (it would crash later): check first. */
function ensurePortFree(port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new UsageError(
          `--inspect: port ${port} is not available (${err.code ?? err.message}); set SLUICE_INSPECT_PORT`,
        ),
      ),
    );
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}

const tick = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function createInspection(opts: InspectionOptions): Promise<Inspection> {
  if (!opts.inspect && !opts.logFile) return { observer: undefined, close: async () => undefined };
  const write = opts.write ?? ((s: string) => process.stderr.write(s));
  const contents = opts.contents === true;
  const mod = await load<InspectModule>('@statelyai/inspect');
  const inspectorOptions = {
    sanitizeContext: (ctx: unknown) => redact(ctx, contents),
    sanitizeEvent: (ev: unknown) => redact(ev, contents),
    serialize: (ev: unknown) => redact(slim(ev), contents, 12),
  };
  const inspectors: StatelyInspector[] = [];
  let stream: fs.WriteStream | undefined;
  let server: { stop(): void } | undefined;
  let tokenFile: string | undefined;

  if (opts.logFile) {
    const s = fs.createWriteStream(opts.logFile);
    stream = s;
    inspectors.push(
      mod.createInspector({ send: (e) => s.write(JSON.stringify(e) + '\n') }, inspectorOptions),
    );
  }
  if (opts.inspect) {
    const port = opts.port ?? inspectPort(process.env.SLUICE_INSPECT_PORT);
    const host = opts.host ?? (process.env.SLUICE_INSPECT_HOST || '127.0.0.1');
    if (!isLoopback(host) && opts.exposureAllowed !== true)
      throw new UsageError(
        `--inspect-host ${host} would expose the inspector relay to ${exposure(host)}; it needs --api-key (or --no-auth) on sluice serve, like --host`,
      );
    await ensurePortFree(port, host);
    const relay = await startRelay(port, host);
    server = relay;
    inspectors.push(mod.createWebSocketInspector({ url: relay.sourceUrl, ...inspectorOptions }));
    if (!isLoopback(host))
      write(
        `warning: --inspect-host ${host} exposes the inspector relay (call names, states, sizes${contents ? ', and with --inspect-contents arguments and results' : ''}) to ${exposure(host)}; anyone with the URL below can watch\n`,
      );
    // The viewer URL carries the access token: never into captured logs. A terminal sees it once;
    // otherwise it goes to a file only this user can read, and the log gets the file's path.
    if (opts.tty ?? process.stderr.isTTY === true) {
      write(`inspector relay: open ${relay.viewerUrl} in a browser (the page embeds stately.ai/inspect)\n`);
    } else {
      tokenFile = writeTokenFile(relay.viewerUrl);
      write(`inspector relay on ${relay.publicUrl} (the page embeds stately.ai/inspect): its URL with the access token is in ${tokenFile} (mode 0600)\n`);
    }
  }

  return {
    observer: (e) => {
      for (const i of inspectors) i.inspect.next(e);
    },
    close: async () => {
      // The inspector converts events on a timer: let the last ones through first.
      await tick(30);
      for (const i of inspectors) i.stop();
      if (stream) {
        const s = stream;
        await new Promise<void>((r) => s.end(r));
      }
      if (server) {
        await waitForQuit(write);
        server.stop();
        if (tokenFile) fs.rmSync(path.dirname(tokenFile), { recursive: true, force: true });
        // The relay's HTTP server waits for open browser/websocket connections, which would keep
        // the process alive; once everything else is done, leave anyway (unref: no delay otherwise).
        setTimeout(() => process.exit(process.exitCode ?? 0), 500).unref();
      }
    },
  };
}

/**
 * Inspect an actor that is already running (its system's inspection hook; used when the code
 * that creates the actor takes no `inspect` option, e.g. `replayTrace`). The root actor's
 * registration happened before, so it is announced first.
 */
export function attachInspection(actor: AnyActorRef, observer: (e: InspectionEvent) => void): void {
  observer({ type: '@xstate.actor', actorRef: actor, rootId: actor.sessionId });
  actor.system.inspect(observer);
}

/** The inspector page: the Stately inspector in an iframe, fed from the relay's websocket. */
function viewerPage(): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>sluice inspector</title>
<style>html,body,iframe{margin:0;border:0;width:100%;height:100%}</style></head>
<body><iframe id="ui" src="https://stately.ai/inspect"></iframe><script>
const ui = document.getElementById('ui');
const queue = [];
let ready = false;
addEventListener('message', (e) => {
  if (e.data && e.data.type === '@statelyai.connected') { ready = true; queue.splice(0).forEach((m) => ui.contentWindow.postMessage(m, '*')); }
});
const ws = new WebSocket('ws://' + location.host + '/' + location.search);
ws.onmessage = (e) => { const m = JSON.parse(e.data); if (ready) ui.contentWindow.postMessage(m, '*'); else queue.push(m); };
</script></body></html>`;
}

/**
 * The inspection relay (replaces @statelyai/inspect's `createInspectorServer`, which listens on
 * every interface, replays to anyone and rebroadcasts what any client sends):
 * - binds `host` (loopback by default);
 * - every connection needs the random token of this run (`?token=…` in the printed URL);
 * - only this process (role `source`, its own token) may send events; viewers only receive;
 * - the last 200 events are replayed to viewers that join late.
 */
async function startRelay(
  port: number,
  host: string,
): Promise<{ sourceUrl: string; viewerUrl: string; publicUrl: string; stop(): void }> {
  const ws = await load<WsModule>('ws');
  const viewerToken = randomBytes(16).toString('hex');
  const sourceToken = randomBytes(16).toString('hex');
  const httpServer = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://relay');
    if (u.searchParams.get('token') !== viewerToken) {
      res.writeHead(403, { 'content-type': 'text/plain' });
      res.end('sluice inspector relay: open the URL printed by sluice (it carries an access token)\n');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(viewerPage());
  });
  const wss = new ws.WebSocketServer({ server: httpServer });
  const recent: string[] = [];
  const viewers = new Set<WsSocket>();
  wss.on('connection', (sock, req) => {
    const u = new URL(req.url ?? '/', 'http://relay');
    const token = u.searchParams.get('token');
    if (token === sourceToken) {
      sock.on('message', (data) => {
        const msg = String(data);
        recent.push(msg);
        if (recent.length > 200) recent.shift();
        for (const v of viewers) if (v.readyState === 1) v.send(msg);
      });
      return;
    }
    if (token !== viewerToken) {
      sock.close(1008, 'token required');
      return;
    }
    viewers.add(sock);
    for (const m of recent) sock.send(m);
    sock.on('close', () => viewers.delete(sock));
  });
  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(port, host, () => resolve());
  });
  const shown = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  const local = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : shown;
  return {
    sourceUrl: `ws://${local}:${port}/?token=${sourceToken}`,
    viewerUrl: `http://${shown}:${port}/?token=${viewerToken}`,
    publicUrl: `http://${shown}:${port}/`,
    stop: () => {
      wss.close();
      httpServer.close();
    },
  };
}
