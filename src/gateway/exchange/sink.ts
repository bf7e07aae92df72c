/**
 * Stage 5, encode: the turn's OutputEvents in the inbound API's shape (its module's encoder). A
 * streaming request is committed (HTTP 200 + the API's first frames) by `commit`, then gets SSE
 * text: everything one backend read produced goes out in one `res.write` (`flush`), with
 * backpressure (the backend is paused while the client's socket is full) and keep-alive pings while
 * nothing is written. A non-streaming request collects the events and gets one JSON body at `close`.
 */
import type { OutputEvent } from '../../release/output';
import type { InboundEncodeOptions, InboundStream } from '../inbound/types';
import { type Exchange, sendJson } from './context';
import { randomAnthropicId } from '../../encode/anthropicSse';

export interface ClientSink {
  /** One event for the client: encoded now (SSE) or kept for the body. */
  push(e: OutputEvent): void;
  /** Write what the pushes since the last flush produced (SSE: one `res.write`). */
  flush(): void;
  /** Commit the response (SSE: status, headers and the first frames). */
  commit(): void;
  /** Set by the decode stage: stop and restart reading the backend while the client is not reading. */
  throttle?: { pause(): void; resume(): void };
  /** The end of the response (SSE: a terminal frame if the turn produced none). Returns the HTTP status. */
  close(): number;
  /** The client is gone: stop timers, write nothing more. */
  abandon(): void;
  /** Resolves when a huge call's pieces (src/encode/pieces.ts) have all been written (or the client left). */
  settled?(): Promise<void>;
}

/** The sink for this request's inbound API and `stream` flag. */
export function clientSink(x: Exchange): ClientSink {
  const o: InboundEncodeOptions = { model: x.creq.model, inputTokens: x.estimate, toolUseOnStop: x.ctx.toolUseOnStop };
  if (x.creq.includeUsage !== undefined) o.includeUsage = x.creq.includeUsage;
  // The call ids the client gets are remembered for linking its answers (sessionLink.ts).
  const mint = x.ctx.idGenerator ?? randomAnthropicId;
  o.idGenerator = (kind) => {
    const id = mint(kind);
    if (kind === 'tool_use') x.callIds.push(id);
    return id;
  };
  o.onCallId = (id) => x.callIds.push(id);
  if (x.clientTool) o.clientTools = x.clientTool;
  return x.creq.stream ? new SseSink(x, x.api.stream(o)) : new BodySink(x, o);
}

const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

/** SSE text written per turn of the event loop while a huge call's pieces drain (a few ms of work). */
const STEP_CHARS = 256 * 1024;

/**
 * Output kept as one string at most (code units): a longer string would be one of V8's large
 * objects (over 128 KiB; two-byte text doubles the bytes), whose flattening and socket write cost
 * ~10× more per char. A burst of backend reads (after a pause) used to build such strings; past
 * this the text is set aside in strings of this size, each its own `res.write` at `flush` (corked:
 * one `writev`).
 */
const WRITE_CHARS = 32 * 1024;

class SseSink implements ClientSink {
  throttle?: { pause(): void; resume(): void };
  private out = '';
  /** Writes so far (pings not counted): the first is the observer's first client byte, and the ping clock reads them. */
  private writes = 0;
  private blocked = false;
  private pinger?: NodeJS.Timeout;
  private seenWrites = 0;
  private silentTicks = 0;

  /** A huge call's frames are being written a piece per turn of the event loop (`drainPieces`). */
  private piecing = false;
  private piecesDone: (() => void)[] = [];

  constructor(
    private readonly x: Exchange,
    private readonly enc: InboundStream,
  ) {
    enc.enablePieces?.();
  }

  commit(): void {
    this.x.res.writeHead(200, SSE_HEADERS);
    this.out += this.enc.start();
    this.flush();
    // A ping after two ticks (one interval) without a write.
    const every = this.x.ctx.pingIntervalMs;
    if (every > 0) this.pinger = setInterval(() => this.tick(), Math.max(10, Math.floor(every / 2)));
  }

  push(e: OutputEvent): void {
    this.out += this.enc.push(e);
    if (this.out.length >= WRITE_CHARS && this.enc.pending !== true) {
      this.ahead.push(this.out);
      this.out = '';
    }
  }

  /** Output past WRITE_CHARS in strings of about WRITE_CHARS: `flush` writes them before the rest. */
  private ahead: string[] = [];

  flush(): void {
    this.send();
    if (this.enc.pending === true) this.drainPieces();
  }

  /**
   * The output since the last write: each string set aside its own `res.write`, then `out`, corked
   * into one `writev`. Node encodes the strings into one native buffer that it frees as soon as the
   * socket takes the bytes (kept only while the client is not reading). Encoding them here into a
   * `Buffer` instead (Buffer.byteLength + allocUnsafe + write) made a GC-tracked buffer per flush,
   * ~25 MB per 100k-delta Responses flood for the collector to sweep (docs/benchmarks.md, session 7).
   */
  private send(): void {
    const { ahead } = this;
    if (ahead.length === 0) {
      const data = this.out;
      this.out = '';
      this.write(data);
      return;
    }
    this.ahead = [];
    const { res } = this.x;
    res.cork();
    for (const p of ahead) this.write(p);
    const data = this.out;
    this.out = '';
    this.write(data);
    res.uncork();
  }

  /** One `res.write` (nothing once the client is gone), with backpressure. */
  private write(data: string | Uint8Array): void {
    const { res } = this.x;
    if (data.length === 0 || res.destroyed || this.x.clientGone) return;
    if (this.writes++ === 0) this.x.obs.firstClientByte();
    const ok = res.write(data);
    if (!ok && !this.blocked) {
      // Backpressure: stop reading the backend until the client drains (the decode stage also
      // stops the idle clock: a slow reader is not a silent backend).
      this.blocked = true;
      this.throttle?.pause();
      res.once('drain', () => {
        this.blocked = false;
        if (!this.piecing) this.throttle?.resume();
      });
    }
  }

  /**
   * The encoder holds a huge call's frames (src/encode/pieces.ts): a few pieces per turn of the
   * event loop (≤ ~STEP_CHARS of SSE text), waiting for the client's drain when its socket is full; the
   * backend stays paused until the last piece is written, so what follows keeps its place.
   */
  private drainPieces(): void {
    if (this.piecing) return;
    this.piecing = true;
    this.throttle?.pause();
    const { res } = this.x;
    const step = (): void => {
      if (res.destroyed || this.x.clientGone || this.enc.pending !== true) {
        this.piecing = false;
        if (!this.blocked) this.throttle?.resume();
        for (const done of this.piecesDone.splice(0)) done();
        return;
      }
      if (this.blocked) {
        const go = (): void => {
          res.off('drain', go);
          res.off('close', go);
          setImmediate(step);
        };
        res.on('drain', go);
        res.on('close', go);
        return;
      }
      // Up to STEP_CHARS per turn, each piece its own write: one string joined from them would
      // be a large object again (see PIECE_CHARS in src/encode/pieces.ts).
      res.cork();
      for (let chars = 0; chars < STEP_CHARS && this.enc.pending === true && !this.blocked; ) {
        const piece = this.nextPiece();
        chars += piece.length + 1;
        // Each piece its own write.
        this.take(piece);
        this.send();
      }
      res.uncork();
      setImmediate(step);
    };
    setImmediate(step);
  }

  /** A held piece into the output in order: text joins `out`; bytes (a long text's UTF-8) are written as they are, after what is before them. */
  private take(piece: string | Buffer): void {
    if (typeof piece === 'string') this.out += piece;
    else {
      this.send();
      this.write(piece);
    }
  }

  /** The encoder's next held piece: text, or bytes already UTF-8 (src/encode/pieces.ts `piece`). */
  private nextPiece(): string | Buffer {
    return this.enc.piece !== undefined ? this.enc.piece() : this.enc.more!();
  }

  settled(): Promise<void> {
    return this.piecing ? new Promise((resolve) => this.piecesDone.push(resolve)) : Promise.resolve();
  }

  private tick(): void {
    if (this.writes !== this.seenWrites) {
      this.seenWrites = this.writes;
      this.silentTicks = 0;
    } else if (++this.silentTicks >= 2) {
      this.silentTicks = 0;
      this.out += this.enc.ping();
      this.flush();
      this.seenWrites = this.writes;
    }
  }

  close(): number {
    this.stopPings();
    // Pieces still held (the exchange normally waits for `settled` first): written now, in order.
    while (this.enc.pending === true) this.take(this.nextPiece());
    // A started stream always gets a terminal event (SPEC §5.9).
    if (!this.enc.terminated) this.push({ type: 'error', error: { type: 'api_error', message: 'the turn ended without a result' } });
    this.flush();
    this.x.res.end();
    return 200;
  }

  abandon(): void {
    this.stopPings();
  }

  private stopPings(): void {
    if (this.pinger) clearInterval(this.pinger);
    this.pinger = undefined;
  }
}

class BodySink implements ClientSink {
  private readonly events: OutputEvent[] = [];
  constructor(
    private readonly x: Exchange,
    private readonly o: InboundEncodeOptions,
  ) {}
  commit(): void {}
  push(e: OutputEvent): void {
    this.events.push(e);
  }
  flush(): void {}
  close(): number {
    const answer = this.x.api.body(this.events, this.o);
    this.x.obs.firstClientByte();
    sendJson(this.x.res, answer.status, answer.body);
    return answer.status;
  }
  abandon(): void {}
}
