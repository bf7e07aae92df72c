import type { FinishReason, StreamErrorInfo, Usage } from '../wire/events';

/**
 * What the release engine hands to its consumer, already in final output order: text and
 * thinking that arrived after a pending call are held back until that call is released or
 * suppressed, so "text after a call keeps its place" (SPEC §5.9) is decided here, not in an
 * encoder. Encoders (src/encode/*) are plain serialisers of this sequence.
 */
export type OutputEvent =
  | { type: 'message.start'; id?: string; model?: string; usage?: Usage }
  | { type: 'text'; text: string }
  | { type: 'thinking'; text: string }
  | { type: 'thinking.signature'; signature: string }
  | {
      type: 'tool_use';
      /** The call's index in the model output. */
      index: number;
      /** The backend's call id (never exposed by the gateway, which mints toolu_ ids). */
      backendId: string;
      name: string;
      /** The validated input object. */
      input: Record<string, unknown>;
      /** JSON text of the input to send as input_json_delta ('' for an empty-arguments call). */
      argsText: string;
      /**
       * Huge arguments only (over 256 Ki chars, src/args/buffer.ts): `argsText` in the pieces it
       * arrived in. An encoder that writes a call a piece at a time reads these (src/encode/pieces.ts):
       * any read of `argsText` itself would copy it whole (V8 flattens the concatenation).
       */
      argsParts?: readonly string[];
      /** True when the input was repaired at end of stream (max_tokens truncation). */
      repaired: boolean;
    }
  | { type: 'usage'; usage: Usage }
  /** Normal end of the message: the finish reason seen (if any) and how many tool_use blocks were released. */
  | { type: 'end'; finish?: FinishReason; released: number }
  /** The stream failed after it started: exactly one terminal error instead of `end`. */
  | { type: 'error'; error: StreamErrorInfo };
