/**
 * Streaming tool-call parsers for open-model raw text (issue 7). See docs/parsers.md.
 *
 * - `createTextParser(family, opts)`: text in, canonical events out (`TextParser`).
 * - `createByteParser(family, opts)`: UTF-8 bytes in (a streaming TextDecoder in front).
 * - `createTextAdapter(family, opts)`: an `Adapter` for OpenAI-chat-shaped chunks whose
 *   `delta.content` carries the raw model text (`--format text:<family>`, gateway `--parser`).
 * - `textAdapterFactory` / `registerTextParsers()`: plug the adapter into src/wire's
 *   `createAdapter('text:<family>')`.
 * - `listFamilies()` / `resolveFamily(name)`: the family names and their aliases.
 */
/// <reference types="node" preserve="true" />
import type { Adapter } from '../wire/events';
import { registerTextAdapterFactory } from '../wire';
import { createTextAdapter } from './adapter';
import { resolveFamily } from './registry';

export type { ByteParser, FamilyParser, ParserOptions, TextParser, ToolSpecLike } from './types';
export { createByteParser, createTextParser, listFamilies, resolveFamily, type FamilyInfo } from './registry';
export { createTextAdapter, TextAdapter, type TextAdapterOptions } from './adapter';

/**
 * For src/wire `createAdapter`'s `textAdapter` option (and `registerTextAdapterFactory`): the
 * `text:<family>` adapter, or undefined for an unknown family.
 */
export function textAdapterFactory(family: string): Adapter | undefined {
  return resolveFamily(family) === undefined ? undefined : createTextAdapter(family);
}

/** Make `createAdapter('text:<family>')` / `createStreamReader('text:<family>')` use these parsers, process-wide. */
export function registerTextParsers(): void {
  registerTextAdapterFactory(textAdapterFactory);
}
