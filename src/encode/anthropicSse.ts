import type { OutputEvent } from '../release/output';
import type { FinishReason, StreamErrorInfo } from '../wire/events';
import { BASE62, randomChars, UsageCounter } from './openaiCommon';
import { PiecewiseEncoder } from './pieces';

/**
 * OutputEvent sequence → Anthropic Messages streaming events (SPEC §5.9), as SSE text
 * (`AnthropicSseEncoder`) or as one non-streaming Messages response body (`toAnthropicMessage`).
 * Both run the same `AnthropicEventBuilder`, so they follow the same rules:
 *
 * - `message_start` first (sent on the first event of any kind): `id` is `msg_` + random hex (the
 *   backend's id is never exposed), `model`, `content: []`, `stop_reason: null`, and a usage
 *   estimate (`inputTokens` option) unless the start event carries usage.
 * - One content block open at a time, indices consecutive from 0.
 *   - A thinking block opens on the first non-empty thinking text. It is closed before any text or
 *     tool block (and at the end); at close it gets one `signature_delta` with the last signature
 *     seen while it was open, or **none** when no signature arrived: the block then keeps the
 *     `signature: ""` of its `content_block_start` (no placeholder signature is invented).
 *     A signature that arrives while no thinking block is open is ignored (it has nothing to sign).
 *   - A text block opens on the first non-empty text and closes before a thinking or tool block.
 *   - Each `tool_use` event is a whole block: `content_block_start` with a fresh `toolu_` id (never
 *     the backend id, fresh also when two calls share one), `name`, `input: {}`; one
 *     `input_json_delta` carrying `argsText` (none when `argsText` is ''); `content_block_stop`.
 * - `end` closes any open block, then `message_delta` (`stop_reason`, `stop_sequence: null`, usage)
 *   and `message_stop`.
 * - `error` produces exactly one `event: error` frame and nothing after it: no `message_delta`, no
 *   `message_stop`. Every event after a terminal event (`end` or `error`) is ignored.
 * - Usage: `input_tokens = prompt − cached`, `cache_read_input_tokens = cached`,
 *   `cache_creation_input_tokens = 0`; `output_tokens` never decreases.
 * - Stop map: stop→end_turn, length→max_tokens, tool_calls→tool_use (end_turn when no tool block
 *   was released), content_filter→refusal, stop_sequence→stop_sequence, missing/other→end_turn,
 *   or tool_use when tool blocks were released. See `mapStopReason`.
 */

// ---------------------------------------------------------------------------------------------
// Anthropic wire shapes (the subset sluice writes; kept local so the library does not depend on
// the Anthropic SDK at run time or in its published types).

export type AnthropicStopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'refusal';

export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

export type AnthropicContentBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

export interface AnthropicMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: AnthropicContentBlock[];
  stop_reason: AnthropicStopReason | null;
  stop_sequence: string | null;
  usage: AnthropicUsage;
}

export interface AnthropicErrorBody {
  type: 'error';
  error: { type: string; message: string };
}

export type AnthropicDelta =
  | { type: 'text_delta'; text: string }
  | { type: 'thinking_delta'; thinking: string }
  | { type: 'signature_delta'; signature: string }
  | { type: 'input_json_delta'; partial_json: string };

export type AnthropicStreamEvent =
  | { type: 'message_start'; message: AnthropicMessage }
  | { type: 'content_block_start'; index: number; content_block: AnthropicContentBlock }
  | { type: 'content_block_delta'; index: number; delta: AnthropicDelta }
  | { type: 'content_block_stop'; index: number }
  | {
      type: 'message_delta';
      delta: { stop_reason: AnthropicStopReason | null; stop_sequence: string | null };
      usage: AnthropicUsage;
    }
  | { type: 'message_stop' }
  | AnthropicErrorBody;

// ---------------------------------------------------------------------------------------------
// Options and ids.

/** Mints ids. `kind` says which: a message id (`msg_…`) or a tool_use block id (`toolu_…`). */
export type IdGenerator = (kind: 'message' | 'tool_use') => string;

export interface AnthropicEncodeOptions {
  /** Model name for `message_start`; defaults to the `message.start` event's model, else 'unknown'. */
  model?: string;
  /** Input-token estimate for `message_start` usage, used until the backend reports usage. */
  inputTokens?: number;
  /** Id minting (inject for deterministic tests). Default: random `msg_` / `toolu_` ids. */
  idGenerator?: IdGenerator;
  /**
   * Map a plain `stop` finish to `tool_use` when tool blocks were released (for backends that end
   * tool-calling turns with `stop`). Default false: `stop` is always `end_turn` (SPEC §5.9).
   */
  toolUseOnStop?: boolean;
}

const HEX = '0123456789abcdef';

/** Default ids: `msg_` + 32 random hex chars, `toolu_` + 24 random base62 chars. */
export const randomAnthropicId: IdGenerator = (kind) =>
  kind === 'message' ? 'msg_' + randomChars(HEX, 32) : 'toolu_' + randomChars(BASE62, 24);

// ---------------------------------------------------------------------------------------------
// Stop reason and usage.

/**
 * Finish reason → Anthropic `stop_reason`, given how many tool_use blocks were released.
 * A `tool_use` stop with no tool block is never reported (it becomes `end_turn`).
 */
export function mapStopReason(
  finish: FinishReason | undefined,
  released: number,
  toolUseOnStop = false,
): AnthropicStopReason {
  switch (finish) {
    case 'stop':
      return toolUseOnStop && released > 0 ? 'tool_use' : 'end_turn';
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
      return released > 0 ? 'tool_use' : 'end_turn';
    case 'content_filter':
      return 'refusal';
    case 'stop_sequence':
      return 'stop_sequence';
    default:
      return released > 0 ? 'tool_use' : 'end_turn';
  }
}

function nonNegInt(n: number | undefined): number | undefined {
  if (n === undefined || !Number.isFinite(n)) return undefined;
  return Math.max(0, Math.floor(n));
}

/** Running Anthropic usage: cache accounting and a never-decreasing output count. */
class UsageTracker extends UsageCounter {
  snapshot(): AnthropicUsage {
    const cacheRead = this.cachedInput;
    return {
      input_tokens: this.input - cacheRead,
      output_tokens: this.outputTokens,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: cacheRead,
    };
  }
}

// ---------------------------------------------------------------------------------------------
// The shared state machine.

type OpenBlock = 'none' | 'text' | 'thinking';

/**
 * OutputEvent → Anthropic stream event objects. Used by the SSE encoder and the non-streaming
 * builder; exported for consumers that want the event objects themselves (e.g. to hand them to
 * an in-process Anthropic client).
 */
export class AnthropicEventBuilder {
  private readonly ids: IdGenerator;
  private readonly usage: UsageTracker;
  private started = false;
  private _terminated = false;
  private open: OpenBlock = 'none';
  private nextIndex = 0;
  private pendingSignature: string | undefined;
  private toolBlocks = 0;

  constructor(private readonly opts: AnthropicEncodeOptions = {}) {
    this.ids = opts.idGenerator ?? randomAnthropicId;
    this.usage = new UsageTracker(nonNegInt(opts.inputTokens) ?? 0);
  }

  /** True once `end` or `error` was handled; later events are ignored. */
  get terminated(): boolean {
    return this._terminated;
  }

  /** Whether `message_start` has been produced. */
  get messageStarted(): boolean {
    return this.started;
  }

  /** tool_use blocks produced so far. */
  get toolUseBlocks(): number {
    return this.toolBlocks;
  }

  /** Current usage as it would be reported now. */
  currentUsage(): AnthropicUsage {
    return this.usage.snapshot();
  }

  /**
   * The index of the open `kind` block when a delta of that kind is its only event (the stream is
   * started, not terminated, and that block is open), else -1: the SSE encoder's fast path.
   */
  openDeltaIndex(kind: 'text' | 'thinking'): number {
    return this.started && !this._terminated && this.open === kind ? this.nextIndex - 1 : -1;
  }

  /** Handle one OutputEvent; returns the Anthropic events it produces (possibly none). */
  push(ev: OutputEvent): AnthropicStreamEvent[] {
    if (this._terminated) return [];
    const out: AnthropicStreamEvent[] = [];
    switch (ev.type) {
      case 'message.start':
        if (!this.started) {
          this.usage.update(ev.usage);
          this.start(out, ev.model);
        } else {
          this.usage.update(ev.usage);
        }
        break;
      case 'usage':
        this.usage.update(ev.usage);
        break;
      case 'text':
        if (ev.text.length === 0) break;
        this.start(out);
        if (this.open !== 'text') {
          this.closeOpen(out);
          this.openBlock(out, { type: 'text', text: '' });
          this.open = 'text';
        }
        out.push({
          type: 'content_block_delta',
          index: this.nextIndex - 1,
          delta: { type: 'text_delta', text: ev.text },
        });
        break;
      case 'thinking':
        if (ev.text.length === 0) break;
        this.start(out);
        if (this.open !== 'thinking') {
          this.closeOpen(out);
          this.openBlock(out, { type: 'thinking', thinking: '', signature: '' });
          this.open = 'thinking';
        }
        out.push({
          type: 'content_block_delta',
          index: this.nextIndex - 1,
          delta: { type: 'thinking_delta', thinking: ev.text },
        });
        break;
      case 'thinking.signature':
        if (this.open === 'thinking' && ev.signature.length > 0) this.pendingSignature = ev.signature;
        break;
      case 'tool_use': {
        this.start(out);
        this.closeOpen(out);
        const index = this.openBlock(out, {
          type: 'tool_use',
          id: this.ids('tool_use'),
          name: ev.name,
          input: {},
        });
        if (ev.argsText.length > 0) {
          out.push({
            type: 'content_block_delta',
            index,
            delta: { type: 'input_json_delta', partial_json: ev.argsText },
          });
        }
        out.push({ type: 'content_block_stop', index });
        this.toolBlocks++;
        break;
      }
      case 'end': {
        this.start(out);
        this.closeOpen(out);
        out.push({
          type: 'message_delta',
          delta: {
            stop_reason: mapStopReason(ev.finish, ev.released, this.opts.toolUseOnStop),
            stop_sequence: null,
          },
          usage: this.usage.snapshot(),
        });
        out.push({ type: 'message_stop' });
        this._terminated = true;
        break;
      }
      case 'error':
        out.push(errorBody(ev.error));
        this._terminated = true;
        break;
    }
    return out;
  }

  private start(out: AnthropicStreamEvent[], model?: string): void {
    if (this.started) return;
    this.started = true;
    out.push({
      type: 'message_start',
      message: {
        id: this.ids('message'),
        type: 'message',
        role: 'assistant',
        model: this.opts.model ?? model ?? 'unknown',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: this.usage.snapshot(),
      },
    });
  }

  private openBlock(out: AnthropicStreamEvent[], block: AnthropicContentBlock): number {
    const index = this.nextIndex++;
    out.push({ type: 'content_block_start', index, content_block: block });
    return index;
  }

  private closeOpen(out: AnthropicStreamEvent[]): void {
    if (this.open === 'none') return;
    const index = this.nextIndex - 1;
    if (this.open === 'thinking' && this.pendingSignature !== undefined) {
      out.push({
        type: 'content_block_delta',
        index,
        delta: { type: 'signature_delta', signature: this.pendingSignature },
      });
    }
    this.pendingSignature = undefined;
    out.push({ type: 'content_block_stop', index });
    this.open = 'none';
  }
}

function errorBody(error: StreamErrorInfo): AnthropicErrorBody {
  return { type: 'error', error: { type: error.type || 'api_error', message: error.message } };
}

// ---------------------------------------------------------------------------------------------
// SSE text.

/** One SSE frame: `event: <type>\ndata: <json>\n\n`. */
export function sseFrame(event: { type: string }): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

const PING_FRAME = sseFrame({ type: 'ping' });

/**
 * The `content_block_delta` frame of a text or thinking delta, written directly: the same bytes as
 * `sseFrame` of the event object, with one JSON.stringify (of the text) and no objects.
 */
function deltaFrame(kind: 'text' | 'thinking', index: number, text: string): string {
  const delta = kind === 'text' ? '{"type":"text_delta","text":' : '{"type":"thinking_delta","thinking":';
  return `event: content_block_delta\ndata: {"type":"content_block_delta","index":${index},"delta":${delta}${JSON.stringify(text)}}}\n\n`;
}

/**
 * OutputEvents → Anthropic SSE text, frame by frame. A huge call's frames and what follows them can
 * be written a piece at a time (`enablePieces`, PiecewiseEncoder in pieces.ts).
 */
export class AnthropicSseEncoder extends PiecewiseEncoder {
  private readonly builder: AnthropicEventBuilder;

  constructor(opts: AnthropicEncodeOptions = {}) {
    super();
    this.builder = new AnthropicEventBuilder(opts);
  }

  /** SSE text for one event ('' when it produces no frame). */
  push(ev: OutputEvent): string {
    const q = this.queueFor(ev);
    if (q !== undefined) {
      for (const e of this.builder.push(q.event(ev))) q.frame(`event: ${e.type}\ndata: `, e, '\n\n');
      return q.next();
    }
    // Fast path: a delta into the block that is already open is one frame, built as a string.
    if ((ev.type === 'text' || ev.type === 'thinking') && ev.text.length > 0) {
      const index = this.builder.openDeltaIndex(ev.type);
      if (index >= 0) return deltaFrame(ev.type, index, ev.text);
    }
    const events = this.builder.push(ev);
    let text = '';
    for (const e of events) text += sseFrame(e);
    return text;
  }

  /** SSE text for a whole sequence. */
  encode(events: Iterable<OutputEvent>): string {
    let text = '';
    for (const ev of events) text += this.push(ev);
    return text;
  }

  /**
   * Terminal frames for a stream whose events stopped without `end` or `error` (engine stopped,
   * client cancelled): closes any open block, then `message_delta` (stop reason from the tool blocks
   * written so far) and `message_stop`. '' when already terminated. Keeps the SPEC §5.9 promise that
   * a client that got `message_start` always gets a terminal event.
   */
  close(): string {
    if (this.builder.terminated) return '';
    return this.push({ type: 'end', released: this.builder.toolUseBlocks });
  }

  /** An `event: ping` keep-alive frame; '' once the stream has ended (or while a frame is half written). */
  ping(): string {
    return this.builder.terminated || this.pending ? '' : PING_FRAME;
  }

  /** True once `end` or `error` was encoded. */
  get terminated(): boolean {
    return this.builder.terminated;
  }

  /** Whether `message_start` has been written (from then on the client must get a terminal frame). */
  get messageStarted(): boolean {
    return this.builder.messageStarted;
  }
}

// ---------------------------------------------------------------------------------------------
// Non-streaming body.

/**
 * Build the non-streaming Messages response body from a whole OutputEvent sequence, with the same
 * rules as the SSE encoder. Returns the error body instead when the sequence contains an `error`
 * event. A sequence without `end` is finished as if `end` (no finish reason) had come last.
 */
export function toAnthropicMessage(
  events: Iterable<OutputEvent>,
  opts: AnthropicEncodeOptions = {},
): AnthropicMessage | AnthropicErrorBody {
  const builder = new AnthropicEventBuilder(opts);
  let message: AnthropicMessage | undefined;
  const apply = (e: AnthropicStreamEvent): AnthropicErrorBody | undefined => {
    switch (e.type) {
      case 'message_start':
        message = { ...e.message, content: [], usage: { ...e.message.usage } };
        break;
      case 'content_block_start':
        message?.content.push({ ...e.content_block });
        break;
      case 'content_block_delta': {
        const block = message?.content[e.index];
        if (!block) break;
        const d = e.delta;
        if (d.type === 'text_delta' && block.type === 'text') block.text += d.text;
        else if (d.type === 'thinking_delta' && block.type === 'thinking') block.thinking += d.thinking;
        else if (d.type === 'signature_delta' && block.type === 'thinking') block.signature = d.signature;
        break;
      }
      case 'content_block_stop':
        break;
      case 'message_delta':
        if (message) {
          message.stop_reason = e.delta.stop_reason;
          message.stop_sequence = e.delta.stop_sequence;
          message.usage = { ...e.usage };
        }
        break;
      case 'message_stop':
        break;
      case 'error':
        return e;
    }
    return undefined;
  };
  for (const ev of events) {
    const produced = builder.push(ev);
    for (const e of produced) {
      const err = apply(e);
      if (err) return err;
    }
    // Tool inputs: the validated object, not a re-parse of argsText.
    if (ev.type === 'tool_use' && message) {
      const block = message.content[message.content.length - 1];
      if (block && block.type === 'tool_use') block.input = ev.input;
    }
    if (builder.terminated) break;
  }
  if (!builder.terminated) {
    for (const e of builder.push({ type: 'end', released: builder.toolUseBlocks })) apply(e);
  }
  // message is always set: `end` starts the message when nothing else did.
  return message as AnthropicMessage;
}
