/**
 * The provider-neutral history → AI SDK `ModelMessage`s (ai v5/v6), for agent loops that call
 * `streamText({ messages })` and let sluice run the tools (`format: 'ai-sdk'`).
 *
 * | neutral | AI SDK |
 * |---|---|
 * | user | `{role:'user', content: string}` |
 * | assistant | `{role:'assistant', content: [reasoning?, text?, …tool-call {toolCallId, toolName, input}]}` |
 * | tool | `{role:'tool', content: [tool-result {toolCallId, toolName, output: {type:'text'|'error-text', value}}]}` |
 *
 * Thinking goes out only with `{ thinking: 'include' }`, as a reasoning part carrying the
 * Anthropic signature in `providerOptions` (what @ai-sdk/anthropic sends back). The types are
 * written here structurally so sluice does not depend on the `ai` package.
 */
import type { ExportOptions } from './shapes';
import type { HistoryMessage } from './types';

export type AiSdkPart =
  | { type: 'text'; text: string }
  | { type: 'reasoning'; text: string; providerOptions?: { anthropic: { signature: string } } }
  | { type: 'tool-call'; toolCallId: string; toolName: string; input: Record<string, unknown> };

export interface AiSdkToolResultPart {
  type: 'tool-result';
  toolCallId: string;
  toolName: string;
  output: { type: 'text' | 'error-text'; value: string };
}

export type AiSdkMessage =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: AiSdkPart[] }
  | { role: 'tool'; content: AiSdkToolResultPart[] };

export function toAiSdkMessages(history: readonly HistoryMessage[], opts: ExportOptions = {}): AiSdkMessage[] {
  return history.map((m): AiSdkMessage => {
    if (m.role === 'user') return { role: 'user', content: m.content };
    if (m.role === 'tool') {
      return {
        role: 'tool',
        content: m.results.map((r) => ({
          type: 'tool-result',
          toolCallId: r.callId,
          toolName: r.name,
          output: { type: r.ok ? 'text' : 'error-text', value: r.content },
        })),
      };
    }
    const parts: AiSdkPart[] = [];
    if (opts.thinking === 'include' && m.thinking) {
      parts.push(
        m.thinkingSignature
          ? { type: 'reasoning', text: m.thinking, providerOptions: { anthropic: { signature: m.thinkingSignature } } }
          : { type: 'reasoning', text: m.thinking },
      );
    }
    if (m.content) parts.push({ type: 'text', text: m.content });
    for (const c of m.calls) parts.push({ type: 'tool-call', toolCallId: c.id, toolName: c.name, input: c.input });
    return { role: 'assistant', content: parts };
  });
}
