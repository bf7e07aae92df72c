/**
 * Codex's namespace tools, client tool search and freeform custom tools through /v1/responses:
 * flattened into uniquely named function tools for the backend, and each call written back the
 * way Codex reads it (`function_call {name, namespace}`, `tool_search_call {execution: "client",
 * arguments}`, `custom_tool_call {name, input}`).
 * Shapes from Codex's public source (codex-rs: tools/src/responses_api.rs `ResponsesApiNamespace`,
 * tools/src/tool_spec.rs `ToolSpec::ToolSearch`, core/src/tools/router.rs `build_tool_call`,
 * protocol/src/tool_name.rs `canonical_flat_name`) and a request captured from Codex 0.171.
 */
import { ResponsesSseEncoder } from '../../src/encode/responsesSse';
import { chatChunk } from '../../src/gateway/scripted';
import { parseResponsesRequest } from '../../src/gateway/inbound/responses';
import { ClientToolNames, clientToolLookup } from '../../src/gateway/inbound/responsesTools';
import { rawRequest, rig, type Rig, sseFrames } from './helpers';

const fn = (name: string, props: Record<string, unknown> = { key: { type: 'string' } }) => ({
  type: 'function',
  name,
  description: `${name} does things`,
  strict: false,
  parameters: { type: 'object', properties: props, required: Object.keys(props) },
});
const WORDBOOK = { type: 'namespace', name: 'mcp__wordbook', description: 'Tools in the mcp__wordbook namespace.', tools: [fn('lookup_word')] };
const AGENTS = { type: 'namespace', name: 'multi_agent_v1', description: 'Tools for spawning and managing sub-agents.', tools: [fn('close_agent', { target: { type: 'string' } }), fn('send_input')] };
const TOOL_SEARCH = {
  type: 'tool_search',
  execution: 'client',
  description: '# Tool discovery',
  parameters: { type: 'object', properties: { query: { type: 'string' }, limit: { type: 'number' } }, required: ['query'], additionalProperties: false },
};

describe('flattening (parse)', () => {
  test('namespace members become <namespace>__<name> function tools; hosted tools are still dropped', () => {
    const req = parseResponsesRequest({ model: 'm', input: 'hi', tools: [fn('exec_command'), AGENTS, WORDBOOK, TOOL_SEARCH, { type: 'web_search', external_web_access: false }] });
    expect(req.tools?.map((t) => t.name)).toEqual(['exec_command', 'multi_agent_v1__close_agent', 'multi_agent_v1__send_input', 'mcp__wordbook__lookup_word', 'tool_search']);
    expect(req.tools?.[3]).toEqual({ name: 'mcp__wordbook__lookup_word', description: 'lookup_word does things', input_schema: fn('lookup_word').parameters });
    expect(req.tools?.[4]).toMatchObject({ name: 'tool_search', description: '# Tool discovery', input_schema: TOOL_SEARCH.parameters });
    expect(req.droppedTools).toEqual(['web_search']);
    expect(clientToolLookup(req.clientTools)?.('mcp__wordbook__lookup_word')).toEqual({ kind: 'namespace', namespace: 'mcp__wordbook', name: 'lookup_word' });
    expect(clientToolLookup(req.clientTools)?.('tool_search')).toEqual({ kind: 'tool_search' });
    expect(clientToolLookup(req.clientTools)?.('exec_command')).toBeUndefined();
  });

  test('names are unique against plain tools and each other, and at most 64 characters', () => {
    const names = new ClientToolNames();
    names.reserve('a__b');
    expect(names.member('a', 'b')).toBe('a__b_2');
    expect(names.member('a_', '_b')).toBe('a__b_3'); // Codex trims underscores at the seam
    expect(names.member('a', 'b')).toBe('a__b_2'); // stable within a request
    const long = names.member('mcp__' + 'x'.repeat(50), 'y'.repeat(30));
    expect(long.length).toBe(64);
    expect(long).toMatch(/^mcp__x+_[0-9a-f]{8}$/);
    expect(names.member('mcp__' + 'x'.repeat(50), 'y'.repeat(30))).toBe(long);
  });

  test('no namespaces: no client mapping, nothing changes for plain function tools', () => {
    const req = parseResponsesRequest({ model: 'm', input: 'hi', tools: [fn('exec_command')] });
    expect(req.clientTools).toBeUndefined();
    expect(req.tools?.map((t) => t.name)).toEqual(['exec_command']);
  });

  test('history: namespaced calls, tool_search_call and tool_search_output (whose tools join the list)', () => {
    const req = parseResponsesRequest({
      model: 'm',
      tools: [fn('exec_command'), TOOL_SEARCH],
      input: [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'look up the secret' }] },
        { type: 'tool_search_call', call_id: 'ts_1', execution: 'client', status: 'completed', arguments: { query: 'word book', limit: 8 } },
        { type: 'tool_search_output', call_id: 'ts_1', execution: 'client', status: 'completed', tools: [{ ...WORDBOOK, tools: [{ ...fn('lookup_word'), defer_loading: true }] }] },
        { type: 'function_call', call_id: 'c_1', name: 'lookup_word', namespace: 'mcp__wordbook', arguments: '{"key":"secret"}' },
        { type: 'function_call_output', call_id: 'c_1', output: 'the word for secret is albatross' },
      ],
    });
    expect(req.tools?.map((t) => t.name)).toEqual(['exec_command', 'tool_search', 'mcp__wordbook__lookup_word']);
    expect(req.tools?.[2]?.input_schema).not.toHaveProperty('defer_loading');
    expect(req.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'look up the secret' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'ts_1', name: 'tool_search', input: { query: 'word book', limit: 8 } }] },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'ts_1', text: JSON.stringify({ loaded_tools: [{ name: 'mcp__wordbook__lookup_word', description: 'lookup_word does things' }] }), images: [], is_error: false }],
      },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'c_1', name: 'mcp__wordbook__lookup_word', input: { key: 'secret' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c_1', text: 'the word for secret is albatross', images: [], is_error: false }] },
    ]);
  });

  test('a server-side tool_search is dropped like other hosted tools; malformed groups are 400s', () => {
    expect(parseResponsesRequest({ model: 'm', input: 'hi', tools: [{ ...TOOL_SEARCH, execution: 'server' }] }).droppedTools).toEqual(['tool_search']);
    expect(() => parseResponsesRequest({ model: 'm', input: 'hi', tools: [{ type: 'namespace', name: 'x' }] })).toThrow(/tools\[0\]\.tools: expected an array/);
    expect(() => parseResponsesRequest({ model: 'm', input: 'hi', tools: [{ type: 'namespace', tools: [] }] })).toThrow(/tools\[0\]\.name/);
  });
});

describe('freeform custom tools (Codex apply_patch)', () => {
  const APPLY_PATCH = { type: 'custom', name: 'apply_patch', description: 'Edit files.', format: { type: 'grammar', syntax: 'lark', definition: 'start: begin_patch hunk+ end_patch' } };

  test('offered as a function with one string parameter (grammar in the description); history maps to it', () => {
    const req = parseResponsesRequest({
      model: 'm',
      tools: [fn('exec_command'), APPLY_PATCH],
      input: [
        { type: 'message', role: 'user', content: 'fix it' },
        { type: 'custom_tool_call', call_id: 'p1', name: 'apply_patch', input: '*** Begin Patch\n*** End Patch\n', status: 'completed' },
        { type: 'custom_tool_call_output', call_id: 'p1', output: 'Done!' },
      ],
    });
    const tool = req.tools!.find((t) => t.name === 'apply_patch')!;
    expect(tool.input_schema).toEqual({ type: 'object', properties: { input: { type: 'string', description: 'The raw input text.' } }, required: ['input'] });
    expect(tool.description).toContain('Edit files.');
    expect(tool.description).toContain('lark grammar:\nstart: begin_patch hunk+ end_patch');
    expect(clientToolLookup(req.clientTools)?.('apply_patch')).toEqual({ kind: 'custom', name: 'apply_patch' });
    expect(req.messages.slice(1)).toEqual([
      { role: 'assistant', content: [{ type: 'tool_use', id: 'p1', name: 'apply_patch', input: { input: '*** Begin Patch\n*** End Patch\n' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'p1', text: 'Done!', images: [], is_error: false }] },
    ]);
  });

  test('the backend’s call goes back as custom_tool_call with the raw input', () => {
    const names = new ClientToolNames();
    const flat = names.custom('apply_patch');
    const enc = new ResponsesSseEncoder({ model: 'm', clientTool: (n) => names.ref(n) });
    const text = enc.push({ type: 'tool_use', index: 0, backendId: 'b', name: flat, input: { input: '*** Begin Patch\n' }, argsText: '{"input":"*** Begin Patch\\n"}', repaired: false });
    const done = sseFrames(text).find((f) => f.event === 'response.output_item.done')!.data as { item: Record<string, unknown> };
    expect(done.item).toMatchObject({ type: 'custom_tool_call', name: 'apply_patch', input: '*** Begin Patch\n', status: 'completed' });
  });
});

describe('server-side tool search (OpenAI runs it; no backend here can)', () => {
  test('{type: "tool_search"} without execution is the server one: left out, named, its deferred tools offered directly', () => {
    const deferred = { ...WORDBOOK, tools: [{ ...fn('lookup_word'), defer_loading: true }] };
    const req = parseResponsesRequest({ model: 'm', input: 'hi', tools: [{ type: 'tool_search' }, { ...fn('get_weather'), defer_loading: true }, deferred] });
    expect(req.droppedTools).toEqual(['tool_search']);
    expect(req.tools?.map((t) => t.name)).toEqual(['get_weather', 'mcp__wordbook__lookup_word']);
    expect(clientToolLookup(req.clientTools)?.('tool_search')).toBeUndefined();
  });

  test('history of a search OpenAI ran: the items are left out, the tools they loaded are offered', () => {
    const req = parseResponsesRequest({
      model: 'm',
      tools: [{ type: 'tool_search', execution: 'server' }],
      input: [
        { type: 'message', role: 'user', content: 'look it up' },
        { type: 'tool_search_call', id: 'ts_1', call_id: null, execution: 'server', status: 'completed', arguments: { paths: ['mcp__wordbook'] } },
        { type: 'tool_search_output', id: 'tso_1', call_id: null, execution: 'server', status: 'completed', tools: [WORDBOOK] },
        { type: 'function_call', call_id: 'c_1', name: 'lookup_word', namespace: 'mcp__wordbook', arguments: '{"key":"secret"}' },
        { type: 'function_call_output', call_id: 'c_1', output: 'albatross' },
      ],
    });
    expect(req.tools?.map((t) => t.name)).toEqual(['mcp__wordbook__lookup_word']);
    expect(req.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'look it up' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'c_1', name: 'mcp__wordbook__lookup_word', input: { key: 'secret' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c_1', text: 'albatross', images: [], is_error: false }] },
    ]);
  });
});

describe('history: top-level tools that come back namespaced', () => {
  test('namespace "functions" (Codex’s default) or equal to the name (OpenAI’s tool search) names the plain tool', () => {
    const APPLY = { type: 'custom', name: 'apply_patch', format: { type: 'grammar', syntax: 'lark', definition: 'start: x' } };
    const req = parseResponsesRequest({
      model: 'm',
      tools: [fn('exec_command'), fn('get_shipping_eta'), APPLY, WORDBOOK],
      input: [
        { type: 'message', role: 'user', content: 'go' },
        { type: 'function_call', call_id: 'a', name: 'exec_command', namespace: 'functions', arguments: '{}' },
        { type: 'function_call', call_id: 'b', name: 'get_shipping_eta', namespace: 'get_shipping_eta', arguments: '{}' },
        { type: 'custom_tool_call', call_id: 'c', name: 'apply_patch', namespace: 'functions', input: 'x' },
        { type: 'function_call', call_id: 'd', name: 'lookup_word', namespace: 'mcp__wordbook', arguments: '{}' },
      ],
    });
    expect((req.messages[1] as { content: { name: string }[] }).content.map((b) => b.name)).toEqual(['exec_command', 'get_shipping_eta', 'apply_patch', 'mcp__wordbook__lookup_word']);
    expect(req.tools?.map((t) => t.name)).toEqual(['exec_command', 'get_shipping_eta', 'apply_patch', 'mcp__wordbook__lookup_word']);
  });
});

describe('custom tools inside a namespace (NamespaceTool.tools: function | custom)', () => {
  const PATCH = { type: 'custom', name: 'patch', description: 'Edit files.', format: { type: 'grammar', syntax: 'lark', definition: 'start: x' } };

  test('flattened like functions; Codex’s default namespace "functions" keeps bare names; history and tool_choice map', () => {
    const req = parseResponsesRequest({
      model: 'm',
      tools: [
        { type: 'namespace', name: 'functions', description: 'top-level tools', tools: [fn('exec_command'), { ...PATCH, name: 'apply_patch' }] },
        { type: 'namespace', name: 'editor', description: 'editing', tools: [PATCH, fn('undo')] },
      ],
      tool_choice: { type: 'custom', namespace: 'editor', name: 'patch' },
      input: [
        { type: 'message', role: 'user', content: 'fix it' },
        { type: 'custom_tool_call', call_id: 'p1', name: 'patch', namespace: 'editor', input: '*** Begin Patch\n' },
        { type: 'custom_tool_call_output', call_id: 'p1', output: 'Done!' },
      ],
    });
    expect(req.tools?.map((t) => t.name)).toEqual(['exec_command', 'apply_patch', 'editor__undo', 'editor__patch']);
    expect(req.tools?.[3]?.input_schema).toEqual({ type: 'object', properties: { input: { type: 'string', description: 'The raw input text.' } }, required: ['input'] });
    expect(clientToolLookup(req.clientTools)?.('apply_patch')).toEqual({ kind: 'custom', name: 'apply_patch', namespace: 'functions' });
    expect(clientToolLookup(req.clientTools)?.('editor__patch')).toEqual({ kind: 'custom', name: 'patch', namespace: 'editor' });
    expect(clientToolLookup(req.clientTools)?.('exec_command')).toEqual({ kind: 'namespace', name: 'exec_command', namespace: 'functions' });
    expect(req.tool_choice).toEqual({ type: 'tool', name: 'editor__patch' });
    expect(req.messages[1]).toEqual({ role: 'assistant', content: [{ type: 'tool_use', id: 'p1', name: 'editor__patch', input: { input: '*** Begin Patch\n' } }] });
  });

  test('the backend’s call goes back as custom_tool_call {name, namespace, input} (through the gateway)', async () => {
    const script = [
      { t: 0, data: chatChunk({ tool: { index: 0, id: 'up_1', name: 'editor__patch', args: JSON.stringify({ input: '*** Begin Patch\n*** End Patch\n' }) } }) },
      { t: 1, data: chatChunk({ finish: 'tool_calls' }) },
      { t: 1, data: '[DONE]' },
    ];
    const r = await rig({ script });
    try {
      const body = { model: 'm', input: 'edit', tools: [{ type: 'namespace', name: 'editor', description: 'editing', tools: [PATCH] }], stream: false };
      const res = await rawRequest(r.gw.url, { path: '/v1/responses', body: JSON.stringify(body) });
      expect((res.json as { output: unknown[] }).output).toEqual([
        expect.objectContaining({ type: 'custom_tool_call', name: 'patch', namespace: 'editor', input: '*** Begin Patch\n*** End Patch\n', status: 'completed' }),
      ]);
      expect((r.up.requests[0]!.body as { tools: { function: { name: string } }[] }).tools.map((t) => t.function.name)).toEqual(['editor__patch']);
    } finally {
      await r.close();
    }
  });
});

describe('mapping back (encode)', () => {
  const names = new ClientToolNames();
  const flat = names.member('mcp__wordbook', 'lookup_word');
  const search = names.toolSearch();
  const enc = new ResponsesSseEncoder({ model: 'm', created: 1, clientTool: (n) => names.ref(n) });
  const frames = sseFrames(
    enc.start() +
      enc.push({ type: 'tool_use', index: 0, backendId: 'b0', name: flat, input: { key: 'secret' }, argsText: '{"key":"secret"}', repaired: false }) +
      enc.push({ type: 'tool_use', index: 1, backendId: 'b1', name: search, input: { query: 'calendar' }, argsText: '{"query":"calendar"}', repaired: false }) +
      enc.push({ type: 'tool_use', index: 2, backendId: 'b2', name: 'exec_command', input: { cmd: 'ls' }, argsText: '{"cmd":"ls"}', repaired: false }) +
      enc.push({ type: 'end', released: 3 }),
  );
  const done = frames.filter((f) => f.event === 'response.output_item.done').map((f) => (f.data as { item: Record<string, unknown> }).item);

  test('a namespace member’s call: function_call with the member name and its namespace', () => {
    expect(done[0]).toMatchObject({ type: 'function_call', name: 'lookup_word', namespace: 'mcp__wordbook', arguments: '{"key":"secret"}', status: 'completed' });
  });
  test('a tool search: tool_search_call, client execution, arguments as an object', () => {
    expect(done[1]).toMatchObject({ type: 'tool_search_call', execution: 'client', arguments: { query: 'calendar' }, status: 'completed' });
    expect(typeof done[1]!.call_id).toBe('string');
  });
  test('a plain function: unchanged, no namespace field', () => {
    expect(done[2]).toMatchObject({ type: 'function_call', name: 'exec_command' });
    expect(done[2]).not.toHaveProperty('namespace');
    const completed = frames.find((f) => f.event === 'response.completed')!.data as { response: { output: unknown[] } };
    expect(completed.response.output).toEqual(done);
  });
});

describe('through the gateway (scripted chat backend)', () => {
  let r: Rig | undefined;
  afterEach(async () => {
    await r?.close();
    r = undefined;
  });

  test('the backend sees flat function tools; the client gets the namespaced call (stream and body)', async () => {
    const script = [
      { t: 0, data: chatChunk({ tool: { index: 0, id: 'up_1', name: 'mcp__wordbook__lookup_word', args: '{"key":"secret"}' } }) },
      { t: 1, data: chatChunk({ finish: 'tool_calls' }) },
      { t: 1, data: '[DONE]' },
    ];
    r = await rig({ script });
    const body = { model: 'm', input: 'look it up', tools: [fn('exec_command'), WORDBOOK, AGENTS], stream: true };
    const res = await rawRequest(r.gw.url, { path: '/v1/responses', body: JSON.stringify(body) });
    expect(res.status).toBe(200);
    expect(res.headers['x-sluice-dropped-tools']).toBeUndefined();
    const sent = r.up.requests[0]!.body as { tools: { function: { name: string } }[] };
    expect(sent.tools.map((t) => t.function.name)).toEqual(['exec_command', 'mcp__wordbook__lookup_word', 'multi_agent_v1__close_agent', 'multi_agent_v1__send_input']);
    const item = sseFrames(res.text).find((f) => f.event === 'response.output_item.done')!.data as { item: Record<string, unknown> };
    expect(item.item).toMatchObject({ type: 'function_call', name: 'lookup_word', namespace: 'mcp__wordbook', arguments: '{"key":"secret"}' });

    const whole = await rawRequest(r.gw.url, { path: '/v1/responses', body: JSON.stringify({ ...body, stream: false }) });
    expect((whole.json as { output: unknown[] }).output).toEqual([expect.objectContaining({ type: 'function_call', name: 'lookup_word', namespace: 'mcp__wordbook' })]);
  });
});
