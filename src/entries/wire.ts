/**
 * `sluice/wire`: the input side as building blocks — the canonical stream-event vocabulary,
 * provider adapters and the raw-SSE reader, format detection, the SSE decoder, the incremental
 * argument buffer / JSON scanner / truncation repair, and the release output events. `runTurn`
 * uses all of these internally; import them to build your own controller or tooling.
 * See docs/embedding.md ("Entry points").
 */
/// <reference types="node" preserve="true" />
export * from '../wire/events';
export type { OutputEvent } from '../release/output';
export {
  createAdapter,
  createStreamReader,
  detectFormat,
  readPayloadLines,
  registerTextAdapterFactory,
  SseDecoder,
  WIRE_FORMATS,
  AnthropicAdapter,
  OpenAIChatAdapter,
  OpenAIResponsesAdapter,
  GeminiAdapter,
  DynamoAdapter,
  AiSdkAdapter,
} from '../wire';
export type { AdapterOptions, PayloadLines, SseDecoderOptions, SseEndResult, SseMessage, StreamReader, StreamReaderOptions, TextAdapterFactory } from '../wire';
export { ArgBuffer } from '../args/buffer';
export type { ParsedArgs } from '../args/buffer';
export { JsonScanner, scanJson } from '../args/scanner';
export type { ScanStatus, TopLevelKind } from '../args/scanner';
export { repairTruncated } from '../args/repair';
