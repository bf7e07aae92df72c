/**
 * A recorded "day" of mixed gateway traffic for test/report: four gateways (one per upstream API:
 * openai-chat, openai-responses, anthropic, gemini), two models each, over scripted backends with
 * known timings; some requests fail mid-stream (backend reset, then the client retries) and some
 * are aborted by the client. What the deployment records: the gateway's JSON log (turn records)
 * and the OTLP/HTTP JSON a real receiver gets from the gateway's OpenTelemetry exporter.
 *
 * Run as its own process (the OTLP exporter cannot run inside Jest's VM):
 *   node -r ts-node/register/transpile-only test/report/day.ts DIR
 * writes DIR/logs/gateway.log and DIR/otlp/traces.jsonl.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { Logger, turnLogObserver } from '../../src/gateway/log';
import { composeObservers } from '../../src/gateway/observer';
import { startOtel } from '../../src/gateway/otel';
import { type ScriptLine, scriptFromTrace, startScriptedUpstream, type ScriptedUpstream } from '../../src/gateway/scripted';
import { type Gateway, startGateway } from '../../src/gateway/server';
import { synthesizeTrace } from '../../src/trace/synth';
import { runTurn } from '../../src/engine/runTurn';
import { defineTool } from '../../src/execute/tools';
import { FileJournalStore } from '../../src/journal/fileStore';
import { createTurnJournal } from '../../src/journal/journal';
import { z } from 'zod';

export const FORMATS = ['openai-chat', 'openai-responses', 'anthropic', 'gemini'] as const;
type Format = (typeof FORMATS)[number];
export const END = 500;

/** small: both calls complete early (100, 220 ms); large: the second completes at the end (500 ms). */
function lines(format: Format, model: string, mode: string): ScriptLine[] {
  const large = model.endsWith('-large');
  const trace = synthesizeTrace(format, {
    model,
    calls: [
      { name: 'read_file', id: 'call_r', args: { path: 'SECRET_PATH_a' }, openMs: 0, completeMs: 100 },
      large
        ? { name: 'grep', id: 'call_g', args: { q: 'x' }, openMs: 300, completeMs: END }
        : { name: 'grep', id: 'call_g', args: { q: 'x' }, openMs: 120, completeMs: 220 },
    ],
    endMs: END,
    finish: 'tool_calls',
  });
  const script = bunch(scriptFromTrace(trace)[0]!);
  // reset: the backend dies after the first call was sent; abort: it stalls, the client leaves.
  if (mode === 'reset') return [...script.filter((l) => l.t <= 150), { t: 400, reset: true }];
  if (mode === 'abort') return [...script.filter((l) => l.t <= 150), { t: 150, hang: true }];
  return script;
}

/**
 * Lines due at the same time go out in one write, as a provider's last bytes do: what completes
 * "at the end" then reaches the gateway with the end, however busy this machine is.
 */
function bunch(script: ScriptLine[]): ScriptLine[] {
  const out: ScriptLine[] = [];
  for (const l of script) {
    if (!('data' in l)) {
      out.push(l);
      continue;
    }
    const f = `data: ${l.data === '[DONE]' ? '[DONE]' : JSON.stringify(l.data)}\n\n`;
    const prev = out.at(-1);
    if (prev && 'raw' in prev && prev.t === l.t) out[out.length - 1] = { t: l.t, raw: prev.raw + f };
    else out.push({ t: l.t, raw: f });
  }
  return out;
}

interface Receiver {
  url: string;
  bodies: string[];
  /** Metrics posts: content type and size (they come as protobuf). */
  metrics: { contentType: string; bytes: number }[];
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const bodies: string[] = [];
  const metrics: Receiver['metrics'] = [];
  const server = http.createServer((req, res) => {
    let b = '';
    let bytes = 0;
    req.on('data', (c: Buffer) => ((b += c.toString()), (bytes += c.length)));
    req.on('end', () => {
      if (req.url === '/v1/traces') bodies.push(b);
      if (req.url === '/v1/metrics') metrics.push({ contentType: String(req.headers['content-type']), bytes });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies, metrics, close: () => new Promise((r) => (server.close(() => r()), server.closeAllConnections())) };
}

/** One streaming chat request; `abortAfterMs` destroys it mid-stream. Resolves when it is over. */
function request(gw: Gateway, model: string, mode: string, abortAfterMs?: number): Promise<void> {
  return new Promise((resolve) => {
    const body = JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: `MODE:${mode}` }] });
    const req = http.request(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve());
      res.on('close', () => resolve());
      if (abortAfterMs !== undefined) setTimeout(() => req.destroy(), abortAfterMs);
    });
    req.on('error', () => resolve());
    req.end(body);
  });
}


/** Library turns: read_file (safe, 200 ms) complete at 100 ms, edit_file (unsafe, 50 ms) at 220 ms, end at 500 ms. */
export const LIB_FORMATS = ['anthropic', 'openai-chat'] as const;

async function* play(script: ScriptLine[]): AsyncGenerator<unknown> {
  const t0 = performance.now();
  for (const l of script) {
    if (!('data' in l) || l.data === '[DONE]') continue;
    const wait = t0 + l.t - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    yield l.data;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const TOOLS = [
  defineTool({ name: 'read_file', kind: 'read', input: z.object({ path: z.string() }), run: async () => (await sleep(200), 'SECRET_RESULT') }),
  defineTool({ name: 'edit_file', kind: 'edit', input: z.object({ path: z.string() }), run: async () => (await sleep(50), 'SECRET_RESULT') }),
];

/** Two turns per library format and policy ('safe' → model lib-safe, 'shadow' → lib-shadow), journaled. */
async function libraryTurns(dir: string): Promise<void> {
  const store = new FileJournalStore(path.join(dir, 'journals'), { fsync: false });
  let n = 0;
  for (const format of LIB_FORMATS)
    for (const earlyStart of ['safe', 'shadow'] as const)
      for (let i = 0; i < 2; i++) {
        const model = `lib-${earlyStart}`;
        const script = scriptFromTrace(
          synthesizeTrace(format, {
            model,
            calls: [
              { name: 'read_file', id: 'toolu_r', args: { path: 'SECRET_PATH_r' }, openMs: 0, completeMs: 100 },
              { name: 'edit_file', id: 'toolu_e', args: { path: 'SECRET_PATH_e' }, openMs: 120, completeMs: 220 },
            ],
            endMs: END,
            finish: 'tool_calls',
          }),
        )[0]!;
        const journal = await createTurnJournal(store, `turn-${++n}`, { format, ...(earlyStart === 'safe' ? { earlyStart } : {}), meta: { model, earlyStart } });
        await runTurn({ format, stream: () => play(script), tools: TOOLS, policy: { earlyStart }, journal, telemetry: { model } });
      }
  await store.close();
}

export async function generateDay(dir: string): Promise<void> {
  fs.mkdirSync(path.join(dir, 'logs'));
  fs.mkdirSync(path.join(dir, 'otlp'));
  fs.mkdirSync(path.join(dir, 'journals'));
  const receiver = await startReceiver();
  // Traces as JSON (what the report reads); metrics as protobuf (the other protocol, flushed at shutdown).
  const otel = startOtel({
    serviceName: 'report-day',
    traces: { url: `${receiver.url}/v1/traces`, protocol: 'http/json' },
    metrics: { url: `${receiver.url}/v1/metrics`, protocol: 'http/protobuf', intervalMs: 3_600_000 },
  });
  const logLines: string[] = [];
  const logger = new Logger('info', (r) => logLines.push(JSON.stringify(r)));
  const observer = composeObservers(turnLogObserver(logger), otel.observer);
  const ups: ScriptedUpstream[] = [];
  const gws: Gateway[] = [];
  try {
    // One gateway at a time (each with its requests in parallel): less contention, steadier timings.
    for (const format of FORMATS) {
      await (async () => {
        const up = await startScriptedUpstream({
          script: (req) => {
            const text = `${req.url} ${JSON.stringify(req.body)}`;
            const model = /(\S+?-(?:small|large))/.exec(/models\/([^:/]+)/.exec(req.url)?.[1] ?? String((req.body as { model?: unknown }).model))?.[1] ?? 'unknown';
            const mode = /MODE:(\w+)/.exec(text)?.[1] ?? 'ok';
            return lines(format, model, mode);
          },
        });
        ups.push(up);
        const gw = await startGateway({ upstream: up.url, upstreamFormat: format, logger, observer, pingIntervalMs: 0 });
        gws.push(gw);
        const small = `${format}-small`;
        const large = `${format}-large`;
        // A day: small gets 3 good turns, one that fails mid-stream (then retried: one of the good
        // ones), and one the client aborts; large gets 3 good turns.
        await Promise.all([
          request(gw, small, 'ok'),
          request(gw, small, 'ok'),
          request(gw, small, 'reset').then(() => request(gw, small, 'ok')),
          request(gw, small, 'abort', 600),
          request(gw, large, 'ok'),
          request(gw, large, 'ok'),
          request(gw, large, 'ok'),
        ]);
      })();
    }
    // The library in the same process: its sluice.turn spans go to the same exporter.
    await libraryTurns(dir);
  } finally {
    for (const gw of gws) await gw.close();
    for (const up of ups) await up.close();
    await otel.shutdown();
    await receiver.close();
  }
  fs.writeFileSync(path.join(dir, 'logs', 'gateway.log'), logLines.join('\n') + '\n');
  fs.writeFileSync(path.join(dir, 'metrics-posts.json'), JSON.stringify(receiver.metrics));
  fs.writeFileSync(path.join(dir, 'otlp', 'traces.jsonl'), receiver.bodies.map((b) => JSON.stringify(JSON.parse(b))).join('\n') + '\n');
}

if (require.main === module) {
  generateDay(process.argv[2]!).then(
    () => process.exit(0),
    (e: unknown) => {
      process.stderr.write(`day: ${e instanceof Error ? e.stack : String(e)}\n`);
      process.exit(1);
    },
  );
}
