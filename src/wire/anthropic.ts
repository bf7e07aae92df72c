/**
 * Anthropic Messages streaming adapter.
 *
 * The provider sends (SSE `data:` objects, or the raw stream events of `@anthropic-ai/sdk`):
 *   message_start {message:{id, model, usage}} · content_block_start {index, content_block} ·
 *   content_block_delta {index, delta} · content_block_stop {index} · message_delta {delta:{stop_reason},
 *   usage} · message_stop · ping · error {error:{type, message}}.
 * Block `index` is the position in the message's content array; blocks are sequential.
 *
 * Emitted:
 * - message_start → `message.start {id, model, usage}`. Every message_start (also a second one in
 *   the same byte stream: spliced/restarted streams, concatenated turns) starts a new message: block
 *   state is reset and call numbering restarts at 0. A message_start while blocks are still open
 *   also sends a `message_restart` warning.
 * - text blocks → `text.delta`; thinking blocks → `thinking.delta` and, for `signature_delta`,
 *   `thinking.signature`. redacted_thinking has no canonical event: one warning per block.
 * - tool_use blocks → `call.identity {index, id, name}` at block start (index = order of tool_use
 *   blocks in the message, from 0), `call.fragment` per non-empty `input_json_delta`, `call.complete`
 *   at content_block_stop (completion evidence; the JSON may still be invalid with fine-grained tool
 *   streaming — judging it is the engine's job). A block start that already carries a non-empty
 *   `input` object (SDK snapshots) sends it as one fragment at stop if no deltas came.
 * - server_tool_use, mcp_tool_use and `*_tool_result` blocks run on Anthropic's side, not the
 *   client's: skipped, with ONE `server_block_skipped` warning per block; their deltas are dropped.
 *   Other unknown block types: skipped with one `unknown_block` warning per block.
 * - A block index that is not a non-negative integer (-1, 0.5, "0", null, true) is refused
 *   (`invalid_index` warning, the event dropped; `wireIndex`, common.ts).
 * - A delta or stop for a block index that was never started: one `unknown_block_delta` warning per
 *   index (the delta is dropped).
 * - message_delta → `usage` (when present) then `finish` (end_turn→stop, tool_use→tool_calls,
 *   max_tokens→length, stop_sequence→stop_sequence, refusal→content_filter, pause_turn→other,
 *   anything else→other; `raw` keeps the provider value).
 * - ping → `ping`. error → `stream.error {error:{type, message}, retryable: isRetryableErrorType(type)}`.
 * - message_stop → nothing (end() sends `stream.end`); blocks still open at message_stop or at the
 *   end of the stream (max_tokens cut a tool block) → one `unclosed_blocks` warning, no
 *   `call.complete`. Unknown event types: one warning per type.
 *
 * Usage mapping: promptTokens = input_tokens + cache_read_input_tokens + cache_creation_input_tokens,
 * cachedTokens = cache_read_input_tokens, outputTokens = output_tokens.
 */
import { type FinishReason, isRetryableErrorType, type StreamEvent, type Usage } from './events';
import { BaseAdapter, type EventSink, isObj, nonEmpty, num, type Obj, REFUSED_INDEX, wireIndex } from './common';
import { fromTemplate, skim, type Template, templateOf } from './skim';
import { type PathKey, PIECE_DROP, PIECE_HOLD, PIECE_KEEP, PIECE_TEXT, PIECE_THINKING, type PieceRoute, STRING_IN_PLACE } from './pieces';

const enum Kind {
  Text,
  Thinking,
  Tool,
  Skip,
}

interface Block {
  kind: Kind;
  /** Call index for tool blocks. */
  call: number;
  /** Tool block: a fragment was sent. */
  sentFragment: boolean;
  /** Tool block: full input from content_block_start (only when non-empty). */
  startInput?: string;
}

const STOP_MAP: Record<string, FinishReason> = {
  end_turn: 'stop',
  tool_use: 'tool_calls',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  stop_sequence: 'stop_sequence',
  refusal: 'content_filter',
  pause_turn: 'other',
};

export function mapAnthropicStopReason(raw: string): FinishReason {
  return STOP_MAP[raw] ?? 'other';
}

export function anthropicUsage(u: Obj): Usage | undefined {
  const input = num(u.input_tokens);
  const cacheRead = num(u.cache_read_input_tokens);
  const cacheCreate = num(u.cache_creation_input_tokens);
  const output = num(u.output_tokens);
  const usage: Usage = {};
  if (input !== undefined || cacheRead !== undefined || cacheCreate !== undefined) {
    usage.promptTokens = (input ?? 0) + (cacheRead ?? 0) + (cacheCreate ?? 0);
    if (cacheRead !== undefined) usage.cachedTokens = cacheRead;
  }
  if (output !== undefined) usage.outputTokens = output;
  return usage.promptTokens === undefined && usage.outputTokens === undefined ? undefined : usage;
}

function isServerBlock(type: string): boolean {
  return type === 'server_tool_use' || type === 'mcp_tool_use' || type.endsWith('_tool_result');
}

export class AnthropicAdapter extends BaseAdapter {
  readonly format = 'anthropic' as const;
  private blocks: (Block | undefined)[] = [];
  private nextCall = 0;
  private openBlocks = 0;
  /** Block indices already warned about (unknown delta/stop), per message. */
  private warnedIndices: Set<number> | undefined;
  /** message_delta carried a stop_reason (message_stop is terminal only after it). */
  private stopReason = false;
  /** The last fast-path delta's shape (skim.ts Template) and the block it was for. */
  private tpl: (Template & { index: number; kind: Kind }) | undefined;

  protected onPayload(p: Obj, out: EventSink): void {
    switch (p.type) {
      case 'content_block_delta':
        this.delta(p, out);
        return;
      case 'ping':
        out.push({ type: 'ping' });
        return;
      case 'content_block_start':
        this.blockStart(p, out);
        return;
      case 'content_block_stop':
        this.blockStop(p, out);
        return;
      case 'message_start':
        this.messageStart(p, out);
        return;
      case 'message_delta':
        this.messageDelta(p, out);
        return;
      case 'message_stop':
        // The terminal signal once message_delta gave the stop reason (SPEC §12).
        if (this.stopReason) this.terminal = true;
        this.checkUnclosed(out);
        return;
      case 'error': {
        const e = isObj(p.error) ? p.error : {};
        const type = nonEmpty(e.type) ?? 'api_error';
        const message = typeof e.message === 'string' ? e.message : '';
        this.failed = true;
        out.push({ type: 'stream.error', error: { type, message }, retryable: isRetryableErrorType(type) });
        return;
      }
      default: {
        const t = typeof p.type === 'string' ? p.type : '(no type)';
        this.warnOnce(
          out,
          'unknown_event',
          `anthropic: unknown event type ${JSON.stringify(t.slice(0, 64))} ignored`,
          `ev:${t}`,
        );
      }
    }
  }

  protected override onEnd(out: EventSink): void {
    this.checkUnclosed(out);
  }

  /**
   * A huge event (src/wire/pieces.ts): `delta.partial_json` of a content_block_delta is argument
   * text, `delta.text` / `delta.thinking` assistant text.
   */
  pieceRoute(path: readonly PathKey[]): PieceRoute | undefined {
    if (path.length !== 2 || path[0] !== 'delta') return undefined;
    const key = path[1];
    return key === 'partial_json' || key === 'text' || key === 'thinking' ? STRING_IN_PLACE : undefined;
  }

  /**
   * The input_json_delta of an open tool_use block streams to its call; of any other block it is
   * dropped (the payload at the event's end, with `partial_json: ""`, gives the warning `delta`
   * gives today: unknown block, refused index, delta that does not fit its block). A text_delta's
   * `text` for an open text block, a thinking_delta's `thinking` for an open thinking block, go out
   * as deltas as they arrive (it is the event's only event); any other text is held: the payload
   * decides (its type or index came after the text, or it is dropped with the payload's warning).
   */
  pieceOpen(head: Obj, path: readonly PathKey[], _out: EventSink): number {
    if (path[1] !== 'partial_json') {
      if (head.type !== 'content_block_delta' || !isObj(head.delta)) return PIECE_HOLD;
      const i = wireIndex(head.index);
      const kind = i === undefined || i === REFUSED_INDEX ? undefined : this.blocks[i]?.kind;
      if (path[1] === 'text' && head.delta.type === 'text_delta' && kind === Kind.Text) return PIECE_TEXT;
      if (path[1] === 'thinking' && head.delta.type === 'thinking_delta' && kind === Kind.Thinking) return PIECE_THINKING;
      return PIECE_HOLD;
    }
    if (head.type !== 'content_block_delta' || !isObj(head.delta) || head.delta.type !== 'input_json_delta') return PIECE_KEEP;
    const index = wireIndex(head.index);
    const block = index === undefined || index === REFUSED_INDEX ? undefined : this.blocks[index];
    if (block === undefined || block.kind !== Kind.Tool) return PIECE_DROP;
    block.sentFragment = true;
    return block.call;
  }

  pieceClose(): void {}

  /**
   * Fast path (skim.ts): `content_block_delta` with a `text_delta` for an open text block or a
   * `thinking_delta` for an open thinking block, read in place. Everything else is parsed.
   */
  protected override onRaw(data: string, out: EventSink): boolean {
    const tpl = this.tpl;
    if (tpl !== undefined && this.blocks[tpl.index]?.kind === tpl.kind) {
      const t = fromTemplate(tpl, data);
      if (t !== undefined) {
        if (t.length > 0) out.push(tpl.kind === Kind.Text ? { type: 'text.delta', text: t } : { type: 'thinking.delta', text: t });
        return true;
      }
    }
    const k = skim.reset(data);
    let textAt = -1;
    let textEnd = -1;
    let thinkingAt = -1;
    let thinkingEnd = -1;
    if (!k.open()) return false;
    let index = -1;
    let kind = -1; // delta.type: Kind.Text for text_delta, Kind.Thinking for thinking_delta
    let text: string | undefined;
    let thinking: string | undefined;
    let deltas = 0;
    for (;;) {
      if (!k.key()) return false;
      if (k.is('type')) {
        if (!k.str() || !k.is('content_block_delta')) return false;
      } else if (k.is('index')) {
        if ((index = k.index()) < 0) return false;
      } else if (k.is('delta')) {
        if (deltas++ > 0 || !k.open()) return false;
        for (;;) {
          if (!k.key()) return false;
          if (k.is('type')) {
            if (!k.str()) return false;
            if (k.is('text_delta')) kind = Kind.Text;
            else if (k.is('thinking_delta')) kind = Kind.Thinking;
            else return false;
          } else if (k.is('text')) {
            if (!k.str()) return false;
            text = k.value();
            textAt = k.vs;
            textEnd = k.ve;
          } else if (k.is('thinking')) {
            if (!k.str()) return false;
            thinking = k.value();
            thinkingAt = k.vs;
            thinkingEnd = k.ve;
          } else if (!k.skip(2)) return false;
          if (!k.next()) break;
        }
        if (k.bad) return false;
      } else if (!k.skip(1)) return false;
      if (!k.next()) break;
    }
    if (k.bad || !k.atEnd() || index < 0 || deltas === 0) return false;
    const block = this.blocks[index];
    if (block === undefined || block.kind !== kind) return false;
    if (kind === Kind.Text) {
      if (text === undefined) return false;
      if (text.length > 0) out.push({ type: 'text.delta', text });
      this.tpl = { ...templateOf(data, textAt, textEnd), index, kind };
      return true;
    }
    if (kind !== Kind.Thinking || thinking === undefined) return false;
    if (thinking.length > 0) out.push({ type: 'thinking.delta', text: thinking });
    this.tpl = { ...templateOf(data, thinkingAt, thinkingEnd), index, kind };
    return true;
  }

  /** Blocks left open at message_stop / end of stream: no completion evidence for their calls. */
  private checkUnclosed(out: EventSink): void {
    if (this.openBlocks <= 0) return;
    out.push({
      type: 'warning',
      code: 'unclosed_blocks',
      message: `anthropic: ${this.openBlocks} content block(s) never stopped (no completion evidence for their calls)`,
    });
    this.openBlocks = 0;
    this.blocks = [];
  }

  private messageStart(p: Obj, out: EventSink): void {
    if (this.openBlocks > 0) {
      out.push({
        type: 'warning',
        code: 'message_restart',
        message: `anthropic: message_start while ${this.openBlocks} block(s) were open; previous message abandoned`,
      });
    }
    this.blocks = [];
    this.nextCall = 0;
    this.openBlocks = 0;
    this.warnedIndices = undefined;
    const m = isObj(p.message) ? p.message : {};
    const ev: StreamEvent & { type: 'message.start' } = { type: 'message.start' };
    const id = nonEmpty(m.id);
    if (id !== undefined) ev.id = id;
    const model = nonEmpty(m.model);
    if (model !== undefined) ev.model = model;
    if (isObj(m.usage)) {
      const u = anthropicUsage(m.usage);
      if (u !== undefined) ev.usage = u;
    }
    out.push(ev);
  }

  private blockStart(p: Obj, out: EventSink): void {
    const index = wireIndex(p.index);
    if (index === REFUSED_INDEX) {
      this.refuseIndex(out, 'content_block_start.index', p.index);
      return;
    }
    const cb = isObj(p.content_block) ? p.content_block : undefined;
    if (index === undefined || cb === undefined) {
      out.push({
        type: 'warning',
        code: 'bad_event',
        message: 'anthropic: content_block_start without index or content_block',
      });
      return;
    }
    if (this.blocks[index] !== undefined) {
      out.push({
        type: 'warning',
        code: 'duplicate_block',
        message: `anthropic: block ${index} started twice`,
      });
    } else {
      this.openBlocks++;
    }
    const type = typeof cb.type === 'string' ? cb.type : '';
    let block: Block;
    switch (type) {
      case 'text': {
        block = { kind: Kind.Text, call: -1, sentFragment: false };
        const t = nonEmpty(cb.text);
        if (t !== undefined) out.push({ type: 'text.delta', text: t });
        break;
      }
      case 'thinking': {
        block = { kind: Kind.Thinking, call: -1, sentFragment: false };
        const t = nonEmpty(cb.thinking);
        if (t !== undefined) out.push({ type: 'thinking.delta', text: t });
        const s = nonEmpty(cb.signature);
        if (s !== undefined) out.push({ type: 'thinking.signature', signature: s });
        break;
      }
      case 'tool_use': {
        const call = this.nextCall++;
        block = { kind: Kind.Tool, call, sentFragment: false };
        const ev: StreamEvent & { type: 'call.identity' } = { type: 'call.identity', index: call };
        const id = nonEmpty(cb.id);
        if (id !== undefined) ev.id = id;
        const name = nonEmpty(cb.name);
        if (name !== undefined) ev.name = name;
        out.push(ev);
        if (isObj(cb.input) && Object.keys(cb.input).length > 0) block.startInput = JSON.stringify(cb.input);
        break;
      }
      default:
        block = { kind: Kind.Skip, call: -1, sentFragment: false };
        if (type === 'redacted_thinking') {
          out.push({
            type: 'warning',
            code: 'redacted_thinking',
            message: `anthropic: redacted_thinking block ${index} has no canonical event; skipped`,
          });
        } else if (isServerBlock(type)) {
          out.push({
            type: 'warning',
            code: 'server_block_skipped',
            message: `anthropic: ${type} block ${index} is executed by the provider, not the client; skipped`,
          });
        } else {
          out.push({
            type: 'warning',
            code: 'unknown_block',
            message: `anthropic: unknown content block type ${JSON.stringify(type.slice(0, 64))} at ${index}; skipped`,
          });
        }
    }
    this.blocks[index] = block;
  }

  private delta(p: Obj, out: EventSink): void {
    const index = wireIndex(p.index);
    if (index === REFUSED_INDEX) {
      this.refuseIndex(out, 'content_block_delta.index', p.index);
      return;
    }
    const block = index === undefined ? undefined : this.blocks[index];
    if (block === undefined) {
      this.unknownIndex(index, out);
      return;
    }
    const d = p.delta as Obj | undefined;
    if (!isObj(d)) return;
    switch (block.kind) {
      case Kind.Tool:
        if (d.type === 'input_json_delta') {
          const t = d.partial_json;
          if (typeof t === 'string' && t.length > 0) {
            block.sentFragment = true;
            out.push({ type: 'call.fragment', index: block.call, text: t });
          }
          return;
        }
        break;
      case Kind.Text:
        if (d.type === 'text_delta') {
          const t = d.text;
          if (typeof t === 'string' && t.length > 0) out.push({ type: 'text.delta', text: t });
          return;
        }
        if (d.type === 'citations_delta') return;
        break;
      case Kind.Thinking:
        if (d.type === 'thinking_delta') {
          const t = d.thinking;
          if (typeof t === 'string' && t.length > 0) out.push({ type: 'thinking.delta', text: t });
          return;
        }
        if (d.type === 'signature_delta') {
          const s = nonEmpty(d.signature);
          if (s !== undefined) out.push({ type: 'thinking.signature', signature: s });
          return;
        }
        break;
      case Kind.Skip:
        return;
    }
    const dt = typeof d.type === 'string' ? d.type : '(no type)';
    this.warnOnce(
      out,
      'unexpected_delta',
      `anthropic: delta ${JSON.stringify(dt.slice(0, 64))} does not fit its block; ignored`,
      `delta:${dt}:${block.kind}`,
    );
  }

  private blockStop(p: Obj, out: EventSink): void {
    const index = wireIndex(p.index);
    if (index === REFUSED_INDEX) {
      this.refuseIndex(out, 'content_block_stop.index', p.index);
      return;
    }
    const block = index === undefined ? undefined : this.blocks[index];
    if (index === undefined || block === undefined) {
      this.unknownIndex(index, out);
      return;
    }
    this.blocks[index] = undefined;
    this.openBlocks--;
    if (block.kind === Kind.Tool) {
      if (!block.sentFragment && block.startInput !== undefined) {
        out.push({ type: 'call.fragment', index: block.call, text: block.startInput });
      }
      out.push({ type: 'call.complete', index: block.call });
    }
  }

  private unknownIndex(index: unknown, out: EventSink): void {
    const i = typeof index === 'number' ? index : -1;
    this.warnedIndices ??= new Set();
    if (this.warnedIndices.has(i)) return;
    this.warnedIndices.add(i);
    out.push({
      type: 'warning',
      code: 'unknown_block_delta',
      message: `anthropic: event for block ${i} that was not started (or already stopped); ignored`,
    });
  }

  private messageDelta(p: Obj, out: EventSink): void {
    if (isObj(p.usage)) {
      const u = anthropicUsage(p.usage);
      if (u !== undefined) out.push({ type: 'usage', usage: u });
    }
    const d = isObj(p.delta) ? p.delta : undefined;
    const raw = d === undefined ? undefined : nonEmpty(d.stop_reason);
    if (raw !== undefined) {
      this.stopReason = true;
      out.push({ type: 'finish', reason: mapAnthropicStopReason(raw), raw });
    }
  }
}
