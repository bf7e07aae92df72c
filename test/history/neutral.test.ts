/**
 * neutralHistoryProblem (src/history/neutral.ts): a history in a provider's shape — made here by
 * sluice's own exporters — is named with the converter that reads it back, and that converter's
 * output is neutral.
 */
import { neutralHistoryProblem } from '../../src/history/neutral';
import { fromAiSdkMessages, toAiSdkMessages } from '../../src/history/aiSdk';
import {
  fromAnthropicMessages,
  fromGeminiContents,
  fromOpenAIChatMessages,
  fromOpenAIResponsesInput,
  toAnthropicMessages,
  toGeminiContents,
  toOpenAIChatMessages,
  toOpenAIResponsesInput,
} from '../../src/history/shapes';
import type { HistoryMessage } from '../../src/history/types';

const history: HistoryMessage[] = [
  { role: 'user', content: 'read a and b' },
  { role: 'assistant', content: 'reading', calls: [{ id: 'call_1', name: 'read_file', input: { path: 'a' } }] },
  { role: 'tool', results: [{ callId: 'call_1', name: 'read_file', ok: true, content: 'A' }] },
  { role: 'assistant', content: 'done', calls: [] },
];

const shapes: Array<[string, unknown[], string, (m: readonly unknown[]) => HistoryMessage[]]> = [
  ['OpenAI chat', toOpenAIChatMessages(history, { system: 'be brief' }), 'fromOpenAIChatMessages', fromOpenAIChatMessages],
  ['Anthropic', toAnthropicMessages(history), 'fromAnthropicMessages', fromAnthropicMessages],
  ['OpenAI Responses', toOpenAIResponsesInput(history), 'fromOpenAIResponsesInput', fromOpenAIResponsesInput],
  ['Gemini', toGeminiContents(history), 'fromGeminiContents', fromGeminiContents],
  ['AI SDK', toAiSdkMessages(history), 'fromAiSdkMessages', fromAiSdkMessages],
];

test('neutral history passes', () => {
  expect(neutralHistoryProblem(history)).toBeUndefined();
  expect(neutralHistoryProblem([])).toBeUndefined();
});

test.each(shapes)('%s history is named with its converter, whose output is neutral', (_, provider, converter, from) => {
  const problem = neutralHistoryProblem(provider);
  expect(problem).toMatch(/^history\[\d+\]\.\w+/);
  expect(problem).toContain(`convert with ${converter}`);
  expect(neutralHistoryProblem(from(provider))).toBeUndefined();
});
