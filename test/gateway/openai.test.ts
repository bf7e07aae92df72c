/**
 * /v1/chat/completions and /v1/responses with the real openai SDK against the gateway over a
 * scripted upstream: each call is delivered whole at its completion (before the upstream
 * finishes), in model order, with usage, error mapping and non-streaming bodies.
 */
import type OpenAI from 'openai';
import { loadTextAdapterFactory } from '../../src/gateway/server';
import { chatChunk, Gate, type ScriptLine } from '../../src/gateway/scripted';
import { openaiClient, READ_FILE_CHAT_TOOL, READ_FILE_RESPONSES_TOOL, rawRequest, rig, type Rig } from './helpers';

/** Text, call 0 in fragments, call 1 opens (call 0 is then complete), gate, call 1 finishes. */
function twoCalls(): ScriptLine[] {
  return [
    { t: 0, data: chatChunk({ reasoning: 'thinking it over' }) },
    { t: 0, data: chatChunk({ content: 'Reading two files.' }) },
    { t: 1, data: chatChunk({ tool: { index: 0, id: 'call_up_a', name: 'read_file', args: '{"path":' } }) },
    { t: 2, data: chatChunk({ tool: { index: 0, args: ' "/a"}' } }) },
    { t: 3, data: chatChunk({ tool: { index: 1, id: 'call_up_b', name: 'read_file', args: '{"pa' } }) },
    { t: 3, gate: true },
    { t: 4, data: chatChunk({ tool: { index: 1, args: 'th": "/b"}' } }) },
    { t: 5, data: chatChunk({ finish: 'tool_calls' }) },
    { t: 5, data: chatChunk({ usage: { prompt_tokens: 42, completion_tokens: 17, cached_tokens: 2 } }) },
    { t: 5, data: '[DONE]' },
  ];
}

const USER = [{ role: 'user' as const, content: 'read /a and /b' }];

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

describe('/v1/chat/completions with the openai SDK', () => {
  test('streaming: each call arrives whole at its completion, before the upstream ends; usage last', async () => {
    const gate = new Gate();
    r = await rig({ script: twoCalls(), gate });
    const client = openaiClient(r.gw.url);
    const stream = await client.chat.completions.create({
      model: 'client-model',
      messages: USER,
      tools: [READ_FILE_CHAT_TOOL],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    let gateAtFirstCall: boolean | undefined;
    for await (const ch of stream) {
      chunks.push(ch);
      const tc = ch.choices[0]?.delta.tool_calls;
      if (tc && tc[0]!.index === 0) {
        gateAtFirstCall = gate.released;
        gate.release();
      }
    }
    expect(gateAtFirstCall).toBe(false);
    const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    // One chunk per call with the whole arguments; fresh ids, never the backend's.
    expect(calls.map((c) => [c.index, c.function?.name, JSON.parse(c.function!.arguments!)])).toEqual([
      [0, 'read_file', { path: '/a' }],
      [1, 'read_file', { path: '/b' }],
    ]);
    expect(calls.every((c) => /^call_/.test(c.id!) && !c.id!.includes('up_'))).toBe(true);
    expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe('Reading two files.');
    const reasoning = chunks.map((c) => (c.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content ?? '').join('');
    expect(reasoning).toBe('thinking it over');
    const finish = chunks.find((c) => c.choices[0]?.finish_reason);
    expect(finish?.choices[0]!.finish_reason).toBe('tool_calls');
    const last = chunks[chunks.length - 1]!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ prompt_tokens: 42, completion_tokens: 17, total_tokens: 59, prompt_tokens_details: { cached_tokens: 2 } });
    expect(chunks.every((c) => c.model === 'client-model' && c.id === chunks[0]!.id)).toBe(true);
  });

  test('without include_usage there is no usage chunk; the upstream request is canonical chat', async () => {
    r = await rig({ script: twoCalls(), gate: (() => { const g = new Gate(); g.release(); return g; })() });
    const client = openaiClient(r.gw.url);
    const stream = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'system', content: 'be brief' }, ...USER],
      tools: [READ_FILE_CHAT_TOOL],
      tool_choice: 'required',
      parallel_tool_calls: false,
      max_completion_tokens: 99,
      stop: ['END'],
      reasoning_effort: 'low',
      stream: true,
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const ch of stream) chunks.push(ch);
    expect(chunks.some((c) => c.usage)).toBe(false);
    // parallel_tool_calls: false → at most one call is released.
    expect(chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []).length).toBe(1);
    const body = r.up.requests[0]!.body as Record<string, unknown>;
    expect(body).toMatchObject({
      model: 'm',
      messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'read /a and /b' }],
      tool_choice: 'required',
      parallel_tool_calls: false,
      max_tokens: 99,
      stop: ['END'],
      reasoning_effort: 'low',
      stream: true,
    });
  });

  test('non-streaming: one chat.completion with tool_calls, usage and finish_reason', async () => {
    const gate = new Gate();
    gate.release();
    r = await rig({ script: twoCalls(), gate });
    const res = await openaiClient(r.gw.url).chat.completions.create({ model: 'm', messages: USER, tools: [READ_FILE_CHAT_TOOL] });
    expect(res.object).toBe('chat.completion');
    const msg = res.choices[0]!.message;
    expect(msg.content).toBe('Reading two files.');
    expect(msg.tool_calls?.map((c) => (c.type === 'function' ? [c.function.name, JSON.parse(c.function.arguments)] : []))).toEqual([
      ['read_file', { path: '/a' }],
      ['read_file', { path: '/b' }],
    ]);
    expect(res.choices[0]!.finish_reason).toBe('tool_calls');
    expect(res.usage).toMatchObject({ prompt_tokens: 42, completion_tokens: 17 });
  });

  test('a tool round trip in the history reaches the upstream as chat tool messages', async () => {
    r = await rig({ script: [{ t: 0, data: chatChunk({ content: 'done' }) }, { t: 0, data: chatChunk({ finish: 'stop' }) }, { t: 0, data: '[DONE]' }] });
    const res = await openaiClient(r.gw.url).chat.completions.create({
      model: 'm',
      tools: [READ_FILE_CHAT_TOOL],
      messages: [
        ...USER,
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"path":"/a"}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'AAA' },
      ],
    });
    expect(res.choices[0]!.message.content).toBe('done');
    expect((r.up.requests[0]!.body as { messages: unknown[] }).messages).toEqual([
      { role: 'user', content: 'read /a and /b' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"path":"/a"}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'AAA' },
    ]);
  });

  test('errors: a bad request is a 400 in OpenAI shape; an upstream 429 stays a 429; a mid-stream error raises in the SDK', async () => {
    r = await rig({
      script: (req) =>
        req.n === 0
          ? { status: 429, body: { error: { message: 'slow down' } }, headers: { 'retry-after': '3' } }
          : [{ t: 0, data: chatChunk({ content: 'par' }) }, { t: 0, error: { type: 'server_error', message: 'backend fell over' } }],
    });
    const client = openaiClient(r.gw.url);
    const bad = await rawRequest(r.gw.url, { path: '/v1/chat/completions', body: JSON.stringify({ model: 'm', messages: [], n: 1 }) });
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ error: { type: 'invalid_request_error', message: expect.stringContaining('messages') } });
    const n2 = await rawRequest(r.gw.url, { path: '/v1/chat/completions', body: JSON.stringify({ model: 'm', messages: USER, n: 2 }) });
    expect(n2.status).toBe(400);
    expect(JSON.stringify(n2.json)).toContain('n = 1');
    await expect(client.chat.completions.create({ model: 'm', messages: USER })).rejects.toMatchObject({ status: 429 });
    const stream = await client.chat.completions.create({ model: 'm', messages: USER, stream: true });
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const ch of stream) seen.push(ch.choices[0]?.delta.content ?? '');
      })(),
    ).rejects.toThrow(/backend fell over/);
    expect(seen.join('')).toBe('par');
  });

  const factory = loadTextAdapterFactory();
  (factory ? test : test.skip)('--parser hermes: a Chat client of a raw-text backend gets structured tool_calls', async () => {
    const script: ScriptLine[] = [
      { t: 0, data: chatChunk({ content: 'Reading.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "/a"}}\n</tool_call>' }) },
      { t: 1, data: chatChunk({ finish: 'stop' }) },
      { t: 1, data: '[DONE]' },
    ];
    r = await rig({ script }, { format: 'text:hermes', textAdapter: factory! });
    const res = await openaiClient(r.gw.url).chat.completions.create({ model: 'm', messages: USER, tools: [READ_FILE_CHAT_TOOL] });
    const msg = res.choices[0]!.message;
    expect(msg.content).not.toContain('tool_call');
    expect(msg.tool_calls?.map((c) => (c.type === 'function' ? [c.function.name, JSON.parse(c.function.arguments)] : []))).toEqual([['read_file', { path: '/a' }]]);
    expect(res.choices[0]!.finish_reason).toBe('tool_calls');
  });
});

describe('/v1/responses with the openai SDK', () => {
  test('streaming: one function_call item per call, output_item.done at its completion, in model order', async () => {
    const gate = new Gate();
    r = await rig({ script: twoCalls(), gate });
    const client = openaiClient(r.gw.url);
    // responses.stream() accumulates the events and checks their consistency.
    const stream = client.responses.stream({ model: 'client-model', input: 'read /a and /b', tools: [READ_FILE_RESPONSES_TOOL] });
    const types: string[] = [];
    let gateAtFirstCall: boolean | undefined;
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === 'response.output_item.done' && ev.item.type === 'function_call' && gateAtFirstCall === undefined) {
        gateAtFirstCall = gate.released;
        gate.release();
      }
    }
    expect(gateAtFirstCall).toBe(false);
    const final = await stream.finalResponse();
    expect(final.status).toBe('completed');
    expect(final.model).toBe('client-model');
    expect(final.output.map((i) => i.type)).toEqual(['reasoning', 'message', 'function_call', 'function_call']);
    const calls = final.output.flatMap((i) => (i.type === 'function_call' ? [[i.name, JSON.parse(i.arguments)]] : []));
    expect(calls).toEqual([
      ['read_file', { path: '/a' }],
      ['read_file', { path: '/b' }],
    ]);
    expect(final.output_text).toBe('Reading two files.');
    expect(final.usage).toMatchObject({ input_tokens: 42, output_tokens: 17, input_tokens_details: { cached_tokens: 2 } });
    expect(types[0]).toBe('response.created');
    expect(types[types.length - 1]).toBe('response.completed');
  });

  test('non-streaming: a Response object; instructions, tools and history map to the upstream', async () => {
    const gate = new Gate();
    gate.release();
    r = await rig({ script: twoCalls(), gate });
    const res = await openaiClient(r.gw.url).responses.create({
      model: 'm',
      instructions: 'be brief',
      input: [
        { role: 'user', content: 'read /a and /b' },
        { type: 'function_call', call_id: 'c0', name: 'read_file', arguments: '{"path":"/z"}' },
        { type: 'function_call_output', call_id: 'c0', output: 'ZZZ' },
      ],
      tools: [READ_FILE_RESPONSES_TOOL],
      max_output_tokens: 77,
    });
    expect(res.object).toBe('response');
    expect(res.output.filter((i) => i.type === 'function_call').length).toBe(2);
    expect(res.output_text).toBe('Reading two files.');
    const body = r.up.requests[0]!.body as { messages: unknown[]; max_tokens: number };
    expect(body.max_tokens).toBe(77);
    expect(body.messages).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'read /a and /b' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c0', type: 'function', function: { name: 'read_file', arguments: '{"path":"/z"}' } }] },
      { role: 'tool', tool_call_id: 'c0', content: 'ZZZ' },
    ]);
  });

  test('a mid-stream upstream error becomes response.failed; a stateful request is a clear 400', async () => {
    r = await rig({ script: [{ t: 0, data: chatChunk({ content: 'par' }) }, { t: 0, error: { type: 'overloaded_error', message: 'busy' } }] });
    const client = openaiClient(r.gw.url);
    const stream = await client.responses.create({ model: 'm', input: 'hi', stream: true });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const ev of stream) events.push(ev);
    const last = events[events.length - 1]!;
    expect(events.map((e) => e.type).slice(-2)).toEqual(['error', 'response.failed']);
    expect(last.type).toBe('response.failed');
    if (last.type === 'response.failed') {
      expect(last.response.status).toBe('failed');
      expect(last.response.error).toMatchObject({ code: 'overloaded_error', message: 'busy' });
    }
    await expect(client.responses.create({ model: 'm', input: 'hi', previous_response_id: 'resp_1' })).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('no conversation state'),
    });
    await expect(
      client.responses.create({ model: 'm', input: 'hi', tools: [{ type: 'computer_use', name: 'x' } as never] }),
    ).rejects.toMatchObject({ status: 400, message: expect.stringContaining('computer_use') });
  });

  test('hosted tools (web_search) are left out upstream and named in a header and a warn log; namespaces are flattened', async () => {
    r = await rig({ script: [{ t: 0, data: chatChunk({ content: 'ok' }) }, { t: 0, data: chatChunk({ finish: 'stop' }) }, { t: 0, data: '[DONE]' }] });
    const res = await rawRequest(r.gw.url, {
      path: '/v1/responses',
      body: JSON.stringify({
        model: 'm',
        input: 'hi',
        tools: [READ_FILE_RESPONSES_TOOL, { type: 'web_search', external_web_access: false }, { type: 'namespace', name: 'multi_agent_v1', tools: [{ ...READ_FILE_RESPONSES_TOOL, name: 'wait' }] }],
      }),
    });
    expect(res.status).toBe(200);
    expect(res.headers['x-sluice-dropped-tools']).toBe('web_search');
    expect((r.up.requests[0]!.body as { tools: { function: { name: string } }[] }).tools.map((t) => t.function.name)).toEqual(['read_file', 'multi_agent_v1__wait']);
    expect(r.logs.some((l) => l.msg === 'tools_dropped' && l.level === 'warn')).toBe(true);
  });
});
