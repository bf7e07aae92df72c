/**
 * Shadow traffic with known savings for test/report/decisions.test.ts: library turns run by
 * runTurn({ policy: { earlyStart: 'shadow' } }) on a virtual clock (exact, repeatable times),
 * their sluice.turn spans exported as OTLP/HTTP JSON to a real receiver on 127.0.0.1.
 *
 * Models (anthropic format; a read_file call, the stream ends at END ms):
 * - `big`  — 30 turns; read_file complete at 100 ms, its run takes 300..500 ms (median 400): under
 *            'safe' it would finish inside the stream, so each turn saves exactly its duration.
 *            Truth: saving median 400 ms, turn without early dispatch median END + 400 ms.
 * - `none` — 30 turns; the call is complete only at the end of the stream: saves 0.
 * - `few`  — 5 turns like `big`: too few to tell.
 * - `bad`  — 30 turns like `big`; the test marks one turn's span with an invariant violation
 *            (sluice itself produces none, so a violation has to be written in).
 *
 * Run as its own process (the OTLP exporter cannot run inside Jest's VM):
 *   node -r ts-node/register/transpile-only test/report/shadowDay.ts DIR
 * writes DIR/otlp/shadow.jsonl.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { z } from 'zod';
import { startOtel } from '../../src/gateway/otel';
import { scriptFromTrace } from '../../src/gateway/scripted';
import { settleMicrotasks, VirtualClock } from '../../src/engine/clock';
import { runTurn } from '../../src/engine/runTurn';
import { defineTool } from '../../src/execute/tools';
import { synthesizeTrace } from '../../src/trace/synth';

export const END = 700;
export const MODELS = { big: 30, none: 30, few: 5, bad: 30 } as const;
/** read_file's run in turn i: 300, 350, …, 500 ms (median 400). */
export const durationOf = (i: number): number => 300 + (i % 5) * 50;

async function oneTurn(model: keyof typeof MODELS, i: number): Promise<void> {
  const clock = new VirtualClock();
  const completeMs = model === 'none' ? END : 100;
  const script = scriptFromTrace(
    synthesizeTrace('anthropic', {
      model,
      calls: [{ name: 'read_file', id: `toolu_${model}_${i}`, args: { path: 'SECRET_PATH' }, openMs: Math.min(completeMs, 50), completeMs }],
      endMs: END,
      finish: 'tool_calls',
    }),
  )[0]!;
  async function* play(): AsyncGenerator<unknown> {
    for (const l of script) {
      if (!('data' in l) || l.data === '[DONE]') continue;
      const wait = l.t - clock.now();
      if (wait > 0) await new Promise<void>((r) => clock.setTimeout(r, wait));
      yield l.data;
    }
  }
  const tools = [
    defineTool({
      name: 'read_file',
      kind: 'read',
      input: z.object({ path: z.string() }),
      run: () => new Promise<string>((r) => clock.setTimeout(() => r('SECRET_RESULT'), durationOf(i))),
    }),
  ];
  let done = false;
  const turn = runTurn({ format: 'anthropic', stream: () => play(), tools, policy: { earlyStart: 'shadow' }, clock, telemetry: { model } }).finally(() => (done = true));
  while (!done) {
    await settleMicrotasks();
    const t = clock.nextTimerAt();
    if (t !== undefined) clock.advanceTo(t);
  }
  await turn;
}

async function startReceiver(): Promise<{ url: string; bodies: string[]; close(): Promise<void> }> {
  const bodies: string[] = [];
  const server = http.createServer((req, res) => {
    let b = '';
    req.on('data', (c: Buffer) => (b += c.toString()));
    req.on('end', () => {
      if (req.url === '/v1/traces') bodies.push(b);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, bodies, close: () => new Promise((r) => (server.close(() => r()), server.closeAllConnections())) };
}

export async function generate(dir: string): Promise<void> {
  fs.mkdirSync(path.join(dir, 'otlp'), { recursive: true });
  const receiver = await startReceiver();
  const otel = startOtel({ serviceName: 'report-shadow', traces: { url: `${receiver.url}/v1/traces`, protocol: 'http/json' } });
  try {
    for (const model of Object.keys(MODELS) as (keyof typeof MODELS)[]) for (let i = 0; i < MODELS[model]; i++) await oneTurn(model, i);
  } finally {
    await otel.shutdown();
    await receiver.close();
  }
  fs.writeFileSync(path.join(dir, 'otlp', 'shadow.jsonl'), receiver.bodies.map((b) => JSON.stringify(JSON.parse(b))).join('\n') + '\n');
}

if (require.main === module) {
  generate(process.argv[2]!).then(
    () => process.exit(0),
    (e: unknown) => {
      process.stderr.write(`shadowDay: ${e instanceof Error ? e.stack : String(e)}\n`);
      process.exit(1);
    },
  );
}
