/**
 * Compatibility re-exports: the request side now lives in canonical.ts (the canonical request and
 * model mapping), inbound/messages.ts (Anthropic Messages parsing) and upstream/openaiChat.ts
 * (canonical → Chat Completions). Import from those modules in new code.
 */
export {
  type AssistantBlock,
  type CanonicalRequest,
  estimateInputTokens,
  IMAGE_TOKEN_ESTIMATE,
  type ImageSource,
  mapModel,
  type MessageParam,
  type MessagesRequest,
  type ModelMapping,
  parseModelMap,
  singleToolRequested,
  type ToolChoice,
  type ToolParam,
  type UserBlock,
} from './canonical';
export { parseMessagesRequest } from './inbound/messages';
export {
  type ChatContentPart,
  type ChatMessage,
  type ChatRequest,
  type ChatRequestOptions,
  type ChatTool,
  type ChatToolCall,
  type ChatToolChoice,
  toChatRequest,
} from './upstream/openaiChat';
