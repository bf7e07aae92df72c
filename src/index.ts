/**
 * The public API of sluice (`import … from 'sluice'`): what the README and docs/embedding.md
 * document. Building blocks live behind named entries (docs/embedding.md, "Entry points"):
 * `sluice/history`, `sluice/parsers`, `sluice/gateway`, `sluice/wire`, `sluice/machines`,
 * `sluice/trace`. test/package/api.test.ts snapshots every entry's exports.
 */
// Every entry point (this one, src/entries/*, src/parsers/index.ts) starts with this line: it loads
// Node's types for the declarations (Buffer, NodeJS, node:http, …) in programs whose tsconfig lists
// no "types" (TypeScript 6 and later then load none by default); @types/node is a dependency.
/// <reference types="node" preserve="true" />
export type { FinishReason, StreamErrorInfo, StreamEvent, Usage, WireFormat } from './wire/events';
export type { OutputEvent } from './release/output';
export { TurnController } from './engine/controller';
export type { CallTiming, ControllerEvents, ControllerOptions, ControllerWarning, TurnSummary, TurnUsage, CompletionMode } from './engine/controller';
export type { ArgsOutcome, CallPhase, CallResult, Classification, RunToolFn, RunToolInput } from './calls';
export { VirtualClock, realClock } from './engine/clock';
export { runTurn, classifierFor } from './engine/runTurn';
export { TurnLimitError, limitErrorOf, DEFAULT_TOOL_TIMEOUT_MS } from './engine/runTurn';
export type { TelemetryOptions } from './telemetry/turn';
export { SluiceLimitError, DEFAULT_LIMITS, LIMIT_ERROR_TYPE, MAX_STRING_CHARS, limitMessage, resolveLimits } from './engine/limits';
export type { TurnLimits, LimitHit, LimitName } from './engine/limits';
export type { RunTurnOptions, RunTurnResult, TurnPolicy, ApprovalRequest, StreamSource, StreamItem } from './engine/runTurn';
export type { FetchResponseLike, ReadableStreamLike, StreamInput } from './engine/streamSource';
export { computeRetryDelay, retryAfterMsOf, DEFAULT_RETRY_BASE_MS, DEFAULT_RETRY_MAX_DELAY_MS } from './engine/retry';
export type { RetryDelay, RetryJitter, RetryReason, RetrySettings } from './engine/retry';
export type { RetryRecord } from './engine/controller';
// Durable turns (docs/durability.md): journal, stores, resume.
export { resumeTurn, withDurability, unknownOutcomeResult, ResumeError } from './engine/resume';
export type { DurabilityHints, ReconcileCall, ReconcileOutcome, ResumeTurnOptions, ResumeTurnResult, ResumedCall } from './engine/resume';
export { TurnJournal, createTurnJournal } from './journal/journal';
export type { TurnJournalHeader, TurnJournalOptions } from './journal/journal';
export { FileJournalStore } from './journal/fileStore';
export type { FileStoreOptions, FileStoreIO } from './journal/fileStore';
export { checkJournal, JournalRefusedError } from './journal/check';
export type { KeptResult } from './journal/check';
export { DEFAULT_LEASE_TTL_MS } from './journal/lease';
export { MemoryJournalStore } from './journal/memoryStore';
export { PostgresJournalStore } from './journal/pgStore';
export type { PostgresStoreOptions, PgPoolLike, PgClientLike } from './journal/pgStore';
export { openStore, registerStoreOpener } from './journal/open';
export { JournalError, JOURNAL_VERSION, toJournalError } from './journal/records';
export type { JournalBody, JournalErrorCode, JournalKind, JournalRecord, ResumedHow } from './journal/records';
export type { AppendOptions, JournalLease, JournalListing, JournalRead, JournalStore } from './journal/store';
export { foldJournal, journalTrace } from './journal/state';
export * from './execute/tools';
export { isSafeCall, classifyCall } from './execute/safety';
export { classifyCommand, loadShellParser } from './execute/shell';
export { toolsFromMcp } from './execute/mcp';
export { checkHistory, checkTrace } from './history/check';
export { repairHistory } from './history/repair';
export * from './history/shapes';
export * from './history/aiSdk';
export type * from './history/types';
export type { TurnTraceEntry } from './history/trace';
