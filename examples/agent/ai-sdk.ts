/**
 * A multi-turn agent loop on the AI SDK with sluice as the turn controller: streamText gets the
 * tool schemas WITHOUT `execute` (so it runs nothing and stops after one step); sluice reads its
 * fullStream (`format: 'ai-sdk'`), runs each tool as soon as its call is complete, and returns the
 * messages to append. Any AI SDK provider works: swap `createAnthropic` for Bedrock, Vertex,
 * Mistral, Groq, xAI, Ollama, an OpenAI-compatible server, …
 *
 *   ANTHROPIC_BASE_URL=http://127.0.0.1:8080/v1 npx tsx examples/agent/ai-sdk.ts "what is in notes.txt?"
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { jsonSchema, type LanguageModel, streamText } from 'ai';
import { type HistoryMessage, runTurn, toAiSdkMessages, toAiSdkTools } from 'sluice';
import type { AgentOptions } from './anthropic';
import { workspaceTools } from './tools';

export async function runAgent(
  opts: AgentOptions & { languageModel?: LanguageModel },
): Promise<{ answer: string; history: HistoryMessage[]; turns: number }> {
  const model =
    opts.languageModel ??
    createAnthropic({ baseURL: opts.baseURL, apiKey: process.env.ANTHROPIC_API_KEY ?? 'local' })(opts.model ?? 'claude-sonnet-5');
  const tools = workspaceTools(opts.root);
  // Schemas only: no `execute`, sluice runs the tools.
  const schemas = toAiSdkTools(tools, jsonSchema);
  const history: HistoryMessage[] = [{ role: 'user', content: opts.prompt }];
  for (let turn = 1; turn <= (opts.maxTurns ?? 8); turn++) {
    const { messages, summary } = await runTurn({
      format: 'ai-sdk',
      stream: () => streamText({ model, messages: toAiSdkMessages(history), tools: schemas, maxRetries: 0 }).fullStream,
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
