/**
 * A small pool of body workers (bodyWorker.ts): a request body of at least `aboveBytes` is parsed,
 * validated and translated to the backend's body off the event loop, so one large request never
 * blocks the gateway (issue 18 item 2). Workers start when the first large body arrives, at most
 * `workers` of them; jobs wait in order for a free worker. After `idleMs` without a job, the
 * workers that ran jobs exit (their heaps, grown to a large body's size, go back to the system) and
 * one fresh worker is kept warm (`warm`, default 1: about 8 MiB RSS, inside its reservation), so the
 * next large body does not wait for a worker to start (measured ~110 ms CPU, ~1 s at load 13).
 *
 * The body's bytes are transferred in (no copy) and the backend body's bytes come back the same
 * way, with the request's small head (translate.ts). The pool reserves `WORKER_RESERVE_BYTES` per
 * worker of the gateway's MemoryBudget for as long as the gateway runs (a worker's own heap and
 * code; the body itself is charged by body.ts), only as many workers as fit beside one body of the
 * largest size; each runs under V8 `resourceLimits` sized for the largest body.
 *
 * Outcomes (`PoolResult`): `done` (the translation, or the request's own 400); `failed` — the worker
 * crashed (500 `api_error`), ran out of memory (500) or took longer than `timeoutMs` (504
 * `timeout_error`, the worker is replaced) — a GatewayError the route answers in its own shape;
 * `inline` — no worker can run here (its file is missing in this build, it failed to load, or the
 * budget has no room for one): the caller translates on the event loop. The pool logs why, once
 * per failure (`body_worker_unavailable`), never silently. A worker that failed to load (or a
 * failed bundle of the sources) is tried again after `loadRetryMs` (5 s, 30 s, then every 60 s) in
 * the background, one worker at a time; the first that loads ends the fallback
 * (`body_worker_recovered`, once). A build without the worker's file and a budget without room for a
 * worker are final (no retry).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { ModelMapping } from '../canonical';
import { GatewayError } from '../errors';
import type { Logger } from '../log';
import type { InboundApi } from '../inbound/types';
import type { UpstreamBodyOptions, UpstreamFormatName } from '../upstream/types';
import type { RequestLimits } from '../validate';
import type { MemoryBudget } from '../body';
import type { Counted, Translated } from './translate';

export interface BodyWorkerOptions {
  /** Bodies of at least this many bytes are translated in a worker. Default 512 KiB. */
  aboveBytes?: number;
  /** Workers at most. Default 2. */
  workers?: number;
  /** One translation may take this long (ms); then the client gets 504 and the worker is replaced. Default 60 s. */
  timeoutMs?: number;
  /** After this long (ms) without a job, workers that ran jobs exit (and `warm` fresh ones are kept). Default 5 s. */
  idleMs?: number;
  /** Fresh workers kept when idle, once a large body has started one (0: all exit). Default 1. */
  warm?: number;
  /** Waits (ms) before loading a worker again after a failed load; the last repeats. Default 5 s, 30 s, 60 s. */
  loadRetryMs?: readonly number[];
}

export const BODY_WORKER_DEFAULTS: Required<BodyWorkerOptions> = {
  aboveBytes: 512 * 1024,
  workers: 2,
  timeoutMs: 60_000,
  idleMs: 5_000,
  warm: 1,
  loadRetryMs: [5_000, 30_000, 60_000],
};

/** Budget reserved per live worker: its own heap and code (measured: docs/limits.md). */
export const WORKER_RESERVE_BYTES = 32 * 1024 * 1024;

/** What every job of a gateway shares (sent once, as `workerData`). */
export interface WorkerSetup {
  upstreamFormat: UpstreamFormatName;
  models: ModelMapping;
  bodyOptions: Omit<UpstreamBodyOptions, 'model'>;
  limits: RequestLimits;
}

export interface JobIn {
  id: number;
  /** The route's translation, or `count` (count_tokens: the estimate only). */
  api: InboundApi['name'] | 'count';
  bytes: Uint8Array;
}

export interface JobOut {
  id: number;
  /** `Counted` for a `count` job. */
  result: Translated<Uint8Array> | Counted;
}

export type WorkerFailure = 'exit' | 'oom' | 'error' | 'timeout' | 'closed';

export type PoolResult<R = Translated<Uint8Array>> =
  | { kind: 'done'; result: R }
  | { kind: 'failed'; failure: WorkerFailure; error: GatewayError; code?: string | number }
  | { kind: 'inline' };

interface Job {
  id: number;
  api: JobIn['api'];
  bytes: Uint8Array;
  resolve(r: PoolResult<JobOut['result']>): void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  /** It ran a job (its heap may have grown): it exits when the pool is idle. */
  used?: boolean;
  job?: Job;
  timer?: NodeJS.Timeout;
  failed?: boolean;
}

/** Set in the ESM build (scripts/build.mjs, esbuild `define`) to `import.meta.url`; CommonJS has `__filename`. */
declare const SLUICE_MODULE_URL: string | undefined;

/** Where bodyWorker lives next to this module in the build that is running, or why it cannot run. */
export function locateWorker(): { file: string; source: boolean } | { reason: string } {
  const here = typeof __filename === 'string' ? __filename : typeof SLUICE_MODULE_URL === 'string' ? fileURLToPath(SLUICE_MODULE_URL) : undefined;
  if (here === undefined) return { reason: 'this build gives the gateway no module path (neither __filename nor import.meta.url)' };
  const ext = path.extname(here);
  const dir = path.dirname(here);
  // Sources and dist/src: beside this file; dist/esm and dist/cjs: an entry beside the chunk, or one up.
  for (const file of [path.join(dir, `bodyWorker${ext}`), path.join(dir, '..', `bodyWorker${ext}`)]) {
    if (fs.existsSync(file)) return { file, source: ext === '.ts' };
  }
  return { reason: `bodyWorker${ext} is not next to ${path.basename(here)} in this build` };
}

export class BodyWorkerPool {
  readonly options: Required<BodyWorkerOptions>;
  private readonly slots = new Set<Slot>();
  private readonly queue: Job[] = [];
  private nextId = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  /** Why no worker can run here (then every job is `inline`). */
  private unavailable: string | undefined;
  /** Failed loads in a row (the retry schedule's position). */
  private loadFailures = 0;
  private starts = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private bundling = false;
  private closed = false;
  private readonly heapMb: number;

  constructor(
    private readonly setup: WorkerSetup,
    private readonly budget: MemoryBudget,
    private readonly logger: Logger,
    maxBodyBytes: number,
    options: BodyWorkerOptions = {},
    private readonly where: () => ReturnType<typeof locateWorker> = locateWorker,
  ) {
    this.options = { ...BODY_WORKER_DEFAULTS, ...options };
    // The largest body's working set (what the budget charges for it) plus the worker's own code.
    this.heapMb = Math.ceil((maxBodyBytes * budget.factor) / 1048576) + 64;
    // Workers reserve their memory once, as many as fit beside one body of the largest size.
    const room = budget.bytes - maxBodyBytes * budget.factor;
    this.maxWorkers = Math.min(this.options.workers, Math.max(0, Math.floor(room / WORKER_RESERVE_BYTES)));
    if (this.maxWorkers === 0 || !budget.reserve(this.maxWorkers * WORKER_RESERVE_BYTES)) {
      this.maxWorkers = 0;
      this.giveUp(`the body memory budget leaves no room for a worker (${WORKER_RESERVE_BYTES} bytes) beside the largest body`, true);
    }
  }

  /** Workers at most (what the budget leaves room for, up to `options.workers`). */
  readonly maxWorkers: number;

  /** Why no worker can run (undefined while workers can). */
  get unavailableReason(): string | undefined {
    return this.unavailable;
  }

  /** Workers alive now. */
  get size(): number {
    return this.slots.size;
  }

  /** Workers started so far (loaded or not). */
  get started(): number {
    return this.starts;
  }

  /** Translate in a worker. The bytes are transferred (unusable here afterwards) unless the result is `inline`. */
  translate(api: InboundApi['name'], bytes: Uint8Array): Promise<PoolResult> {
    // A route's job is answered with a translation (bodyWorker.ts).
    return this.run(api, bytes) as Promise<PoolResult>;
  }

  /** count_tokens in a worker (like `translate`): the estimate. */
  count(bytes: Uint8Array): Promise<PoolResult<Counted>> {
    return this.run('count', bytes) as Promise<PoolResult<Counted>>;
  }

  private run(api: JobIn['api'], bytes: Uint8Array): Promise<PoolResult<JobOut['result']>> {
    if (this.closed) return Promise.resolve(closedResult());
    if (this.unavailable !== undefined) return Promise.resolve({ kind: 'inline' });
    return new Promise((resolve) => {
      this.queue.push({ id: ++this.nextId, api, bytes, resolve });
      this.pump();
    });
  }

  /** Stop every worker; queued and running jobs end as `failed` (`closed`). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.budget.release(this.maxWorkers * WORKER_RESERVE_BYTES);
    if (this.idleTimer) clearTimeout(this.idleTimer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    for (const j of this.queue.splice(0)) j.resolve(closedResult());
    const exits: Promise<number>[] = [];
    for (const s of this.slots) {
      this.settle(s, closedResult());
      exits.push(s.worker.terminate());
    }
    await Promise.allSettled(exits);
  }

  private pump(): void {
    while (this.queue.length > 0) {
      let free: Slot | undefined;
      for (const s of this.slots) if (s.ready && !s.job && !s.failed) free = s;
      if (free) {
        this.dispatch(free, this.queue.shift()!);
        continue;
      }
      const starting = [...this.slots].filter((s) => !s.ready).length;
      if (this.slots.size >= this.maxWorkers || starting >= this.queue.length) return;
      if (!this.start()) return;
    }
    this.armIdle();
  }

  /** Start one worker; false when none can start (the queue then runs inline or waits). */
  private start(): boolean {
    const at = this.where();
    if ('reason' in at) {
      // A build without the worker's file does not grow one: final, like a budget without room.
      this.giveUp(at.reason, true);
      return false;
    }
    if (at.source && sourceBundle === undefined) {
      // Running from the TypeScript sources: bundle the worker first (async; pump again when done).
      if (!this.bundling) {
        this.bundling = true;
        bundleSource(at.file).then(
          () => {
            this.bundling = false;
            if (!this.closed) this.pump();
          },
          (err: unknown) => {
            this.bundling = false;
            bundled = undefined;
            this.giveUp(`the worker's sources could not be bundled (${err instanceof Error ? err.name : 'unknown'})`);
          },
        );
      }
      return false;
    }
    let worker: Worker;
    try {
      worker = at.source ? new Worker(sourceBundle!, { ...workerOptions(this.setup, this.heapMb), eval: true }) : new Worker(at.file, workerOptions(this.setup, this.heapMb));
    } catch (err) {
      this.giveUp(`the worker could not start (${err instanceof Error ? err.name : 'unknown'})`);
      return false;
    }
    worker.unref();
    this.starts++;
    const slot: Slot = { worker, ready: false };
    this.slots.add(slot);
    worker.on('message', (m: JobOut | { ready: true }) => {
      if ('ready' in m) {
        slot.ready = true;
        if (this.loadFailures > 0) {
          this.logger.info('body_worker_recovered', { failedLoads: this.loadFailures });
          this.loadFailures = 0;
        }
        return this.pump();
      }
      if (slot.job?.id !== m.id) return;
      this.settle(slot, { kind: 'done', result: m.result });
      this.pump();
    });
    worker.on('error', (err: Error & { code?: string }) => {
      if (!slot.ready) return this.giveUp(`the worker failed to load (${err.name}${err.code ? ` ${err.code}` : ''})`);
      const oom = err.code === 'ERR_WORKER_OUT_OF_MEMORY';
      slot.failed = true;
      this.settle(slot, failed(oom ? 'oom' : 'error', oom ? `the body worker ran out of memory (limit ${this.heapMb} MiB)` : `the body worker failed (${err.name})`, err.code ?? err.name));
    });
    worker.on('messageerror', () => {
      slot.failed = true;
      this.settle(slot, failed('error', 'the body worker sent an unreadable answer', 'messageerror'));
      void worker.terminate();
    });
    worker.on('exit', (code) => {
      this.slots.delete(slot);
      if (!slot.ready && this.unavailable === undefined) this.giveUp(`the worker exited while loading (code ${code})`);
      this.settle(slot, failed('exit', `the body worker exited (code ${code})`, code));
      if (!this.closed) this.pump();
    });
    return true;
  }

  private dispatch(slot: Slot, job: Job): void {
    slot.job = job;
    slot.used = true;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    slot.timer = setTimeout(() => {
      slot.failed = true;
      this.settle(slot, { kind: 'failed', failure: 'timeout', error: timeoutError(this.options.timeoutMs), code: this.options.timeoutMs });
      void slot.worker.terminate();
    }, this.options.timeoutMs);
    const msg: JobIn = { id: job.id, api: job.api, bytes: job.bytes };
    // The bytes move to the worker (no copy); a view on part of a buffer is copied out first.
    const bytes = job.bytes;
    const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer;
    if (!whole) msg.bytes = bytes.slice();
    job.bytes = new Uint8Array(0);
    slot.worker.postMessage(msg, [msg.bytes.buffer as ArrayBuffer]);
  }

  /** End the slot's job (if any) with `r`. */
  private settle(slot: Slot, r: PoolResult<JobOut['result']>): void {
    const job = slot.job;
    if (!job) return;
    slot.job = undefined;
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = undefined;
    job.resolve(r);
  }

  /**
   * No worker can run here now: say so once, run every waiting job inline, and (unless `final`)
   * try loading one again after the next wait of `loadRetryMs`.
   */
  private giveUp(reason: string, final = false): void {
    if (this.unavailable === undefined) {
      this.unavailable = reason;
      const retryInMs = final || this.closed ? undefined : this.options.loadRetryMs[Math.min(this.loadFailures, this.options.loadRetryMs.length - 1)];
      this.loadFailures++;
      this.logger.warn('body_worker_unavailable', { reason, fallback: 'inline', ...(retryInMs === undefined ? {} : { retryInMs, failedLoads: this.loadFailures }) });
      if (retryInMs !== undefined) {
        this.retryTimer = setTimeout(() => this.retryLoad(), retryInMs);
        this.retryTimer.unref();
      }
    }
    for (const j of this.queue.splice(0)) j.resolve({ kind: 'inline' });
  }

  /** Load one worker again (jobs queue for it meanwhile); it fails into `giveUp` or ends the fallback when ready. */
  private retryLoad(): void {
    this.retryTimer = undefined;
    if (this.closed) return;
    this.unavailable = undefined;
    if (this.slots.size === 0) this.start();
  }

  /**
   * After `idleMs` without a job, the workers that ran jobs exit (their heaps go back to the
   * system); `warm` fresh ones are kept, started now if need be.
   */
  private armIdle(): void {
    if (this.idleTimer || this.closed) return;
    if ([...this.slots].some((s) => s.job || !s.ready)) return;
    if (![...this.slots].some((s) => s.used)) return;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = undefined;
      let fresh = 0;
      for (const s of this.slots) if (!s.used) fresh++;
      for (const s of this.slots) {
        if (!s.used || s.job) continue;
        // Until its 'exit', the slot is still in the pool: no job may go to it.
        s.failed = true;
        void s.worker.terminate();
      }
      for (; fresh < Math.min(this.options.warm, this.maxWorkers) && this.unavailable === undefined; fresh++) if (!this.start()) break;
    }, this.options.idleMs);
    this.idleTimer.unref();
  }
}

function failed(failure: WorkerFailure, message: string, code: string | number): PoolResult<never> {
  return { kind: 'failed', failure, error: new GatewayError(500, `request body translation failed: ${message}`, 'api_error'), code };
}

function timeoutError(ms: number): GatewayError {
  return new GatewayError(504, `request body translation took longer than ${ms} ms`, 'timeout_error');
}

function closedResult(): PoolResult<never> {
  return { kind: 'failed', failure: 'closed', error: new GatewayError(503, 'gateway is shutting down', 'overloaded_error') };
}

function workerOptions(setup: WorkerSetup, heapMb: number): ConstructorParameters<typeof Worker>[1] {
  // `env` as this module sees it (the default is the thread's own; a test sandbox may have another).
  // No `execArgv` of the process: its preloads (-r …) have no business in a worker that only translates.
  return { workerData: setup, env: process.env, execArgv: [], resourceLimits: { maxOldGenerationSizeMb: heapMb } };
}

/**
 * The worker from the TypeScript sources (ts-jest, ts-node: development only): bodyWorker.ts and
 * what it imports, bundled once per process with esbuild (a devDependency; asynchronously, about a
 * second) and run as the worker's code. Faster to start than compiling each module in the worker,
 * and the worker's heap holds no compiler.
 */
let sourceBundle: string | undefined;
let bundled: Promise<void> | undefined;
function bundleSource(file: string): Promise<void> {
  bundled ??= (async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- development-only tool, loaded only when running from sources
    const esbuild = require('esbuild') as typeof import('esbuild');
    const out = await esbuild.build({ entryPoints: [file], bundle: true, platform: 'node', format: 'cjs', target: 'node20', write: false, logLevel: 'silent' });
    sourceBundle = out.outputFiles[0]!.text;
  })();
  return bundled;
}
