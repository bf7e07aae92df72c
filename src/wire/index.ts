/**
 * The input side: bytes and provider objects → canonical `StreamEvent`s.
 *
 * - `createAdapter(format)`: parsed provider payloads → events (use with SDK stream objects).
 * - `createStreamReader(format)`: raw SSE bytes/text → events (SseDecoder + JSON.parse per `data:`
 *   + adapter; a plain text/thinking delta is read in place without JSON.parse, skim.ts). Non-JSON data → `bad_json` warning (never a throw); `[DONE]` is passed on as the
 *   string; an event cut at EOF → `sse_truncated` warning (not dispatched, per spec, unless
 *   `lenientEof`); an over-size event → `sse_event_too_large` warning.
 * - `readPayloadLines(text)`: one-JSON-payload-per-line `.jsonl` recordings → payloads.
 * - `detectFormat(text)`: guess the wire format from the first payloads (per payload:
 *   `payloadFormat`, src/wire/detect.ts, which also holds the `format_mismatch` check).
 *
 * Text families (`text:<family>`, raw model text with tool-call markup) are parsed in src/parsers:
 * they plug in through `registerTextAdapterFactory` (process-wide) or the `textAdapter` option.
 *
 * Hot path (SPEC §9). `reader.write(chunk)` returns a fresh exact-size array; `write(chunk, into)`
 * appends to the caller's array instead. Adapters built on `BaseAdapter` write into an `EventSink`
 * (`pushInto`/`endInto`), so the reader allocates one event object per fragment and nothing per SSE
 * message. Measured with `npx ts-node --transpile-only test/wire/perfRun.ts 1000000` (plain node,
 * 2-core VM, medians of interleaved CPU-time runs, 1 MB argument in 4–16 byte deltas, one SSE
 * event per chunk; ratio = sluice reader / eventsource-parser + JSON.parse + concat + final parse):
 * bytes input 1.03–1.08 (Anthropic), 1.05–1.07 (chat); pre-decoded strings 1.14–1.18 (Anthropic),
 * 1.07–1.18 (chat). Under Jest the same code runs ~1.5× slower (module sandbox): measure outside it.
 */
import type { Adapter, StreamEvent, WireFormat } from './events';
import { EventCollector, type EventSink, type FastAdapter, isFastAdapter, isObj, warning } from './common';
import { AnthropicAdapter } from './anthropic';
import { OpenAIChatAdapter } from './openaiChat';
import { OpenAIResponsesAdapter } from './openaiResponses';
import { GeminiAdapter } from './gemini';
import { DYNAMO_NAMED_EVENTS, DynamoAdapter } from './dynamo';
import { AiSdkAdapter } from './aiSdk';
import { DEFAULT_MAX_EVENT_CHARS, SseDecoder, type SseDecoderOptions, type SseMessage } from './sse';
import { type PieceAdapter, PieceDecoder } from './pieces';
import { FormatCheck, payloadFormat } from './detect';
import { badStreamError, BODY_HEAD_CHARS, describeBody, isSseStart } from './integrity';

export { SseDecoder, DEFAULT_MAX_EVENT_CHARS } from './sse';
export type { SseMessage, SseDecoderOptions, SseEndResult } from './sse';
export { AnthropicAdapter, mapAnthropicStopReason } from './anthropic';
export { OpenAIChatAdapter, mapChatFinishReason } from './openaiChat';
export { OpenAIResponsesAdapter } from './openaiResponses';
export { GeminiAdapter, parseJsonPath } from './gemini';
export { DynamoAdapter } from './dynamo';
export { AiSdkAdapter, aiSdkError, aiSdkUsage } from './aiSdk';
export { FORMAT_MISMATCH, FormatCheck, findFormatMismatch, formatsCompatible, payloadFormat } from './detect';
export { BAD_STREAM, STREAM_TRUNCATED, describeBody, terminalSignal, unaryCompletion } from './integrity';

/** Builds the adapter for `text:<family>` formats (src/parsers provides it). */
export type TextAdapterFactory = (family: string) => Adapter | undefined;

let registeredTextFactory: TextAdapterFactory | undefined;

/** Register the process-wide factory for `text:<family>` formats (src/parsers calls this). */
export function registerTextAdapterFactory(factory: TextAdapterFactory | undefined): void {
  registeredTextFactory = factory;
}

export interface AdapterOptions {
  /** Factory for `text:<family>` formats; overrides the registered one. */
  textAdapter?: TextAdapterFactory;
}

export const WIRE_FORMATS: readonly WireFormat[] = [
  'anthropic',
  'openai-chat',
  'openai-responses',
  'gemini',
  'dynamo',
];

/** A fresh adapter for one stream. Throws (a programming error, not bad input) for an unknown format. */
export function createAdapter(format: WireFormat, options: AdapterOptions = {}): Adapter {
  switch (format) {
    case 'anthropic':
      return new AnthropicAdapter();
    case 'openai-chat':
      return new OpenAIChatAdapter();
    case 'openai-responses':
      return new OpenAIResponsesAdapter();
    case 'gemini':
      return new GeminiAdapter();
    case 'dynamo':
      return new DynamoAdapter();
    case 'ai-sdk':
      return new AiSdkAdapter();
  }
  if (typeof format === 'string' && format.startsWith('text:')) {
    const family = format.slice(5);
    const factory = options.textAdapter ?? registeredTextFactory;
    const a = factory?.(family);
    if (a !== undefined) return a;
    throw new Error(`sluice: no parser registered for text family "${family}"`);
  }
  throw new Error(`sluice: unknown wire format "${String(format)}"`);
}

export interface StreamReaderOptions extends AdapterOptions {
  /** Cap on one SSE event (UTF-16 code units). Default 64 Mi. */
  maxEventChars?: number;
  /** Dispatch an SSE event cut by EOF instead of only warning about it. Default false (spec). */
  lenientEof?: boolean;
  /**
   * An event whose data grows past this many UTF-16 code units is read a piece per write
   * (src/wire/pieces.ts): its argument text goes out as `call.fragment`s as it arrives. Default
   * 256 Ki; `Infinity` turns it off (every event is parsed whole at its end).
   */
  pieceThreshold?: number;
  /** Use this adapter instead of creating one. */
  adapter?: Adapter;
  /**
   * Fail the stream (a non-retryable `format_mismatch` stream error, src/wire/detect.ts) when its
   * first decisive payload is another provider's shape; later payloads are dropped. `runTurn` sets it.
   */
  checkFormat?: boolean;
  /** The response's content type, when known: named in a `bad_stream` error (SPEC §12). */
  contentType?: string;
}

export interface StreamReader {
  readonly format: WireFormat;
  /**
   * Feed raw SSE bytes or text; returns the events completed by this chunk. With `into`, the
   * events are appended to that array (which is returned): a hot loop can reuse one array.
   */
  write(chunk: string | Uint8Array, into?: StreamEvent[]): StreamEvent[];
  /**
   * One payload already parsed, read as if it had arrived as one SSE `data:` event (`[DONE]` as the
   * string): how the gateway replays a backend's whole JSON answer as its stream without writing it
   * out as SSE text and reading it again. The stream's SSE framing is then not judged.
   */
  writePayload(payload: unknown): StreamEvent[];
  /** End of the byte stream: returns the remaining events, ending with `stream.end`. */
  end(): StreamEvent[];
}

/** Raw SSE → canonical events for one stream. */
export function createStreamReader(format: WireFormat, options: StreamReaderOptions = {}): StreamReader {
  const adapter = options.adapter ?? createAdapter(format, options);
  const fast = isFastAdapter(adapter) ? adapter : undefined;
  const raw = typeof fast?.pushRaw === 'function' ? fast : undefined;
  // The events of the current write()/end() call: the decoder's callbacks append to it.
  const collector = new EventCollector();
  let cur: EventSink = collector;
  const check = options.checkFormat === true ? new FormatCheck(format) : undefined;
  let mismatched = false;
  // Stream integrity (SPEC §12, src/wire/integrity.ts): the body's first line must be SSE framing
  // and its first data payload JSON (or [DONE]); else the stream is `bad_stream` and the rest of it
  // is ignored. `head` collects the start until it is judged (then undefined).
  let head: string | undefined = '';
  let bad = false;
  let payloads = 0;
  const judge = (atEnd: boolean): void => {
    const h = head!;
    const start = h.replace(/^\uFEFF/, '').trimStart();
    const nl = start.search(/[\r\n]/);
    if (!atEnd && nl < 0 && start.length < 256) return; // the first line is not complete yet
    head = undefined;
    if (start.length > 0 && isSseStart(nl < 0 ? start : start.slice(0, nl))) return;
    bad = true;
    collector.push(badStreamError(describeBody(h.slice(0, 4 * BODY_HEAD_CHARS), options.contentType)));
  };
  const push = (payload: unknown): void => {
    if (bad) return;
    payloads++;
    if (check !== undefined && !check.done) {
      const err = check.check(payload);
      if (err !== undefined) {
        mismatched = true;
        cur.push(err);
      }
    }
    if (mismatched) return;
    if (fast !== undefined) fast.pushInto(payload, cur);
    else for (const e of adapter.push(payload)) cur.push(e);
  };
  /** One `data:` payload: `[DONE]` as the string, JSON parsed, anything else a warning. */
  const pushData = (data: string): void => {
    if (bad) return;
    if (data === '[DONE]') {
      push('[DONE]');
      return;
    }
    // Fast path (src/wire/skim.ts): a plain text/thinking delta is read in place, no JSON.parse.
    if (raw !== undefined && !mismatched && (check === undefined || check.done) && raw.pushRaw!(data, cur)) {
      payloads++;
      return;
    }
    let payload: unknown;
    try {
      payload = JSON.parse(data);
    } catch {
      if (payloads === 0 && !bad) {
        // The first payload of the stream is not JSON: not an event stream of this format.
        bad = true;
        const quoted = JSON.stringify(data.length > BODY_HEAD_CHARS ? `${data.slice(0, BODY_HEAD_CHARS)}…` : data);
        const ct = options.contentType ? `content-type ${options.contentType}, ` : '';
        cur.push(badStreamError(`the first SSE data payload is not JSON (${ct}starts with ${quoted}): not a ${format} event stream`));
        return;
      }
      cur.push(warning('bad_json', `SSE data is not JSON (${data.length} chars); ignored`));
      return;
    }
    push(payload);
  };
  /** The reader itself reported an error: the adapter adds no `stream_truncated` at the end. */
  const markFailed = (): void => (adapter as Partial<{ markFailed(): void }>).markFailed?.();
  /** Dynamo's named events (`event: tool_call_dispatch`, dynamo.ts): the adapter gets `{event, data}`. */
  const pushNamed = (event: string, data: string): void => {
    if (bad) return;
    let payload: unknown;
    try {
      payload = JSON.parse(data);
    } catch {
      cur.push(warning('bad_json', `SSE ${event} data is not JSON (${data.length} chars); ignored`));
      return;
    }
    push({ event, data: payload });
  };
  const onData = (data: string, event: string | undefined): void => {
    if (event !== undefined && format === 'dynamo' && DYNAMO_NAMED_EVENTS.has(event)) {
      pushNamed(event, data);
      return;
    }
    if (event === 'error' && !looksLikeJson(data)) {
      onMessage({ data, event });
      return;
    }
    pushData(data);
  };
  const onMessage = (m: SseMessage): void => {
    const data = m.data;
    if (m.event === 'error' && (m.dataless === true || !looksLikeJson(data))) {
      // An error frame without a JSON body (Dynamo: `event: error` + comment lines).
      const comment = m.comments ? [...m.comments] : [];
      if (data.length > 0) comment.push(data);
      markFailed();
      if (format === 'dynamo') push({ event: 'error', comment });
      else {
        const message = comment.join(' -- ') || 'unspecified error';
        cur.push({ type: 'stream.error', error: { type: 'api_error', message }, retryable: true });
      }
      return;
    }
    if (m.dataless === true) return; // other data-less named events carry nothing
    if (m.event !== undefined && format === 'dynamo' && DYNAMO_NAMED_EVENTS.has(m.event)) {
      pushNamed(m.event, data);
      return;
    }
    pushData(data);
  };
  const decoderOptions: SseDecoderOptions = {
    dispatchDataless: true,
    lenientEof: options.lenientEof ?? false,
    // An over-size event is dropped by the decoder; going on without it would lose data, so the
    // stream ends with a non-retryable limit error instead (docs/limits.md, maxEventChars).
    onWarning: (code, message) => {
      if (code !== 'sse_event_too_large') {
        cur.push(warning(code, message));
        return;
      }
      markFailed();
      cur.push({ type: 'stream.error', error: { type: 'limit_exceeded', message: `limit maxEventChars exceeded: ${message}` }, retryable: false });
    },
    onMessage,
    onData,
  };
  if (options.maxEventChars !== undefined) decoderOptions.maxEventChars = options.maxEventChars;
  // A huge event is read a piece per write (src/wire/pieces.ts) when the adapter names its argument positions.
  const pieceAdapter = fast !== undefined && typeof (fast as Partial<PieceAdapter>).pieceRoute === 'function' ? (fast as FastAdapter & PieceAdapter) : undefined;
  if (pieceAdapter !== undefined && options.pieceThreshold !== Infinity) {
    decoderOptions.pieces = new PieceDecoder(pieceAdapter, {
      out: () => cur,
      ready: () => !mismatched && !bad && (check === undefined || check.done),
      maxChars: options.maxEventChars ?? DEFAULT_MAX_EVENT_CHARS,
      tooLarge: (message) => decoderOptions.onWarning!('sse_event_too_large', message),
    });
    if (options.pieceThreshold !== undefined) decoderOptions.pieceThreshold = options.pieceThreshold;
  }
  const decoder = new SseDecoder(decoderOptions);
  let ended = false;

  return {
    format,
    write(chunk, into) {
      if (ended || bad) return into ?? [];
      if (head !== undefined) {
        head += typeof chunk === 'string' ? chunk.slice(0, 1024) : Buffer.from(chunk.buffer, chunk.byteOffset, Math.min(chunk.byteLength, 1024)).toString('utf8');
        judge(false);
        if (bad) {
          const out = collector.take();
          if (into === undefined) return out;
          for (const e of out) into.push(e);
          return into;
        }
      }
      if (into !== undefined) {
        cur = into;
        decoder.feed(chunk);
        cur = collector;
        return into;
      }
      decoder.feed(chunk);
      return collector.take();
    },
    writePayload(payload) {
      if (ended || bad) return [];
      head = undefined;
      push(payload);
      return collector.take();
    },
    end() {
      if (ended) return [];
      ended = true;
      const out = collector; // cur === collector here
      if (head !== undefined) judge(true);
      if (bad) {
        out.push({ type: 'stream.end' });
        return out.take();
      }
      const { truncated } = decoder.end();
      if (truncated) {
        out.push(
          warning(
            'sse_truncated',
            options.lenientEof
              ? 'the stream ended inside an SSE event (no blank line); dispatched anyway (lenientEof)'
              : 'the stream ended inside an SSE event (no blank line); that event was not dispatched',
          ),
        );
      }
      if (fast !== undefined) fast.endInto(out);
      else for (const e of adapter.end()) out.push(e);
      return out.take();
    },
  };
}

function looksLikeJson(s: string): boolean {
  const c = s.trimStart()[0];
  return c === '{' || c === '[';
}

export interface PayloadLines {
  /** Parsed payloads in order (`[DONE]` kept as the string). */
  payloads: unknown[];
  /** `bad_json` warnings for lines that are not JSON (contents never quoted). */
  warnings: StreamEvent[];
}

/**
 * Split a one-JSON-payload-per-line recording (`.jsonl`, vercel `*.chunks.txt`). Blank lines are
 * skipped; a leading `data:` prefix is tolerated; `[DONE]` is kept as the string.
 */
export function readPayloadLines(text: string): PayloadLines {
  const payloads: unknown[] = [];
  const warnings: StreamEvent[] = [];
  const lines = (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text).split('\n');
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i].trim();
    if (line.length === 0) continue;
    if (line.startsWith('data:')) line = line.slice(5).trim();
    if (line === '[DONE]') {
      payloads.push('[DONE]');
      continue;
    }
    try {
      payloads.push(JSON.parse(line));
    } catch {
      warnings.push(warning('bad_json', `line ${i + 1} is not JSON (${line.length} chars); ignored`));
    }
  }
  return { payloads, warnings };
}

/** Run whole payload list through a fresh adapter: warnings of the reader first, then events, then end. */
export function decodePayloads(
  format: WireFormat,
  payloads: readonly unknown[],
  options: AdapterOptions = {},
): StreamEvent[] {
  const adapter = createAdapter(format, options);
  const out: StreamEvent[] = [];
  for (const p of payloads) for (const e of adapter.push(p)) out.push(e);
  for (const e of adapter.end()) out.push(e);
  return out;
}

/** Decode a whole recording (SSE text or one payload per line) with the given or detected format. */
export function decodeRecording(
  text: string,
  format?: WireFormat,
  options: StreamReaderOptions = {},
): StreamEvent[] {
  const f = format ?? detectFormat(text);
  if (f === undefined)
    return [warning('unknown_format', 'could not detect the wire format'), { type: 'stream.end' }];
  if (looksLikeSse(text)) {
    const r = createStreamReader(f, options);
    return [...r.write(text), ...r.end()];
  }
  const { payloads, warnings } = readPayloadLines(text);
  return [...warnings, ...decodePayloads(f, payloads, options)];
}

/** True when the text is SSE framing (`data:`/`event:`/`:` lines) rather than bare JSON lines. */
export function looksLikeSse(text: string): boolean {
  const head = text.slice(0, 4096).replace(/^\uFEFF/, '');
  const first = head.split(/\r\n|\r|\n/).find((l) => l.trim().length > 0);
  if (first === undefined) return false;
  return /^(data|event|id|retry)(:|$)/.test(first) || first.startsWith(':');
}

/**
 * Guess the wire format from the first payloads (up to 50) of a recording: SSE text, one JSON per
 * line, or a sluice trace (header `{"sluice":"trace","format":…}`, or `{"t","data"}` lines).
 * Returns undefined when nothing decisive was seen. `dynamo` is only chosen on Dynamo-only signs
 * (`tool_call_completion`, `nvext`, `event: error` annotated frames, `event: tool_call_dispatch` /
 * `reasoning_dispatch`); plain chat chunks → openai-chat.
 */
export function detectFormat(text: string): WireFormat | undefined {
  const head = text.length > 262_144 ? text.slice(0, 262_144) : text;
  const payloads: unknown[] = [];
  let sawErrorFrame = false;
  if (looksLikeSse(head)) {
    const d = new SseDecoder({ dispatchDataless: true, lenientEof: true });
    const msgs = [...d.feed(head), ...d.end().messages];
    for (const m of msgs.slice(0, 50)) {
      if (m.event === 'error' && (m.dataless === true || !looksLikeJson(m.data))) sawErrorFrame = true;
      if (m.event !== undefined && DYNAMO_NAMED_EVENTS.has(m.event)) sawErrorFrame = true; // a Dynamo-only sign too
      try {
        payloads.push(JSON.parse(m.data));
      } catch {
        // ignore
      }
    }
  } else {
    for (const line of head.split('\n').slice(0, 51)) {
      const t = line.trim().replace(/^data:\s*/, '');
      if (t.length === 0) continue;
      try {
        const v: unknown = JSON.parse(t);
        if (isObj(v) && v.sluice === 'trace' && typeof v.format === 'string') return v.format as WireFormat;
        payloads.push(isObj(v) && 't' in v && 'data' in v ? v.data : v);
      } catch {
        // ignore (possibly a cut last line)
      }
    }
  }
  let chat = false;
  for (const p of payloads) {
    const f = payloadFormat(p);
    if (f === 'openai-chat') chat = true;
    else if (f !== undefined) return f;
  }
  if (chat) return sawErrorFrame ? 'dynamo' : 'openai-chat';
  return undefined;
}
