/**
 * From the gateway's A/B to a decision: a real gateway with `releaseHoldout: 0.5` over a scripted
 * backend (one read_file call complete at 10 ms, then TAIL_MS more of text), and an agent client
 * (the real Anthropic SDK) that runs each tool call for TOOL_MS the moment its block closes and
 * sends the result when the stream has ended and the run is done. Early-arm clients come back
 * right after the end (the run hid in the tail); holdout-arm clients TOOL_MS later. The gateway's
 * `turn` log, read by `sluice report`, must give a saving of about TOOL_MS for that model, and
 * `enable`. Wall-clock bounds are generous (±40%); the suite is in jest.config.ts's SERIAL list.
 */
import Anthropic from '@anthropic-ai/sdk';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Logger, turnLogObserver } from '../../src/gateway/log';
import { chatChunk, type RecordedRequest, type ScriptLine, startScriptedUpstream } from '../../src/gateway/scripted';
import { startGateway } from '../../src/gateway/server';
import type { Report } from '../../src/report/model';
import { runCli } from '../helpers/cli';

const TOOL_MS = 300;
const TAIL_MS = 700;
/** Sessions run 8 at a time; first requests draw the arms alternately. */
const BATCHES = 3;
const PER_BATCH = 8;

function backend(req: RecordedRequest): ScriptLine[] {
  const msgs = (req.body as { messages?: { role: string }[] }).messages ?? [];
  if (msgs.at(-1)?.role === 'tool')
    return [
      { t: 0, data: chatChunk({ content: 'ok' }) },
      { t: 1, data: chatChunk({ finish: 'stop' }) },
      { t: 1, data: '[DONE]' },
    ];
  const out: ScriptLine[] = [{ t: 10, data: chatChunk({ tool: { index: 0, id: 'call_read', name: 'read_file', args: '{"path":"a.ts"}' } }) }];
  for (let t = 100; t <= TAIL_MS; t += 100) out.push({ t, data: chatChunk({ content: 'and more. ' }) });
  out.push({ t: TAIL_MS + 5, data: chatChunk({ finish: 'tool_calls' }) }, { t: TAIL_MS + 5, data: '[DONE]' });
  return out;
}

const TOOLS = [{ name: 'read_file', description: 'Read a file', input_schema: { type: 'object' as const, properties: { path: { type: 'string' } } } }];

async function agentTurn(client: Anthropic, n: number): Promise<void> {
  const messages: Anthropic.Messages.MessageParam[] = [{ role: 'user', content: `task ${n}` }];
  const runs: Promise<string>[] = [];
  const stream = client.messages.stream({ model: 'ab-model', max_tokens: 64, messages, tools: TOOLS });
  stream.on('contentBlock', (b) => {
    if (b.type === 'tool_use') runs.push(new Promise((r) => setTimeout(() => r(b.id), TOOL_MS)));
  });
  const reply = await stream.finalMessage();
  const done = await Promise.all(runs);
  messages.push({ role: 'assistant', content: reply.content }, { role: 'user', content: done.map((id) => ({ type: 'tool_result' as const, tool_use_id: id, content: 'text' })) });
  await client.messages.create({ model: 'ab-model', max_tokens: 64, messages, tools: TOOLS });
}

test('--release-holdout 0.5: the report gives the tool time as the saving for that model, and enable', async () => {
  const lines: string[] = [];
  const logger = new Logger('info', (r) => lines.push(JSON.stringify(r)));
  const up = await startScriptedUpstream({ script: backend });
  let draw = 0;
  const gw = await startGateway({ upstream: up.url, logger, observer: turnLogObserver(logger), pingIntervalMs: 0, releaseHoldout: 0.5, random: () => (draw++ % 2 === 0 ? 0.25 : 0.75) });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-ab-'));
  try {
    const client = new Anthropic({ baseURL: gw.url, apiKey: 'k', maxRetries: 0, timeout: 30_000 });
    for (let b = 0; b < BATCHES; b++) await Promise.all(Array.from({ length: PER_BATCH }, (_, i) => agentTurn(client, b * PER_BATCH + i)));
    const log = path.join(dir, 'gateway.log');
    fs.writeFileSync(log, lines.join('\n') + '\n');
    const r = await runCli(['report', log, '--json', '--min-turns', '8']);
    expect(r.code).toBe(0);
    const rep = JSON.parse(r.out) as Report;
    const row = rep.rows.find((x) => x.kind === 'gateway' && x.model === 'ab-model')!;
    process.stderr.write(`[gateway A/B] ${JSON.stringify({ arms: row.arms, savedPerTurnMs: row.savedPerTurnMs, savedShare: row.savedShare, savedInterval: row.savedInterval, decision: row.decision })}\n`);
    expect(row.savedKind).toBe('ab');
    expect(row.arms!.early + row.arms!.holdout).toBe(BATCHES * PER_BATCH);
    expect(Math.min(row.arms!.early, row.arms!.holdout)).toBeGreaterThanOrEqual(8);
    expect(row.savedPerTurnMs!).toBeGreaterThan(TOOL_MS * 0.6);
    expect(row.savedPerTurnMs!).toBeLessThan(TOOL_MS * 1.4);
    // The share: the saving ÷ (the holdout turn, ≈ TAIL_MS, + its gap, ≈ TOOL_MS).
    expect(row.savedShare!).toBeGreaterThan(0.15);
    expect(row.savedShare!).toBeLessThan(0.45);
    expect(row.decision).toBe('enable');
    // Fewer turns than --min-turns per arm: more-data, whatever the saving.
    const few = JSON.parse((await runCli(['report', log, '--json'])).out) as Report;
    expect(few.rows.find((x) => x.model === 'ab-model')!.decision).toBe('more-data');
  } finally {
    await gw.close();
    await up.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);
