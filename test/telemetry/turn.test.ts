/**
 * Library telemetry with the REAL OpenTelemetry SDK (BasicTracerProvider + InMemorySpanExporter,
 * AsyncLocalStorageContextManager, MeterProvider + InMemoryMetricExporter) around runTurn on
 * timed streams and real tools.
 */
import { SpanStatusCode, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { runTurn } from '../../src/engine/runTurn';
import * as N from '../../src/telemetry/names';
import { chatTurn, hrMs, makeTools, parentOf, play, registerOtel, tee } from './helpers';

const otel = registerOtel();
afterAll(() => otel.shutdown());
beforeEach(() => otel.spans.reset());

const byName = (spans: ReadableSpan[], name: string) => spans.filter((s) => s.name === name);

describe('spans', () => {
  test("tool spans are children of the embedder's span through the turn span; the tool's own span nests under its execute_tool span", async () => {
    const tools = makeTools(20);
    const stream = chatTurn([
      { name: 'read_file', args: { path: 'a.ts' } },
      { name: 'fail', args: {} },
      { name: 'edit_file', args: { path: 'b.ts', text: 'secret text' } },
    ]);
    const embedder = trace.getTracer('app');
    const { summary } = await embedder.startActiveSpan('app.request', async (span) => {
      try {
        return await runTurn({ format: 'openai-chat', stream: () => play(stream), tools, telemetry: { model: 'test-model' } });
      } finally {
        span.end();
      }
    });
    expect(summary.outcome).toBe('done');
    const spans = otel.spans.getFinishedSpans();
    const [app] = byName(spans, 'app.request');
    const [turn] = byName(spans, N.SPAN_TURN);
    expect(app).toBeDefined();
    expect(turn).toBeDefined();
    expect(parentOf(turn!)).toBe(app!.spanContext().spanId);
    expect(turn!.spanContext().traceId).toBe(app!.spanContext().traceId);

    const tool = (name: string) => byName(spans, `execute_tool ${name}`)[0]!;
    for (const name of ['read_file', 'fail', 'edit_file']) {
      const s = tool(name);
      expect(parentOf(s)).toBe(turn!.spanContext().spanId);
      expect(s.attributes[N.ATTR_GEN_AI_OPERATION_NAME]).toBe('execute_tool');
      expect(s.attributes[N.ATTR_GEN_AI_TOOL_NAME]).toBe(name);
      // No contents unless opted in.
      expect(s.attributes[N.ATTR_GEN_AI_TOOL_CALL_ARGUMENTS]).toBeUndefined();
      expect(s.attributes[N.ATTR_GEN_AI_TOOL_CALL_RESULT]).toBeUndefined();
    }
    expect(tool('read_file').attributes[N.ATTR_GEN_AI_TOOL_CALL_ID]).toBe('call_0');
    expect(tool('read_file').attributes[N.ATTR_CALL_EARLY]).toBe(true);
    expect(tool('edit_file').attributes[N.ATTR_CALL_EARLY]).toBe(false);
    expect(tool('read_file').attributes[N.ATTR_ERROR_TYPE]).toBeUndefined();
    expect(tool('fail').attributes[N.ATTR_ERROR_TYPE]).toBe('tool_error');
    expect(tool('fail').status.code).toBe(SpanStatusCode.ERROR);
    const [inner] = byName(spans, 'tool.inner');
    expect(parentOf(inner!)).toBe(tool('read_file').spanContext().spanId);

    // Events on the turn span: completion, release and result per call, the stream end.
    const events = turn!.events.map((e) => e.name);
    expect(events.filter((e) => e === N.EVENT_CALL_COMPLETE)).toHaveLength(3);
    expect(events.filter((e) => e === N.EVENT_CALL_RELEASED)).toHaveLength(3);
    expect(events.filter((e) => e === N.EVENT_CALL_RESULT)).toHaveLength(3);
    expect(events).toContain(N.EVENT_STREAM_END);
    expect(turn!.attributes[N.ATTR_TURN_OUTCOME]).toBe('done');
    expect(turn!.attributes[N.ATTR_GEN_AI_PROVIDER_NAME]).toBe('openai');
    expect(turn!.attributes[N.ATTR_GEN_AI_REQUEST_MODEL]).toBe('test-model');
    expect(turn!.attributes[N.ATTR_TURN_INVARIANT_VIOLATIONS]).toBe(0);
  });

  test('an early read: its execute_tool span starts ≥ 0.4 s before the stream ends', async () => {
    const stream = chatTurn([{ name: 'read_file', args: { path: 'a.ts' } }], { tail: 500 });
    const { summary } = await runTurn({ format: 'openai-chat', stream: () => play(stream), tools: makeTools(30) });
    const spans = otel.spans.getFinishedSpans();
    const [turn] = byName(spans, N.SPAN_TURN);
    const [read] = byName(spans, 'execute_tool read_file');
    const end = turn!.events.find((e) => e.name === N.EVENT_STREAM_END)!;
    expect(hrMs(end.time) - hrMs(read!.startTime)).toBeGreaterThanOrEqual(400);
    expect(summary.streamEndMs! - summary.calls[0]!.startedMs!).toBeGreaterThanOrEqual(400);
    // The tool span ended before the stream did (its result was hidden by the stream).
    expect(hrMs(read!.endTime)).toBeLessThan(hrMs(end.time));
  });

  test('recordContents: arguments and results on the tool span (opt-in)', async () => {
    const stream = chatTurn([{ name: 'read_file', args: { path: 'a.ts' } }]);
    await runTurn({ format: 'openai-chat', stream: () => play(stream), tools: makeTools(1), telemetry: { recordContents: true } });
    const [read] = byName(otel.spans.getFinishedSpans(), 'execute_tool read_file');
    expect(read!.attributes[N.ATTR_GEN_AI_TOOL_CALL_ARGUMENTS]).toBe('{"path":"a.ts"}');
    expect(read!.attributes[N.ATTR_GEN_AI_TOOL_CALL_RESULT]).toBe('contents of a.ts');
  });

  test('usage: summary.usage in AI SDK names and gen_ai.usage.* on the turn span', async () => {
    const stream = chatTurn([{ name: 'read_file', args: { path: 'a.ts' } }], { usage: true });
    const { summary } = await runTurn({ format: 'openai-chat', stream: () => play(stream), tools: makeTools(1) });
    expect(summary.usage).toEqual({ inputTokens: 120, outputTokens: 34, totalTokens: 154 });
    expect(summary.model).toBe('test-model');
    const [turn] = byName(otel.spans.getFinishedSpans(), N.SPAN_TURN);
    expect(turn!.attributes[N.ATTR_GEN_AI_USAGE_INPUT_TOKENS]).toBe(120);
    expect(turn!.attributes[N.ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]).toBe(34);
  });

  test('synthetic results, warnings, retries and aborts are events', async () => {
    // A denied call (no approver) and an unknown tool: synthetic results.
    const stream = chatTurn([
      { name: 'nope', args: {} },
      { name: 'read_file', args: { path: 'a.ts' } },
    ]);
    let attempt = 0;
    const ac = new AbortController();
    const { summary } = await runTurn({
      format: 'openai-chat',
      stream: async function* () {
        attempt++;
        if (attempt === 1) {
          yield stream[0]!.data;
          throw Object.assign(new Error('overloaded'), { status: 529 });
        }
        yield* play(stream);
      },
      tools: makeTools(1),
      policy: { retryBaseMs: 1 },
      signal: ac.signal,
    });
    expect(summary.attempts).toBe(2);
    const [turn] = byName(otel.spans.getFinishedSpans(), N.SPAN_TURN);
    const names = turn!.events.map((e) => e.name);
    expect(names).toContain(N.EVENT_ATTEMPT_RETRY);
    expect(names).toContain(N.EVENT_ATTEMPT_DISCARDED);
    const synthetic = turn!.events.filter((e) => e.name === N.EVENT_SYNTHETIC_RESULT);
    expect(synthetic.map((e) => e.attributes?.[N.ATTR_SYNTHETIC_REASON])).toEqual(['unknown_tool']);

    // An abort mid-stream: an abort event, the running tool's span gets its abort event.
    otel.spans.reset();
    const slow = chatTurn([{ name: 'read_file', args: { path: 'a.ts' } }], { tail: 300 });
    const p = runTurn({ format: 'openai-chat', stream: () => play(slow), tools: makeTools(500), signal: ac.signal });
    setTimeout(() => ac.abort(), 80);
    const aborted = await p;
    expect(aborted.summary.outcome).toBe('aborted');
    const spans = otel.spans.getFinishedSpans();
    const [t2] = byName(spans, N.SPAN_TURN);
    expect(t2!.events.map((e) => e.name)).toContain(N.EVENT_ABORT);
    const [read] = byName(spans, 'execute_tool read_file');
    expect(read!.events.map((e) => e.name)).toContain(N.EVENT_TOOL_ABORT);
    expect(read!.attributes[N.ATTR_ERROR_TYPE]).toBe('interrupted');
  });

  test('telemetry: { enabled: false } records nothing', async () => {
    const stream = chatTurn([{ name: 'read_file', args: { path: 'a.ts' } }]);
    const { summary } = await runTurn({ format: 'openai-chat', stream: () => play(stream), tools: makeTools(1), telemetry: { enabled: false } });
    expect(summary.outcome).toBe('done');
    // Only the tool's own span (scope test-tool), nothing from sluice.
    expect(otel.spans.getFinishedSpans().map((s) => s.instrumentationScope.name)).toEqual(['test-tool']);
  });
});

describe('shadow mode', () => {
  test("starts nothing early; shadowStartMs and shadowSavedMs match what 'safe' measures on the same stream (±20 ms)", async () => {
    const calls = [
      { name: 'read_file', args: { path: 'a.ts' } },
      { name: 'read_file', args: { path: 'b.ts' } },
      { name: 'edit_file', args: { path: 'c.ts', text: 'x' } },
    ];
    // Both turns read the same timed stream at the same moments (one timer loop feeds both), so
    // their time bases line up and a delayed timer delays both; a miss still gets one more try.
    const stream = chatTurn(calls, { gap: 5, tail: 250 });
    const once = async () => {
      otel.spans.reset();
      const [a, b] = tee(stream, 2);
      const [safe, shadow] = await Promise.all([
        runTurn({ format: 'openai-chat', stream: a!, tools: makeTools(200), policy: { earlyStart: 'safe' } }),
        runTurn({ format: 'openai-chat', stream: b!, tools: makeTools(200), policy: { earlyStart: 'shadow' } }),
      ]);
      // The safe turn's own estimate of its saving against post-stream dispatch.
      const turns = byName(otel.spans.getFinishedSpans(), N.SPAN_TURN);
      const safeSaved = turns.find((t) => t.attributes[N.ATTR_EARLY_START] === 'safe')!.attributes[N.ATTR_TURN_SAVED_MS] as number;
      const s = shadow.summary;
      const measured = s.turnDoneMs - safe.summary.turnDoneMs;
      const gaps = [
        ...s.calls.map((c, i) => Math.abs(c.shadowStartMs! - safe.summary.calls[i]!.startedMs!)),
        Math.abs(s.shadowSavedMs! - measured),
        Math.abs(safeSaved - measured),
      ];
      return { safe: safe.summary, s, gaps };
    };
    // Warm up (module loading and JIT on a cold process delay the first turn's chunks by a second).
    await runTurn({ format: 'openai-chat', stream: chatTurn(calls, { gap: 0, tail: 0 }).map((c) => c.data), tools: makeTools(1), policy: { earlyStart: 'shadow' } });
    let run = await once();
    if (Math.max(...run.gaps) > 20) run = await once();
    const { safe, s, gaps } = run;
    expect(s.outcome).toBe('done');
    for (const c of s.calls) expect(c.startedMs!).toBeGreaterThanOrEqual(s.streamEndMs!);
    // 'safe' really started the reads early (the comparison means something).
    expect(safe.calls[0]!.startedMs!).toBeLessThan(safe.streamEndMs! - 150);
    expect(s.shadowSavedMs!).toBeGreaterThan(100);
    expect(s.calls.every((c) => c.shadowStartMs !== undefined)).toBe(true);
    // shadowStartMs per call vs safe's startedMs; shadowSavedMs and safe's saved_ms vs the measured difference.
    for (const g of gaps) expect(g).toBeLessThanOrEqual(20);
    // On the spans: the turn's projected saving, one shadow event per run call.
    const turn = byName(otel.spans.getFinishedSpans(), N.SPAN_TURN).find((t) => t.attributes[N.ATTR_EARLY_START] === 'shadow');
    expect(turn!.attributes[N.ATTR_EARLY_START]).toBe('shadow');
    expect(turn!.attributes[N.ATTR_TURN_SHADOW_SAVED_MS]).toBe(s.shadowSavedMs);
    expect(turn!.events.filter((e) => e.name === N.EVENT_CALL_SHADOW)).toHaveLength(3);
    expect(safe.shadowSavedMs).toBeUndefined();
  });
});

describe('metrics', () => {
  test('tool duration, starts by early/post-stream, head start, release lag, synthetic results; invariant violations stay 0', async () => {
    const stream = chatTurn([
      { name: 'read_file', args: { path: 'a.ts' } },
      { name: 'nope', args: {} },
    ], { tail: 50 });
    await runTurn({ format: 'openai-chat', stream: () => play(stream), tools: makeTools(5), telemetry: { model: 'm-metrics' } });
    const label = (p: { attributes: Record<string, unknown> }) => p.attributes[N.ATTR_MODEL] === 'm-metrics';
    const duration = (await otel.points(N.METRIC_EXECUTE_TOOL_DURATION)).filter(label);
    // The unknown tool never runs (a classification problem): no duration, a synthetic result.
    expect(duration.map((p) => p.attributes[N.ATTR_GEN_AI_TOOL_NAME])).toEqual(['read_file']);
    expect(duration.every((p) => p.attributes[N.ATTR_FORMAT] === 'openai-chat')).toBe(true);
    const starts = (await otel.points(N.METRIC_TOOL_STARTS)).filter(label);
    expect(starts.find((p) => p.attributes[N.ATTR_START] === N.START_EARLY)?.value).toBeGreaterThanOrEqual(1);
    const head = (await otel.points(N.METRIC_HEAD_START)).filter(label);
    expect(head).toHaveLength(1);
    expect((head[0]!.value as { count: number; sum: number }).count).toBe(1);
    expect((head[0]!.value as { count: number; sum: number }).sum).toBeGreaterThan(0.02);
    expect((await otel.points(N.METRIC_RELEASE_LAG)).filter(label)).toHaveLength(1);
    const synthetic = (await otel.points(N.METRIC_SYNTHETIC_RESULTS)).filter(label);
    // Classification problems (unknown tool) are not runs: they are synthetic results only.
    expect(synthetic.map((p) => [p.attributes[N.ATTR_SYNTHETIC_REASON], p.value])).toEqual([['unknown_tool', 1]]);
    // The RFC's rollout signal, over every turn this file ran: present, and 0.
    const violations = await otel.points(N.METRIC_INVARIANT_VIOLATIONS);
    expect(violations.length).toBeGreaterThan(0);
    expect(violations.reduce((a, p) => a + (p.value as number), 0)).toBe(0);
    const turns = (await otel.points(N.METRIC_TURNS)).filter(label);
    expect(turns.map((p) => p.attributes[N.ATTR_TURN_OUTCOME])).toEqual(['done']);
  });
});
