/** The upstream modules by name. */
import { anthropicUpstream } from './anthropic';
import { geminiUpstream } from './gemini';
import { openaiChatUpstream } from './openaiChat';
import { openaiResponsesUpstream } from './openaiResponses';
import type { UpstreamFormat, UpstreamFormatName } from './types';

const MODULES: Record<UpstreamFormatName, UpstreamFormat> = {
  'openai-chat': openaiChatUpstream,
  'openai-responses': openaiResponsesUpstream,
  anthropic: anthropicUpstream,
  gemini: geminiUpstream,
};

export function upstreamFormatFor(name: UpstreamFormatName): UpstreamFormat {
  const m = MODULES[name];
  if (!m) throw new Error(`unknown upstream format "${String(name)}" (expected one of: ${Object.keys(MODULES).join(', ')})`);
  return m;
}

export { UPSTREAM_FORMATS, type UpstreamFormat, type UpstreamFormatName } from './types';
