/**
 * Dynamo's dispatch events (ai-dynamo/dynamo #7114; SPEC §13): `event: tool_call_dispatch` before
 * the regular chunk with the same complete call is completion evidence; the regular chunk is never
 * doubled; a dispatch with empty or cut arguments (the #13972 shape: a backend that splits a call
 * makes Dynamo dispatch its first piece) is not evidence; `event: reasoning_dispatch` is ignored.
 * Through the stream reader, the engine (inferred and evidence-only) and `sluice replay`.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { TurnController } from '../../src/engine/controller';
import type { OutputEvent } from '../../src/release/output';
import { run as replayRun } from '../../src/cli/replay';
import { parseTrace } from '../../src/trace/trace';
import { createAdapter, createStreamReader, decodeRecording, detectFormat } from '../../src/wire';
import type { StreamEvent } from '../../src/wire/events';

const ARGS = '{"expression":"42 * 17"}';
const base = { id: 'chatcmpl-d', object: 'chat.completion.chunk', created: 1, model: 'qwen' };
const chunk = (delta: unknown, finish: string | null = null) => ({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
const data = (v: unknown) => `data: ${JSON.stringify(v)}\n\n`;
const named = (event: string, v: unknown) => `event: ${event}\ndata: ${JSON.stringify(v)}\n\n`;
const entry = (args: string, extra: Record<string, unknown> = { id: 'call-938200c8', type: 'function' }) => ({ index: 0, ...extra, function: { ...(extra.id ? { name: 'calculator' } : {}), arguments: args } });

/** The PR's own shape: dispatch, then the regular chunk with the whole call, text after it, then the finish. */
function prStream(): string[] {
  return [
    data(chunk({ role: 'assistant', content: '' })),
    named('reasoning_dispatch', { index: 0, reasoning_content: 'I should use the calculator.' }),
    named('tool_call_dispatch', { choice_index: 0, tool_call: entry(ARGS) }),
    data(chunk({ tool_calls: [entry(ARGS)] })),
    data(chunk({ content: 'Let me compute that.' })),
    data(chunk({}, 'tool_calls')),
    'data: [DONE]\n\n',
  ];
}

/** #13972: the backend split the call; Dynamo dispatched its first chunk (empty arguments), later pieces follow. */
function splitStream(firstArgs = ''): string[] {
  return [
    data(chunk({ role: 'assistant', content: '' })),
    named('tool_call_dispatch', { choice_index: 0, tool_call: entry(firstArgs) }),
    data(chunk({ tool_calls: [entry(firstArgs)] })),
    data(chunk({ tool_calls: [entry(ARGS.slice(firstArgs.length, 12), {})] })),
    data(chunk({ tool_calls: [entry(ARGS.slice(12), {})] })),
    data(chunk({ content: 'computing' })),
    data(chunk({}, 'tool_calls')),
    'data: [DONE]\n\n',
  ];
}

function read(parts: string[]): StreamEvent[] {
  const r = createStreamReader('dynamo');
  const out: StreamEvent[] = [];
  for (const p of parts) out.push(...r.write(p));
  out.push(...r.end());
  return out;
}

const types = (evs: StreamEvent[]) => evs.map((e) => e.type);
const fragments = (evs: StreamEvent[]) => evs.filter((e): e is StreamEvent & { type: 'call.fragment' } => e.type === 'call.fragment').map((e) => e.text).join('');
const warnings = (evs: StreamEvent[], code: string) => evs.filter((e) => e.type === 'warning' && (e as { code: string }).code === code);

describe('Dynamo tool_call_dispatch: the stream reader', () => {
  test("the PR's example: evidence right after the regular chunk's fragment, never doubled, before the finish", () => {
    const evs = read(prStream());
    expect(fragments(evs)).toBe(ARGS);
    const t = types(evs);
    const frag = t.indexOf('call.fragment');
    const complete = t.indexOf('call.complete');
    expect(complete).toBe(frag + 1);
    expect(t.filter((x) => x === 'call.complete')).toHaveLength(1);
    expect(complete).toBeLessThan(t.indexOf('text.delta'));
    expect(complete).toBeLessThan(t.indexOf('finish'));
    expect(evs.some((e) => e.type === 'stream.error' || e.type === 'warning')).toBe(false);
    // reasoning_dispatch repeats a block whose deltas were streamed: no event of its own.
    expect(t).not.toContain('thinking.delta');
  });

  test('#13972: a dispatch with empty arguments is not evidence (one warning), the pieces still arrive', () => {
    const evs = read(splitStream(''));
    expect(fragments(evs)).toBe(ARGS);
    expect(types(evs)).not.toContain('call.complete');
    expect(warnings(evs, 'dispatch_not_evidence')).toHaveLength(1);
  });

  test('#13972: a dispatch with cut arguments (not a JSON object) is not evidence', () => {
    const evs = read(splitStream('{"expr'));
    expect(fragments(evs)).toBe(ARGS);
    expect(types(evs)).not.toContain('call.complete');
    expect(warnings(evs, 'dispatch_not_evidence')).toHaveLength(1);
  });

  test('a regular chunk whose arguments differ from the dispatch: no evidence; a repeat dispatch changes nothing', () => {
    const evs = read([
      named('tool_call_dispatch', { choice_index: 0, tool_call: entry('{"expression":"1"}') }),
      named('tool_call_dispatch', { choice_index: 0, tool_call: entry('{"expression":"1"}') }),
      data(chunk({ tool_calls: [entry('{"expression":"2"}')] })),
      data(chunk({}, 'tool_calls')),
    ]);
    expect(fragments(evs)).toBe('{"expression":"2"}');
    expect(types(evs)).not.toContain('call.complete');
    expect(warnings(evs, 'dispatch_not_evidence')).toHaveLength(1);
  });

  test('the dispatched value arriving in two regular chunks completes at the second', () => {
    const evs = read([
      named('tool_call_dispatch', { choice_index: 0, tool_call: entry(ARGS) }),
      data(chunk({ tool_calls: [entry(ARGS.slice(0, 5))] })),
      data(chunk({ tool_calls: [entry(ARGS.slice(5), {})] })),
      data(chunk({}, 'tool_calls')),
    ]);
    const t = types(evs);
    expect(fragments(evs)).toBe(ARGS);
    expect(t.lastIndexOf('call.fragment') + 1).toBe(t.indexOf('call.complete'));
  });

  test('reasoning_dispatch in both spellings, and dispatches for other choices or without an index, are never errors', () => {
    const evs = read([
      named('reasoning_dispatch', { index: 0, reasoning: 'thinking' }),
      named('reasoning_dispatch', { index: 0, reasoning_content: 'thinking' }),
      named('tool_call_dispatch', { choice_index: 1, tool_call: entry(ARGS) }),
      data(chunk({ content: 'hi' })),
      data(chunk({}, 'stop')),
    ]);
    expect(evs.some((e) => e.type === 'stream.error')).toBe(false);
    expect(types(evs)).toEqual(['message.start', 'text.delta', 'finish', 'stream.end']);
    const bad = read([named('tool_call_dispatch', { choice_index: 0, tool_call: { id: 'x', function: { name: 'f', arguments: '{}' } } }), data(chunk({}, 'stop'))]);
    expect(warnings(bad, 'dispatch_not_evidence')).toHaveLength(1);
  });

  test('an in-process Dynamo client may push the annotated objects directly; detectFormat sees Dynamo', () => {
    const a = createAdapter('dynamo');
    const evs = [...a.push({ event: 'tool_call_dispatch', data: { choice_index: 0, tool_call: entry(ARGS) } }), ...a.push(chunk({ tool_calls: [entry(ARGS)] }))];
    expect(types(evs)).toContain('call.complete');
    expect(detectFormat(prStream().join(''))).toBe('dynamo');
    // decodeRecording on the SSE text gives the same events as the reader.
    expect(types(decodeRecording(prStream().join(''), 'dynamo'))).toEqual(types(read(prStream())));
  });
});

/** Feed a stream to a gateway-mode controller; note, per released call, how many stream events had been fed. */
function releaseAt(parts: string[], completion: 'inferred' | 'evidence-only'): { at: number[]; finishAt: number; inputs: unknown[] } {
  const ctrl = new TurnController({ mode: 'gateway', format: 'dynamo', completion });
  const at: number[] = [];
  const inputs: unknown[] = [];
  let fed = 0;
  let finishAt = -1;
  ctrl.events.on('output', (e: OutputEvent) => {
    if (e.type === 'tool_use') {
      at.push(fed);
      inputs.push(e.input);
    }
  });
  for (const ev of read(parts)) {
    if (ev.type === 'finish') finishAt = fed;
    ctrl.feed(ev);
    fed++;
  }
  return { at, finishAt, inputs };
}

describe('Dynamo tool_call_dispatch: the engine', () => {
  test('evidence-only: the dispatched call is released before the finish; without evidence only at the finish', () => {
    const pr = releaseAt(prStream(), 'evidence-only');
    expect(pr.inputs).toEqual([{ expression: '42 * 17' }]);
    expect(pr.at[0]).toBeLessThan(pr.finishAt);
    const split = releaseAt(splitStream(''), 'evidence-only');
    expect(split.inputs).toEqual([{ expression: '42 * 17' }]);
    expect(split.at[0]).toBeGreaterThanOrEqual(split.finishAt);
  });

  test('inferred: one release with the whole input either way (never doubled)', () => {
    for (const parts of [prStream(), splitStream(''), splitStream('{"expr')]) {
      const r = releaseAt(parts, 'inferred');
      expect(r.inputs).toEqual([{ expression: '42 * 17' }]);
      expect(r.at[0]).toBeLessThan(r.finishAt);
    }
  });
});

describe('Dynamo tool_call_dispatch: sluice replay', () => {
  const write = (chunks: string[]): string => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-dynamo-'));
    const f = path.join(dir, 'turn.sse');
    fs.writeFileSync(f, chunks.join(''));
    return f;
  };

  test('a raw .sse recording keeps the event names; evidence-only completes the call before the finish', async () => {
    const trace = parseTrace(prStream().join(''), { format: 'dynamo' });
    const lines = trace.attempts[0]!.lines;
    expect(lines.some((l) => l.kind === 'data' && (l.data as { event?: string }).event === 'tool_call_dispatch')).toBe(true);

    const out: string[] = [];
    const spy = jest.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => {
      out.push(String(s));
      return true;
    });
    try {
      const tools = write([JSON.stringify([{ name: 'calculator', kind: 'read', durationMs: 50, result: 'ok' }])]);
      for (const [parts, early] of [[prStream(), true], [splitStream(''), false]] as const) {
        out.length = 0;
        const code = await replayRun([write(parts), '--format', 'dynamo', '--completion', 'evidence-only', '--tools', tools, '--pace', '100', '--json']);
        expect(code).toBe(0);
        const report = JSON.parse(out.join('')) as { calls: { completeMs: number }[]; streamEndMs: number };
        const call = report.calls[0]!;
        if (early) expect(call.completeMs).toBeLessThan(report.streamEndMs - 100);
        else expect(call.completeMs).toBeGreaterThanOrEqual(report.streamEndMs - 100);
      }
    } finally {
      spy.mockRestore();
    }
  });
});
