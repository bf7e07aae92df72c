/**
 * Responses `tool_choice` naming a tool the gateway flattened (a Codex namespace member, a
 * freeform custom tool, the client tool search): it must reach every backend as the flat name the
 * backend was offered, and a choice that names no offered tool is a 400 that says which.
 *
 * Shapes: `{type: "function", name, namespace}` (the function_call item's own spelling, what
 * Responses proxies for Codex accept), `{type: "function", name: "<namespace>.<name>"}` (the OpenAI
 * Agents SDK's qualified name, openai-agents-js `findFunctionToolChoice`), `{type: "custom", name}`
 * (openai `ToolChoiceCustom`), `{type: "tool_search"}` (the Agents SDK's union). Codex 0.171 itself
 * always sends `tool_choice: "auto"` (captured request).
 */
import { parseChatRequest } from '../../src/gateway/inbound/chat';
import { parseResponsesRequest } from '../../src/gateway/inbound/responses';
import { chatChunk } from '../../src/gateway/scripted';
import type { UpstreamFormatName } from '../../src/gateway/upstream/types';
import { openaiClient, rawRequest, rig, type Rig } from './helpers';

const fn = (name: string) => ({ type: 'function', name, description: `${name} does things`, strict: false, parameters: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] } });
const WORDBOOK = { type: 'namespace', name: 'mcp__wordbook', description: 'Tools in the mcp__wordbook namespace.', tools: [fn('lookup_word'), fn('define')] };
const TOOL_SEARCH = { type: 'tool_search', execution: 'client', description: '# Tool discovery', parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } };
const APPLY_PATCH = { type: 'custom', name: 'apply_patch', description: 'Edit files.', format: { type: 'grammar', syntax: 'lark', definition: 'start: x' } };
const TOOLS = [fn('exec_command'), WORDBOOK, TOOL_SEARCH, APPLY_PATCH, { type: 'web_search' }];

const choose = (tool_choice: unknown, extra: Record<string, unknown> = {}) => parseResponsesRequest({ model: 'm', input: 'hi', tools: TOOLS, tool_choice, ...extra }).tool_choice;

describe('parse: the choice names the flat backend tool', () => {
  test('a namespace member by {namespace, name}, by "<namespace>.<name>", and by its flat name', () => {
    expect(choose({ type: 'function', namespace: 'mcp__wordbook', name: 'lookup_word' })).toEqual({ type: 'tool', name: 'mcp__wordbook__lookup_word' });
    expect(choose({ type: 'function', name: 'mcp__wordbook.define' })).toEqual({ type: 'tool', name: 'mcp__wordbook__define' });
    expect(choose({ type: 'function', name: 'mcp__wordbook__lookup_word' })).toEqual({ type: 'tool', name: 'mcp__wordbook__lookup_word' });
    expect(choose({ type: 'function', namespace: 'mcp__wordbook', name: 'lookup_word' }, { parallel_tool_calls: false })).toEqual({
      type: 'tool',
      name: 'mcp__wordbook__lookup_word',
      disable_parallel_tool_use: true,
    });
  });

  test('plain functions (both spellings), strings, custom tools and the client tool search', () => {
    expect(choose({ type: 'function', name: 'exec_command' })).toEqual({ type: 'tool', name: 'exec_command' });
    expect(choose({ type: 'function', function: { name: 'exec_command' } })).toEqual({ type: 'tool', name: 'exec_command' });
    expect(choose('required')).toEqual({ type: 'any' });
    expect(choose('none')).toEqual({ type: 'none' });
    expect(choose({ type: 'custom', name: 'apply_patch' })).toEqual({ type: 'tool', name: 'apply_patch' });
    expect(choose({ type: 'tool_search' })).toEqual({ type: 'tool', name: 'tool_search' });
  });

  test('a clash: the custom tool and the search get their unique flat names', () => {
    const req = parseResponsesRequest({ model: 'm', input: 'hi', tools: [fn('apply_patch'), fn('tool_search'), APPLY_PATCH, TOOL_SEARCH], tool_choice: { type: 'custom', name: 'apply_patch' } });
    expect(req.tools?.map((t) => t.name)).toEqual(['apply_patch', 'tool_search', 'apply_patch_2', 'tool_search_2']);
    expect(req.tool_choice).toEqual({ type: 'tool', name: 'apply_patch_2' });
    const search = parseResponsesRequest({ model: 'm', input: 'hi', tools: [fn('tool_search'), TOOL_SEARCH], tool_choice: { type: 'tool_search' } });
    expect(search.tool_choice).toEqual({ type: 'tool', name: 'tool_search_2' });
    const plain = parseResponsesRequest({ model: 'm', input: 'hi', tools: [fn('apply_patch'), APPLY_PATCH], tool_choice: { type: 'function', name: 'apply_patch' } });
    expect(plain.tool_choice).toEqual({ type: 'tool', name: 'apply_patch' });
  });

  test('a member loaded by tool_search_output can be chosen', () => {
    const req = parseResponsesRequest({
      model: 'm',
      tools: [TOOL_SEARCH],
      tool_choice: { type: 'function', namespace: 'mcp__wordbook', name: 'define' },
      input: [
        { type: 'message', role: 'user', content: 'define it' },
        { type: 'tool_search_call', call_id: 'ts', execution: 'client', arguments: { query: 'define' } },
        { type: 'tool_search_output', call_id: 'ts', execution: 'client', tools: [WORDBOOK] },
      ],
    });
    expect(req.tool_choice).toEqual({ type: 'tool', name: 'mcp__wordbook__define' });
  });

  test('a choice that names no offered tool is a 400 naming it', () => {
    const bad = (tc: unknown, tools: unknown[] = TOOLS) => () => parseResponsesRequest({ model: 'm', input: 'hi', tools, tool_choice: tc });
    expect(bad({ type: 'function', namespace: 'mcp__wordbook', name: 'nope' })).toThrow('tool_choice: no function "nope" in namespace "mcp__wordbook" in tools');
    expect(bad({ type: 'function', namespace: 'mcp__other', name: 'lookup_word' })).toThrow('no function "lookup_word" in namespace "mcp__other"');
    expect(bad({ type: 'function', name: 'mcp__other.lookup_word' })).toThrow('no function "lookup_word" in namespace "mcp__other"');
    expect(bad({ type: 'function', name: 'lookup_word' })).toThrow(/no tool named "lookup_word" in tools \(name a namespace member as/);
    expect(bad({ type: 'custom', name: 'nope' })).toThrow('tool_choice: no custom tool named "nope" in tools');
    expect(bad({ type: 'tool_search' }, [fn('exec_command')])).toThrow(/no client tool_search/);
    expect(bad({ type: 'tool_search' }, [{ ...TOOL_SEARCH, execution: 'server' }])).toThrow(/server-executed tool search, which this gateway leaves out/);
    expect(bad({ type: 'namespace', name: 'mcp__wordbook' })).toThrow(/a namespace cannot be forced as a whole/);
    expect(bad({ type: 'web_search' })).toThrow(/provider-hosted tool/);
    expect(bad({ type: 'mcp', server_label: 'x' })).toThrow(/provider-hosted tool/);
    expect(bad({ type: 'programmatic_tool_calling' })).toThrow(/tool_choice: must be "auto", "none", "required"/);
    // A custom tool known only from the history (not offered now) cannot be forced.
    expect(() =>
      parseResponsesRequest({
        model: 'm',
        tools: [fn('exec_command')],
        tool_choice: { type: 'custom', name: 'apply_patch' },
        input: [
          { type: 'message', role: 'user', content: 'x' },
          { type: 'custom_tool_call', call_id: 'p', name: 'apply_patch', input: 'x' },
          { type: 'custom_tool_call_output', call_id: 'p', output: 'ok' },
        ],
      }),
    ).toThrow('no custom tool named "apply_patch" in tools');
  });
});

describe('allowed_tools: only the allowed tools are sent, with auto / required', () => {
  test('Responses: entries name members, custom tools and plain functions; hosted entries are skipped', () => {
    const req = parseResponsesRequest({
      model: 'm',
      input: 'hi',
      tools: TOOLS,
      tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', namespace: 'mcp__wordbook', name: 'lookup_word' }, { type: 'custom', name: 'apply_patch' }, { type: 'web_search' }] },
    });
    expect(req.tools?.map((t) => t.name)).toEqual(['mcp__wordbook__lookup_word', 'apply_patch']);
    expect(req.tool_choice).toEqual({ type: 'any' });
    const auto = parseResponsesRequest({ model: 'm', input: 'hi', tools: TOOLS, tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'exec_command' }] }, parallel_tool_calls: false });
    expect(auto.tools?.map((t) => t.name)).toEqual(['exec_command']);
    expect(auto.tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true });
  });

  test('Chat: {type: allowed_tools, allowed_tools: {mode, tools}}', () => {
    const tool = (name: string) => ({ type: 'function', function: { name, parameters: { type: 'object', properties: {} } } });
    const req = parseChatRequest({
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      tools: [tool('a'), tool('b'), tool('c')],
      tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [{ type: 'function', function: { name: 'c' } }, { type: 'function', function: { name: 'a' } }] } },
    });
    expect(req.tools?.map((t) => t.name)).toEqual(['a', 'c']);
    expect(req.tool_choice).toEqual({ type: 'auto' });
    expect(() => parseChatRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], tools: [tool('a')], tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [{ type: 'function', function: { name: 'z' } }] } } })).toThrow(
      'tool_choice.allowed_tools.tools[0]: no tool named "z" in tools',
    );
  });

  test('400s: a bad mode, an entry naming no offered tool, required with nothing left', () => {
    const bad = (tc: unknown) => () => parseResponsesRequest({ model: 'm', input: 'hi', tools: TOOLS, tool_choice: tc });
    expect(bad({ type: 'allowed_tools', mode: 'any', tools: [] })).toThrow('tool_choice.mode: must be "auto" or "required"');
    expect(bad({ type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'nope' }] })).toThrow(/no tool named "nope"/);
    expect(bad({ type: 'allowed_tools', mode: 'required', tools: [{ type: 'web_search' }] })).toThrow('tool_choice.tools: mode "required" but none of the allowed tools is offered in tools');
  });

  test('through the gateway: the backend gets only the allowed tool and tool_choice "required"', async () => {
    const r = await rig({ script: CALL_SCRIPTS['openai-chat'].map((data) => ({ t: 0, data })) });
    try {
      const res = await rawRequest(r.gw.url, {
        path: '/v1/responses',
        body: JSON.stringify({ model: 'm', input: 'x', tools: [fn('exec_command'), WORDBOOK], tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'mcp__wordbook.lookup_word' }] } }),
      });
      expect(res.status).toBe(200);
      const sent = r.up.requests[0]!.body as { tools: { function: { name: string } }[]; tool_choice: unknown };
      expect(sent.tools.map((t) => t.function.name)).toEqual([FLAT]);
      expect(sent.tool_choice).toBe('required');
    } finally {
      await r.close();
    }
  });
});

/** One backend stream per format: a call of the flat name `mcp__wordbook__lookup_word`. */
const FLAT = 'mcp__wordbook__lookup_word';
const ARGS = '{"key":"secret"}';
const CALL_SCRIPTS: Record<UpstreamFormatName, unknown[]> = {
  'openai-chat': [chatChunk({ tool: { index: 0, id: 'up_1', name: FLAT, args: ARGS } }), chatChunk({ finish: 'tool_calls' }), '[DONE]'],
  'openai-responses': [
    { type: 'response.created', response: { id: 'r', model: 'x' } },
    { type: 'response.output_item.added', output_index: 0, item: { type: 'function_call', id: 'fc', call_id: 'c', name: FLAT, arguments: '' } },
    { type: 'response.function_call_arguments.delta', output_index: 0, item_id: 'fc', delta: ARGS },
    { type: 'response.function_call_arguments.done', output_index: 0, item_id: 'fc', arguments: ARGS },
    { type: 'response.output_item.done', output_index: 0, item: { type: 'function_call', id: 'fc', call_id: 'c', name: FLAT, arguments: ARGS } },
    { type: 'response.completed', response: { usage: { input_tokens: 1, output_tokens: 1 } } },
  ],
  anthropic: [
    { type: 'message_start', message: { id: 'm1', type: 'message', role: 'assistant', model: 'x', content: [], usage: { input_tokens: 3, output_tokens: 0 } } },
    { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: FLAT, input: {} } },
    { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: ARGS } },
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 5 } },
    { type: 'message_stop' },
  ],
  gemini: [{ candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: FLAT, args: { key: 'secret' } } }] }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2 } }],
};

/** Where each backend API puts the forced tool and the tool names. */
function forced(format: UpstreamFormatName, body: Record<string, unknown>): { choice: unknown; names: string[] } {
  const tools = body.tools as Record<string, unknown>[];
  switch (format) {
    case 'openai-chat':
      return { choice: body.tool_choice, names: tools.map((t) => (t.function as { name: string }).name) };
    case 'openai-responses':
    case 'anthropic':
      return { choice: body.tool_choice, names: tools.map((t) => t.name as string) };
    case 'gemini':
      return { choice: body.toolConfig, names: (tools[0]!.functionDeclarations as { name: string }[]).map((d) => d.name) };
  }
}

const EXPECTED_CHOICE: Record<UpstreamFormatName, unknown> = {
  'openai-chat': { type: 'function', function: { name: FLAT } },
  'openai-responses': { type: 'function', name: FLAT },
  anthropic: { type: 'tool', name: FLAT },
  gemini: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [FLAT] } },
};

describe.each(['openai-chat', 'openai-responses', 'anthropic', 'gemini'] as UpstreamFormatName[])('through the gateway to a %s backend (openai SDK client)', (format) => {
  let r: Rig | undefined;
  afterEach(async () => {
    await r?.close();
    r = undefined;
  });

  test('the forced namespace member arrives under its flat name and the call comes back namespaced', async () => {
    r = await rig({ script: CALL_SCRIPTS[format].map((data) => ({ t: 0, data })) }, { upstreamFormat: format, upstreamApiKey: 'k' });
    const openai = openaiClient(r.gw.url);
    const res = await openai.responses.create({
      model: 'm',
      input: 'look up secret',
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- `namespace` in a function tool_choice and namespace tools are not in every SDK type version
      tools: [fn('exec_command'), WORDBOOK] as any,
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
      tool_choice: { type: 'function', namespace: 'mcp__wordbook', name: 'lookup_word' } as any,
    });
    const sent = forced(format, r.up.requests[0]!.body as Record<string, unknown>);
    expect(sent.choice).toEqual(EXPECTED_CHOICE[format]);
    expect(sent.names).toContain(FLAT);
    expect(res.output).toEqual([expect.objectContaining({ type: 'function_call', name: 'lookup_word', namespace: 'mcp__wordbook', arguments: ARGS })]);
  });

  test('a choice naming no offered tool is a 400 in OpenAI’s error shape; the backend is not called', async () => {
    r = await rig({ script: CALL_SCRIPTS[format].map((data) => ({ t: 0, data })) }, { upstreamFormat: format, upstreamApiKey: 'k' });
    const res = await rawRequest(r.gw.url, {
      path: '/v1/responses',
      body: JSON.stringify({ model: 'm', input: 'x', tools: [WORDBOOK], tool_choice: { type: 'function', namespace: 'mcp__wordbook', name: 'nope' } }),
    });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: { message: 'tool_choice: no function "nope" in namespace "mcp__wordbook" in tools', type: 'invalid_request_error', param: null, code: 'invalid_request_error' } });
    expect(r.up.requests.length).toBe(0);
  });
});
