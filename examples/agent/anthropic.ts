/**
 * A multi-turn agent loop on the Anthropic SDK with sluice as the turn controller:
 * request → runTurn (tools start as soon as their call is complete) → append → next request,
 * until the model answers without calling a tool.
 *
 *   ANTHROPIC_BASE_URL=http://127.0.0.1:8080 npx tsx examples/agent/anthropic.ts "what is in notes.txt?"
 */
import Anthropic from '@anthropic-ai/sdk';
import { type HistoryMessage, runTurn, toAnthropicMessages, toAnthropicTools } from 'sluice';
import { workspaceTools } from './tools';

export interface AgentOptions {
  prompt: string;
  /** Directory the tools may read. */
  root: string;
  baseURL?: string;
  model?: string;
  maxTurns?: number;
}

export async function runAgent(opts: AgentOptions): Promise<{ answer: string; history: HistoryMessage[]; turns: number }> {
  const client = new Anthropic({ baseURL: opts.baseURL, apiKey: process.env.ANTHROPIC_API_KEY ?? 'local' });
  const tools = workspaceTools(opts.root);
  const history: HistoryMessage[] = [{ role: 'user', content: opts.prompt }];
  for (let turn = 1; turn <= (opts.maxTurns ?? 8); turn++) {
    const { messages, summary } = await runTurn({
      format: 'anthropic',
      // The SDK's raw stream events; runTurn asks again (attempt 2, 3) after a retryable error.
      stream: () =>
        client.messages.create({
          model: opts.model ?? 'claude-sonnet-5',
          max_tokens: 4096,
          messages: toAnthropicMessages(history) as Anthropic.MessageParam[],
          tools: toAnthropicTools(tools) as Anthropic.Tool[],
          stream: true,
        }),
      tools,
    });
    // Failure in one way (docs/embedding.md): misuse rejects; a turn that ran resolves, failed or not.
    if (summary.outcome === 'failed') throw new Error(`turn failed: ${summary.error?.type ?? 'error'}: ${summary.error?.message ?? ''}`);
    history.push(...messages);
    const reply = messages[0];
    if (reply?.role === 'assistant' && reply.calls.length === 0) return { answer: reply.content, history, turns: turn };
  }
  throw new Error('the model was still calling tools after maxTurns turns');
}

if (require.main === module) {
  runAgent({ prompt: process.argv[2] ?? 'What is in notes.txt?', root: process.cwd(), baseURL: process.env.ANTHROPIC_BASE_URL })
    .then((r) => console.log(r.answer))
    .catch((e: unknown) => {
      console.error(e instanceof Error ? e.message : e);
      process.exitCode = 1;
    });
}
