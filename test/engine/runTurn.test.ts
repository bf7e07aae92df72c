/**
 * runTurn, the embedded turn controller (SPEC §6), on real tools and a real-time scripted model
 * stream: the cases of the qwen-code streaming-dispatch RFC (research/client_anchors.md §2.1)
 * and the bad-input cases of the execution issue.
 */
import { z } from 'zod';
import { runTurn, type RunTurnOptions } from '../../src/engine/runTurn';
import { defineTool } from '../../src/execute/tools';
import type { HistoryMessage } from '../../src/history/types';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Chunk = { delay: number; data: unknown };

/** OpenAI-chat chunks for a sequence of calls, each fully written before the next. */
function chatTurn(calls: Array<{ name: string; args: Record<string, unknown> }>, opts: { gap?: number; tail?: number } = {}): Chunk[] {
  const gap = opts.gap ?? 5;
  const base = { id: 'x', object: 'chat.completion.chunk', created: 0, model: 'm' };
  const chunk = (delta: unknown, finish_reason: string | null = null) => ({ ...base, choices: [{ index: 0, delta, finish_reason }] });
  const out: Chunk[] = [{ delay: 0, data: chunk({ role: 'assistant', content: 'Working on it.' }) }];
  calls.forEach((c, i) => {
    out.push({ delay: gap, data: chunk({ tool_calls: [{ index: i, id: `call_${i}`, type: 'function', function: { name: c.name, arguments: '' } }] }) });
    const json = JSON.stringify(c.args);
    const mid = Math.floor(json.length / 2);
    out.push({ delay: gap, data: chunk({ tool_calls: [{ index: i, function: { arguments: json.slice(0, mid) } }] }) });
    out.push({ delay: gap, data: chunk({ tool_calls: [{ index: i, function: { arguments: json.slice(mid) } }] }) });
  });
  out.push({ delay: opts.tail ?? 60, data: chunk({}, 'tool_calls') });
  out.push({ delay: 0, data: '[DONE]' });
  return out;
}

async function* play(chunks: Chunk[], failAt?: { index: number; error: Error }) {
  for (let i = 0; i < chunks.length; i++) {
    if (failAt && i === failAt.index) throw failAt.error;
    await sleep(chunks[i]!.delay);
    yield chunks[i]!.data;
  }
}

interface Log {
  events: string[];
  starts: string[];
  aborted: string[];
}

function makeTools(log: Log, ms = 30) {
  const read = defineTool({
    name: 'read_file',
    kind: 'read',
    input: z.object({ path: z.string() }),
    run: async ({ path }, { signal }) => {
      log.starts.push(`read:${path}`);
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(resolve, ms);
        signal.addEventListener('abort', () => {
          clearTimeout(t);
          log.aborted.push(`read:${path}`);
          reject(new Error('aborted'));
        });
      });
      return `contents of ${path}`;
    },
  });
  const edit = defineTool({
    name: 'edit_file',
    kind: 'edit',
    input: z.object({ path: z.string(), text: z.string() }),
    run: async ({ path }) => {
      log.starts.push(`edit:${path}`);
      await sleep(5);
      return `edited ${path}`;
    },
  });
  const shell = defineTool({
    name: 'bash',
    kind: 'execute',
    input: z.object({ command: z.string() }),
    run: async ({ command }) => {
      log.starts.push(`bash:${command}`);
      return 'ok';
    },
  });
  const deploy = defineTool({
    name: 'deploy',
    kind: 'execute',
    needsApproval: true,
    input: z.object({ target: z.string() }),
    run: async ({ target }) => {
      log.starts.push(`deploy:${target}`);
      return 'deployed';
    },
  });
  const structured = defineTool({
    name: 'structured_output',
    kind: 'other',
    input: z.object({ answer: z.string() }),
    run: async ({ answer }) => answer,
  });
  return [read, edit, shell, deploy, structured];
}

function newLog(): Log {
  return { events: [], starts: [], aborted: [] };
}

function observe(log: Log): RunTurnOptions['on'] {
  return {
    'tool.start': (c) => log.events.push(`start:${c.index}`),
    'tool.result': (c) => log.events.push(`result:${c.index}`),
    trace: (t) => {
      if (t.kind === 'stream.end') log.events.push('stream.end');
    },
  };
}

function results(messages: HistoryMessage[]) {
  const tool = messages.find((m) => m.role === 'tool');
  return tool && tool.role === 'tool' ? tool.results : [];
}

/** I1–I3 on the returned messages: one result per call, in call order. */
function expectValid(messages: HistoryMessage[]) {
  const assistant = messages[0];
  if (!assistant || assistant.role !== 'assistant') throw new Error('no assistant message');
  const ids = assistant.calls.map((c) => c.id);
  expect(results(messages).map((r) => r.callId)).toEqual(ids);
}

describe('runTurn (qwen-code RFC cases)', () => {
  test('safe tools start while the model is still streaming', async () => {
    const log = newLog();
    const { messages } = await runTurn({
      format: 'openai-chat',
      stream: play(chatTurn([{ name: 'read_file', args: { path: 'a' } }, { name: 'read_file', args: { path: 'b' } }])),
      tools: makeTools(log),
      on: observe(log),
    });
    expect(log.events.indexOf('start:0')).toBeLessThan(log.events.indexOf('stream.end'));
    expect(log.events.indexOf('start:1')).toBeLessThan(log.events.indexOf('stream.end'));
    expect(results(messages).map((r) => r.content)).toEqual(['contents of a', 'contents of b']);
    expectValid(messages);
  });

  test('unsafe tools wait for the end of the stream and preserve order', async () => {
    const log = newLog();
    const { messages } = await runTurn({
      format: 'openai-chat',
      stream: play(
        chatTurn([
          { name: 'edit_file', args: { path: 'x', text: '1' } },
          { name: 'read_file', args: { path: 'after-edit' } },
          { name: 'edit_file', args: { path: 'y', text: '2' } },
        ]),
      ),
      tools: makeTools(log, 5),
      on: observe(log),
    });
    const end = log.events.indexOf('stream.end');
    expect(log.events.indexOf('start:0')).toBeGreaterThan(end);
    // the read after the first edit waits for the edit's result; the second edit waits for the read
    expect(log.events.indexOf('start:1')).toBeGreaterThan(log.events.indexOf('result:0'));
    expect(log.events.indexOf('start:2')).toBeGreaterThan(log.events.indexOf('result:1'));
    expect(log.starts).toEqual(['edit:x', 'read:after-edit', 'edit:y']);
    expectValid(messages);
  });

  test('a read-only shell command is safe and starts early; a writing one waits', async () => {
    const log = newLog();
    await runTurn({
      format: 'openai-chat',
      stream: play(chatTurn([{ name: 'bash', args: { command: 'ls -la src' } }, { name: 'bash', args: { command: 'rm -rf build' } }])),
      tools: makeTools(log),
      on: observe(log),
    });
    const end = log.events.indexOf('stream.end');
    expect(log.events.indexOf('start:0')).toBeLessThan(end);
    expect(log.events.indexOf('start:1')).toBeGreaterThan(end);
  });

  test('stream retry after an early tool start: the tool is aborted and nothing of attempt 1 reaches history', async () => {
    const log = newLog();
    const attempt1 = chatTurn([{ name: 'read_file', args: { path: 'first' } }, { name: 'read_file', args: { path: 'second' } }]);
    const attempt2 = chatTurn([{ name: 'read_file', args: { path: 'retry' } }]);
    const { messages, summary } = await runTurn({
      format: 'openai-chat',
      stream: (n) => (n === 1 ? play(attempt1, { index: 5, error: Object.assign(new Error('socket hang up'), { status: 503 }) }) : play(attempt2)),
      tools: makeTools(log, 50),
      policy: { retryBaseMs: 5 },
      on: observe(log),
    });
    expect(summary.attempts).toBe(2);
    expect(log.aborted).toContain('read:first');
    const assistant = messages[0]!;
    expect(assistant.role === 'assistant' && assistant.calls.map((c) => c.input)).toEqual([{ path: 'retry' }]);
    expect(results(messages).map((r) => r.content)).toEqual(['contents of retry']);
    expectValid(messages);
  });

  test('a non-retryable error fails the turn and leaves no messages', async () => {
    const log = newLog();
    const { messages, summary } = await runTurn({
      format: 'openai-chat',
      stream: play(chatTurn([{ name: 'read_file', args: { path: 'a' } }]), { index: 3, error: Object.assign(new Error('bad request'), { status: 400 }) }),
      tools: makeTools(log),
    });
    expect(summary.outcome).toBe('failed');
    expect(messages).toEqual([]);
  });

  test.each(['commit', 'drop'] as const)('user abort while an early tool runs (onAbort %s)', async (onAbort) => {
    const log = newLog();
    const ac = new AbortController();
    const run = runTurn({
      format: 'openai-chat',
      stream: play(chatTurn([{ name: 'read_file', args: { path: 'slow' } }], { tail: 200 })),
      tools: makeTools(log, 1000),
      policy: { onAbort },
      signal: ac.signal,
      on: { 'tool.start': () => setTimeout(() => ac.abort(), 5) },
    });
    const { messages, summary } = await run;
    expect(log.aborted).toEqual(['read:slow']);
    if (onAbort === 'drop') {
      expect(summary.outcome).toBe('dropped');
      expect(messages).toEqual([]);
    } else {
      expect(summary.outcome).toBe('aborted');
      expect(results(messages)).toEqual([expect.objectContaining({ ok: false, synthetic: 'interrupted' })]);
      expectValid(messages);
    }
  });

  test('structured output suppresses its siblings', async () => {
    const log = newLog();
    const { messages } = await runTurn({
      format: 'openai-chat',
      stream: play(chatTurn([{ name: 'edit_file', args: { path: 'x', text: '1' } }, { name: 'structured_output', args: { answer: '42' } }])),
      tools: makeTools(log),
    });
    expect(log.starts).toEqual([]);
    expect(results(messages).map((r) => [r.synthetic ?? 'real', r.content])).toEqual([
      ['suppressed', expect.any(String)],
      ['real', '42'],
    ]);
  });

  test('headless: a call that needs approval is denied and never runs', async () => {
    const log = newLog();
    const { messages } = await runTurn({
      format: 'openai-chat',
      stream: play(chatTurn([{ name: 'deploy', args: { target: 'prod' } }])),
      tools: makeTools(log),
    });
    expect(log.starts).toEqual([]);
    expect(results(messages)[0]).toMatchObject({ ok: false, synthetic: 'denied' });
  });

  test('interactive: approval is asked mid-stream and the call runs only after it', async () => {
    const log = newLog();
    const asked: string[] = [];
    const { messages } = await runTurn({
      format: 'openai-chat',
      stream: play(chatTurn([{ name: 'deploy', args: { target: 'staging' } }], { tail: 50 })),
      tools: makeTools(log),
      policy: { earlyStart: 'all' },
      approve: async (call) => {
        asked.push(call.name);
        log.events.push('approval');
        await sleep(10);
        return true;
      },
      on: observe(log),
    });
    expect(asked).toEqual(['deploy']);
    expect(log.events.indexOf('approval')).toBeLessThan(log.events.indexOf('stream.end'));
    expect(log.events.indexOf('start:0')).toBeGreaterThan(log.events.indexOf('approval'));
    expect(results(messages)[0]).toMatchObject({ ok: true, content: 'deployed' });
  });
});

describe('runTurn bad input: every call still gets exactly one result', () => {
  test('unknown tool, schema-invalid input, a throwing tool, a hanging tool, a throwing approver', async () => {
    const log = newLog();
    const boom = defineTool({
      name: 'boom',
      kind: 'read',
      input: z.object({}),
      run: () => {
        throw new Error('kaboom');
      },
    });
    const hang = defineTool({
      name: 'hang',
      kind: 'read',
      input: z.object({}),
      timeoutMs: 30,
      run: () => new Promise<string>(() => undefined),
    });
    const { messages } = await runTurn({
      format: 'openai-chat',
      stream: play(
        chatTurn([
          { name: 'nope', args: {} },
          { name: 'read_file', args: { wrong: 1 } },
          { name: 'boom', args: {} },
          { name: 'hang', args: {} },
          { name: 'deploy', args: { target: 'x' } },
        ]),
      ),
      tools: [...makeTools(log), boom, hang],
      approve: () => {
        throw new Error('approver crashed');
      },
    });
    expect(results(messages).map((r) => [r.ok, r.synthetic ?? null])).toEqual([
      [false, 'unknown_tool'],
      [false, 'invalid_input'],
      [false, null],
      [false, 'timeout'],
      [false, 'denied'],
    ]);
    expect(results(messages)[2]!.content).toBe('kaboom');
    expectValid(messages);
  });

  test('SLUICE_STREAMING_DISPATCH=0 holds safe tools until the stream ends', async () => {
    const log = newLog();
    process.env.SLUICE_STREAMING_DISPATCH = '0';
    try {
      await runTurn({
        format: 'openai-chat',
        stream: play(chatTurn([{ name: 'read_file', args: { path: 'a' } }])),
        tools: makeTools(log),
        on: observe(log),
      });
    } finally {
      delete process.env.SLUICE_STREAMING_DISPATCH;
    }
    expect(log.events.indexOf('start:0')).toBeGreaterThan(log.events.indexOf('stream.end'));
  });

  test('idle watchdog: a silent stream is retried', async () => {
    const log = newLog();
    async function* silent() {
      yield chatTurn([])[0]!.data;
      await sleep(500);
    }
    const { summary, messages } = await runTurn({
      format: 'openai-chat',
      stream: (n) => (n === 1 ? silent() : play(chatTurn([{ name: 'read_file', args: { path: 'b' } }]))),
      tools: makeTools(log),
      policy: { idleTimeoutMs: 120, retryBaseMs: 1 },
    });
    expect(summary.attempts).toBe(2);
    expect(results(messages).map((r) => r.content)).toEqual(['contents of b']);
  });
});

describe('history details', () => {
  test('the thinking signature is kept for the assistant message (Anthropic needs it back)', async () => {
    const log = newLog();
    const start = { type: 'message_start', message: { id: 'm', type: 'message', role: 'assistant', model: 'x', content: [], usage: { input_tokens: 1, output_tokens: 1 } } };
    const events = [
      start,
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Let me read it.' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig-123' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: {} } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"path":"a"}' } },
      { type: 'content_block_stop', index: 1 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 5 } },
      { type: 'message_stop' },
    ];
    const { messages } = await runTurn({ format: 'anthropic', stream: events, tools: makeTools(log, 1) });
    expect(messages[0]).toMatchObject({ role: 'assistant', thinking: 'Let me read it.', thinkingSignature: 'sig-123' });
    expectValid(messages);
  });
});

// ---------------------------------------------------------------------------------------------
// Embedding API (issue 10): explicit options beat the environment, classify, duplicate ids,
// stream inputs.

import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { checkHistory } from '../../src/history/check';

/** OpenAI-chat chunks for calls with the ids given (the model may repeat one). */
function chatTurnWithIds(calls: Array<{ id: string; name: string; args: Record<string, unknown> }>): Chunk[] {
  const base = { id: 'x', object: 'chat.completion.chunk', created: 0, model: 'm' };
  const chunk = (delta: unknown, finish_reason: string | null = null) => ({ ...base, choices: [{ index: 0, delta, finish_reason }] });
  const out: Chunk[] = [];
  calls.forEach((c, i) => {
    out.push({ delay: 2, data: chunk({ tool_calls: [{ index: i, id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.args) } }] }) });
  });
  out.push({ delay: 20, data: chunk({}, 'tool_calls') });
  out.push({ delay: 0, data: '[DONE]' });
  return out;
}

function callIds(messages: HistoryMessage[]): string[] {
  const a = messages[0];
  return a && a.role === 'assistant' ? a.calls.map((c) => c.id) : [];
}

describe('runTurn embedding options', () => {
  const saved = process.env.SLUICE_STREAMING_DISPATCH;
  afterEach(() => {
    if (saved === undefined) delete process.env.SLUICE_STREAMING_DISPATCH;
    else process.env.SLUICE_STREAMING_DISPATCH = saved;
  });

  test.each(['safe', 'all'] as const)("an explicit policy.earlyStart '%s' wins over SLUICE_STREAMING_DISPATCH=0", async (earlyStart) => {
    process.env.SLUICE_STREAMING_DISPATCH = '0';
    const log = newLog();
    await runTurn({
      format: 'openai-chat',
      stream: play(chatTurn([{ name: 'read_file', args: { path: 'a' } }])),
      tools: makeTools(log),
      policy: { earlyStart },
      on: observe(log),
    });
    expect(log.events.indexOf('start:0')).toBeLessThan(log.events.indexOf('stream.end'));
  });

  test("the environment still changes the default, and an explicit 'none' holds even without it", async () => {
    process.env.SLUICE_STREAMING_DISPATCH = '0';
    const envLog = newLog();
    await runTurn({ format: 'openai-chat', stream: play(chatTurn([{ name: 'read_file', args: { path: 'a' } }])), tools: makeTools(envLog), on: observe(envLog) });
    expect(envLog.events.indexOf('start:0')).toBeGreaterThan(envLog.events.indexOf('stream.end'));
    delete process.env.SLUICE_STREAMING_DISPATCH;
    const noneLog = newLog();
    await runTurn({
      format: 'openai-chat',
      stream: play(chatTurn([{ name: 'read_file', args: { path: 'a' } }])),
      tools: makeTools(noneLog),
      policy: { earlyStart: 'none' },
      on: observe(noneLog),
    });
    expect(noneLog.events.indexOf('start:0')).toBeGreaterThan(noneLog.events.indexOf('stream.end'));
  });

  test('classify passes through runTurn with the default classification to adjust', async () => {
    const log = newLog();
    const seen: Array<{ name: string; safe: boolean }> = [];
    await runTurn({
      format: 'openai-chat',
      stream: play(chatTurn([{ name: 'read_file', args: { path: 'secret/key' } }, { name: 'read_file', args: { path: 'ok' } }])),
      tools: makeTools(log),
      classify: (name, input, defaults) => {
        seen.push({ name, safe: defaults.safe });
        return String(input.path).startsWith('secret/') ? { ...defaults, safe: false } : defaults;
      },
      on: observe(log),
    });
    expect(seen).toEqual([
      { name: 'read_file', safe: true },
      { name: 'read_file', safe: true },
    ]);
    const end = log.events.indexOf('stream.end');
    expect(log.events.indexOf('start:0')).toBeGreaterThan(end); // judged unsafe by the embedder
    expect(log.events.indexOf('start:1')).toBeGreaterThan(log.events.indexOf('result:0')); // waits behind the unsafe call
  });

  test('a throwing classify fails closed: unsafe and needs approval (denied without an approver)', async () => {
    const log = newLog();
    const { messages } = await runTurn({
      format: 'openai-chat',
      stream: play(chatTurn([{ name: 'read_file', args: { path: 'a' } }])),
      tools: makeTools(log),
      classify: () => {
        throw new Error('classifier bug');
      },
    });
    expect(log.starts).toEqual([]);
    expect(results(messages)).toMatchObject([{ ok: false, synthetic: 'denied' }]);
  });
});

describe('duplicate call ids', () => {
  test('two calls with id call_dup in one turn: distinct ids, each run once, valid history, a warning', async () => {
    const log = newLog();
    const runs: string[] = [];
    const { messages, summary } = await runTurn({
      format: 'openai-chat',
      stream: play(
        chatTurnWithIds([
          { id: 'call_dup', name: 'read_file', args: { path: 'a' } },
          { id: 'call_dup', name: 'read_file', args: { path: 'b' } },
        ]),
      ),
      tools: makeTools(log, 5),
      on: { 'tool.start': (c) => runs.push(c.id!) },
    });
    expect(callIds(messages)).toEqual(['call_dup', 'call_dup_2']);
    expect(runs).toEqual(['call_dup', 'call_dup_2']);
    expect(log.starts).toEqual(['read:a', 'read:b']);
    expect(results(messages).map((r) => [r.callId, r.content])).toEqual([
      ['call_dup', 'contents of a'],
      ['call_dup_2', 'contents of b'],
    ]);
    expect(checkHistory(messages)).toMatchObject({ ok: true, violations: [] });
    expect(summary.warnings).toContainEqual({
      code: 'duplicate_call_id',
      index: 1,
      message: 'call 1: id call_dup is already used by an earlier call of this turn; renamed to call_dup_2',
    });
  });

  test('an id repeated from the given history (functions.x:0 every turn) gets the next free suffix', async () => {
    const log = newLog();
    const history: HistoryMessage[] = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: '', calls: [{ id: 'functions.read_file:0', name: 'read_file', input: { path: 'old' } }] },
      { role: 'tool', results: [{ callId: 'functions.read_file:0', name: 'read_file', ok: true, content: 'x' }] },
    ];
    const turn = chatTurnWithIds([
      { id: 'functions.read_file:0', name: 'read_file', args: { path: 'new' } },
      { id: 'functions.read_file:1', name: 'read_file', args: { path: 'new2' } },
    ]);
    const { messages, summary } = await runTurn({ format: 'openai-chat', stream: play(turn), tools: makeTools(log, 1), history, knownCallIds: ['functions.read_file:0_2'] });
    expect(callIds(messages)).toEqual(['functions.read_file:0_3', 'functions.read_file:1']);
    expect(summary.warnings.map((w) => w.message)).toEqual([
      'call 0: id functions.read_file:0 is already used in the conversation history; renamed to functions.read_file:0_3',
    ]);
    expect(checkHistory([...history, ...messages])).toMatchObject({ ok: true, warnings: [] });
  });

  test('a retried attempt may reuse the ids of the discarded one', async () => {
    const log = newLog();
    const turn = chatTurnWithIds([{ id: 'call_a', name: 'read_file', args: { path: 'a' } }]);
    const { messages, summary } = await runTurn({
      format: 'openai-chat',
      stream: (n) => (n === 1 ? play(turn, { index: 1, error: Object.assign(new Error('overloaded'), { status: 529 }) }) : play(turn)),
      tools: makeTools(log, 1),
      policy: { retryBaseMs: 1 },
    });
    expect(summary.attempts).toBe(2);
    expect(callIds(messages)).toEqual(['call_a']);
    expect(summary.warnings.filter((w) => w.code === 'duplicate_call_id')).toEqual([]);
  });
});

describe('stream inputs', () => {
  const chunks = chatTurn([{ name: 'read_file', args: { path: 'a' } }], { gap: 0, tail: 0 }).map((c) => c.data);
  const sse = chunks.map((d) => `data: ${typeof d === 'string' ? d : JSON.stringify(d)}\n\n`);
  let server: http.Server;
  let url: string;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/fail') {
        res.writeHead(503).end('overloaded');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      let i = 0;
      const next = () => (i < sse.length ? (res.write(sse[i++]), setTimeout(next, 2)) : res.end());
      next();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const cases: Array<[string, () => RunTurnOptions['stream']]> = [
    ['an array of SDK objects', () => chunks],
    ['an async iterable of SDK objects', () => play(chatTurn([{ name: 'read_file', args: { path: 'a' } }], { gap: 0, tail: 0 }))],
    ['raw SSE strings', () => sse],
    ['a Node Readable of bytes', () => Readable.from(sse.map((s) => Buffer.from(s)))],
    ['a web ReadableStream', () => new Blob(sse).stream()],
    ['a fetch Response (real HTTP)', () => () => fetch(url)],
    ['a fetch Response body (real HTTP)', () => async () => (await fetch(url)).body!],
    ['a Promise of an array', () => Promise.resolve(chunks)],
  ];
  test.each(cases)('%s', async (_label, make) => {
    const log = newLog();
    const { messages, summary } = await runTurn({ format: 'openai-chat', stream: make(), tools: makeTools(log, 1) });
    expect(summary.outcome).toBe('done');
    expect(results(messages).map((r) => r.content)).toEqual(['contents of a']);
  });

  test('an HTTP error Response fails the attempt like an SDK error (retryable 503)', async () => {
    const { summary } = await runTurn({ format: 'openai-chat', stream: () => fetch(`${url}/fail`), tools: makeTools(newLog()), policy: { maxAttempts: 2, retryBaseMs: 1 } });
    expect(summary).toMatchObject({ outcome: 'failed', attempts: 2, error: { type: 'http_503' } });
  });

  test('an abort while a Promise source is still pending ends the turn (the source is not awaited)', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 20);
    const { summary, messages } = await runTurn({ format: 'openai-chat', stream: new Promise<never>(() => undefined), tools: makeTools(newLog()), signal: ac.signal });
    expect(summary.outcome).toBe('aborted');
    expect(messages).toEqual([{ role: 'assistant', content: '', calls: [] }]);
  });

  test('something that is no stream fails the turn with a one-line message', async () => {
    const { summary } = await runTurn({ format: 'openai-chat', stream: 42 as never, tools: makeTools(newLog()) });
    expect(summary.outcome).toBe('failed');
    expect(summary.attempts).toBe(1);
    expect(summary.error?.message).toBe(
      'runTurn: stream must be an async iterable (SDK stream, Node Readable), an iterable, a ReadableStream or a fetch Response, got number',
    );
  });
});
