/**
 * Converters between the provider-neutral history (src/history/types.ts) and the four provider
 * history shapes, both directions:
 *
 * | shape | assistant calls | results |
 * |---|---|---|
 * | Anthropic Messages | `tool_use` blocks `{id, name, input}` | a user message of `tool_result` blocks `{tool_use_id, content, is_error?}` |
 * | OpenAI Chat | `tool_calls[] {id, type:'function', function:{name, arguments: JSON string}}` | one `{role:'tool', tool_call_id, content}` message per result |
 * | OpenAI Responses input | `{type:'function_call', call_id, name, arguments}` items | `{type:'function_call_output', call_id, output}` items |
 * | Gemini contents | `model` parts `{functionCall:{id?, name, args}}` | `user` parts `{functionResponse:{id?, name, response:{output}|{error}}}` |
 *
 * What does not survive a trip through a provider shape (documented, deliberate):
 * - `synthetic` (sluice-only) is lost everywhere; `ok: false` is kept by Anthropic (`is_error`)
 *   and Gemini (`response.error`) but not by OpenAI Chat/Responses, which have no error flag.
 * - `thinking` is exported only with `{ thinking: 'include' }`: Anthropic thinking blocks carry
 *   `thinkingSignature` (empty when the provider sent none), Responses
 *   reasoning items need ids/encrypted content (never exported), OpenAI Chat uses the
 *   `reasoning_content` convention of compatible servers. Imports read thinking where present.
 * - System/developer messages, images, documents and server-side tool items are skipped on
 *   import (with a warning). Several text parts are joined ('' for assistant text, '\n' for user
 *   and result text). Text interleaved with calls is moved before the calls.
 * - Gemini calls without an id get a minted id (`gemini_<name>_<message>_<part>`); results without
 *   an id are matched to the first unanswered call of the same name in the preceding model turn.
 * - Unparseable or non-object OpenAI `arguments` import as `{}` with a warning.
 *
 * Imports never throw on malformed input: bad items are skipped and reported through `onWarning`.
 */
import { addThinking, blockText, Builder, isObj, str } from './builder';
import type { HistoryMessage, ToolCallRecord, ToolResultRecord } from './types';

export type ProviderFormat = 'anthropic' | 'openai-chat' | 'openai-responses' | 'gemini';
export type HistoryFormat = 'neutral' | ProviderFormat;

export interface ImportOptions {
  /** Called for each skipped or altered item (ids, names, positions only — no contents). */
  onWarning?: (message: string) => void;
}

export interface ExportOptions {
  /** Export `thinking` (see the module comment for what that means per provider). Default 'omit'. */
  thinking?: 'omit' | 'include';
}

// ---------------------------------------------------------------------------------------------
// Anthropic Messages

export type AnthropicBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; tool_use_id: string; content: string; is_error?: boolean };

export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: string | AnthropicBlock[];
}

export function toAnthropicMessages(history: readonly HistoryMessage[], opts: ExportOptions = {}): AnthropicMessage[] {
  return history.map((m): AnthropicMessage => {
    if (m.role === 'user') return { role: 'user', content: m.content };
    if (m.role === 'tool') {
      return {
        role: 'user',
        content: m.results.map((r) => {
          const block: AnthropicBlock = { type: 'tool_result', tool_use_id: r.callId, content: r.content };
          if (!r.ok) block.is_error = true;
          return block;
        }),
      };
    }
    const blocks: AnthropicBlock[] = [];
    if (opts.thinking === 'include' && m.thinking)
      blocks.push({ type: 'thinking', thinking: m.thinking, signature: m.thinkingSignature ?? '' });
    if (m.content) blocks.push({ type: 'text', text: m.content });
    for (const c of m.calls) blocks.push({ type: 'tool_use', id: c.id, name: c.name, input: c.input });
    return { role: 'assistant', content: blocks };
  });
}

export function fromAnthropicMessages(messages: readonly unknown[], opts: ImportOptions = {}): HistoryMessage[] {
  const warn = opts.onWarning ?? (() => undefined);
  const b = new Builder(warn);
  messages.forEach((msg, i) => {
    if (!isObj(msg) || (msg.role !== 'user' && msg.role !== 'assistant')) {
      warn(`message ${i}: not a user/assistant message; skipped`);
      return;
    }
    const blocks: unknown[] = typeof msg.content === 'string' ? [{ type: 'text', text: msg.content }] : Array.isArray(msg.content) ? msg.content : [];
    if (msg.role === 'assistant') {
      const a = b.assistant(false);
      for (const [k, block] of blocks.entries()) {
        if (!isObj(block)) continue;
        if (block.type === 'text') a.content += str(block.text);
        else if (block.type === 'thinking') {
          addThinking(a, str(block.thinking));
          if (typeof block.signature === 'string' && block.signature) a.thinkingSignature = block.signature;
        }
        else if (block.type === 'tool_use') {
          a.calls.push({ id: str(block.id), name: str(block.name), input: b.parseArgs(block.input, `message ${i} block ${k}`) });
        } else if (block.type !== 'redacted_thinking') warn(`message ${i} block ${k}: ${String(block.type)} skipped`);
      }
      return;
    }
    const texts: string[] = [];
    for (const [k, block] of blocks.entries()) {
      if (!isObj(block)) continue;
      if (block.type === 'tool_result') {
        b.result({ callId: str(block.tool_use_id), ok: block.is_error !== true, content: blockText(block.content) });
      } else if (block.type === 'text') texts.push(str(block.text));
      else warn(`message ${i} block ${k}: ${String(block.type)} skipped`);
    }
    if (texts.length) b.user(texts.join('\n'));
  });
  return b.out;
}

// ---------------------------------------------------------------------------------------------
// OpenAI Chat Completions

export type OpenAIChatMessage =
  | { role: 'system' | 'developer'; content: string }
  | { role: 'user'; content: string }
  | {
      role: 'assistant';
      content: string | null;
      reasoning_content?: string;
      tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
    }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface OpenAIChatExportOptions extends ExportOptions {
  /**
   * The system prompt, sent as the first message (neutral history keeps no system prompt: it is
   * request configuration, as Anthropic's top-level `system` and Gemini's `systemInstruction`).
   */
  system?: string;
  /** Role of that first message: 'system' (default) or 'developer' (OpenAI reasoning models). */
  systemRole?: 'system' | 'developer';
}

export function toOpenAIChatMessages(history: readonly HistoryMessage[], opts: OpenAIChatExportOptions = {}): OpenAIChatMessage[] {
  const out: OpenAIChatMessage[] = [];
  if (opts.system !== undefined) out.push({ role: opts.systemRole ?? 'system', content: opts.system });
  for (const m of history) {
    if (m.role === 'user') out.push({ role: 'user', content: m.content });
    else if (m.role === 'tool') for (const r of m.results) out.push({ role: 'tool', tool_call_id: r.callId, content: r.content });
    else {
      const a: Extract<OpenAIChatMessage, { role: 'assistant' }> = { role: 'assistant', content: m.content || null };
      if (opts.thinking === 'include' && m.thinking) a.reasoning_content = m.thinking;
      if (m.calls.length) {
        a.tool_calls = m.calls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: JSON.stringify(c.input) } }));
      }
      out.push(a);
    }
  }
  return out;
}

export function fromOpenAIChatMessages(messages: readonly unknown[], opts: ImportOptions = {}): HistoryMessage[] {
  const warn = opts.onWarning ?? (() => undefined);
  const b = new Builder(warn);
  messages.forEach((msg, i) => {
    if (!isObj(msg)) {
      warn(`message ${i}: not an object; skipped`);
      return;
    }
    switch (msg.role) {
      case 'system':
      case 'developer':
        return;
      case 'user':
        b.user(blockText(msg.content));
        return;
      case 'assistant': {
        const a = b.assistant(false);
        a.content = msg.content === null || msg.content === undefined ? '' : blockText(msg.content);
        addThinking(a, str(msg.reasoning_content));
        const calls = Array.isArray(msg.tool_calls) ? msg.tool_calls : [];
        for (const [k, tc] of calls.entries()) {
          if (!isObj(tc) || !isObj(tc.function)) {
            warn(`message ${i} tool_calls[${k}]: malformed; skipped`);
            continue;
          }
          a.calls.push({ id: str(tc.id), name: str(tc.function.name), input: b.parseArgs(tc.function.arguments, `message ${i} tool_calls[${k}]`) });
        }
        return;
      }
      case 'tool':
        b.result({ callId: str(msg.tool_call_id), ok: true, content: blockText(msg.content) });
        return;
      default:
        warn(`message ${i}: role ${String(msg.role)} skipped`);
    }
  });
  return b.out;
}

// ---------------------------------------------------------------------------------------------
// OpenAI Responses input items

export type OpenAIResponsesItem =
  | { type: 'message'; role: 'user' | 'assistant'; content: string }
  | { type: 'function_call'; call_id: string; name: string; arguments: string }
  | { type: 'function_call_output'; call_id: string; output: string };

export function toOpenAIResponsesInput(history: readonly HistoryMessage[]): OpenAIResponsesItem[] {
  const out: OpenAIResponsesItem[] = [];
  for (const m of history) {
    if (m.role === 'user') out.push({ type: 'message', role: 'user', content: m.content });
    else if (m.role === 'tool') for (const r of m.results) out.push({ type: 'function_call_output', call_id: r.callId, output: r.content });
    else {
      if (m.content || m.calls.length === 0) out.push({ type: 'message', role: 'assistant', content: m.content });
      for (const c of m.calls) out.push({ type: 'function_call', call_id: c.id, name: c.name, arguments: JSON.stringify(c.input) });
    }
  }
  return out;
}

export function fromOpenAIResponsesInput(items: readonly unknown[], opts: ImportOptions = {}): HistoryMessage[] {
  const warn = opts.onWarning ?? (() => undefined);
  const b = new Builder(warn);
  items.forEach((item, i) => {
    if (!isObj(item)) {
      warn(`item ${i}: not an object; skipped`);
      return;
    }
    const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
    switch (type) {
      case 'message':
        if (item.role === 'assistant') {
          const a = b.assistant(true);
          a.content += blockText(item.content);
        } else if (item.role === 'user') b.user(blockText(item.content));
        else if (item.role !== 'system' && item.role !== 'developer') warn(`item ${i}: role ${String(item.role)} skipped`);
        return;
      case 'reasoning': {
        const a = b.assistant(true);
        const parts = [...(Array.isArray(item.summary) ? item.summary : []), ...(Array.isArray(item.content) ? item.content : [])];
        addThinking(a, parts.map((p) => (isObj(p) ? str(p.text) : '')).join(''));
        return;
      }
      case 'function_call': {
        const a = b.assistant(true);
        a.calls.push({ id: str(item.call_id), name: str(item.name), input: b.parseArgs(item.arguments, `item ${i}`) });
        return;
      }
      case 'function_call_output':
        b.result({ callId: str(item.call_id), ok: true, content: blockText(item.output) });
        return;
      default:
        warn(`item ${i}: ${String(type)} skipped`);
    }
  });
  return b.out;
}

// ---------------------------------------------------------------------------------------------
// Gemini contents

export type GeminiPart =
  | { text: string; thought?: boolean }
  | { functionCall: { id?: string; name: string; args: Record<string, unknown> } }
  | { functionResponse: { id?: string; name: string; response: { output: string } | { error: string } } };

export interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

export function toGeminiContents(history: readonly HistoryMessage[], opts: ExportOptions & { ids?: boolean } = {}): GeminiContent[] {
  const ids = opts.ids !== false;
  return history.map((m): GeminiContent => {
    if (m.role === 'user') return { role: 'user', parts: [{ text: m.content }] };
    if (m.role === 'tool') {
      return {
        role: 'user',
        parts: m.results.map((r) => ({
          functionResponse: {
            ...(ids ? { id: r.callId } : {}),
            name: r.name,
            response: r.ok ? { output: r.content } : { error: r.content },
          },
        })),
      };
    }
    const parts: GeminiPart[] = [];
    if (opts.thinking === 'include' && m.thinking) parts.push({ text: m.thinking, thought: true });
    if (m.content) parts.push({ text: m.content });
    for (const c of m.calls) parts.push({ functionCall: { ...(ids ? { id: c.id } : {}), name: c.name, args: c.input } });
    if (parts.length === 0) parts.push({ text: '' });
    return { role: 'model', parts };
  });
}

export function fromGeminiContents(contents: readonly unknown[], opts: ImportOptions = {}): HistoryMessage[] {
  const warn = opts.onWarning ?? (() => undefined);
  const b = new Builder(warn);
  contents.forEach((content, i) => {
    if (!isObj(content) || !Array.isArray(content.parts)) {
      warn(`content ${i}: no parts; skipped`);
      return;
    }
    const parts = content.parts as unknown[];
    if (content.role === 'model') {
      const a = b.assistant(false);
      for (const [k, part] of parts.entries()) {
        if (!isObj(part)) continue;
        if (isObj(part.functionCall)) {
          const fc = part.functionCall;
          const name = str(fc.name);
          const id = str(fc.id) || `gemini_${name}_${i}_${k}`;
          a.calls.push({ id, name, input: b.parseArgs(fc.args ?? {}, `content ${i} part ${k}`) });
        } else if (typeof part.text === 'string') {
          if (part.thought === true) addThinking(a, part.text);
          else a.content += part.text;
        }
      }
      return;
    }
    if (content.role !== 'user' && content.role !== 'function' && content.role !== undefined) {
      warn(`content ${i}: role ${String(content.role)} skipped`);
      return;
    }
    const answered = new Set<string>();
    const texts: string[] = [];
    for (const [k, part] of parts.entries()) {
      if (!isObj(part)) continue;
      if (isObj(part.functionResponse)) {
        const fr = part.functionResponse;
        const name = str(fr.name);
        let id = str(fr.id);
        if (!id) {
          id = matchByName(b, name, answered) ?? `gemini_orphan_${i}_${k}`;
          if (id.startsWith('gemini_orphan_')) warn(`content ${i} part ${k}: response for ${name} matches no call`);
        }
        answered.add(id);
        const response = fr.response;
        let ok = true;
        let text: string;
        if (isObj(response) && 'error' in response) {
          ok = false;
          text = valueText(response.error);
        } else if (isObj(response) && 'output' in response) text = valueText(response.output);
        else text = valueText(response);
        b.result({ callId: id, name, ok, content: text });
      } else if (typeof part.text === 'string') texts.push(part.text);
      else warn(`content ${i} part ${k}: skipped`);
    }
    if (texts.length) b.user(texts.join('\n'));
  });
  return b.out;
}

function matchByName(b: Builder, name: string, answered: Set<string>): string | undefined {
  for (let i = b.out.length - 1; i >= 0; i--) {
    const m = b.out[i];
    if (m.role === 'assistant') return m.calls.find((c) => c.name === name && !answered.has(c.id))?.id;
  }
  return undefined;
}

function valueText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === undefined) return '';
  return JSON.stringify(v);
}

// ---------------------------------------------------------------------------------------------
// Dispatch by format

export function fromProviderHistory(format: HistoryFormat, messages: readonly unknown[], opts: ImportOptions = {}): HistoryMessage[] {
  switch (format) {
    case 'neutral':
      return messages as HistoryMessage[];
    case 'anthropic':
      return fromAnthropicMessages(messages, opts);
    case 'openai-chat':
      return fromOpenAIChatMessages(messages, opts);
    case 'openai-responses':
      return fromOpenAIResponsesInput(messages, opts);
    case 'gemini':
      return fromGeminiContents(messages, opts);
  }
}

export function toProviderHistory(format: HistoryFormat, history: readonly HistoryMessage[], opts: ExportOptions = {}): unknown[] {
  switch (format) {
    case 'neutral':
      return history.slice();
    case 'anthropic':
      return toAnthropicMessages(history, opts);
    case 'openai-chat':
      return toOpenAIChatMessages(history, opts as OpenAIChatExportOptions);
    case 'openai-responses':
      return toOpenAIResponsesInput(history);
    case 'gemini':
      return toGeminiContents(history, opts);
  }
}

/** Re-exported for callers that build calls by hand. */
export type { ToolCallRecord, ToolResultRecord };
