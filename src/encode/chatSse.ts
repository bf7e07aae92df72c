import type { OutputEvent } from '../release/output';
import type { StreamErrorInfo } from '../wire/events';
import { chatFinishReason, UsageCounter, openaiErrorBody, randomId } from './openaiCommon';
import { PiecewiseEncoder } from './pieces';

/**
 * OutputEvent sequence → OpenAI Chat Completions, as SSE (`ChatSseEncoder`) or one
 * `chat.completion` body (`toChatCompletion`). Rules:
 *
 * - Every chunk: `id` (`chatcmpl-` + random, never the backend's), `object: "chat.completion.chunk"`,
 *   `created`, `model` (the client's model name), `choices: [{index: 0, delta, finish_reason}]`.
 * - The first chunk carries `delta: {role: "assistant", content: ""}`.
 * - text → `delta.content`; thinking → `delta.reasoning_content` (what vLLM-style servers send).
 * - Each released call is ONE chunk: `delta.tool_calls: [{index, id, type: "function", function:
 *   {name, arguments}}]` with the call's whole argument JSON (`{}` for an empty call), sent when
 *   the engine releases it (at its completion, in model order). `index` counts released calls from
 *   0; `id` is a fresh `call_…` (never the backend's).
 * - `end` → a chunk with `delta: {}` and `finish_reason` (tool_calls when calls were released,
 *   stop, length, content_filter; see `chatFinishReason`), then with `includeUsage` a chunk with
 *   `choices: []` and `usage`, then `data: [DONE]`.
 * - `error` → one `data: {"error": {message, type, code}}` frame (the openai SDK raises it) and no
 *   `[DONE]`. Nothing is written after a terminal event.
 * - Keep-alive: an SSE comment (`: ping`), which SSE clients ignore.
 */

export interface ChatEncodeOptions {
  model?: string;
  inputTokens?: number;
  includeUsage?: boolean;
  toolUseOnStop?: boolean;
  /** Fixed `created` (seconds) for deterministic tests. */
  created?: number;
  /** Told each tool call id minted for the client (the gateway links the client's answers by it). */
  onCallId?: (id: string) => void;
}

export interface ChatToolCallOut {
  index: number;
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatChunkOut {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: { index: 0; delta: Record<string, unknown>; finish_reason: string | null; logprobs?: null }[];
  usage?: ChatUsageOut | null;
}

export interface ChatUsageOut {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens: number };
}

export interface ChatCompletionOut {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: {
    index: 0;
    message: { role: 'assistant'; content: string | null; reasoning_content?: string; tool_calls?: ChatToolCallOut[] };
    finish_reason: string;
    logprobs: null;
  }[];
  usage: ChatUsageOut;
}

/** OutputEvent → chunk objects (or an error body); shared by the SSE encoder and the body builder. */
export class ChatChunkBuilder {
  readonly id = randomId('chatcmpl-');
  readonly created: number;
  readonly model: string;
  readonly usage: UsageCounter;
  private calls = 0;
  private _terminated = false;
  private started = false;
  finishReason?: string;

  constructor(private readonly opts: ChatEncodeOptions = {}) {
    this.created = opts.created ?? Math.floor(Date.now() / 1000);
    this.model = opts.model ?? 'unknown';
    this.usage = new UsageCounter(opts.inputTokens ?? 0);
  }

  get terminated(): boolean {
    return this._terminated;
  }

  /** Started (the role chunk is out) and not terminated: a text chunk needs nothing else. */
  get streaming(): boolean {
    return this.started && !this._terminated;
  }

  chunk(delta: Record<string, unknown>, finish: string | null = null): ChatChunkOut {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [{ index: 0, delta, finish_reason: finish }] };
  }

  usageOut(): ChatUsageOut {
    const u: ChatUsageOut = {
      prompt_tokens: this.usage.input,
      completion_tokens: this.usage.outputTokens,
      total_tokens: this.usage.input + this.usage.outputTokens,
    };
    if (this.usage.cachedInput > 0) u.prompt_tokens_details = { cached_tokens: this.usage.cachedInput };
    return u;
  }

  /** The first chunk (role). */
  start(): ChatChunkOut[] {
    if (this.started) return [];
    this.started = true;
    return [this.chunk({ role: 'assistant', content: '' })];
  }

  /** Chunks for one event; an `error` comes back as `{error}` for the caller to frame. */
  push(ev: OutputEvent): (ChatChunkOut | { error: StreamErrorInfo })[] {
    if (this._terminated) return [];
    const out: (ChatChunkOut | { error: StreamErrorInfo })[] = [...this.start()];
    switch (ev.type) {
      case 'message.start':
      case 'usage':
        this.usage.update(ev.usage);
        break;
      case 'text':
        if (ev.text.length > 0) out.push(this.chunk({ content: ev.text }));
        break;
      case 'thinking':
        if (ev.text.length > 0) out.push(this.chunk({ reasoning_content: ev.text }));
        break;
      case 'thinking.signature':
        break;
      case 'tool_use':
        out.push(this.chunk({ tool_calls: [this.toolCall(ev.name, ev.argsText)] }));
        break;
      case 'end': {
        this.finishReason = chatFinishReason(ev.finish, ev.released, this.opts.toolUseOnStop ?? false);
        out.push(this.chunk({}, this.finishReason));
        if (this.opts.includeUsage) out.push({ ...this.chunk({}), choices: [], usage: this.usageOut() });
        this._terminated = true;
        break;
      }
      case 'error':
        out.push({ error: ev.error });
        this._terminated = true;
        break;
    }
    return out;
  }

  toolCall(name: string, argsText: string): ChatToolCallOut {
    const id = randomId('call_');
    this.opts.onCallId?.(id);
    return { index: this.calls++, id, type: 'function', function: { name, arguments: argsText.length > 0 ? argsText : '{}' } };
  }
}

/** OutputEvents → Chat Completions SSE text (a huge call's chunks piecewise: PiecewiseEncoder, pieces.ts). */
export class ChatSseEncoder extends PiecewiseEncoder {
  private readonly b: ChatChunkBuilder;
  /** `data: {"id":…,"choices":[{"index":0,"delta":` — the start every delta chunk of this stream shares. */
  private prefix?: string;
  constructor(opts: ChatEncodeOptions = {}) {
    super();
    this.b = new ChatChunkBuilder(opts);
  }
  start(): string {
    return frames(this.b.start());
  }
  push(ev: OutputEvent): string {
    const q = this.queueFor(ev);
    if (q !== undefined) {
      const was = this.b.terminated;
      for (const it of this.b.push(q.event(ev))) q.frame('data: ', 'error' in it ? openaiErrorBody(it.error.type || 'api_error', it.error.message) : it, '\n\n');
      if (!was && this.b.terminated && ev.type === 'end') q.text('data: [DONE]\n\n');
      return q.next();
    }
    // Fast path: a text or reasoning delta is one chunk, built as a string (the same bytes as
    // JSON.stringify of the chunk object, with one JSON.stringify of the text and no objects).
    if ((ev.type === 'text' || ev.type === 'thinking') && ev.text.length > 0 && this.b.streaming) {
      this.prefix ??= `data: {"id":${JSON.stringify(this.b.id)},"object":"chat.completion.chunk","created":${this.b.created},"model":${JSON.stringify(this.b.model)},"choices":[{"index":0,"delta":{`;
      return `${this.prefix}${ev.type === 'text' ? '"content":' : '"reasoning_content":'}${JSON.stringify(ev.text)}},"finish_reason":null}]}\n\n`;
    }
    const wasTerminated = this.b.terminated;
    const text = frames(this.b.push(ev));
    if (!wasTerminated && this.b.terminated && ev.type === 'end') return text + 'data: [DONE]\n\n';
    return text;
  }
  ping(): string {
    return this.b.terminated || this.pending ? '' : ': ping\n\n';
  }
  get terminated(): boolean {
    return this.b.terminated;
  }
}

function frames(items: (ChatChunkOut | { error: StreamErrorInfo })[]): string {
  let s = '';
  for (const it of items) {
    if ('error' in it) s += `data: ${JSON.stringify(openaiErrorBody(it.error.type || 'api_error', it.error.message))}\n\n`;
    else s += `data: ${JSON.stringify(it)}\n\n`;
  }
  return s;
}

/** The non-streaming body, or the error (type, message) when the sequence failed. */
export function toChatCompletion(events: Iterable<OutputEvent>, opts: ChatEncodeOptions = {}): ChatCompletionOut | { error: StreamErrorInfo } {
  const b = new ChatChunkBuilder({ ...opts, includeUsage: false });
  let text = '';
  let reasoning = '';
  const calls: ChatToolCallOut[] = [];
  for (const ev of events) {
    if (b.terminated) break;
    if (ev.type === 'error') return { error: ev.error };
    if (ev.type === 'text') text += ev.text;
    else if (ev.type === 'thinking') reasoning += ev.text;
    else if (ev.type === 'tool_use') {
      calls.push(b.toolCall(ev.name, ev.argsText));
      continue;
    }
    b.push(ev);
  }
  if (!b.terminated) b.push({ type: 'end', released: calls.length });
  const message: ChatCompletionOut['choices'][0]['message'] = { role: 'assistant', content: text.length > 0 || calls.length === 0 ? text : null };
  if (reasoning.length > 0) message.reasoning_content = reasoning;
  if (calls.length > 0) message.tool_calls = calls.map(({ id, type, function: f }) => ({ id, type, function: f }) as ChatToolCallOut);
  return {
    id: b.id,
    object: 'chat.completion',
    created: b.created,
    model: b.model,
    choices: [{ index: 0, message, finish_reason: b.finishReason ?? 'stop', logprobs: null }],
    usage: b.usageOut(),
  };
}
