import fc from 'fast-check';
import { checkHistory } from '../../src/history/check';
import { repairHistory } from '../../src/history/repair';
import {
  type ProviderFormat,
  fromAnthropicMessages,
  fromGeminiContents,
  fromOpenAIChatMessages,
  fromOpenAIResponsesInput,
  fromProviderHistory,
  toAnthropicMessages,
  toGeminiContents,
  toOpenAIChatMessages,
  toOpenAIResponsesInput,
  toProviderHistory,
} from '../../src/history/shapes';
import type { HistoryMessage } from '../../src/history/types';

const neutral: HistoryMessage[] = [
  { role: 'user', content: 'list the repo' },
  { role: 'assistant', content: 'Looking.', thinking: 'plan', calls: [{ id: 'c1', name: 'ls', input: { path: '.' } }, { id: 'c2', name: 'cat', input: { path: 'a', n: [1, 2] } }] },
  { role: 'tool', results: [{ callId: 'c1', name: 'ls', ok: true, content: 'a b' }, { callId: 'c2', name: 'cat', ok: false, content: 'ENOENT', synthetic: 'interrupted' }] },
  { role: 'assistant', content: 'Done.', calls: [] },
];

describe('provider shapes: exact wire forms', () => {
  test('Anthropic', () => {
    const a = toAnthropicMessages(neutral);
    expect(a[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Looking.' },
        { type: 'tool_use', id: 'c1', name: 'ls', input: { path: '.' } },
        { type: 'tool_use', id: 'c2', name: 'cat', input: { path: 'a', n: [1, 2] } },
      ],
    });
    expect(a[2]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'c1', content: 'a b' },
        { type: 'tool_result', tool_use_id: 'c2', content: 'ENOENT', is_error: true },
      ],
    });
    expect(toAnthropicMessages(neutral, { thinking: 'include' })[1].content[0]).toEqual({ type: 'thinking', thinking: 'plan', signature: '' });
  });

  test('OpenAI chat', () => {
    const o = toOpenAIChatMessages(neutral);
    expect(o).toHaveLength(5);
    expect(o[1]).toEqual({
      role: 'assistant',
      content: 'Looking.',
      tool_calls: [
        { id: 'c1', type: 'function', function: { name: 'ls', arguments: '{"path":"."}' } },
        { id: 'c2', type: 'function', function: { name: 'cat', arguments: '{"path":"a","n":[1,2]}' } },
      ],
    });
    expect(o[2]).toEqual({ role: 'tool', tool_call_id: 'c1', content: 'a b' });
    expect(o[4]).toEqual({ role: 'assistant', content: 'Done.' });
  });

  test('OpenAI Responses', () => {
    expect(toOpenAIResponsesInput(neutral)).toEqual([
      { type: 'message', role: 'user', content: 'list the repo' },
      { type: 'message', role: 'assistant', content: 'Looking.' },
      { type: 'function_call', call_id: 'c1', name: 'ls', arguments: '{"path":"."}' },
      { type: 'function_call', call_id: 'c2', name: 'cat', arguments: '{"path":"a","n":[1,2]}' },
      { type: 'function_call_output', call_id: 'c1', output: 'a b' },
      { type: 'function_call_output', call_id: 'c2', output: 'ENOENT' },
      { type: 'message', role: 'assistant', content: 'Done.' },
    ]);
  });

  test('Gemini', () => {
    const g = toGeminiContents(neutral);
    expect(g[1]).toEqual({
      role: 'model',
      parts: [{ text: 'Looking.' }, { functionCall: { id: 'c1', name: 'ls', args: { path: '.' } } }, { functionCall: { id: 'c2', name: 'cat', args: { path: 'a', n: [1, 2] } } }],
    });
    expect(g[2]).toEqual({
      role: 'user',
      parts: [
        { functionResponse: { id: 'c1', name: 'ls', response: { output: 'a b' } } },
        { functionResponse: { id: 'c2', name: 'cat', response: { error: 'ENOENT' } } },
      ],
    });
    expect(toGeminiContents(neutral, { ids: false })[1].parts[1]).toEqual({ functionCall: { name: 'ls', args: { path: '.' } } });
  });
});

describe('provider shapes: round trips', () => {
  const formats: ProviderFormat[] = ['anthropic', 'openai-chat', 'openai-responses', 'gemini'];

  /** What survives a trip through each provider (see src/history/shapes.ts). */
  function expected(format: ProviderFormat, h: readonly HistoryMessage[]): HistoryMessage[] {
    const keepsOk = format === 'anthropic' || format === 'gemini';
    const keepsThinking = format !== 'openai-responses';
    const out: HistoryMessage[] = [];
    for (const m of h) {
      if (m.role === 'tool') out.push({ role: 'tool', results: m.results.map((r) => ({ callId: r.callId, name: r.name, ok: keepsOk ? r.ok : true, content: r.content })) });
      else if (m.role === 'assistant') {
        const a: HistoryMessage = { role: 'assistant', content: m.content, calls: m.calls.map((c) => ({ ...c })) };
        if (keepsThinking && m.thinking) a.thinking = m.thinking;
        const last = out[out.length - 1];
        if (format === 'openai-responses' && last?.role === 'assistant') {
          // Responses has no message boundary between consecutive assistant items
          last.content += a.content;
          last.calls.push(...a.calls);
        } else out.push(a);
      } else out.push({ ...m });
    }
    return out;
  }

  test.each(formats)('%s: neutral → provider → neutral', (format) => {
    const back = fromProviderHistory(format, toProviderHistory(format, neutral, { thinking: 'include' }));
    expect(back).toEqual(expected(format, neutral));
  });

  test.each(formats)('%s: provider → neutral → provider is the identity on canonical provider histories', (format) => {
    const wire = toProviderHistory(format, neutral, { thinking: 'include' });
    const again = toProviderHistory(format, fromProviderHistory(format, wire), { thinking: 'include' });
    expect(again).toEqual(wire);
  });

  const arbInput = fc.dictionary(fc.constantFrom('path', 'n', 'q'), fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.boolean()), { maxKeys: 3 });
  const arbMsg: fc.Arbitrary<unknown> = fc.oneof(
    fc.record({ role: fc.constant('user'), content: fc.string({ maxLength: 6 }) }),
    fc.record(
      {
        role: fc.constant('assistant'),
        content: fc.string({ maxLength: 6 }),
        thinking: fc.string({ minLength: 1, maxLength: 4 }),
        calls: fc.array(fc.record({ id: fc.constantFrom('a', 'b', 'c', 'd'), name: fc.constantFrom('ls', 'cat'), input: arbInput }), { maxLength: 3 }),
      },
      { requiredKeys: ['role', 'content', 'calls'] },
    ),
    fc.record({
      role: fc.constant('tool'),
      results: fc.array(fc.record({ callId: fc.constantFrom('a', 'b', 'c'), name: fc.constantFrom('ls', 'cat'), ok: fc.boolean(), content: fc.string({ maxLength: 6 }) }), { maxLength: 3 }),
    }),
  );

  test.each(formats)('%s: property — any valid history survives the round trip (modulo documented losses) and stays valid', (format) => {
    fc.assert(
      fc.property(fc.array(arbMsg, { maxLength: 8 }), (raw) => {
        const h = repairHistory(raw).messages;
        const wire = toProviderHistory(format, h, { thinking: 'include' });
        const back = fromProviderHistory(format, wire);
        expect(back).toEqual(expected(format, h));
        expect(checkHistory(wire, { format }).violations).toEqual([]);
      }),
      { numRuns: 200 },
    );
  });
});

describe('provider shapes: imports of real-world variants', () => {
  test('Anthropic: string content, text + tool_result in one user message, content blocks in results, unknown blocks', () => {
    const warnings: string[] = [];
    const h = fromAnthropicMessages(
      [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'hm', signature: 'sig' }, { type: 'text', text: 'a' }, { type: 'tool_use', id: 't1', name: 'ls', input: {} }, { type: 'text', text: 'b' }] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'x' }, { type: 'image', source: {} }] },
            { type: 'text', text: 'and also' },
            { type: 'image', source: {} },
          ],
        },
        { role: 'system', content: 'nope' },
      ],
      { onWarning: (w) => warnings.push(w) },
    );
    expect(h).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'ab', thinking: 'hm', thinkingSignature: 'sig', calls: [{ id: 't1', name: 'ls', input: {} }] },
      { role: 'tool', results: [{ callId: 't1', name: 'ls', ok: true, content: 'x\n[image]' }] },
      { role: 'user', content: 'and also' },
    ]);
    expect(warnings).toHaveLength(2);
  });

  test('OpenAI chat: system skipped, null content, bad arguments, reasoning_content, name looked up', () => {
    const warnings: string[] = [];
    const h = fromOpenAIChatMessages(
      [
        { role: 'system', content: 's' },
        { role: 'user', content: [{ type: 'text', text: 'q' }] },
        { role: 'assistant', content: null, reasoning_content: 'r', tool_calls: [{ id: 'x', type: 'function', function: { name: 'ls', arguments: '{"a":' } }, 'junk'] },
        { role: 'tool', tool_call_id: 'x', content: 'ok' },
      ],
      { onWarning: (w) => warnings.push(w) },
    );
    expect(h).toEqual([
      { role: 'user', content: 'q' },
      { role: 'assistant', content: '', thinking: 'r', calls: [{ id: 'x', name: 'ls', input: {} }] },
      { role: 'tool', results: [{ callId: 'x', name: 'ls', ok: true, content: 'ok' }] },
    ]);
    expect(warnings).toHaveLength(2);
    expect(warnings.join()).not.toContain('{"a":');
  });

  test('OpenAI Responses: easy messages, content parts, reasoning summary, unknown items', () => {
    const warnings: string[] = [];
    const h = fromOpenAIResponsesInput(
      [
        { role: 'user', content: 'q' },
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'think' }] },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'hi' }] },
        { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'ls', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_1', output: [{ type: 'input_text', text: 'out' }] },
        { type: 'web_search_call', id: 'ws' },
      ],
      { onWarning: (w) => warnings.push(w) },
    );
    expect(h).toEqual([
      { role: 'user', content: 'q' },
      { role: 'assistant', content: 'hi', thinking: 'think', calls: [{ id: 'call_1', name: 'ls', input: {} }] },
      { role: 'tool', results: [{ callId: 'call_1', name: 'ls', ok: true, content: 'out' }] },
    ]);
    expect(warnings).toHaveLength(1);
  });

  test('Gemini: calls and responses without ids are matched by name and order; thought parts', () => {
    const h = fromGeminiContents([
      { role: 'user', parts: [{ text: 'q' }] },
      { role: 'model', parts: [{ text: 't', thought: true }, { functionCall: { name: 'ls', args: { p: 1 } } }, { functionCall: { name: 'ls', args: { p: 2 } } }, { functionCall: { name: 'cat', args: {} } }] },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'ls', response: { output: 'one' } } },
          { functionResponse: { name: 'ls', response: { result: 2 } } },
          { functionResponse: { name: 'cat', response: { error: 'bad' } } },
        ],
      },
    ]);
    expect(h[1]).toEqual({
      role: 'assistant',
      content: '',
      thinking: 't',
      calls: [
        { id: 'gemini_ls_1_1', name: 'ls', input: { p: 1 } },
        { id: 'gemini_ls_1_2', name: 'ls', input: { p: 2 } },
        { id: 'gemini_cat_1_3', name: 'cat', input: {} },
      ],
    });
    expect(h[2]).toEqual({
      role: 'tool',
      results: [
        { callId: 'gemini_ls_1_1', name: 'ls', ok: true, content: 'one' },
        { callId: 'gemini_ls_1_2', name: 'ls', ok: true, content: '{"result":2}' },
        { callId: 'gemini_cat_1_3', name: 'cat', ok: false, content: 'bad' },
      ],
    });
    expect(checkHistory(h).ok).toBe(true);
  });

  test('imports never throw on garbage', () => {
    for (const format of ['anthropic', 'openai-chat', 'openai-responses', 'gemini'] as const) {
      expect(() => fromProviderHistory(format, [null, 1, 'x', [], { role: 'assistant', content: 5 }, { parts: 'x' }])).not.toThrow();
    }
  });
});

describe('checkHistory on provider shapes', () => {
  test('Anthropic: missing tool_result (I1)', () => {
    const r = checkHistory(
      [
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'ls', input: {} }, { type: 'tool_use', id: 't2', name: 'ls', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'x' }] },
      ],
      { format: 'anthropic' },
    );
    expect(r.violations.map((v) => [v.invariant, v.callId])).toEqual([['I1', 't2']]);
  });

  test('OpenAI chat: tool message after a user message (I1 + I2)', () => {
    const r = checkHistory(
      [
        { role: 'assistant', content: null, tool_calls: [{ id: 'x', type: 'function', function: { name: 'ls', arguments: '{}' } }] },
        { role: 'user', content: 'interrupt' },
        { role: 'tool', tool_call_id: 'x', content: 'late' },
      ],
      { format: 'openai-chat' },
    );
    expect(r.violations.map((v) => v.invariant)).toEqual(['I1', 'I2']);
  });

  test('OpenAI Responses: outputs out of order (I3)', () => {
    const r = checkHistory(
      [
        { type: 'function_call', call_id: 'a', name: 'ls', arguments: '{}' },
        { type: 'function_call', call_id: 'b', name: 'ls', arguments: '{}' },
        { type: 'function_call_output', call_id: 'b', output: '' },
        { type: 'function_call_output', call_id: 'a', output: '' },
      ],
      { format: 'openai-responses' },
    );
    expect(r.violations.map((v) => v.invariant)).toEqual(['I3']);
  });

  test('Gemini: response for a function that was not called (I2)', () => {
    const r = checkHistory(
      [
        { role: 'model', parts: [{ functionCall: { id: 'a', name: 'ls', args: {} } }] },
        { role: 'user', parts: [{ functionResponse: { id: 'a', name: 'ls', response: { output: '' } } }, { functionResponse: { name: 'rm', response: { output: '' } } }] },
      ],
      { format: 'gemini' },
    );
    expect(r.violations.map((v) => v.invariant)).toEqual(['I2']);
    expect(r.warnings.join()).toMatch(/matches no call/);
  });
});

describe('OpenAI chat: system role (issue 10)', () => {
  test('toOpenAIChatMessages puts the system prompt first; the importer skips it again', () => {
    const out = toOpenAIChatMessages(neutral, { system: 'You are terse.' });
    expect(out[0]).toEqual({ role: 'system', content: 'You are terse.' });
    expect(out.slice(1)).toEqual(toOpenAIChatMessages(neutral));
    expect(toOpenAIChatMessages([], { system: 'x', systemRole: 'developer' })).toEqual([{ role: 'developer', content: 'x' }]);
    expect(fromOpenAIChatMessages(out)).toEqual(fromOpenAIChatMessages(out.slice(1)));
    expect(checkHistory(out, { format: 'openai-chat' }).ok).toBe(true);
  });
});
