/**
 * A multi-turn agent loop on the OpenAI SDK (Chat Completions) with sluice as the turn controller.
 * Works with any OpenAI-compatible server (vLLM, SGLang, llama.cpp, Ollama, sluice serve, …).
 *
 *   OPENAI_BASE_URL=http://127.0.0.1:8000/v1 npx tsx examples/agent/openai.ts "what is in notes.txt?"
 */
import OpenAI from 'openai';
import { type HistoryMessage, runTurn, toOpenAIChatMessages, toOpenAIChatTools } from 'sluice';
import type { AgentOptions } from './anthropic';
import { workspaceTools } from './tools';

export async function runAgent(opts: AgentOptions): Promise<{ answer: string; history: HistoryMessage[]; turns: number }> {
  const client = new OpenAI({ baseURL: opts.baseURL, apiKey: process.env.OPENAI_API_KEY ?? 'local' });
  const tools = workspaceTools(opts.root);
  const history: HistoryMessage[] = [{ role: 'user', content: opts.prompt }];
  for (let turn = 1; turn <= (opts.maxTurns ?? 8); turn++) {
    const { messages, summary } = await runTurn({
      format: 'openai-chat',
      stream: () =>
        client.chat.completions.create({
          model: opts.model ?? 'gpt-4.1',
          messages: toOpenAIChatMessages(history) as OpenAI.ChatCompletionMessageParam[],
          tools: toOpenAIChatTools(tools) as OpenAI.ChatCompletionTool[],
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
  runAgent({ prompt: process.argv[2] ?? 'What is in notes.txt?', root: process.cwd(), baseURL: process.env.OPENAI_BASE_URL })
    .then((r) => console.log(r.answer))
    .catch((e: unknown) => {
      console.error(e instanceof Error ? e.message : e);
      process.exitCode = 1;
    });
}
