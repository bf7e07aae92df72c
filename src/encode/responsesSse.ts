import type { OutputEvent } from '../release/output';
import type { StreamErrorInfo } from '../wire/events';
import { BASE62, UsageCounter, openaiErrorType, randomChars, randomId } from './openaiCommon';
import { PiecewiseEncoder } from './pieces';
import { RUN } from '../textRuns';

/**
 * OutputEvent sequence → OpenAI Responses streaming events (`ResponsesSseEncoder`, SSE with
 * `event: <type>` lines) or one Response object (`toResponsesBody`). Rules:
 *
 * - `response.created` then `response.in_progress` first (response `id` = `resp_` + random, never
 *   the backend's; `model` = the client's model name; `status: "in_progress"`).
 * - Output items in model order, one open at a time, `output_index` from 0:
 *   - thinking → a `reasoning` item: `output_item.added`, `reasoning_summary_part.added`,
 *     `reasoning_summary_text.delta`…; closed (`reasoning_summary_text.done`,
 *     `reasoning_summary_part.done`, `output_item.done` with `encrypted_content` = the last
 *     signature, if any) before any other item.
 *   - text → a `message` item: `output_item.added`, `content_part.added` (`output_text`),
 *     `output_text.delta`…; closed with `output_text.done`, `content_part.done`, `output_item.done`.
 *   - each released call → one `function_call` item, whole: `output_item.added` (empty arguments),
 *     one `function_call_arguments.delta` with the call's whole argument JSON,
 *     `function_call_arguments.done`, `output_item.done` — all at the call's release (its
 *     completion evidence, in model order), with a fresh `call_id` and item id.
 * - `end` → closes the open item, then `response.completed` (or `response.incomplete` with
 *   `incomplete_details.reason` max_output_tokens / content_filter) carrying every item and usage.
 * - `error` → an `error` event `{code, message, param}` then `response.failed` with
 *   `response.error {code, message}` and `status: "failed"` (the order OpenAI uses).
 *   Nothing after a terminal event. Every event has a `sequence_number` from 0.
 * - Keep-alive: an SSE comment (`: ping`).
 */

export interface ResponsesEncodeOptions {
  model?: string;
  inputTokens?: number;
  /** Fixed `created_at` (seconds) for deterministic tests. */
  created?: number;
  /** Told each `call_id` minted for the client (the gateway links the client's answers by it). */
  onCallId?: (id: string) => void;
  /**
   * The client's name for a flattened backend tool (src/gateway/inbound/responsesTools.ts): a
   * namespace member's call is written `function_call {name, namespace}`, a tool search
   * `tool_search_call {execution: "client", arguments}`, a freeform tool's call
   * `custom_tool_call {name, input}` (with `namespace` for a namespace member; Codex's shapes).
   */
  clientTool?: (flatName: string) => { kind: 'namespace'; namespace: string; name: string } | { kind: 'tool_search' } | { kind: 'custom'; name: string; namespace?: string } | undefined;
}

type Item = Record<string, unknown> & { type: string; id: string };

/**
 * The item being written. Its text is kept for the `.done` events and the final response as
 * EscapedRuns: JSON-escaped flat runs, so a stream's closing frames need no JSON.stringify of the
 * whole text (each made a fresh text-sized string that the socket write had to flatten again).
 */
interface OpenItem {
  item: Item;
  kind: 'reasoning' | 'message';
  escaped: EscapedRuns;
  signature?: string;
  deltaHead?: string;
  /**
   * What follows a delta's JSON string up to the last three digits of its `sequence_number`
   * (`,"logprobs":[],"sequence_number":` and the thousands), remade every 1,000 events: a delta's
   * frame then ends with a table string (`SEQ_END`), never a number made into a new string.
   */
  seqHead?: string;
  seqK?: number;
}
export type ResponsesEvent = Record<string, unknown> & { type: string };

/** OutputEvent → Responses stream event objects; shared by the SSE encoder and the body builder. */
export class ResponsesEventBuilder {
  readonly id = randomId('resp_');
  readonly created: number;
  readonly model: string;
  private readonly usage: UsageCounter;
  private readonly clientTool: ResponsesEncodeOptions['clientTool'];
  private readonly onCallId: ResponsesEncodeOptions['onCallId'];
  private seq = 0;
  private readonly items: Item[] = [];
  private open: OpenItem | undefined;
  /**
   * Set by the SSE encoder (`useStandIns`): a closed item's text is put into the event objects as a
   * stand-in string (`\u0000sluice-text-<nonce>-<n>`) and `resolveInto` puts the escaped text's runs
   * in its place in the JSON of a frame. Unset (the body builder), items carry the text itself.
   */
  private standIns: { mark: string; jsonMark: string; texts: (readonly string[])[]; bytes: (Buffer | undefined)[] } | undefined;
  private _terminated = false;
  private started = false;
  status: 'in_progress' | 'completed' | 'incomplete' | 'failed' = 'in_progress';
  error: { code: string; message: string } | null = null;
  incomplete: { reason: string } | null = null;

  constructor(opts: ResponsesEncodeOptions = {}) {
    this.created = opts.created ?? Math.floor(Date.now() / 1000);
    this.model = opts.model ?? 'unknown';
    this.usage = new UsageCounter(opts.inputTokens ?? 0);
    this.clientTool = opts.clientTool;
    this.onCallId = opts.onCallId;
  }

  get terminated(): boolean {
    return this._terminated;
  }

  /** A fresh `call_id` for the client (told to `onCallId`). */
  private callId(): string {
    const id = randomId('call_');
    this.onCallId?.(id);
    return id;
  }

  /** The Response object as it stands (output = items closed so far). */
  response(): Record<string, unknown> {
    const done = this.status !== 'in_progress';
    return {
      id: this.id,
      object: 'response',
      created_at: this.created,
      status: this.status,
      error: this.error,
      incomplete_details: this.incomplete,
      model: this.model,
      output: done ? this.items : [],
      parallel_tool_calls: true,
      tool_choice: 'auto',
      tools: [],
      usage: done
        ? {
            input_tokens: this.usage.input,
            input_tokens_details: { cached_tokens: this.usage.cachedInput },
            output_tokens: this.usage.outputTokens,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: this.usage.input + this.usage.outputTokens,
          }
        : null,
    };
  }

  /**
   * The SSE frame of a text (or reasoning summary) delta into the item that is already open, written
   * directly: the same bytes as the event object through JSON.stringify, with one JSON.stringify
   * (of the text) and no objects. Undefined when the delta needs other events first (or none).
   */
  deltaFrame(kind: 'text' | 'thinking', text: string): string | undefined {
    const o = this.open;
    if (this._terminated || text.length === 0 || o === undefined || o.kind !== (kind === 'text' ? 'message' : 'reasoning')) return undefined;
    o.escaped.add(text);
    // Everything up to the delta is the same for every delta of the open item: built once per item.
    o.deltaHead ??=
      kind === 'text'
        ? `${TEXT_DELTA_HEAD}${JSON.stringify(o.item.id)},"output_index":${this.items.length},"content_index":0,"delta":`
        : `${SUMMARY_DELTA_HEAD}${JSON.stringify(o.item.id)},"output_index":${this.items.length},"summary_index":0,"delta":`;
    const n = this.seq++;
    const k = Math.floor(n / 1000);
    if (o.seqK !== k) {
      o.seqK = k;
      const mid = kind === 'text' ? ',"logprobs":[],"sequence_number":' : ',"sequence_number":';
      o.seqHead = k === 0 ? mid : mid + decimal(k);
    }
    return o.deltaHead + JSON.stringify(text) + o.seqHead! + (k === 0 ? SEQ_END[n]! : SEQ_END3[n % 1000]!);
  }

  /** Closed items' texts as stand-ins from now on (the SSE encoder: `resolveInto` each frame's JSON). */
  useStandIns(): void {
    if (this.standIns !== undefined) return;
    const mark = `\u0000sluice-text-${randomChars(BASE62, 24)}-`;
    this.standIns = { mark, jsonMark: JSON.stringify(mark).slice(0, -1), texts: [], bytes: [] };
  }

  /** Back to the texts themselves in the items (for a writer that serializes the objects itself). */
  dropStandIns(): void {
    const s = this.standIns;
    if (s === undefined) return;
    this.standIns = undefined;
    const real = (t: unknown): unknown => (typeof t === 'string' && t.startsWith(s.mark) ? JSON.parse(`"${s.texts[Number(t.slice(s.mark.length))]!.join('')}"`) : t);
    for (const item of this.items) {
      const parts = item.type === 'reasoning' ? item.summary : item.type === 'message' ? item.content : undefined;
      if (Array.isArray(parts)) for (const p of parts as { text: unknown }[]) p.text = real(p.text);
    }
  }

  /**
   * The JSON of an event with each stand-in replaced by its escaped text (as JSON.stringify writes
   * it), appended to `parts`: the texts' runs themselves, never a copy joined with the rest — or,
   * for a text of more than `bytesOver` escaped chars, its UTF-8 bytes (`textBytes`, made once).
   */
  resolveInto(json: string, parts: (string | Buffer)[], bytesOver = Infinity): void {
    const s = this.standIns;
    const mark = s?.jsonMark; // the stand-ins' start as JSON writes it
    let at = mark === undefined ? -1 : json.indexOf(mark);
    let from = 0;
    while (at >= 0) {
      const end = json.indexOf('"', at + mark!.length);
      parts.push(json.slice(from, at + 1));
      const n = Number(json.slice(at + mark!.length, end));
      const runs = s!.texts[n]!;
      if (bytesOver < Infinity && escapedChars(runs) > bytesOver) parts.push(this.textBytes(n));
      else for (const run of runs) parts.push(run); // not spread: a long text has many runs
      from = end;
      at = json.indexOf(mark!, from);
    }
    parts.push(from === 0 ? json : json.slice(from));
  }

  /**
   * Stand-in `n`'s escaped text as UTF-8, made once: an item's closing frames repeat its text four
   * times (`.done`, the part's `.done`, `output_item.done`, `response.completed`), and a writer
   * that takes bytes writes this one buffer each time instead of encoding the text again.
   */
  private textBytes(n: number): Buffer {
    const s = this.standIns!;
    let buf = s.bytes[n];
    if (buf === undefined) {
      const runs = s.texts[n]!;
      let size = 0;
      for (const run of runs) size += Buffer.byteLength(run);
      buf = Buffer.allocUnsafe(size);
      let at = 0;
      for (const run of runs) at += buf.write(run, at);
      s.bytes[n] = buf;
    }
    return buf;
  }

  private ev(out: ResponsesEvent[], e: ResponsesEvent): void {
    out.push({ ...e, sequence_number: this.seq++ });
  }

  start(): ResponsesEvent[] {
    if (this.started) return [];
    this.started = true;
    const out: ResponsesEvent[] = [];
    this.ev(out, { type: 'response.created', response: this.response() });
    this.ev(out, { type: 'response.in_progress', response: this.response() });
    return out;
  }

  push(e: OutputEvent): ResponsesEvent[] {
    if (this._terminated) return [];
    const out = this.start();
    switch (e.type) {
      case 'message.start':
      case 'usage':
        this.usage.update(e.usage);
        break;
      case 'thinking':
        if (e.text.length === 0) break;
        this.openItem(out, 'reasoning');
        this.open!.escaped.add(e.text);
        this.ev(out, { type: 'response.reasoning_summary_text.delta', item_id: this.open!.item.id, output_index: this.items.length, summary_index: 0, delta: e.text });
        break;
      case 'thinking.signature':
        if (this.open?.kind === 'reasoning' && e.signature.length > 0) this.open.signature = e.signature;
        break;
      case 'text':
        if (e.text.length === 0) break;
        this.openItem(out, 'message');
        this.open!.escaped.add(e.text);
        this.ev(out, { type: 'response.output_text.delta', item_id: this.open!.item.id, output_index: this.items.length, content_index: 0, delta: e.text, logprobs: [] });
        break;
      case 'tool_use': {
        this.closeOpen(out);
        const args = e.argsText.length > 0 ? e.argsText : '{}';
        const ref = this.clientTool?.(e.name);
        const output_index = this.items.length;
        if (ref?.kind === 'tool_search' || ref?.kind === 'custom') {
          const input = typeof e.input.input === 'string' ? e.input.input : JSON.stringify(e.input);
          const item: Item =
            ref.kind === 'custom'
              ? { type: 'custom_tool_call', id: randomId('ctc_'), call_id: this.callId(), name: ref.name, ...(ref.namespace !== undefined ? { namespace: ref.namespace } : {}), input, status: 'completed' }
              : { type: 'tool_search_call', id: randomId('tsc_'), call_id: this.callId(), execution: 'client', arguments: e.input, status: 'completed' };
          this.ev(out, { type: 'response.output_item.added', output_index, item: { ...item, status: 'in_progress' } });
          this.items.push(item);
          this.ev(out, { type: 'response.output_item.done', output_index, item });
          break;
        }
        const id = randomId('fc_');
        const call_id = this.callId();
        const base = ref?.kind === 'namespace' ? { type: 'function_call', id, call_id, name: ref.name, namespace: ref.namespace } : { type: 'function_call', id, call_id, name: e.name };
        this.ev(out, { type: 'response.output_item.added', output_index, item: { ...base, arguments: '', status: 'in_progress' } });
        this.ev(out, { type: 'response.function_call_arguments.delta', item_id: id, output_index, delta: args });
        this.ev(out, { type: 'response.function_call_arguments.done', item_id: id, output_index, arguments: args });
        const item: Item = { ...base, arguments: args, status: 'completed' };
        this.items.push(item);
        this.ev(out, { type: 'response.output_item.done', output_index, item });
        break;
      }
      case 'end':
        this.closeOpen(out);
        if (e.finish === 'length') {
          this.status = 'incomplete';
          this.incomplete = { reason: 'max_output_tokens' };
        } else if (e.finish === 'content_filter') {
          this.status = 'incomplete';
          this.incomplete = { reason: 'content_filter' };
        } else this.status = 'completed';
        this.ev(out, { type: this.status === 'completed' ? 'response.completed' : 'response.incomplete', response: this.response() });
        this._terminated = true;
        break;
      case 'error':
        this.closeOpen(out);
        this.fail(out, e.error);
        break;
    }
    return out;
  }

  private fail(out: ResponsesEvent[], error: StreamErrorInfo): void {
    this.status = 'failed';
    this.error = { code: error.type || 'api_error', message: error.message };
    // As OpenAI does: an `error` event, then `response.failed` carrying the same error.
    this.ev(out, { type: 'error', code: this.error.code, message: error.message, param: null });
    this.ev(out, { type: 'response.failed', response: this.response() });
    this._terminated = true;
  }

  private openItem(out: ResponsesEvent[], kind: 'reasoning' | 'message'): void {
    if (this.open?.kind === kind) return;
    this.closeOpen(out);
    const output_index = this.items.length;
    if (kind === 'reasoning') {
      const item: Item = { type: 'reasoning', id: randomId('rs_'), summary: [] };
      this.open = { item, kind, escaped: new EscapedRuns() };
      this.ev(out, { type: 'response.output_item.added', output_index, item });
      this.ev(out, { type: 'response.reasoning_summary_part.added', item_id: item.id, output_index, summary_index: 0, part: { type: 'summary_text', text: '' } });
    } else {
      const item: Item = { type: 'message', id: randomId('msg_'), role: 'assistant', status: 'in_progress', content: [] };
      this.open = { item, kind, escaped: new EscapedRuns() };
      this.ev(out, { type: 'response.output_item.added', output_index, item });
      this.ev(out, { type: 'response.content_part.added', item_id: item.id, output_index, content_index: 0, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } });
    }
  }

  private closeOpen(out: ResponsesEvent[]): void {
    const o = this.open;
    if (!o) return;
    this.open = undefined;
    const output_index = this.items.length;
    const id = o.item.id;
    let text: string;
    if (this.standIns !== undefined) {
      text = `${this.standIns.mark}${this.standIns.texts.length}`;
      this.standIns.texts.push(o.escaped.flatRuns());
    } else text = JSON.parse(`"${o.escaped.flatRuns().join('')}"`) as string;
    let item: Item;
    if (o.kind === 'reasoning') {
      const part = { type: 'summary_text', text };
      this.ev(out, { type: 'response.reasoning_summary_text.done', item_id: id, output_index, summary_index: 0, text });
      this.ev(out, { type: 'response.reasoning_summary_part.done', item_id: id, output_index, summary_index: 0, part });
      item = { type: 'reasoning', id, summary: [part] };
      if (o.signature !== undefined) item.encrypted_content = o.signature;
    } else {
      const part = { type: 'output_text', text, annotations: [], logprobs: [] };
      this.ev(out, { type: 'response.output_text.done', item_id: id, output_index, content_index: 0, text, logprobs: [] });
      this.ev(out, { type: 'response.content_part.done', item_id: id, output_index, content_index: 0, part });
      item = { type: 'message', id, role: 'assistant', status: 'completed', content: [part] };
    }
    this.items.push(item);
    this.ev(out, { type: 'response.output_item.done', output_index, item });
  }
}

/**
 * Closing-frame pieces: 32 Ki chars stays under V8's regular-object limit (128 KiB) even when the
 * text is two bytes a char, so a piece is flattened and encoded in the young generation.
 */
const TAIL_PIECE = 32 * 1024;

/**
 * `parts` joined and cut into strings of ≤ `size` chars, never between the halves of a surrogate
 * pair; a buffer among them (a long text's bytes) is a piece of its own, as it is.
 */
function cutPieces(parts: readonly (string | Buffer)[], size: number): (string | Buffer)[] {
  const pieces: (string | Buffer)[] = [];
  let cur = '';
  for (const p of parts) {
    if (typeof p !== 'string') {
      if (cur.length > 0) pieces.push(cur);
      cur = '';
      pieces.push(p);
      continue;
    }
    let at = 0;
    while (at < p.length) {
      let end = Math.min(p.length, at + size - cur.length);
      if (end < p.length && end - at > 1) {
        const c = p.charCodeAt(end - 1);
        if (c >= 0xd800 && c <= 0xdbff) end--;
      }
      cur += at === 0 && end === p.length ? p : p.slice(at, end);
      at = end;
      if (cur.length >= size - 1) {
        pieces.push(cur);
        cur = '';
      }
    }
  }
  if (cur.length > 0) pieces.push(cur);
  return pieces;
}

/** Characters of escaped runs. */
function escapedChars(runs: readonly string[]): number {
  let n = 0;
  for (const run of runs) n += run.length;
  return n;
}

/**
 * A long text from many deltas, kept JSON-escaped (the inside of `JSON.stringify(text)`) in flat
 * runs: every RUN deltas are joined and escaped together (one JSON.stringify per run, none per
 * delta; the deltas are held for at most RUN of them, as src/textRuns.ts does). A run that ends in a high
 * surrogate carries it to the next: `JSON.stringify` escapes a lone surrogate but writes a pair as
 * is, so the halves of a pair must be escaped together.
 */
class EscapedRuns {
  private readonly runs: string[] = [];
  private readonly pending: string[] = [];
  private carry = '';

  add(text: string): void {
    const p = this.pending;
    p.push(text);
    if (p.length >= RUN) this.run(false);
  }

  /** The escaped runs (the text is complete: a surrogate carried last is escaped alone). */
  flatRuns(): readonly string[] {
    this.run(true);
    return this.runs;
  }

  private run(last: boolean): void {
    let raw = this.carry + this.pending.join('');
    this.pending.length = 0;
    this.carry = '';
    const c = raw.charCodeAt(raw.length - 1);
    if (!last && c >= 0xd800 && c <= 0xdbff) {
      this.carry = raw.slice(-1);
      raw = raw.slice(0, -1);
    }
    if (raw.length > 0) this.runs.push(JSON.stringify(raw).slice(1, -1));
  }
}

/** '0'…'999', and the same three digits wide ('000'…): made once. */
const DIGITS = Array.from({ length: 1000 }, (_, i) => String(i));
const DIGITS3 = DIGITS.map((d) => d.padStart(3, '0'));
/** A delta frame's end: the last digits of its `sequence_number` and `}\n\n` ('7}\n\n', '007}\n\n'). */
const SEQ_END = DIGITS.map((d) => `${d}}\n\n`);
const SEQ_END3 = DIGITS3.map((d) => `${d}}\n\n`);

/**
 * `String(n)` for a non-negative integer, without V8's number-string cache: `${n}` of a new number
 * enters that cache, which keeps the last several thousand such strings alive through every young
 * collection (copied, then promoted). For a delta's `sequence_number` that was ~10 MB more promoted
 * per 100k-delta text flood and about half of /v1/responses' GC time (bench/textPath.ts, --trace-gc-nvp).
 */
export function decimal(n: number): string {
  return n < 1000 ? DIGITS[n]! : decimal(Math.floor(n / 1000)) + DIGITS3[n % 1000]!;
}

const TEXT_DELTA_HEAD = 'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","item_id":';
const SUMMARY_DELTA_HEAD = 'event: response.reasoning_summary_text.delta\ndata: {"type":"response.reasoning_summary_text.delta","item_id":';

/**
 * OutputEvents → Responses SSE text (`event: <type>` + `data: <json>`). Once a call's arguments
 * exceed ARG_PIECE_CHARS, its frames and every later one (the final response.completed carries the
 * arguments again) are written a piece at a time (PiecewiseEncoder, pieces.ts).
 */
export class ResponsesSseEncoder extends PiecewiseEncoder {
  private readonly b: ResponsesEventBuilder;
  /**
   * Closing frames longer than TAIL_PIECE chars (a long item's text, repeated by three `.done`
   * events and `response.completed`), when the consumer drains pieces: the pieces after the first,
   * for `more()`. One string of several MB costs the socket write a flat copy in V8's large-object
   * space (~5 ns/byte on this machine, 20-30 ms for a 100k-delta text's closing frames); pieces under
   * the regular-object limit cost ~0.3 ns/byte (bench/textPath.ts, docs/benchmarks.md).
   */
  private tail: (string | Buffer)[] = [];
  private tailAt = 0;
  constructor(opts: ResponsesEncodeOptions = {}) {
    super();
    this.b = new ResponsesEventBuilder(opts);
    this.b.useStandIns();
  }
  start(): string {
    return this.frames(this.b.start());
  }
  override get pending(): boolean {
    return super.pending || this.tailAt < this.tail.length;
  }
  /** Held closing pieces first, then the queue's (as text: `piece()` gives a long text's bytes as they are). */
  override more(): string {
    const p = this.piece();
    return typeof p === 'string' ? p : p.toString();
  }
  /** Held closing pieces first (a long item text's UTF-8, shared by the frames that repeat it), then the queue's. */
  override piece(): string | Buffer {
    if (this.tailAt < this.tail.length) {
      const piece = this.tail[this.tailAt]!;
      // Not kept once handed out: the write flattens it (a 32 Ki-char copy), which the array would keep alive.
      this.tail[this.tailAt++] = '';
      if (this.tailAt === this.tail.length) {
        this.tail = [];
        this.tailAt = 0;
      }
      return piece;
    }
    return super.more();
  }
  push(ev: OutputEvent): string {
    const fresh = this.q === undefined;
    const q = this.queueFor(ev, true); // once made, every later frame goes through the queue
    if (q !== undefined) {
      if (fresh) this.b.dropStandIns(); // the queue serializes the objects itself
      for (const e of this.b.push(q.event(ev))) q.frame(`event: ${e.type}\ndata: `, e, '\n\n');
      return this.tailAt < this.tail.length ? '' : q.next(); // after the held closing pieces (`more`)
    }
    if (ev.type === 'text' || ev.type === 'thinking') {
      const frame = this.b.deltaFrame(ev.type, ev.text);
      if (frame !== undefined) return this.tailAt < this.tail.length ? this.hold([frame]) : frame;
    }
    return this.frames(this.b.push(ev));
  }
  /** Text after held pieces waits behind them: added to the last piece while it has room (`more`). */
  private hold(pieces: readonly (string | Buffer)[]): string {
    const t = this.tail;
    for (const p of pieces) {
      const last = t[t.length - 1]!;
      if (typeof p === 'string' && typeof last === 'string' && last.length + p.length <= TAIL_PIECE) t[t.length - 1] = last + p;
      else t.push(p);
    }
    return '';
  }
  private frames(events: ResponsesEvent[]): string {
    const parts: (string | Buffer)[] = [];
    // A consumer of pieces takes a long text as bytes: one UTF-8 copy for all the frames that carry it.
    const bytesOver = this.piecewise ? TAIL_PIECE : Infinity;
    let chars = 0;
    let bytes = false;
    for (const e of events) {
      const n = parts.length;
      parts.push(`event: ${e.type}\ndata: `);
      this.b.resolveInto(JSON.stringify(e), parts, bytesOver);
      parts.push('\n\n');
      for (let i = n; i < parts.length; i++) {
        const p = parts[i]!;
        chars += p.length;
        if (typeof p !== 'string') bytes = true;
      }
    }
    const held = this.tailAt < this.tail.length;
    if (!bytes && (!this.piecewise || (!held && chars <= 2 * TAIL_PIECE))) {
      let s = '';
      for (const p of parts) s += p as string;
      return s;
    }
    // Held pieces go first: what follows them waits its turn behind them.
    const pieces = cutPieces(parts, TAIL_PIECE);
    if (held) return this.hold(pieces);
    this.tail = pieces;
    const first = pieces[0]!;
    if (typeof first !== 'string') {
      this.tailAt = 0;
      return '';
    }
    this.tailAt = 1;
    return first;
  }
  ping(): string {
    return this.b.terminated || this.pending ? '' : ': ping\n\n';
  }
  get terminated(): boolean {
    return this.b.terminated;
  }
}

/** The non-streaming Response object, or the error when the sequence failed. */
export function toResponsesBody(
  events: Iterable<OutputEvent>,
  opts: ResponsesEncodeOptions = {},
): { ok: true; body: Record<string, unknown> } | { ok: false; error: StreamErrorInfo; body: Record<string, unknown> } {
  const b = new ResponsesEventBuilder(opts);
  let released = 0;
  for (const ev of events) {
    if (ev.type === 'error') {
      b.push(ev);
      return { ok: false, error: ev.error, body: { error: { message: ev.error.message, type: openaiErrorType(ev.error.type), param: null, code: ev.error.type } } };
    }
    if (ev.type === 'tool_use') released++;
    b.push(ev);
    if (b.terminated) break;
  }
  if (!b.terminated) b.push({ type: 'end', released });
  return { ok: true, body: b.response() };
}
