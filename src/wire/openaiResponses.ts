/**
 * OpenAI Responses API streaming adapter.
 *
 * The provider sends typed events (no `[DONE]`): response.created / in_progress ·
 * response.output_item.added {output_index, item} · response.function_call_arguments.delta
 * {item_id, output_index, delta} · response.function_call_arguments.done {item_id, arguments} ·
 * response.output_item.done {item} · response.output_text.delta · response.reasoning_summary_text.delta ·
 * response.reasoning_text.delta · response.completed | response.incomplete | response.failed
 * {response:{usage, error, incomplete_details}} · error {error:{type, code, message}} (or the same
 * fields at top level). Reasoning, message and function_call items share the `output_index` space.
 *
 * Emitted:
 * - response.created → `message.start {id, model}`. Every response.created starts a new response
 *   (a recording may hold several): call numbering restarts at 0 and per-item state is reset.
 * - An event whose `output_index` is present but not a non-negative integer (-1, 0.5, "0", null,
 *   true) is refused: `invalid_index` warning, the event dropped (`wireIndex`, common.ts).
 * - function_call items: call index = order of first appearance among function_call items of the
 *   response (not `output_index`). output_item.added → `call.identity {index, id: call_id, name}`;
 *   arguments.delta → `call.fragment` (non-empty); arguments.done or output_item.done →
 *   `call.complete` once (completion evidence). If no delta was seen for the call, the full
 *   `arguments` string of the done event is first sent as one fragment. An output_item.done for an
 *   item never announced opens it there (identity, full arguments, complete).
 * - output_text.delta / refusal.delta → `text.delta`; reasoning_summary_text.delta and
 *   reasoning_text.delta → `thinking.delta`; a reasoning item's `encrypted_content` at
 *   output_item.done → `thinking.signature` (it is what must be replayed).
 * - Hosted tool items (web_search_call, file_search_call, mcp_call, code_interpreter_call, …) run on
 *   the provider: one `server_item_skipped` warning per item.
 * - response.completed → `usage` then `finish` (tool_calls if this response had function calls, else
 *   stop); response.incomplete → `usage` then `finish` (max_output_tokens→length,
 *   content_filter→content_filter, else other).
 * - `error` → `stream.error {type: error.type ?? error.code, message}`; a following response.failed
 *   adds nothing. A lone response.failed → `stream.error` from `response.error`.
 * - Known bookkeeping events (content_part.*, *.done of text, in_progress, queued, annotations…) are
 *   ignored; unknown event types → one warning per type.
 *
 * Usage: promptTokens = input_tokens, cachedTokens = input_tokens_details.cached_tokens,
 * outputTokens = output_tokens.
 */
import { isRetryableErrorType, type StreamEvent, type Usage } from './events';
import { BaseAdapter, type EventSink, isObj, nonEmpty, num, type Obj, REFUSED_INDEX, wireIndex } from './common';
import { skim } from './skim';
import { ANY, type PathKey, pathIs, PIECE_DROP, PIECE_HOLD, PIECE_KEEP, PIECE_TEXT, PIECE_THINKING, type PieceRoute, STRING_DROP, STRING_IN_PLACE } from './pieces';

interface ItemState {
  call: number;
  hadDelta: boolean;
  completed: boolean;
}

const IGNORED = new Set([
  'response.in_progress',
  'response.queued',
  'response.content_part.added',
  'response.content_part.done',
  'response.output_text.done',
  'response.output_text.annotation.added',
  'response.refusal.done',
  'response.reasoning_summary_part.added',
  'response.reasoning_summary_part.done',
  'response.reasoning_summary_text.done',
  'response.reasoning_text.done',
]);

export function responsesUsage(u: Obj): Usage | undefined {
  const usage: Usage = {};
  const input = num(u.input_tokens);
  if (input !== undefined) usage.promptTokens = input;
  if (isObj(u.input_tokens_details)) {
    const cached = num(u.input_tokens_details.cached_tokens);
    if (cached !== undefined) usage.cachedTokens = cached;
  }
  const output = num(u.output_tokens);
  if (output !== undefined) usage.outputTokens = output;
  return usage.promptTokens === undefined && usage.outputTokens === undefined ? undefined : usage;
}

export class OpenAIResponsesAdapter extends BaseAdapter {
  readonly format = 'openai-responses' as const;
  private items = new Map<string, ItemState>();
  private byOutputIndex = new Map<number, ItemState>();
  private nextCall = 0;
  private errored = false;

  /**
   * Fast path (skim.ts): output_text / refusal / reasoning text deltas (stateless here), read in
   * place; an `output_index` must be a plain non-negative integer. Everything else is parsed.
   */
  protected override onRaw(data: string, out: EventSink): boolean {
    const k = skim.reset(data);
    if (!k.open()) return false;
    let thinking = false;
    let typed = false;
    let delta: string | undefined;
    for (;;) {
      if (!k.key()) return false;
      if (k.is('type')) {
        if (!k.str()) return false;
        if (k.is('response.output_text.delta') || k.is('response.refusal.delta')) thinking = false;
        else if (k.is('response.reasoning_summary_text.delta') || k.is('response.reasoning_text.delta')) thinking = true;
        else return false;
        typed = true;
      } else if (k.is('delta')) {
        if (!k.str()) return false;
        delta = k.value();
      } else if (k.is('output_index')) {
        if (k.index() < 0) return false;
      } else if (!k.skip(1)) return false;
      if (!k.next()) break;
    }
    if (k.bad || !k.atEnd() || !typed || delta === undefined) return false;
    if (delta.length > 0) out.push(thinking ? { type: 'thinking.delta', text: delta } : { type: 'text.delta', text: delta });
    return true;
  }

  protected onPayload(p: Obj, out: EventSink): void {
    const type = p.type;
    if (p.output_index !== undefined && wireIndex(p.output_index) === REFUSED_INDEX) {
      this.refuseIndex(out, 'output_index', p.output_index);
      return;
    }
    switch (type) {
      case 'response.function_call_arguments.delta': {
        const st = this.lookup(p, out);
        if (st === undefined) return;
        const d = p.delta;
        if (typeof d === 'string' && d.length > 0) {
          st.hadDelta = true;
          out.push({ type: 'call.fragment', index: st.call, text: d });
        }
        return;
      }
      case 'response.output_text.delta':
      case 'response.refusal.delta': {
        const d = p.delta;
        if (typeof d === 'string' && d.length > 0) out.push({ type: 'text.delta', text: d });
        return;
      }
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta': {
        const d = p.delta;
        if (typeof d === 'string' && d.length > 0) out.push({ type: 'thinking.delta', text: d });
        return;
      }
      case 'response.function_call_arguments.done': {
        const st = this.lookup(p, out);
        if (st !== undefined) this.complete(st, p.arguments, out);
        return;
      }
      case 'response.output_item.added':
        if (isObj(p.item)) this.itemAdded(p.item, num(p.output_index), out);
        return;
      case 'response.output_item.done':
        if (isObj(p.item)) this.itemDone(p.item, num(p.output_index), out);
        return;
      case 'response.created':
        this.created(p, out);
        return;
      case 'response.completed':
      case 'response.incomplete':
        this.terminal = true;
        this.finished(p, type === 'response.incomplete', out);
        return;
      case 'response.failed':
        this.failed = true;
        if (!this.errored) {
          this.errored = true;
          const r = isObj(p.response) ? p.response : {};
          const e = isObj(r.error) ? r.error : {};
          const et = nonEmpty(e.type) ?? nonEmpty(e.code) ?? 'server_error';
          const message = typeof e.message === 'string' ? e.message : 'response failed';
          out.push({
            type: 'stream.error',
            error: { type: et, message },
            retryable: isRetryableErrorType(et),
          });
        }
        return;
      case 'error': {
        // {error:{type, code, message}} (seen in recordings) or {code, message} at top level (documented).
        const nested = isObj(p.error);
        const e = nested ? (p.error as Obj) : p;
        const et = (nested ? nonEmpty(e.type) : undefined) ?? nonEmpty(e.code) ?? 'server_error';
        const message = typeof e.message === 'string' ? e.message : '';
        this.errored = true;
        this.failed = true;
        out.push({ type: 'stream.error', error: { type: et, message }, retryable: isRetryableErrorType(et) });
        return;
      }
      default:
        if (typeof type === 'string' && IGNORED.has(type)) return;
        {
          const t = typeof type === 'string' ? type : '(no type)';
          this.warnOnce(
            out,
            'unknown_event',
            `openai-responses: unknown event type ${JSON.stringify(t.slice(0, 64))} ignored`,
            `ev:${t}`,
          );
        }
    }
  }

  /**
   * A huge event (src/wire/pieces.ts): the `delta` of function_call_arguments.delta, the
   * `arguments` of function_call_arguments.done and the `item.arguments` of output_item.done are
   * argument text; a response's `output[].arguments` (response.completed and the like) repeat it
   * and are never read here. The `delta` of a text or reasoning delta event is assistant text.
   */
  pieceRoute(path: readonly PathKey[]): PieceRoute | undefined {
    if (pathIs(path, 'delta') || pathIs(path, 'arguments') || pathIs(path, 'item', 'arguments')) return STRING_IN_PLACE;
    return pathIs(path, 'response', 'output', ANY, 'arguments') ? STRING_DROP : undefined;
  }

  /**
   * Streams to the item's call: a delta always, a `.done` or `output_item.done` only when no delta
   * came before (otherwise its arguments repeat the deltas and are dropped, as `complete` does).
   * The payload at the event's end (arguments `""`) then completes the call as usual.
   */
  pieceOpen(head: Obj, path: readonly PathKey[], _out: EventSink): number {
    if (head.output_index !== undefined && wireIndex(head.output_index) === REFUSED_INDEX) return PIECE_DROP;
    const type = head.type;
    if (path[0] === 'delta') {
      // Text out as it arrives once the event's type and output_index are known (the only event
      // it gives); without them the payload decides (held: a refused output_index drops it).
      const text = type === 'response.output_text.delta' || type === 'response.refusal.delta';
      if (text || type === 'response.reasoning_summary_text.delta' || type === 'response.reasoning_text.delta') {
        return head.output_index === undefined ? PIECE_HOLD : text ? PIECE_TEXT : PIECE_THINKING;
      }
      if (type === undefined) return PIECE_HOLD;
    }
    let st: ItemState | undefined;
    if (type === 'response.function_call_arguments.delta' && path[0] === 'delta') {
      st = this.find(head);
      if (st === undefined) return PIECE_DROP;
      st.hadDelta = true;
      return st.call;
    }
    if (type === 'response.function_call_arguments.done' && path[0] === 'arguments') st = this.find(head);
    else if (type === 'response.output_item.done' && path[0] === 'item' && isObj(head.item)) {
      if (head.item.type !== 'function_call') return PIECE_DROP;
      st = this.find(head, head.item);
      if (st === undefined) return PIECE_KEEP; // opened there: its arguments are read whole
    } else return PIECE_KEEP;
    if (st === undefined || st.completed || st.hadDelta) return PIECE_DROP;
    st.hadDelta = true;
    return st.call;
  }

  pieceClose(): void {}

  /** The item an event is about (by item id, then output_index), without a warning. */
  private find(p: Obj, item?: Obj): ItemState | undefined {
    const itemId = nonEmpty(item !== undefined ? item.id : p.item_id);
    const st = itemId !== undefined ? this.items.get(itemId) : undefined;
    if (st !== undefined) return st;
    const oi = num(p.output_index);
    return oi !== undefined ? this.byOutputIndex.get(oi) : undefined;
  }

  private created(p: Obj, out: EventSink): void {
    this.items.clear();
    this.byOutputIndex.clear();
    this.nextCall = 0;
    this.errored = false;
    const r = isObj(p.response) ? p.response : {};
    const ev: StreamEvent & { type: 'message.start' } = { type: 'message.start' };
    const id = nonEmpty(r.id);
    if (id !== undefined) ev.id = id;
    const model = nonEmpty(r.model);
    if (model !== undefined) ev.model = model;
    out.push(ev);
  }

  private openCall(item: Obj, outputIndex: number | undefined, out: EventSink): ItemState {
    const st: ItemState = { call: this.nextCall++, hadDelta: false, completed: false };
    const itemId = nonEmpty(item.id);
    if (itemId !== undefined) this.items.set(itemId, st);
    if (outputIndex !== undefined) this.byOutputIndex.set(outputIndex, st);
    const ev: StreamEvent & { type: 'call.identity' } = { type: 'call.identity', index: st.call };
    const callId = nonEmpty(item.call_id);
    if (callId !== undefined) ev.id = callId;
    const name = nonEmpty(item.name);
    if (name !== undefined) ev.name = name;
    out.push(ev);
    return st;
  }

  private itemAdded(item: Obj, outputIndex: number | undefined, out: EventSink): void {
    const t = item.type;
    if (t === 'function_call') {
      const st = this.openCall(item, outputIndex, out);
      const args = item.arguments;
      if (typeof args === 'string' && args.length > 0) {
        st.hadDelta = true;
        out.push({ type: 'call.fragment', index: st.call, text: args });
      }
      return;
    }
    if (t === 'message' || t === 'reasoning') return;
    const ts = typeof t === 'string' ? t : '(no type)';
    out.push({
      type: 'warning',
      code: 'server_item_skipped',
      message: `openai-responses: output item ${JSON.stringify(ts.slice(0, 64))} is not a client function call; skipped`,
    });
  }

  private itemDone(item: Obj, outputIndex: number | undefined, out: EventSink): void {
    const t = item.type;
    if (t === 'function_call') {
      const itemId = nonEmpty(item.id);
      let st = itemId !== undefined ? this.items.get(itemId) : undefined;
      if (st === undefined && outputIndex !== undefined) st = this.byOutputIndex.get(outputIndex);
      st ??= this.openCall(item, outputIndex, out);
      this.complete(st, item.arguments, out);
      return;
    }
    if (t === 'reasoning') {
      const sig = nonEmpty(item.encrypted_content);
      if (sig !== undefined) out.push({ type: 'thinking.signature', signature: sig });
    }
  }

  private lookup(p: Obj, out: EventSink): ItemState | undefined {
    const itemId = nonEmpty(p.item_id);
    let st = itemId !== undefined ? this.items.get(itemId) : undefined;
    if (st === undefined) {
      const oi = num(p.output_index);
      if (oi !== undefined) st = this.byOutputIndex.get(oi);
    }
    if (st === undefined) {
      this.warnOnce(
        out,
        'unknown_item',
        'openai-responses: arguments for an item that was not announced; ignored',
        `item:${itemId ?? ''}`,
      );
    }
    return st;
  }

  private complete(st: ItemState, args: unknown, out: EventSink): void {
    if (st.completed) return;
    st.completed = true;
    if (!st.hadDelta && typeof args === 'string' && args.length > 0) {
      st.hadDelta = true;
      out.push({ type: 'call.fragment', index: st.call, text: args });
    }
    out.push({ type: 'call.complete', index: st.call });
  }

  private finished(p: Obj, incomplete: boolean, out: EventSink): void {
    const r = isObj(p.response) ? p.response : {};
    if (isObj(r.usage)) {
      const u = responsesUsage(r.usage);
      if (u !== undefined) out.push({ type: 'usage', usage: u });
    }
    if (!incomplete) {
      out.push({ type: 'finish', reason: this.nextCall > 0 ? 'tool_calls' : 'stop', raw: 'completed' });
      return;
    }
    const reason = isObj(r.incomplete_details) ? nonEmpty(r.incomplete_details.reason) : undefined;
    out.push({
      type: 'finish',
      reason:
        reason === 'content_filter'
          ? 'content_filter'
          : reason === 'max_output_tokens' || reason === undefined
            ? 'length'
            : 'other',
      raw: reason ?? 'incomplete',
    });
  }
}
