import type { StreamEvent } from '../../src/wire/events';
import { createByteParser, createTextParser } from '../../src/parsers';
import type { ParserOptions, ToolSpecLike } from '../../src/parsers';
import { prng } from '../../bench/prng';
export { prng };

/** Merge adjacent text / thinking deltas and adjacent fragments of the same call. */
export function mergeEvents(evs: readonly StreamEvent[]): StreamEvent[] {
  const out: StreamEvent[] = [];
  for (const e of evs) {
    const last = out[out.length - 1];
    if (last && e.type === last.type) {
      if (e.type === 'text.delta' || e.type === 'thinking.delta') {
        out[out.length - 1] = { type: e.type, text: (last as { text: string }).text + e.text };
        continue;
      }
      if (e.type === 'call.fragment' && last.type === 'call.fragment' && last.index === e.index) {
        out[out.length - 1] = { type: 'call.fragment', index: e.index, text: last.text + e.text };
        continue;
      }
    }
    out.push(e);
  }
  return out;
}

export interface CallSummary {
  index: number;
  id?: string;
  name?: string;
  args: string;
  completes: number;
}

export interface Summary {
  text: string;
  thinking: string;
  calls: CallSummary[];
  warnings: string[];
  finish?: string;
}

export function summarize(evs: readonly StreamEvent[]): Summary {
  const s: Summary = { text: '', thinking: '', calls: [], warnings: [] };
  const call = (i: number): CallSummary => {
    let c = s.calls.find((x) => x.index === i);
    if (!c) {
      c = { index: i, args: '', completes: 0 };
      s.calls.push(c);
      s.calls.sort((a, b) => a.index - b.index);
    }
    return c;
  };
  for (const e of evs) {
    switch (e.type) {
      case 'text.delta':
        s.text += e.text;
        break;
      case 'thinking.delta':
        s.thinking += e.text;
        break;
      case 'call.identity': {
        const c = call(e.index);
        if (e.id) c.id = e.id;
        if (e.name) c.name = e.name;
        break;
      }
      case 'call.fragment':
        call(e.index).args += e.text;
        break;
      case 'call.complete':
        call(e.index).completes++;
        break;
      case 'warning':
        s.warnings.push(e.code);
        break;
      case 'finish':
        s.finish = e.reason;
        break;
    }
  }
  return s;
}

export function runText(family: string, chunks: readonly string[], opts?: ParserOptions): StreamEvent[] {
  const p = createTextParser(family, opts);
  const out: StreamEvent[] = [];
  for (const c of chunks) out.push(...p.push(c));
  out.push(...p.end());
  return out;
}

export interface ByteRun {
  events: StreamEvent[];
  /** For each push: the byte offset where its chunk ends, and the events it returned. */
  pushes: { end: number; events: StreamEvent[] }[];
}

/** Feed `bytes` cut at the given offsets (strictly increasing, inside (0, length)). */
export function runBytesAt(
  family: string,
  bytes: Uint8Array,
  cuts: readonly number[],
  opts?: ParserOptions,
): ByteRun {
  const p = createByteParser(family, opts);
  const events: StreamEvent[] = [];
  const pushes: ByteRun['pushes'] = [];
  let start = 0;
  for (const end of [...cuts, bytes.length]) {
    const evs = p.push(bytes.subarray(start, end));
    pushes.push({ end, events: evs });
    events.push(...evs);
    start = end;
  }
  const tail = p.end();
  pushes.push({ end: bytes.length, events: tail });
  events.push(...tail);
  return { events, pushes };
}

export const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
export const byteLen = (s: string): number => utf8(s).length;

/** Cut offsets for chunks of min..max bytes. */
export function randomCuts(length: number, min: number, max: number, rnd: () => number): number[] {
  const cuts: number[] = [];
  let at = 0;
  for (;;) {
    at += min + Math.floor(rnd() * (max - min + 1));
    if (at >= length) return cuts;
    cuts.push(at);
  }
}

/** One input and the events it must give (warnings compared as their codes, in order). */
export interface SplitCase {
  family: string;
  input: string;
  expected: StreamEvent[];
  warnings?: string[];
  opts?: ParserOptions;
}

/**
 * Whole, at every byte split (byte entry, streaming decoder) and at every UTF-16 split (string
 * entry): the same merged events and the same warning codes.
 */
export function expectAtEverySplit(c: SplitCase): void {
  const want = mergeEvents(c.expected);
  const wantText = JSON.stringify(want);
  const wantWarnings = c.warnings ?? [];
  const check = (evs: StreamEvent[], where: string): void => {
    const got = mergeEvents(evs.filter((e) => e.type !== 'warning'));
    if (JSON.stringify(got) !== wantText) expect({ where, got }).toEqual({ where, got: want });
    const warnings = evs.flatMap((e) => (e.type === 'warning' ? [e.code] : []));
    if (warnings.join() !== wantWarnings.join())
      expect({ where, warnings }).toEqual({ where, warnings: wantWarnings });
  };
  const bytes = utf8(c.input);
  for (let cut = 0; cut < bytes.length; cut++)
    check(runBytesAt(c.family, bytes, cut === 0 ? [] : [cut], c.opts).events, `byte split ${cut}`);
  for (let cut = 1; cut < c.input.length; cut++)
    check(runText(c.family, [c.input.slice(0, cut), c.input.slice(cut)], c.opts), `UTF-16 split ${cut}`);
}

// ---- event builders for expected streams ------------------------------------------------------

export const textEv = (t: string): StreamEvent => ({ type: 'text.delta', text: t });
export const thinkingEv = (t: string): StreamEvent => ({ type: 'thinking.delta', text: t });
const argText = (args: unknown): string => (typeof args === 'string' ? args : JSON.stringify(args));

/** One call: identity, its whole argument text (a string as is, anything else as JSON), completion. */
export const callEvs = (index: number, name: string, args: unknown, id = `call_${index}`): StreamEvent[] => [
  { type: 'call.identity', index, id, name },
  { type: 'call.fragment', index, text: argText(args) },
  { type: 'call.complete', index },
];

/**
 * A call whose id comes after its arguments (Mistral's array layout): the name, the arguments, the
 * id (the model's, else call_<index>), completion.
 */
export const lateIdCallEvs = (
  index: number,
  name: string,
  args: unknown,
  id = `call_${index}`,
): StreamEvent[] => [
  { type: 'call.identity', index, name },
  { type: 'call.fragment', index, text: argText(args) },
  { type: 'call.identity', index, id },
  { type: 'call.complete', index },
];

/** A call cut before its completion: identity and the arguments so far. */
export const openCallEvs = (
  index: number,
  name: string,
  args: unknown,
  id = `call_${index}`,
): StreamEvent[] => callEvs(index, name, args, id).slice(0, 2);

/** An OpenAI-shaped tool with these parameter schemas (and extra top-level schema keys, e.g. $defs). */
export const fnTool = (
  name: string,
  properties: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): ToolSpecLike =>
  ({
    type: 'function',
    function: { name, parameters: { type: 'object', properties, ...extra } },
  }) as ToolSpecLike;
