/**
 * `sluice/trace`: recorded turns (`.trace.jsonl`, README "Trace format") — parse and format them,
 * synthesize one from a script, replay one on a virtual clock with simulated tools (what `sluice
 * replay` does), and convert one into the Anthropic SSE a gateway would send.
 */
/// <reference types="node" preserve="true" />
export { parseTrace, formatTrace, parseToolSpecs, TraceError } from '../trace/trace';
export type { ParseTraceOptions, SimToolSpec, Trace, TraceAttempt, TraceLine } from '../trace/trace';
export { synthesizeTrace, SYNTH_FORMATS } from '../trace/synth';
export type { ScriptCall, TurnScript } from '../trace/synth';
export { replayTrace } from '../trace/replay';
export type { Dispatch, ReplayOptions, ReplayReport, ReportCall } from '../trace/replay';
export { convertTrace } from '../trace/convert';
export type { ConvertOptions, ConvertResult } from '../trace/convert';
