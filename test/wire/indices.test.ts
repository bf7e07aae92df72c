/**
 * #18.7: odd positions (-1, 0.5, "0", null, true) are refused by every adapter through the one
 * check in src/wire/common.ts (`wireIndex`): an `invalid_index` warning, never a call. Each stream
 * is read through the SSE reader whole and at every character split.
 */
import { createStreamReader } from '../../src/wire';
import { REFUSED_INDEX, textIndex, wireIndex } from '../../src/wire/common';
import type { StreamEvent, WireFormat } from '../../src/wire/events';
import { createTextParser } from '../../src/parsers';

const ODD: unknown[] = [-1, 0.5, '0', null, true];

const sse = (payloads: unknown[]): string => payloads.map((p) => `data: ${JSON.stringify(p)}\n\n`).join('');

function readAt(format: WireFormat, text: string, cut: number): StreamEvent[] {
  const r = createStreamReader(format);
  const evs = cut < 0 ? [...r.write(text)] : [...r.write(text.slice(0, cut)), ...r.write(text.slice(cut))];
  return [...evs, ...r.end()];
}

interface Calls {
  calls: { index: number; name?: string; args: string; completes: number }[];
  warnings: string[];
}

function calls(evs: StreamEvent[]): Calls {
  const byIndex = new Map<number, Calls['calls'][number]>();
  const get = (i: number) => {
    let c = byIndex.get(i);
    if (c === undefined) byIndex.set(i, (c = { index: i, args: '', completes: 0 }));
    return c;
  };
  const warnings: string[] = [];
  for (const e of evs) {
    if (e.type === 'call.identity') {
      const c = get(e.index);
      if (e.name !== undefined) c.name = e.name;
    } else if (e.type === 'call.fragment') get(e.index).args += e.text;
    else if (e.type === 'call.complete') get(e.index).completes++;
    else if (e.type === 'warning') warnings.push(e.code);
  }
  return { calls: [...byIndex.values()].sort((a, b) => a.index - b.index), warnings };
}

/** The stream whole and at every split gives `expected` calls and an invalid_index warning. */
function expectRefused(format: WireFormat, payloads: unknown[], expected: Calls['calls']): void {
  const text = sse(payloads);
  for (let cut = -1; cut < text.length; cut++) {
    const got = calls(readAt(format, text, cut));
    expect({ cut, calls: got.calls }).toEqual({ cut, calls: expected });
    expect(got.warnings).toContain('invalid_index');
  }
}

const good = { index: 0, name: 'good', args: '{"a":1}', completes: 1 };
const goodChat = { index: 0, name: 'good', args: '{"a":1}', completes: 0 }; // chat: the engine infers completion

describe('wireIndex / textIndex (src/wire/common.ts)', () => {
  test('a non-negative safe integer passes, absent is undefined, anything else is refused', () => {
    expect([0, 3, 99999].map(wireIndex)).toEqual([0, 3, 99999]);
    expect(wireIndex(undefined)).toBeUndefined();
    for (const v of [...ODD, NaN, Infinity, 2 ** 53, '1', {}, []]) expect(wireIndex(v)).toBe(REFUSED_INDEX);
    expect(['0', '12'].map(textIndex)).toEqual([0, 12]);
    for (const s of ['', '-1', '0.5', ' 1', '1e3', '0x1', '01', '1'.repeat(16)]) expect(textIndex(s)).toBe(REFUSED_INDEX);
  });
});

const chatChunk = (tcs: object[]) => ({
  id: 'c',
  object: 'chat.completion.chunk',
  choices: [{ index: 0, delta: { tool_calls: tcs }, finish_reason: null }],
});

describe.each(ODD.map((v) => [JSON.stringify(v), v]))('odd index %s', (_label, odd) => {
  test('openai-chat: tool_calls[].index refused, the valid call kept', () => {
    expectRefused(
      'openai-chat',
      [
        chatChunk([{ index: odd, id: 'bad', type: 'function', function: { name: 'bad', arguments: '{}' } }]),
        chatChunk([{ index: 0, id: 'g', type: 'function', function: { name: 'good', arguments: '{"a":1}' } }]),
        chatChunk([{ index: odd, function: { arguments: '{"x":2}' } }]),
      ],
      [goodChat],
    );
  });

  test('dynamo: a completion record with an odd index completes nothing', () => {
    expectRefused(
      'dynamo',
      [
        chatChunk([{ index: 0, id: 'g', type: 'function', function: { name: 'good', arguments: '{"a":1}' } }]),
        { id: 'c', choices: [], tool_call_completion: [{ index: odd }, odd] },
        { id: 'c', choices: [], tool_call_completion: [{ index: 0 }] },
      ],
      [good],
    );
  });

  test('openai-responses: an output item at an odd output_index is never a call', () => {
    const item = (id: string, name: string) => ({ type: 'function_call', id, call_id: `c_${id}`, name, arguments: '' });
    expectRefused(
      'openai-responses',
      [
        { type: 'response.created', response: { id: 'r', model: 'm' } },
        { type: 'response.output_item.added', output_index: odd, item: item('fb', 'bad') },
        { type: 'response.function_call_arguments.delta', output_index: odd, item_id: 'fb', delta: '{}' },
        { type: 'response.output_item.done', output_index: odd, item: { ...item('fb', 'bad'), arguments: '{}' } },
        { type: 'response.output_item.added', output_index: 0, item: item('fg', 'good') },
        { type: 'response.function_call_arguments.delta', output_index: 0, item_id: 'fg', delta: '{"a":1}' },
        { type: 'response.output_item.done', output_index: 0, item: { ...item('fg', 'good'), arguments: '{"a":1}' } },
      ],
      [good],
    );
  });

  test('anthropic: a tool_use block at an odd index is never a call (start, delta and stop)', () => {
    expectRefused(
      'anthropic',
      [
        { type: 'message_start', message: { id: 'm', model: 'claude', usage: { input_tokens: 1, output_tokens: 1 } } },
        { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 't0', name: 'good', input: {} } },
        { type: 'content_block_start', index: odd, content_block: { type: 'tool_use', id: 't1', name: 'bad', input: {} } },
        { type: 'content_block_delta', index: odd, delta: { type: 'input_json_delta', partial_json: '{"x":' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"a":1}' } },
        { type: 'content_block_stop', index: odd },
        { type: 'content_block_stop', index: 0 },
      ],
      [good],
    );
  });

  test('gemini: a candidate at an odd index is refused (its functionCall is no call)', () => {
    expectRefused(
      'gemini',
      [
        { candidates: [{ index: odd, content: { role: 'model', parts: [{ functionCall: { name: 'bad', args: {} } }] } }] },
        { candidates: [{ index: 0, content: { role: 'model', parts: [{ functionCall: { name: 'good', args: { a: 1 } } }] } }] },
      ],
      [{ ...good, index: 0 }],
    );
  });
});

describe('positions written as text', () => {
  test.each(['[-1]', '[0.5]', '[ 1]', '[1e3]', '[]', '[01]'])(
    'gemini jsonPath %s is refused (bad_json_path), the rest of the call is kept',
    (pos) => {
      const text = sse([
        { candidates: [{ content: { parts: [{ functionCall: { name: 'good', willContinue: true } }] } }] },
        {
          candidates: [
            {
              content: {
                parts: [
                  {
                    functionCall: {
                      partialArgs: [
                        { jsonPath: `$.l${pos}`, numberValue: 9 },
                        { jsonPath: '$.a', numberValue: 1 },
                      ],
                      willContinue: true,
                    },
                  },
                ],
              },
            },
          ],
        },
        { candidates: [{ content: { parts: [{ functionCall: {} }] }, finishReason: 'STOP' }] },
      ]);
      for (let cut = -1; cut < text.length; cut++) {
        const got = calls(readAt('gemini', text, cut));
        expect({ cut, calls: got.calls }).toEqual({ cut, calls: [good] });
        expect(got.warnings).toContain('bad_json_path');
      }
    },
  );

  test.each(['-1', '0.5', 'x'])('kimi call id functions.bad:%s is never a call; the next call is', (pos) => {
    const text =
      `<|tool_calls_section_begin|><|tool_call_begin|>functions.bad:${pos}<|tool_call_argument_begin|>{}<|tool_call_end|>` +
      '<|tool_call_begin|>functions.good:1<|tool_call_argument_begin|>{"a":1}<|tool_call_end|><|tool_calls_section_end|>';
    for (let cut = 0; cut <= text.length; cut++) {
      const p = createTextParser('kimi_k2');
      const got = calls([...p.push(text.slice(0, cut)), ...p.push(text.slice(cut)), ...p.end()]);
      expect({ cut, calls: got.calls.map((c) => [c.index, c.name, c.args, c.completes]) }).toEqual({
        cut,
        calls: [[0, 'good', '{"a":1}', 1]],
      });
      expect(got.warnings.length).toBeGreaterThan(0);
    }
  });
});
