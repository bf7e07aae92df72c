/**
 * Misuse fails loudly (SPEC §11): unknown formats and policy values reject before the stream is
 * opened; a stream of another provider's shape fails the turn with `format_mismatch` naming both
 * formats — in runTurn (SDK objects and raw SSE) and in `sluice replay`/`convert`/`analyze`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runTurn, type RunTurnOptions } from '../../src/engine/runTurn';
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
    ['earlyStart bogus', { policy: { earlyStart: 'bogus' as 'safe' } }, /^sluice: policy.earlyStart must be one of 'safe', 'none', 'all', 'shadow' \(got "bogus"\)$/],
    ['negative maxConcurrent', { policy: { maxConcurrent: -1 } }, /^sluice: policy.maxConcurrent must be an integer ≥ 1 \(got -1\)$/],
    ['zero maxAttempts', { policy: { maxAttempts: 0 } }, /^sluice: policy.maxAttempts must be an integer ≥ 1 \(got 0\)$/],
    ['negative retryBaseMs', { policy: { retryBaseMs: -10 } }, /^sluice: policy.retryBaseMs must be a non-negative number of ms/],
    ['NaN idleTimeoutMs', { policy: { idleTimeoutMs: Number.NaN } }, /^sluice: policy.idleTimeoutMs must be/],
    ['onAbort typo', { policy: { onAbort: 'comit' as 'commit' } }, /^sluice: policy.onAbort must be one of 'commit', 'drop'/],
    ['completion typo', { policy: { completion: 'inferrd' as 'inferred' } }, /^sluice: policy.completion must be one of/],
    ['unknown policy key', { policy: { earlystart: 'none' } as never }, /^sluice: unknown policy option "earlystart"/],
    ['tools missing', { tools: undefined as never }, /^sluice: tools must be an array/],
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

  test('every value the docs name is accepted', async () => {
    for (const earlyStart of ['safe', 'none', 'all', 'shadow'] as const) {
      const { summary } = await runTurn({ format: 'openai-chat', stream: ['[DONE]'], tools: [], policy: { earlyStart, maxConcurrent: Infinity, toolTimeoutMs: 0 } });
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
