/**
 * The body worker's entry (a `worker_threads` worker started by pool.ts): turns a request body's
 * bytes into the backend body's bytes with `translateBody` — the function the inline path runs —
 * so a large body never holds the gateway's event loop. Built as its own file in every build
 * (dist/src by tsc, dist/esm/bodyWorker.mjs by esbuild, dist/cjs/bodyWorker.cjs by Rollup:
 * scripts/build.mjs).
 *
 * Protocol: after loading it posts `{ ready: true }`; then per job `{ id, api, bytes }` (the bytes'
 * buffer transferred in) it posts `{ id, result }`, the backend body's buffer transferred out.
 *
 * `SLUICE_BODY_WORKER_FAULT` (tests only: fault injection) makes it fail on purpose: `load` (throw
 * while loading), `throw` (an uncaught error in a job), `exit` (exit code 3 in a job), `oom` (run
 * out of its heap in a job), `hang` (never answer a job).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { chatApi } from '../inbound/chat';
import { messagesApi } from '../inbound/messages';
import { responsesApi } from '../inbound/responses';
import type { InboundApi } from '../inbound/types';
import { upstreamFormatFor } from '../upstream/index';
import { validateCanonical } from '../validate';
import type { JobIn, JobOut, WorkerSetup } from './pool';
import { countBody, type TranslateSetup, translateBody } from './translate';

const fault = process.env.SLUICE_BODY_WORKER_FAULT;
if (fault === 'load') throw new Error('injected body worker load fault (SLUICE_BODY_WORKER_FAULT=load)');

const port = parentPort;
if (!port) throw new Error('bodyWorker.ts runs as a worker_threads worker (pool.ts starts it)');
const setup = workerData as WorkerSetup;
const apis: Record<InboundApi['name'], InboundApi> = { messages: messagesApi, responses: responsesApi, chat: chatApi };
const base: Omit<TranslateSetup, 'api'> = {
  validate: (creq) => validateCanonical(creq, setup.limits),
  models: setup.models,
  upstreamFormat: upstreamFormatFor(setup.upstreamFormat),
  bodyOptions: setup.bodyOptions,
};

function injectFault(): void {
  if (fault === 'throw') throw new Error('injected body worker fault');
  if (fault === 'exit') process.exit(3);
  if (fault === 'oom') {
    const hold: number[][] = [];
    for (let i = 0; ; i++) hold.push(new Array<number>(1 << 20).fill(i));
  }
  if (fault === 'hang') for (;;);
}

port.on('message', (job: JobIn) => {
  injectFault();
  if (job.api === 'count') return port.postMessage({ id: job.id, result: countBody(job.bytes, (c) => validateCanonical(c, setup.limits)) } satisfies JobOut);
  const t = translateBody(job.bytes, { ...base, api: apis[job.api] });
  if (!t.ok) return port.postMessage({ id: job.id, result: t } satisfies JobOut);
  const payload = new TextEncoder().encode(t.payload);
  port.postMessage({ id: job.id, result: { ...t, payload } } satisfies JobOut, [payload.buffer]);
});
port.postMessage({ ready: true });
