/**
 * SPEC §12 at the wire layer (src/wire/integrity.ts): every adapter ends a stream that lacks its
 * terminal signal with one retryable `stream_truncated` error before `stream.end`, and nothing when
 * the signal came or the stream already reported an error; a unary completion is `bad_stream`.
 */
import { createAdapter, createStreamReader } from '../../src/wire';
import type { StreamEvent, WireFormat } from '../../src/wire/events';
import { terminalSignal, unaryCompletion } from '../../src/wire/integrity';
import { createTextAdapter } from '../../src/parsers';

const errors = (evs: StreamEvent[]) => evs.flatMap((e) => (e.type === 'stream.error' ? [{ type: e.error.type, retryable: e.retryable }] : []));
function run(format: WireFormat, payloads: unknown[]): StreamEvent[] {
  const a = createAdapter(format);
  return [...payloads.flatMap((p) => a.push(p)), ...a.end()];
}
const chat = (delta: Record<string, unknown>, finish: string | null = null) => ({ id: 'c', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] });

const CASES: [WireFormat, unknown[], unknown[]][] = [
  ['openai-chat', [chat({ content: 'hi' })], [chat({}, 'stop')]],
  ['dynamo', [chat({ content: 'hi' })], [chat({}, 'stop')]],
  ['anthropic', [{ type: 'message_start', message: { id: 'm', model: 'x', usage: {} } }, { type: 'message_delta', delta: { stop_reason: 'end_turn' } }], [{ type: 'message_stop' }]],
  ['openai-responses', [{ type: 'response.created', response: { id: 'r' } }, { type: 'response.output_text.delta', output_index: 0, delta: 'hi' }], [{ type: 'response.completed', response: { id: 'r' } }]],
  ['gemini', [{ candidates: [{ content: { role: 'model', parts: [{ text: 'hi' }] } }] }], [{ candidates: [{ content: { role: 'model', parts: [] }, finishReason: 'STOP' }] }]],
  ['ai-sdk', [{ type: 'start' }, { type: 'text-delta', id: 't', text: 'hi' }], [{ type: 'finish', finishReason: 'stop' }]],
];

describe.each(CASES)('%s', (format, body, terminal) => {
  test('without its terminal signal: one retryable stream_truncated naming it, then stream.end', () => {
    const evs = run(format, body);
    expect(errors(evs)).toEqual([{ type: 'stream_truncated', retryable: true }]);
    const err = evs.find((e) => e.type === 'stream.error');
    expect(err?.type === 'stream.error' && err.error.message).toContain(terminalSignal(format));
    expect(evs[evs.length - 1]).toEqual({ type: 'stream.end' });
  });
  test('with it: no error; [DONE] in between changes nothing', () => {
    expect(errors(run(format, [...body, ...terminal]))).toEqual([]);
    expect(errors(run(format, [...body, '[DONE]']))).toEqual([{ type: 'stream_truncated', retryable: true }]);
  });
  test('an empty stream is cut too ("no event of this format arrived")', () => {
    const evs = run(format, []);
    expect(errors(evs)).toEqual([{ type: 'stream_truncated', retryable: true }]);
  });
});

test('a provider error event is the only error (no stream_truncated on top)', () => {
  expect(errors(run('openai-chat', [chat({ content: 'x' }), { error: { type: 'overloaded_error', message: 'busy' } }]))).toEqual([{ type: 'overloaded_error', retryable: true }]);
  expect(errors(run('anthropic', [{ type: 'error', error: { type: 'overloaded_error', message: 'busy' } }]))).toEqual([{ type: 'overloaded_error', retryable: true }]);
  expect(errors(run('openai-responses', [{ type: 'response.failed', response: { error: { code: 'server_error', message: 'x' } } }]))).toEqual([{ type: 'server_error', retryable: true }]);
  expect(errors(run('gemini', [{ error: { code: 503, message: 'x', status: 'UNAVAILABLE' } }])).length).toBe(1);
  expect(errors(run('ai-sdk', [{ type: 'abort' }]))).toEqual([{ type: 'aborted', retryable: false }]);
  const r = createStreamReader('openai-chat');
  expect(errors([...r.write('event: error\n: upstream died\n\n'), ...r.end()])).toEqual([{ type: 'api_error', retryable: true }]);
});

test('text families: the backend finish_reason is the terminal signal; a unary completion is bad_stream', () => {
  const mk = () => createTextAdapter('hermes');
  const cut = mk();
  expect(errors([...cut.push(chat({ content: 'hello <tool_call>{"name":"f","arguments":{}}</tool_call>' })), ...cut.end()])).toEqual([{ type: 'stream_truncated', retryable: true }]);
  const ok = mk();
  expect(errors([...ok.push(chat({ content: 'hello' })), ...ok.push(chat({}, 'stop')), ...ok.end()])).toEqual([]);
  const unary = mk();
  const evs = [...unary.push({ id: 'x', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }] }), ...unary.end()];
  expect(errors(evs)).toEqual([{ type: 'bad_stream', retryable: false }]);
  expect(evs.some((e) => e.type === 'text.delta')).toBe(false);
});

test('unary completions are recognised by shape (Gemini\'s unary response is a one-chunk stream, not listed)', () => {
  expect(unaryCompletion({ object: 'chat.completion', choices: [] })).toBeDefined();
  expect(unaryCompletion({ choices: [{ index: 0, message: { role: 'assistant' } }] })).toBeDefined();
  expect(unaryCompletion({ type: 'message', role: 'assistant', content: [] })).toBeDefined();
  expect(unaryCompletion({ object: 'response', status: 'completed' })).toBeDefined();
  expect(unaryCompletion(chat({ content: 'x' }))).toBeUndefined();
  expect(unaryCompletion({ type: 'message_start', message: { type: 'message', role: 'assistant', content: [] } })).toBeUndefined();
  expect(unaryCompletion({ candidates: [{ content: { parts: [] }, finishReason: 'STOP' }] })).toBeUndefined();
  for (const f of ['openai-chat', 'anthropic', 'openai-responses'] as const) {
    const evs = run(f, [{ object: 'chat.completion', choices: [] }, chat({ content: 'later' })]);
    expect(errors(evs)).toEqual([{ type: 'bad_stream', retryable: false }]);
    expect(evs.some((e) => e.type === 'text.delta')).toBe(false); // the rest is ignored
  }
});

test('SSE reader: a first line that is SSE framing is judged only once complete; CRLF and BOM are fine', () => {
  const r = createStreamReader('openai-chat');
  const text = '\uFEFF: hello\r\n\r\n' + `data: ${JSON.stringify(chat({}, 'stop'))}\r\n\r\n`;
  const evs: StreamEvent[] = [];
  for (let i = 0; i < text.length; i += 3) evs.push(...r.write(text.slice(i, i + 3)));
  evs.push(...r.end());
  expect(errors(evs)).toEqual([]);
  expect(evs.some((e) => e.type === 'finish')).toBe(true);
  const bytes = createStreamReader('openai-chat');
  const b = Buffer.from('<!DOCTYPE html>\n<p>é</p>');
  const out = [...bytes.write(b.subarray(0, 5)), ...bytes.write(b.subarray(5)), ...bytes.end()];
  expect(errors(out)).toEqual([{ type: 'bad_stream', retryable: false }]);
  expect(out.filter((e) => e.type === 'stream.end')).toHaveLength(1);
});
