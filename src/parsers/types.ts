/**
 * Public types of the open-model text parsers (issue 7).
 *
 * A parser turns the raw text an open model writes (tool-call markup, reasoning blocks, prose)
 * into sluice's canonical events (src/wire/events.ts). It is fed already-decoded text; see
 * `createByteParser` (src/parsers/bytes.ts) for UTF-8 byte input.
 */
import type { StreamEvent } from '../wire/events';

export interface TextParser {
  /** Feed the next piece of model text; returns the events it completes (possibly none). */
  push(text: string): StreamEvent[];
  /** End of the model text: flushes held-back text; an unclosed call gets no `call.complete`. */
  end(): StreamEvent[];
}

/** What a family parser exposes beyond `TextParser` (used by the chat adapter). */
export interface FamilyParser extends TextParser {
  readonly family: string;
  /**
   * True once the text carried the family's reasoning markup, or while the held-back suffix could
   * be the start of it. The chat adapter uses it to drop a server's duplicate `reasoning_content`.
   */
  readonly reasoningInText: boolean;
}

/** A tool description, in any of the common shapes (OpenAI, Anthropic, MCP, bare). */
export interface ToolSpecLike {
  name?: string;
  parameters?: unknown;
  input_schema?: unknown;
  inputSchema?: unknown;
  function?: { name?: string; parameters?: unknown };
}

export interface ParserOptions {
  /**
   * Tool schemas. Families whose arguments are XML-ish parameters (Qwen3-Coder, GLM, DSML
   * `string="false"`) use them to type parameter values; without them each family's schema-less
   * rule applies (docs/parsers.md).
   */
  tools?: readonly ToolSpecLike[];
  /**
   * Start inside the reasoning block, for chat templates that put the opening marker in the prompt
   * (Qwen3 thinking-2507, DeepSeek R1/V3.1 thinking). Default false.
   */
  startInReasoning?: boolean;
  /**
   * Markdown code awareness (fenced blocks and inline code spans make markup literal text) for the
   * families whose markers are plain text. Default true for those families; ignored by families
   * whose markers are special tokens.
   */
  codeAware?: boolean;
}

export interface ByteParser {
  push(bytes: Uint8Array): StreamEvent[];
  end(): StreamEvent[];
}
