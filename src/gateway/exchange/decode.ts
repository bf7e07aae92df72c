/**
 * Stage 3, decode: the backend's bytes → the wire reader (src/wire) → StreamEvents → the turn,
 * one socket read of the backend at a time (the HTTP parser's per-chunk `data` events of that read
 * are kept and decoded together in a microtask, `read`), until the turn's terminal output, the
 * client leaving, or the turn ending some other way. Each read's events are fed in order, then the
 * sink flushes once: one client write per backend socket read. Per turn of the event loop at most
 * TURN_BYTES are decoded and TURN_CHARS of text and arguments fed to the turn; the rest waits for
 * the next turn with the backend paused.
 *
 * Around the bytes: the stream fence (nothing after the backend's finish or `[DONE]` is another
 * block; a stream that carried nothing is an error), the idle timer (re-armed only by bytes that
 * are more than SSE comments, paused while the client is not reading), the request deadline, the
 * drain deadline after the commit point, and a JSON (non-SSE) 2xx body read whole and replayed.
 *
 * That JSON body is read like a `GET /v1/models` answer (upstream/answer.ts `AnswerReader`): the
 * body size cap, the JSON depth limit and the memory budget, checked and charged as the bytes
 * arrive, given back once it is parsed or the exchange ends. A limit it breaks is answered like
 * any exchange error: before the commit point (a non-streaming request) the router's HTTP answer
 * in the inbound API's error shape — 502 `api_error`, 503 `overloaded_error` with `retry-after: 1`
 * — and after it (a streaming request) the API's error frame with the same type and message.
 */
import type * as http from 'node:http';
import { performance } from 'node:perf_hooks';
import type { StreamEvent } from '../../wire/events';
import type { StreamReader } from '../../wire/index';
import { IdleTimer, sseProgress, StreamFence } from '../hygiene';
import { type Exchange, ms } from './context';
import type { Turn } from './control';
import type { ClientSink } from './sink';
import type { PipelineStage } from './fault';
import { ANSWER_MAX_DEPTH, AnswerReader } from '../upstream/answer';
import { GatewayError } from '../errors';
import { committed } from './fault';

/** The stream error of a JSON answer that is not one JSON value the backend's format can read. */
const UNREADABLE_JSON = 'upstream: unreadable JSON response';

/** Bytes of the backend's stream decoded per turn of the event loop at most (then it waits a turn): a few ms. */
const TURN_BYTES = 256 * 1024;

/**
 * Text and argument characters fed to the turn per turn of the event loop at most (then the rest
 * of the read's events wait a turn, `backlog`): a few ms of turn, encoder and client write. One
 * read can produce far more than its bytes: a huge event whose text was held until its end (a
 * Gemini part's text, src/wire/pieces.ts) comes out at once, tens of MiB of deltas.
 */
export const TURN_CHARS = 512 * 1024;

/** Characters an event carries to the turn (text, thinking, argument text). */
function charsOf(e: StreamEvent): number {
  return e.type === 'text.delta' || e.type === 'thinking.delta' || e.type === 'call.fragment' ? e.text.length : 0;
}

/** Feed the backend response to the turn; resolves when the exchange can finish. */
export async function decodeUpstream(x: Exchange, upRes: http.IncomingMessage, turn: Turn, sink: ClientSink): Promise<void> {
  const d = new Decoder(x, upRes, turn, sink);
  const gone = new Promise<void>((r) => {
    if (x.ac.signal.aborted) r();
    else x.ac.signal.addEventListener('abort', () => r(), { once: true });
  });
  try {
    await Promise.race([turn.terminated, gone, turn.ctrl.done, d.refused]);
  } finally {
    d.stop();
  }
  if (d.refusal) {
    // Not committed yet: the turn is dropped and the router answers the refusal (exchange.ts).
    turn.ctrl.abort('drop');
    sink.abandon();
    throw d.refusal;
  }
}

class Decoder {
  private readonly reader: StreamReader;
  private readonly fence = new StreamFence();
  /** One array reused for every read's events. */
  private readonly evs: StreamEvent[] = [];
  private readonly idle: IdleTimer;
  private readonly deadline?: NodeJS.Timeout;
  /** The backend stream is over (ended or failed): later bytes are ignored. */
  private done = false;
  /** A whole JSON answer's reader (a backend that ignored `stream: true`); undefined for SSE. */
  private readonly json?: AnswerReader;
  /** A limit the JSON answer broke before the commit point: the exchange throws it (`decodeUpstream`). */
  refusal?: GatewayError;
  /** Resolves when `refusal` is set. */
  readonly refused: Promise<void>;
  private refuse!: () => void;

  constructor(
    private readonly x: Exchange,
    private readonly upRes: http.IncomingMessage,
    private readonly turn: Turn,
    private readonly sink: ClientSink,
  ) {
    const { ctx } = x;
    this.reader = ctx.newReader(x.creq.tools ?? []);
    this.refused = new Promise<void>((r) => (this.refuse = r));
    if (/application\/json/i.test(String(upRes.headers['content-type'] ?? ''))) {
      this.json = new AnswerReader({ maxBytes: ctx.maxBodyBytes, maxDepth: ANSWER_MAX_DEPTH, what: 'upstream JSON answer', ...(ctx.budget ? { budget: ctx.budget } : {}) });
    }
    this.idle = new IdleTimer(ctx.idleTimeoutMs, () => this.cut('timeout_error', `upstream sent nothing for ${ctx.idleTimeoutMs} ms`));
    // Overall deadline: a backend that keeps sending forever cannot hold a slot forever.
    const deadlineMs = ctx.requestDeadlineMs;
    if (deadlineMs !== undefined && deadlineMs > 0) {
      const left = Math.max(1, deadlineMs - (performance.now() - x.t0));
      this.deadline = setTimeout(() => this.cut('timeout_error', `request deadline of ${deadlineMs} ms reached`), left);
    }
    x.endForShutdown = (message) => this.cut('overloaded_error', message);
    sink.throttle = {
      pause: () => {
        this.sinkPaused = true;
        upRes.pause();
        this.idle.pause();
      },
      resume: () => {
        this.sinkPaused = false;
        this.idle.resume();
        if (this.backlog.length > 0) this.scheduleDrain();
        else this.resumeBackend();
      },
    };
    upRes.on('data', (chunk: Buffer) => this.guard('decode', () => this.data(chunk)));
    upRes.on('end', () => this.guard('decode', () => this.end()));
    upRes.on('error', () => this.guard('decode', () => this.fail('api_error', 'upstream connection lost mid-stream')));
    upRes.on('close', () => {
      if (!this.done && !x.clientGone) this.guard('decode', () => this.fail('api_error', 'upstream connection closed mid-stream'));
    });
  }

  /**
   * Every entry from the backend socket, the timers and the `read` microtask runs here: an
   * exception ends this request (the turn's `fault`: an error frame to the client), never the
   * process (a throw in a socket's event or a microtask is uncaught).
   */
  private guard(stage: PipelineStage, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.done = true;
      this.turn.fault(stage, err);
    }
  }

  /**
   * One `data` event of the backend response. Node's HTTP parser hands over one per chunk of a
   * chunked body (a token stream: one per SSE frame, hundreds per socket read), all within the one
   * call that delivers the socket read. They are kept and decoded together by `read`, a microtask
   * that runs when that call returns, before any other I/O: no added latency, one pass of the
   * reader and one client write per socket read.
   */
  private data(chunk: Buffer): void {
    if (this.done) return;
    if (this.x.stats.firstByteMs === undefined) {
      this.x.stats.firstByteMs = ms(performance.now() - this.x.t0);
      this.x.obs.firstByte();
    }
    if (this.json) {
      this.idle.touch();
      return this.collectJson(chunk);
    }
    this.parts.push(chunk);
    if (!this.readQueued) {
      this.readQueued = true;
      queueMicrotask(this.read);
    }
  }

  /** The `data` chunks of the current socket read (see `data`). */
  private parts: Buffer[] = [];
  private readQueued = false;
  private readonly read = (): void => {
    this.readQueued = false;
    this.guard('decode', () => this.decodeParts());
    this.guard('encode', () => this.sink.flush());
  };

  /** The sink asked for the backend to wait (the client is not reading, or a huge call's pieces drain). */
  private sinkPaused = false;
  /** The backend waits for the next turn of the event loop (see `yieldTurn`). */
  private yielding = false;
  /** Bytes decoded since the event loop last got a turn. */
  private turnBytes = 0;

  /** The kept chunks → the reader → the turn (the idle clock hears bytes that are more than SSE comments). */
  private decodeParts(): void {
    const parts = this.parts;
    if (parts.length === 0) return;
    const bytes = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    parts.length = 0;
    if (sseProgress(bytes)) this.idle.touch();
    this.feed(this.reader.write(bytes, this.evs));
    this.evs.length = 0;
    this.yieldTurn(bytes.length);
  }

  /**
   * libuv reads a readable socket up to 32 times (64 KiB each) in one turn of the event loop, and
   * each read is decoded in its own microtask: a backend writing as fast as the gateway reads (one
   * huge event, issue 18) got ~2 MiB decoded per turn, 30-70 ms with no timer, no /health and no
   * other client in between. Past TURN_BYTES the backend is paused until the next turn (`setImmediate`).
   */
  private yieldTurn(n: number): void {
    if (this.turnBytes === 0) setImmediate(this.turnOver);
    this.turnBytes += n;
    if (this.turnBytes < TURN_BYTES || this.yielding || this.done) return;
    this.yielding = true;
    this.upRes.pause();
  }

  private readonly turnOver = (): void => {
    this.turnBytes = 0;
    this.turnChars = 0;
    if (!this.yielding) return;
    this.yielding = false;
    this.resumeBackend();
  };

  /** Read the backend again unless something still holds it: the client's socket, this turn's byte budget, events waiting for their turn, or the end. */
  private resumeBackend(): void {
    if (!this.sinkPaused && !this.yielding && !this.done && this.backlog.length === 0) this.upRes.resume();
  }

  /**
   * Events waiting for the next turn of the event loop (past TURN_CHARS in one turn), in order;
   * the backend is paused while any wait, and whatever comes later (more events, the end, a
   * failure) queues behind them.
   */
  private backlog: StreamEvent[] = [];
  private backlogHead = 0;
  private drainQueued = false;
  /** Characters fed to the turn in this turn of the event loop (reset by `drain`). */
  private turnChars = 0;

  private feed(evs0: StreamEvent[]): void {
    // A call that begins after the backend's finish (or after [DONE]) is not another block.
    const evs = this.fence.filter(evs0);
    if (this.backlog.length > 0) {
      for (let i = 0; i < evs.length; i++) this.backlog.push(evs[i]!);
      return;
    }
    for (let i = 0; i < evs.length; i++) {
      const e = evs[i]!;
      this.turn.feed(e);
      this.turnChars += charsOf(e);
      if (this.turnChars >= TURN_CHARS && i + 1 < evs.length) {
        this.backlog = evs.slice(i + 1);
        this.backlogHead = 0;
        this.upRes.pause();
        this.scheduleDrain();
        return;
      }
    }
  }

  private scheduleDrain(): void {
    if (this.drainQueued) return;
    this.drainQueued = true;
    setImmediate(this.drain);
  }

  /** A new turn of the event loop: feed the waiting events up to TURN_CHARS, then flush. */
  private readonly drain = (): void => {
    this.drainQueued = false;
    this.turnChars = 0;
    if (this.backlog.length === 0 || this.sinkPaused) return; // the sink's resume drains again
    this.guard('decode', () => {
      const q = this.backlog;
      let k = this.backlogHead;
      while (k < q.length && this.turnChars < TURN_CHARS) {
        const e = q[k++]!;
        this.turn.feed(e);
        this.turnChars += charsOf(e);
      }
      this.backlogHead = k;
      if (k < q.length) {
        this.scheduleDrain();
        return;
      }
      this.backlog = [];
      this.backlogHead = 0;
      this.resumeBackend();
    });
    this.guard('encode', () => this.sink.flush());
  };

  private end(): void {
    if (this.done) return;
    this.decodeParts(); // 'end' can come before the `read` microtask of the last socket read
    this.done = true;
    if (this.json) this.replayJson();
    this.feed(this.reader.end());
    this.sink.flush();
  }

  /** The backend stream failed: the turn gets one stream error (the first failure wins). */
  private fail(type: string, message: string): void {
    if (this.done) return;
    this.decodeParts(); // what arrived before the failure counts
    this.done = true;
    const error: StreamEvent = { type: 'stream.error', error: { type, message }, retryable: false };
    // Behind the events still waiting for their turn, if any (not through the fence: a failure after the finish still counts).
    if (this.backlog.length > 0) this.backlog.push(error);
    else this.turn.feed(error);
    this.sink.flush();
  }

  /** A timer ended the stream: fail it and drop the backend connection. */
  private cut(type: string, message: string): void {
    this.guard('decode', () => this.fail(type, message));
    this.upRes.destroy();
  }

  /**
   * A whole JSON answer is read like a `/v1/models` answer (upstream/answer.ts `AnswerReader`):
   * within the body size cap, the JSON depth limit and the memory budget while it arrives; past
   * any of them (or at its first byte that is not JSON) the rest is not read and the request ends.
   */
  private collectJson(chunk: Buffer): void {
    try {
      this.json!.push(chunk);
    } catch (err) {
      this.jsonFailed(err);
    }
  }

  /**
   * The JSON answer broke a limit (a GatewayError) or is not JSON. Before the commit point the
   * GatewayError is the request's answer (the router sends it with its status and headers); after
   * it, the stream ends with the API's error frame of the same type and message.
   */
  private jsonFailed(err: unknown): void {
    if (err instanceof GatewayError && !committed(this.x)) {
      this.done = true;
      this.refusal = err;
      this.upRes.destroy();
      this.refuse();
      return;
    }
    if (err instanceof GatewayError) return this.cut(err.type, err.message);
    this.cut('api_error', UNREADABLE_JSON);
  }

  /** A whole JSON answer (a backend that ignored `stream: true`) → the payloads its stream would have had. */
  private replayJson(): void {
    let payloads: unknown[] | undefined;
    try {
      payloads = this.x.ctx.upstreamFormat.jsonToPayloads(this.json!.finish());
    } catch {
      payloads = undefined;
    }
    if (payloads) for (const p of payloads) this.feed(this.reader.writePayload(p));
    else this.feed([{ type: 'stream.error', error: { type: 'api_error', message: UNREADABLE_JSON }, retryable: false }]);
  }

  /** The exchange is finishing: timers off, the backend connection closed if it is still open. */
  stop(): void {
    this.backlog = [];
    this.backlogHead = 0;
    this.json?.release();
    this.idle.stop();
    if (this.deadline) clearTimeout(this.deadline);
    this.x.endForShutdown = undefined;
    if (!this.upRes.complete) this.upRes.destroy();
  }
}
