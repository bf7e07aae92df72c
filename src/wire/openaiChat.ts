/**
 * OpenAI Chat Completions streaming adapter (and every "OpenAI-compatible" server).
 *
 * The provider sends `chat.completion.chunk` objects:
 *   {id, model, choices:[{index, delta:{role?, content?, reasoning_content?|reasoning?,
 *    tool_calls?:[{index, id?, type?, function:{name?, arguments?}}], function_call?}, finish_reason?}],
 *    usage?, x_groq?:{usage?}}
 * then optionally `[DONE]`. A call is keyed by `tool_calls[].index`; `id`/`name` usually come only in
 * its first delta and `arguments` are string pieces to concatenate.
 *
 * Emitted:
 * - `message.start {id, model}` once, on the first chunk that carries an id or model.
 * - `delta.reasoning_content` / `delta.reasoning` (string) → `thinking.delta`; `delta.content` →
 *   `text.delta` (empty strings dropped).
 * - `tool_calls[i]` → `call.identity {index}` when the chunk brings an id or name not sent before for
 *   that index (empty-string id/name are "not known" and never forwarded, so a continuation with
 *   `"id":""` or `"name":""` cannot erase a known identity); `call.fragment` for non-empty
 *   `arguments` (an arguments *object*, sent by a few servers, is stringified once). A whole call in
 *   one chunk gives identity then one fragment. Interleaved indices are fine: state is per index.
 *   A tool_call without `index` continues the last call, or starts a new one when it brings an id
 *   not seen before (warning `missing_tool_index` once). An index that is present but not a
 *   non-negative integer (-1, 0.5, "0", null, true) is refused: warning `invalid_index`, the delta
 *   is dropped (`wireIndex`, common.ts).
 *   Legacy `delta.function_call` is call 0.
 * - **No `call.complete`**: chat has no completion evidence on the wire; the engine infers it.
 * - `usage` from `chunk.usage` (on a usage-only chunk with `choices: []` or on the finish chunk), or
 *   from `x_groq.usage` when `usage` is absent: promptTokens = prompt_tokens, cachedTokens =
 *   prompt_tokens_details.cached_tokens, outputTokens = completion_tokens. Sent before `finish` when
 *   both are in one chunk.
 * - `finish_reason` → `finish`: stop→stop, length→length, tool_calls→tool_calls,
 *   function_call→tool_calls (legacy), content_filter→content_filter, anything else→other.
 * - A chunk `{error:{message, type|code}}` (mid-stream error some servers send) → `stream.error`.
 * - Only choice 0 is followed (n > 1 is not a tool-calling setup): other choices → one warning.
 * - `[DONE]` is optional and carries nothing; `end()` sends `stream.end`.
 */
import { type FinishReason, isRetryableErrorType, type StreamEvent, type Usage } from './events';
import { BaseAdapter, type EventSink, isObj, nonEmpty, num, type Obj, REFUSED_INDEX, wireIndex } from './common';
import { fromTemplate, skim, type Template, templateOf } from './skim';
import { ANY, type PathKey, pathIs, PIECE_DROP, PIECE_HOLD, PIECE_KEEP, PIECE_TEXT, PIECE_THINKING, type PieceRoute, STRING_IN_PLACE, STRING_SPLIT } from './pieces';

const FINISH_MAP: Record<string, FinishReason> = {
  stop: 'stop',
  eos: 'stop',
  end_turn: 'stop',
  length: 'length',
  max_tokens: 'length',
  tool_calls: 'tool_calls',
  function_call: 'tool_calls',
  content_filter: 'content_filter',
};

export function mapChatFinishReason(raw: string): FinishReason {
  return FINISH_MAP[raw] ?? 'other';
}

export function chatUsage(u: Obj): Usage | undefined {
  const usage: Usage = {};
  const prompt = num(u.prompt_tokens);
  if (prompt !== undefined) usage.promptTokens = prompt;
  const details = u.prompt_tokens_details;
  if (isObj(details)) {
    const cached = num(details.cached_tokens);
    if (cached !== undefined) usage.cachedTokens = cached;
  }
  const out = num(u.completion_tokens);
  if (out !== undefined) usage.outputTokens = out;
  return usage.promptTokens === undefined && usage.outputTokens === undefined ? undefined : usage;
}

/** Map an error type/code/HTTP status to a provider error type that `isRetryableErrorType` understands. */
export function errorTypeFrom(type: unknown, code: unknown): string {
  const t = nonEmpty(type);
  const c =
    typeof code === 'number'
      ? code
      : typeof code === 'string' && /^\d{3}$/.test(code)
        ? Number(code)
        : undefined;
  if (c !== undefined) {
    if (c === 429) return t !== undefined && /quota/i.test(t) ? t : 'rate_limit_error';
    if (c === 503 || c === 529) return 'overloaded_error';
    if (c === 504) return 'timeout_error';
    if (t === undefined) return c >= 500 ? 'api_error' : 'invalid_request_error';
  }
  return t ?? nonEmpty(code) ?? 'api_error';
}

interface CallState {
  id?: string;
  name?: string;
}

export class OpenAIChatAdapter extends BaseAdapter {
  readonly format: 'openai-chat' | 'dynamo' = 'openai-chat';
  private started = false;
  /** Per call index: identity already sent. */
  private calls: (CallState | undefined)[] = [];
  private lastIndex = -1;
  private idToIndex: Map<string, number> | undefined;
  /** The last fast-path payload with one delta string (skim.ts Template); `thinking`: that string is reasoning. */
  private tpl: (Template & { thinking: boolean }) | undefined;
  /** A huge chunk being read in pieces (src/wire/pieces.ts) opened a call's arguments. */
  private pieceCall = false;

  protected onPayload(p: Obj, out: EventSink): void {
    this.start(p, out);
    const choices = p.choices;
    let finish: string | undefined;
    if (Array.isArray(choices)) {
      for (let i = 0; i < choices.length; i++) {
        const c = choices[i];
        if (!isObj(c)) continue;
        if (c.index !== undefined && c.index !== 0) {
          this.warnOnce(out, 'extra_choice', 'openai-chat: only choice 0 is followed; other choices ignored');
          continue;
        }
        const d = c.delta;
        if (isObj(d)) this.delta(d, out);
        this.choiceExtras(c, out);
        const fr = c.finish_reason;
        if (typeof fr === 'string' && fr.length > 0) finish = fr;
      }
    } else if (isObj(p.error)) {
      const e = p.error;
      const type = errorTypeFrom(e.type, e.code);
      const message = typeof e.message === 'string' ? e.message : '';
      this.failed = true;
      out.push({ type: 'stream.error', error: { type, message }, retryable: isRetryableErrorType(type) });
    }
    this.chunkExtras(p, out);
    let usage: Usage | undefined;
    if (isObj(p.usage)) usage = chatUsage(p.usage);
    else if (isObj(p.x_groq) && isObj(p.x_groq.usage)) usage = chatUsage(p.x_groq.usage);
    if (usage !== undefined) out.push({ type: 'usage', usage });
    if (finish !== undefined) {
      this.terminal = true;
      out.push({ type: 'finish', reason: mapChatFinishReason(finish), raw: finish });
    }
  }

  /**
   * Fast path (skim.ts), after the first chunk: one choice 0 whose delta carries only text and/or
   * reasoning (strings or null; `tool_calls`/`function_call` null or absent), `finish_reason` null
   * or absent, `usage` null or absent. Other fields are validated and skipped. Not for dialects
   * (Dynamo reads more fields); everything else is parsed.
   */
  protected override onRaw(data: string, out: EventSink): boolean {
    if (!this.started || this.format !== 'openai-chat') return false;
    const tpl = this.tpl;
    if (tpl !== undefined) {
      const t = fromTemplate(tpl, data);
      if (t !== undefined) {
        if (t.length > 0) out.push(tpl.thinking ? { type: 'thinking.delta', text: t } : { type: 'text.delta', text: t });
        return true;
      }
    }
    const k = skim.reset(data);
    let at = -1; // where the string the events come from starts (content, or the reasoning that counts)
    let end = -1;
    let contentAt = -1;
    let contentEnd = -1;
    let rcAt = -1;
    let rcEnd = -1;
    let rsAt = -1;
    let rsEnd = -1;
    if (!k.open()) return false;
    let choices = 0;
    let deltas = 0;
    let content: string | undefined;
    let rc: string | undefined; // reasoning_content
    let rs: string | undefined; // reasoning
    for (;;) {
      if (!k.key()) return false;
      if (k.is('choices')) {
        if (choices++ > 0 || !k.eat(91) || !k.open()) return false;
        for (;;) {
          if (!k.key()) return false;
          if (k.is('index')) {
            if (k.index() !== 0) return false;
          } else if (k.is('delta')) {
            if (deltas++ > 0 || !k.open()) return false;
            for (;;) {
              if (!k.key()) return false;
              if (k.is('content')) {
                if (k.nul()) content = undefined;
                else if (k.str()) {
                  content = k.value();
                  contentAt = k.vs;
                  contentEnd = k.ve;
                }
                else return false;
              } else if (k.is('reasoning_content')) {
                if (k.nul()) rc = undefined;
                else if (k.str()) {
                  rc = k.value();
                  rcAt = k.vs;
                  rcEnd = k.ve;
                }
                else return false;
              } else if (k.is('reasoning')) {
                if (k.nul()) rs = undefined;
                else if (k.str()) {
                  rs = k.value();
                  rsAt = k.vs;
                  rsEnd = k.ve;
                }
                else return false;
              } else if (k.is('tool_calls') || k.is('function_call')) {
                if (!k.nul()) return false;
              } else if (!k.skip(3)) return false;
              if (!k.next()) break;
            }
            if (k.bad) return false;
          } else if (k.is('finish_reason')) {
            if (!k.nul()) return false;
          } else if (!k.skip(2)) return false;
          if (!k.next()) break;
        }
        if (k.bad || !k.eat(93)) return false;
      } else if (k.is('usage')) {
        if (!k.nul()) return false;
      } else if (k.is('error') || k.is('x_groq')) {
        return false;
      } else if (!k.skip(1)) return false;
      if (!k.next()) break;
    }
    if (k.bad || !k.atEnd() || deltas === 0) return false;
    const r = rc ?? rs;
    if (r !== undefined && r.length > 0) out.push({ type: 'thinking.delta', text: r });
    if (content !== undefined && content.length > 0) out.push({ type: 'text.delta', text: content });
    // One string carries the events: the next payload of the same shape is read from a template.
    if (content !== undefined && r === undefined) {
      at = contentAt;
      end = contentEnd;
    } else if (content === undefined && rc !== undefined) {
      at = rcAt;
      end = rcEnd;
    } else if (content === undefined && rs !== undefined) {
      at = rsAt;
      end = rsEnd;
    }
    if (at >= 0) this.tpl = { ...templateOf(data, at, end), thinking: content === undefined };
    return true;
  }

  /** `message.start` once, on the first chunk that carries an id or model. */
  private start(p: Obj, out: EventSink): void {
    if (this.started || (typeof p.id !== 'string' && typeof p.model !== 'string')) return;
    this.started = true;
    const ev: StreamEvent & { type: 'message.start' } = { type: 'message.start' };
    const id = nonEmpty(p.id);
    if (id !== undefined) ev.id = id;
    const model = nonEmpty(p.model);
    if (model !== undefined) ev.model = model;
    out.push(ev);
  }

  /**
   * A huge chunk (src/wire/pieces.ts): `choices[i].delta.tool_calls[k].function.arguments` is
   * argument text. Split: what came before it (message start, text, the call's identity) is
   * handled at `pieceOpen`, the rest of the chunk (finish_reason, usage, later calls) at its end.
   * `choices[i].delta.content` / `reasoning_content` / `reasoning` are assistant text (`pieceText`).
   */
  pieceRoute(path: readonly PathKey[]): PieceRoute | undefined {
    if (path.length === 4) {
      const key = path[3];
      return (key === 'content' || key === 'reasoning_content' || key === 'reasoning') && pathIs(path, 'choices', ANY, 'delta', ANY) ? STRING_IN_PLACE : undefined;
    }
    return pathIs(path, 'choices', ANY, 'delta', 'tool_calls', ANY, 'function', 'arguments') ? STRING_SPLIT : undefined;
  }

  /**
   * Text of the chunk's first choice goes out as it arrives when the head shows it comes first
   * among the chunk's events: choice index 0 in the head, the message start known (sent now, before
   * the text) or already sent, no call opened by this chunk yet, and for `content` no reasoning
   * before it in the delta (that thinking is emitted first). `reasoning` next to a string
   * `reasoning_content` is dropped (the chunk's thinking is the latter). Anything else is held: the
   * payload at the chunk's end decides where (and whether) it goes.
   */
  private pieceText(head: Obj, path: readonly PathKey[], out: EventSink): number {
    const choices = head.choices as unknown[];
    const c = choices[path[1] as number];
    const d = isObj(c) ? c.delta : undefined;
    if (this.pieceCall || path[1] !== 0 || !isObj(c) || c.index !== 0 || !isObj(d)) return PIECE_HOLD;
    if (!this.started && typeof head.id !== 'string' && typeof head.model !== 'string') return PIECE_HOLD;
    const key = path[3];
    if (key === 'reasoning' && typeof d.reasoning_content === 'string') return PIECE_DROP;
    if (key === 'content') {
      const r = typeof d.reasoning_content === 'string' ? d.reasoning_content : d.reasoning;
      if (typeof r === 'string' && r.length > 0) return PIECE_HOLD;
    }
    this.start(head, out);
    return key === 'content' ? PIECE_TEXT : PIECE_THINKING;
  }

  pieceOpen(head: Obj, path: readonly PathKey[], out: EventSink): number {
    if (path.length === 4) return this.pieceText(head, path, out);
    // The value is the head's last element of each array on its path (after a split, earlier
    // elements are not in the head: positions there are not the path's).
    const choices = head.choices as unknown[];
    const c = choices[choices.length - 1];
    if (!isObj(c) || (c.index !== undefined && c.index !== 0)) return PIECE_DROP; // the payload warns: extra_choice
    const tcs = isObj(c.delta) ? c.delta.tool_calls : undefined;
    const tc = Array.isArray(tcs) ? tcs[tcs.length - 1] : undefined;
    if (!isObj(tc)) return PIECE_KEEP;
    const index = wireIndex(tc.index);
    if (index === REFUSED_INDEX) return PIECE_DROP; // the payload warns: invalid_index
    if (index === undefined) return PIECE_KEEP; // matched by id/order: read whole
    this.onPayload(head, out);
    this.pieceCall = true;
    return index;
  }

  pieceClose(_index: number, _out: EventSink): void {}

  pieceEnd(_out: EventSink): void {
    this.pieceCall = false;
  }

  /** Hooks for dialects (Dynamo): extra fields on a choice / on the chunk. */
  protected choiceExtras(_choice: Obj, _out: EventSink): void {}
  protected chunkExtras(_chunk: Obj, _out: EventSink): void {}

  private delta(d: Obj, out: EventSink): void {
    let r = d.reasoning_content;
    if (typeof r !== 'string') r = d.reasoning;
    if (typeof r === 'string' && r.length > 0) out.push({ type: 'thinking.delta', text: r });
    const content = d.content;
    if (typeof content === 'string' && content.length > 0) out.push({ type: 'text.delta', text: content });
    const tcs = d.tool_calls;
    if (Array.isArray(tcs)) {
      for (let i = 0; i < tcs.length; i++) {
        const tc = tcs[i];
        if (isObj(tc)) this.toolCall(tc, out);
      }
    } else if (isObj(d.function_call)) {
      this.callDelta(0, undefined, d.function_call, out);
    }
  }

  private toolCall(tc: Obj, out: EventSink): void {
    let index = wireIndex(tc.index);
    if (index === REFUSED_INDEX) {
      this.refuseIndex(out, 'tool_calls[].index', tc.index);
      return;
    }
    const id = nonEmpty(tc.id);
    if (index === undefined) {
      this.warnOnce(
        out,
        'missing_tool_index',
        'openai-chat: tool_call without an index; matched by id/order',
      );
      this.idToIndex ??= new Map();
      const known = id !== undefined ? this.idToIndex.get(id) : undefined;
      if (known !== undefined) index = known;
      else if (id !== undefined || this.lastIndex < 0) index = this.calls.length;
      else index = this.lastIndex;
      if (id !== undefined) this.idToIndex.set(id, index);
    }
    this.callDelta(index, id, isObj(tc.function) ? tc.function : undefined, out);
  }

  private callDelta(index: number, id: string | undefined, fn: Obj | undefined, out: EventSink): void {
    this.lastIndex = index;
    let st = this.calls[index];
    if (st === undefined) {
      st = {};
      this.calls[index] = st;
    }
    const name = fn === undefined ? undefined : nonEmpty(fn.name);
    if ((id !== undefined && id !== st.id) || (name !== undefined && name !== st.name)) {
      const ev: StreamEvent & { type: 'call.identity' } = { type: 'call.identity', index };
      if (id !== undefined) ev.id = st.id = id;
      else if (st.id !== undefined) ev.id = st.id;
      if (name !== undefined) ev.name = st.name = name;
      else if (st.name !== undefined) ev.name = st.name;
      out.push(ev);
    }
    if (fn === undefined) return;
    const args = fn.arguments;
    if (typeof args === 'string') {
      if (args.length > 0) out.push({ type: 'call.fragment', index, text: args });
    } else if (isObj(args)) {
      out.push({ type: 'call.fragment', index, text: JSON.stringify(args) });
    }
  }
}
