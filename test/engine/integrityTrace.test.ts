/**
 * SPEC §12 in the trace tools: a trace whose attempt ends (`{"end":true}` or its last line)
 * without its format's terminal event is a truncated turn in `replay` (failed, `stream_truncated`,
 * no unsafe tool started) and in `convert` (an `event: error`, never `message_stop`).
 */
import { convertTrace } from '../../src/trace/convert';
import { replayTrace } from '../../src/trace/replay';
import { parseTrace } from '../../src/trace/trace';

const call = { id: 'c', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'w1', type: 'function', function: { name: 'write_file', arguments: '{"path":"a"}' } }] }, finish_reason: null }] };
const finish = { id: 'c', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] };

function trace(lines: unknown[]): string {
  return [JSON.stringify({ sluice: 'trace', version: 1, format: 'openai-chat' }), ...lines.map((l) => JSON.stringify(l))].join('\n') + '\n';
}

const TOOLS = [{ name: 'write_file', kind: 'edit' as const, durationMs: 10 }];

describe('a trace that ends without its terminal event is a truncated turn', () => {
  test.each([
    ['{"end":true} right after the call', trace([{ t: 0, data: call }, { t: 5, end: true }])],
    ['the last line is the call (EOF)', trace([{ t: 0, data: call }])],
    ['[DONE] without a finish_reason', trace([{ t: 0, data: call }, { t: 5, data: '[DONE]' }, { t: 6, end: true }])],
  ])('replay: %s → failed stream_truncated, no tool started', async (_name, text) => {
    const r = await replayTrace(parseTrace(text), { mode: 'execute', tools: TOOLS });
    expect(r.outcome).toBe('failed');
    expect(r.error?.type).toBe('stream_truncated');
    expect(r.calls.every((c) => c.startedMs === undefined)).toBe(true);
    expect(r.history).toEqual([]);
  });

  test('replay: the same trace with its finish is done and runs the unsafe tool', async () => {
    const r = await replayTrace(parseTrace(trace([{ t: 0, data: call }, { t: 5, data: finish }, { t: 6, end: true }])), { mode: 'execute', tools: TOOLS });
    expect(r.outcome).toBe('done');
    expect(r.error).toBeUndefined();
    expect(r.calls[0]?.startedMs).toBeDefined();
  });

  test('convert: an error event, never message_stop', () => {
    const cut = convertTrace(parseTrace(trace([{ t: 0, data: call }, { t: 5, end: true }])));
    expect(cut.sse).toContain('event: error');
    expect(cut.sse).toContain('stream_truncated');
    expect(cut.sse).not.toContain('message_stop');
    const whole = convertTrace(parseTrace(trace([{ t: 0, data: call }, { t: 5, data: finish }, { t: 6, end: true }])));
    expect(whole.sse).toContain('message_stop');
    expect(whole.sse).not.toContain('event: error');
  });
});
