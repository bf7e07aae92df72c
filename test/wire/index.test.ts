import { decodeRecording, detectFormat, looksLikeSse, readPayloadLines } from '../../src/wire';
import { describeFixtures, listFixtures, readFixture } from '../helpers/fixtures';

describe('readPayloadLines', () => {
  test('one payload per line; blank lines, CRLF, data: prefixes and [DONE] handled; bad lines warn', () => {
    const { payloads, warnings } = readPayloadLines(
      '\ufeff{"a":1}\r\n\n  {"b":2}  \ndata: {"c":3}\nnot json\n[DONE]\n42',
    );
    expect(payloads).toEqual([{ a: 1 }, { b: 2 }, { c: 3 }, '[DONE]', 42]);
    expect(warnings).toEqual([
      { type: 'warning', code: 'bad_json', message: 'line 5 is not JSON (8 chars); ignored' },
    ]);
  });
  test('empty input', () => {
    expect(readPayloadLines('')).toEqual({ payloads: [], warnings: [] });
  });
});

describe('detectFormat', () => {
  test('from payload shapes', () => {
    expect(detectFormat('{"type":"message_start","message":{}}\n')).toBe('anthropic');
    expect(detectFormat('{"type":"ping"}\n{"type":"content_block_start","index":0}\n')).toBe('anthropic');
    expect(detectFormat('{"type":"response.created","response":{}}\n')).toBe('openai-responses');
    expect(detectFormat('{"candidates":[]}\n')).toBe('gemini');
    expect(detectFormat('[{"candidates":[]}]\n')).toBe('gemini');
    expect(detectFormat('data: {"object":"chat.completion.chunk","choices":[]}\n\n')).toBe('openai-chat');
    expect(
      detectFormat('data: {"choices":[]}\n\ndata: {"choices":[],"tool_call_completion":[{"index":0}]}\n\n'),
    ).toBe('dynamo');
    expect(detectFormat('data: {"choices":[]}\n\nevent: error\n: boom\n\n')).toBe('dynamo');
    expect(detectFormat('{"sluice":"trace","format":"text:qwen3"}\n{"t":0,"data":"x"}\n')).toBe('text:qwen3');
    expect(detectFormat('{"t":0,"data":{"type":"response.created"}}\n')).toBe('openai-responses');
    expect(detectFormat('hello\nworld\n')).toBeUndefined();
    expect(detectFormat('')).toBeUndefined();
  });
  test('looksLikeSse', () => {
    expect(looksLikeSse(': hi\n\ndata: x\n\n')).toBe(true);
    expect(looksLikeSse('event: a\ndata: x\n\n')).toBe(true);
    expect(looksLikeSse('{"a":1}\n')).toBe(false);
  });
  test('decodeRecording with an undetectable format warns instead of throwing', () => {
    expect(decodeRecording('plain text')).toEqual([
      { type: 'warning', code: 'unknown_format', message: 'could not detect the wire format' },
      { type: 'stream.end' },
    ]);
  });
});

describeFixtures('detectFormat on the recorded fixtures', () => {
  const cases: [string, string][] = [
    ['anthropic', 'anthropic'],
    ['openai-chat', 'openai-chat'],
    ['openai-responses', 'openai-responses'],
    ['gemini', 'gemini'],
    // Plain chat chunks: nothing Dynamo-specific on the wire, so they read as openai-chat.
    ['dynamo/agent-harness', 'openai-chat'],
  ];
  test.each(cases)('%s/* → %s', (dir, want) => {
    const files = listFixtures(dir, /\.(sse|jsonl)$/);
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) expect([f, detectFormat(readFixture(f))]).toEqual([f, want]);
  });
});
