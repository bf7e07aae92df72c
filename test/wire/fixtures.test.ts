/**
 * Every recorded stream in ../shared/fixtures (anthropic/, openai-chat/, openai-responses/,
 * gemini/, dynamo/agent-harness/) decoded to canonical events and checked against a table written
 * by reading each fixture: per message, per call the identity and the parsed input (or the raw
 * argument text when it is not valid JSON), completion evidence, finish reasons, usage, warnings.
 * Then: feeding each `.sse` split at every byte (or with a stride) gives the same events.
 */
import { describeFixtures, listFixtures, readFixture } from '../helpers/fixtures';
import { createStreamReader, decodePayloads, readPayloadLines } from '../../src/wire';
import type { FinishReason, StreamEvent, Usage, WireFormat } from '../../src/wire/events';

interface ExpectedCall {
  id: string;
  name: string;
  /** Parsed arguments (when they are valid JSON). */
  input?: unknown;
  /** Raw argument text (when it is not valid JSON, or empty). */
  args?: string;
  complete: boolean;
}

interface Expected {
  /** Calls of each message (a new message begins at each `message.start`). */
  messages: ExpectedCall[][];
  finish: FinishReason[];
  /** Every warning code and how often it occurs (exact). */
  warnings: Record<string, number>;
  text?: string;
  thinking?: string;
  signatures?: number;
  pings?: number;
  errors?: { type: string; retryable: boolean }[];
  /** The last usage event. */
  usage?: Usage;
}

const AN = 'anthropic/';
const OC = 'openai-chat/';
const OR = 'openai-responses/';
const GE = 'gemini/';
const DY = 'dynamo/agent-harness/';

const noteId = 'd10aa585-982b-4bd9-984e-420f9b3717f7';

const EXPECTED: Record<string, Expected> = {
  // ---------------------------------------------------------------- anthropic
  [AN + 'sdk-python__long-tool-input-partial-json__sonnet-3-7.sse']: {
    messages: [
      [
        {
          id: 'toolu_01EKqbqmZrGRXy18eN7m9kvY',
          name: 'make_file',
          args: '{"filename": "taxes.txt", "lines_of_text": [\n"# COMPREHENSIVE TAX GUIDE FOR INDIVIDUALS WITH MULTIPLE W-2s",\n"",\n"## INTRODUCTION",\n"",\n"Filing taxes',
          complete: false, // max_tokens cut the block: no content_block_stop
        },
      ],
    ],
    finish: ['length'],
    warnings: { unclosed_blocks: 1, sse_truncated: 1 }, // file ends without the final blank line
    errors: [{ type: 'stream_truncated', retryable: true }], // message_stop is that cut event: never dispatched, so the stream did not finish (SPEC §12)
    text: "I'll create a comprehensive tax guide for someone with multiple W2s and save it in a file called taxes.txt. Let me do that for you now.",
    pings: 1,
    usage: { outputTokens: 124 },
  },
  [AN + 'sdk-python__out-of-order-block-index-no-stop.sse']: {
    messages: [[]],
    finish: [],
    warnings: { unclosed_blocks: 1, sse_truncated: 1 },
    errors: [{ type: 'stream_truncated', retryable: true }], // no message_delta stop_reason (and message_stop cut)
  },
  [AN + 'sdk-python__text-then-tool_use__sonnet-4.sse']: {
    messages: [
      [
        {
          id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn',
          name: 'get_weather',
          input: { location: 'Paris' },
          complete: true,
        },
      ],
    ],
    finish: ['tool_calls'],
    warnings: { sse_truncated: 1 },
    errors: [{ type: 'stream_truncated', retryable: true }], // message_stop is that cut event: never dispatched, so the stream did not finish (SPEC §12)
    text: "I'll check the current weather in Paris for you.",
    pings: 1,
    usage: { outputTokens: 65 },
  },
  [AN + 'sdk-python__tool_use-invalid-json-input__sonnet-4.sse']: {
    messages: [
      [
        {
          id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn',
          name: 'get_weather',
          args: '{"location": "Paris", "unit": celsius}',
          complete: true,
        },
      ],
    ],
    finish: ['tool_calls'],
    warnings: { sse_truncated: 1 },
    errors: [{ type: 'stream_truncated', retryable: true }], // message_stop is that cut event: never dispatched, so the stream did not finish (SPEC §12)
    pings: 1,
  },
  [AN + 'vercel__mcp_tool_use-fine-split-input_json_delta__sonnet-4-5.jsonl']: {
    messages: [[]], // mcp_tool_use + mcp_tool_result run on Anthropic's side
    finish: ['stop'],
    warnings: { server_block_skipped: 2 },
    text: 'The echo tool responded back with: **hello world**\n\nIt simply echoed back the exact message that was sent to it.',
    usage: { promptTokens: 1250, cachedTokens: 0, outputTokens: 83 },
  },
  [AN + 'vercel__multi-message__text+tool_use+server_tool_use-same-message__sonnet-4-5.jsonl']: {
    messages: [
      [{ id: 'toolu_01U8pzAHj2vNdPCA2Kf8JjeN', name: 'readNoteTree', input: { noteId }, complete: true }],
      [
        {
          id: 'toolu_01QoRrvXNv6w4vZSyo9cnxP2',
          name: 'executeEditorOperation',
          input: {
            noteId,
            operations: [
              { op: 'insert_node', type: 'bulletedListItem', text: 'bye', at: { type: 'path', path: [1] } },
            ],
          },
          complete: true,
        },
      ],
      [],
    ],
    finish: ['tool_calls', 'tool_calls', 'stop'],
    warnings: { server_block_skipped: 2 }, // server_tool_use, tool_search_tool_result
    pings: 2,
    usage: { promptTokens: 1639, cachedTokens: 0, outputTokens: 95 },
  },
  [AN + 'vercel__text-then-tool_use-no-args__sonnet-4-5.jsonl']: {
    messages: [[{ id: 'toolu_01QE1WLsSVp5hy5Q3GmGTmjP', name: 'updateIssueList', args: '', complete: true }]],
    finish: ['tool_calls'],
    warnings: {},
    text: "I'll update the issue list for you.",
    pings: 3,
  },
  [AN + 'vercel__text-then-tool_use__haiku-4-5.jsonl']: {
    messages: [
      [
        {
          id: 'toolu_01KFbKqPYSuAKujiL6mTfzYA',
          name: 'json',
          input: { elements: [{ location: 'San Francisco', temperature: 58, condition: 'sunny' }] },
          complete: true,
        },
      ],
    ],
    finish: ['tool_calls'],
    warnings: {},
    text: "I'll invoke the JSON response tool.",
    pings: 2,
    usage: { promptTokens: 849, cachedTokens: 0, outputTokens: 47 },
  },
  [AN + 'vercel__thinking+tool_use__spliced-second-message_start-midstream.jsonl']: {
    messages: [
      [{ id: 'toolu_first', name: 'test-tool', args: '{"value":"Spark', complete: false }],
      [{ id: 'toolu_second', name: 'test-tool', input: { value: 'Sparkle Day' }, complete: true }],
    ],
    finish: ['tool_calls'],
    warnings: { message_restart: 1 },
    thinking: 'I will call the tool.Let me call the tool.',
    signatures: 2,
  },
  [AN + 'vercel__tool_use-only-split-args-with-pings__haiku-4-5.jsonl']: {
    messages: [
      [
        {
          id: 'toolu_019Zvehfe1XQWweT1pm7okyt',
          name: 'weather',
          input: { location: 'San Francisco' },
          complete: true,
        },
      ],
    ],
    finish: ['tool_calls'],
    warnings: {},
    pings: 5,
  },
  // ---------------------------------------------------------------- openai-chat (no completion evidence on the wire)
  [OC + 'openai-python__parallel-tool_calls-index0-index1-fragmented__gpt-4o.sse']: {
    messages: [
      [
        {
          id: 'call_JMW1whyEaYG438VE1OIflxA2',
          name: 'GetWeatherArgs',
          input: { city: 'Edinburgh', country: 'GB', units: 'c' },
          complete: false,
        },
        {
          id: 'call_DNYTawLBoN8fj3KN6qU9N1Ou',
          name: 'get_stock_price',
          input: { ticker: 'AAPL', exchange: 'NASDAQ' },
          complete: false,
        },
      ],
    ],
    finish: ['tool_calls'],
    warnings: {},
    usage: { promptTokens: 149, outputTokens: 60 },
  },
  [OC + 'openai-python__single-tool_call-fragmented-strict__gpt-4o.sse']: {
    messages: [
      [
        {
          id: 'call_c91SqDXlYFuETYv8mUHzz6pp',
          name: 'GetWeatherArgs',
          input: { city: 'Edinburgh', country: 'UK', units: 'c' },
          complete: false,
        },
      ],
    ],
    finish: ['tool_calls'],
    warnings: {},
    usage: { promptTokens: 76, outputTokens: 24 },
  },
  [OC + 'openai-python__single-tool_call-non-strict__gpt-4o.sse']: {
    messages: [
      [
        {
          id: 'call_4XzlGBLtUe9dy3GVNV4jhq7h',
          name: 'get_weather',
          input: { city: 'New York City' },
          complete: false,
        },
      ],
    ],
    finish: ['tool_calls'],
    warnings: {},
    usage: { promptTokens: 44, outputTokens: 16 },
  },
  [OC + 'vercel__reasoning_content-then-tool_call-fragmented+usage-on-finish__deepseek-reasoner.jsonl']: {
    messages: [
      [
        {
          id: 'call_00_ioIn7yN9p1ZOMNpDLwd4MgAF',
          name: 'weather',
          input: { location: 'San Francisco' },
          complete: false,
        },
      ],
    ],
    finish: ['tool_calls'],
    warnings: {},
    usage: { promptTokens: 339, cachedTokens: 320, outputTokens: 83 },
  },
  [OC + 'vercel__tool_call-empty-id-continuations+trailing-empty-args__qwen3-max.jsonl']: {
    messages: [
      [
        {
          id: 'call_eee11723464a4b9eb8cee71d',
          name: 'weather',
          input: { location: 'San Francisco' },
          complete: false,
        },
      ],
    ],
    finish: ['tool_calls'],
    warnings: {},
    usage: { promptTokens: 295, cachedTokens: 0, outputTokens: 22 },
  },
  [OC + 'vercel__tool_call-empty-name-continuation+usage-on-finish__glm-5.jsonl']: {
    messages: [
      [
        {
          id: 'chatcmpl-tool-9f149c74c42f265b',
          name: 'webSearchTool',
          input: { query: 'current Berlin weather' },
          complete: false,
        },
      ],
    ],
    finish: ['tool_calls'],
    warnings: {},
    usage: { promptTokens: 171, cachedTokens: 128, outputTokens: 14 },
  },
  [OC + 'vercel__tool_call-whole-in-one-chunk-args-empty-object__groq-llama-3.3.jsonl']: {
    messages: [[{ id: 'tk85n1k4m', name: 'weather', input: {}, complete: false }]],
    finish: ['tool_calls'],
    warnings: {},
    usage: { promptTokens: 210, outputTokens: 15 },
  },
  [OC + 'vercel__tool_call-whole-in-one-chunk-no-DONE__grok-3-mini.jsonl']: {
    messages: [
      [{ id: 'call_55117580', name: 'weather', input: { location: 'San Francisco' }, complete: false }],
    ],
    finish: ['tool_calls'],
    warnings: {},
    thinking: 'First, the user is',
    usage: { promptTokens: 291, cachedTokens: 290, outputTokens: 26 },
  },
  // ---------------------------------------------------------------- openai-responses
  [OR + 'vercel__error-event-then-response.failed__insufficient_quota.jsonl']: {
    messages: [[]],
    finish: [],
    warnings: {},
    errors: [{ type: 'insufficient_quota', retryable: false }], // response.failed adds nothing more
  },
  [OR + 'vercel__function_call-item-args-deltas+obfuscation__gpt-5.1.jsonl']: {
    messages: [
      [
        {
          id: 'call_2FQdm3Br7Qb35YUBSkDR7kue',
          name: 'get_weather',
          input: { city: 'Beijing' },
          complete: true,
        },
      ],
    ],
    finish: ['tool_calls'],
    warnings: {},
    usage: { promptTokens: 45, cachedTokens: 0, outputTokens: 25 },
  },
  [OR + 'vercel__function_call-item-args-deltas__azure.jsonl']: {
    messages: [
      [
        {
          id: 'call_H5DxLSFnsGhiROnUiDHmgyc8',
          name: 'weather',
          input: { location: 'San Francisco' },
          complete: true,
        },
      ],
    ],
    finish: ['tool_calls'],
    warnings: {},
    usage: { promptTokens: 45, cachedTokens: 0, outputTokens: 24 },
  },
  [OR + 'vercel__reasoning-summary-then-function_call__multi-response__openai.jsonl']: {
    messages: [
      [
        {
          id: 'call_AB6AaRZ1FYZB2RwS6A5vbdqn',
          name: 'calculator',
          input: { a: 12, b: 7, op: 'add' },
          complete: true,
        },
      ],
      [
        {
          id: 'call_Q6pW65MUgW9vF59BmItYGos3',
          name: 'calculator',
          input: { a: 19, b: 3, op: 'multiply' },
          complete: true,
        },
      ],
      [
        {
          id: 'call_Zl5vIMnD7dVAjgU6FkhmiCZh',
          name: 'calculator',
          input: { a: 57, b: 10, op: 'multiply' },
          complete: true,
        },
      ],
      [],
    ],
    finish: ['tool_calls', 'tool_calls', 'tool_calls', 'stop'],
    warnings: {},
    text: 'The final result is **570**.',
    thinking:
      "**Calculating step-by-step using calculator**\n\nI'll compute 12 plus 7, then multiply the result by 3, and finally multiply that by 10, reporting the final product.",
    signatures: 1, // the reasoning item's encrypted_content at output_item.done
    usage: { promptTokens: 299, cachedTokens: 0, outputTokens: 12 },
  },
  // ---------------------------------------------------------------- gemini (ids minted as call_<index>)
  [GE + 'vercel__partialArgs-array-paths-missing-terminal-functionCall__gemini-3-flash.jsonl']: {
    messages: [
      [
        {
          id: 'call_0',
          name: 'writeItems',
          input: {
            operations: [
              { action: 'add', description: 'Fresh red apple', itemid: 'apple_001', price: 0.5 },
              { action: 'add', description: 'Ripe yellow banana', itemid: 'banana_001', price: 0.3 },
            ],
          },
          complete: true,
        },
      ],
    ],
    finish: ['tool_calls'],
    warnings: {},
    signatures: 1,
    usage: { promptTokens: 54, outputTokens: 74 + 121 },
  },
  [GE + 'vercel__streamFunctionCallArguments-partialArgs-willContinue__gemini-3.1-pro.jsonl']: {
    messages: [
      [
        { id: 'call_0', name: 'getWeather', input: { location: 'Boston' }, complete: true },
        { id: 'call_1', name: 'getWeather', input: { location: 'San Francisco' }, complete: true },
      ],
    ],
    finish: ['tool_calls'],
    warnings: {},
    signatures: 1,
    usage: { promptTokens: 26, outputTokens: 23 + 132 },
  },
  [GE + 'vercel__thought+parallel-functionCalls+no-args-call__gemini-3-flash.jsonl']: {
    messages: [
      [
        { id: 'call_0', name: 'read_theme', input: {}, complete: true },
        { id: 'call_1', name: 'read_screen', input: { id: 'A' }, complete: true },
        { id: 'call_2', name: 'read_screen', input: { id: 'B' }, complete: true },
        { id: 'call_3', name: 'read_screen', input: { id: 'C' }, complete: true },
      ],
    ],
    finish: ['tool_calls'],
    warnings: {},
    signatures: 1,
    usage: { promptTokens: 249, outputTokens: 58 + 183 },
  },
  [GE + 'vercel__vertex-partialArgs-nested-jsonPath.jsonl']: {
    messages: [
      [
        {
          id: 'call_0',
          name: 'cookRecipe',
          input: {
            recipe: {
              ingredients: [
                { amount: '16 oz', name: 'Lasagna noodles' },
                { amount: '1 lb', name: 'Ground beef' },
                { amount: '15 oz', name: 'Ricotta cheese' },
                { amount: '3 cups', name: 'Mozzarella cheese' },
                { amount: '1/2 cup', name: 'Parmesan cheese' },
                { amount: '24 oz', name: 'Tomato sauce' },
                { amount: '1', name: 'Egg' },
                { amount: '2 cloves', name: 'Garlic' },
                { amount: '1 tsp', name: 'Salt' },
                { amount: '1/2 tsp', name: 'Pepper' },
              ],
              name: 'Lasagna',
              steps: [
                'Preheat oven to 375\u00b0F (190\u00b0C).',
                'Cook lasagna noodles according to package directions, drain and set aside.',
                'Brown ground beef with minced garlic in a skillet. Drain fat and stir in tomato sauce. Simmer for 10 minutes.',
                'In a bowl, mix ricotta cheese, egg, salt, pepper, and Parmesan cheese.',
                'In a 9x13 baking dish, spread a thin layer of meat sauce.',
                'Layer noodles, ricotta mixture, mozzarella, and meat sauce. Repeat.',
                'Top with remaining mozzarella cheese.',
                'Cover with foil and bake for 25 minutes.',
                'Remove foil and bake for another 25 minutes until golden.',
                'Let stand for 15 minutes before serving.',
              ],
            },
          },
          complete: true,
        },
      ],
    ],
    finish: ['tool_calls'],
    warnings: {},
    signatures: 1,
    usage: { promptTokens: 31, outputTokens: 684 + 1026 },
  },
  [GE + 'vercel__whole-functionCall-args+thoughtSignature__gemini-3-pro.jsonl']: {
    messages: [[{ id: 'call_0', name: 'weather', input: { location: 'San Francisco' }, complete: true }]],
    finish: ['tool_calls'],
    warnings: {},
    signatures: 1,
    usage: { promptTokens: 29, outputTokens: 15 + 804 },
  },
  // ---------------------------------------------------------------- dynamo (chat chunks; these files end without the blank line after [DONE])
  [DY + 'fragmented-tool.sse']: {
    messages: [
      [{ id: 'call_list_directory', name: 'list_directory', input: { path: '/tmp' }, complete: false }],
    ],
    finish: ['tool_calls'],
    warnings: { sse_truncated: 1 },
    usage: { promptTokens: 30, outputTokens: 14 },
  },
  [DY + 'parallel-tools.sse']: {
    messages: [
      [
        { id: 'call_read_a', name: 'read_file', input: { path: '/a' }, complete: false },
        { id: 'call_read_b', name: 'read_file', input: { path: '/b' }, complete: false },
      ],
    ],
    finish: ['tool_calls'],
    warnings: { sse_truncated: 1 },
    usage: { promptTokens: 40, outputTokens: 22 },
  },
  [DY + 'text.sse']: {
    messages: [[]],
    finish: ['stop'],
    warnings: { sse_truncated: 1 },
    text: 'Pong.',
    usage: { promptTokens: 5, outputTokens: 2 },
  },
  [DY + 'thinking-tool.sse']: {
    messages: [
      [{ id: 'call_list_directory', name: 'list_directory', input: { path: '/tmp' }, complete: false }],
    ],
    finish: ['tool_calls'],
    warnings: { sse_truncated: 1 },
    text: 'I will list it.',
    thinking: 'I should inspect the directory.',
    usage: { promptTokens: 30, outputTokens: 18 },
  },
};

const DIRS: [string, WireFormat][] = [
  ['anthropic', 'anthropic'],
  ['openai-chat', 'openai-chat'],
  ['openai-responses', 'openai-responses'],
  ['gemini', 'gemini'],
  ['dynamo/agent-harness', 'dynamo'],
];

function formatOf(rel: string): WireFormat {
  for (const [dir, f] of DIRS) if (rel.startsWith(dir + '/')) return f;
  throw new Error(rel);
}

export function decodeFile(rel: string): StreamEvent[] {
  const text = readFixture(rel);
  const format = formatOf(rel);
  if (rel.endsWith('.sse')) {
    const r = createStreamReader(format);
    return [...r.write(Buffer.from(text, 'utf8')), ...r.end()];
  }
  const { payloads, warnings } = readPayloadLines(text);
  expect(warnings).toEqual([]);
  return decodePayloads(format, payloads);
}

interface CallSummary {
  id?: string;
  name?: string;
  args: string;
  completes: number;
}

function summarize(events: StreamEvent[]) {
  const messages: Map<number, CallSummary>[] = [];
  let cur = new Map<number, CallSummary>();
  let started = false;
  const finish: FinishReason[] = [];
  const warnings: Record<string, number> = {};
  const errors: { type: string; retryable: boolean }[] = [];
  let text = '';
  let thinking = '';
  let signatures = 0;
  let pings = 0;
  let usage: Usage | undefined;
  const call = (i: number) => {
    let c = cur.get(i);
    if (c === undefined) {
      c = { args: '', completes: 0 };
      cur.set(i, c);
    }
    return c;
  };
  for (const e of events) {
    switch (e.type) {
      case 'message.start':
        if (started) {
          messages.push(cur);
          cur = new Map();
        }
        started = true;
        break;
      case 'call.identity': {
        const c = call(e.index);
        if (e.id !== undefined) c.id = e.id;
        if (e.name !== undefined) c.name = e.name;
        expect(e.id).not.toBe('');
        expect(e.name).not.toBe('');
        break;
      }
      case 'call.fragment':
        expect(e.text.length).toBeGreaterThan(0);
        call(e.index).args += e.text;
        break;
      case 'call.complete':
        call(e.index).completes++;
        break;
      case 'finish':
        finish.push(e.reason);
        break;
      case 'warning':
        warnings[e.code] = (warnings[e.code] ?? 0) + 1;
        break;
      case 'stream.error':
        errors.push({ type: e.error.type, retryable: e.retryable });
        break;
      case 'text.delta':
        text += e.text;
        break;
      case 'thinking.delta':
        thinking += e.text;
        break;
      case 'thinking.signature':
        signatures++;
        break;
      case 'ping':
        pings++;
        break;
      case 'usage':
        usage = e.usage;
        break;
    }
  }
  messages.push(cur);
  return { messages, finish, warnings, errors, text, thinking, signatures, pings, usage };
}

/** Merge adjacent fragments of the same call and adjacent text/thinking deltas. */
export function normalize(events: StreamEvent[]): StreamEvent[] {
  const out: StreamEvent[] = [];
  for (const e of events) {
    const last = out[out.length - 1];
    if (last !== undefined && last.type === e.type) {
      if (e.type === 'call.fragment' && last.type === 'call.fragment' && last.index === e.index) {
        out[out.length - 1] = { ...last, text: last.text + e.text };
        continue;
      }
      if (
        (e.type === 'text.delta' || e.type === 'thinking.delta') &&
        (last.type === 'text.delta' || last.type === 'thinking.delta')
      ) {
        out[out.length - 1] = { ...last, text: last.text + e.text };
        continue;
      }
    }
    out.push(e);
  }
  return out;
}

const ALL_FILES = DIRS.flatMap(([dir]) => listFixtures(dir, /\.(sse|jsonl)$/));

describeFixtures('recorded provider streams → canonical events', () => {
  test('the expected table covers exactly the fixture files', () => {
    expect(ALL_FILES.length).toBeGreaterThanOrEqual(30);
    expect([...ALL_FILES].sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  test.each(ALL_FILES)('%s', (rel) => {
    const exp = EXPECTED[rel];
    const events = decodeFile(rel);
    expect(events[events.length - 1]).toEqual({ type: 'stream.end' });
    expect(events.filter((e) => e.type === 'stream.end')).toHaveLength(1);
    const s = summarize(events);
    expect(s.messages).toHaveLength(exp.messages.length);
    exp.messages.forEach((calls, m) => {
      const got = s.messages[m];
      expect([...got.keys()].sort((a, b) => a - b)).toEqual(calls.map((_, i) => i));
      calls.forEach((want, i) => {
        const c = got.get(i) as CallSummary;
        expect({ id: c.id, name: c.name }).toEqual({ id: want.id, name: want.name });
        if (want.input !== undefined) expect(JSON.parse(c.args)).toEqual(want.input);
        else {
          expect(c.args).toBe(want.args);
          if (c.args !== '') expect(() => JSON.parse(c.args)).toThrow();
        }
        expect(c.completes > 0).toBe(want.complete);
        expect(c.completes).toBeLessThanOrEqual(1);
      });
    });
    expect(s.finish).toEqual(exp.finish);
    expect(s.warnings).toEqual(exp.warnings);
    expect(s.errors).toEqual(exp.errors ?? []);
    if (exp.text !== undefined) expect(s.text).toBe(exp.text);
    if (exp.thinking !== undefined) expect(s.thinking).toBe(exp.thinking);
    expect(s.signatures).toBe(exp.signatures ?? 0);
    expect(s.pings).toBe(exp.pings ?? 0);
    if (exp.usage !== undefined) expect(s.usage).toEqual(exp.usage);
    // Chat has no completion evidence; every other provider completes every call it finished.
    if (formatOf(rel) === 'openai-chat' || formatOf(rel) === 'dynamo') {
      expect(events.some((e) => e.type === 'call.complete')).toBe(false);
    }
  });

  const SSE_FILES = ALL_FILES.filter((f) => f.endsWith('.sse'));

  test.each(SSE_FILES)('%s: every split point gives the same events', (rel) => {
    const bytes = Buffer.from(readFixture(rel), 'utf8');
    const format = formatOf(rel);
    const ref = normalize(decodeFile(rel));
    const stride = bytes.length < 20_000 ? 1 : Math.ceil(bytes.length / 20_000);
    for (let i = 0; i <= bytes.length; i += stride) {
      const r = createStreamReader(format);
      const evs = [...r.write(bytes.subarray(0, i)), ...r.write(bytes.subarray(i)), ...r.end()];
      expect(normalize(evs)).toEqual(ref);
    }
    // One byte at a time.
    const r = createStreamReader(format);
    const evs: StreamEvent[] = [];
    for (let i = 0; i < bytes.length; i++) evs.push(...r.write(bytes.subarray(i, i + 1)));
    evs.push(...r.end());
    expect(normalize(evs)).toEqual(ref);
  });

  const JSONL_FILES = ALL_FILES.filter((f) => f.endsWith('.jsonl'));

  test.each(JSONL_FILES)('%s: re-framed as CRLF SSE and split anywhere, same events as the .jsonl', (rel) => {
    const format = formatOf(rel);
    const ref = normalize(decodeFile(rel));
    const { payloads } = readPayloadLines(readFixture(rel));
    const sse = payloads
      .map((p) => {
        const data = typeof p === 'string' ? p : JSON.stringify(p);
        const name =
          typeof p === 'object' && p !== null && 'type' in p
            ? `event: ${String((p as { type: unknown }).type)}\r\n`
            : '';
        return `${name}data: ${data}\r\n\r\n`;
      })
      .join('');
    const bytes = Buffer.from(sse, 'utf8');
    const stride = Math.max(1, Math.floor(bytes.length / 400));
    for (let i = 0; i <= bytes.length; i += stride) {
      const r = createStreamReader(format);
      const evs = [...r.write(bytes.subarray(0, i)), ...r.write(bytes.subarray(i)), ...r.end()];
      expect(normalize(evs)).toEqual(ref);
    }
  });
});
