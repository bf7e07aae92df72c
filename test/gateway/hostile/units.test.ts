/** The small pieces of the gateway's hygiene, auth and validation, case by case. */
import { isLoopback, keyMatches, parseApiKeys, resolveAuth } from '../../../src/gateway/auth';
import { toAnthropicErrorType } from '../../../src/gateway/errors';
import { IdleTimer, sseProgress, StreamFence } from '../../../src/gateway/hygiene';
import { Drain } from '../../../src/gateway/shutdown';
import { NUMERIC_FLAGS, optionsFrom } from '../../../src/cli/serve';
import { MemoryBudget } from '../../../src/gateway/body';
import { validateCanonical } from '../../../src/gateway/validate';
import type { CanonicalRequest } from '../../../src/gateway/canonical';
import type { StreamEvent } from '../../../src/wire/events';

test('sseProgress: comments and blank lines are not progress; data (even mid-line) is', () => {
  expect(sseProgress(Buffer.from(': keep-alive\n\n'))).toBe(false);
  expect(sseProgress(Buffer.from('\n\r\n: x\n: y\n'))).toBe(false);
  expect(sseProgress(Buffer.from(': x\ndata: {}\n\n'))).toBe(true);
  expect(sseProgress(Buffer.from('abc"}\n\n'))).toBe(true);
});

test('StreamFence: nothing after the finish is released (one warning); usage, end and open calls\' completion pass', () => {
  const f = new StreamFence();
  const a = f.filter([{ type: 'call.identity', index: 0, id: 'a', name: 'x' }, { type: 'finish', reason: 'tool_calls' }]);
  expect(a).toHaveLength(2);
  const late: StreamEvent[] = [
    { type: 'usage', usage: { outputTokens: 3 } },
    { type: 'text.delta', text: 'after [DONE]' },
    { type: 'call.fragment', index: 0, text: '}' },
    { type: 'call.identity', index: 1, id: 'b', name: 'y' },
    { type: 'call.complete', index: 1 },
    { type: 'stream.error', error: { type: 'api_error', message: 'late' }, retryable: false },
    { type: 'call.complete', index: 0 },
    { type: 'stream.end' },
  ];
  const b = f.filter(late);
  expect(b.map((e) => e.type)).toEqual(['usage', 'warning', 'call.complete', 'stream.end']);
  expect(f.filter([{ type: 'thinking.delta', text: 'x' }])).toEqual([]);
});

test('StreamFence: a stream with no finish and no valid event ends with an api_error; one valid event is enough', () => {
  const garbage = new StreamFence().filter([{ type: 'warning', code: 'bad_json', message: 'x' }, { type: 'stream.end' }]);
  expect(garbage.map((e) => e.type)).toEqual(['warning', 'stream.error', 'stream.end']);
  expect(garbage[1]).toMatchObject({ error: { type: 'api_error' } });
  expect(new StreamFence().filter([{ type: 'stream.end' }]).map((e) => e.type)).toEqual(['stream.error', 'stream.end']);
  const f = new StreamFence();
  f.filter([{ type: 'text.delta', text: 'cut short' }]);
  expect(f.filter([{ type: 'stream.end' }]).map((e) => e.type)).toEqual(['stream.end']);
  expect(new StreamFence().filter([{ type: 'finish', reason: 'stop' }, { type: 'stream.end' }]).map((e) => e.type)).toEqual(['finish', 'stream.end']);
});

test('IdleTimer: fires after silence, never while paused, and re-arms with the full window on resume', async () => {
  let fired = 0;
  const t = new IdleTimer(60, () => fired++);
  t.pause();
  await new Promise((r) => setTimeout(r, 120));
  expect(fired).toBe(0);
  t.resume();
  await new Promise((r) => setTimeout(r, 30));
  expect(fired).toBe(0);
  await new Promise((r) => setTimeout(r, 80));
  expect(fired).toBe(1);
  t.stop();
});

test('validateCanonical: tool_result must answer the previous assistant message (system messages skipped); limits; names', () => {
  const ok: CanonicalRequest['messages'] = [
    { role: 'user', content: [{ type: 'text', text: 'x' }] },
    { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: {} }] },
    { role: 'system', text: 'note' },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', text: 'r', images: [], is_error: false }] },
  ];
  expect(() => validateCanonical({ messages: ok })).not.toThrow();
  const stale: CanonicalRequest['messages'] = [
    ...ok,
    { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', text: '', images: [], is_error: false }] },
  ];
  expect(() => validateCanonical({ messages: stale })).toThrow(/messages\.5\.content\.0: unexpected `tool_use_id`/);
  expect(() => validateCanonical({ messages: [], max_tokens: 2 ** 20 })).not.toThrow();
  expect(() => validateCanonical({ messages: [], max_tokens: 2 ** 20 + 1 })).toThrow(/max_tokens/);
  expect(() => validateCanonical({ messages: [], max_tokens: 1e308 })).toThrow(/max_tokens: 1e\+308 > 1048576/);
  expect(() => validateCanonical({ messages: [], max_tokens: NaN })).toThrow(/max_tokens/);
  const tool = (name: string, type = 'object'): CanonicalRequest['tools'] => [{ name, input_schema: { type } }];
  expect(() => validateCanonical({ messages: [], tools: tool('mcp__srv__tool-1') })).not.toThrow();
  for (const bad of ['a'.repeat(65), '../..', 'a b', ''])
    expect(() => validateCanonical({ messages: [], tools: tool(bad) })).toThrow(/tools\.0\.name: String should match pattern/);
  expect(() => validateCanonical({ messages: [], tools: tool('t', 'string') })).toThrow(/tools\.0\.input_schema\.type: Input should be 'object'/);
});

test('toAnthropicErrorType maps backend types and keeps Anthropic ones', () => {
  expect(toAnthropicErrorType('server_error')).toBe('api_error');
  expect(toAnthropicErrorType('rate_limit_exceeded')).toBe('rate_limit_error');
  expect(toAnthropicErrorType('overloaded_error')).toBe('overloaded_error');
  expect(toAnthropicErrorType('limit_exceeded')).toBe('api_error');
  expect(toAnthropicErrorType('context_length_exceeded')).toBe('invalid_request_error');
  expect(toAnthropicErrorType('something_new')).toBe('api_error');
});

test('auth: loopback needs nothing, other binds need keys or noAuth; keys compare by value', () => {
  for (const h of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', '::ffff:127.0.0.1']) expect(isLoopback(h)).toBe(true);
  for (const h of ['0.0.0.0', '::', '10.0.0.5', '192.168.1.2', 'example.com']) expect(isLoopback(h)).toBe(false);
  expect(resolveAuth({ host: '127.0.0.1' })).toBeUndefined();
  expect(() => resolveAuth({ host: '0.0.0.0' })).toThrow(/--api-key/);
  expect(resolveAuth({ host: '0.0.0.0', noAuth: true })).toBeUndefined();
  const a = resolveAuth({ host: '0.0.0.0', apiKeys: parseApiKeys(' k1 , k2,,') })!;
  expect(a.digests).toHaveLength(2);
  expect(keyMatches(a, 'k2')).toBe(true);
  expect(keyMatches(a, 'k3')).toBe(false);
  expect(keyMatches(a, undefined)).toBe(false);
});

test('Drain: resolves at once when idle; ends the stragglers at the deadline', async () => {
  expect(await new Drain().start(1000)).toBe(0);
  const d = new Drain();
  const ended: string[] = [];
  const doneA = d.register(() => ended.push('a'));
  const doneB = d.register((m) => {
    ended.push(m);
    doneB();
  });
  setTimeout(() => doneA(), 10);
  expect(await d.start(100, 100)).toBe(1);
  expect(ended).toEqual([expect.stringMatching(/shutting down/)]);
  expect(d.draining).toBe(true);
});

test('serve: every numeric flag (and its env variable) is range-checked as an integer; sizes too', () => {
  const base = ['--upstream', 'http://127.0.0.1:9/v1'];
  for (const [flag, , min, max] of NUMERIC_FLAGS) {
    for (const bad of [String(min - 1), String(max + 1), '1.5', 'x', '1e3', ''])
      expect(() => optionsFrom([...base, `--${flag}`, bad], {})).toThrow(new RegExp(`--${flag}.* must be an integer from ${min} to ${max}`));
    expect(() => optionsFrom([...base, `--${flag}`, String(max)], {})).not.toThrow();
  }
  expect(() => optionsFrom(base, { SLUICE_PORT: '99999' })).toThrow(/--port \(or SLUICE_PORT\)/);
  expect(optionsFrom([...base, '--port', '0'], {}).options.port).toBe(0);
  expect(() => optionsFrom([...base, '--max-body', '2g'], {})).toThrow(/--max-body must be between/);
  expect(() => optionsFrom([...base, '--max-body', '0'], {})).toThrow(/--max-body must be between/);
  expect(() => optionsFrom([...base, '--body-memory', '64m'], {})).toThrow(/--body-memory must be at least 8x --max-body/);
  expect(optionsFrom([...base, '--body-memory', '64m', '--max-body', '8m'], {}).options).toMatchObject({ bodyBudgetBytes: 64 * 2 ** 20, maxBodyBytes: 8 * 2 ** 20 });
});

test('MemoryBudget: charges 8x, refuses what does not fit, gives back exactly', () => {
  const b = new MemoryBudget(800);
  expect(b.largestBody).toBe(100);
  expect(b.take(60)).toBe(true);
  expect(b.inUse).toBe(480);
  expect(b.take(41)).toBe(false);
  expect(b.inUse).toBe(480);
  expect(b.take(40)).toBe(true);
  b.give(60);
  b.give(40);
  expect(b.inUse).toBe(0);
  expect(b.overBudget()).toMatchObject({ status: 503, type: 'overloaded_error', headers: { 'retry-after': '1' } });
});
