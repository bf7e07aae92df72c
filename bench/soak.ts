/**
 * Soak (issue 11): a `sluice serve` child process under three loads at once for `durationMs`
 * (default 60 s):
 *
 * - `streams` (500) clients, each streaming one three-call turn after another (a scripted
 *   upstream sends 11 chunks 100 ms apart, ~1.1 s per turn); every turn is checked (three
 *   `tool_use` blocks with the right inputs, then `message_stop`);
 * - `slowBodies` (100) clients sending a request body at 1 byte/s (re-opened when the gateway
 *   closes them at its body timeout);
 * - `idleSockets` (1,000) connections that never send a byte (re-opened when the gateway closes
 *   them at its header timeout, or evicts them for newer connections).
 *
 * Measured: turns completed and correct, added latency per turn (the client receiving
 * `message_stop` minus the upstream writing the turn's last line; p50/p99/max) and per event (each
 * call's `content_block_stop` minus the upstream writing the chunk that completed its arguments,
 * and `message_stop` minus the last line; p50/p99), the gateway's RSS
 * and open file descriptors (start, max, end; Linux /proc), /health latency (max) and the soft
 * `ulimit -n`. Failed turns are classified (HTTP status + the gateway's error type and message,
 * socket errors, an error event's type, a turn cut short or with wrong calls). Where the time went:
 * the gateway's CPU (% of one core), how long it was runnable but waiting for a CPU (schedstat),
 * the load generator's own CPU and event-loop delay (its delay is inside every latency it
 * measures), the load average; `--profile DIR` writes the gateway's V8 CPU profile. The gateway runs with its defaults except the limits the load needs
 * (`--max-concurrency` and `--max-connections`).
 *
 * /health is polled (fresh connection every 500 ms, 1 s deadline) on the main port and, side by
 * side, on the gateway's operations listener (`--ops-port 0`); the kernel's ListenOverflows /
 * ListenDrops over the run and the gateway's own event-loop delay (its /metrics) say why a poll
 * was late.
 *
 * Optional: `neighbours` CPU-heavy processes (each spins on JSON work for the whole run) share
 * the machine with the gateway, the load generator and the poller.
 *
 *   npm run bench:soak -- [--duration MS] [--streams N] [--slow N] [--idle N] [--neighbours N | --neighbour]
 *                         [--backlog N] [--no-ops] [--profile DIR]
 *   (--profile: a V8 CPU profile of the gateway process, written when it exits; --neighbour = one
 *   neighbour; --backlog: the gateway's listen backlog; --no-ops: no operations listener, for a
 *   build without --ops-port)
 *   (= npx ts-node -T bench/soak.ts …; or node dist/bench/soak.js after a build; npm run bench -- --only soak)
 *
 * 2,000 streams need more descriptors than the usual 1,024: raise the soft limit first
 * (`ulimit -n 65536`); the result names the limit it ran under.
 */
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { chatChunk, type RecordedRequest, type ScriptLine, startScriptedUpstream } from '../src/gateway/scripted';

/**
 * A separate process that GETs /health every 500 ms on a fresh connection (1 s timeout) until its
 * stdin ends; prints JSON: polls, answered 200 within 1 s, timeouts, connection errors (by code),
 * other statuses, and the answered polls' p50 / p99 / max ms.
 */
const HEALTH_POLLER = `
const http = require('node:http');
const url = process.argv[1];
let failures = 0, polls = 0, timeouts = 0, errors = 0, within = 0; const statuses = {}, errorCodes = {}, ms = [];
const t = setInterval(() => {
  polls++;
  const t0 = performance.now();
  const req = http.get(url, { agent: false, timeout: 1000 }, (res) => {
    res.resume();
    res.on('end', () => { const d = performance.now() - t0; ms.push(d); if (res.statusCode !== 200 || d > 1000) { failures++; statuses[res.statusCode] = (statuses[res.statusCode] || 0) + 1; } else within++; });
  });
  let timedOut = false;
  req.on('timeout', () => { timedOut = true; failures++; timeouts++; req.destroy(); });
  req.on('error', (e) => { if (!timedOut) { failures++; errors++; errorCodes[e.code || e.message] = (errorCodes[e.code || e.message] || 0) + 1; } });
}, 500);
process.stdin.on('data', () => undefined);
process.stdin.on('end', () => { clearInterval(t); setTimeout(() => {
  ms.sort((a, b) => a - b);
  const q = (p) => ms.length ? ms[Math.min(ms.length - 1, Math.floor(p * ms.length))] : NaN;
  process.stdout.write(JSON.stringify({ maxMs: ms.length ? ms[ms.length - 1] : NaN, p50Ms: q(0.5), p99Ms: q(0.99), failures, polls, within, timeouts, errors, errorCodes, statuses }));
  process.exit(0);
}, 1100); });
`;

/** What one /health poller saw (HEALTH_POLLER's output). */
export interface HealthStats {
  polls: number;
  /** Answered 200 within 1 s. */
  within: number;
  failures: number;
  timeouts: number;
  errors: number;
  errorCodes: Record<string, number>;
  statuses: Record<string, number>;
  /** Answered polls (any status), ms. */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface SoakOptions {
  durationMs?: number;
  streams?: number;
  slowBodies?: number;
  idleSockets?: number;
  /** CPU-heavy neighbour processes running beside the gateway for the whole run. Default 0. */
  neighbours?: number;
  /** Write a V8 CPU profile of the gateway process into this directory (`--cpu-prof`). */
  profileDir?: string;
  /** Give the gateway an operations listener (`--ops-port 0`) and poll /health there too. Default true. */
  ops?: boolean;
  /** The gateway's `--backlog` (default: the gateway's own default). */
  backlog?: number;
}

/** A neighbour: JSON work in a loop until killed or its time (argv, ms) is up (the CPU-heavy process next to the gateway). */
const NEIGHBOUR = `
const doc = { items: Array.from({ length: 200 }, (_, i) => ({ i, name: 'item' + i, tags: ['a', 'b', 'c'], nested: { x: i * 2, y: String(i) } })) };
const end = Date.now() + Number(process.argv[1]);
while (Date.now() < end) JSON.parse(JSON.stringify(doc));
`;

export interface SoakResult {
  durationS: number;
  streams: number;
  slowBodies: number;
  idleSockets: number;
  neighbours: number;
  turns: number;
  correct: number;
  failed: number;
  addedP50Ms: number;
  addedP99Ms: number;
  addedMaxMs: number;
  /** Per event (each call's block stop, message_stop): client received − upstream wrote its chunk, ms. */
  eventP50Ms: number;
  eventP99Ms: number;
  events: number;
  healthMaxMs: number;
  /** /health polls (every 500 ms, from a separate process) not answered 200 within 1 s. */
  healthFailures: number;
  healthPolls: number;
  /** What the failed polls were: timeouts (no answer in 1 s), connection errors, HTTP statuses. */
  healthDetail: string;
  /** /health on the main port and on the operations listener (when the gateway has one), polled side by side. */
  health: HealthStats;
  opsHealth?: HealthStats;
  /** Kernel counters over the run (system-wide, /proc/net/netstat TcpExt): accept queue overflows and dropped SYNs/ACKs to listeners. */
  listenOverflows: number;
  listenDrops: number;
  /** The gateway's own event-loop delay over the run (its /metrics, prom-client's monitorEventLoopDelay at 10 ms resolution), ms. */
  gatewayLoopP50Ms: number;
  gatewayLoopP99Ms: number;
  gatewayLoopMaxMs: number;
  /** The gateway's listen backlog, when set. */
  backlog?: number;
  /** Longest accept queue seen (sampled every 500 ms) on the gateway's main port, its operations listener and the scripted upstream. */
  acceptQueueMax: { gateway: number; ops?: number; upstream: number };
  /** Connections the gateway opened to the upstream during the run (keep-alive reuse keeps this far below `turns`). */
  upstreamConnections: number;
  /** Failed turns by kind: an error event's type, `HTTP <status>`, `request|response <error code>`, `wrong turn`. */
  failures: Record<string, number>;
  /** Requests sent once more after a reset on a reused keep-alive socket before any response (as SDK clients do). */
  resent: number;
  rssStartMiB: number;
  rssMaxMiB: number;
  rssEndMiB: number;
  fdsStart: number;
  fdsMax: number;
  fdsEnd: number;
  slowBodyCloses: number;
  idleCloses: number;
  ulimitN: string;
  alive: boolean;
  /** Where the time went: the gateway's CPU over the run (% of one core; Node runs JS on one). */
  gatewayCpuPct: number;
  /** The load generator's own CPU (% of one core) and its event-loop delay (p99 / max ms): when it is busy, measured latencies include its own delay. */
  benchCpuPct: number;
  benchLoopP99Ms: number;
  benchLoopMaxMs: number;
  /** 1-minute load average at the start and end of the run, and the CPUs it is shared by. */
  loadStart: number;
  loadEnd: number;
  cpus: number;
  /**
   * The gateway's main thread was runnable but waiting for a CPU this share of the run (Linux
   * schedstat, all its threads): high means the machine, not the gateway's own work, held it back.
   */
  gatewayRunQueuePct: number;
  /** The gateway's CPU profile (when `profileDir` was given). */
  profile?: string;
}

const PATHS = ['a.txt', 'b.txt', 'c.txt'];

function turnLines(): ScriptLine[] {
  const lines: ScriptLine[] = [{ t: 0, data: chatChunk({ content: '' }) }];
  let t = 0;
  PATHS.forEach((p, i) => {
    lines.push({ t: (t += 100), data: chatChunk({ tool: { index: i, id: `call_${i}`, name: 'read_file', args: '' } }) });
    lines.push({ t: (t += 100), data: chatChunk({ tool: { index: i, args: '{"path": ' } }) });
    lines.push({ t: (t += 100), data: chatChunk({ tool: { index: i, args: JSON.stringify(p) + '}' } }) });
  });
  lines.push({ t: (t += 100), data: chatChunk({ finish: 'tool_calls' }) });
  lines.push({ t: (t += 10), data: chatChunk({ usage: { prompt_tokens: 10, completion_tokens: 20 } }) });
  lines.push({ t: (t += 10), data: '[DONE]' });
  return lines;
}

const BODY_TOOLS = [{ name: 'read_file', input_schema: { type: 'object', properties: { path: { type: 'string' } } } }];

function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function procNum(pid: number, what: 'rss' | 'fds'): number {
  try {
    if (what === 'fds') return fs.readdirSync(`/proc/${pid}/fd`).length;
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** user + system CPU of a process, ms (Linux /proc/<pid>/stat; clock ticks of 10 ms). */
function procCpuMs(pid: number): number {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return (Number(rest[11]) + Number(rest[12])) * 10;
  } catch {
    return NaN;
  }
}

/** Run time and run-queue wait of a process, ms (Linux /proc/<pid>/schedstat: ns on a CPU, ns runnable but waiting for one). */
function procSched(pid: number): { runMs: number; waitMs: number } {
  try {
    const [run, wait] = fs.readFileSync(`/proc/${pid}/schedstat`, 'utf8').trim().split(' ').map(Number);
    return { runMs: run! / 1e6, waitMs: wait! / 1e6 };
  } catch {
    return { runMs: NaN, waitMs: NaN };
  }
}

/** TcpExt ListenOverflows / ListenDrops (system-wide; Linux /proc/net/netstat), NaN elsewhere. */
function listenCounters(): { overflows: number; drops: number } {
  try {
    const lines = fs.readFileSync('/proc/net/netstat', 'utf8').split('\n').filter((l) => l.startsWith('TcpExt:'));
    const names = lines[0]!.split(/\s+/);
    const values = lines[1]!.split(/\s+/).map(Number);
    return { overflows: values[names.indexOf('ListenOverflows')] ?? NaN, drops: values[names.indexOf('ListenDrops')] ?? NaN };
  } catch {
    return { overflows: NaN, drops: NaN };
  }
}

/**
 * The accept queue of each listening socket on `ports` (Linux /proc/net/tcp and tcp6: for a socket
 * in LISTEN, rx_queue is the number of connections completed but not yet accepted). {} elsewhere.
 */
async function acceptQueues(ports: number[]): Promise<Record<number, number>> {
  const out: Record<number, number> = {};
  for (const f of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = await fs.promises.readFile(f, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n')) {
      const cols = line.trim().split(/\s+/);
      if (cols[3] !== '0A') continue; // LISTEN
      const port = parseInt(cols[1]!.split(':')[1]!, 16);
      if (ports.includes(port)) out[port] = Math.max(out[port] ?? 0, parseInt(cols[4]!.split(':')[1]!, 16));
    }
  }
  return out;
}

/** GET a URL's body (no keep-alive), '' on error or after `timeoutMs`. */
function fetchText(url: string, timeoutMs = 10_000): Promise<string> {
  return new Promise((resolve) => {
    const req = http.get(url, { agent: false, timeout: timeoutMs }, (res) => {
      let t = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (t += c));
      res.on('end', () => resolve(t));
      res.on('error', () => resolve(''));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(''));
  });
}

/** A gauge's value from Prometheus text, ms (the metric is in seconds), NaN when absent. */
function gaugeMs(text: string, name: string): number {
  const m = new RegExp(`^${name} ([0-9.eE+-]+)$`, 'm').exec(text);
  return m ? Number(m[1]) * 1000 : NaN;
}

/** The gateway CLI: the built one next to this file, or the sources through ts-node. */
function cliCommand(): string[] {
  // SLUICE_SOAK_CLI: another build's dist/src/cli/main.js (e.g. a bench/baseline.ts build), to soak that gateway.
  if (process.env.SLUICE_SOAK_CLI) return [process.env.SLUICE_SOAK_CLI];
  const built = path.join(__dirname, '../src/cli/main.js');
  if (__filename.endsWith('.js') && fs.existsSync(built)) return [built];
  return ['-r', 'ts-node/register/transpile-only', path.join(__dirname, '../src/cli/main.ts')];
}

/** Upstream lines whose write completes call i's arguments (role line, then 3 lines per call). */
const CALL_DONE_LINES = PATHS.map((_, i) => 3 + 3 * i);

/** Count tool_use inputs and the terminal event in an Anthropic SSE body. */
function checkTurn(text: string): boolean {
  if (!text.includes('event: message_stop')) return false;
  const inputs = [...text.matchAll(/"partial_json":"((?:[^"\\]|\\.)*)"/g)].map((m) => JSON.parse(JSON.parse(`"${m[1]}"`) as string) as { path?: string });
  return inputs.length === 3 && inputs.every((x, i) => x.path === PATHS[i]);
}

/** The gateway's error body, reduced to its type and the message's first words (gateway text, never tool data). */
function errorKind(text: string): string {
  try {
    const e = (JSON.parse(text) as { error?: { type?: string; message?: string } }).error;
    return `${e?.type ?? '?'}: ${(e?.message ?? '').replace(/\d+/g, 'N').slice(0, 60)}`;
  } catch {
    return '(no JSON body)';
  }
}

/** What is wrong with a 200 turn that has no error event: cut short (no message_stop) or wrong calls. */
function wrongTurn(text: string): string {
  const calls = (text.match(/event: content_block_stop/g) ?? []).length;
  return text.includes('event: message_stop') ? `wrong calls (${calls} blocks)` : `cut short (${calls} of 3 calls, no message_stop)`;
}

export async function benchSoak(opts: SoakOptions = {}): Promise<SoakResult> {
  const durationMs = opts.durationMs ?? 60_000;
  const nStreams = opts.streams ?? 500;
  const nSlow = opts.slowBodies ?? 100;
  const nIdle = opts.idleSockets ?? 1000;
  const nNeighbours = opts.neighbours ?? 0;
  // Each neighbour stops on its own a minute after the run at the latest, even if this process dies.
  const neighbours = Array.from({ length: nNeighbours }, () => spawn(process.execPath, ['-e', NEIGHBOUR, String(durationMs + 60_000)], { stdio: 'ignore' }));
  const byModel = new Map<string, RecordedRequest>();
  const lines = turnLines();
  const up = await startScriptedUpstream({
    script: (req) => {
      byModel.set(String((req.body as { model?: unknown }).model), req);
      return lines;
    },
    maxRecorded: 100,
  });
  const profArgs = opts.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${opts.profileDir}`] : [];
  const withOps = opts.ops !== false;
  const extra = [...(withOps ? ['--ops-port', '0'] : []), ...(opts.backlog !== undefined ? ['--backlog', String(opts.backlog)] : [])];
  const proc = spawn(
    process.execPath,
    [...profArgs, ...cliCommand(), 'serve', '--upstream', up.url, '--port', '0', '--max-concurrency', String(nStreams + 50), '--max-connections', String(nStreams + nSlow + nIdle + 200), '--log-level', 'warn', ...extra],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TS_NODE_TRANSPILE_ONLY: '1' } },
  );
  let alive = true;
  proc.on('exit', () => (alive = false));
  const urls = await new Promise<{ url: string; opsUrl?: string }>((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error('soak: the gateway did not start'));
    }, 120_000);
    // The banner is on stdout (logs are JSON lines on stderr; builds before 2a2e7fa printed it there): read
    // both, and keep draining them so the child never blocks on a full pipe.
    let found = false;
    const onOutput = (c: string): void => {
      if (found) return;
      buf += c;
      const m = /sluice gateway on (http:\/\/\S+)/.exec(buf);
      const o = /operations \(.*\) on (http:\/\/\S+)/.exec(buf);
      if (m && (o || !withOps)) {
        found = true;
        clearTimeout(timer);
        resolve({ url: m[1]!, ...(o ? { opsUrl: o[1]! } : {}) });
      }
      if (buf.length > 65_536) buf = buf.slice(-4096);
    };
    for (const stream of [proc.stdout!, proc.stderr!]) {
      stream.setEncoding('utf8');
      stream.on('data', onOutput);
    }
    proc.on('exit', (code) => reject(new Error(`soak: the gateway exited (${code})`)));
  }).catch(async (err: unknown) => {
    // Nothing of ours may outlive a failed start.
    proc.kill('SIGKILL');
    for (const n of neighbours) n.kill('SIGKILL');
    await up.close();
    throw err;
  });
  const { url, opsUrl } = urls;
  const u = new URL(url);
  const pid = proc.pid!;
  const agent = new http.Agent({ keepAlive: true, maxSockets: nStreams });
  let running = true;
  const end = performance.now() + durationMs;

  // ---- idle sockets and slow bodies, re-opened while running
  let idleCloses = 0;
  let slowCloses = 0;
  const opened = new Set<net.Socket>();
  const idle = (): void => {
    if (!running) return;
    const s = net.connect(Number(u.port), u.hostname);
    opened.add(s);
    s.on('error', () => undefined);
    s.on('data', () => undefined);
    s.on('close', () => {
      opened.delete(s);
      if (!running) return;
      idleCloses++;
      setTimeout(idle, 50);
    });
  };
  const slow = (): void => {
    if (!running) return;
    const s = net.connect(Number(u.port), u.hostname);
    opened.add(s);
    let timer: NodeJS.Timeout | undefined;
    s.on('connect', () => {
      s.write(`POST /v1/messages HTTP/1.1\r\nhost: ${u.host}\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n{`);
      timer = setInterval(() => s.write(' '), 1000);
    });
    s.on('error', () => undefined);
    s.on('data', () => undefined);
    s.on('close', () => {
      if (timer) clearInterval(timer);
      opened.delete(s);
      if (!running) return;
      slowCloses++;
      setTimeout(slow, 50);
    });
  };
  for (let i = 0; i < nIdle; i++) idle();
  for (let i = 0; i < nSlow; i++) slow();

  // ---- resource samples and /health
  // Reads (and so resets) the gateway's event-loop delay histogram: the scrape at the end covers the run.
  await fetchText((opsUrl ?? url) + '/metrics');
  const listenStart = listenCounters();
  const loadStart = os.loadavg()[0]!;
  const cpuStart = procCpuMs(pid);
  const schedStart = procSched(pid);
  const benchCpu0 = process.cpuUsage();
  const benchT0 = performance.now();
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const rssStart = procNum(pid, 'rss');
  const fdsStart = procNum(pid, 'fds');
  let rssMax = rssStart;
  let fdsMax = fdsStart;
  // /health is polled from processes of its own, so a busy load generator cannot pass for a slow
  // gateway: one on the main port, one on the operations listener, side by side.
  const startPoller = (target: string): Promise<HealthStats> & { stop(): void } => {
    const poller = spawn(process.execPath, ['-e', HEALTH_POLLER, target + '/health'], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    poller.stdout.setEncoding('utf8');
    poller.stdout.on('data', (d: string) => (out += d));
    const done = new Promise<HealthStats>((resolve) => {
      poller.on('exit', () => {
        try {
          resolve(JSON.parse(out) as HealthStats);
        } catch {
          resolve({ polls: 0, within: 0, failures: NaN, timeouts: 0, errors: 0, errorCodes: {}, statuses: {}, p50Ms: NaN, p99Ms: NaN, maxMs: NaN });
        }
      });
    });
    return Object.assign(done, { stop: () => void poller.stdin.end('stop\n') });
  };
  const mainPoller = startPoller(url);
  const opsPoller = opsUrl !== undefined ? startPoller(opsUrl) : undefined;
  const opsPort = opsUrl !== undefined ? Number(new URL(opsUrl).port) : undefined;
  const queueMax = { gateway: 0, upstream: 0, ...(opsPort !== undefined ? { ops: 0 } : {}) };
  const upAccepted0 = up.accepted();
  const sampler = setInterval(() => {
    rssMax = Math.max(rssMax, procNum(pid, 'rss'));
    fdsMax = Math.max(fdsMax, procNum(pid, 'fds'));
    void acceptQueues([Number(u.port), up.port, ...(opsPort !== undefined ? [opsPort] : [])]).then((q) => {
      queueMax.gateway = Math.max(queueMax.gateway, q[Number(u.port)] ?? 0);
      queueMax.upstream = Math.max(queueMax.upstream, q[up.port] ?? 0);
      if (opsPort !== undefined) queueMax.ops = Math.max(queueMax.ops ?? 0, q[opsPort] ?? 0);
    });
  }, 500);

  // ---- the streams
  let turns = 0;
  let correct = 0;
  let failed = 0;
  const added: number[] = [];
  const perEvent: number[] = [];
  const failures: Record<string, number> = {};
  const fail = (why: string): void => {
    failed++;
    failures[why] = (failures[why] ?? 0) + 1;
  };
  let seq = 0;
  // Requests sent once more after their reused keep-alive socket was closed as they went out
  // (ECONNRESET/EPIPE before any response), as the Anthropic and OpenAI SDKs do.
  let resent = 0;
  const one = (client: number, retried = false): Promise<void> =>
    new Promise((resolve) => {
      const model = `soak-${client}-${seq++}`;
      const body = JSON.stringify({ model, max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'go' }], tools: BODY_TOOLS });
      const req = http.request(url + '/v1/messages', { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
        let text = '';
        // Arrival time of each content_block_stop (calls 0, 1, 2 in order: the turn has no text block).
        const stops: number[] = [];
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          const now = performance.now();
          for (let i = c.indexOf('event: content_block_stop'); i >= 0; i = c.indexOf('event: content_block_stop', i + 1)) stops.push(now);
          text += c;
        });
        res.on('end', () => {
          const at = performance.now();
          turns++;
          const rec = byModel.get(model);
          byModel.delete(model);
          if (res.statusCode === 200 && checkTurn(text)) {
            correct++;
            const last = rec?.writes[rec.writes.length - 1]?.at;
            if (last !== undefined) {
              added.push(at - last);
              perEvent.push(at - last);
            }
            CALL_DONE_LINES.forEach((line, k) => {
              const wrote = rec?.writes.find((w) => w.line === line)?.at;
              if (wrote !== undefined && stops[k] !== undefined) perEvent.push(stops[k]! - wrote);
            });
          } else fail(res.statusCode === 200 ? (/event: error\ndata: .*"type":"(\w+)"/.exec(text.slice(-2000))?.[1] ?? wrongTurn(text)) : `HTTP ${res.statusCode} ${errorKind(text)}`);
          resolve();
        });
        res.on('error', (err: NodeJS.ErrnoException) => {
          fail(`response ${err.code ?? err.message}`);
          resolve();
        });
      });
      req.on('error', (err: NodeJS.ErrnoException) => {
        // A reused keep-alive socket that the gateway closed as the request went out (keep-alive timeout or cap eviction).
        if (req.reusedSocket && !retried && (err.code === 'ECONNRESET' || err.code === 'EPIPE')) {
          resent++;
          byModel.delete(model);
          void one(client, true).then(resolve);
          return;
        }
        fail(`request ${err.code ?? err.message}${req.reusedSocket ? ' (reused keep-alive socket)' : ''}`);
        byModel.delete(model);
        resolve();
      });
      req.end(body);
    });
  const clients = Array.from({ length: nStreams }, async (_, c) => {
    await new Promise((r) => setTimeout(r, (c * 1100) / nStreams)); // spread the starts over one turn
    while (performance.now() < end) await one(c);
  });
  await Promise.all(clients);
  running = false;
  clearInterval(sampler);
  mainPoller.stop();
  opsPoller?.stop();
  const [health, opsHealth] = await Promise.all([mainPoller, opsPoller]);
  const listenEnd = listenCounters();
  const upstreamConnections = up.accepted() - upAccepted0;
  const gatewayMetrics = await fetchText((opsUrl ?? url) + '/metrics');
  loop.disable();
  const wallMs = performance.now() - benchT0;
  const gatewayCpuMs = procCpuMs(pid) - cpuStart;
  const schedEnd = procSched(pid);
  const benchCpu = process.cpuUsage(benchCpu0);
  const loadEnd = os.loadavg()[0]!;
  const rssEnd = procNum(pid, 'rss');
  const fdsEnd = procNum(pid, 'fds');
  for (const s of opened) s.destroy();
  agent.destroy();
  const wasAlive = alive;
  for (const n of neighbours) n.kill('SIGKILL');
  proc.kill('SIGTERM');
  await new Promise((r) => (alive ? proc.once('exit', r) : r(undefined)));
  await up.close();
  let profile: string | undefined;
  if (opts.profileDir) profile = fs.readdirSync(opts.profileDir).filter((f) => f.endsWith('.cpuprofile')).map((f) => path.join(opts.profileDir!, f)).sort().pop();
  let ulimitN = 'unknown';
  try {
    ulimitN = execFileSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim();
  } catch {
    // not a POSIX shell
  }
  added.sort((a, b) => a - b);
  perEvent.sort((a, b) => a - b);
  const r2 = (x: number): number => Math.round(x * 100) / 100;
  return {
    durationS: r2(durationMs / 1000),
    streams: nStreams,
    slowBodies: nSlow,
    idleSockets: nIdle,
    neighbours: nNeighbours,
    turns,
    correct,
    failed,
    addedP50Ms: r2(pct(added, 50)),
    addedP99Ms: r2(pct(added, 99)),
    addedMaxMs: r2(added[added.length - 1] ?? NaN),
    eventP50Ms: r2(pct(perEvent, 50)),
    eventP99Ms: r2(pct(perEvent, 99)),
    events: perEvent.length,
    health,
    ...(opsHealth ? { opsHealth } : {}),
    listenOverflows: listenEnd.overflows - listenStart.overflows,
    listenDrops: listenEnd.drops - listenStart.drops,
    gatewayLoopP50Ms: r2(gaugeMs(gatewayMetrics, 'nodejs_eventloop_lag_p50_seconds')),
    gatewayLoopP99Ms: r2(gaugeMs(gatewayMetrics, 'nodejs_eventloop_lag_p99_seconds')),
    gatewayLoopMaxMs: r2(gaugeMs(gatewayMetrics, 'nodejs_eventloop_lag_max_seconds')),
    ...(opts.backlog !== undefined ? { backlog: opts.backlog } : {}),
    acceptQueueMax: queueMax,
    upstreamConnections,
    healthMaxMs: r2(health.maxMs),
    healthFailures: health.failures,
    healthPolls: health.polls,
    healthDetail: healthLine(health),
    failures,
    resent,
    rssStartMiB: r2(rssStart),
    rssMaxMiB: r2(rssMax),
    rssEndMiB: r2(rssEnd),
    fdsStart,
    fdsMax,
    fdsEnd,
    slowBodyCloses: slowCloses,
    idleCloses,
    ulimitN,
    alive: wasAlive,
    gatewayCpuPct: r2((100 * gatewayCpuMs) / wallMs),
    gatewayRunQueuePct: r2((100 * (schedEnd.waitMs - schedStart.waitMs)) / wallMs),
    benchCpuPct: r2((100 * (benchCpu.user + benchCpu.system)) / 1000 / wallMs),
    benchLoopP99Ms: r2(loop.percentile(99) / 1e6),
    benchLoopMaxMs: r2(loop.max / 1e6),
    loadStart: r2(loadStart),
    loadEnd: r2(loadEnd),
    cpus: os.cpus().length,
    ...(profile ? { profile } : {}),
  };
}

/** One poller's result as text. */
function healthLine(h: HealthStats): string {
  const r2 = (x: number): number => Math.round(x * 10) / 10;
  const errs = Object.entries(h.errorCodes ?? {}).map(([k, n]) => `${k} ${n}`).join(', ');
  const st = Object.entries(h.statuses ?? {}).map(([k, n]) => `HTTP ${k} ${n}`).join(', ');
  return `${h.within} of ${h.polls} polls answered 200 within 1 s; ${h.timeouts} timed out, ${h.errors} connection errors${errs ? ` (${errs})` : ''}${st ? `, ${st} (or > 1 s)` : ''}; answered p50 / p99 / max ${r2(h.p50Ms)} / ${r2(h.p99Ms)} / ${r2(h.maxMs)} ms`;
}

export function formatSoak(r: SoakResult): string {
  return [
    `${r.streams} streaming clients, ${r.slowBodies} slow-body clients (1 byte/s), ${r.idleSockets} idle sockets, ${r.neighbours} CPU-heavy neighbour process(es), ${r.durationS} s, \`ulimit -n\` ${r.ulimitN}; gateway alive at the end: ${r.alive ? 'yes' : '**no**'}.`,
    '',
    '| turns | correct | failed | added p50 ms | added p99 ms | added max ms | per event p50 / p99 ms (events) | /health max ms | /health > 1 s or failed (of polls) | RSS MiB start / max / end | fds start / max / end | slow bodies closed | idle sockets closed |',
    '|---:|---:|---:|---:|---:|---:|---|---:|---:|---|---|---:|---:|',
    `| ${r.turns} | ${r.correct} | ${r.failed} | ${r.addedP50Ms} | ${r.addedP99Ms} | ${r.addedMaxMs} | ${r.eventP50Ms} / ${r.eventP99Ms} (${r.events}) | ${r.healthMaxMs} | ${r.healthFailures} of ${r.healthPolls} | ${r.rssStartMiB} / ${r.rssMaxMiB} / ${r.rssEndMiB} | ${r.fdsStart} / ${r.fdsMax} / ${r.fdsEnd} | ${r.slowBodyCloses} | ${r.idleCloses} |`,
    '',
    `/health on the main port: ${healthLine(r.health)}.`,
    ...(r.opsHealth ? [`/health on the operations listener (--ops-port): ${healthLine(r.opsHealth)}.`] : []),
    `Gateway event-loop delay over the run (its /metrics): p50 / p99 / max ${r.gatewayLoopP50Ms} / ${r.gatewayLoopP99Ms} / ${r.gatewayLoopMaxMs} ms. Kernel (system-wide) ListenOverflows +${r.listenOverflows}, ListenDrops +${r.listenDrops}; longest accept queue seen: gateway ${r.acceptQueueMax.gateway}${r.backlog !== undefined ? ` (--backlog ${r.backlog})` : ''}, operations listener ${r.acceptQueueMax.ops ?? '-'}, scripted upstream ${r.acceptQueueMax.upstream} (Node's default backlog 511). Gateway → upstream connections opened: ${r.upstreamConnections} for ${r.turns} turns.`,
    ...(r.resent > 0 ? ['', `Sent once more after a reset on a reused keep-alive socket (as SDK clients do): ${r.resent}.`] : []),
    ...(r.failed > 0 ? ['', `Failed turns: ${Object.entries(r.failures).map(([k, n]) => `${k} ${n}`).join(', ')}.`] : []),
    '',
    `Where the time went: gateway CPU ${r.gatewayCpuPct}% of one core (its JavaScript runs on one), runnable but waiting for a CPU ${r.gatewayRunQueuePct}% of the run, load generator (client + scripted upstream, one process) ${r.benchCpuPct}% with event-loop delay p99 ${r.benchLoopP99Ms} ms / max ${r.benchLoopMaxMs} ms (added latencies include that delay); load average ${r.loadStart} → ${r.loadEnd} on ${r.cpus} CPUs.${r.profile ? ` Gateway CPU profile: ${r.profile}.` : ''}`,
    '',
  ].join('\n');
}

if (require.main === module) {
  const num = (flag: string): number | undefined => {
    const i = process.argv.indexOf(flag);
    if (i < 0) return undefined;
    const v = Number(process.argv[i + 1]);
    if (!Number.isInteger(v) || v < 0) {
      process.stderr.write(`soak: ${flag} needs a non-negative integer\n`);
      process.exit(2);
    }
    return v;
  };
  const o: SoakOptions = {};
  for (const [flag, key] of [['--duration', 'durationMs'], ['--streams', 'streams'], ['--slow', 'slowBodies'], ['--idle', 'idleSockets'], ['--neighbours', 'neighbours'], ['--backlog', 'backlog']] as const) {
    const v = num(flag);
    if (v !== undefined) o[key] = v;
  }
  if (process.argv.includes('--neighbour')) o.neighbours = Math.max(1, o.neighbours ?? 0);
  if (process.argv.includes('--no-ops')) o.ops = false;
  const pi = process.argv.indexOf('--profile');
  if (pi >= 0) o.profileDir = path.resolve(process.argv[pi + 1] ?? 'soak-profile');
  benchSoak(o)
    .then((r) => {
      process.stdout.write(formatSoak(r));
      process.stdout.write(JSON.stringify(r) + '\n');
    })
    .catch((err: unknown) => {
      process.stderr.write(`soak: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    });
}
