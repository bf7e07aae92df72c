/**
 * `text:<family>` adapter: OpenAI-chat-shaped chunks (vLLM, SGLang, llama.cpp, Ollama, an
 * internal engine without a server-side tool parser) whose `choices[0].delta.content` carries the
 * raw model text, tool-call markup included.
 *
 * - `message.start {id, model}` on the first chunk that has an id or model.
 * - `delta.content` goes through the family parser (text, thinking, calls with completion
 *   evidence at each closing marker).
 * - `delta.reasoning_content` / `delta.reasoning`: some servers split reasoning out and also leave
 *   the raw `<think>…</think>` in `content` (the DeepSeek V4 recordings do). With the default
 *   `reasoningContent: 'auto'`, the field is thinking unless the content carries the family's own
 *   reasoning markup (seen so far, or possibly starting in the held-back text), in which case the
 *   field is a duplicate and is dropped. `'thinking'` always uses it, `'ignore'` never does.
 * - `delta.tool_calls` from a server that already parsed calls: ignored with one warning (use the
 *   openai-chat format for such servers).
 * - `finish_reason`: the parser is flushed first (held text, warnings for an unclosed call), then
 *   `finish`: stop → tool_calls when a call was seen, length stays length (truncation rules are the
 *   engine's, SPEC §5.7), tool_calls, content_filter; anything else → other.
 * - `usage` (prompt_tokens, prompt_tokens_details.cached_tokens, completion_tokens) → `usage`.
 * - `{error: {message, type|code}}` → `stream.error`.
 * - `end()` flushes the parser if no finish came and ends with exactly one `stream.end`; without a
 *   `finish_reason` (the backend's finish, SPEC §12) a `stream_truncated` error comes before it, and
 *   a unary completion (`choices[].message`) given as the stream is a `bad_stream` error.
 * Producers never throw: bad payloads give a `warning`.
 */
import { type Adapter, isRetryableErrorType, type StreamEvent, type WireFormat } from '../wire/events';
import { chatUsage, mapChatFinishReason } from '../wire/openaiChat';
import { truncatedError, unaryCompletion, unaryError } from '../wire/integrity';
import { createTextParser, resolveFamily } from './registry';
import type { FamilyParser, ParserOptions } from './types';

export interface TextAdapterOptions extends ParserOptions {
  reasoningContent?: 'auto' | 'thinking' | 'ignore';
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function errorType(type: unknown, code: unknown): string {
  if (typeof type === 'string' && type.length > 0) return type;
  const c =
    typeof code === 'number'
      ? code
      : typeof code === 'string' && /^\d{3}$/.test(code)
        ? Number(code)
        : undefined;
  if (c === 429) return 'rate_limit_error';
  if (c === 503 || c === 529) return 'overloaded_error';
  if (c === 504) return 'timeout_error';
  if (c !== undefined) return c >= 500 ? 'api_error' : 'invalid_request_error';
  return typeof code === 'string' && code.length > 0 ? code : 'api_error';
}

export class TextAdapter implements Adapter {
  readonly format: WireFormat;
  private readonly parser: FamilyParser;
  private readonly reasoningMode: 'auto' | 'thinking' | 'ignore';
  private started = false;
  private flushed = false;
  private ended = false;
  private callsSeen = false;
  private readonly warned = new Set<string>();
  /** The backend's finish_reason arrived / the stream reported an error / it is no stream of this format. */
  private terminal = false;
  private failed = false;
  private bad = false;
  private fresh = true;

  constructor(family: string, opts: TextAdapterOptions = {}) {
    this.parser = createTextParser(family, opts);
    this.format = `text:${resolveFamily(family) ?? family}`;
    this.reasoningMode = opts.reasoningContent ?? 'auto';
  }

  push(payload: unknown): StreamEvent[] {
    const out: StreamEvent[] = [];
    if (this.ended) {
      this.warnOnce(out, 'payload_after_end', 'payload pushed after end() ignored');
      return out;
    }
    if (payload === '[DONE]' || this.bad) return out;
    if (this.fresh && isObj(payload)) {
      this.fresh = false;
      const unary = unaryCompletion(payload);
      if (unary !== undefined) {
        this.bad = this.failed = true;
        out.push(unaryError(this.format, unary));
        return out;
      }
    }
    if (!isObj(payload)) {
      out.push({ type: 'warning', code: 'bad_payload', message: `${this.format}: expected a JSON object` });
      return out;
    }
    const p = payload;
    if (!this.started && (typeof p.id === 'string' || typeof p.model === 'string')) {
      this.started = true;
      const ev: StreamEvent & { type: 'message.start' } = { type: 'message.start' };
      if (typeof p.id === 'string' && p.id) ev.id = p.id;
      if (typeof p.model === 'string' && p.model) ev.model = p.model;
      out.push(ev);
    }
    if (isObj(p.error)) {
      const type = errorType(p.error.type, p.error.code);
      const message = typeof p.error.message === 'string' ? p.error.message : '';
      this.failed = true;
      out.push({ type: 'stream.error', error: { type, message }, retryable: isRetryableErrorType(type) });
    }
    let finish: string | undefined;
    if (Array.isArray(p.choices)) {
      for (const c of p.choices) {
        if (!isObj(c)) continue;
        if (c.index !== undefined && c.index !== 0) {
          this.warnOnce(out, 'extra_choice', 'only choice 0 is followed; other choices ignored');
          continue;
        }
        if (isObj(c.delta)) this.delta(c.delta, out);
        else if (typeof c.text === 'string') this.content(c.text, undefined, out); // completions API
        if (typeof c.finish_reason === 'string' && c.finish_reason.length > 0) finish = c.finish_reason;
      }
    }
    if (isObj(p.usage)) {
      const u = chatUsage(p.usage);
      if (u !== undefined) out.push({ type: 'usage', usage: u });
    }
    if (finish !== undefined) {
      this.terminal = true;
      this.flush(out);
      let reason = mapChatFinishReason(finish);
      if (reason === 'stop' && this.callsSeen) reason = 'tool_calls';
      out.push({ type: 'finish', reason, raw: finish });
    }
    return out;
  }

  end(): StreamEvent[] {
    const out: StreamEvent[] = [];
    if (this.ended) return out;
    if (!this.terminal && !this.failed) out.push(truncatedError(this.format, this.fresh ? 'no chunk arrived' : undefined));
    if (!this.bad) this.flush(out);
    this.ended = true;
    out.push({ type: 'stream.end' });
    return out;
  }

  private delta(d: Obj, out: StreamEvent[]): void {
    let r = d.reasoning_content;
    if (typeof r !== 'string') r = d.reasoning;
    const content = typeof d.content === 'string' ? d.content : undefined;
    this.content(content, typeof r === 'string' && r.length > 0 ? r : undefined, out);
    if (Array.isArray(d.tool_calls) && d.tool_calls.length > 0) {
      this.warnOnce(
        out,
        'structured_tool_calls',
        'delta.tool_calls ignored: this format parses calls from the text',
      );
    }
  }

  private content(content: string | undefined, reasoning: string | undefined, out: StreamEvent[]): void {
    if (this.flushed) {
      if ((content && content.length > 0) || reasoning) {
        this.warnOnce(out, 'content_after_finish', 'content after finish_reason ignored');
      }
      return;
    }
    const evs = content && content.length > 0 ? this.parser.push(content) : [];
    if (reasoning !== undefined) {
      const use =
        this.reasoningMode === 'thinking' || (this.reasoningMode === 'auto' && !this.parser.reasoningInText);
      if (use) out.push({ type: 'thinking.delta', text: reasoning });
    }
    this.take(evs, out);
  }

  private flush(out: StreamEvent[]): void {
    if (this.flushed) return;
    this.flushed = true;
    this.take(this.parser.end(), out);
  }

  private take(evs: StreamEvent[], out: StreamEvent[]): void {
    for (const e of evs) {
      if (e.type === 'call.identity' || e.type === 'call.fragment') this.callsSeen = true;
      out.push(e);
    }
  }

  private warnOnce(out: StreamEvent[], code: string, message: string): void {
    if (this.warned.has(code)) return;
    this.warned.add(code);
    out.push({ type: 'warning', code, message: `${this.format}: ${message}` });
  }
}

export function createTextAdapter(family: string, opts: TextAdapterOptions = {}): TextAdapter {
  return new TextAdapter(family, opts);
}
