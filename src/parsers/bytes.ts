/**
 * Byte-level entry: UTF-8 bytes in, events out. A streaming `TextDecoder` sits in front of the
 * family parser, so a multi-byte character (a `｜` of a DeepSeek marker, an emoji in an argument)
 * split across byte chunks is decoded whole; invalid bytes become U+FFFD.
 */
import type { StreamEvent } from '../wire/events';
import type { ByteParser, TextParser } from './types';

export function byteParser(inner: TextParser): ByteParser {
  const decoder = new TextDecoder('utf-8', { fatal: false });
  return {
    push(bytes: Uint8Array): StreamEvent[] {
      const text = decoder.decode(bytes, { stream: true });
      return text.length > 0 ? inner.push(text) : [];
    },
    end(): StreamEvent[] {
      const rest = decoder.decode();
      const out = rest.length > 0 ? inner.push(rest) : [];
      return out.concat(inner.end());
    },
  };
}
