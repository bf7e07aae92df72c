/**
 * The gateway's A/B of early release (SPEC §13, `--release-holdout`): a scripted agent client
 * (the real Anthropic SDK over real HTTP) runs each tool call the moment it gets it, for a fixed
 * TOOL_MS, then sends the results; the scripted backend completes the call early and then keeps
 * streaming for TAIL_MS (> TOOL_MS). In the `early` arm the tool is done before the stream ends,
 * so the client comes back right after the end; in the `holdout` arm the call arrives at the end,
 * so the client comes back TOOL_MS later. The `turn` log records carry the arm and, on the
 * answering request, `continues` with the gap: the two arms' gaps differ by about TOOL_MS.
 *
 * `sluice report` on the same log lines gives that saving and decides `enable`.
 *
 * Wall-clock bounds are generous (±40% of TOOL_MS); this suite is in jest.config.ts's SERIAL list.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { run as reportRun } from '../../src/cli/report';
import { startGateway, type Gateway } from '../../src/gateway/server';
import { Logger, type LogSink, turnLogObserver } from '../../src/gateway/log';
import { chatChunk, type RecordedRequest, type ScriptLine, startScriptedUpstream, type ScriptedUpstream } from '../../src/gateway/scripted';
import { READ_FILE_TOOL } from './helpers';

const TOOL_MS = 300;
const TAIL_MS = 600;
const SESSIONS = 8;

type Rec = Record<string, unknown>;

/** The backend: a continuation (the last message is a tool result) gets a short answer; a new turn one early call and a long tail. */
function backendScript(req: RecordedRequest): ScriptLine[] {
  const body = req.body as { messages?: { role: string }[] };
  const last = body.messages?.[body.messages.length - 1];
  if (last?.role === 'tool') {
    return [
      { t: 0, data: chatChunk({ content: 'Done.' }) },
      { t: 1, data: chatChunk({ finish: 'stop' }) },
      { t: 1, data: '[DONE]' },
    ];
  }
  const lines: ScriptLine[] = [
    { t: 0, data: chatChunk({ content: 'Reading them. ' }) },
    { t: 10, data: chatChunk({ tool: { index: 0, id: 'call_up', name: 'read_file', args: '{"path":"src/a.ts"}' } }) },
    { t: 20, data: chatChunk({ tool: { index: 1, id: 'call_up2', name: 'read_file', args: '{"path":"src/b.ts"}' } }) },
  ];
  // The tail: the model keeps writing after its calls are complete.
  for (let t = 60; t <= TAIL_MS; t += 60) lines.push({ t, data: chatChunk({ content: 'more text ' }) });
  lines.push({ t: TAIL_MS + 10, data: chatChunk({ finish: 'tool_calls' }) });
  lines.push({ t: TAIL_MS + 10, data: '[DONE]' });
  return lines;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * One agent session: a user prompt; every tool_use block is run (TOOL_MS) as soon as its block
 * closes; when the stream has ended and every run is done, the results go back in one request.
 */
async function session(client: Anthropic, n: number): Promise<void> {
  const messages: Anthropic.Messages.MessageParam[] = [{ role: 'user', content: `read the files (${n})` }];
  const stream = client.messages.stream({ model: 'scripted-model', max_tokens: 256, messages, tools: [READ_FILE_TOOL] });
  const runs: Promise<string>[] = [];
  stream.on('contentBlock', (b) => {
    if (b.type === 'tool_use') runs.push(sleep(TOOL_MS).then(() => b.id));
  });
  const msg = await stream.finalMessage();
  const ids = await Promise.all(runs);
  expect(ids.length).toBe(2);
  messages.push({ role: 'assistant', content: msg.content });
  messages.push({ role: 'user', content: ids.map((id) => ({ type: 'tool_result' as const, tool_use_id: id, content: 'file text' })) });
  await client.messages.create({ model: 'scripted-model', max_tokens: 256, messages, tools: [READ_FILE_TOOL] });
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

describe('gateway --release-holdout: the A/B arms and the gap to the next request', () => {
  let up: ScriptedUpstream;
  let gw: Gateway;
  const logs: Rec[] = [];

  beforeAll(async () => {
    up = await startScriptedUpstream({ script: backendScript });
    const sink: LogSink = (r) => logs.push(r);
    // Deterministic draws for a balanced test: new turns alternate arms (answers draw too).
    let i = 0;
    const draws = [0.25, 0.25, 0.75, 0.75];
    const logger = new Logger('info', sink);
    gw = await startGateway({ upstream: up.url, logger, observer: turnLogObserver(logger), pingIntervalMs: 0, releaseHoldout: 0.5, random: () => draws[i++ % draws.length]! });
  });
  afterAll(async () => {
    await gw?.close();
    await up?.close();
  });

  test('every turn record has its arm; an answer links to its response with the gap, and holdout − early ≈ the tool time', async () => {
    const client = new Anthropic({ baseURL: gw.url, apiKey: 'k', maxRetries: 0, timeout: 20_000, defaultHeaders: { 'x-claude-code-session-id': 'sess-1234' } });
    for (let n = 0; n < SESSIONS; n++) await session(client, n);

    const turns = logs.filter((r) => r.msg === 'turn');
    expect(turns).toHaveLength(SESSIONS * 2);
    for (const t of turns) {
      expect(['early', 'holdout']).toContain(t.arm);
      expect(t.sessionId).toBe('sess-1234');
    }
    const byId = new Map(turns.map((t) => [t.reqId as string, t]));
    const answers = turns.filter((t) => t.continues !== undefined);
    expect(answers).toHaveLength(SESSIONS);
    const gaps: Record<string, number[]> = { early: [], holdout: [] };
    for (const a of answers) {
      const c = a.continues as { requestId: string; arm: string; format: string; model: string; turnMs: number; gapMs: number; calls: number };
      const earlier = byId.get(c.requestId);
      expect(earlier).toBeDefined();
      expect(earlier!.continues).toBeUndefined(); // the first request of its session
      expect(c.arm).toBe(earlier!.arm);
      expect(c.format).toBe('openai-chat');
      expect(c.model).toBe('scripted-model');
      expect(c.calls).toBe(2);
      expect(c.turnMs).toBeGreaterThanOrEqual(TAIL_MS);
      expect(c.gapMs).toBeGreaterThanOrEqual(0);
      // The earlier response's calls: released early in the early arm, at the end in the holdout arm.
      const calls = earlier!.calls as { releasedMs: number }[];
      const end = earlier!.streamEndMs as number;
      if (c.arm === 'early') expect(calls[0]!.releasedMs).toBeLessThan(end - TAIL_MS / 2);
      else for (const call of calls) expect(call.releasedMs).toBeGreaterThanOrEqual(TAIL_MS); // after the tail, at the end
      gaps[c.arm]!.push(c.gapMs);
    }
    expect(gaps.early!.length).toBeGreaterThanOrEqual(2);
    expect(gaps.holdout!.length).toBeGreaterThanOrEqual(2);
    const saved = median(gaps.holdout!) - median(gaps.early!);
    expect(saved).toBeGreaterThan(TOOL_MS * 0.6);
    expect(saved).toBeLessThan(TOOL_MS * 1.4);

    // End to end: `sluice report` on these log lines finds the same saving, and decides.
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-holdout-')), 'gateway.log');
    fs.writeFileSync(file, logs.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const out: string[] = [];
    const spy = jest.spyOn(process.stdout, 'write').mockImplementation((t: string | Uint8Array) => {
      out.push(String(t));
      return true;
    });
    let code: number;
    try {
      code = await reportRun([file, '--json', '--min-turns', '3']);
    } finally {
      spy.mockRestore();
    }
    expect(code).toBe(0);
    const report = JSON.parse(out.join('')) as { rows: { kind: string; model: string; savedPerTurnMs?: number; decision: string }[] };
    const row = report.rows.find((r) => r.kind === 'gateway' && r.model === 'scripted-model')!;
    expect(row.savedPerTurnMs).toBeGreaterThan(TOOL_MS * 0.6);
    expect(row.savedPerTurnMs).toBeLessThan(TOOL_MS * 1.4);
    expect(row.decision).toBe('enable');
  }, 60_000);
});
