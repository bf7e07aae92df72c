/**
 * One canonical request → each upstream API's body (what maps, and the clear 400 for what does
 * not), the upstream URLs and auth headers, and the inbound parsers' edge cases.
 */
import { type CanonicalRequest } from '../../src/gateway/canonical';
import { GatewayError } from '../../src/gateway/errors';
import { parseChatRequest } from '../../src/gateway/inbound/chat';
import { parseMessagesRequest } from '../../src/gateway/inbound/messages';
import { parseResponsesRequest } from '../../src/gateway/inbound/responses';
import { inferUpstreamFormat } from '../../src/gateway/server';
import { messagesUrl, toAnthropicRequest } from '../../src/gateway/upstream/anthropic';
import { geminiUrl, toGeminiRequest } from '../../src/gateway/upstream/gemini';
import { toChatRequest } from '../../src/gateway/upstream/openaiChat';
import { responsesUrl, toResponsesRequest } from '../../src/gateway/upstream/openaiResponses';
import { rawRequest, READ_FILE_TOOL, rig, type Rig } from './helpers';

/** A Messages request that uses every canonical feature. */
function rich(extra: Record<string, unknown> = {}): CanonicalRequest {
  return parseMessagesRequest({
    model: 'claude-x',
    max_tokens: 1000,
    system: 'sys',
    thinking: { type: 'enabled', budget_tokens: 5000 },
    tools: [READ_FILE_TOOL],
    tool_choice: { type: 'any', disable_parallel_tool_use: true },
    temperature: 0.5,
    top_p: 0.9,
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'hmm', signature: 'sig1' },
          { type: 'text', text: 'reading' },
          { type: 'tool_use', id: 'tu1', name: 'read_file', input: { path: '/a' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu1', content: 'AAA', is_error: true }, { type: 'text', text: 'go on' }] },
      { role: 'system', content: 'mid' },
    ],
    ...extra,
  });
}

function status400(fn: () => unknown, text: string): void {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(GatewayError);
  expect((err as GatewayError).status).toBe(400);
  expect((err as GatewayError).message).toContain(text);
}

describe('canonical → upstream bodies', () => {
  test('Anthropic: near identity; system messages join the system prompt; signed thinking kept; budget → thinking', () => {
    const b = toAnthropicRequest(rich({ stop_sequences: ['X'], top_k: 5 }), 'up-model');
    expect(b).toMatchObject({
      model: 'up-model',
      max_tokens: 1000,
      stream: true,
      system: 'sys\n\nmid',
      thinking: { type: 'enabled', budget_tokens: 5000 },
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      stop_sequences: ['X'],
      top_k: 5,
      tools: [{ name: 'read_file', input_schema: READ_FILE_TOOL.input_schema }],
    });
    expect(b.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'hmm', signature: 'sig1' },
          { type: 'text', text: 'reading' },
          { type: 'tool_use', id: 'tu1', name: 'read_file', input: { path: '/a' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu1', content: [{ type: 'text', text: 'AAA' }], is_error: true }, { type: 'text', text: 'go on' }] },
    ]);
    // A Chat client without max_tokens and with unsigned reasoning history.
    const chat = parseChatRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: 'y', reasoning_content: 'r' }, { role: 'user', content: 'z' }] });
    const b2 = toAnthropicRequest(chat, 'm');
    expect(b2.max_tokens).toBe(8192);
    expect((b2.messages as { content: unknown[] }[])[1]!.content).toEqual([{ type: 'text', text: 'y' }]);
  });

  test('Responses: instructions, items, tools, effort from the budget; stop sequences and top_k are a 400', () => {
    status400(() => toResponsesRequest(rich({ stop_sequences: ['X'] }), 'm'), 'stop sequences');
    status400(() => toResponsesRequest(rich({ top_k: 3 }), 'm'), 'top_k');
    const b = toResponsesRequest(rich(), 'up');
    expect(b).toMatchObject({
      model: 'up',
      instructions: 'sys',
      stream: true,
      store: false,
      max_output_tokens: 1000,
      tool_choice: 'required',
      parallel_tool_calls: false,
      reasoning: { effort: 'medium', summary: 'auto' },
      include: ['reasoning.encrypted_content'],
      tools: [{ type: 'function', name: 'read_file', parameters: READ_FILE_TOOL.input_schema, strict: false }],
    });
    expect(b.input).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'look' }, { type: 'input_image', image_url: 'data:image/png;base64,AAAA' }] },
      // Signed thinking is replayed as a reasoning item (its signature is the encrypted content).
      { type: 'reasoning', summary: [{ type: 'summary_text', text: 'hmm' }], encrypted_content: 'sig1' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'reading' }] },
      { type: 'function_call', call_id: 'tu1', name: 'read_file', arguments: '{"path":"/a"}' },
      { type: 'function_call_output', call_id: 'tu1', output: 'Error: AAA' },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'go on' }] },
      { type: 'message', role: 'system', content: 'mid' },
    ]);
  });

  test('Responses: thinking history from a Responses client goes back as reasoning items; unsigned thinking is not sent', () => {
    // Codex replays reasoning items (summary + encrypted_content) with store: false.
    const codex = parseResponsesRequest({
      model: 'm',
      input: [
        { type: 'message', role: 'user', content: 'go' },
        { type: 'reasoning', summary: [{ type: 'summary_text', text: 'plan' }], encrypted_content: 'gAAAAB-enc' },
        { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: 'ok' },
      ],
    });
    const b = toResponsesRequest(codex, 'up');
    expect(b.input).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'go' }] },
      { type: 'reasoning', summary: [{ type: 'summary_text', text: 'plan' }], encrypted_content: 'gAAAAB-enc' },
      { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
      { type: 'function_call_output', call_id: 'c1', output: 'ok' },
    ]);
    expect(b.include).toEqual(['reasoning.encrypted_content']);
    // A Chat client's reasoning_content has no signature: not replayable, not sent, nothing included.
    const chat = toResponsesRequest(parseChatRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: 'y', reasoning_content: 'r' }, { role: 'user', content: 'z' }] }), 'up');
    expect(JSON.stringify(chat.input)).not.toContain('reasoning');
    expect(chat.include).toBeUndefined();
  });

  test('Anthropic: cache_control on system blocks, message blocks and tools is forwarded as sent; other upstreams never see it', () => {
    const eph = { type: 'ephemeral' };
    const claudeCode = parseMessagesRequest({
      model: 'claude-x',
      max_tokens: 100,
      system: [
        { type: 'text', text: 'You are Claude Code.' },
        { type: 'text', text: 'Long instructions.', cache_control: eph },
      ],
      tools: [{ ...READ_FILE_TOOL, cache_control: { type: 'ephemeral', ttl: '1h' } }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'read it', cache_control: eph }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'read_file', input: { path: '/a' }, cache_control: eph }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'AAA', cache_control: eph }] },
        { role: 'system', content: 'reminder' },
      ],
    });
    const b = toAnthropicRequest(claudeCode, 'up');
    expect(b.system).toEqual([
      { type: 'text', text: 'You are Claude Code.' },
      { type: 'text', text: 'Long instructions.', cache_control: eph },
      { type: 'text', text: 'reminder' },
    ]);
    expect(b.tools).toEqual([{ name: 'read_file', description: READ_FILE_TOOL.description, input_schema: READ_FILE_TOOL.input_schema, cache_control: { type: 'ephemeral', ttl: '1h' } }]);
    expect(b.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'read it', cache_control: eph }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'read_file', input: { path: '/a' }, cache_control: eph }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'AAA' }], cache_control: eph }] },
    ]);
    // Without breakpoints the system prompt stays one string.
    expect(toAnthropicRequest(rich(), 'up').system).toBe('sys\n\nmid');
    for (const other of [toResponsesRequest(claudeCode, 'up'), toChatRequest(claudeCode, { model: 'up' }), toGeminiRequest(claudeCode)]) expect(JSON.stringify(other)).not.toContain('cache_control');
  });

  test('Gemini: contents, functionResponse by the call name, signature on the next part, config; URL images and unknown ids are a 400', () => {
    const b = toGeminiRequest(rich({ stop_sequences: ['X'], top_k: 4 }));
    expect(b).toMatchObject({
      systemInstruction: { parts: [{ text: 'sys\n\nmid' }] },
      tools: [{ functionDeclarations: [{ name: 'read_file', description: 'Read a file', parametersJsonSchema: READ_FILE_TOOL.input_schema }] }],
      toolConfig: { functionCallingConfig: { mode: 'ANY' } },
      generationConfig: { maxOutputTokens: 1000, temperature: 0.5, topP: 0.9, topK: 4, stopSequences: ['X'], thinkingConfig: { thinkingBudget: 5000, includeThoughts: true } },
    });
    expect(b.contents).toEqual([
      { role: 'user', parts: [{ text: 'look' }, { inlineData: { mimeType: 'image/png', data: 'AAAA' } }] },
      { role: 'model', parts: [{ text: 'reading', thoughtSignature: 'sig1' }, { functionCall: { id: 'tu1', name: 'read_file', args: { path: '/a' } } }] },
      { role: 'user', parts: [{ functionResponse: { id: 'tu1', name: 'read_file', response: { error: 'AAA' } } }, { text: 'go on' }] },
    ]);
    status400(
      () => toGeminiRequest(parseMessagesRequest({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'https://x/y.png' } }] }] })),
      'cannot fetch image URLs',
    );
    status400(
      () => toGeminiRequest(parseMessagesRequest({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'nope', content: 'x' }] }] })),
      'no matching tool call',
    );
  });

  test('Chat: reasoning_effort only from an explicit effort (an Anthropic budget is not sent)', () => {
    expect(toChatRequest(rich(), { model: 'm' }).reasoning_effort).toBeUndefined();
    expect(toChatRequest(parseChatRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], reasoning_effort: 'high' }), { model: 'm' }).reasoning_effort).toBe('high');
  });
});

describe('URLs and format inference', () => {
  test('endpoints and inference from the URL path', () => {
    expect(messagesUrl('http://h:1').toString()).toBe('http://h:1/v1/messages');
    expect(messagesUrl('https://api.anthropic.com/v1').toString()).toBe('https://api.anthropic.com/v1/messages');
    expect(responsesUrl('http://h/v1/responses').toString()).toBe('http://h/v1/responses');
    expect(geminiUrl('https://generativelanguage.googleapis.com', 'gemini-2.5-pro').toString()).toBe(
      'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse',
    );
    expect(geminiUrl('http://h/v1beta', 'models/g').toString()).toBe('http://h/v1beta/models/g:streamGenerateContent?alt=sse');
    expect(() => geminiUrl('http://h', '../x')).toThrow();
    expect(inferUpstreamFormat('http://h/v1/responses')).toBe('openai-responses');
    expect(inferUpstreamFormat('https://api.anthropic.com/v1/messages')).toBe('anthropic');
    expect(inferUpstreamFormat('https://generativelanguage.googleapis.com')).toBe('gemini');
    expect(inferUpstreamFormat('http://h:8000/v1')).toBe('openai-chat');
  });
});

describe('inbound parsing edge cases', () => {
  test('Chat: data-URL images, consecutive tool messages form one turn, leading developer messages are the system prompt', () => {
    const c = parseChatRequest({
      model: 'm',
      messages: [
        { role: 'developer', content: 'dev' },
        { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,QUJD' } }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'x', type: 'function', function: { name: 'f', arguments: '{}' } }, { id: 'y', type: 'function', function: { name: 'f', arguments: '' } }] },
        { role: 'tool', tool_call_id: 'x', content: '1' },
        { role: 'tool', tool_call_id: 'y', content: [{ type: 'text', text: '2' }] },
      ],
    });
    expect(c.system).toBe('dev');
    expect(c.messages[0]).toEqual({ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: 'QUJD' } }] });
    expect(c.messages[2]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'x', text: '1', images: [], is_error: false },
        { type: 'tool_result', tool_use_id: 'y', text: '2', images: [], is_error: false },
      ],
    });
    status400(() => parseChatRequest({ model: 'm', messages: [{ role: 'assistant', tool_calls: [{ id: 'x', type: 'function', function: { name: 'f', arguments: '[1]' } }] }] }), 'JSON text of an object');
    status400(() => parseChatRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], response_format: { type: 'grammar' } }), 'response_format.type');
  });

  test('Responses: reasoning items keep encrypted_content as the signature; function calls join the assistant turn', () => {
    const r = parseResponsesRequest({
      model: 'm',
      input: [
        { role: 'user', content: 'q' },
        { type: 'reasoning', summary: [{ type: 'summary_text', text: 'think' }], encrypted_content: 'ENC' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'doing' }] },
        { type: 'function_call', call_id: 'c', name: 'f', arguments: '{"a":1}' },
        { type: 'function_call_output', call_id: 'c', output: 'ok' },
      ],
    });
    expect(r.messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'think', signature: 'ENC' },
        { type: 'text', text: 'doing' },
        { type: 'tool_use', id: 'c', name: 'f', input: { a: 1 } },
      ],
    });
    status400(() => parseResponsesRequest({ model: 'm', input: [{ type: 'item_reference', id: 'x' }] }), 'item_reference');
  });
});

describe('non-chat upstreams over HTTP', () => {
  let r: Rig | undefined;
  afterEach(async () => {
    await r?.close();
    r = undefined;
  });

  test('anthropic upstream: POST …/v1/messages with x-api-key and anthropic-version', async () => {
    const events = [
      { type: 'message_start', message: { id: 'm1', type: 'message', role: 'assistant', model: 'x', content: [], usage: { input_tokens: 3, output_tokens: 0 } } },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hello' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 1 } },
      { type: 'message_stop' },
    ];
    r = await rig({ script: events.map((data) => ({ t: 0, data })) }, { upstreamFormat: 'anthropic', upstreamApiKey: 'up-key' });
    const res = await rawRequest(r.gw.url, { path: '/v1/chat/completions', body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }) });
    expect(res.status).toBe(200);
    expect((res.json as { choices: { message: { content: string } }[] }).choices[0]!.message.content).toBe('hello');
    const q = r.up.requests[0]!;
    expect(q.url).toBe('/v1/messages');
    expect(q.headers['x-api-key']).toBe('up-key');
    expect(q.headers['anthropic-version']).toBe('2023-06-01');
    expect(q.headers.authorization).toBeUndefined();
  });

  test('gemini upstream: the model in the URL, x-goog-api-key; an image URL is a 400 before any upstream call', async () => {
    const chunk = { candidates: [{ content: { role: 'model', parts: [{ text: 'hi there' }] }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2 } };
    r = await rig({ script: [{ t: 0, data: chunk }] }, { upstreamFormat: 'gemini', upstreamApiKey: 'g-key' });
    const res = await rawRequest(r.gw.url, { path: '/v1/responses', body: JSON.stringify({ model: 'gemini-x', input: 'hi' }) });
    expect(res.status).toBe(200);
    expect((res.json as { output: { content: { text: string }[] }[] }).output[0]!.content[0]!.text).toBe('hi there');
    // The scripted upstream's base URL ends in /v1, which the Gemini URL keeps as its version.
    expect(r.up.requests[0]!.url).toBe('/v1/models/gemini-x:streamGenerateContent?alt=sse');
    expect(r.up.requests[0]!.headers['x-goog-api-key']).toBe('g-key');
    const bad = await rawRequest(r.gw.url, {
      path: '/v1/messages',
      body: JSON.stringify({ model: 'g', max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'https://x/y.png' } }] }] }),
    });
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('image URLs') } });
    expect(r.up.requests.length).toBe(1);
  });

  test('openai-responses upstream: POST …/v1/responses; its function_call reaches a Messages client', async () => {
    const evs = [
      { type: 'response.created', response: { id: 'r', model: 'x' } },
      { type: 'response.output_item.added', output_index: 0, item: { type: 'function_call', id: 'fc', call_id: 'c', name: 'read_file', arguments: '' } },
      { type: 'response.function_call_arguments.delta', output_index: 0, item_id: 'fc', delta: '{"path":"/q"}' },
      { type: 'response.function_call_arguments.done', output_index: 0, item_id: 'fc', arguments: '{"path":"/q"}' },
      { type: 'response.completed', response: { usage: { input_tokens: 1, output_tokens: 1 } } },
    ];
    r = await rig({ script: evs.map((data) => ({ t: 0, data })) }, { upstreamFormat: 'openai-responses' });
    const msg = await r.client.messages.create({ model: 'm', max_tokens: 50, messages: [{ role: 'user', content: 'x' }], tools: [READ_FILE_TOOL] });
    expect(msg.content).toEqual([expect.objectContaining({ type: 'tool_use', name: 'read_file', input: { path: '/q' } })]);
    expect(msg.stop_reason).toBe('tool_use');
    expect(r.up.requests[0]!.url).toBe('/v1/responses');
  });
});
