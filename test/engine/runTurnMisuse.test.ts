/**
 * Misuse fails loudly (SPEC §11): unknown formats and policy values reject before the stream is
 * opened; a stream of another provider's shape fails the turn with `format_mismatch` naming both
 * formats — in runTurn (SDK objects and raw SSE) and in `sluice replay`/`convert`/`analyze`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runTurn, type RunTurnOptions } from '../../src/engine/runTurn';
import { defineTool } from '../../src/execute/tools';
import { resumeTurn } from '../../src/engine/resume';
import { MemoryJournalStore } from '../../src/journal/memoryStore';
import { registerTextParsers } from '../../src/parsers';
import { parseTrace } from '../../src/trace/trace';
import { formatsCompatible } from '../../src/wire/detect';
import type { WireFormat } from '../../src/wire/events';
import { runCli } from '../helpers/cli';
import { FIXTURES_DIR, haveFixtures } from '../helpers/fixtures';

const EXAMPLES = path.resolve(__dirname, '..', '..', 'examples');
registerTextParsers(); // format 'text:hermes'

describe('misuse rejects before the stream is opened', () => {
  const cases: Array<[string, Partial<RunTurnOptions>, RegExp]> = [
    ['misspelled format', { format: 'anthropc' as WireFormat }, /^sluice: unknown format "anthropc" \(expected one of anthropic, openai-chat/],
    ['unknown text family', { format: 'text:nosuch' }, /^sluice: format "text:nosuch": no parser registered/],
    ['earlyStart bogus', { policy: { earlyStart: 'bogus' as 'safe' } }, /^sluice: policy.earlyStart must be one of 'safe', 'none', 'all', 'shadow' \(got the string 'bogus'\)$/],
    ['negative maxConcurrent', { policy: { maxConcurrent: -1 } }, /^sluice: policy.maxConcurrent must be an integer ≥ 1 \(got -1\)$/],
    ['zero maxAttempts', { policy: { maxAttempts: 0 } }, /^sluice: policy.maxAttempts must be an integer ≥ 1 \(got 0\)$/],
    ['negative retryBaseMs', { policy: { retryBaseMs: -10 } }, /^sluice: policy.retryBaseMs must be a non-negative number of ms/],
    ['NaN idleTimeoutMs', { policy: { idleTimeoutMs: Number.NaN } }, /^sluice: policy.idleTimeoutMs must be/],
    ['onAbort typo', { policy: { onAbort: 'comit' as 'commit' } }, /^sluice: policy.onAbort must be one of 'commit', 'drop'/],
    ['completion typo', { policy: { completion: 'inferrd' as 'inferred' } }, /^sluice: policy.completion must be one of/],
    ['unknown policy key', { policy: { earlystart: 'none' } as never }, /^sluice: unknown policy option "earlystart"/],
    ['tools missing', { tools: undefined as never }, /^sluice: tools must be an array/],
    // Unknown names: the known ones listed, the nearest suggested.
    ['misspelled top-level option', { polcy: { maxAttempts: 1 } } as never, /^sluice: unknown runTurn option "polcy" \(did you mean policy\?\) \(known: format, stream, tools, policy,/],
    ['unknown top-level option', { retries: 3 } as never, /^sluice: unknown runTurn option "retries" \(known: format, stream/],
    ['unknown event name in on', { on: { 'tool.started': () => undefined } as never }, /^sluice: unknown event name in on "tool.started" \(did you mean tool.start\?\) \(known: output, call.ready/],
    ['event handler not a function', { on: { 'tool.start': 'log' as never } }, /^sluice: on\['tool.start'\] must be a function \(got the string 'log'\)$/],
    ['telemetry key typo', { telemetry: { recordContent: true } as never }, /^sluice: unknown telemetry option "recordContent" \(did you mean recordContents\?\)/],
    ['telemetry flag as a string', { telemetry: { recordContents: 'yes' as never } }, /^sluice: telemetry.recordContents must be a boolean \(got the string 'yes'\)$/],
    ['policy key typo suggests', { policy: { maxAttempt: 2 } as never }, /^sluice: unknown policy option "maxAttempt" \(did you mean maxAttempts\?\)/],
    // Wrong types named as types.
    ['maxConcurrent as a string', { policy: { maxConcurrent: '4' as never } }, /^sluice: policy.maxConcurrent must be an integer ≥ 1 \(got the string '4'\)$/],
    ['maxAttempts as a fraction', { policy: { maxAttempts: 2.5 } }, /^sluice: policy.maxAttempts must be an integer ≥ 1 \(got 2.5\)$/],
    ['retryJitter typo', { policy: { retryJitter: 'ful' as never } }, /^sluice: policy.retryJitter must be one of 'full', 'decorrelated', 'none' \(got the string 'ful'\) \(did you mean 'full'\?\)$/],
    ['negative retryMaxDelayMs', { policy: { retryMaxDelayMs: -1 } }, /^sluice: policy.retryMaxDelayMs must be a non-negative number of ms \(got -1\)$/],
    ['policy as a string', { policy: 'safe' as never }, /^sluice: policy must be an object \(TurnPolicy\) \(got the string 'safe'\)$/],
    ['approve not a function', { approve: true as never }, /^sluice: approve must be a function .* \(got the boolean true\)$/],
    ['signal not an AbortSignal', { signal: {} as never }, /^sluice: signal must be an AbortSignal \(got an object\)$/],
    ['format typo suggests', { format: 'openai-chta' as WireFormat }, /^sluice: unknown format "openai-chta" .* \(did you mean openai-chat\?\)$/],
    // A tool without run: named by its position and name.
    ['tool without run', { tools: [{ name: 'edit_file', kind: 'edit', parameters: { type: 'object' } }] as never }, /^sluice: tools\[0\] \("edit_file"\) has no run function \(got undefined\)/],
    ['tool that is not an object', { tools: ['read_file'] as never }, /^sluice: tools\[0\] must be a tool \(defineTool\(…\)\) \(got the string 'read_file'\)$/],
    // History that is not neutral: the message, the field and the converter.
    [
      'OpenAI chat history',
      {
        history: [
          { role: 'user', content: 'read a' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{}' } }] },
        ] as never,
      },
      /^sluice: history\[1\].calls must be an array of \{ id, name, input \} \(got undefined\): it looks like an OpenAI chat message \(convert with fromOpenAIChatMessages\)$/,
    ],
    ['OpenAI system message', { history: [{ role: 'system', content: 'be brief' }] as never }, /^sluice: history\[0\].role must be 'user', 'assistant' or 'tool' \(got the string 'system'\): it looks like an OpenAI chat message \(convert with fromOpenAIChatMessages\)$/],
    [
      'Anthropic history',
      { history: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: 'x' }] }] as never },
      /^sluice: history\[0\].content must be a string \(got an array\): it looks like an Anthropic message \(convert with fromAnthropicMessages\)$/,
    ],
    ['Gemini history', { history: [{ role: 'model', parts: [{ text: 'hi' }] }] as never }, /it looks like a Gemini content \(convert with fromGeminiContents\)$/],
    ['Responses history', { history: [{ type: 'function_call', call_id: 'c1', name: 'x', arguments: '{}' }] as never }, /^sluice: history\[0\].role .*it looks like an OpenAI Responses input item \(convert with fromOpenAIResponsesInput\)$/],
    ['OpenAI tool message', { history: [{ role: 'tool', tool_call_id: 'c1', content: 'x' }] as never }, /^sluice: history\[0\].results must be an array .* \(convert with fromOpenAIChatMessages\)$/],
    ['history not an array', { history: { role: 'user' } as never }, /^sluice: history must be an array of messages \(got an object\)$/],
    ['bad call in neutral history', { history: [{ role: 'assistant', content: '', calls: [{ id: 1, name: 'x', input: {} }] }] as never }, /^sluice: history\[0\].calls\[0\].id must be a string \(got the number 1\)$/],
  ];
  test.each(cases)('%s', async (_, over, message) => {
    let opened = 0;
    const opts = {
      format: 'openai-chat',
      stream: () => {
        opened++;
        return ['[DONE]'];
      },
      tools: [],
      ...over,
    } as RunTurnOptions;
    await expect(runTurn(opts)).rejects.toThrow(message);
    expect(opened).toBe(0);
  });

  test('resumeTurn checks the options it shares with runTurn before the journal is touched', async () => {
    const store = new MemoryJournalStore();
    let leased = 0;
    const lease = store.lease.bind(store);
    store.lease = (...args: Parameters<MemoryJournalStore['lease']>) => {
      leased++;
      return lease(...args);
    };
    await expect(resumeTurn({ store, turn: 't1', tools: [], on: { 'tool.started': () => undefined } as never })).rejects.toThrow(
      /^sluice: unknown event name in on "tool.started" \(did you mean tool.start\?\)/,
    );
    await expect(resumeTurn({ store, turn: 't1', tools: [], policy: { maxConcurrent: '4' as never } })).rejects.toThrow(
      /^sluice: policy.maxConcurrent must be an integer ≥ 1 \(got the string '4'\)$/,
    );
    expect(leased).toBe(0);
  });

  test('defineTool without run fails at defineTool, naming the tool', () => {
    const input = { '~standard': { version: 1, vendor: 'test', validate: (v: unknown) => ({ value: v }) } };
    expect(() => defineTool({ name: 'edit_file', kind: 'edit', description: 'edit', input, jsonSchema: { type: 'object' } } as never)).toThrow(
      /^defineTool: tool edit_file: run is required \(an async function \(input, ctx\) => result\)$/,
    );
  });

  test('every value the docs name is accepted', async () => {
    for (const earlyStart of ['safe', 'none', 'all', 'shadow'] as const) {
      const { summary } = await runTurn({
        format: 'openai-chat',
        stream: [{ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'ok' }, finish_reason: 'stop' }] }, '[DONE]'],
        tools: [],
        policy: { earlyStart, maxConcurrent: Infinity, toolTimeoutMs: 0, retryJitter: 'decorrelated', retryMaxDelayMs: Infinity },
        on: { 'tool.start': () => undefined, 'turn.done': () => undefined },
        telemetry: { recordContents: false, enabled: false },
        history: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: '', calls: [{ id: 'c1', name: 'read_file', input: { path: 'a' } }] },
          { role: 'tool', results: [{ callId: 'c1', name: 'read_file', ok: true, content: 'x' }] },
        ],
      });
      expect(summary.outcome).toBe('done');
    }
  });
});

// ------------------------------------------------------------------ format_mismatch

/** The first attempt's payloads of a recording. */
function payloadsOf(file: string): unknown[] {
  const trace = parseTrace(fs.readFileSync(file, 'utf8'));
  return trace.attempts[0]!.lines.flatMap((l) => (l.kind === 'data' ? [l.data] : []));
}

const AI_SDK_PARTS: unknown[] = [
  { type: 'start' },
  { type: 'start-step', request: {}, warnings: [] },
  { type: 'tool-input-start', id: 'c1', toolName: 'read_file' },
  { type: 'tool-input-delta', id: 'c1', delta: '{"path":"a"}' },
  { type: 'tool-input-end', id: 'c1' },
  { type: 'finish-step', finishReason: 'tool-calls', usage: { inputTokens: 1, outputTokens: 1 } },
  { type: 'finish', finishReason: 'tool-calls', totalUsage: { inputTokens: 1, outputTokens: 1 } },
];

const SOURCES: Array<{ format: WireFormat; payloads: () => unknown[] }> = [
  { format: 'anthropic', payloads: () => payloadsOf(path.join(EXAMPLES, 'early-call.anthropic.trace.jsonl')) },
  { format: 'openai-chat', payloads: () => payloadsOf(path.join(EXAMPLES, 'early-call.openai-chat.trace.jsonl')) },
  { format: 'openai-responses', payloads: () => payloadsOf(path.join(EXAMPLES, 'early-call.openai-responses.trace.jsonl')) },
  { format: 'gemini', payloads: () => payloadsOf(path.join(EXAMPLES, 'early-call.gemini.trace.jsonl')) },
  { format: 'text:hermes', payloads: () => payloadsOf(path.join(EXAMPLES, 'early-call.text-hermes.trace.jsonl')) },
  { format: 'ai-sdk', payloads: () => AI_SDK_PARTS },
  ...(haveFixtures ? [{ format: 'dynamo' as WireFormat, payloads: () => payloadsOf(path.join(FIXTURES_DIR, 'dynamo', 'agent-harness', 'parallel-tools.sse')) }] : []),
];
const DECLARED: WireFormat[] = ['anthropic', 'openai-chat', 'openai-responses', 'gemini', 'dynamo', 'ai-sdk', 'text:hermes'];

/** The shape family a source's payloads show (text families and Dynamo's harness stream are chat chunks). */
const shapeOf = (f: WireFormat): WireFormat => (f.startsWith('text:') || f === 'dynamo' ? 'openai-chat' : f);

const toSse = (payloads: unknown[]) => payloads.map((p) => `data: ${typeof p === 'string' ? p : JSON.stringify(p)}\n\n`).join('');

describe('format_mismatch: another provider’s stream fails the turn naming both formats', () => {
  const pairs = SOURCES.flatMap((s) => DECLARED.filter((d) => !formatsCompatible(d, shapeOf(s.format))).map((d) => [s.format, d, s] as const));

  test('there are cross pairs for every source', () => {
    expect(new Set(pairs.map((p) => p[0])).size).toBe(SOURCES.length);
    expect(pairs.length).toBeGreaterThanOrEqual(30);
  });

  test.each(pairs.map(([from, to, s]) => [from, to, s]))('%s payloads as format %s', async (_from, declared, source) => {
    const seen = shapeOf(source.format);
    const expectMismatch = (summary: Awaited<ReturnType<typeof runTurn>>['summary']) => {
      expect(summary.outcome).toBe('failed');
      expect(summary.error?.type).toBe('format_mismatch');
      expect(summary.error?.message).toBe(`format_mismatch: the stream looks like "${seen}" but the declared format is "${declared}"`);
      expect(summary.calls).toEqual([]);
    };
    // SDK objects.
    const objects = await runTurn({ format: declared, stream: source.payloads(), tools: [] });
    expectMismatch(objects.summary);
    // Raw SSE bytes (the AI SDK has no byte form).
    if (declared !== 'ai-sdk' && source.format !== 'ai-sdk') {
      const raw = await runTurn({ format: declared, stream: [Buffer.from(toSse(source.payloads()))], tools: [] });
      expectMismatch(raw.summary);
    }
  });

  test('compatible pairs still run: chat chunks under dynamo and text:hermes', async () => {
    const chat = payloadsOf(path.join(EXAMPLES, 'early-call.openai-chat.trace.jsonl'));
    for (const format of ['dynamo', 'openai-chat'] as const) {
      const { summary } = await runTurn({ format, stream: chat, tools: [] });
      expect(summary.outcome).toBe('done');
      expect(summary.calls.length).toBeGreaterThan(0);
    }
  });
});

describe('format_mismatch in the CLI: one line, exit 1', () => {
  const file = path.join(EXAMPLES, 'early-call.anthropic.trace.jsonl');
  test.each([
    ['replay', ['replay', file, '--format', 'openai-chat']],
    ['convert', ['convert', file, '--to', 'anthropic', '--format', 'openai-responses']],
    ['analyze', ['analyze', file, '--format', 'gemini']],
  ])('sluice %s', async (_, argv) => {
    const { code, err } = await runCli(argv);
    expect(code).toBe(1);
    const lines = err.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/format_mismatch: the stream looks like "anthropic" but the declared format is "(openai-chat|openai-responses|gemini)"/);
  });
});
