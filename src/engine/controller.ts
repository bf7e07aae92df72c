import mitt, { type Emitter } from 'mitt';
import { createActor, type InspectionEvent, type Observer } from 'xstate';
import type { CallResult, Classification, ReuseResults, RunToolFn, RunToolInput } from '../calls';
import { inspectedToolCallMachine } from '../../machines/toolCall.machine';
import {
  type AbortMode,
  type EndCompletion,
  type TurnActorRef,
  type TurnEmitted,
  type TurnEvent,
  type TurnOutcome,
  type TurnSettings,
  completeCall,
  isStreaming,
  readyCallStart,
  turnMachine,
} from '../../machines/turn.machine';
import { ArgBuffer } from '../args/buffer';
import { repairTruncated } from '../args/repair';
import type { TurnTraceEntry as TraceEntry } from '../history/trace';
import type { HistoryMessage, ToolCallRecord, ToolResultRecord } from '../history/types';
import type { OutputEvent } from '../release/output';
import { CallIndexSet } from '../release/rules';
import type { FinishReason, StreamErrorInfo, StreamEvent, Usage, WireFormat } from '../wire/events';
import { TextRuns } from '../textRuns';
import { type Clock, realClock } from './clock';
import { LIMIT_ERROR_TYPE, type LimitHit, limitMessage, MAX_STRING_CHARS, resolveLimits, type TurnLimits } from './limits';

/**
 * The turn controller: owns the turn actor and the byte path.
 *
 * Canonical events come in through `feed()`. Fragments go to a plain per-call `ArgBuffer`
 * (O(fragment) each, never a machine event); the machine only hears lifecycle boundaries:
 * `call.open`, `call.identity` (when it adds something), `call.complete` (once, with the judged
 * outcome), `stream.finish`, `stream.end`, `stream.error`, `turn.abort`, approvals.
 *
 * Completion (SPEC §4): with `completion: 'inferred'` (default) a call is complete as soon as
 * its top-level JSON value closes; with 'evidence-only' it needs the provider's evidence
 * (`call.complete`) or a finish. Either way the end of the stream closes every call; a
 * max_tokens-truncated last call is repaired only then (SPEC §5.7).
 *
 * Output ordering: text and thinking that arrive after a call opened are held until every
 * earlier call is released or suppressed, so they keep their place (SPEC §5.9).
 */

export type CompletionMode = 'inferred' | 'evidence-only';

/**
 * The completion mode a wire format gets: inference only where the wire has no timely per-call
 * evidence (OpenAI chat and Dynamo's chat chunks; the AI SDK, whose chat-based providers — OpenAI
 * chat, OpenAI-compatible, Groq, xAI, … — send `tool-input-end` only when the stream ends); every
 * other format waits for its evidence (Anthropic content_block_stop, Responses .done, Gemini whole
 * parts, a text family's closing marker).
 */
export function completionFor(format: WireFormat | undefined, requested?: CompletionMode): CompletionMode {
  if (requested === 'evidence-only') return 'evidence-only';
  if (format === undefined || format === 'openai-chat' || format === 'dynamo' || format === 'ai-sdk') return 'inferred';
  return 'evidence-only';
}

export interface CallTiming {
  index: number;
  attempt: number;
  id?: string;
  name?: string;
  input?: Record<string, unknown>;
  /** Argument size in characters (never the contents). */
  argsChars: number;
  /** When the call first appeared in the stream. */
  openMs: number;
  completeMs?: number;
  readyMs?: number;
  releasedMs?: number;
  startedMs?: number;
  resultMs?: number;
  result?: CallResult;
  /** The result is a discarded attempt's, reused for this repeated read-only call (it did not run). */
  reused?: boolean;
  state: string;
  /** `policy.earlyStart: 'shadow'`: when `'safe'` would have started this call (same time base; src/execute/shadow.ts). */
  shadowStartMs?: number;
}

export interface ControllerWarning {
  code: string;
  message: string;
  index?: number;
}

export type ControllerEvents = {
  output: OutputEvent;
  /** A call became ready (identity + complete payload + JSON object), before the release barrier. */
  'call.ready': CallTiming;
  'call.released': CallTiming;
  'call.suppressed': { index: number; attempt: number; reason: 'single_tool' | 'invalid' };
  'approval.request': {
    index: number;
    attempt: number;
    id: string;
    name: string;
    input: Record<string, unknown>;
  };
  'tool.start': CallTiming;
  'tool.result': CallTiming;
  /** A repeated read-only call got a discarded attempt's result instead of running (before its `tool.result`). */
  'call.reused': CallTiming;
  /** `reason`: 'retry-after' when the provider's `retry-after` set the delay, else 'backoff' (src/engine/retry.ts). */
  'attempt.retry': { attempt: number; delayMs: number; error: StreamErrorInfo; reason: 'backoff' | 'retry-after'; retryAfterMs?: number };
  'attempt.begin': { attempt: number };
  'turn.done': TurnSummary;
  warning: ControllerWarning;
  /**
   * The turn's actor stopped on an exception thrown inside one of its steps (a bug, or an event
   * listener that threw while the machine ran it). The turn then ends failed (`internal_error`).
   */
  fault: { error: unknown };
  /** Lifecycle trace for the run-time invariant checks (I4–I6). */
  trace: TraceEntry;
};

export type { TurnTraceEntry as TraceEntry } from '../history/trace';

export interface TurnSummary {
  outcome: TurnOutcome;
  attempts: number;
  streamEndMs?: number;
  turnDoneMs: number;
  finish?: FinishReason;
  error?: StreamErrorInfo;
  calls: CallTiming[];
  /** The messages this turn appends to the conversation (execute mode). */
  history: HistoryMessage[];
  warnings: ControllerWarning[];
  trace: TraceEntry[];
  /** Set when a resource limit ended the turn (outcome 'failed', error type 'limit_exceeded'). */
  limit?: LimitHit;
  /** Token usage the stream reported for the last attempt (AI SDK names). */
  usage?: TurnUsage;
  /** The model the stream named (message start), when it named one. */
  model?: string;
  /** `policy.earlyStart: 'shadow'`: turn time `'safe'` would have saved (ms, from the real tool durations). */
  shadowSavedMs?: number;
  /** runTurn: each retry's wait and why (src/engine/retry.ts), in order; absent when the turn was not retried. */
  retries?: RetryRecord[];
}

/** One retry of a turn: the attempt it starts, how long the turn waited and why. */
export interface RetryRecord {
  /** The attempt the retry begins (2 for the first retry). */
  attempt: number;
  delayMs: number;
  /** 'retry-after': the provider's `retry-after` set the delay (its floor); 'backoff': the jittered exponential backoff. */
  reason: 'backoff' | 'retry-after';
  /** What the provider asked for, when it did. */
  retryAfterMs?: number;
  /** The error type that ended the previous attempt. */
  errorType: string;
}

/** Token usage named as the AI SDK's `LanguageModelUsage` names it. */
export interface TurnUsage {
  /** Prompt tokens, cached ones included. */
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  /** Of inputTokens, how many were read from the provider's cache. */
  cachedInputTokens?: number;
}

export type { RunToolFn };

/** Wraps every tool run of a turn (the journal's write-ahead `started` record, src/journal). */
export type RunHook = (call: RunToolInput, signal: AbortSignal, run: RunToolFn) => Promise<CallResult>;

export interface ControllerOptions {
  mode?: 'gateway' | 'execute';
  /** The wire format being fed: decides whether completion may be inferred (see `completionFor`). */
  format?: WireFormat;
  /** 'inferred' (default) infers completion where the format has no evidence; 'evidence-only' never does. */
  completion?: CompletionMode;
  /**
   * Hold every call until the stream ends: no completion (evidence or inferred) counts before
   * `stream.end` (the gateway's `--release-holdout` control group: post-stream release).
   */
  holdToEnd?: boolean;
  singleTool?: boolean;
  maxAttempts?: number;
  retryBaseMs?: number;
  /** Longest wait before a retry, and its jitter (src/engine/retry.ts); `random` for tests. */
  retryMaxDelayMs?: number;
  retryJitter?: TurnSettings['retryJitter'];
  random?: () => number;
  earlyStart?: TurnSettings['earlyStart'];
  maxConcurrent?: number;
  onAbort?: AbortMode;
  classify?: (name: string, input: Record<string, unknown>) => Classification;
  runTool?: RunToolFn;
  clock?: Clock;
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
  /**
   * Call ids already used in the conversation this turn continues. A call whose id repeats one
   * of them (or another call's id in this attempt) is renamed (see `uniqueCallId`).
   */
  knownCallIds?: Iterable<string>;
  /** Resource limits per attempt (src/engine/limits.ts, docs/limits.md); unset fields keep their defaults. */
  limits?: Partial<TurnLimits>;
  /** Retries reuse finished read-only results of discarded attempts ('safe', default) or not ('none'). */
  reuseResults?: ReuseResults;
  /**
   * Results reused from the start: a call of this turn with the same name and arguments is answered
   * with one at its release (how a resumed attempt gives its journaled reused results again).
   */
  reuse?: ReadonlyArray<{ name: string; input: Record<string, unknown>; result: CallResult }>;
}

type CallComplete = Extract<TurnEvent, { type: 'call.complete' }>;

interface Slot {
  index: number;
  buf: ArgBuffer;
  id?: string;
  name?: string;
  evidence: boolean;
  completeSent: boolean;
  lateWarned: boolean;
  timing: CallTiming;
}

interface Pending {
  afterCalls: number;
  event: OutputEvent;
}

/** Warnings kept in a turn's summary (all are emitted as `warning` events). */
export const MAX_KEPT_WARNINGS = 1000;

/** The wire's usage (`promptTokens`, …) under the AI SDK's names; fields the stream did not report stay unset. */
export function turnUsage(u: Usage): TurnUsage {
  const out: TurnUsage = {};
  if (u.promptTokens !== undefined) out.inputTokens = u.promptTokens;
  if (u.outputTokens !== undefined) out.outputTokens = u.outputTokens;
  if (u.promptTokens !== undefined && u.outputTokens !== undefined) out.totalTokens = u.promptTokens + u.outputTokens;
  if (u.cachedTokens !== undefined) out.cachedInputTokens = u.cachedTokens;
  return out;
}

/** Later reports win field by field (usage is cumulative on every wire sluice reads). */
function mergeUsage(a: Usage | undefined, b: Usage): Usage {
  const out: Usage = { ...a };
  if (b.promptTokens !== undefined) out.promptTokens = b.promptTokens;
  if (b.cachedTokens !== undefined) out.cachedTokens = b.cachedTokens;
  if (b.outputTokens !== undefined) out.outputTokens = b.outputTokens;
  return out;
}

const DEFAULT_CLASSIFY = (): Classification => ({ safe: false, needsApproval: false });

export class TurnController {
  readonly events: Emitter<ControllerEvents> = mitt<ControllerEvents>();
  readonly actor: TurnActorRef;
  readonly clock: Clock;
  readonly done: Promise<TurnSummary>;
  /** Lifecycle facts in order (ids, names, flags; never contents), for checkTrace (I4–I6). */
  readonly traceLog: TraceEntry[] = [];

  private readonly completion: CompletionMode;
  private readonly holdToEnd: boolean;
  private readonly mode: 'gateway' | 'execute';
  private attempt = 1;
  private slots = new Map<number, Slot>();
  /** The slot of the last fragment (fragments of one call usually arrive in a row). */
  private lastSlot?: Slot;
  /** The slots' indices, ascending (gap jumps after the end of the stream). */
  private seenIdx = new CallIndexSet();
  private opened = 0; // max index + 1 seen in this attempt
  private frontier = 0; // output frontier: calls < frontier are released/suppressed
  private resolvedSet = new Set<number>();
  private pending: Pending[] = [];
  private pendingHead = 0;
  private ignoring = false;
  private messageStarted = false;
  /** The attempt's text and thinking for the history (TextRuns: flat runs, not one live object per delta). */
  private readonly text = new TextRuns();
  private readonly thinking = new TextRuns();
  private thinkingSignature?: string;
  private streamEndMs?: number;
  /** Set when the turn's actor stopped on an exception (`onActorError`); other errors are the turn's (`context.error`). */
  private fault?: StreamErrorInfo;
  private readonly warnings: ControllerWarning[] = [];
  private readonly allTimings: CallTiming[] = [];
  private resolveDone!: (s: TurnSummary) => void;
  /** Ids of earlier turns (`knownCallIds`) and ids given out in the current attempt. */
  private readonly knownIds: ReadonlySet<string>;
  private attemptIds = new Set<string>();
  private readonly limits: TurnLimits;
  /** Argument + text + thinking chars held by the current attempt (maxTotalChars). */
  private heldChars = 0;
  private limitHit?: LimitHit;
  /** Usage and model of the current attempt (message start / usage events only: never per fragment). */
  private usage?: Usage;
  private model?: string;

  constructor(opts: ControllerOptions = {}) {
    this.mode = opts.mode ?? 'gateway';
    this.completion = completionFor(opts.format, opts.completion);
    this.holdToEnd = opts.holdToEnd === true;
    this.clock = opts.clock ?? realClock();
    this.knownIds = new Set(opts.knownCallIds ?? []);
    this.limits = resolveLimits(opts.limits);
    this.done = new Promise((r) => (this.resolveDone = r));
    this.runTool = opts.runTool;
    const settings: TurnSettings = {
      mode: this.mode,
      singleTool: opts.singleTool ?? false,
      maxAttempts: opts.maxAttempts ?? (this.mode === 'gateway' ? 1 : 3),
      retryBaseMs: opts.retryBaseMs ?? 500,
      retryMaxDelayMs: opts.retryMaxDelayMs,
      retryJitter: opts.retryJitter,
      random: opts.random,
      earlyStart: opts.earlyStart ?? 'safe',
      maxConcurrent: opts.maxConcurrent ?? 10,
      onAbort: opts.onAbort ?? 'commit',
      classify: this.classifyOnce(opts.classify ?? DEFAULT_CLASSIFY),
      reuseResults: opts.reuseResults ?? 'safe',
      runTool: opts.runTool && ((call, signal) => this.adoptOrRun(call, signal, opts.runTool!)),
      // What the turn tells the controller, called directly (not emitted: see `TurnSettings.notify`).
      notify: (e) => {
        this.inStep++;
        try {
          this.onMachineEvent(e);
        } finally {
          this.inStep--;
        }
      },
    };
    this.actor = createActor(turnMachine, {
      input: { settings, reusable: opts.reuse },
      clock: this.clock,
      inspect: opts.inspect,
    });
    // Inspection hooks only when someone inspects: an inspected turn's call actors report every
    // state entry as a `call.status` event (the timeline of src/demo, --inspect-log); otherwise
    // they report only what the turn acts on. An observer may also be attached later through
    // `actor.system.inspect` (src/cli/inspect.ts): calls opened from then on report every entry.
    if (opts.inspect) settings.callLogic = inspectedToolCallMachine();
    const system = this.actor.system;
    const inspect = system.inspect.bind(system);
    system.inspect = (observer) => {
      settings.callLogic = inspectedToolCallMachine();
      return inspect(observer);
    };
    this.trace({ t: 0, kind: 'attempt.start', attempt: 1 });
    // XState rethrows the error of an actor nobody observes from a timer, outside any stack: one
    // throwing listener would end the process. The turn takes its own actor's error instead.
    this.actor.subscribe({ error: (err) => this.onActorError(err) });
    this.actor.start();
  }

  // ---------------------------------------------------------------- byte path

  /** Feed one canonical event. Cheap for fragments and text; never throws on odd input. */
  feed(ev: StreamEvent): void {
    if (this.held !== undefined) {
      this.held.push(() => this.feed(ev));
      return;
    }
    if (!this.attemptOpen) return;
    if (this.ignoring && ev.type !== 'stream.end' && ev.type !== 'stream.error') return;
    switch (ev.type) {
      case 'call.fragment': {
        // Hot path: consecutive fragments of one call skip the map lookups and the admission check.
        let s = this.lastSlot;
        if (s === undefined || s.index !== ev.index) {
          if (!this.admit(ev.index)) return;
          s = this.lastSlot = this.slot(ev.index);
        }
        this.onFragment(s, ev.text);
        return;
      }
      case 'text.delta':
        if (ev.text.length === 0) return;
        if (!this.hold('maxTextChars', this.text.length, ev.text.length)) return;
        this.text.add(ev.text);
        this.out({ type: 'text', text: ev.text });
        return;
      case 'thinking.delta':
        if (ev.text.length === 0) return;
        if (!this.hold('maxThinkingChars', this.thinking.length, ev.text.length)) return;
        this.thinking.add(ev.text);
        this.out({ type: 'thinking', text: ev.text });
        return;
      case 'thinking.signature':
        this.thinkingSignature = ev.signature;
        this.out({ type: 'thinking.signature', signature: ev.signature });
        return;
      case 'call.identity':
        if (!this.admit(ev.index)) return;
        this.onIdentity(ev.index, ev.id, ev.name);
        return;
      case 'call.complete': {
        if (!this.admit(ev.index)) return;
        const slot = this.slot(ev.index);
        slot.evidence = true;
        this.check(slot);
        return;
      }
      case 'message.start':
        if (this.messageStarted && (this.opened > 0 || this.text.length > 0)) {
          this.warn(
            'message_restart',
            'a second message started mid-stream; the rest of the stream is ignored',
          );
          this.ignoring = true;
          return;
        }
        this.messageStarted = true;
        if (ev.model) this.model = ev.model;
        if (ev.usage) this.usage = mergeUsage(this.usage, ev.usage);
        this.emitOutput({ type: 'message.start', id: ev.id, model: ev.model, usage: ev.usage });
        return;
      case 'usage':
        this.usage = mergeUsage(this.usage, ev.usage);
        this.emitOutput({ type: 'usage', usage: ev.usage });
        return;
      case 'finish':
        this.actor.send({ type: 'stream.finish', reason: ev.reason });
        for (const slot of this.slots.values()) this.check(slot);
        return;
      case 'ping':
        return;
      case 'warning':
        this.warn(ev.code, ev.message);
        return;
      case 'stream.error':
        this.onStreamError(ev.error, ev.retryable);
        return;
      case 'stream.end':
        this.onStreamEnd();
        return;
    }
  }

  // ---------------------------------------------------------------- limits

  /** May this index be a call? A new index is checked against maxCallIndex and maxCalls. */
  private admit(index: number): boolean {
    if (this.slots.has(index)) return true;
    const l = this.limits;
    if (!Number.isSafeInteger(index) || index < 0 || index > l.maxCallIndex) {
      this.failLimit({ limit: 'maxCallIndex', max: l.maxCallIndex, value: index });
      return false;
    }
    if (this.slots.size >= l.maxCalls) {
      this.failLimit({ limit: 'maxCalls', max: l.maxCalls, value: this.slots.size + 1, index });
      return false;
    }
    return true;
  }

  /** Account `add` more chars on top of `current` for `limit` (and the per-attempt total). */
  private hold(limit: 'maxArgChars' | 'maxTextChars' | 'maxThinkingChars', current: number, add: number, index?: number): boolean {
    const max = Math.min(this.limits[limit], MAX_STRING_CHARS);
    if (current + add > max) {
      this.failLimit({ limit, max, value: current + add, ...(index === undefined ? {} : { index }) });
      return false;
    }
    if (this.heldChars + add > this.limits.maxTotalChars) {
      this.failLimit({ limit: 'maxTotalChars', max: this.limits.maxTotalChars, value: this.heldChars + add });
      return false;
    }
    this.heldChars += add;
    return true;
  }

  /**
   * A limit ends this turn: the attempt's buffers are released at once (memory returns to
   * baseline), and the turn fails with a non-retryable `limit_exceeded` stream error.
   */
  private failLimit(hit: LimitHit): void {
    if (this.limitHit !== undefined || !this.attemptOpen) return;
    this.limitHit = hit;
    const message = limitMessage(hit);
    this.warn('limit_exceeded', message, hit.index);
    for (const s of this.slots.values()) s.buf = new ArgBuffer();
    this.text.clear();
    this.thinking.clear();
    this.heldChars = 0;
    this.pending = [];
    this.pendingHead = 0;
    this.onStreamError({ type: LIMIT_ERROR_TYPE, message }, false);
  }

  /** The call's slot; a new one opens the call (with its identity when the opening event has it). */
  private slot(index: number, id?: string, name?: string): Slot {
    let s = this.slots.get(index);
    if (s === undefined) {
      const timing: CallTiming = {
        index,
        attempt: this.attempt,
        argsChars: 0,
        openMs: this.clock.now(),
        state: 'streaming',
      };
      s = { index, buf: new ArgBuffer(), evidence: false, completeSent: false, lateWarned: false, timing };
      this.slots.set(index, s);
      this.seenIdx.add(index);
      this.allTimings.push(timing);
      if (index + 1 > this.opened) this.opened = index + 1;
      if (id) s.id = timing.id = this.uniqueCallId(id, index);
      if (name) s.name = timing.name = name;
      this.actor.send({ type: 'call.open', index, id: s.id, name: s.name });
    }
    return s;
  }

  private onIdentity(index: number, id?: string, name?: string): void {
    if (!this.slots.has(index)) {
      this.slot(index, id, name); // opened with its identity: one event
      return;
    }
    const s = this.slot(index);
    const newId = id && !s.id ? id : undefined;
    const newName = name && !s.name ? name : undefined;
    if (!newId && !newName) return;
    if (newId) s.id = s.timing.id = this.uniqueCallId(newId, index);
    if (newName) s.name = s.timing.name = newName;
    this.actor.send({ type: 'call.identity', index, id: newId && s.id, name: newName });
  }

  /**
   * Call ids are unique within a turn and against `knownCallIds` (SPEC §10): a repeated id gets
   * the first free deterministic suffix `_2`, `_3`, … (so `call_dup`, `call_dup_2`) and a
   * `duplicate_call_id` warning. Done at identity time, so the gateway's output, the history and
   * the tool runner all see the one unique id; a call never runs twice under one id.
   */
  private uniqueCallId(id: string, index: number): string {
    let unique = id;
    if (this.idTaken(id)) {
      let n = 2;
      while (this.idTaken(`${id}_${n}`)) n++;
      unique = `${id}_${n}`;
      const where = this.attemptIds.has(id) ? 'by an earlier call of this turn' : 'in the conversation history';
      this.warn('duplicate_call_id', `call ${index}: id ${id} is already used ${where}; renamed to ${unique}`, index);
    }
    this.attemptIds.add(unique);
    return unique;
  }

  private idTaken(id: string): boolean {
    return this.attemptIds.has(id) || this.knownIds.has(id);
  }

  private onFragment(s: Slot, text: string): void {
    const index = s.index;
    if (s.completeSent) {
      if (!s.lateWarned && text.trim().length > 0) {
        s.lateWarned = true;
        this.warn(
          'late_fragment',
          `call ${index}: ${text.length} chars arrived after the call was complete; ignored`,
          index,
        );
      }
      return;
    }
    if (text.length > 0 && !this.hold('maxArgChars', s.buf.length, text.length, index)) return;
    s.buf.append(text);
    s.timing.argsChars = s.buf.length;
    const st = s.buf.status;
    if (st === 'closed' || st === 'invalid') this.check(s);
  }

  /** Send `call.complete` once the payload is final and completion is allowed. */
  private check(s: Slot): void {
    if (s.completeSent) return;
    const st = s.buf.status;
    if (st !== 'closed' && st !== 'invalid') return;
    if (this.holdToEnd && !this.streamEnded) return;
    if (this.completion === 'evidence-only' && !s.evidence && this.finish === undefined) return;
    this.complete(s);
  }

  /** The call's `call.complete` for its payload as it is now (its parsed input when it is an object). */
  private outcomeOf(s: Slot): CallComplete {
    const p = s.buf.parse();
    return p.kind === 'object' ? { type: 'call.complete', index: s.index, outcome: 'object', input: p.value } : { type: 'call.complete', index: s.index, outcome: p.kind };
  }

  /** The call's payload is final: the turn hears it (and a ready safe call may start right here, `startAtCompletion`). */
  private complete(s: Slot): void {
    s.completeSent = true;
    s.timing.completeMs ??= this.clock.now();
    const event = this.outcomeOf(s);
    if (event.input !== undefined && this.runTool !== undefined && this.runHook === undefined && this.startAtCompletion({ index: event.index, input: event.input }, this.runTool)) {
      // The turn hears the completion (and releases and starts the call) before anything the
      // tool asked for as it was invoked (`held`).
      try {
        completeCall(this.actor, event);
      } finally {
        if (this.started !== undefined) this.unadopted(this.started);
        this.runHeld();
      }
    } else completeCall(this.actor, event);
  }

  /**
   * The end of the attempt's stream, given to the turn as one event. Without its finish (SPEC §12)
   * the turn takes it as a cut stream (`stream_truncated`: retried or failed; no call is completed,
   * repaired or started from it). After the finish, every call not complete yet gets its final
   * outcome with the end (the buffer as it is; a max_tokens-truncated last call repaired, SPEC
   * §5.7, or dropped when its arguments are empty).
   */
  private onStreamEnd(): void {
    if (this.streamEnded) return;
    if (!this.actor.getSnapshot().matches({ streaming: 'finished' })) {
      this.actor.send({ type: 'stream.end' });
      return;
    }
    const now = (this.streamEndMs = this.clock.now());
    const complete: EndCompletion[] = [];
    for (const s of this.slots.values()) {
      if (s.completeSent) continue;
      s.completeSent = true;
      s.timing.completeMs ??= now;
      complete.push(this.outcomeOf(s));
    }
    // Truncation: repair only now, only the last call (SPEC §5.7).
    const last = this.finish === 'length' && this.opened > 0 ? this.slots.get(this.opened - 1) : undefined;
    if (last) {
      const p = last.buf.parse();
      let final: EndCompletion | undefined;
      if (p.kind === 'incomplete' || p.kind === 'invalid') {
        const fixed = repairTruncated(last.buf.text());
        if (fixed) {
          this.warn('repaired', `call ${last.index}: truncated arguments repaired at end of stream`, last.index);
          final = { index: last.index, outcome: 'object', input: fixed, repaired: true };
        }
      } else if (p.kind === 'empty') {
        final = { index: last.index, outcome: 'invalid' }; // an empty-arguments call cut by max_tokens is dropped
      }
      if (final) {
        const k = complete.findIndex((c) => c.index === last.index);
        if (k >= 0) complete[k] = final;
        else complete.push(final);
      }
    }
    this.trace({ t: now, kind: 'stream.end', attempt: this.attempt });
    this.actor.send({ type: 'stream.end', complete });
    this.maybeFinishOutput();
  }

  private onStreamError(error: StreamErrorInfo, retryable: boolean): void {
    this.actor.send({ type: 'stream.error', error, retryable });
  }

  // ---------------------------------------------------------------- machine side

  private onMachineEvent(e: TurnEmitted): void {
    switch (e.type) {
      case 'call.released': {
        const s = this.slots.get(e.index);
        if (!s || e.attempt !== this.attempt) return;
        const t = this.timeOf(e);
        s.timing.releasedMs = t;
        s.timing.readyMs ??= t;
        const view = this.actor.getSnapshot().context.calls[e.index];
        const input = view?.input ?? {};
        s.timing.input = input;
        s.timing.state = 'released';
        this.trace({ t, kind: 'released', attempt: e.attempt, index: e.index, safe: view?.safe });
        const raw = s.buf.text();
        // Huge arguments without whitespace around them are passed as they are, with their pieces
        // (no trim: it would copy the whole text at once; src/args/buffer.ts `trimmedParts`).
        const parts = view?.repaired ? undefined : s.buf.trimmedParts();
        const argsText = view?.repaired ? JSON.stringify(input) : parts !== undefined ? raw : raw.trim();
        const use: OutputEvent = {
          type: 'tool_use',
          index: e.index,
          backendId: s.id ?? '',
          name: s.name ?? '',
          input,
          argsText,
          repaired: view?.repaired ?? false,
        };
        if (parts !== undefined) use.argsParts = parts;
        this.resolveSlot(e.index, use);
        this.events.emit('call.released', s.timing);
        return;
      }
      case 'call.suppressed': {
        if (e.attempt !== this.attempt) return;
        const s = this.slots.get(e.index);
        if (s) s.timing.state = e.reason === 'invalid' ? 'invalid' : 'suppressed';
        this.warn(
          e.reason === 'invalid' ? 'invalid_call' : 'single_tool_suppressed',
          `call ${e.index} suppressed (${e.reason === 'invalid' ? 'arguments are not a JSON object or identity is missing' : 'single-tool limit'})`,
          e.index,
        );
        this.resolveSlot(e.index, undefined);
        this.events.emit('call.suppressed', e);
        return;
      }
      case 'call.ready': {
        if (e.attempt !== this.attempt) return;
        const s = this.slots.get(e.index);
        const t = this.timeOf(e);
        if (s) {
          s.timing.readyMs = t;
          this.events.emit('call.ready', s.timing);
        }
        this.trace({
          t,
          kind: 'ready',
          attempt: e.attempt,
          index: e.index,
          callId: s?.id,
          name: s?.name,
          safe: e.safe,
          needsApproval: e.needsApproval,
        });
        return;
      }
      case 'approval.request': {
        const view = this.actor.getSnapshot().context.calls[e.index];
        this.events.emit('approval.request', { ...e, input: view?.input ?? {} });
        return;
      }
      case 'tool.start': {
        const s = this.slots.get(e.index);
        if (!s || e.attempt !== this.attempt) return;
        s.timing.startedMs = this.timeOf(e);
        s.timing.state = 'running';
        this.trace({ t: s.timing.startedMs, kind: 'started', attempt: e.attempt, index: e.index });
        this.events.emit('tool.start', s.timing);
        return;
      }
      case 'tool.result': {
        const s = this.slots.get(e.index);
        if (!s || e.attempt !== this.attempt) return;
        s.timing.resultMs = this.clock.now();
        s.timing.result = e.result;
        s.timing.state = 'resulted';
        if (e.reused) {
          s.timing.reused = true;
          this.events.emit('call.reused', s.timing);
        }
        this.trace({
          t: s.timing.resultMs,
          kind: 'resulted',
          attempt: e.attempt,
          index: e.index,
          ...(e.result.synthetic ? { synthetic: e.result.synthetic } : {}),
        });
        this.events.emit('tool.result', s.timing);
        return;
      }
      case 'attempt.retry':
        for (const s of this.slots.values()) s.timing.state = 'discarded';
        this.trace({ t: this.clock.now(), kind: 'discarded', attempt: this.attempt });
        this.resetAttempt();
        this.events.emit('attempt.retry', e);
        return;
      case 'attempt.begin':
        this.attempt = e.attempt;
        this.trace({ t: this.clock.now(), kind: 'attempt.start', attempt: e.attempt });
        this.events.emit('attempt.begin', e);
        return;
      case 'turn.done':
        this.onTurnDone(e.outcome, e.error);
        return;
    }
  }

  private resetAttempt(): void {
    this.slots = new Map();
    this.lastSlot = undefined;
    this.attemptIds = new Set();
    this.seenIdx = new CallIndexSet();
    this.opened = 0;
    this.frontier = 0;
    this.resolvedSet.clear();
    this.pending = [];
    this.pendingHead = 0;
    this.ignoring = false;
    this.text.clear();
    this.thinking.clear();
    this.thinkingSignature = undefined;
    this.streamEndMs = undefined;
    this.heldChars = 0;
    this.usage = undefined;
  }

  /**
   * The turn's actor stopped on an exception (see `fault`): the turn ends failed with one
   * `internal_error` (the `error` output event, `turn.done`, `done` resolved) and reads no more;
   * a listener that throws again here is not heard (the actor is already stopped).
   */
  private onActorError(err: unknown): void {
    this.fault = { type: 'internal_error', message: 'the turn stopped on an internal error' };
    for (const step of [() => this.events.emit('fault', { error: err }), () => this.onTurnDone('failed')]) {
      try {
        step();
      } catch {
        // Contained: the fault was reported once already.
      }
    }
  }

  private onTurnDone(outcome: TurnOutcome, turnError?: StreamErrorInfo): void {
    // An end the turn took after the last release (fed again from a listener while the turn was
    // busy, so it waited in the turn's mailbox) ends the output here, before the summary.
    this.maybeFinishOutput();
    const ctx = this.actor.getSnapshot().context;
    for (const s of this.slots.values()) {
      const v = ctx.calls[s.index];
      if (!v) continue;
      if (v.phase === 'discarded' || v.suppressed) s.timing.state = v.suppressed ? 'suppressed' : 'discarded';
      else s.timing.state = v.phase;
    }
    const error = this.fault ?? turnError;
    if (outcome === 'failed' && error) this.emitOutput({ type: 'error', error });
    const history = this.buildHistory(outcome);
    if (outcome === 'dropped' || outcome === 'failed') {
      this.trace({ t: this.clock.now(), kind: 'discarded', attempt: this.attempt });
    } else if (this.mode === 'execute') {
      const assistant = history[0];
      const callIds = assistant && assistant.role === 'assistant' ? assistant.calls.map((c) => c.id) : [];
      this.trace({ t: this.clock.now(), kind: 'committed', attempt: this.attempt, callIds });
    }
    const summary: TurnSummary = {
      outcome,
      attempts: this.attempt,
      streamEndMs: this.streamEndMs,
      turnDoneMs: this.clock.now(),
      finish: this.finish,
      error,
      calls: this.allTimings,
      history,
      warnings: this.warnings,
      trace: this.traceLog,
      ...(this.limitHit ? { limit: this.limitHit } : {}),
      ...(this.usage ? { usage: turnUsage(this.usage) } : {}),
      ...(this.model ? { model: this.model } : {}),
    };
    this.events.emit('turn.done', summary);
    this.resolveDone(summary);
  }

  private buildHistory(outcome: TurnOutcome): HistoryMessage[] {
    if (this.mode !== 'execute' || outcome === 'dropped' || outcome === 'failed') return [];
    const ctx = this.actor.getSnapshot().context;
    const calls: ToolCallRecord[] = [];
    const results: ToolResultRecord[] = [];
    // Walk the seen indices, never the (possibly sparse) array itself: O(calls seen).
    let structured = false;
    for (const index of ctx.seen) if (ctx.calls[index]?.inMessage && ctx.calls[index]?.structuredOutput) structured = true;
    for (const index of ctx.seen) {
      const v = ctx.calls[index];
      if (!v || !v.inMessage || v.suppressed) continue;
      const id = v.id ?? `call_${index}`;
      const name = v.name ?? '';
      calls.push({ id, name, input: v.input ?? {} });
      let r: CallResult = v.result ?? {
        ok: false,
        content: 'Tool execution was interrupted by the user.',
        synthetic: 'interrupted',
      };
      if (structured && !v.structuredOutput && r.synthetic !== 'suppressed') {
        r = {
          ok: false,
          content: 'Not run: the structured output call replaces its siblings.',
          synthetic: 'suppressed',
        };
      }
      results.push({
        callId: id,
        name,
        ok: r.ok,
        content: r.content,
        ...(r.synthetic ? { synthetic: r.synthetic } : {}),
      });
    }
    const assistant: HistoryMessage = {
      role: 'assistant',
      content: this.text.toString(),
      ...(this.thinking.length > 0 ? { thinking: this.thinking.toString() } : {}),
      ...(this.thinking.length > 0 && this.thinkingSignature ? { thinkingSignature: this.thinkingSignature } : {}),
      calls,
    };
    return results.length > 0 ? [assistant, { role: 'tool', results }] : [assistant];
  }

  // ---------------------------------------------------------------- output ordering

  /** Text/thinking go out now unless an earlier call is still pending; then they wait their turn. */
  private out(event: OutputEvent): void {
    if (this.opened <= this.frontier && this.pendingHead === this.pending.length) this.emitOutput(event);
    else this.pending.push({ afterCalls: this.opened, event });
  }

  private resolveSlot(index: number, event: OutputEvent | undefined): void {
    // Releases arrive in index order; suppressions may resolve a slot out of order.
    if (event) this.flushPending(index);
    if (event) this.emitOutput(event);
    this.resolvedSet.add(index);
    // A missing index holds the frontier until the stream ends (it may still appear); after the
    // end the frontier jumps over gaps to the next seen index (O(calls seen), not O(highest index)).
    while (this.frontier < this.opened) {
      if (this.resolvedSet.has(this.frontier)) this.frontier++;
      else if (this.streamEnded && !this.slots.has(this.frontier)) this.frontier = this.nextSeenIndex(this.frontier);
      else break;
    }
    this.flushPending(this.frontier);
    this.maybeFinishOutput();
  }

  /** The smallest seen index above `index` (or `opened` when none): the turn's index set. */
  private nextSeenIndex(index: number): number {
    return this.seenIdx.next(index + 1) ?? this.opened;
  }

  private flushPending(upTo: number): void {
    while (this.pendingHead < this.pending.length && this.pending[this.pendingHead]!.afterCalls <= upTo) {
      this.emitOutput(this.pending[this.pendingHead++]!.event);
    }
    if (this.pendingHead === this.pending.length && this.pendingHead > 0) {
      this.pending = [];
      this.pendingHead = 0;
    }
  }

  private outputEnded = false;

  /** After the stream ended and every call is resolved, the message ends (gateway output). */
  private maybeFinishOutput(): void {
    if (!this.streamEnded || this.outputEnded) return;
    for (const s of this.slots.values()) if (!this.resolvedSet.has(s.index)) return;
    this.outputEnded = true;
    this.flushPending(Number.MAX_SAFE_INTEGER);
    let released = 0;
    for (const s of this.slots.values()) if (s.timing.releasedMs !== undefined) released++;
    this.emitOutput({ type: 'end', finish: this.finish, released });
  }

  private emitOutput(event: OutputEvent): void {
    this.events.emit('output', event);
  }

  private warn(code: string, message: string, index?: number): void {
    const w: ControllerWarning = index === undefined ? { code, message } : { code, message, index };
    // A hostile stream can cause a warning per chunk (e.g. non-JSON SSE data): every one is
    // emitted, but the summary keeps the first MAX_KEPT_WARNINGS (+ the limit hit) so memory stays bounded.
    if (this.warnings.length < MAX_KEPT_WARNINGS || code === 'limit_exceeded') this.warnings.push(w);
    else if (this.warnings.length === MAX_KEPT_WARNINGS) {
      this.warnings.push({ code: 'warnings_truncated', message: `more than ${MAX_KEPT_WARNINGS} warnings in this turn; later ones are emitted but not kept` });
    }
    this.events.emit('warning', w);
  }

  private trace(e: TraceEntry): void {
    this.traceLog.push(e);
    this.events.emit('trace', e);
  }

  // ---------------------------------------------------------------- harness controls

  abort(mode?: AbortMode): void {
    if (this.held !== undefined) {
      this.held.push(() => this.abort(mode));
      return;
    }
    if (this.finished) return;
    this.trace({ t: this.clock.now(), kind: 'aborted', attempt: this.attempt });
    this.actor.send({ type: 'turn.abort', mode });
  }

  approve(index: number): void {
    if (this.held !== undefined) {
      this.held.push(() => this.approve(index));
      return;
    }
    if (this.finished) return; // a late answer after an abort
    this.trace({ t: this.clock.now(), kind: 'approved', attempt: this.attempt, index });
    this.actor.send({ type: 'approval.granted', index });
  }

  deny(index: number, reason?: string): void {
    if (this.held !== undefined) {
      this.held.push(() => this.deny(index, reason));
      return;
    }
    if (this.finished) return;
    this.trace({ t: this.clock.now(), kind: 'denied', attempt: this.attempt, index });
    this.actor.send({ type: 'approval.denied', index, reason });
  }

  private runHook?: RunHook;
  private readonly runTool?: RunToolFn;
  /** > 0 while the turn's machines have called into the controller (a notice, a tool run) and wait for it. */
  private inStep = 0;
  /** The run `startAtCompletion` began, until the call actor entering `running` adopts it (`adoptOrRun`). */
  private started?: { index: number; attempt: number; t: number; result: Promise<CallResult> };
  /** The last classification asked for (`classifyOnce`). */
  private classified?: { name: string; input: Record<string, unknown>; c: Classification };

  /**
   * A ready call that the turn's pump will release and start as it hears of it (`readyCallStart`)
   * has its tool invoked here, at its completion, before the machine steps that follow (the call's
   * `call.complete`, the turn's report and pump, the call's `call.release {start}`); the call actor
   * adopts the run when it enters `running` (`adoptOrRun`). Not with a run hook (a journaled turn
   * writes its `released` record, then the write-ahead `started`, before the tool runs).
   */
  private startAtCompletion(event: { index: number; input: Record<string, unknown> }, run: RunToolFn): boolean {
    // Called back from inside a machine step (a listener or a tool feeding the controller): the
    // turn would hear of the call only after that step, so the decision could be stale.
    if (this.inStep > 0) return false;
    const go = readyCallStart(this.actor, event);
    if (go === undefined) return false;
    const signal = go.abort.forRun().signal;
    this.held = [];
    const t = this.clock.now();
    let result: Promise<CallResult>;
    try {
      result = run(go.call, signal);
    } catch (error) {
      result = Promise.reject(error);
    }
    this.started = { index: go.call.index, attempt: go.call.attempt, t, result };
    return true;
  }

  /**
   * What a tool invoked at its completion asked the controller for as it was invoked (`feed`,
   * `abort`, `approve`, `deny`), held until the turn has released and started that call: then, in
   * order, as it would have happened had the call actor invoked the tool.
   */
  private held?: Array<() => void>;

  private runHeld(): void {
    const held = this.held;
    this.held = undefined;
    if (held !== undefined) for (const f of held) f();
  }

  /**
   * When what the turn tells of a call happened: now, or for a call whose run began at its
   * completion (the turn tells of its readiness, release and start before the call adopts the run)
   * the time it began, when the turn decided all three. Keeps the trace's times in order.
   */
  private timeOf(e: { index: number; attempt: number }): number {
    const early = this.started;
    return early !== undefined && early.index === e.index && early.attempt === e.attempt ? early.t : this.clock.now();
  }

  /** The call actor's tool run: the one `startAtCompletion` began for this call, or a new one. */
  private adoptOrRun(call: RunToolInput, signal: AbortSignal, run: RunToolFn): Promise<CallResult> {
    const started = this.started;
    if (started !== undefined && started.index === call.index && started.attempt === call.attempt) {
      this.started = undefined;
      return started.result;
    }
    this.inStep++;
    try {
      return this.runHook ? this.runHook(call, signal, run) : run(call, signal);
    } finally {
      this.inStep--;
    }
  }

  /**
   * A run began at completion that the turn did not start (`readyCallStart` and the pump
   * disagreed: a bug). Its outcome is dropped, loudly.
   */
  private unadopted(started: { index: number; result: Promise<CallResult> }): void {
    this.started = undefined;
    started.result.catch(() => undefined);
    this.warn('internal_error', `call ${started.index}: its tool was started at completion but the turn did not start it; its result is dropped`, started.index);
  }

  /**
   * The embedder's classifier, asked once per call: `readyCallStart` asks at completion, and the
   * turn's `recordReady` asks again right after with the same name and input object.
   */
  private classifyOnce(classify: NonNullable<ControllerOptions['classify']>): (name: string, input: Record<string, unknown>) => Classification {
    return (name, input) => {
      const last = this.classified;
      if (last !== undefined && last.input === input && last.name === name) {
        this.classified = undefined;
        return last.c;
      }
      const c = classify(name, input);
      this.classified = { name, input, c };
      return c;
    };
  }

  /** Wrap every tool run from now on (one hook; src/journal's TurnJournal.attach sets it). */
  setRunHook(hook: RunHook | undefined): void {
    this.runHook = hook;
  }

  get currentAttempt(): number {
    return this.attempt;
  }

  /**
   * False once the current attempt's stream ended or failed (stop reading it): the turn machine's
   * state says so (`streaming`, or `aborting` while an abort commits; not `draining`, `backoff` or
   * `done`), so the controller keeps no flags of its own for it.
   */
  get attemptOpen(): boolean {
    const snapshot = this.actor.getSnapshot();
    if (snapshot.status === 'error') return false;
    return isStreaming(snapshot) || snapshot.value === 'aborting';
  }

  /** The finish the current attempt's stream reported, if it did (`streaming.finished` and after; the turn's context). */
  private get finish(): FinishReason | undefined {
    return this.actor.getSnapshot().context.finish;
  }

  /**
   * The current attempt's stream ended after its finish (the turn took `stream.end`: `draining` and
   * after). Read from the turn's context, which the turn sets in the step that takes the end, so
   * releases it tells of in that step already see it.
   */
  private get streamEnded(): boolean {
    return this.actor.getSnapshot().context.streamEnded;
  }

  /** The turn is done (its summary is out): late answers and aborts are ignored. */
  private get finished(): boolean {
    return this.actor.getSnapshot().status === 'done';
  }
}
