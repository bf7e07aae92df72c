import { GatewayError, statusToErrorType, upstreamErrorMessage } from '../../src/gateway/errors';
import { chatCompletionsUrl, toChatRequest } from '../../src/gateway/upstream/openaiChat';
import { optionsFrom, parseSize } from '../../src/cli/serve';
import { UsageError } from '../../src/cli/args';
import { estimateInputTokens, mapModel, parseModelMap } from '../../src/gateway/canonical';
import { parseMessagesRequest } from '../../src/gateway/inbound/messages';

const base = { model: 'm', max_tokens: 10 };

function chat(body: Record<string, unknown>) {
  return toChatRequest(parseMessagesRequest({ ...base, ...body }), { model: 'up' });
}

describe('request translation', () => {
  test('system blocks, user text blocks, stop/temperature/top_p/top_k', () => {
    const c = chat({
      system: [
        { type: 'text', text: 'You are', cache_control: { type: 'ephemeral' } },
        { type: 'text', text: 'helpful.' },
      ],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }],
      stop_sequences: ['END'],
      temperature: 0.2,
      top_p: 0.9,
      top_k: 40,
      metadata: { user_id: 'u' },
      thinking: { type: 'enabled', budget_tokens: 1024 },
    });
    expect(c).toEqual({
      model: 'up',
      messages: [
        { role: 'system', content: 'You are\nhelpful.' },
        { role: 'user', content: 'a\nb' },
      ],
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 10,
      stop: ['END'],
      temperature: 0.2,
      top_p: 0.9,
      top_k: 40,
    });
  });

  test('system messages inside messages: inline in place, or merged into the leading one', () => {
    const body = {
      ...base,
      system: 'S0',
      messages: [
        { role: 'user', content: 'u1' },
        { role: 'system', content: 'S1' },
        { role: 'system', content: [{ type: 'text', text: 'S2' }] },
        { role: 'user', content: 'u2' },
      ],
    };
    expect(toChatRequest(parseMessagesRequest(body), { model: 'up' }).messages).toEqual([
      { role: 'system', content: 'S0' },
      { role: 'user', content: 'u1' },
      { role: 'system', content: 'S1' },
      { role: 'system', content: 'S2' },
      { role: 'user', content: 'u2' },
    ]);
    expect(toChatRequest(parseMessagesRequest(body), { model: 'up', systemMessages: 'merge' }).messages).toEqual([
      { role: 'system', content: 'S0\n\nS1\n\nS2' },
      { role: 'user', content: 'u1' },
      { role: 'user', content: 'u2' },
    ]);
  });

  test('images: base64 → data URL, url → url, order kept with text', () => {
    const c = chat({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
            { type: 'image', source: { type: 'url', url: 'https://x/y.png' } },
            { type: 'text', text: 'then' },
          ],
        },
      ],
    });
    expect(c.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
          { type: 'image_url', image_url: { url: 'https://x/y.png' } },
          { type: 'text', text: 'then' },
        ],
      },
    ]);
  });

  test('tool_use / tool_result round trip: same ids, tool messages first, errors and images in results', () => {
    const c = chat({
      messages: [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'hmm', signature: '' },
            { type: 'redacted_thinking', data: 'xx' },
            { type: 'tool_use', id: 'toolu_1', name: 'a', input: { x: 1 } },
            { type: 'tool_use', id: 'toolu_2', name: 'b', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'r1' }, { type: 'image', source: { type: 'url', url: 'u' } }] },
            { type: 'tool_result', tool_use_id: 'toolu_2', content: 'boom', is_error: true },
            { type: 'text', text: 'continue' },
          ],
        },
      ],
    });
    expect(c.messages).toEqual([
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: null,
        reasoning_content: 'hmm',
        tool_calls: [
          { id: 'toolu_1', type: 'function', function: { name: 'a', arguments: '{"x":1}' } },
          { id: 'toolu_2', type: 'function', function: { name: 'b', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: 'r1\n[1 image attached in the next user message]' },
      { role: 'tool', tool_call_id: 'toolu_2', content: 'Error: boom' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'continue' },
          { type: 'image_url', image_url: { url: 'u' } },
        ],
      },
    ]);
  });

  test('tools and tool_choice mapping', () => {
    const tools = [{ name: 't', description: 'd', input_schema: { type: 'object' } }];
    expect(chat({ messages: [{ role: 'user', content: 'x' }], tools }).tools).toEqual([
      { type: 'function', function: { name: 't', description: 'd', parameters: { type: 'object' } } },
    ]);
    const tc = (tool_choice: unknown) => {
      const c = chat({ messages: [{ role: 'user', content: 'x' }], tools, tool_choice });
      return [c.tool_choice, c.parallel_tool_calls];
    };
    expect(tc({ type: 'auto' })).toEqual(['auto', undefined]);
    expect(tc({ type: 'any', disable_parallel_tool_use: true })).toEqual(['required', false]);
    expect(tc({ type: 'tool', name: 't', disable_parallel_tool_use: false })).toEqual([{ type: 'function', function: { name: 't' } }, true]);
    expect(tc({ type: 'none' })).toEqual(['none', undefined]);
  });

  test('max_completion_tokens option; document with text source', () => {
    const c = toChatRequest(
      parseMessagesRequest({ ...base, messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'doc' } }] }] }),
      { model: 'up', maxTokensField: 'max_completion_tokens' },
    );
    expect(c.max_completion_tokens).toBe(10);
    expect(c.max_tokens).toBeUndefined();
    expect(c.messages).toEqual([{ role: 'user', content: 'doc' }]);
  });

  test('rejections are GatewayError 400 with a path in the message', () => {
    const bad = (body: unknown): string => {
      try {
        parseMessagesRequest(body);
      } catch (e) {
        expect(e).toBeInstanceOf(GatewayError);
        expect((e as GatewayError).status).toBe(400);
        return (e as GatewayError).message;
      }
      throw new Error('expected a rejection');
    };
    expect(bad({ ...base, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'f' } }] }] })).toContain('messages[0].content[0]');
    expect(bad({ ...base, messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'b', input: [] }] }] })).toContain('input');
    expect(bad({ ...base, messages: [{ role: 'user', content: 'x' }], stop_sequences: [1] })).toContain('stop_sequences');
  });

  test('token estimate: ceil(chars / 3) plus a fixed cost per image', () => {
    const req = parseMessagesRequest({ ...base, system: 'abc', messages: [{ role: 'user', content: 'abcdef' }] });
    expect(estimateInputTokens(req)).toBe(3);
    const img = parseMessagesRequest({ ...base, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'u' } }] }] });
    expect(estimateInputTokens(img)).toBe(1600);
  });

  test('model map', () => {
    const rules = parseModelMap('claude-*-haiku-*=small, claude-*=big');
    expect(mapModel({ rules }, 'claude-3-5-haiku-20241022')).toBe('small');
    expect(mapModel({ rules }, 'claude-sonnet-4')).toBe('big');
    expect(mapModel({ rules }, 'gpt')).toBe('gpt');
    expect(mapModel({ rules, fallback: 'fb' }, 'gpt')).toBe('fb');
    expect(() => parseModelMap('nonsense')).toThrow(/pattern=model/);
  });
});

describe('errors and upstream URLs', () => {
  test('status → Anthropic error type', () => {
    expect([400, 401, 403, 404, 409, 413, 429, 499, 500, 502, 503, 504, 529, 418].map(statusToErrorType)).toEqual([
      'invalid_request_error',
      'authentication_error',
      'permission_error',
      'not_found_error',
      'conflict_error',
      'request_too_large',
      'rate_limit_error',
      'api_error',
      'api_error',
      'api_error',
      'overloaded_error',
      'timeout_error',
      'overloaded_error',
      'invalid_request_error',
    ]);
  });

  test('upstream error messages', () => {
    expect(upstreamErrorMessage(400, '{"error":{"message":"too long"}}')).toBe('upstream: HTTP 400: too long');
    expect(upstreamErrorMessage(400, '{"detail":"bad"}')).toBe('upstream: HTTP 400: bad');
    expect(upstreamErrorMessage(502, '<html>bad gateway</html>')).toBe('upstream returned HTTP 502');
  });

  test('chat completions URL', () => {
    expect(chatCompletionsUrl('http://h:1').toString()).toBe('http://h:1/v1/chat/completions');
    expect(chatCompletionsUrl('http://h:1/v1/').toString()).toBe('http://h:1/v1/chat/completions');
    expect(chatCompletionsUrl('http://h:1/api/v1').toString()).toBe('http://h:1/api/v1/chat/completions');
    expect(chatCompletionsUrl('http://h:1/x/chat/completions').toString()).toBe('http://h:1/x/chat/completions');
  });
});

describe('sluice serve options', () => {
  test('flags, env fallback, flag wins', () => {
    const { options } = optionsFrom(['--upstream', 'http://u:1/v1', '--port', '0', '--model-map', 'a=b', '--model', 'c', '--max-body', '2m', '--strict-stop-reason'], {
      SLUICE_HOST: '0.0.0.0',
      SLUICE_PORT: '9999',
      SLUICE_UPSTREAM_API_KEY: 'k',
      SLUICE_MAX_CONCURRENCY: '7',
    });
    expect(options).toMatchObject({
      upstream: 'http://u:1/v1',
      port: 0,
      host: '0.0.0.0',
      upstreamApiKey: 'k',
      maxConcurrent: 7,
      maxBodyBytes: 2 * 1024 * 1024,
      models: { rules: [{ pattern: 'a', target: 'b' }], fallback: 'c' },
      toolUseOnStop: false,
    });
  });

  test('defaults and --parser', () => {
    const up = optionsFrom(['--upstream', 'scripted:demo', '--upstream-format', 'anthropic', '--malformed-calls', 'drop'], {});
    expect(up.scripted).toBe('demo');
    expect(up.options).toMatchObject({ upstreamFormat: 'anthropic', malformedCalls: 'drop' });
    expect(optionsFrom(['--upstream', 'http://u', '--format', 'dynamo'], {}).options).toMatchObject({ upstreamFormat: 'openai-chat', format: 'dynamo' });
    expect(optionsFrom(['--upstream', 'http://u'], { SLUICE_UPSTREAM_API: 'gemini', SLUICE_MALFORMED_CALLS: 'pass' }).options).toMatchObject({ upstreamFormat: 'gemini', malformedCalls: 'pass' });
    const { options } = optionsFrom(['--parser', 'qwen3'], { SLUICE_UPSTREAM_URL: 'http://u' });
    expect(options).toMatchObject({ port: 8787, host: '127.0.0.1', format: 'text:qwen3' });
    expect(options.upstreamApiKey).toBeUndefined();
  });

  test('usage errors', () => {
    expect(() => optionsFrom([], {})).toThrow(UsageError);
    expect(() => optionsFrom(['--upstream', 'ftp://x'], {})).toThrow(/http/);
    expect(() => optionsFrom(['--upstream', 'scripted:'], {})).toThrow(/scripted:demo/);
    expect(() => optionsFrom(['--upstream', 'http://u', '--upstream-format', 'grpc'], {})).toThrow(UsageError);
    expect(() => optionsFrom(['--upstream', 'http://u', '--malformed-calls', 'maybe'], {})).toThrow(UsageError);
    expect(() => optionsFrom(['--upstream', 'http://x', '--format', 'text'], {})).toThrow(UsageError);
    expect(() => optionsFrom(['--upstream', 'http://x', '--max-concurrency', '0'], {})).toThrow(UsageError);
    expect(() => optionsFrom(['--upstream', 'http://x'], { SLUICE_COMPLETION: 'maybe' })).toThrow(/SLUICE_COMPLETION/);
    expect(() => parseSize('lots', 'max-body')).toThrow(UsageError);
    expect(parseSize('512k', 'x')).toBe(524288);
  });

  test('--help is available without --upstream', () => {
    expect(optionsFrom(['--help'], {}).help).toBe(true);
  });
});
