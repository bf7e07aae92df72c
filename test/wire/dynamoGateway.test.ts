/**
 * Dynamo's dispatch events through the gateway (`--upstream-format dynamo`, SPEC §13): a real
 * gateway in front of a scripted Dynamo frontend (real HTTP) that sends `event: tool_call_dispatch`
 * frames, and the real Anthropic SDK as the client. The backend stream holds at a gate after the
 * call (the model keeps "thinking"): with `--completion evidence-only` the dispatched call reaches
 * the client while the stream is held; the #13972 shape (dispatch with empty arguments, the call
 * split over chunks) is not evidence, so the call waits for the finish. Inferred completion
 * releases both early. The client always gets the call once, with its whole input.
 */
import Anthropic from '@anthropic-ai/sdk';
import { Logger } from '../../src/gateway/log';
import { chatChunk, Gate, type ScriptLine, startScriptedUpstream } from '../../src/gateway/scripted';
import { type CompletionMode } from '../../src/engine/controller';
import { startGateway } from '../../src/gateway/server';
import { Collector, type RawEvent, READ_FILE_TOOL, toolBlocks } from '../gateway/helpers';

const ARGS = '{"path":"src/index.ts"}';
const entry = (args: string, first = true) => ({ index: 0, ...(first ? { id: 'call-938200c8', type: 'function' } : {}), function: { ...(first ? { name: 'read_file' } : {}), arguments: args } });
const named = (event: string, v: unknown): ScriptLine => ({ t: 0, raw: `event: ${event}\ndata: ${JSON.stringify(v)}\n\n` });
const toolCalls = (tc: unknown) => ({ id: 'chatcmpl-d', object: 'chat.completion.chunk', created: 1, model: 'qwen', choices: [{ index: 0, delta: { tool_calls: [tc] }, finish_reason: null }] });

/** Dynamo with its own parser: the whole call in one chunk, its dispatch event just before. */
const whole: ScriptLine[] = [
  { t: 0, data: chatChunk({ content: 'Reading. ' }) },
  named('reasoning_dispatch', { index: 0, reasoning_content: 'need the file' }),
  named('tool_call_dispatch', { choice_index: 0, tool_call: entry(ARGS) }),
  { t: 0, data: toolCalls(entry(ARGS)) },
  { t: 0, gate: true },
  { t: 0, data: chatChunk({ finish: 'tool_calls' }) },
  { t: 0, data: '[DONE]' },
];

/** #13972: a split backend call; the dispatch carried the first chunk's empty arguments. */
const split: ScriptLine[] = [
  { t: 0, data: chatChunk({ content: 'Reading. ' }) },
  named('tool_call_dispatch', { choice_index: 0, tool_call: entry('') }),
  { t: 0, data: toolCalls(entry('')) },
  { t: 0, data: toolCalls(entry(ARGS.slice(0, 9), false)) },
  { t: 0, data: toolCalls(entry(ARGS.slice(9), false)) },
  { t: 0, gate: true },
  { t: 0, data: chatChunk({ finish: 'tool_calls' }) },
  { t: 0, data: '[DONE]' },
];

/** One request; returns whether the tool block reached the client while the backend was held at the gate, and the blocks. */
async function turn(script: ScriptLine[], completion: CompletionMode): Promise<{ early: boolean; blocks: ReturnType<typeof toolBlocks>; warnings: string[] }> {
  const gate = new Gate();
  const up = await startScriptedUpstream({ script, gate });
  const logs: Record<string, unknown>[] = [];
  const gw = await startGateway({ upstream: up.url, format: 'dynamo', completion, logger: new Logger('debug', (r) => logs.push(r)), pingIntervalMs: 0 });
  try {
    const client = new Anthropic({ baseURL: gw.url, apiKey: 'k', maxRetries: 0 });
    const stream = client.messages.stream({ model: 'qwen', max_tokens: 64, messages: [{ role: 'user', content: 'read' }], tools: [READ_FILE_TOOL] });
    const c = new Collector(stream as AsyncIterable<RawEvent>);
    await gate.reached();
    // Give the released block time to arrive while the backend is held (generous: no bound is asserted).
    const stopped = (e: RawEvent) => e.type === 'content_block_stop' && c.events.some((s) => s.type === 'content_block_start' && s.index === e.index && s.content_block.type === 'tool_use');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([c.until(stopped), new Promise<void>((r) => (timer = setTimeout(r, 1500)))]);
    clearTimeout(timer);
    const early = c.events.some(stopped);
    gate.release();
    await c.done;
    expect(c.error).toBeUndefined();
    const warnings = logs.filter((r) => r.msg === 'engine_warning').map((r) => String(r.code));
    return { early, blocks: toolBlocks(c.events), warnings };
  } finally {
    gate.release();
    await gw.close();
    await up.close();
  }
}

describe('gateway --upstream-format dynamo: tool_call_dispatch', () => {
  test('evidence-only: the dispatched call reaches the client while the backend still streams, once, whole', async () => {
    const r = await turn(whole, 'evidence-only');
    expect(r.early).toBe(true);
    expect(r.blocks).toHaveLength(1);
    expect(JSON.parse(r.blocks[0]!.json)).toEqual(JSON.parse(ARGS));
    expect(r.warnings).toEqual([]);
  }, 30_000);

  test('evidence-only, #13972 shape: no release before the finish, then the whole input once', async () => {
    const r = await turn(split, 'evidence-only');
    expect(r.early).toBe(false);
    expect(r.warnings).toEqual(['dispatch_not_evidence']);
    expect(r.blocks).toHaveLength(1);
    expect(JSON.parse(r.blocks[0]!.json)).toEqual(JSON.parse(ARGS));
  }, 30_000);

  test('inferred: both shapes release early, once, whole', async () => {
    for (const s of [whole, split]) {
      const r = await turn(s, 'inferred');
      expect(r.early).toBe(true);
      expect(r.blocks).toHaveLength(1);
      expect(JSON.parse(r.blocks[0]!.json)).toEqual(JSON.parse(ARGS));
    }
  }, 30_000);
});
