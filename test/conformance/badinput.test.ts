/**
 * Bad input end to end (issue 2): malformed SSE, non-JSON data lines, unknown event types, a
 * stream cut mid-event, arguments that never close. Each gives warnings and a valid terminal
 * output — never a throw or a hang.
 */
import { convertTrace } from '../../src/trace/convert';
import { parseTrace } from '../../src/trace/trace';

function anthropic(lines: string[]): string {
  return lines
    .map((l) =>
      l === '' || l.startsWith(':') || l.startsWith('event:') || l.startsWith('data:') ? l : `data: ${l}`,
    )
    .join('\n');
}

const START =
  '{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"x","content":[],"usage":{"input_tokens":1,"output_tokens":1}}}';
const TOOL = (i: number) =>
  `{"type":"content_block_start","index":${i},"content_block":{"type":"tool_use","id":"toolu_${i}","name":"read","input":{}}}`;
const DELTA = (i: number, json: string) =>
  JSON.stringify({
    type: 'content_block_delta',
    index: i,
    delta: { type: 'input_json_delta', partial_json: json },
  });

function lastEvent(sse: string): string {
  const events = [...sse.matchAll(/^event: (\S+)$/gm)].map((m) => m[1]!);
  return events[events.length - 1] ?? '';
}

test('non-JSON data lines and unknown event types are skipped with warnings; the message still ends', () => {
  const text = anthropic([
    START,
    '',
    'not json at all',
    '',
    '{"type":"mystery_event","x":1}',
    '',
    TOOL(0),
    '',
    DELTA(0, '{"path":"a"}'),
    '',
    '{"type":"content_block_stop","index":0}',
    '',
    '{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":3}}',
    '',
    '{"type":"message_stop"}',
    '',
    '',
  ]);
  const r = convertTrace(parseTrace(text, { format: 'anthropic' }));
  expect(r.sse).toContain('"name":"read"');
  expect(lastEvent(r.sse)).toBe('message_stop');
});

test('a stream cut mid-event with arguments that never close: no tool block, an error (SPEC §12), never message_stop', () => {
  const text = anthropic([
    START,
    '',
    TOOL(0),
    '',
    DELTA(0, '{"path":"/very/long'),
    '',
    'data: {"type":"content_blo',
  ]);
  const r = convertTrace(parseTrace(text, { format: 'anthropic' }));
  expect(r.sse).not.toContain('tool_use","id"');
  expect(lastEvent(r.sse)).toBe('error');
  expect(r.sse).toContain('stream_truncated');
  expect(r.sse).not.toMatch(/^event: message_stop$/m);
});

test('an OpenAI chat stream with garbage between chunks and no [DONE] still converts', () => {
  const chunk = (delta: unknown, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const text =
    chunk({ role: 'assistant' }) +
    'data: {broken\n\n' +
    ': keep-alive\n\n' +
    chunk({
      tool_calls: [
        { index: 0, id: 'call_0', type: 'function', function: { name: 'grep', arguments: '{"q":' } },
      ],
    }) +
    chunk({ tool_calls: [{ index: 0, function: { arguments: '"x"}' } }] }) +
    chunk({}, 'tool_calls');
  const r = convertTrace(parseTrace(text, { format: 'openai-chat' }));
  expect(r.sse).toContain('"name":"grep"');
  expect(r.sse).toContain('"stop_reason":"tool_use"');
  expect(lastEvent(r.sse)).toBe('message_stop');
});
