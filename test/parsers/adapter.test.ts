/**
 * The `text:<family>` adapter: OpenAI-chat-shaped chunks whose delta.content is raw model text.
 */
import {
  createTextAdapter,
  createTextParser,
  listFamilies,
  registerTextParsers,
  resolveFamily,
  textAdapterFactory,
} from '../../src/parsers';
import { createAdapter, registerTextAdapterFactory } from '../../src/wire';
import type { StreamEvent } from '../../src/wire/events';
import { mergeEvents, summarize } from './helpers';

const chunk = (
  delta: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Record<string, unknown> => ({
  id: 'chatcmpl-1',
  model: 'm',
  object: 'chat.completion.chunk',
  choices: [{ index: 0, delta, ...extra }],
});

function run(family: string, payloads: unknown[], opts = {}): StreamEvent[] {
  const a = createTextAdapter(family, opts);
  const out: StreamEvent[] = [];
  for (const p of payloads) out.push(...a.push(p));
  out.push(...a.end());
  return out;
}

describe('text adapter', () => {
  it('parses content, passes usage, maps stop with calls to tool_calls, ends once', () => {
    const evs = run('qwen3', [
      chunk({ role: 'assistant', content: 'Hi <tool_' }),
      chunk({ content: 'call>{"name": "f", "arguments": {"a": 1}}</tool_call>' }),
      chunk({}, { finish_reason: 'stop' }),
      {
        id: 'chatcmpl-1',
        choices: [],
        usage: { prompt_tokens: 10, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 4 } },
      },
      '[DONE]',
    ]);
    expect(mergeEvents(evs)).toEqual([
      { type: 'message.start', id: 'chatcmpl-1', model: 'm' },
      { type: 'text.delta', text: 'Hi ' },
      { type: 'call.identity', index: 0, id: 'call_0', name: 'f' },
      { type: 'call.fragment', index: 0, text: '{"a": 1}' },
      { type: 'call.complete', index: 0 },
      { type: 'finish', reason: 'tool_calls', raw: 'stop' },
      { type: 'usage', usage: { promptTokens: 10, cachedTokens: 4, outputTokens: 5 } },
      { type: 'stream.end' },
    ]);
    expect(createTextAdapter('hermes').format).toBe('text:hermes');
  });

  it('flushes the parser before finish; length stays length and an open call has no completion', () => {
    const evs = run('hermes', [
      chunk({ content: 'a<tool_call>{"name": "f", "arguments": {"x": "ab' }),
      chunk({ content: 'c' }, { finish_reason: 'length' }),
    ]);
    const s = summarize(evs);
    expect(s.finish).toBe('length');
    expect(s.calls).toEqual([{ index: 0, id: 'call_0', name: 'f', args: '{"x": "abc', completes: 0 }]);
    const fin = evs.findIndex((e) => e.type === 'finish');
    const warn = evs.findIndex((e) => e.type === 'warning' && e.code === 'parser.unclosed_call');
    expect(warn).toBeGreaterThan(-1);
    expect(warn).toBeLessThan(fin);
    expect(evs.filter((e) => e.type === 'stream.end')).toHaveLength(1);
  });

  it('stop without calls stays stop; other reasons map', () => {
    expect(summarize(run('hermes', [chunk({ content: 'ok' }, { finish_reason: 'stop' })])).finish).toBe(
      'stop',
    );
    expect(
      summarize(run('hermes', [chunk({ content: 'ok' }, { finish_reason: 'content_filter' })])).finish,
    ).toBe('content_filter');
    const other = run('hermes', [chunk({}, { finish_reason: 'abort' })]).find((e) => e.type === 'finish');
    expect(other).toEqual({ type: 'finish', reason: 'other', raw: 'abort' });
  });

  describe('reasoning_content', () => {
    // As in the DeepSeek V4 recordings: the server split the reasoning out but left <think> in content.
    const dup = [
      chunk({ content: '<think>Plan', reasoning_content: 'Plan' }),
      chunk({ content: ' more.', reasoning_content: ' more.' }),
      chunk({ content: '</think>Answer' }),
    ];
    it('auto: a duplicate of reasoning markup in content is dropped', () => {
      const s = summarize(run('deepseek-v4', dup));
      expect(s.thinking).toBe('Plan more.');
      expect(s.text).toBe('Answer');
    });
    it('auto: a duplicate is dropped also when the opener is still held back', () => {
      const s = summarize(
        run('hermes', [
          chunk({ content: '<thi', reasoning_content: 'P' }),
          chunk({ content: 'nk>P</think>A' }),
        ]),
      );
      expect(s.thinking).toBe('P');
      expect(s.text).toBe('A');
    });
    it('auto: used when the content carries no reasoning markup (server-side reasoning parser)', () => {
      const s = summarize(
        run('hermes', [
          chunk({ reasoning_content: 'Think.' }),
          chunk({ reasoning: ' More.' }),
          chunk({ content: 'Answer' }),
        ]),
      );
      expect(s.thinking).toBe('Think. More.');
      expect(s.text).toBe('Answer');
    });
    it("'thinking' always uses it, 'ignore' never does", () => {
      expect(summarize(run('deepseek-v4', dup, { reasoningContent: 'thinking' })).thinking).toBe(
        'PlanPlan more. more.',
      );
      expect(
        summarize(run('hermes', [chunk({ reasoning_content: 'x' })], { reasoningContent: 'ignore' }))
          .thinking,
      ).toBe('');
    });
  });

  it('warns once for server-parsed tool_calls, extra choices, content after finish; never throws', () => {
    const a = createTextAdapter('hermes');
    const out: StreamEvent[] = [];
    out.push(...a.push(chunk({ tool_calls: [{ index: 0, function: { name: 'f' } }] })));
    out.push(...a.push(chunk({ tool_calls: [{ index: 0, function: { arguments: '{}' } }] })));
    out.push(...a.push({ id: 'x', choices: [{ index: 1, delta: { content: 'other' } }] }));
    out.push(...a.push(chunk({ content: 'ok' }, { finish_reason: 'stop' })));
    out.push(...a.push(chunk({ content: 'late' })));
    out.push(...a.push(42));
    out.push(...a.end());
    out.push(...a.push(chunk({ content: 'after end' })));
    expect(out.filter((e) => e.type === 'warning').map((e) => (e as { code: string }).code)).toEqual([
      'structured_tool_calls',
      'extra_choice',
      'content_after_finish',
      'bad_payload',
      'payload_after_end',
    ]);
    expect(summarize(out).text).toBe('ok');
    expect(a.end()).toEqual([]);
  });

  it('maps a mid-stream error chunk to stream.error', () => {
    const evs = run('hermes', [chunk({ content: 'a' }), { error: { message: 'overloaded', code: 503 } }]);
    expect(evs.find((e) => e.type === 'stream.error')).toEqual({
      type: 'stream.error',
      error: { type: 'overloaded_error', message: 'overloaded' },
      retryable: true,
    });
  });

  it('reads completions-API chunks (choices[].text)', () => {
    const evs = run('hermes', [
      {
        id: 'c',
        choices: [
          { index: 0, text: '<tool_call>{"name": "f", "arguments": {}}</tool_call>', finish_reason: 'stop' },
        ],
      },
    ]);
    expect(summarize(evs).calls).toEqual([{ index: 0, id: 'call_0', name: 'f', args: '{}', completes: 1 }]);
  });

  it('passes tools to the parser (schema typing)', () => {
    const tools = [{ name: 'f', input_schema: { type: 'object', properties: { n: { type: 'string' } } } }];
    const content = '<tool_call>f<arg_key>n</arg_key><arg_value>42</arg_value></tool_call>';
    expect(summarize(run('glm45', [chunk({ content })], { tools })).calls[0].args).toBe('{"n":"42"}');
    expect(summarize(run('glm45', [chunk({ content })])).calls[0].args).toBe('{"n":42}');
  });
});

describe('registry and entry points', () => {
  it('lists at least ten families, resolves aliases, rejects unknown families', () => {
    const names = listFamilies().map((f) => f.name);
    expect(names.length).toBeGreaterThanOrEqual(10);
    expect(new Set(names).size).toBe(names.length);
    expect(resolveFamily('Qwen2.5')).toBe('hermes');
    expect(resolveFamily('deepseek_v3.1')).toBe('deepseek-v3.1');
    expect(resolveFamily('DeepSeek-V3.2')).toBe('deepseek-v4');
    expect(resolveFamily('harmony')).toBe('gpt-oss');
    expect(resolveFamily('glm4_moe')).toBe('glm45');
    expect(resolveFamily('nope')).toBeUndefined();
    expect(() => createTextParser('nope')).toThrow(/unknown parser family/);
    expect(() => createTextAdapter('nope')).toThrow(/unknown parser family/);
    for (const f of listFamilies()) expect(createTextParser(f.name).family).toBe(f.name);
  });

  it('plugs into src/wire createAdapter("text:<family>")', () => {
    expect(textAdapterFactory('nope')).toBeUndefined();
    registerTextParsers();
    try {
      const a = createAdapter('text:qwen3');
      expect(a.format).toBe('text:hermes');
      const evs = [...a.push(chunk({ content: '<think>x</think>y' })), ...a.end()];
      expect(summarize(evs)).toMatchObject({ thinking: 'x', text: 'y' });
    } finally {
      registerTextAdapterFactory(undefined);
    }
  });

  it('a parser never throws and ignores pushes after end', () => {
    const p = createTextParser('hermes');
    expect(p.push('')).toEqual([]);
    p.end();
    expect(p.push('x').map((e) => e.type)).toEqual(['warning']);
    expect(p.end()).toEqual([]);
  });
});
