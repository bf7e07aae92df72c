/**
 * `sluice/history`: the provider-neutral conversation history, its invariant checks and repair,
 * and converters to and from the Anthropic, OpenAI chat, OpenAI Responses, Gemini and AI SDK
 * message shapes. (Also exported from `sluice`; this entry loads nothing else.)
 */
/// <reference types="node" preserve="true" />
export { checkHistory, checkTrace } from '../history/check';
export type { CheckHistoryOptions, CheckResult, CheckTraceOptions } from '../history/check';
export { repairHistory, REPAIRED_RESULT_TEXT } from '../history/repair';
export type { RepairResult } from '../history/repair';
export * from '../history/shapes';
export * from '../history/aiSdk';
export type * from '../history/types';
export type { TurnTraceEntry } from '../history/trace';
