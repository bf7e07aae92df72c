/**
 * Structured output through the gateway: Chat `response_format`, Responses `text.format` (what
 * Codex sends for `codex exec --output-schema`: `{type: "json_schema", strict: true, schema, name:
 * "codex_output_schema"}`, codex-rs `create_text_param_for_request`) and Messages
 * `output_config.format` reach each backend in its own field — OpenAI Chat `response_format`,
 * Responses `text.format`, Anthropic `output_config.format`, Gemini `responseMimeType` +
 * `responseJsonSchema`. `json_object` to an Anthropic backend is a 400 (it takes a schema only).
 */
import { parseChatRequest } from '../../src/gateway/inbound/chat';
import { parseMessagesRequest } from '../../src/gateway/inbound/messages';
import { parseResponsesRequest } from '../../src/gateway/inbound/responses';
import { chatChunk } from '../../src/gateway/scripted';
import type { UpstreamFormatName } from '../../src/gateway/upstream/types';
import { openaiClient, rawRequest, rig, type Rig } from './helpers';

const SCHEMA = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
const CODEX_FORMAT = { type: 'json_schema', strict: true, schema: SCHEMA, name: 'codex_output_schema' };
const CANONICAL = { type: 'json_schema', name: 'codex_output_schema', schema: SCHEMA, strict: true };

describe('parse: each inbound spelling → one canonical format', () => {
  test('Responses text.format (Codex --output-schema), Chat response_format (nested), Messages output_config.format', () => {
    expect(parseResponsesRequest({ model: 'm', input: 'hi', text: { format: CODEX_FORMAT, verbosity: 'low' } }).responseFormat).toEqual(CANONICAL);
    expect(
      parseChatRequest({ model: 'm', messages: [{ role: 'user', content: 'hi' }], response_format: { type: 'json_schema', json_schema: { name: 'codex_output_schema', schema: SCHEMA, strict: true } } })
        .responseFormat,
    ).toEqual(CANONICAL);
    expect(parseMessagesRequest({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], output_config: { format: { type: 'json_schema', schema: SCHEMA } } }).responseFormat).toEqual({
      type: 'json_schema',
      name: 'output',
      schema: SCHEMA,
    });
  });

  test('json_object, text and nothing; a schema-less json_schema is json_object; bad shapes are 400s', () => {
    const chat = (response_format: unknown) => parseChatRequest({ model: 'm', messages: [{ role: 'user', content: 'hi' }], response_format });
    expect(chat({ type: 'json_object' }).responseFormat).toEqual({ type: 'json_object' });
    expect(chat({ type: 'text' }).responseFormat).toBeUndefined();
    expect(chat(undefined).responseFormat).toBeUndefined();
    expect(chat({ type: 'json_schema', json_schema: { name: 'x' } }).responseFormat).toEqual({ type: 'json_object' });
    expect(() => chat({ type: 'yaml' })).toThrow('response_format.type: must be "text", "json_object" or "json_schema"');
    expect(() => chat({ type: 'json_schema', json_schema: { name: 'x', schema: 'nope' } })).toThrow('response_format.json_schema.schema: expected a JSON Schema object');
    expect(() => parseResponsesRequest({ model: 'm', input: 'hi', text: { format: { type: 'json_schema', name: '', schema: SCHEMA } } })).toThrow(/text\.format\.name/);
  });
});

const ANSWER = '{"answer":"42"}';
const TEXT_SCRIPTS: Record<UpstreamFormatName, unknown[]> = {
  'openai-chat': [chatChunk({ content: ANSWER }), chatChunk({ finish: 'stop' }), '[DONE]'],
  'openai-responses': [
    { type: 'response.created', response: { id: 'r', model: 'x' } },
    { type: 'response.output_item.added', output_index: 0, item: { type: 'message', id: 'msg', role: 'assistant', content: [] } },
    { type: 'response.output_text.delta', output_index: 0, item_id: 'msg', content_index: 0, delta: ANSWER },
    { type: 'response.output_item.done', output_index: 0, item: { type: 'message', id: 'msg', role: 'assistant', content: [{ type: 'output_text', text: ANSWER }] } },
    { type: 'response.completed', response: { usage: { input_tokens: 1, output_tokens: 1 } } },
  ],
  anthropic: [
    { type: 'message_start', message: { id: 'm1', type: 'message', role: 'assistant', model: 'x', content: [], usage: { input_tokens: 3, output_tokens: 0 } } },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: ANSWER } },
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 5 } },
    { type: 'message_stop' },
  ],
  gemini: [{ candidates: [{ content: { role: 'model', parts: [{ text: ANSWER }] }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2 } }],
};

/** Where each backend API carries the format. */
const SENT: Record<UpstreamFormatName, (b: Record<string, unknown>) => unknown> = {
  'openai-chat': (b) => b.response_format,
  'openai-responses': (b) => (b.text as { format: unknown }).format,
  anthropic: (b) => b.output_config,
  gemini: (b) => {
    const g = b.generationConfig as Record<string, unknown>;
    return { responseMimeType: g.responseMimeType, responseJsonSchema: g.responseJsonSchema };
  },
};
const EXPECTED: Record<UpstreamFormatName, unknown> = {
  'openai-chat': { type: 'json_schema', json_schema: { name: 'codex_output_schema', schema: SCHEMA, strict: true } },
  'openai-responses': CODEX_FORMAT,
  anthropic: { format: { type: 'json_schema', schema: SCHEMA } },
  gemini: { responseMimeType: 'application/json', responseJsonSchema: SCHEMA },
};

describe.each(['openai-chat', 'openai-responses', 'anthropic', 'gemini'] as UpstreamFormatName[])('through the gateway to a %s backend', (format) => {
  let r: Rig | undefined;
  afterEach(async () => {
    await r?.close();
    r = undefined;
  });

  test('Codex’s output schema (openai SDK responses.create) reaches the backend in its own field', async () => {
    r = await rig({ script: TEXT_SCRIPTS[format].map((data) => ({ t: 0, data })) }, { upstreamFormat: format, upstreamApiKey: 'k' });
    const res = await openaiClient(r.gw.url).responses.create({ model: 'm', input: 'the answer?', text: { format: CODEX_FORMAT as never } });
    expect(res.output_text).toBe(ANSWER);
    expect(SENT[format](r.up.requests[0]!.body as Record<string, unknown>)).toEqual(EXPECTED[format]);
  });

  test('json_object from a Chat client: the backend’s JSON mode, or a 400 for Anthropic (backend not called)', async () => {
    r = await rig({ script: TEXT_SCRIPTS[format].map((data) => ({ t: 0, data })) }, { upstreamFormat: format, upstreamApiKey: 'k' });
    const res = await rawRequest(r.gw.url, { path: '/v1/chat/completions', body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }], response_format: { type: 'json_object' } }) });
    if (format === 'anthropic') {
      expect(res.status).toBe(400);
      expect((res.json as { error: { message: string } }).error.message).toContain('json_object output: the upstream (Anthropic) constrains output only by a JSON Schema');
      expect(r.up.requests.length).toBe(0);
      return;
    }
    expect(res.status).toBe(200);
    const body = r.up.requests[0]!.body as Record<string, unknown>;
    if (format === 'gemini') expect((body.generationConfig as Record<string, unknown>).responseMimeType).toBe('application/json');
    else expect(SENT[format](body)).toEqual({ type: 'json_object' });
  });
});
