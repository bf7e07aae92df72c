/**
 * The contract between the router (server.ts / exchange.ts) and an inbound API module
 * (messages.ts, responses.ts, chat.ts): parse the client's body into the canonical request, and
 * serialise the engine's ordered OutputEvents back in that API's streaming or whole-body shape.
 */
import type { IdGenerator } from '../../encode/anthropicSse';
import type { OutputEvent } from '../../release/output';
import type { CanonicalRequest, ClientToolRef } from '../canonical';

/** Backend flat name → the client's name for it (undefined: a plain function); responsesTools.ts `clientToolLookup` makes it. */
export type ClientToolLookup = (flat: string) => ClientToolRef | undefined;

export interface InboundEncodeOptions {
  /** The model name the client asked for (echoed back; the backend's name is never exposed). */
  model: string;
  /** Input-token estimate used until the backend reports usage. */
  inputTokens: number;
  /** Report tool use when a backend ends a tool-calling turn with a plain `stop`. */
  toolUseOnStop: boolean;
  /** Chat only: send a usage chunk before `[DONE]` (`stream_options.include_usage`). */
  includeUsage?: boolean;
  /** Id minting for deterministic tests (Anthropic kinds; other APIs mint their own prefixes). */
  idGenerator?: IdGenerator;
  /** Chat and Responses: told each tool call id minted for the client (Messages: wrap `idGenerator`). */
  onCallId?: (id: string) => void;
  /**
   * Responses only: backend tool names to write back as the client's (Codex namespaces,
   * tool_search), read from the request's plain table by `clientToolLookup`.
   */
  clientTools?: ClientToolLookup;
}

/** One streaming response: SSE text per event. */
export interface InboundStream {
  /** Frames sent when the response is committed (HTTP 200). */
  start(): string;
  /** Frames for one OutputEvent ('' when it produces none). */
  push(e: OutputEvent): string;
  /** A keep-alive ('' when the API has none or the stream ended). */
  ping(): string;
  /** True once `end` or `error` was encoded. */
  readonly terminated: boolean;
  /**
   * Piecewise output (src/encode/pieces.ts): after `enablePieces()`, a huge tool call's frames
   * (and what follows them) are left for `more()` while `pending`, a piece per call.
   */
  enablePieces?(): void;
  readonly pending?: boolean;
  more?(): string;
  /** `more()` as a writer takes it: text, or bytes already UTF-8 (written as they are). */
  piece?(): string | Buffer;
}

export interface InboundApi {
  readonly name: 'messages' | 'responses' | 'chat';
  /** Validate a JSON-parsed body into the canonical request; throws GatewayError(400). */
  parse(body: unknown): CanonicalRequest;
  stream(o: InboundEncodeOptions): InboundStream;
  /** The non-streaming answer from the whole OutputEvent sequence. */
  body(events: OutputEvent[], o: InboundEncodeOptions): { status: number; body: unknown };
  /** This API's JSON error body for an error answered before the response is committed. */
  errorBody(type: string, message: string): unknown;
}
