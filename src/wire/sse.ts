/**
 * Incremental Server-Sent Events decoder (WHATWG HTML "event stream interpretation").
 *
 * Input: the response body, in chunks of any size, as strings or bytes. Chunks may split anywhere:
 * inside a line, between the CR and LF of a CRLF pair, inside a multi-byte UTF-8 character (bytes
 * go through one streaming `TextDecoder`).
 *
 * Output: one `SseMessage` per dispatched event.
 *
 * Behaviour (spec unless marked *):
 * - Lines end with LF, CRLF or CR. A leading U+FEFF BOM is dropped once, at the start of the stream.
 * - `:comment` lines are ignored (keep-alives) *but collected per event block: a dispatched message
 *   carries the block's comments in `comments` (Dynamo puts its error text in a comment line).
 * - `data:` lines are joined with `\n`; one optional space after the colon is removed; a line
 *   without a colon is a field with an empty value.
 * - `event:` sets the message's `event` (left `undefined` when absent: the spec's default type is
 *   "message"). `id:` sets the last event id, which persists across events (values containing NUL are
 *   ignored) and is reported as `id` when non-empty. `retry:` and unknown fields are ignored.
 * - An event is dispatched at a blank line, only if it had at least one `data:` line. *With
 *   `dispatchDataless: true`, a block with an `event:` field but no data is dispatched too, with
 *   `data: ''` and `dataless: true` (Dynamo's `event: error` frames have no data line).
 * - End of stream: an event without its terminating blank line is NOT dispatched (spec). `end()`
 *   reports it with `truncated: true`. *With `lenientEof: true` it is dispatched anyway (for
 *   hand-edited recordings whose final newline was stripped); `truncated` is still reported.
 * - *Size cap: an event whose field values and comment lines exceed `maxEventChars` (default
 *   64 Mi UTF-16 code units, roughly 64 MiB of ASCII) is dropped: its pieces are released as soon
 *   as the cap is crossed, `onWarning('sse_event_too_large', …)` is called once for it, and
 *   decoding resumes at the next event. The cap bounds a single line too (an unterminated line
 *   counts as it arrives), and comment lines count, so a stream of comments without a blank line
 *   cannot grow memory either. The stream reader (src/wire/index.ts) turns the warning into a
 *   non-retryable `limit_exceeded` stream error: a dropped event would silently lose data.
 *
 * - *Pieces (`pieces`, src/wire/pieces.ts): once an event's data grows past `pieceThreshold`
 *   (default 256 Ki code units) it is handed to the piece sink instead of being joined: `begin`
 *   gets the data so far, `more` each later piece as it arrives (a `\n` between data lines), `end`
 *   the event's blank line, `abort` a cut or dropped event. The sink may decline (`begin` → false):
 *   the event is then collected as usual. Data handed to the sink does not count toward
 *   `maxEventChars` (the sink bounds what it keeps itself).
 *
 * Cost: O(total input). Each new chunk is scanned once; an unfinished line is kept as a list of
 * pieces and joined once when its end arrives (never re-scanned per chunk).
 */

import { TextDecoder } from 'node:util';

export interface SseMessage {
  /** The `event:` field, when the event had one. */
  event?: string;
  /** The `data:` lines joined with `\n`. */
  data: string;
  /** The last event id (persists across events, per spec), when non-empty. */
  id?: string;
  /** Comment lines (without the leading `:` and one optional space) that were inside this event block. */
  comments?: string[];
  /** True when the message was dispatched without any `data:` line (only with `dispatchDataless`). */
  dataless?: boolean;
}

/** Takes over a huge event's data piece by piece (see the `pieces` option; src/wire/pieces.ts). */
export interface SsePieceSink {
  /** The event's data grew past the threshold: `head` is the data so far. False: decline. */
  begin(head: string, event: string | undefined): boolean;
  /** The next piece of the event's data. */
  more(text: string): void;
  /** The event's blank line. */
  end(): void;
  /** The event was cut by the end of the stream or dropped over the cap. */
  abort(): void;
}

export const DEFAULT_PIECE_THRESHOLD = 256 * 1024;

export interface SseDecoderOptions {
  /** Hand events whose data grows past `pieceThreshold` to this sink (see the class comment). */
  pieces?: SsePieceSink;
  /** Data size (UTF-16 code units) from which an event goes to `pieces`. Default 256 Ki. */
  pieceThreshold?: number;
  /** Cap on one event's accumulated field values, in UTF-16 code units. Default 64 Mi. */
  maxEventChars?: number;
  /** Dispatch event blocks that have an `event:` field but no `data:` line. Default false (spec). */
  dispatchDataless?: boolean;
  /** Dispatch an event cut by end of stream (no blank line). Default false (spec). */
  lenientEof?: boolean;
  /** Called for recoverable problems (`sse_event_too_large`). Never receives event contents. */
  onWarning?: (code: string, message: string) => void;
  /**
   * Receive each message through this callback instead of the arrays returned by `feed`/`end`
   * (which are then always empty). Saves an array per chunk on the hot path.
   */
  onMessage?: (message: SseMessage) => void;
  /**
   * Hot-path variant of `onMessage` (used by the stream reader): ordinary messages (with data, no
   * comments) arrive as `(data, event)` without a message object; the others still go to
   * `onMessage`. Requires `onMessage`.
   */
  onData?: (data: string, event: string | undefined) => void;
}

export interface SseEndResult {
  /** Messages completed by flushing the decoder (and, with `lenientEof`, the cut event). */
  messages: SseMessage[];
  /** True when the stream ended inside an event (fields seen, no terminating blank line). */
  truncated: boolean;
}

export const DEFAULT_MAX_EVENT_CHARS = 64 * 1024 * 1024;

const LF = 10;
const CR = 13;
const COLON = 58;
const SPACE = 32;

export class SseDecoder {
  private readonly maxEventChars: number;
  private readonly dispatchDataless: boolean;
  private readonly lenientEof: boolean;
  private readonly onWarning?: (code: string, message: string) => void;
  private readonly onMessage?: (message: SseMessage) => void;
  private readonly onData?: (data: string, event: string | undefined) => void;
  private readonly sink?: SsePieceSink;
  private readonly pieceThreshold: number;

  private textDecoder: TextDecoder | undefined;
  /** No UTF-8 sequence is open: the bytes so far ended with an ASCII byte (or there were none). */
  private bytesClean = true;
  private started = false; // BOM check done
  private ended = false;
  /** The previous chunk ended with CR: a LF at the start of the next chunk belongs to it. */
  private skipLeadingLF = false;
  /** Pieces of the current unfinished line. */
  private partial: string[] = [];
  private partialChars = 0;
  /** The current line is over the cap: skip to its end. */
  private discardingLine = false;
  /** The current event's data goes to the piece sink. */
  private piecing = false;
  /** The current unfinished line is a data line whose text goes to the piece sink as it arrives. */
  private pieceLine = false;
  /** The piece sink declined this event (or its big line is not a data line): do not ask again. */
  private pieceDeclined = false;

  // Current event block.
  private data = '';
  private hasData = false;
  private eventType: string | undefined = undefined;
  private comments: string[] | undefined = undefined;
  private eventChars = 0;
  private hasFields = false;
  /** The current event went over the cap: ignore its remaining lines, do not dispatch. */
  private dropping = false;
  private lastEventId = '';

  private out: SseMessage[] = [];

  constructor(options: SseDecoderOptions = {}) {
    this.maxEventChars = options.maxEventChars ?? DEFAULT_MAX_EVENT_CHARS;
    this.dispatchDataless = options.dispatchDataless ?? false;
    this.lenientEof = options.lenientEof ?? false;
    this.onWarning = options.onWarning;
    this.onMessage = options.onMessage;
    this.onData = options.onMessage !== undefined ? options.onData : undefined;
    this.sink = options.pieces;
    this.pieceThreshold = options.pieceThreshold ?? DEFAULT_PIECE_THRESHOLD;
  }

  /** Decode one chunk; returns the messages it completed (possibly none). */
  feed(chunk: string | Uint8Array): SseMessage[] {
    if (this.ended) return [];
    let text: string;
    if (typeof chunk === 'string') {
      // Mixing strings after bytes: flush any partial UTF-8 sequence first.
      if (this.textDecoder !== undefined) {
        const rest = this.textDecoder.decode();
        if (rest.length > 0) this.scan(rest);
        this.bytesClean = true;
      }
      text = chunk;
    } else {
      const n = chunk.length;
      if (this.bytesClean && n > 0 && chunk[n - 1]! < 0x80) {
        // An ASCII byte ends every UTF-8 sequence, so when the last chunk also ended on one these
        // bytes decode alone: the same text as the streaming TextDecoder (replacement characters
        // included), several times cheaper. Its state is clean too (it only ever saw whole chunks).
        text = (Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, n)).toString('utf8');
      } else {
        // ignoreBOM: keep U+FEFF in the output so the one-BOM rule is applied in exactly one place.
        this.textDecoder ??= new TextDecoder('utf-8', { ignoreBOM: true });
        text = this.textDecoder.decode(chunk, { stream: true });
        if (n > 0) this.bytesClean = chunk[n - 1]! < 0x80;
      }
    }
    if (text.length > 0) this.scan(text);
    return this.take();
  }

  /** End of stream: flush, and report an event cut without its blank line. */
  end(): SseEndResult {
    if (this.ended) return { messages: [], truncated: false };
    if (this.textDecoder !== undefined) {
      const rest = this.textDecoder.decode();
      if (rest.length > 0) this.scan(rest);
    }
    this.ended = true;
    let truncated = false;
    if (this.pieceLine) {
      this.pieceLine = false;
      truncated = true;
    } else if (this.partial.length > 0 || this.discardingLine) {
      const line = this.partial.join('');
      this.partial = [];
      this.partialChars = 0;
      if (this.discardingLine || (line.length > 0 && line.charCodeAt(0) !== COLON)) truncated = true;
      if (!this.discardingLine) this.line(line, 0, line.length);
      this.discardingLine = false;
    }
    if (this.hasFields) truncated = true;
    if (truncated && this.lenientEof) this.dispatch();
    else if (this.piecing) this.sink!.abort();
    this.resetEvent();
    return { messages: this.take(), truncated };
  }

  private take(): SseMessage[] {
    if (this.out.length === 0) return this.onMessage !== undefined ? NONE : [];
    const out = this.out;
    this.out = [];
    return out;
  }

  private scan(text: string): void {
    let pos = 0;
    const len = text.length;
    if (!this.started) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) pos = 1;
    }
    if (this.skipLeadingLF) {
      this.skipLeadingLF = false;
      if (pos < len && text.charCodeAt(pos) === LF) pos++;
    }
    let nextCR = text.indexOf('\r', pos);
    if (nextCR === -1 && this.partial.length === 0 && !this.discardingLine && !this.pieceLine) {
      // Fast path: LF-only chunk, no unfinished line.
      let lf = text.indexOf('\n', pos);
      while (lf !== -1) {
        if (lf === pos) {
          this.dispatch();
          this.resetEvent();
        } else this.line(text, pos, lf);
        pos = lf + 1;
        lf = text.indexOf('\n', pos);
      }
      if (pos < len) this.keepPartial(text, pos, len);
      return;
    }
    // Positions of the next LF / CR at or after `pos` (-1: none left in this chunk).
    let nextLF = text.indexOf('\n', pos);
    while (pos < len) {
      let eol: number;
      if (nextCR === -1) eol = nextLF;
      else if (nextLF === -1) eol = nextCR;
      else eol = nextLF < nextCR ? nextLF : nextCR;
      if (eol === -1) {
        this.keepPartial(text, pos, len);
        return;
      }
      if (this.pieceLine) {
        this.pieceLine = false;
        if (eol > pos) this.sink!.more(text.slice(pos, eol));
      } else if (this.partial.length > 0 || this.discardingLine) {
        if (this.discardingLine) {
          this.discardingLine = false;
        } else {
          this.partial.push(text.slice(pos, eol));
          const line = this.partial.join('');
          this.partial = [];
          this.partialChars = 0;
          this.line(line, 0, line.length);
        }
      } else {
        this.line(text, pos, eol);
      }
      pos = eol + 1;
      if (text.charCodeAt(eol) === CR) {
        if (pos === len) this.skipLeadingLF = true;
        else if (text.charCodeAt(pos) === LF) pos++;
      }
      if (nextLF !== -1 && nextLF < pos) nextLF = text.indexOf('\n', pos);
      if (nextCR !== -1 && nextCR < pos) nextCR = text.indexOf('\r', pos);
    }
  }

  private keepPartial(text: string, from: number, to: number): void {
    if (from >= to || this.discardingLine) return;
    if (this.pieceLine) {
      this.sink!.more(from === 0 && to === text.length ? text : text.slice(from, to));
      return;
    }
    const n = to - from;
    if (this.partialChars + n + this.eventChars > this.maxEventChars) {
      // An unterminated line is already over the cap: drop it and the event it belongs to.
      this.partial = [];
      this.partialChars = 0;
      this.discardingLine = true;
      this.overCap();
      return;
    }
    this.partial.push(from === 0 && to === text.length ? text : text.slice(from, to));
    this.partialChars += n;
    if (this.sink !== undefined && !this.pieceDeclined && !this.dropping && this.partialChars + this.data.length > this.pieceThreshold) {
      this.pieceStartLine();
    }
  }

  /** The unfinished line is past the piece threshold: a data line goes to the piece sink from now on. */
  private pieceStartLine(): void {
    const line = this.partial.length === 1 ? this.partial[0]! : this.partial.join('');
    this.partial = [line];
    if (!(line.charCodeAt(4) === COLON && isField(line, 0, 'data'))) {
      this.pieceDeclined = true; // a huge comment or other field: the cap applies as before
      return;
    }
    const value = line.slice(line.charCodeAt(5) === SPACE ? 6 : 5);
    if (!this.pieceData(value)) return;
    this.partial = [];
    this.partialChars = 0;
    this.pieceLine = true;
  }

  /**
   * The value of a data line of the current event, when the event is (or now becomes) one for
   * the piece sink. False: the caller handles the value as usual.
   */
  private pieceData(value: string): boolean {
    const sink = this.sink!;
    if (this.piecing) {
      sink.more('\n');
      sink.more(value);
      return true;
    }
    if (this.pieceDeclined) return false;
    if (!sink.begin(this.hasData ? this.data + '\n' + value : value, this.eventType === '' ? undefined : this.eventType)) {
      this.pieceDeclined = true;
      return false;
    }
    this.piecing = true;
    this.data = '';
    this.hasData = true;
    this.hasFields = true;
    return true;
  }

  private overCap(): void {
    if (this.piecing) {
      this.sink!.abort();
      this.piecing = false;
      this.pieceLine = false;
    }
    if (!this.dropping) {
      this.dropping = true;
      this.onWarning?.(
        'sse_event_too_large',
        `SSE event larger than ${this.maxEventChars} characters dropped`,
      );
    }
    this.data = '';
    this.hasData = false;
    this.comments = undefined;
    this.hasFields = true;
  }

  /** Process the line text[start, end). */
  private line(text: string, start: number, end: number): void {
    if (start === end) {
      this.dispatch();
      this.resetEvent();
      return;
    }
    const first = text.charCodeAt(start);
    // Fast paths for "data:" and "event:" (charCodeAt at `end` is the line terminator or NaN, so
    // these checks never match across the end of the line).
    if (
      first === 100 &&
      text.charCodeAt(start + 4) === COLON &&
      text.charCodeAt(start + 1) === 97 &&
      text.charCodeAt(start + 2) === 116 &&
      text.charCodeAt(start + 3) === 97
    ) {
      if (this.dropping) return;
      let v = start + 5;
      if (v < end && text.charCodeAt(v) === SPACE) v++;
      if (this.sink !== undefined && (this.piecing || end - v + this.data.length > this.pieceThreshold) && this.pieceData(text.slice(v, end))) return;
      this.eventChars += end - v;
      if (this.eventChars > this.maxEventChars) {
        this.overCap();
        return;
      }
      const value = text.slice(v, end);
      if (this.hasData) this.data = this.data + '\n' + value;
      else {
        this.data = value;
        this.hasData = true;
        this.hasFields = true;
      }
      return;
    }
    if (
      first === 101 &&
      text.charCodeAt(start + 5) === COLON &&
      text.charCodeAt(start + 1) === 118 &&
      text.charCodeAt(start + 2) === 101 &&
      text.charCodeAt(start + 3) === 110 &&
      text.charCodeAt(start + 4) === 116
    ) {
      if (this.dropping) return;
      let v = start + 6;
      if (v < end && text.charCodeAt(v) === SPACE) v++;
      this.eventChars += end - v;
      if (this.eventChars > this.maxEventChars) {
        this.overCap();
        return;
      }
      this.eventType = text.slice(v, end);
      this.hasFields = true;
      return;
    }
    if (first === COLON) {
      if (this.dropping) return;
      let c = start + 1;
      if (c < end && text.charCodeAt(c) === SPACE) c++;
      // Comments count toward the cap: keep-alives are short, an endless comment block is not.
      this.eventChars += end - c + 1;
      if (this.eventChars > this.maxEventChars) {
        this.overCap();
        return;
      }
      (this.comments ??= []).push(text.slice(c, end));
      return;
    }
    if (this.dropping) return;
    let colon = text.indexOf(':', start);
    if (colon === -1 || colon > end) colon = end;
    let vStart = colon + 1;
    if (vStart < end && text.charCodeAt(vStart) === SPACE) vStart++;
    if (vStart > end) vStart = end;
    const nameLen = colon - start;
    this.eventChars += end - vStart;
    if (this.eventChars > this.maxEventChars) {
      this.overCap();
      return;
    }
    if (nameLen === 4 && isField(text, start, 'data')) {
      const value = text.slice(vStart, end);
      if (this.sink !== undefined && (this.piecing || value.length + this.data.length > this.pieceThreshold) && this.pieceData(value)) {
        this.eventChars -= end - vStart;
        return;
      }
      this.data = this.hasData ? this.data + '\n' + value : value;
      this.hasData = true;
      this.hasFields = true;
    } else if (nameLen === 5 && isField(text, start, 'event')) {
      this.eventType = text.slice(vStart, end);
      this.hasFields = true;
    } else if (nameLen === 2 && isField(text, start, 'id')) {
      const value = text.slice(vStart, end);
      if (value.indexOf('\u0000') === -1) this.lastEventId = value;
      this.hasFields = true;
    }
    // retry: and unknown fields are ignored.
  }

  private dispatch(): void {
    if (this.dropping) return;
    if (this.piecing) {
      this.piecing = false;
      this.sink!.end();
      return;
    }
    if (!this.hasData && !(this.dispatchDataless && this.eventType !== undefined)) return;
    const fast = this.onData;
    if (fast !== undefined && this.hasData && this.comments === undefined) {
      fast(this.data, this.eventType === '' ? undefined : this.eventType);
      return;
    }
    // One object shape for every message (optional members are undefined when absent).
    const msg: SseMessage = {
      data: this.data,
      event: this.eventType === '' ? undefined : this.eventType,
      id: this.lastEventId === '' ? undefined : this.lastEventId,
    };
    if (this.comments !== undefined) msg.comments = this.comments;
    if (!this.hasData) msg.dataless = true;
    if (this.onMessage !== undefined) this.onMessage(msg);
    else this.out.push(msg);
  }

  private resetEvent(): void {
    this.data = '';
    this.hasData = false;
    this.eventType = undefined;
    this.comments = undefined;
    this.eventChars = 0;
    this.hasFields = false;
    this.dropping = false;
    this.piecing = false;
    this.pieceDeclined = false;
  }
}

/** Returned by `feed`/`end` in callback mode (frozen: never push into it). */
const NONE: SseMessage[] = Object.freeze([]) as unknown as SseMessage[];

/** text[start, start + name.length) === name (String#startsWith with a position is slow in V8). */
function isField(text: string, start: number, name: string): boolean {
  for (let i = 0; i < name.length; i++) if (text.charCodeAt(start + i) !== name.charCodeAt(i)) return false;
  return true;
}
