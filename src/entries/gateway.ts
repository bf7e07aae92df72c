/**
 * `sluice/gateway`: the HTTP gateway (`sluice serve` as a library), the scripted upstream (a trace
 * served as a real backend, for tests and demos), the encoders, and `loadTextAdapterFactory()` (the
 * open-model text parsers as `GatewayOptions.textAdapter`, for `text:<family>` backends). See docs/gateway.md.
 */
/// <reference types="node" preserve="true" />
export { startGateway, loadTextAdapterFactory } from '../gateway/server';
export type { GatewayOptions, Gateway, GatewayTextAdapterFactory } from '../gateway/server';
export type { GatewayMetrics } from '../gateway/metrics';
export { DEFAULT_DRAIN_MS } from '../gateway/shutdown';
export { startScriptedUpstream, startTraceBackend, Gate } from '../gateway/scripted';
export type { Script, ScriptLine, ScriptResponse, ScriptSource, ScriptedUpstream, ScriptedUpstreamOptions, RecordedRequest, TraceBackend } from '../gateway/scripted';
export { AnthropicSseEncoder, toAnthropicMessage } from '../encode/anthropicSse';
export { ChatSseEncoder, toChatCompletion } from '../encode/chatSse';
export type { ChatEncodeOptions } from '../encode/chatSse';
export { ResponsesSseEncoder, toResponsesBody } from '../encode/responsesSse';
export type { ResponsesEncodeOptions } from '../encode/responsesSse';
