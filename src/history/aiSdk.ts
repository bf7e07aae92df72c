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
 *
 * `fromAiSdkMessages` is the inverse: any `ModelMessage[]` (e.g. `(await result.response).messages`
 * or a saved conversation) → neutral history. It reads every tool-result output kind
 * (`text`, `json`, `error-text`, `error-json`, `content`, `execution-denied`; error kinds and
 * denials import as `ok: false`), string or part-array content, and reasoning signatures.
 * System messages are skipped; images/files, provider-executed calls and their results, and
 * approval parts are skipped with a warning (position and type only).
 */
import { addThinking, blockText, Builder, isObj, str } from './builder';
import type { ExportOptions, ImportOptions } from './shapes';
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

/** An AI SDK `ModelMessage[]` → neutral history. Never throws: bad items are skipped and reported. */
export function fromAiSdkMessages(messages: readonly unknown[], opts: ImportOptions = {}): HistoryMessage[] {
  const warn = opts.onWarning ?? (() => undefined);
  const b = new Builder(warn);
  /** Calls the provider ran itself (their results are not the client's to answer). */
  const providerRan = new Set<string>();
  messages.forEach((msg, i) => {
    if (!isObj(msg)) {
      warn(`message ${i}: not an object; skipped`);
      return;
    }
    const parts: unknown[] = typeof msg.content === 'string' ? [{ type: 'text', text: msg.content }] : Array.isArray(msg.content) ? msg.content : [];
    switch (msg.role) {
      case 'system':
        return;
      case 'user': {
        const texts: string[] = [];
        for (const [k, p] of parts.entries()) {
          if (isObj(p) && p.type === 'text') texts.push(str(p.text));
          else warn(`message ${i} part ${k}: ${isObj(p) ? String(p.type) : typeof p} skipped`);
        }
        b.user(texts.join('\n'));
        return;
      }
      case 'assistant': {
        const a = b.assistant(false);
        for (const [k, p] of parts.entries()) {
          if (!isObj(p)) continue;
          if (p.type === 'text') a.content += str(p.text);
          else if (p.type === 'reasoning') {
            addThinking(a, str(p.text));
            const sig = isObj(p.providerOptions) && isObj(p.providerOptions.anthropic) ? p.providerOptions.anthropic.signature : undefined;
            if (typeof sig === 'string' && sig) a.thinkingSignature = sig;
          } else if (p.type === 'tool-call' && p.providerExecuted !== true) {
            a.calls.push({ id: str(p.toolCallId), name: str(p.toolName), input: b.parseArgs(p.input ?? p.args, `message ${i} part ${k}`) });
          } else {
            if (p.type === 'tool-call') providerRan.add(str(p.toolCallId));
            warn(`message ${i} part ${k}: ${String(p.type)}${p.providerExecuted === true ? ' (provider-executed)' : ''} skipped`);
          }
        }
        return;
      }
      case 'tool':
        for (const [k, p] of parts.entries()) {
          if (isObj(p) && p.type === 'tool-result' && !providerRan.has(str(p.toolCallId))) {
            b.result({ callId: str(p.toolCallId), name: str(p.toolName), ...resultOf(p.output ?? p.result) });
          } else warn(`message ${i} part ${k}: ${isObj(p) ? String(p.type) : typeof p} skipped`);
        }
        return;
      default:
        warn(`message ${i}: role ${String(msg.role)} skipped`);
    }
  });
  return b.out;
}

/** A tool-result `output` (ai v5/v6 `ToolResultOutput`; a bare v4 `result` value) → ok + text. */
function resultOf(output: unknown): { ok: boolean; content: string } {
  if (!isObj(output) || typeof output.type !== 'string') return { ok: true, content: typeof output === 'string' ? output : JSON.stringify(output) ?? '' };
  const text = (v: unknown): string => (typeof v === 'string' ? v : (JSON.stringify(v) ?? ''));
  switch (output.type) {
    case 'text':
    case 'json':
      return { ok: true, content: text(output.value) };
    case 'error-text':
    case 'error-json':
      return { ok: false, content: text(output.value) };
    case 'content':
      return { ok: true, content: blockText(output.value) };
    case 'execution-denied':
      return { ok: false, content: str(output.reason) || 'Tool execution denied.' };
    default:
      return { ok: true, content: text(output) };
  }
}
