/**
 * AI SDK adapter: the parts of `streamText(...).fullStream` (ai v5/v6) → canonical events, so every
 * AI SDK provider (Anthropic, OpenAI, Google, Bedrock, Mistral, Groq, xAI, Ollama, any
 * OpenAI-compatible server, …) gets early dispatch through sluice.
 *
 * The embedder passes tool schemas WITHOUT `execute` to `streamText` (so the AI SDK stops after one
 * step and runs nothing) and gives sluice the tools to run:
 *
 *   runTurn({ format: 'ai-sdk', stream: () => streamText({ model, messages, tools }).fullStream, tools })
 *
 * Parts and what they become:
 * - `start` → `message.start` (once).
 * - `text-delta` → `text.delta`; `reasoning-delta` → `thinking.delta`; a reasoning part whose
 *   provider metadata carries a signature (Anthropic: `providerMetadata.anthropic.signature`) →
 *   `thinking.signature`.
 * - `tool-input-start {id, toolName}` → `call.identity` (calls are numbered in order of first
 *   appearance); `tool-input-delta {id, delta}` → `call.fragment`; `tool-input-end {id}` →
 *   `call.complete` (completion evidence). When no delta came before the end (providers that send
 *   the whole input in the `tool-call` part), completion waits for that `tool-call`.
 * - `tool-call {toolCallId, toolName, input}` → completion evidence too; for a call that streamed no
 *   input it also carries the input (one fragment: the object as JSON, a string as it is). A
 *   `tool-call` for an id never seen opens the call (identity, input, complete) in one go.
 * - Calls the provider runs itself (`providerExecuted: true`, e.g. Anthropic server tools) and
 *   free-text custom tools (`inputEncoding: 'text'`) are not client calls: skipped with one
 *   warning per call.
 * - `finish {finishReason, rawFinishReason, totalUsage}` → `usage` then `finish`
 *   (tool-calls→tool_calls, content-filter→content_filter, length, stop, error/other→other).
 * - `error {error}` → `stream.error`: the type is the provider's own error type when the error
 *   carries one (`data.error.type`, `error.type`, `code`), else one derived from the HTTP status
 *   (429 rate_limit_error, 529 overloaded_error, 5xx api_error, …); retryable from the SDK's
 *   `isRetryable` when present. Messages are passed on, never logged here.
 * - `abort` → `stream.error {type: 'aborted', retryable: false}`.
 * - `tool-result`, `tool-error`, `tool-output-denied`, `tool-approval-request`: the AI SDK ran (or
 *   judged) a tool itself, which means tools were given WITH `execute`: one warning, ignored. A
 *   second `start-step` (a multi-step run) gets one warning; its calls are numbered on.
 * - `text-start/-end`, `reasoning-start`, `start-step`, `finish-step`, `source`, `file`, `raw`:
 *   nothing. Unknown part types: one warning per type.
 */
import { type FinishReason, isRetryableErrorType, type StreamErrorInfo, type Usage } from './events';
import { BaseAdapter, type EventSink, isObj, nonEmpty, num, type Obj, STATUS_ERROR_TYPES } from './common';

const FINISH_MAP: Record<string, FinishReason> = {
  stop: 'stop',
  'tool-calls': 'tool_calls',
  length: 'length',
  'content-filter': 'content_filter',
  error: 'other',
  other: 'other',
};

interface CallState {
  index: number;
  /** Skipped (provider-executed or free-text input): its parts are dropped. */
  skip: boolean;
  /** A non-empty delta or the tool-call's input was sent. */
  sentInput: boolean;
  /** `tool-input-end` came before any input: complete at the `tool-call`. */
  endedEmpty: boolean;
  complete: boolean;
}

/** AI SDK `LanguageModelUsage` (v5: cachedInputTokens; v6: inputTokenDetails) → Usage. */
export function aiSdkUsage(u: Obj): Usage | undefined {
  const usage: Usage = {};
  const input = num(u.inputTokens);
  if (input !== undefined) usage.promptTokens = input;
  const details = isObj(u.inputTokenDetails) ? u.inputTokenDetails : undefined;
  const cached = num(details?.cacheReadTokens) ?? num(u.cachedInputTokens);
  if (cached !== undefined && input !== undefined) usage.cachedTokens = cached;
  const output = num(u.outputTokens);
  if (output !== undefined) usage.outputTokens = output;
  return usage.promptTokens === undefined && usage.outputTokens === undefined ? undefined : usage;
}

/** An AI SDK error part's `error` (an APICallError, a provider error chunk, or anything) → type/message/retryable. */
export function aiSdkError(err: unknown): StreamErrorInfo & { retryable: boolean } {
  const e = isObj(err) ? err : err instanceof Error ? (err as unknown as Obj) : {};
  const data = isObj(e.data) ? e.data : undefined;
  const inner = isObj(data?.error) ? data.error : isObj(e.error) ? e.error : undefined;
  const status = num(e.statusCode) ?? num(e.status);
  const ownType = nonEmpty(inner?.type) ?? (e.type !== 'error' ? nonEmpty(e.type) : undefined) ?? nonEmpty(inner?.code) ?? nonEmpty(e.code);
  const type =
    ownType ??
    (status !== undefined ? (STATUS_ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : `http_${status}`)) : undefined) ??
    (err instanceof Error && err.name !== 'Error' ? err.name : 'api_error');
  const message =
    nonEmpty(e.message) ?? nonEmpty(inner?.message) ?? (typeof err === 'string' ? err : 'the AI SDK stream reported an error');
  const retryable = typeof e.isRetryable === 'boolean' ? e.isRetryable : isRetryableErrorType(type);
  return { type, message, retryable };
}

function signatureOf(p: Obj): string | undefined {
  const meta = isObj(p.providerMetadata) ? p.providerMetadata : undefined;
  if (meta === undefined) return undefined;
  for (const v of Object.values(meta)) {
    if (isObj(v)) {
      const s = nonEmpty(v.signature);
      if (s !== undefined) return s;
    }
  }
  return undefined;
}

export class AiSdkAdapter extends BaseAdapter {
  readonly format = 'ai-sdk' as const;
  private calls = new Map<string, CallState>();
  private nextIndex = 0;
  private started = false;
  private steps = 0;

  protected onPayload(p: Obj, out: EventSink): void {
    switch (p.type) {
      case 'text-delta': {
        const text = typeof p.text === 'string' ? p.text : typeof p.delta === 'string' ? p.delta : '';
        if (text.length > 0) out.push({ type: 'text.delta', text });
        return;
      }
      case 'tool-input-delta':
        this.inputDelta(p, out);
        return;
      case 'reasoning-delta': {
        const text = typeof p.text === 'string' ? p.text : typeof p.delta === 'string' ? p.delta : '';
        if (text.length > 0) out.push({ type: 'thinking.delta', text });
        this.signature(p, out);
        return;
      }
      case 'reasoning-end':
        this.signature(p, out);
        return;
      case 'tool-input-start':
        this.inputStart(p, out);
        return;
      case 'tool-input-end':
        this.inputEnd(p, out);
        return;
      case 'tool-call':
        this.toolCall(p, out);
        return;
      case 'start':
        this.start(out);
        return;
      case 'start-step':
        this.start(out);
        if (++this.steps === 2) {
          this.warnOnce(
            out,
            'ai_sdk_multi_step',
            'ai-sdk: the stream holds more than one step (tools given to streamText with execute?); calls are numbered on',
          );
        }
        return;
      case 'finish': {
        const usage = isObj(p.totalUsage) ? aiSdkUsage(p.totalUsage) : undefined;
        if (usage !== undefined) out.push({ type: 'usage', usage });
        const reason = typeof p.finishReason === 'string' ? p.finishReason : 'other';
        const raw = nonEmpty(p.rawFinishReason) ?? reason;
        this.terminal = true;
        out.push({ type: 'finish', reason: FINISH_MAP[reason] ?? 'other', raw });
        return;
      }
      case 'error': {
        const e = aiSdkError(p.error);
        this.failed = true;
        out.push({ type: 'stream.error', error: { type: e.type, message: e.message }, retryable: e.retryable });
        return;
      }
      case 'abort':
        this.failed = true;
        out.push({
          type: 'stream.error',
          error: { type: 'aborted', message: 'the AI SDK stream was aborted' },
          retryable: false,
        });
        return;
      case 'tool-result':
      case 'tool-error':
      case 'tool-output-denied':
      case 'tool-approval-request':
        this.warnOnce(
          out,
          'ai_sdk_tool_executed',
          `ai-sdk: a ${p.type} part means the AI SDK handled a tool itself; give streamText tools without execute and let sluice run them`,
        );
        return;
      case 'text-start':
      case 'text-end':
      case 'reasoning-start':
      case 'finish-step':
      case 'source':
      case 'file':
      case 'raw':
        return;
      default: {
        const t = typeof p.type === 'string' ? p.type : '(no type)';
        this.warnOnce(out, 'unknown_event', `ai-sdk: unknown part type ${JSON.stringify(t.slice(0, 64))} ignored`, `ev:${t}`);
      }
    }
  }

  private start(out: EventSink): void {
    if (this.started) return;
    this.started = true;
    out.push({ type: 'message.start' });
  }

  private signature(p: Obj, out: EventSink): void {
    const signature = signatureOf(p);
    if (signature !== undefined) out.push({ type: 'thinking.signature', signature });
  }

  /** Open a call for an AI SDK id (or return the skipped/known one). */
  private open(id: string, name: string | undefined, skip: string | undefined, out: EventSink): CallState {
    this.start(out);
    if (skip !== undefined) {
      const state: CallState = { index: -1, skip: true, sentInput: false, endedEmpty: false, complete: true };
      this.calls.set(id, state);
      out.push({ type: 'warning', code: 'server_block_skipped', message: `ai-sdk: call ${id} skipped (${skip})` });
      return state;
    }
    const state: CallState = { index: this.nextIndex++, skip: false, sentInput: false, endedEmpty: false, complete: false };
    this.calls.set(id, state);
    const ev: { type: 'call.identity'; index: number; id?: string; name?: string } = { type: 'call.identity', index: state.index };
    if (id.length > 0) ev.id = id;
    if (name !== undefined) ev.name = name;
    out.push(ev);
    return state;
  }

  private skipReason(p: Obj): string | undefined {
    if (p.providerExecuted === true) return 'executed by the provider';
    if (p.inputEncoding === 'text') return 'free-text custom tool input';
    return undefined;
  }

  private inputStart(p: Obj, out: EventSink): void {
    const id = typeof p.id === 'string' ? p.id : '';
    if (this.calls.has(id)) {
      this.warnOnce(out, 'duplicate_call', `ai-sdk: tool-input-start for call ${id} repeated`, `dup:${id}`);
      return;
    }
    this.open(id, nonEmpty(p.toolName), this.skipReason(p), out);
  }

  private inputDelta(p: Obj, out: EventSink): void {
    const id = typeof p.id === 'string' ? p.id : '';
    const c = this.calls.get(id);
    if (c === undefined) {
      this.warnOnce(out, 'unknown_call_delta', `ai-sdk: input delta for unknown call ${id} dropped`, `delta:${id}`);
      return;
    }
    if (c.skip) return;
    const text = typeof p.delta === 'string' ? p.delta : '';
    if (text.length === 0) return;
    if (c.complete) {
      this.warnOnce(out, 'fragment_after_complete', `ai-sdk: input delta after the end of call ${id} dropped`, `late:${id}`);
      return;
    }
    c.sentInput = true;
    out.push({ type: 'call.fragment', index: c.index, text });
  }

  private inputEnd(p: Obj, out: EventSink): void {
    const id = typeof p.id === 'string' ? p.id : '';
    const c = this.calls.get(id);
    if (c === undefined || c.skip || c.complete) return;
    if (!c.sentInput) {
      c.endedEmpty = true; // the input may still come whole in the tool-call part
      return;
    }
    c.complete = true;
    out.push({ type: 'call.complete', index: c.index });
  }

  private toolCall(p: Obj, out: EventSink): void {
    const id = typeof p.toolCallId === 'string' ? p.toolCallId : '';
    const c = this.calls.get(id) ?? this.open(id, nonEmpty(p.toolName), this.skipReason(p), out);
    if (c.skip || c.complete) return;
    if (!c.sentInput) {
      const text = typeof p.input === 'string' ? p.input : p.input === undefined ? '' : JSON.stringify(p.input);
      if (text.length > 0) {
        c.sentInput = true;
        out.push({ type: 'call.fragment', index: c.index, text });
      }
    }
    c.complete = true;
    out.push({ type: 'call.complete', index: c.index });
  }
}
