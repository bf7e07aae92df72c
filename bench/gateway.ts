/**
 * Gateway benchmark: added latency per event and a 200-concurrent load run, on loopback.
 *
 * Setup (one process): the scripted upstream (src/gateway/scripted.ts) writes a timed
 * OpenAI-chat turn per request — 5 text chunks, then 3 tool calls whose arguments arrive in
 * pieces, then finish, usage, [DONE], one chunk every `stepMs` — and records when it wrote each
 * chunk (`performance.now()` right after `res.write`). A raw HTTP/SSE client records when each
 * Anthropic frame arrives. Per event, latency = client received − upstream chunk written:
 *   - each text chunk → its `text_delta`;
 *   - the chunk that closes a call's JSON → that call's `content_block_stop` (early release);
 *   - `[DONE]` + end of body → `message_stop`.
 * The `direct` rows run the same client against the upstream itself (one loopback hop, no
 * gateway): their latency is the floor, so gateway − direct is what the gateway adds.
 *
 * Scenarios: `sequential` (one request at a time) and `load` (N concurrent streaming requests;
 * default 200), which also checks that every response carries its own three calls, in order.
 * Everything shares one event loop (client, gateway and upstream), so the load numbers are an
 * upper bound for a gateway running in its own process.
 *
 * Run: `npx ts-node bench/gateway.ts`, or `node dist/bench/gateway.js` after `npm run build`.
 */
import * as http from 'node:http';
import * as os from 'node:os';
import { performance } from 'node:perf_hooks';
import { Logger } from '../src/gateway/log';
import { chatChunk, type ScriptLine, type ScriptedUpstream, startScriptedUpstream } from '../src/gateway/scripted';
import { type Gateway, startGateway } from '../src/gateway/server';

export interface Row {
  /** `gateway` (client → gateway → upstream) or `direct` (client → upstream, the floor). */
  bench: 'gateway' | 'direct';
  scenario: 'sequential' | 'load';
  requests: number;
  concurrency: number;
  /** Events measured (text deltas + tool blocks + message_stop). */
  events: number;
  /** Chunk written upstream → frame received by the client, milliseconds. */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Only tool_use blocks: the call's closing chunk → its content_block_stop. */
  toolP50Ms: number;
  toolP99Ms: number;
  /** Wall time of the scenario. */
  wallMs: number;
  /** Responses whose tool blocks were all correct (gateway rows). */
  correct: number;
  /** 1-minute load average and CPU count when the row was measured (other work on the machine skews latency). */
  load1: number;
  cpus: number;
}

export interface BenchGatewayOptions {
  /** Concurrent requests in the load scenario. Default 200. */
  concurrency?: number;
  /** Requests in the sequential scenario. Default 50. */
  sequential?: number;
  /** Milliseconds between upstream chunks. Default 2. */
  stepMs?: number;
}

const TEXT_CHUNKS = 5;
const CALLS = 3;

interface Expect {
  kind: 'text' | 'tool' | 'stop';
  key: string;
}

/** The per-request script and, per script line, what the client should see for it. */
function script(tag: string, stepMs: number): { lines: ScriptLine[]; expects: (Expect | undefined)[] } {
  const lines: ScriptLine[] = [];
  const expects: (Expect | undefined)[] = [];
  let t = 0;
  const push = (data: unknown, e?: Expect): void => {
    lines.push({ t, data });
    expects.push(e);
    t += stepMs;
  };
  push(chatChunk({ content: '' }));
  for (let k = 0; k < TEXT_CHUNKS; k++) push(chatChunk({ content: `t${k} ` }), { kind: 'text', key: `t${k} ` });
  for (let j = 0; j < CALLS; j++) {
    push(chatChunk({ tool: { index: j, id: `call_${j}`, name: 'read_file', args: '' } }));
    push(chatChunk({ tool: { index: j, args: '{"path":' } }));
    push(chatChunk({ tool: { index: j, args: `"/${tag}/${j}"}` } }), { kind: 'tool', key: String(j) });
  }
  push(chatChunk({ finish: 'tool_calls' }));
  push(chatChunk({ usage: { prompt_tokens: 100, completion_tokens: 40 } }));
  lines.push({ t, data: '[DONE]' });
  expects.push({ kind: 'stop', key: 'stop' });
  return { lines, expects };
}

interface Received {
  /** key → receive time */
  at: Map<string, number>;
  toolInputs: string[];
  frames: number;
}

/** POST and read an SSE response, timestamping each frame. `direct` maps upstream chunks instead. */
function request(url: string, body: unknown, agent: http.Agent, direct: boolean): Promise<Received> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const rec: Received = { at: new Map(), toolInputs: [], frames: 0 };
    const req = http.request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), 'x-api-key': 'bench' } },
      (res) => {
        res.setEncoding('utf8');
        let buf = '';
        let toolCount = 0;
        let openTool = false;
        let toolJson = '';
        let chunkNo = 0;
        res.on('data', (chunk: string) => {
          const now = performance.now();
          buf += chunk;
          let cut: number;
          while ((cut = buf.indexOf('\n\n')) >= 0) {
            const frame = buf.slice(0, cut);
            buf = buf.slice(cut + 2);
            rec.frames++;
            const dataLine = frame.split('\n').find((l) => l.startsWith('data: '));
            if (!dataLine) continue;
            const data = dataLine.slice(6);
            if (direct) {
              rec.at.set(String(chunkNo++), now);
              continue;
            }
            const ev = JSON.parse(data) as Record<string, unknown>;
            if (ev.type === 'content_block_start') {
              openTool = (ev.content_block as { type: string }).type === 'tool_use';
              toolJson = '';
            } else if (ev.type === 'content_block_delta') {
              const d = ev.delta as { type: string; text?: string; partial_json?: string };
              if (d.type === 'text_delta') rec.at.set(`text:${d.text}`, now);
              else if (d.type === 'input_json_delta') toolJson += d.partial_json;
            } else if (ev.type === 'content_block_stop' && openTool) {
              rec.at.set(`tool:${toolCount++}`, now);
              rec.toolInputs.push(toolJson);
              openTool = false;
            } else if (ev.type === 'message_stop') {
              rec.at.set('stop:stop', now);
            }
          }
        });
        res.on('end', () => resolve(rec));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}

interface Scenario {
  up: ScriptedUpstream;
  gw: Gateway;
  agent: http.Agent;
}

async function runScenario(
  s: Scenario,
  bench: 'gateway' | 'direct',
  scenario: 'sequential' | 'load',
  requests: number,
  concurrency: number,
): Promise<Row> {
  const lat: number[] = [];
  const toolLat: number[] = [];
  let correct = 0;
  const firstReq = s.up.requests.length;
  const url = bench === 'gateway' ? `${s.gw.url}/v1/messages` : `${s.up.url}/chat/completions`;
  const one = async (i: number): Promise<void> => {
    const tag = `${scenario}-${bench}-${i}`;
    const body =
      bench === 'gateway'
        ? { model: 'bench', max_tokens: 256, stream: true, messages: [{ role: 'user', content: tag }], tools: [{ name: 'read_file', input_schema: { type: 'object' } }] }
        : { model: 'bench', stream: true, messages: [{ role: 'user', content: tag }] };
    const got = await request(url, body, s.agent, bench === 'direct');
    const up = s.up.requests.find((q) => q.n >= firstReq && JSON.stringify(q.body).includes(`"${tag}"`));
    if (!up) throw new Error(`no upstream request for ${tag}`);
    await up.finished;
    const { expects } = script(tag, 0);
    if (bench === 'direct') {
      up.writes.forEach((w, k) => {
        const at = got.at.get(String(k));
        if (at !== undefined) {
          lat.push(at - w.at);
          if (expects[w.line]?.kind === 'tool') toolLat.push(at - w.at);
        }
      });
      return;
    }
    for (const w of up.writes) {
      const e = expects[w.line];
      if (!e) continue;
      const at = got.at.get(`${e.kind}:${e.key}`);
      if (at === undefined) continue;
      lat.push(at - w.at);
      if (e.kind === 'tool') toolLat.push(at - w.at);
    }
    const inputs = got.toolInputs.map((j) => (JSON.parse(j) as { path: string }).path);
    if (inputs.length === CALLS && inputs.every((p, j) => p === `/${tag}/${j}`)) correct++;
  };
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < requests) await one(next++);
    }),
  );
  const wallMs = performance.now() - t0;
  lat.sort((a, b) => a - b);
  toolLat.sort((a, b) => a - b);
  return {
    bench,
    scenario,
    requests,
    concurrency,
    events: lat.length,
    p50Ms: round(pct(lat, 50)),
    p99Ms: round(pct(lat, 99)),
    maxMs: round(lat[lat.length - 1] ?? NaN),
    toolP50Ms: round(pct(toolLat, 50)),
    toolP99Ms: round(pct(toolLat, 99)),
    wallMs: Math.round(wallMs),
    correct: bench === 'gateway' ? correct : requests,
    load1: Math.round(os.loadavg()[0]! * 100) / 100,
    cpus: os.cpus().length,
  };
}

export async function benchGateway(opts: BenchGatewayOptions = {}): Promise<Row[]> {
  const concurrency = opts.concurrency ?? 200;
  const sequential = opts.sequential ?? 50;
  const stepMs = opts.stepMs ?? 2;
  const up = await startScriptedUpstream({
    script: (req) => {
      const msgs = (req.body as { messages: { content: string }[] }).messages;
      return script(msgs[msgs.length - 1]!.content, stepMs).lines;
    },
  });
  const gw = await startGateway({ upstream: up.url, logger: new Logger('silent'), maxConcurrent: Math.max(256, concurrency), pingIntervalMs: 0 });
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  const s: Scenario = { up, gw, agent };
  const rows: Row[] = [];
  try {
    // Warm-up (JIT, sockets).
    for (let i = 0; i < 10; i++) {
      await runScenario(s, 'gateway', 'sequential', 1, 1);
      await runScenario(s, 'direct', 'sequential', 1, 1);
    }
    rows.push(await runScenario(s, 'direct', 'sequential', sequential, 1));
    rows.push(await runScenario(s, 'gateway', 'sequential', sequential, 1));
    rows.push(await runScenario(s, 'direct', 'load', concurrency, concurrency));
    rows.push(await runScenario(s, 'gateway', 'load', concurrency, concurrency));
  } finally {
    agent.destroy();
    await gw.close();
    await up.close();
  }
  return rows;
}

export function formatRows(rows: Row[]): string {
  const head = ['bench', 'scenario', 'req', 'conc', 'events', 'p50 ms', 'p99 ms', 'max ms', 'tool p50', 'tool p99', 'wall ms', 'correct', 'load/cpus'];
  const body = rows.map((r) =>
    [r.bench, r.scenario, r.requests, r.concurrency, r.events, r.p50Ms, r.p99Ms, r.maxMs, r.toolP50Ms, r.toolP99Ms, r.wallMs, `${r.correct}/${r.requests}`, `${r.load1}/${r.cpus}`].map(String),
  );
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]): string => cells.map((c, i) => c.padStart(widths[i]!)).join('  ');
  const out = [line(head), ...body.map(line)];
  const pair = (sc: Row['scenario']): string | undefined => {
    const g = rows.find((r) => r.bench === 'gateway' && r.scenario === sc);
    const d = rows.find((r) => r.bench === 'direct' && r.scenario === sc);
    if (!g || !d) return undefined;
    return `${sc}: gateway adds p50 ${round(g.p50Ms - d.p50Ms)} ms, p99 ${round(g.p99Ms - d.p99Ms)} ms per event over the direct hop`;
  };
  for (const sc of ['sequential', 'load'] as const) {
    const p = pair(sc);
    if (p) out.push(p);
  }
  return out.join('\n');
}

if (require.main === module) {
  benchGateway().then(
    (rows) => {
      console.log(formatRows(rows));
      console.log(JSON.stringify(rows));
    },
    (err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    },
  );
}
