/**
 * The operations listener (`startGateway({ ops })`, `sluice serve --ops-port`): `/health` (also
 * `/livez`, `/healthz`, `/`), `/readyz` and `/metrics` on a socket of their own, served by a
 * thread of their own.
 *
 * Why a thread: a probe on the main port waits in the main port's accept queue behind client
 * connections, and even on a listener of its own it waits for the main event loop — one poll
 * phase of a saturated gateway handles thousands of sockets (seconds at 2,000 streams on a
 * starved machine; bench/soak.ts). Here the listener runs in a worker thread whose only work is
 * these probes, so it answers at once, and what it answers is the main loop's own liveness: the
 * main thread writes a heartbeat (time, streams in flight, body memory, readiness) into shared
 * memory every `HEARTBEAT_MS`, and at once when a request ends or readiness changes (`beat()`, from
 * startGateway), so what `/health` reports agrees with the main port's; `/health` is 200 while the last heartbeat is younger than
 * `stallMs` (default 10 s) and 503 `stalled` after, with the heartbeat's age either way
 * (`loopAgeMs`). `/metrics` is relayed to the main thread (the registry lives there) and answered
 * when its loop gets to it; the client key is checked there too.
 *
 * The worker's code is a self-contained string (node: modules only), so it runs the same from the
 * CommonJS build, the ESM build and ts-node.
 */
import { Worker } from 'node:worker_threads';

/** How often the main thread writes its heartbeat. */
export const HEARTBEAT_MS = 250;
/** Default age of the last heartbeat after which `/health` and `/readyz` say 503 `stalled`. */
export const DEFAULT_STALL_MS = 10_000;

/** Slots of the shared state (BigInt64Array, written with Atomics). */
const BEAT = 0;
const ACTIVE = 1;
const MAX = 2;
const BUDGET = 3;
const READY = 4;
const SLOTS = 5;

export interface OpsListenerOptions {
  host: string;
  port: number;
  /** Header / whole-request / keep-alive timeouts of the listener (the main port's). */
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  stallMs: number;
  maxConcurrent: number;
  /** The main thread's state, written with every heartbeat. */
  state: () => { active: number; bodyBudgetInUse: number; ready: boolean };
  /** Answer a `/metrics` request (main thread): the client's presented key in, the HTTP answer out. */
  metrics?: (key: string | undefined, head: boolean) => Promise<{ status: number; headers: Record<string, string>; body: string }>;
  /** The worker failed after it started, reported once (it is gone: its port refuses connections; the main port still answers probes). */
  onFailure?: (message: string) => void;
}

export interface OpsListener {
  port: number;
  /** Write the heartbeat now (it is also written every HEARTBEAT_MS): when a request ends, when readiness changes. */
  beat(): void;
  close(): Promise<void>;
}

const WORKER_SOURCE = `// sluice:eval-worker — CommonJS, run by new Worker(…, { eval: true }) (the package test skips this string)
const { workerData, parentPort } = require('node:worker_threads');
const http = require('node:http');
const { randomBytes } = require('node:crypto');
const o = workerData;
const s = new BigInt64Array(o.shared);
const state = () => {
  const age = Math.max(0, Date.now() - Number(Atomics.load(s, ${BEAT})));
  return { age, stalled: age > o.stallMs, active: Number(Atomics.load(s, ${ACTIVE})), max: Number(Atomics.load(s, ${MAX})), budget: Number(Atomics.load(s, ${BUDGET})), ready: Atomics.load(s, ${READY}) === 1n };
};
const send = (res, status, obj, headers) => {
  const body = JSON.stringify(obj);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(res.req.method === 'HEAD' ? undefined : body);
};
const error = (res, status, type, message) => send(res, status, { type: 'error', error: { type, message } });
let seq = 0;
const pending = new Map();
parentPort.on('message', (m) => {
  const res = pending.get(m.id);
  if (!res) return;
  pending.delete(m.id);
  if (res.destroyed) return;
  res.writeHead(m.status, m.headers);
  res.end(m.body);
});
const server = http.createServer({ headersTimeout: o.headersTimeoutMs, requestTimeout: o.requestTimeoutMs, keepAliveTimeout: o.keepAliveTimeoutMs, noDelay: true }, (req, res) => {
  res.setHeader('request-id', 'req_' + randomBytes(12).toString('hex'));
  const path = (req.url || '/').split('?')[0].replace(/\\/+$/, '') || '/';
  const method = req.method || 'GET';
  req.resume();
  const probe = path === '/health' || path === '/healthz' || path === '/livez' || path === '/';
  const known = probe || path === '/readyz' || (path === '/metrics' && o.metrics);
  if (!known) return error(res, 404, 'not_found_error', 'no route for ' + method + ' ' + path + ' on the operations listener (/health, /livez, /readyz, /metrics)');
  if (method !== 'GET' && method !== 'HEAD') return error(res, 405, 'invalid_request_error', 'method ' + method + ' not allowed on ' + path);
  const st = state();
  if (probe) {
    if (st.stalled) return send(res, 503, { status: 'stalled', loopAgeMs: st.age, active: st.active, maxConcurrent: st.max });
    return send(res, 200, { status: 'ok', active: st.active, maxConcurrent: st.max, bodyBudgetInUse: st.budget, loopAgeMs: st.age });
  }
  if (path === '/readyz') {
    const status = st.stalled ? 'stalled' : st.ready ? 'ready' : 'draining';
    return send(res, status === 'ready' ? 200 : 503, { status, active: st.active, loopAgeMs: st.age });
  }
  const id = ++seq;
  pending.set(id, res);
  res.on('close', () => pending.delete(id));
  parentPort.postMessage({ type: 'metrics', id, key: presented(req), head: method === 'HEAD' });
});
function presented(req) {
  const k = req.headers['x-api-key'];
  if (typeof k === 'string' && k.length > 0) return k;
  const a = /^Bearer\\s+(.+)$/i.exec((req.headers.authorization || '').trim());
  if (a) return a[1];
  const g = req.headers['x-goog-api-key'];
  return typeof g === 'string' && g.length > 0 ? g : undefined;
}
server.maxConnections = 64;
// A malformed request here is closed at once, unanswered and undrained (the main port answers and
// drains, body.ts answerSocket): only bodyless probes come to this port, and holding a broken
// connection open (up to the drain bound) would keep one of its 64 connections from the probes.
server.on('clientError', (err, socket) => socket.destroy());
server.once('error', (err) => parentPort.postMessage({ type: 'listen-error', message: err.message }));
server.listen({ host: o.host, port: o.port }, () => parentPort.postMessage({ type: 'listening', port: server.address().port }));
`;

/** Start the operations listener's thread; resolves once it listens (rejects with the listen error's message). */
export async function startOpsListener(o: OpsListenerOptions): Promise<OpsListener> {
  const shared = new SharedArrayBuffer(SLOTS * 8);
  const s = new BigInt64Array(shared);
  const beat = (): void => {
    const st = o.state();
    Atomics.store(s, ACTIVE, BigInt(st.active));
    Atomics.store(s, BUDGET, BigInt(Math.round(st.bodyBudgetInUse)));
    Atomics.store(s, READY, st.ready ? 1n : 0n);
    Atomics.store(s, BEAT, BigInt(Date.now()));
  };
  Atomics.store(s, MAX, BigInt(o.maxConcurrent));
  beat();
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    // Only node: modules: no preloads (-r ts-node/register …) of the process.
    execArgv: [],
    workerData: {
      shared,
      host: o.host,
      port: o.port,
      headersTimeoutMs: o.headersTimeoutMs,
      requestTimeoutMs: o.requestTimeoutMs,
      keepAliveTimeoutMs: o.keepAliveTimeoutMs,
      stallMs: o.stallMs,
      metrics: o.metrics !== undefined,
    },
    resourceLimits: { maxOldGenerationSizeMb: 32 },
  });
  let closing = false;
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('error', (err) => reject(err));
    worker.once('exit', (code) => reject(new Error(`the operations thread exited (${code})`)));
    worker.on('message', (m: { type: string; port?: number; message?: string }) => {
      if (m.type === 'listening') resolve(m.port!);
      else if (m.type === 'listen-error') reject(new Error(m.message));
    });
  }).catch(async (err: unknown) => {
    await worker.terminate();
    throw err;
  });
  worker.removeAllListeners('error');
  worker.removeAllListeners('exit');
  // A thread that throws emits 'error' and then 'exit': the failure is reported once.
  let failed = false;
  const fail = (message: string): void => {
    if (closing || failed) return;
    failed = true;
    o.onFailure?.(message);
  };
  worker.on('error', (err) => fail(err.message));
  worker.on('exit', (code) => fail(`the operations thread exited (${code})`));
  worker.on('message', (m: { type: string; id?: number; key?: string; head?: boolean }) => {
    if (m.type !== 'metrics' || !o.metrics) return;
    void o.metrics(m.key, m.head === true).then(
      (r) => worker.postMessage({ id: m.id, ...r }),
      () => worker.postMessage({ id: m.id, status: 500, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'error', error: { type: 'api_error', message: 'internal gateway error' } }) }),
    );
  });
  const timer = setInterval(beat, HEARTBEAT_MS);
  timer.unref();
  return {
    port,
    beat,
    close: async () => {
      if (closing) return;
      closing = true;
      clearInterval(timer);
      await worker.terminate();
    },
  };
}
