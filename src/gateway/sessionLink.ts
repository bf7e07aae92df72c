/**
 * Which earlier response a request continues (SPEC §13): a client that ran the tool calls of a
 * response sends their results in its next request, each under the id the gateway gave the call
 * (Messages `tool_result.tool_use_id`, Chat `tool` message `tool_call_id`, Responses
 * `function_call_output.call_id`; all are `tool_result` blocks of the canonical request). The
 * gateway remembers, per call id it sent, which response it belonged to and when that response's
 * backend stream ended; a request whose trailing tool results name such ids continues it, and the
 * time from that stream end to this request's arrival is how long the client took to come back
 * (tool time not hidden by the stream, plus the client's own work).
 *
 * Memory is bounded: at most `maxEntries` ids (oldest dropped first) and each for at most `ttlMs`
 * after its stream ended; a response is continued once (its ids are forgotten when matched, so a
 * retried request does not count it twice). Only ids, names of formats/models and times are kept —
 * never message contents.
 */
import type * as http from 'node:http';
import { performance } from 'node:perf_hooks';
import type { MessageParam } from './canonical';
import type { ReleaseArm } from './holdout';

/** A W3C trace position (hex ids), for a span link to the earlier request's span. */
export interface TraceRef {
  traceId: string;
  spanId: string;
}

/** One response whose tool calls a later request may answer. Times are `performance.now()` values. */
export interface AnsweredResponse {
  requestId: string;
  arm: ReleaseArm;
  /** The reader's wire format (`openai-chat`, `dynamo`, `anthropic`, …): the report's row key. */
  format: string;
  /** The backend model (after --model / --model-map): the report's row key. */
  model: string;
  /** When its request arrived. */
  arrivedAt: number;
  /** When its backend stream ended. */
  streamEndAt: number;
  /** Its SERVER span, when telemetry is on. */
  trace?: TraceRef;
}

/** On a request that answers tool calls of an earlier response: that response, and the gap. */
export interface Continuation {
  /** The earlier request's id (its `turn` record's `reqId`). */
  requestId: string;
  /** The earlier response's arm, format and model. */
  arm: ReleaseArm;
  format: string;
  model: string;
  /** The earlier request's arrival → its backend stream end (ms). */
  turnMs: number;
  /** That stream end → this request's arrival (ms). */
  gapMs: number;
  /** How many of the earlier response's call ids this request answers. */
  calls: number;
  /** The earlier request's span (for a span link). */
  trace?: TraceRef;
}

export interface SessionLinkOptions {
  /** Most call ids remembered (default 50,000: a few MB at most). */
  maxEntries?: number;
  /** How long after its stream ended a response can still be continued (default 30 minutes). */
  ttlMs?: number;
  /** Clock (`performance.now()` by default). */
  now?: () => number;
}

export const DEFAULT_LINK_MAX_ENTRIES = 50_000;
export const DEFAULT_LINK_TTL_MS = 30 * 60_000;

/** Call ids the gateway sent → the response they came in (insertion order = stream-end order). */
export class SessionLinks {
  private readonly byId = new Map<string, AnsweredResponse>();
  /** Each remembered response's ids (to forget them when it is continued, without a scan). */
  private readonly idsOf = new WeakMap<AnsweredResponse, readonly string[]>();
  readonly maxEntries: number;
  readonly ttlMs: number;
  private readonly now: () => number;

  constructor(o: SessionLinkOptions = {}) {
    this.maxEntries = Math.max(1, Math.floor(o.maxEntries ?? DEFAULT_LINK_MAX_ENTRIES));
    this.ttlMs = o.ttlMs ?? DEFAULT_LINK_TTL_MS;
    this.now = o.now ?? (() => performance.now());
  }

  /** How many ids are remembered now. */
  get size(): number {
    return this.byId.size;
  }

  /** The response `r` sent these call ids to its client. */
  remember(ids: readonly string[], r: AnsweredResponse): void {
    this.expire();
    this.idsOf.set(r, ids.slice());
    for (const id of ids) {
      if (id.length === 0) continue;
      this.byId.delete(id); // re-inserted at the end (newest)
      this.byId.set(id, r);
    }
    while (this.byId.size > this.maxEntries) this.byId.delete(this.byId.keys().next().value as string);
  }

  /**
   * The response a request arriving at `arrivedAt` continues, by the call ids it answers (the one
   * with the most of them when they name several), or undefined. Its ids are forgotten.
   */
  continues(answered: readonly string[], arrivedAt: number): Continuation | undefined {
    if (answered.length === 0) return undefined;
    this.expire();
    let best: AnsweredResponse | undefined;
    let bestCount = 0;
    const counts = new Map<AnsweredResponse, number>();
    for (const id of answered) {
      const r = this.byId.get(id);
      if (r === undefined) continue;
      const n = (counts.get(r) ?? 0) + 1;
      counts.set(r, n);
      if (n > bestCount || (n === bestCount && best !== undefined && r.streamEndAt > best.streamEndAt)) {
        best = r;
        bestCount = n;
      }
    }
    if (best === undefined) return undefined;
    for (const id of this.idsOf.get(best) ?? []) if (this.byId.get(id) === best) this.byId.delete(id);
    const c: Continuation = {
      requestId: best.requestId,
      arm: best.arm,
      format: best.format,
      model: best.model,
      turnMs: round(best.streamEndAt - best.arrivedAt),
      gapMs: round(arrivedAt - best.streamEndAt),
      calls: bestCount,
    };
    if (best.trace !== undefined) c.trace = best.trace;
    return c;
  }

  /** Drop ids whose stream ended more than `ttlMs` ago (the oldest are first). */
  private expire(): void {
    const limit = this.now() - this.ttlMs;
    for (const [id, r] of this.byId) {
      if (r.streamEndAt >= limit) break;
      this.byId.delete(id);
    }
  }
}

/** Most answered ids read from one request (a turn with more tool results is still linked by these). */
export const MAX_ANSWERED_IDS = 256;

/**
 * The tool-call ids a request answers: the `tool_result` blocks after its last assistant message
 * (the results of the calls that message made; earlier ones answer earlier responses). Ids only.
 */
export function answeredCallIds(messages: readonly MessageParam[]): string[] {
  const ids: string[] = [];
  let start = messages.length;
  while (start > 0 && messages[start - 1]!.role !== 'assistant') start--;
  for (let i = start; i < messages.length && ids.length < MAX_ANSWERED_IDS; i++) {
    const m = messages[i]!;
    if (m.role !== 'user') continue;
    for (const b of m.content) {
      if (b.type === 'tool_result' && b.tool_use_id.length > 0) {
        ids.push(b.tool_use_id);
        if (ids.length >= MAX_ANSWERED_IDS) break;
      }
    }
  }
  return ids;
}

/**
 * Request headers that name the client's session, most specific first: Claude Code's
 * `x-claude-code-session-id` (v2.1.86+), Codex's `session-id` / `session_id` and
 * `conversation_id`, and the generic `x-session-id`.
 */
export const SESSION_HEADERS: readonly string[] = ['x-claude-code-session-id', 'session-id', 'session_id', 'conversation_id', 'x-session-id'];

/** The client's session id from its headers (printable ASCII, at most 128 characters), or undefined. */
export function sessionIdOf(headers: http.IncomingHttpHeaders): string | undefined {
  for (const h of SESSION_HEADERS) {
    const v = headers[h];
    const s = (Array.isArray(v) ? v[0] : v)?.trim();
    if (s !== undefined && s.length > 0 && s.length <= 128 && /^[\x21-\x7e]+$/.test(s)) return s;
  }
  return undefined;
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}
