/**
 * Small helpers shared by the provider adapters. Nothing here allocates on the hot path beyond the
 * event objects themselves.
 */
import type { Adapter, StreamEvent, WireFormat } from './events';
import { truncatedError, unaryCompletion, unaryError } from './integrity';

export type Obj = Record<string, unknown>;

/**
 * Where adapters append events. An array works; the stream reader passes a collector that keeps
 * one growing buffer and hands out exact-size arrays (an empty `[]` that is pushed into costs a
 * 17-slot backing store: that was most of the reader's allocation per event).
 */
export interface EventSink {
  push(e: StreamEvent): unknown;
}

/** Reusable sink: `take()` returns the events collected since the last take, as a new packed array. */
export class EventCollector implements EventSink {
  private items: StreamEvent[] = [];
  private n = 0;
  push(e: StreamEvent): void {
    this.items[this.n++] = e;
  }
  take(): StreamEvent[] {
    const n = this.n;
    if (n === 0) return [];
    const items = this.items;
    if (n === 1) {
      // The common case on a token stream: one event per chunk.
      const e = items[0];
      items[0] = undefined as unknown as StreamEvent;
      this.n = 0;
      return [e];
    }
    const out = items.slice(0, n);
    // Drop references so returned events (and their text) are not retained by the reader.
    for (let i = 0; i < n; i++) items[i] = undefined as unknown as StreamEvent;
    if (n > 1024) this.items = [];
    this.n = 0;
    return out;
  }
}

export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A non-empty string, or undefined (empty strings mean "not known" in the event contract). */
export function nonEmpty(v: unknown): string | undefined {
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

export function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

export function warning(code: string, message: string): StreamEvent {
  return { type: 'warning', code, message };
}

/** Warning code for a position (call index, block index, output_index, path position) that is refused. */
export const INVALID_INDEX = 'invalid_index';

/**
 * The one check for a position a producer sends (docs/limits.md: a negative, fractional or
 * non-number index is refused): a non-negative safe integer passes; absent (`undefined`) is
 * `undefined` (the adapter's own fallback applies); anything else (-1, 0.5, "0", null, true, NaN)
 * is `REFUSED_INDEX`. A refused position never becomes a call: the adapter drops what it carried and
 * emits `refusedIndex(...)`.
 */
export function wireIndex(v: unknown): number | undefined {
  if (v === undefined) return undefined;
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : REFUSED_INDEX;
}
export const REFUSED_INDEX = -1;

/** A position written as text (a JSON path `[3]`, a text-format attribute): decimal digits only. */
export function textIndex(s: string): number {
  if (s.length === 0 || s.length > 15) return REFUSED_INDEX;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return REFUSED_INDEX;
  }
  if (s.length > 1 && s.charCodeAt(0) === 48) return REFUSED_INDEX; // "01"
  return Number(s);
}

/** The `invalid_index` warning: names the field and the value's kind (a number is shown). */
export function refusedIndex(format: string, field: string, v: unknown): StreamEvent {
  const what = typeof v === 'number' ? String(v) : describe(v);
  return warning(INVALID_INDEX, `${format}: ${field} ${what} is not a non-negative integer; refused`);
}

/** Describe a payload for a warning without quoting its contents. */
export function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return `array(${v.length})`;
  if (typeof v === 'string') return `string(${v.length} chars)`;
  return typeof v;
}

/**
 * Base for adapters: `push`/`end` allocate the result array; the stream reader calls `pushInto`
 * with one shared array per write to avoid an array per payload.
 */
export abstract class BaseAdapter implements Adapter {
  abstract readonly format: WireFormat;
  private warned: Set<string> | undefined;
  private ended = false;
  /**
   * The format's terminal signal arrived (src/wire/integrity.ts): set by the adapter. Without it
   * `end()` sends a `stream_truncated` error before `stream.end` (SPEC §12).
   */
  protected terminal = false;
  /** The stream already reported an error (set by the adapter): no truncation error on top. */
  protected failed = false;
  /** No payload yet: the first one is checked for a unary completion (then `bad`). */
  private fresh = true;
  /** The input is not this format's stream (a unary completion): the rest is ignored. */
  private bad = false;
  /** Past the first payload, not bad, not ended: the hot path's one check. */
  private live = false;

  push(payload: unknown): StreamEvent[] {
    const out: StreamEvent[] = [];
    this.pushInto(payload, out);
    return out;
  }

  end(): StreamEvent[] {
    const out: StreamEvent[] = [];
    this.endInto(out);
    return out;
  }

  /** Append the events for one payload to `out`. */
  pushInto(payload: unknown, out: EventSink): void {
    // Hot path: an object payload before end().
    if (this.live && typeof payload === 'object' && payload !== null && !Array.isArray(payload)) {
      this.onPayload(payload as Obj, out);
      return;
    }
    if (this.bad) return;
    if (this.fresh && !this.ended && isObj(payload)) {
      this.fresh = false;
      const unary = unaryCompletion(payload);
      if (unary !== undefined) {
        this.bad = true;
        this.failed = true;
        out.push(unaryError(this.format, unary));
        return;
      }
      this.live = true;
    }
    if (this.ended) {
      this.warnOnce(out, 'payload_after_end', 'payload pushed after end() ignored');
      return;
    }
    if (payload === '[DONE]') {
      this.onDone(out);
      return;
    }
    if (Array.isArray(payload) && this.acceptsArrays) {
      for (const p of payload) this.pushInto(p, out);
      return;
    }
    if (!isObj(payload)) {
      out.push(warning('bad_payload', `${this.format}: expected a JSON object, got ${describe(payload)}`));
      return;
    }
    this.onPayload(payload, out);
  }

  /** The reader reported an error for this stream (an `event: error` frame, a limit): no truncation error on top. */
  markFailed(): void {
    this.failed = true;
  }

  /** Append the end-of-stream events (always ending with `stream.end`) to `out`. */
  endInto(out: EventSink): void {
    if (this.ended) return;
    this.ended = true;
    this.live = false;
    if (!this.terminal && !this.failed) out.push(truncatedError(this.format, this.fresh ? 'no event of this format arrived' : undefined));
    if (!this.bad) this.onEnd(out);
    out.push({ type: 'stream.end' });
  }


  /**
   * The reader's fast path (src/wire/skim.ts): handle one SSE `data:` string without `JSON.parse`
   * when it is a payload the adapter reads in place (a plain text/thinking delta). False: not
   * handled and nothing emitted — the reader parses it and calls `pushInto`.
   *
   * A run of payloads the fast path does not take (a tool call's argument deltas) would pay for a
   * failed skim before every parse, so after consecutive misses the next 1, 3, 7, … 63 payloads go
   * straight to the parser; one hit resets it. Only the cost changes: both paths emit the same events.
   */
  pushRaw(data: string, out: EventSink): boolean {
    if (this.ended || this.bad) return false;
    if (this.rawSkip > 0) {
      this.rawSkip--;
      return false;
    }
    if (this.onRaw(data, out)) {
      if (this.fresh) {
        this.fresh = false; // a stream delta: no unary completion
        this.live = true;
      }
      this.rawMisses = 0;
      return true;
    }
    this.rawSkip = (1 << this.rawMisses) - 1;
    if (this.rawMisses < 6) this.rawMisses++;
    return false;
  }

  /** Payloads left to send straight to the parser, and consecutive fast-path misses (see `pushRaw`). */
  private rawSkip = 0;
  private rawMisses = 0;

  /** See `pushRaw`. Must emit exactly what `JSON.parse` + `onPayload` would, or return false having emitted nothing. */
  protected onRaw(_data: string, _out: EventSink): boolean {
    return false;
  }

  /** Arrays of payloads are unpacked (Gemini's non-SSE stream is a JSON array). */
  protected acceptsArrays = false;

  protected abstract onPayload(payload: Obj, out: EventSink): void;
  protected onDone(_out: EventSink): void {
    // '[DONE]' carries no information beyond "the stream ends"; end() closes the stream.
  }
  protected onEnd(_out: EventSink): void {}

  /** A refused position (see `wireIndex`): one `invalid_index` warning per field and value. */
  protected refuseIndex(out: EventSink, field: string, v: unknown): void {
    const e = refusedIndex(this.format, field, v) as StreamEvent & { type: 'warning' };
    this.warnOnce(out, e.code, e.message, `${INVALID_INDEX}:${e.message}`);
  }

  /** Emit a warning once per key for the life of the adapter. */
  protected warnOnce(out: EventSink, code: string, message: string, key: string = code): void {
    this.warned ??= new Set();
    if (this.warned.has(key)) return;
    this.warned.add(key);
    out.push(warning(code, message));
  }
}

/** Adapters built on BaseAdapter expose `pushInto`/`endInto`; others only `push`/`end`. */
export interface FastAdapter extends Adapter {
  pushInto(payload: unknown, out: EventSink): void;
  /** Optional fast path for one SSE data string (BaseAdapter.pushRaw). */
  pushRaw?(data: string, out: EventSink): boolean;
  endInto(out: EventSink): void;
}

export function isFastAdapter(a: Adapter): a is FastAdapter {
  return (
    typeof (a as Partial<FastAdapter>).pushInto === 'function' &&
    typeof (a as Partial<FastAdapter>).endInto === 'function'
  );
}

/** The error type an HTTP status stands for when the body names none (SDK, AI SDK and fetch errors alike). */
export const STATUS_ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  408: 'timeout_error',
  409: 'conflict_error',
  413: 'request_too_large',
  422: 'invalid_request_error',
  429: 'rate_limit_error',
  529: 'overloaded_error',
};
