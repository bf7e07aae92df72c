/**
 * Streaming tool-call parsers for open-model raw text (issue 7). See docs/parsers.md.
 *
 * - `createTextParser(family, opts)`: text in, canonical events out (`TextParser`).
 * - `createByteParser(family, opts)`: UTF-8 bytes in (a streaming TextDecoder in front).
 * - `createTextAdapter(family, opts)`: an `Adapter` for OpenAI-chat-shaped chunks whose
 *   `delta.content` carries the raw model text (`--format text:<family>`, gateway `--parser`).
 * - `listFamilies()` / `resolveFamily(name)`: the family names and their aliases.
 */
export type { ByteParser, FamilyParser, ParserOptions, TextParser, ToolSpecLike } from './types';
export { createByteParser, createTextParser, listFamilies, resolveFamily, type FamilyInfo } from './registry';
export { createTextAdapter, TextAdapter, type TextAdapterOptions } from './adapter';
