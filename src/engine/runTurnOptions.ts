/**
 * The options of `runTurn` (runTurn.ts) and the types they name, in a module of their own so the
 * option checks (options.ts) and the turn runner both import them without importing each other.
 * runTurn.ts re-exports every name here: the public surface is unchanged.
 */
import type { InspectionEvent, Observer } from 'xstate';
import type { Classification, ReuseResults } from '../calls';
import type { AnyTool, ToolRegistry } from '../execute/tools';
import type { EarlyStart } from '../execute/schedule';
import type { HistoryMessage } from '../history/types';
import type { WireFormat } from '../wire/events';
import type { TelemetryOptions } from '../telemetry/turn';
import type { Clock } from './clock';
import type { StreamInput } from './streamSource';
import type { CompletionMode, ControllerEvents, TurnController } from './controller';
import type { TurnLimits } from './limits';
import type { RetryJitter } from './retry';

export type { StreamItem } from './streamSource';
/** An attempt's stream: SDK iterables, arrays, a fetch Response, a ReadableStream, a Node Readable (docs/embedding.md). */
export type StreamSource = StreamInput;

export interface TurnPolicy {
  /**
   * 'safe': read-only tools start mid-stream. 'none': classic post-stream. 'all': see SPEC §6.4.
   * 'shadow': runs exactly like 'none', and reports when 'safe' would have started each call
   * (`summary.calls[i].shadowStartMs`) and the turn time it would have saved (`summary.shadowSavedMs`).
   * Default 'safe', or 'none' when SLUICE_STREAMING_DISPATCH=0; an explicit value always wins.
   */
  earlyStart?: EarlyStart | 'shadow';
  maxConcurrent?: number;
  onAbort?: 'commit' | 'drop';
  /** Attempts in all, first included (default 3). */
  maxAttempts?: number;
  /**
   * First retry delay before jitter; doubles per attempt (default 500 ms). A provider's
   * `retry-after` / `retry-after-ms` is the floor of the delay (docs/embedding.md "Retries").
   */
  retryBaseMs?: number;
  /**
   * Longest wait before a retry (default `DEFAULT_RETRY_MAX_DELAY_MS`, 30 s). A provider asking
   * for a longer wait (`retry-after`) is not retried: the turn fails with its error at once.
   */
  retryMaxDelayMs?: number;
  /** 'full' (default): uniform in [0, the backoff]; 'decorrelated'; 'none': the plain exponential backoff. */
  retryJitter?: RetryJitter;
  /** No chunk (pings and thinking count) for this long → retryable stream error (default off). */
  idleTimeoutMs?: number;
  completion?: CompletionMode;
  /** Name of the structured-output tool whose siblings do not run (default 'structured_output'). */
  structuredOutputTool?: string;
  /** `disable_parallel_tool_use`: at most one call is released. */
  singleTool?: boolean;
  /**
   * Timeout for tools that set no `timeoutMs` of their own (default `DEFAULT_TOOL_TIMEOUT_MS`,
   * 10 minutes; 0 or Infinity: none). A timed-out run is aborted and gets a `timeout` error result.
   */
  toolTimeoutMs?: number;
  /**
   * 'safe' (default): after a failed stream, the retry reuses the result of a read-only call of the
   * discarded attempt (safe, no approval, the tool not `reusable: false`, an ok result) when it
   * repeats the call with the same name and arguments (canonical JSON), instead of running it again
   * (`summary.calls[i].reused`, event `call.reused`). 'none': every call of a retry runs.
   */
  reuseResults?: ReuseResults;
}

export interface ApprovalRequest {
  index: number;
  id: string;
  name: string;
  input: Record<string, unknown>;
}

export interface RunTurnOptions {
  format: WireFormat;
  /** The model stream for an attempt (1-based). A retry or fallback asks for the next one. */
  stream: StreamSource | ((attempt: number) => StreamSource | Promise<StreamSource>);
  tools: AnyTool[] | ToolRegistry;
  policy?: TurnPolicy;
  signal?: AbortSignal;
  /** Asked (possibly mid-stream) for calls that need approval. No callback: such calls are denied. */
  approve?: (call: ApprovalRequest) => boolean | Promise<boolean>;
  /** Typed UI events (mitt). */
  on?: Partial<{ [K in keyof ControllerEvents]: (e: ControllerEvents[K]) => void }>;
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
  clock?: Clock;
  /**
   * Replaces the classification of a ready call (safe / needs approval / problem). `defaults` is
   * what sluice decided from the tools (kinds, `isConcurrencySafe`, `needsApproval`, schema
   * problems): return it changed, or your own answer. A throw counts as unsafe + needs approval.
   */
  classify?: (name: string, input: Record<string, unknown>, defaults: Classification) => Classification;
  /** The conversation so far (neutral history): its call ids are known, a repeat is renamed. */
  history?: readonly HistoryMessage[];
  /** Call ids already used in the conversation (when you keep the history in a provider shape). */
  knownCallIds?: Iterable<string>;
  /** Journal the turn (crash-safe resume: src/journal, `createTurnJournal`, docs/durability.md). */
  journal?: { attach(controller: TurnController): void; flush(): Promise<void> };
  /**
   * Resource limits per attempt (docs/limits.md). Hitting one ends the turn: it resolves with
   * `outcome: 'failed'`, `summary.error.type === 'limit_exceeded'` and `summary.limit` naming it.
   */
  limits?: Partial<TurnLimits>;
  /**
   * OpenTelemetry (docs/observability.md): spans and metrics go to the providers the application
   * registered (none registered: nothing is recorded). Tool arguments and results only with
   * `recordContents: true`.
   */
  telemetry?: TelemetryOptions;
}
