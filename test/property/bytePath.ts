import fc from 'fast-check';
import { VirtualClock } from '../../src/engine/clock';
import { type CompletionMode, TurnController } from '../../src/engine/controller';
import type { OutputEvent } from '../../src/release/output';
import type { StreamEvent } from '../../src/wire/events';
import { createStreamReader } from '../../src/wire';

/**
 * Generators, wire builders and the oracle for the byte-path properties.
 *
 * A scenario is a list of calls (id, name, argument text) written to the wire in pieces. The oracle
 * is "parse at the end": a call is released iff it has an id and a name and its whole argument
 * text is a JSON object (or is empty: `{}`), with exactly that input; released calls come out in
 * index order, once each. Whatever the fragmentation, interleaving, pings, duplicated evidence or
 * cut, the engine must release exactly the oracle's calls (for a cut stream: the oracle of what was
 * received).
 */

export interface GenCall {
  id: string;
  name: string;
  /** The argument text, as the model wrote it. */
  args: string;
  /** Cut points into `args` (code-unit offsets): the argument pieces on the wire. */
  cuts: number[];
  /** The name arrives in a later chunk than the id (late identity). */
  lateName: boolean;
}

// ---------------------------------------------------------------- generators

/** Strings with multi-byte UTF-8 and astral characters (surrogate pairs in JS). */
const text = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  { weight: 2, arbitrary: fc.constantFrom('é', 'ß', '中文', '😀', '👩‍👩‍👧', 'a\u0000b', '"quoted"', '\\', '\n\t', '𝄞x', 'ﬀ') },
);
const jsonValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    text,
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(text, tie('value'), { maxKeys: 3 }),
  ),
})).value;

/** Argument text: mostly JSON objects (with random whitespace), sometimes empty, non-object or broken. */
export const argsText: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: fc.tuple(fc.dictionary(text, jsonValue, { maxKeys: 4 }), fc.constantFrom(undefined, 1, '\t')).map(([o, sp]) => JSON.stringify(o, null, sp)) },
  { weight: 1, arbitrary: fc.constantFrom('', '  ') },
  { weight: 1, arbitrary: fc.constantFrom('[1,2]', 'null', '42', '"x"', 'true') },
  // Broken: never closes, or invalid inside. (Trailing text after a closed object is a different
  // rule — the call completes at the close and the rest is a late fragment — so it is not here.)
  { weight: 1, arbitrary: fc.constantFrom('{"a":', '{"a":1,}', '{"a" 1}', '{"a":"\\x"}', '{"a":[1}') },
);

export const genCall = (k: number): fc.Arbitrary<GenCall> =>
  argsText.chain((args) =>
    fc.record({
      id: fc.constant(`call_${k}`),
      name: fc.constantFrom('read_file', 'grep', 'web_fetch'),
      args: fc.constant(args),
      cuts: fc.uniqueArray(fc.integer({ min: 1, max: Math.max(1, args.length - 1) }), { maxLength: Math.min(6, args.length) }).map((c) =>
        c.filter((x) => x < args.length).sort((a, b) => a - b),
      ),
      lateName: fc.boolean(),
    }),
  );

export const genCalls: fc.Arbitrary<GenCall[]> = fc
  .integer({ min: 1, max: 4 })
  .chain((n) => fc.tuple(...Array.from({ length: n }, (_, k) => genCall(k))));

export function pieces(c: GenCall): string[] {
  const out: string[] = [];
  let last = 0;
  for (const x of c.cuts) {
    out.push(c.args.slice(last, x));
    last = x;
  }
  out.push(c.args.slice(last));
  return out.filter((p) => p.length > 0);
}

// ---------------------------------------------------------------- oracle

export interface Released {
  index: number;
  id: string;
  name: string;
  input: Record<string, unknown>;
}

/** What a call looks like after some (or all) of its wire pieces arrived. */
export interface Received {
  index: number;
  id?: string;
  name?: string;
  args: string;
}

/** Parse at the end (SPEC §5.1, §5.4, §5.8). */
export function oracle(received: Received[]): Released[] {
  const out: Released[] = [];
  for (const r of [...received].sort((a, b) => a.index - b.index)) {
    if (!r.id || !r.name) continue;
    let input: unknown;
    if (r.args.trim() === '') input = {};
    else {
      try {
        input = JSON.parse(r.args);
      } catch {
        continue;
      }
    }
    if (input === null || typeof input !== 'object' || Array.isArray(input)) continue;
    out.push({ index: r.index, id: r.id, name: r.name, input: input as Record<string, unknown> });
  }
  return out;
}

// ---------------------------------------------------------------- the engine side

export interface EngineRun {
  released: Released[];
  outputs: OutputEvent[];
  ended: boolean;
  warnings: string[];
}

export function newEngine(completion: CompletionMode = 'inferred') {
  const c = new TurnController({ mode: 'gateway', completion, clock: new VirtualClock() });
  const run: EngineRun = { released: [], outputs: [], ended: false, warnings: [] };
  c.events.on('output', (e) => {
    run.outputs.push(e);
    if (e.type === 'tool_use') run.released.push({ index: e.index, id: e.backendId, name: e.name, input: e.input });
    if (e.type === 'end' || e.type === 'error') run.ended = true;
  });
  c.events.on('warning', (w) => run.warnings.push(w.code));
  return { controller: c, run };
}

/** The properties every run must have, whatever the oracle. */
export function structuralProblems(run: EngineRun, finished = true): string[] {
  const problems: string[] = [];
  const idx = run.released.map((r) => r.index);
  if (new Set(idx).size !== idx.length) problems.push(`a call was released twice: ${idx.join(',')}`);
  for (let k = 1; k < idx.length; k++) if (idx[k]! <= idx[k - 1]!) problems.push(`released out of model order: ${idx.join(',')}`);
  if (!run.ended) problems.push('the message never ended (no end output)');
  if (!finished && run.outputs.some((e) => e.type === 'end')) problems.push('a stream without its finish ended successfully (SPEC §12)');
  if (!finished && !run.outputs.some((e) => e.type === 'error')) problems.push('a stream without its finish did not end with an error (SPEC §12)');
  const end = run.outputs.filter((e) => e.type === 'end');
  if (end.length > 1) problems.push('two end outputs');
  const e0 = end[0];
  if (e0 && e0.type === 'end' && e0.released !== run.released.length) problems.push(`end says ${e0.released} released, saw ${run.released.length}`);
  return problems;
}

// ---------------------------------------------------------------- OpenAI chat on the wire

export interface ChatChunk {
  /** Which call this chunk belongs to (-1 for non-call chunks). */
  call: number;
  json: unknown;
}

/** Per-call chunk sequences: identity first (name possibly late), then the argument pieces. */
export function chatChunks(calls: GenCall[]): ChatChunk[][] {
  return calls.map((c, index) => {
    const ps = pieces(c);
    const chunks: ChatChunk[] = [];
    const tc = (fn: Record<string, unknown>, id?: string) => ({
      call: index,
      json: { id: 'chatcmpl-1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { tool_calls: [{ index, ...(id ? { id, type: 'function' } : {}), function: fn }] } }] },
    });
    if (c.lateName) {
      chunks.push(tc({ arguments: ps[0] ?? '' }, c.id));
      for (const p of ps.slice(1)) chunks.push(tc({ arguments: p }));
      // The name comes last, after every argument piece: the call is complete before it is ready.
      chunks.push(tc({ name: c.name }));
    } else {
      chunks.push(tc({ name: c.name, arguments: ps[0] ?? '' }, c.id));
      for (const p of ps.slice(1)) chunks.push(tc({ arguments: p }));
    }
    return chunks;
  });
}

/** Merge per-call sequences in the order given by `picks` (each pick chooses a non-empty queue). */
export function interleave<T>(queues: T[][], picks: number[], firstInOrder: boolean): T[] {
  const qs = queues.map((q) => [...q]);
  const out: T[] = [];
  let opened = 0;
  let p = 0;
  while (qs.some((q) => q.length > 0)) {
    const avail = qs
      .map((q, k) => k)
      .filter((k) => qs[k]!.length > 0 && (!firstInOrder || k <= opened));
    const k = avail[(picks[p++ % Math.max(1, picks.length)] ?? 0) % avail.length]!;
    out.push(qs[k]!.shift()!);
    if (k === opened) opened++;
  }
  return out;
}

export interface SseEvent {
  /** Exact bytes of this SSE event, including its terminating blank line. */
  bytes: Uint8Array;
  /** Offset (within `bytes`) after which the event is dispatched: the end of its blank line's first terminator byte. */
  dispatchAt: number;
  /** The chat chunk it carries, if any (pings and [DONE] carry none). */
  chunk?: ChatChunk;
}

const enc = new TextEncoder();

export function sseEvent(data: string, crlf: boolean, chunk?: ChatChunk): SseEvent {
  const nl = crlf ? '\r\n' : '\n';
  const s = `data: ${data}${nl}${nl}`;
  const bytes = enc.encode(s);
  return { bytes, dispatchAt: bytes.length - (crlf ? 1 : 0), chunk };
}

export function sseComment(crlf: boolean): SseEvent {
  const nl = crlf ? '\r\n' : '\n';
  const bytes = enc.encode(`: ping${nl}${nl}`);
  return { bytes, dispatchAt: bytes.length };
}

export function concat(parts: Uint8Array[]): Uint8Array {
  const total = parts.reduce((a, p) => a + p.length, 0);
  const out = new Uint8Array(total);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** Feed `bytes` split at `cuts` through the OpenAI-chat stream reader into a fresh engine. */
export function runChatBytes(bytes: Uint8Array, cuts: number[]): EngineRun {
  const { controller, run } = newEngine('inferred');
  const reader = createStreamReader('openai-chat');
  const feed = (evs: StreamEvent[]) => {
    for (const e of evs) controller.feed(e);
  };
  let last = 0;
  for (const x of [...cuts, bytes.length]) {
    if (x <= last) continue;
    feed(reader.write(bytes.subarray(last, x)));
    last = x;
  }
  feed(reader.end());
  return run;
}

/** Replay chat chunks on an oracle: what each call looks like after `chunks`. */
export function receivedFromChat(chunks: ChatChunk[]): Received[] {
  const out = new Map<number, Received>();
  for (const ch of chunks) {
    if (ch.call < 0) continue;
    const r = out.get(ch.call) ?? { index: ch.call, args: '' };
    const json = ch.json as { choices: Array<{ delta: { tool_calls: Array<{ id?: string; function: { name?: string; arguments?: string } }> } }> };
    const tc = json.choices[0]!.delta.tool_calls[0]!;
    if (tc.id) r.id = tc.id;
    if (tc.function.name) r.name = tc.function.name;
    if (tc.function.arguments) r.args += tc.function.arguments;
    out.set(ch.call, r);
  }
  return [...out.values()];
}

// ---------------------------------------------------------------- chat scenarios

export interface ChatScenario {
  calls: GenCall[];
  /** Interleaving choices. */
  picks: number[];
  /** Where `: ping` comments go (positions among the events). */
  pings: number[];
  crlf: boolean;
  finish: boolean;
  done: boolean;
  /** Byte split points, as fractions of the stream length. */
  splits: number[];
}

/** A position as a fraction of a length, uniform (no bias toward 0: a cut at 0 tests nothing). */
export const frac: fc.Arbitrary<number> = fc.noBias(fc.integer({ min: 0, max: 1000 }).map((x) => x / 1000));

export const chatScenario: fc.Arbitrary<ChatScenario> = genCalls.chain((calls) =>
  fc.record({
    calls: fc.constant(calls),
    picks: fc.array(fc.nat({ max: 7 }), { maxLength: 40 }),
    pings: fc.array(fc.nat({ max: 40 }), { maxLength: 4 }),
    crlf: fc.boolean(),
    finish: fc.boolean(),
    done: fc.boolean(),
    splits: fc.array(frac, { maxLength: 10 }),
  }),
);

export function chatEvents(s: ChatScenario, firstInOrder = true): SseEvent[] {
  const chunks: ChatChunk[] = interleave(chatChunks(s.calls), s.picks, firstInOrder);
  const events = chunks.map((ch) => sseEvent(JSON.stringify(ch.json), s.crlf, ch));
  for (const p of s.pings) events.splice(p % (events.length + 1), 0, sseComment(s.crlf));
  if (s.finish) {
    events.push(sseEvent(JSON.stringify({ id: 'chatcmpl-1', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] }), s.crlf));
  }
  if (s.done) events.push(sseEvent('[DONE]', s.crlf));
  return events;
}

/** Build the scenario's bytes (cut at `cutFrac` of its length), run them, and compute the oracle. */
export function chatCheck(s: ChatScenario, cutFrac?: number, firstInOrder = true): { expected: Released[]; released: Released[]; problems: string[] } {
  const events = chatEvents(s, firstInOrder);
  let bytes = concat(events.map((e) => e.bytes));
  // What a cut stream delivered: the events whose blank line arrived.
  let received = events;
  if (cutFrac !== undefined) {
    const cut = Math.floor(cutFrac * bytes.length);
    bytes = bytes.subarray(0, cut);
    let off = 0;
    received = events.filter((e) => {
      const ok = off + e.dispatchAt <= cut;
      off += e.bytes.length;
      return ok;
    });
  }
  const chunks = received.flatMap((e) => (e.chunk ? [e.chunk] : []));
  const cuts = s.splits.map((f) => Math.floor(f * bytes.length));
  const run = runChatBytes(bytes, cuts);
  // The finish chunk is the last event before [DONE]: received when the whole stream was.
  const finished = s.finish && received.length >= events.length - (s.done ? 1 : 0);
  return { ...unfinishedRule(oracle(receivedFromChat(chunks)), run, finished), problems: structuralProblems(run, finished) };
}

/**
 * SPEC §12: a stream that ended without its finish is cut, not finished: what was released before
 * the cut stays released (an ordered prefix of what "parse at the end" would release) and nothing
 * more is released at its end; the message ends with an error, never with an end.
 */
export function unfinishedRule(oracleReleased: Released[], run: EngineRun, finished: boolean): { expected: Released[]; released: Released[] } {
  if (finished) return { expected: oracleReleased, released: run.released };
  return { expected: oracleReleased.slice(0, run.released.length), released: run.released };
}

