/**
 * HTTP replay tests over real sockets: scripted OpenAI-compatible upstream → sluice gateway →
 * the real `@anthropic-ai/sdk` client. Cases from server_anchors.md §1.7 (HTTP replay tests).
 */
import { chatChunk, Gate, type ScriptLine, turnScript } from '../../src/gateway/scripted';
import { Collector, READ_FILE_TOOL, rig, type Rig, toolBlocks } from './helpers';

const USER = [{ role: 'user' as const, content: 'read the files' }];

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

describe('early release over HTTP', () => {
  test('the first tool_use block stops at the client while the upstream is held behind a gate', async () => {
    const gate = new Gate();
    const script: ScriptLine[] = [
      { t: 0, data: chatChunk({ content: '' }) },
      { t: 0, data: chatChunk({ tool: { index: 0, id: 'call_a', name: 'read_file', args: '' } }) },
      { t: 1, data: chatChunk({ tool: { index: 0, args: '{"path":' } }) },
      { t: 2, data: chatChunk({ tool: { index: 0, args: '"/a"}' } }) },
      { t: 3, gate: true },
      { t: 3, data: chatChunk({ tool: { index: 1, id: 'call_b', name: 'read_file', args: '{"path":"/b"}' } }) },
      { t: 4, data: chatChunk({ finish: 'tool_calls' }) },
      { t: 4, data: chatChunk({ usage: { prompt_tokens: 40, completion_tokens: 22 } }) },
      { t: 4, data: '[DONE]' },
    ];
    r = await rig({ script, gate });
    const stream = await r.client.messages.create({ model: 'claude-x', max_tokens: 64, messages: USER, tools: [READ_FILE_TOOL], stream: true });
    const c = new Collector(stream);
    await c.until((e) => e.type === 'content_block_stop' && e.index === 0);
    // The upstream is parked at the gate: call 1, the finish and [DONE] have not been written.
    expect(gate.isReached).toBe(true);
    expect(gate.released).toBe(false);
    expect(r.up.requests[0]!.writes.map((w) => w.line)).toEqual([0, 1, 2, 3]);
    expect(c.types()).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop']);
    const first = toolBlocks(c.events);
    expect(first).toHaveLength(1);
    expect(first[0]!.name).toBe('read_file');
    expect(JSON.parse(first[0]!.json)).toEqual({ path: '/a' });
    expect(first[0]!.id).toMatch(/^toolu_/);
    // Give the gateway a moment: nothing more may arrive while the gate is held.
    await new Promise((res) => setTimeout(res, 50));
    expect(c.events).toHaveLength(4);

    gate.release();
    await c.done;
    expect(c.error).toBeUndefined();
    const blocks = toolBlocks(c.events);
    expect(blocks.map((b) => [b.index, b.name, JSON.parse(b.json), b.stops])).toEqual([
      [0, 'read_file', { path: '/a' }, 1],
      [1, 'read_file', { path: '/b' }, 1],
    ]);
    expect(new Set(blocks.map((b) => b.id)).size).toBe(2);
    expect(c.types().filter((t) => t === 'content_block_start')).toHaveLength(2);
    expect(c.types().slice(-2)).toEqual(['message_delta', 'message_stop']);
    const md = c.events.find((e) => e.type === 'message_delta');
    expect(md?.type === 'message_delta' && md.delta.stop_reason).toBe('tool_use');
    expect(md?.type === 'message_delta' && md.usage.output_tokens).toBe(22);
  });

  test('dynamo completion record (in a chunk of its own) releases a call early under evidence-only', async () => {
    const gate = new Gate();
    const script: ScriptLine[] = [
      { t: 0, data: chatChunk({ tool: { index: 0, id: 'call_a', name: 'read_file', args: '{"path":"/a"}' } }) },
      { t: 1, data: chatChunk({ completion: [0] }) }, // completion-only chunk
      { t: 1, gate: true },
      { t: 2, data: chatChunk({ tool: { index: 1, id: 'call_b', name: 'read_file', args: '{"path":"/b"}' } }) },
      { t: 3, data: chatChunk({ finish: 'tool_calls' }) },
      { t: 3, data: '[DONE]' },
    ];
    r = await rig({ script, gate }, { format: 'dynamo', completion: 'evidence-only' });
    const stream = await r.client.messages.create({ model: 'm', max_tokens: 64, messages: USER, tools: [READ_FILE_TOOL], stream: true });
    const c = new Collector(stream);
    await c.until((e) => e.type === 'content_block_stop' && e.index === 0);
    expect(gate.released).toBe(false);
    gate.release();
    await c.done;
    expect(toolBlocks(c.events).map((b) => JSON.parse(b.json))).toEqual([{ path: '/a' }, { path: '/b' }]);
  });

  test('evidence-only without a record waits for the finish (the gate holds the block back)', async () => {
    const gate = new Gate();
    const script: ScriptLine[] = [
      { t: 0, data: chatChunk({ tool: { index: 0, id: 'call_a', name: 'read_file', args: '{"path":"/a"}' } }) },
      { t: 1, gate: true },
      { t: 2, data: chatChunk({ finish: 'tool_calls' }) },
      { t: 2, data: '[DONE]' },
    ];
    r = await rig({ script, gate }, { completion: 'evidence-only' });
    const stream = await r.client.messages.create({ model: 'm', max_tokens: 64, messages: USER, tools: [READ_FILE_TOOL], stream: true });
    const c = new Collector(stream);
    await gate.reached();
    await new Promise((res) => setTimeout(res, 50));
    expect(c.types()).toEqual(['message_start']);
    gate.release();
    await c.done;
    expect(toolBlocks(c.events)).toHaveLength(1);
  });
});

describe('reference HTTP replay cases (server_anchors §1.7)', () => {
  test('parallel_tools_preserve_identity_and_arguments', async () => {
    r = await rig({ script: turnScript({ calls: [{ id: 'call_read_a', name: 'read_file', args: ['{"path":"/a"}'] }, { id: 'call_read_b', name: 'read_file', args: ['{"path":"/b"}'] }] }) });
    const stream = await r.client.messages.create({ model: 'm', max_tokens: 64, messages: USER, tools: [READ_FILE_TOOL], stream: true });
    const c = new Collector(stream);
    await c.done;
    const blocks = toolBlocks(c.events); // throws on overlapping blocks / index gaps
    expect(blocks.map((b) => [b.index, b.name])).toEqual([
      [0, 'read_file'],
      [1, 'read_file'],
    ]);
    expect(blocks.every((b) => /^toolu_/.test(b.id))).toBe(true);
    expect(blocks[0]!.id).not.toBe(blocks[1]!.id);
    expect(blocks.map((b) => JSON.parse(b.json))).toEqual([{ path: '/a' }, { path: '/b' }]);
    const stops = c.events.flatMap((e) => (e.type === 'content_block_stop' ? [e.index] : []));
    expect(stops).toEqual([0, 1]);
    // Backend ids never leak.
    expect(JSON.stringify(c.events)).not.toContain('call_read_');
  });

  test('shared backend id: two blocks with distinct toolu_ ids', async () => {
    r = await rig({ script: turnScript({ calls: [{ id: 'same', name: 'read_file', args: ['{"path":"/a"}'] }, { id: 'same', name: 'read_file', args: ['{"path":"/b"}'] }] }) });
    const msg = await r.client.messages.create({ model: 'm', max_tokens: 64, messages: USER, tools: [READ_FILE_TOOL] });
    const ids = msg.content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : []));
    expect(ids).toHaveLength(2);
    expect(ids[0]).not.toBe(ids[1]);
  });

  // parallel-tools.sse with call 0's arguments split and its tail after call 1 (interleaved indices).
  const interleaved: ScriptLine[] = [
    { t: 0, data: chatChunk({ content: '' }) },
    { t: 0, data: chatChunk({ tool: { index: 0, id: 'call_read_a', name: 'read_file', args: '{"path":' } }) },
    { t: 0, data: chatChunk({ tool: { index: 1, id: 'call_read_b', name: 'read_file', args: '{"path":"/b"}' } }) },
    { t: 0, data: chatChunk({ tool: { index: 0, args: '"/a"}' } }) },
    { t: 0, data: chatChunk({ finish: 'tool_calls' }) },
    { t: 0, data: chatChunk({ usage: { prompt_tokens: 40, completion_tokens: 22 } }) },
    { t: 0, data: '[DONE]' },
  ];

  type Choice = { type: 'auto' | 'any' | 'tool'; disable?: boolean } | undefined;
  const choices: [string, Choice, number, boolean | undefined][] = [
    ['auto + disable_parallel', { type: 'auto', disable: true }, 1, false],
    ['any + disable_parallel', { type: 'any', disable: true }, 1, false],
    ['tool + disable_parallel', { type: 'tool', disable: true }, 1, false],
    ['auto, parallel allowed', { type: 'auto', disable: false }, 2, true],
    ['no tool_choice', undefined, 2, undefined],
  ];

  for (const stream of [true, false]) {
    test.each(choices)(`tool_choice_controls_parallel_calls (${stream ? 'stream' : 'unary'}): %s`, async (_n, choice, count, parallel) => {
      r = await rig({ script: interleaved });
      const tool_choice =
        choice === undefined
          ? undefined
          : choice.type === 'tool'
            ? { type: 'tool' as const, name: 'read_file', disable_parallel_tool_use: choice.disable }
            : { type: choice.type, disable_parallel_tool_use: choice.disable };
      const params = { model: 'm', max_tokens: 64, messages: USER, tools: [READ_FILE_TOOL], ...(tool_choice ? { tool_choice } : {}) };
      let blocks: { name: string; input: unknown }[];
      let stopReason: string | null;
      if (stream) {
        const c = new Collector(await r.client.messages.create({ ...params, stream: true }));
        await c.done;
        const tb = toolBlocks(c.events);
        expect(tb.every((b) => b.stops === 1)).toBe(true);
        blocks = tb.map((b) => ({ name: b.name, input: JSON.parse(b.json) }));
        const md = c.events.find((e) => e.type === 'message_delta');
        stopReason = md?.type === 'message_delta' ? md.delta.stop_reason : null;
      } else {
        const msg = await r.client.messages.create(params);
        blocks = msg.content.flatMap((b) => (b.type === 'tool_use' ? [{ name: b.name, input: b.input }] : []));
        stopReason = msg.stop_reason;
      }
      expect(blocks).toHaveLength(count);
      expect(blocks[0]).toEqual({ name: 'read_file', input: { path: '/a' } });
      if (count === 2) expect(blocks[1]).toEqual({ name: 'read_file', input: { path: '/b' } });
      expect(stopReason).toBe('tool_use');
      const body = r.up.requests[0]!.body as Record<string, unknown>;
      expect(body.parallel_tool_calls).toBe(parallel);
      const expectedChoice =
        choice === undefined ? undefined : choice.type === 'auto' ? 'auto' : choice.type === 'any' ? 'required' : { type: 'function', function: { name: 'read_file' } };
      expect(body.tool_choice).toEqual(expectedChoice);
    });
  }

  const nonObject = (bad: string, sibling: boolean): ScriptLine[] => [
    { t: 0, data: chatChunk({ tool: { index: 0, id: 'call_bad', name: 'read_file', args: bad } }) },
    ...(sibling ? [{ t: 0, data: chatChunk({ tool: { index: 1, id: 'call_ok', name: 'read_file', args: '{"path":"/b"}' } }) }] : []),
    { t: 0, data: chatChunk({ finish: 'tool_calls' }) },
    { t: 0, data: '[DONE]' },
  ];
  const cases: [string, boolean, boolean, boolean][] = [];
  for (const bad of ['[]', 'null']) for (const sibling of [true, false]) for (const stream of [true, false]) cases.push([bad, sibling, stream, false]);
  for (const bad of ['[]', 'null']) for (const stream of [true, false]) cases.push([bad, true, stream, true]);

  // The reference converter's drop rule: `malformedCalls: 'drop'` (the default passes the call with a marker; see malformed.test.ts).
  test.each(cases)('non_object_tool_inputs_are_suppressed_without_dropping_valid_siblings: args %s, sibling %s, stream %s, single %s', async (bad, sibling, stream, single) => {
    r = await rig({ script: nonObject(bad, sibling) }, { malformedCalls: 'drop' });
    const params = {
      model: 'm',
      max_tokens: 64,
      messages: USER,
      tools: [READ_FILE_TOOL],
      ...(single ? { tool_choice: { type: 'auto' as const, disable_parallel_tool_use: true } } : {}),
    };
    let inputs: unknown[];
    let stopReason: string | null;
    if (stream) {
      const c = new Collector(await r.client.messages.create({ ...params, stream: true }));
      await c.done;
      expect(c.events.some((e) => e.type === 'content_block_delta' && e.delta.type === 'input_json_delta' && e.delta.partial_json === bad)).toBe(false);
      inputs = toolBlocks(c.events).map((b) => JSON.parse(b.json));
      const md = c.events.find((e) => e.type === 'message_delta');
      stopReason = md?.type === 'message_delta' ? md.delta.stop_reason : null;
    } else {
      const msg = await r.client.messages.create(params);
      inputs = msg.content.flatMap((b) => (b.type === 'tool_use' ? [b.input] : []));
      stopReason = msg.stop_reason;
    }
    expect(inputs).toEqual(sibling ? [{ path: '/b' }] : []);
    expect(stopReason).toBe(sibling ? 'tool_use' : 'end_turn');
    // Never silent: the log says it at warn.
    expect(r.logs.some((l) => l.msg === 'malformed_call' && l.action === 'drop' && l.name === 'read_file')).toBe(true);
  });

  test('fragmented_tool_arguments_close_after_all_deltas and text baseline', async () => {
    r = await rig({
      script: turnScript({ text: ['I will ', 'list it.'], calls: [{ id: 'call_list_directory', name: 'list_directory', args: ['{"path"', ':"/tmp"}'] }], stepMs: 1 }),
    });
    const c = new Collector(
      await r.client.messages.create({ model: 'm', max_tokens: 64, messages: USER, tools: [{ ...READ_FILE_TOOL, name: 'list_directory' }], stream: true }),
    );
    await c.done;
    expect(c.types()).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const text = c.events.flatMap((e) => (e.type === 'content_block_delta' && e.delta.type === 'text_delta' ? [e.delta.text] : [])).join('');
    expect(text).toBe('I will list it.');
    const tb = toolBlocks(c.events);
    expect(tb.map((b) => [b.name, b.json, b.stops])).toEqual([['list_directory', '{"path":"/tmp"}', 1]]);
  });

  test('unary_text_baseline: the backend request streams with include_usage and carries max_tokens', async () => {
    r = await rig({ script: turnScript({ text: ['Hello', ' world'] }) });
    const msg = await r.client.messages.create({ model: 'claude-x', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
    expect(msg.content).toEqual([{ type: 'text', text: 'Hello world' }]);
    expect(msg.stop_reason).toBe('end_turn');
    expect(msg.model).toBe('claude-x');
    expect(msg.id).toMatch(/^msg_/);
    const body = r.up.requests[0]!.body as Record<string, unknown>;
    expect(body).toMatchObject({ model: 'claude-x', stream: true, stream_options: { include_usage: true }, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
  });

  test('tool_result_round_trip_reaches_the_chat_engine', async () => {
    const thinkingTool: ScriptLine[] = [
      { t: 0, data: chatChunk({ reasoning: 'I should inspect the directory.' }) },
      { t: 0, data: chatChunk({ content: 'I will list it.' }) },
      { t: 0, data: chatChunk({ tool: { index: 0, id: 'call_list_directory', name: 'list_directory', args: '{"path":"/tmp"}' } }) },
      { t: 0, data: chatChunk({ finish: 'tool_calls' }) },
      { t: 0, data: chatChunk({ usage: { prompt_tokens: 30, completion_tokens: 18 } }) },
      { t: 0, data: '[DONE]' },
    ];
    r = await rig({ script: (req) => (req.n === 0 ? thinkingTool : turnScript({ text: ['done'] })) });
    const tools = [{ ...READ_FILE_TOOL, name: 'list_directory' }];
    const first = await r.client.messages.create({ model: 'm', max_tokens: 64, messages: [{ role: 'user', content: 'list /tmp' }], tools });
    expect(first.content.map((b) => b.type)).toEqual(['thinking', 'text', 'tool_use']);
    const tu = first.content[2]!;
    if (tu.type !== 'tool_use') throw new Error('expected tool_use');
    expect(tu.id).toMatch(/^toolu_/);
    expect(tu.input).toEqual({ path: '/tmp' });
    expect(first.stop_reason).toBe('tool_use');

    const second = await r.client.messages.create({
      model: 'm',
      max_tokens: 64,
      tools,
      messages: [
        { role: 'user', content: 'list /tmp' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: tu.id, content: 'a.txt\nb.txt' }] },
      ],
    });
    expect(second.content).toEqual([{ type: 'text', text: 'done' }]);
    const msgs = (r.up.requests[1]!.body as { messages: Record<string, unknown>[] }).messages;
    expect(msgs).toEqual([
      { role: 'user', content: 'list /tmp' },
      {
        role: 'assistant',
        content: 'I will list it.',
        reasoning_content: 'I should inspect the directory.',
        tool_calls: [{ id: tu.id, type: 'function', function: { name: 'list_directory', arguments: '{"path":"/tmp"}' } }],
      },
      { role: 'tool', tool_call_id: tu.id, content: 'a.txt\nb.txt' },
    ]);
  });

  test('text after a tool call keeps its place; thinking closes before text', async () => {
    const script: ScriptLine[] = [
      { t: 0, data: chatChunk({ reasoning: 'think' }) },
      { t: 0, data: chatChunk({ content: 'before' }) },
      { t: 0, data: chatChunk({ tool: { index: 0, id: 'c0', name: 'read_file', args: '{"path":"/a"}' } }) },
      { t: 0, data: chatChunk({ content: 'between' }) },
      { t: 0, data: chatChunk({ tool: { index: 1, id: 'c1', name: 'read_file', args: '{"path":"/b"}' } }) },
      { t: 0, data: chatChunk({ finish: 'tool_calls' }) },
      { t: 0, data: '[DONE]' },
    ];
    r = await rig({ script });
    const c = new Collector(await r.client.messages.create({ model: 'm', max_tokens: 64, messages: USER, tools: [READ_FILE_TOOL], stream: true }));
    await c.done;
    toolBlocks(c.events);
    const kinds = c.events.flatMap((e) => (e.type === 'content_block_start' ? [e.content_block.type] : []));
    expect(kinds).toEqual(['thinking', 'text', 'tool_use', 'text', 'tool_use']);
  });

  test('count_tokens returns an estimate without calling the backend', async () => {
    r = await rig({ script: [] });
    const res = await r.client.messages.countTokens({ model: 'm', messages: [{ role: 'user', content: 'x'.repeat(57) }] });
    expect(res.input_tokens).toBe(19);
    expect(r.up.requests).toHaveLength(0);
  });

  test('model mapping and a fixed upstream key; the client key passes through otherwise', async () => {
    r = await rig({ script: () => turnScript({ text: ['ok'] }) }, { models: { rules: [{ pattern: 'claude-*-haiku*', target: 'small' }], fallback: 'big' }, upstreamApiKey: 'up-key' });
    await r.client.messages.create({ model: 'claude-3-5-haiku-latest', max_tokens: 8, messages: USER });
    await r.client.messages.create({ model: 'claude-sonnet-4', max_tokens: 8, messages: USER });
    expect(r.up.requests.map((q) => (q.body as { model: string }).model)).toEqual(['small', 'big']);
    expect(r.up.requests[0]!.headers.authorization).toBe('Bearer up-key');
    await r.close();
    r = await rig({ script: () => turnScript({ text: ['ok'] }) });
    await r.client.messages.create({ model: 'claude-sonnet-4', max_tokens: 8, messages: USER });
    expect(r.up.requests[0]!.headers.authorization).toBe('Bearer dummy-key');
    expect((r.up.requests[0]!.body as { model: string }).model).toBe('claude-sonnet-4');
  });
});
