/**
 * The reader's fast path (src/wire/skim.ts + each adapter's `onRaw`) against the slow path
 * (`JSON.parse` + `onPayload`), differentially: seeded random streams of every format, written
 * with random whitespace, key order, extra and duplicate keys, escapes (\uXXXX, surrogate pairs,
 * lone surrogates, control characters), odd values and invalid JSON, fed in random byte splits to
 * two readers — one with the fast path, one without. Their events must be equal, and the fast path
 * must have taken a large share of the deltas (so the test cannot pass by never taking it).
 */
import { createAdapter, createStreamReader } from '../../src/wire';
import type { StreamEvent, WireFormat } from '../../src/wire/events';
import type { FastAdapter } from '../../src/wire/common';
import { Skim, unescape } from '../../src/wire/skim';
import { prng } from '../../bench/prng';

type Rnd = () => number;
/** A JSON value whose objects keep order and may repeat keys: [key, value][] marked by `obj`. */
type J = null | boolean | number | string | J[] | { obj: [string, J][] } | { raw: string };

const pick = <T>(r: Rnd, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const chance = (r: Rnd, p: number): boolean => r() < p;

const PIECES = ['word', ' ', 'x', '"', '\\', '/', '\n', '\t', '\r', '\u0000', '\u0001', '\u001f', '\b', '\f', '😀', '\ud83d', '\ude00', '中文', '\u2028', 'é', '}', '{', '"}', '\\"', ':'];
function randText(r: Rnd): string {
  if (chance(r, 0.1)) return '';
  let s = '';
  const n = 1 + Math.floor(r() * 6);
  for (let i = 0; i < n; i++) s += chance(r, 0.6) ? `w${Math.floor(r() * 100)}` : pick(r, PIECES);
  return s;
}

/** A JSON string literal for s: JSON.stringify, sometimes with more escapes than needed. */
function lit(r: Rnd, s: string): string {
  const j = JSON.stringify(s);
  // Names the adapters read (type values) are fast only without escapes: escape them rarely.
  if (!chance(r, /^[a-z_.]+$/.test(s) ? 0.02 : 0.3)) return j;
  let out = '"';
  for (let i = 1; i < j.length - 1; i++) {
    const c = j[i]!;
    if (c === '\\') {
      out += j.slice(i, i + 2);
      if (j[i + 1] === 'u') {
        out += j.slice(i + 2, i + 6);
        i += 4;
      }
      i++;
    } else if (chance(r, 0.2)) {
      const h = c.charCodeAt(0).toString(16).padStart(4, '0');
      out += `\\u${chance(r, 0.5) ? h : h.toUpperCase()}`;
    } else if (c === '/' && chance(r, 0.5)) out += '\\/';
    else out += c;
  }
  return out + '"';
}

const WS = ['', '', '', ' ', '\n', '\t', '\r\n', '  '];
function ser(r: Rnd, v: J): string {
  const w = (): string => (chance(r, 0.15) ? pick(r, WS) : '');
  if (v === null || typeof v === 'boolean') return String(v);
  if (typeof v === 'number') return chance(r, 0.1) && Number.isInteger(v) ? `${v}.0` : String(v);
  if (typeof v === 'string') return lit(r, v);
  if (Array.isArray(v)) return `[${w()}${v.map((x) => ser(r, x)).join(`${w()},${w()}`)}${w()}]`;
  if ('raw' in v) return v.raw;
  const key = (k: string): string => (chance(r, 0.005) ? `"${[...k].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"` : JSON.stringify(k));
  return `{${w()}${v.obj.map(([k, x]) => `${key(k)}${w()}:${w()}${ser(r, x)}`).join(`${w()},${w()}`)}${w()}}`;
}

const o = (...obj: [string, J][]): J => ({ obj });
function shuffle<T>(r: Rnd, xs: T[]): T[] {
  if (!chance(r, 0.2)) return xs;
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [xs[i], xs[j]] = [xs[j]!, xs[i]!];
  }
  return xs;
}
/** Extra members an adapter ignores (or reads: a few names the adapters act on). */
function extras(r: Rnd, names: readonly string[]): [string, J][] {
  const out: [string, J][] = [];
  while (chance(r, 0.15)) {
    const v = pick<J>(r, [1, -2.5, 1e21, 0, true, false, null, 'x', [], [1, [2, { obj: [] }]], o(['a', o(['b', [null]])]), 'obfusc', o()]);
    out.push([pick(r, names), v]);
  }
  return out;
}
const ODD_INDEX: J[] = [-1, 0.5, '0', null, true, 1e0, { raw: '01' }, { raw: '1e0' }, { raw: '-0' }, 1234567890, 99];

/** Sometimes break the payload: not JSON any more (both paths warn bad_json). */
function mutate(r: Rnd, s: string): string {
  if (!chance(r, 0.04)) return s;
  const at = Math.floor(r() * s.length);
  switch (Math.floor(r() * 5)) {
    case 0:
      return s.slice(0, at);
    case 1:
      return `${s.slice(0, at)}\u0001${s.slice(at)}`;
    case 2:
      return `${s},`;
    case 3:
      return s.replace('\\', '\\x');
    default:
      return `${s.slice(0, at)}\\${s.slice(at)}`;
  }
}

function anthropicStream(r: Rnd): string[] {
  const out: J[] = [o(['type', 'message_start'], ['message', o(['id', 'msg_1'], ['model', 'claude'])])];
  let idx = 0;
  for (let b = 0; b < 6; b++) {
    const kind = pick(r, ['text', 'text', 'thinking', 'tool_use', 'redacted_thinking']);
    const cb = kind === 'tool_use' ? o(['type', kind], ['id', `t${b}`], ['name', 'f'], ['input', o()]) : o(['type', kind], [kind === 'thinking' ? 'thinking' : 'text', '']);
    out.push(o(['type', 'content_block_start'], ['index', idx], ['content_block', cb]));
    for (let d = 0; d < 15; d++) {
      const dt = chance(r, 0.9) ? (kind === 'thinking' ? 'thinking_delta' : kind === 'tool_use' ? 'input_json_delta' : 'text_delta') : pick(r, ['text_delta', 'thinking_delta', 'signature_delta', 'citations_delta', 'other']);
      const field = dt === 'thinking_delta' ? 'thinking' : dt === 'input_json_delta' ? 'partial_json' : dt === 'signature_delta' ? 'signature' : 'text';
      const delta: [string, J][] = shuffle(r, [['type', dt], [field, chance(r, 0.95) ? randText(r) : pick<J>(r, [null, 3, o()])], ...extras(r, ['type', 'text', 'thinking', 'x', 'citations'])]);
      const index: J = chance(r, 0.93) ? idx : pick(r, [...ODD_INDEX, idx + 1]);
      const top: [string, J][] = shuffle(r, [['type', chance(r, 0.995) ? 'content_block_delta' : 'content_block_stop'], ['index', index], ['delta', chance(r, 0.97) ? { obj: delta } : pick<J>(r, [null, 'x', []])], ...extras(r, ['type', 'index', 'delta', 'extra', 'usage'])]);
      out.push({ obj: top });
    }
    out.push(o(['type', 'content_block_stop'], ['index', idx]));
    idx++;
  }
  out.push(o(['type', 'message_delta'], ['delta', o(['stop_reason', 'end_turn'])], ['usage', o(['output_tokens', 5])]), o(['type', 'message_stop']));
  return out.map((j) => mutate(r, ser(r, j)));
}

function chatStream(r: Rnd): string[] {
  const head = (): [string, J][] => [['id', 'chatcmpl-1'], ['object', 'chat.completion.chunk'], ['created', 1700000000], ['model', 'm']];
  const out: string[] = [];
  const first = chance(r, 0.5) ? o(...head(), ['choices', [o(['index', 0], ['delta', o(['role', 'assistant'], ['content', 'hi'])], ['finish_reason', null])]]) : o(['choices', [o(['index', 0], ['delta', o(['content', 'no id yet'])])]]);
  out.push(ser(r, first));
  for (let c = 0; c < 80; c++) {
    const delta: [string, J][] = [];
    if (chance(r, 0.85)) delta.push(['content', chance(r, 0.95) ? randText(r) : pick<J>(r, [null, 1, o()])]);
    if (chance(r, 0.25)) delta.push([pick(r, ['reasoning_content', 'reasoning']), chance(r, 0.9) ? randText(r) : null]);
    if (chance(r, 0.1)) delta.push(['role', 'assistant']);
    if (chance(r, 0.08)) delta.push([pick(r, ['tool_calls', 'function_call']), chance(r, 0.5) ? null : [o(['index', 0], ['id', 'c1'], ['function', o(['name', 'f'], ['arguments', '{"a":'])])]]);
    const choice: [string, J][] = [['delta', { obj: shuffle(r, [...delta, ...extras(r, ['content', 'x', 'refusal'])]) }]];
    if (chance(r, 0.9)) choice.unshift(['index', chance(r, 0.92) ? 0 : pick(r, ODD_INDEX)]);
    if (chance(r, 0.7)) choice.push(['logprobs', chance(r, 0.9) ? null : o(['content', []])]);
    if (chance(r, 0.8)) choice.push(['finish_reason', chance(r, 0.95) ? null : pick(r, ['stop', ''])]);
    let choices: J = [{ obj: shuffle(r, [...choice, ...extras(r, ['index', 'delta', 'stop_reason'])]) }];
    if (chance(r, 0.03)) choices = pick<J>(r, [[], [choices[0]!, choices[0]!], null]);
    const top: [string, J][] = [...head(), ['choices', choices]];
    if (chance(r, 0.2)) top.push(['system_fingerprint', 'fp_1']);
    if (chance(r, 0.2)) top.push(['usage', chance(r, 0.8) ? null : o(['prompt_tokens', 3], ['completion_tokens', 4])]);
    if (chance(r, 0.2)) top.push(['obfuscation', randText(r)]);
    if (chance(r, 0.02)) top.push(['x_groq', o(['usage', o(['completion_tokens', 1])])]);
    if (chance(r, 0.02)) top.push(['error', o(['message', 'boom'])]);
    out.push(mutate(r, ser(r, { obj: shuffle(r, [...top, ...extras(r, ['id', 'model', 'usage', 'choices'])]) })));
  }
  out.push(ser(r, o(...head(), ['choices', [o(['index', 0], ['delta', o()], ['finish_reason', 'stop'])]])), '[DONE]');
  return out;
}

function responsesStream(r: Rnd): string[] {
  const out: string[] = [ser(r, o(['type', 'response.created'], ['response', o(['id', 'resp_1'], ['model', 'gpt'])]))];
  for (let c = 0; c < 80; c++) {
    const type = chance(r, 0.85)
      ? pick(r, ['response.output_text.delta', 'response.output_text.delta', 'response.refusal.delta', 'response.reasoning_summary_text.delta', 'response.reasoning_text.delta'])
      : pick(r, ['response.output_text.done', 'response.in_progress', 'response.function_call_arguments.delta', 'response.mystery']);
    const top: [string, J][] = [['type', type], ['item_id', 'msg_1'], ['content_index', 0], ['delta', chance(r, 0.95) ? randText(r) : pick<J>(r, [null, 2, o()])]];
    if (chance(r, 0.9)) top.push(['output_index', chance(r, 0.92) ? Math.floor(r() * 3) : pick(r, ODD_INDEX)]);
    if (chance(r, 0.6)) top.push(['sequence_number', c + 1]);
    if (chance(r, 0.4)) top.push(['logprobs', chance(r, 0.8) ? [] : [o(['token', 'a'], ['logprob', -0.1], ['top_logprobs', []])]]);
    if (chance(r, 0.2)) top.push(['obfuscation', randText(r)]);
    out.push(mutate(r, ser(r, { obj: shuffle(r, [...top, ...extras(r, ['type', 'delta', 'output_index', 'x'])]) })));
  }
  out.push(ser(r, o(['type', 'response.completed'], ['response', o(['usage', o(['input_tokens', 1], ['output_tokens', 2])])])));
  return out;
}

/**
 * A steady token stream: the same payload shape with only the delta string changing (what the
 * template path reads), perturbed now and then: broken JSON, a raw quote or control character in
 * the string, another key order, a block stopped or restarted as another kind, a reasoning chunk.
 */
function steadyStream(format: WireFormat): (r: Rnd) => string[] {
  return (r) => {
    const out: string[] = [];
    const bad = (t: string): string => pick(r, [JSON.stringify(t), `"${t}"x"`, '"a\u0001"', '"\\q"', '"a","x":"b"', '"\\ud83d\\ude00"']);
    const str = (t: string): string => (chance(r, 0.1) ? bad(t) : lit(r, t));
    if (format === 'anthropic') {
      out.push('{"type":"message_start","message":{"id":"m"}}', '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}');
      let kind = 'text';
      for (let i = 0; i < 120; i++) {
        if (chance(r, 0.01)) out.push('{"type":"content_block_stop","index":0}'); // deltas for a stopped block
        if (chance(r, 0.04)) {
          kind = pick(r, ['text', 'thinking']);
          out.push('{"type":"content_block_stop","index":0}', `{"type":"content_block_start","index":0,"content_block":{"type":"${kind}","text":""}}`);
        }
        const dt = (kind === 'text') === chance(r, 0.9) ? 'text_delta' : 'thinking_delta';
        const f = dt === 'text_delta' ? 'text' : 'thinking';
        out.push(chance(r, 0.05) ? `{"index":0,"type":"content_block_delta","delta":{"type":"${dt}","${f}":${str(randText(r))}}}` : `{"type":"content_block_delta","index":0,"delta":{"type":"${dt}","${f}":${str(randText(r))}}}`);
      }
    } else if (format === 'openai-chat') {
      const head = '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{';
      out.push(`${head}"role":"assistant","content":""},"finish_reason":null}]}`);
      for (let i = 0; i < 120; i++) {
        const field = chance(r, 0.85) ? 'content' : pick(r, ['reasoning_content', 'reasoning']);
        const extra = chance(r, 0.05) ? pick(r, [',"content":null', ',"reasoning_content":"z"', ',"tool_calls":null', ',"content":"dup"']) : '';
        out.push(`${head}"${field}":${str(randText(r))}${extra}},"logprobs":null,"finish_reason":${chance(r, 0.02) ? '"stop"' : 'null'}}]${chance(r, 0.03) ? ',"usage":{"completion_tokens":1}' : ''}}`);
      }
    } else {
      for (let i = 0; i < 120; i++) {
        const type = chance(r, 0.9) ? 'response.output_text.delta' : 'response.reasoning_text.delta';
        out.push(`{"type":"${type}","item_id":"msg_1","output_index":0,"content_index":0,"delta":${str(randText(r))},"logprobs":[]}`);
      }
    }
    return out.map((p) => mutate(r, p));
  };
}

/** SSE text for the payloads: `data:` lines (sometimes split over two lines, CRLF, event names). */
function sse(r: Rnd, payloads: string[], format: WireFormat): string {
  // A first payload that is not JSON makes the stream bad_stream (SPEC §12) and ends the comparison
  // there; a leading [DONE] (a payload that carries nothing) keeps a broken first payload a bad_json warning.
  let s = 'data: [DONE]\n\n';
  for (const p of payloads) {
    const nl = chance(r, 0.1) ? '\r\n' : '\n';
    if (format === 'anthropic' || format === 'openai-responses') {
      const m = /"type"\s*:\s*"([a-z_.]+)"/.exec(p);
      if (m && chance(r, 0.8)) s += `event: ${m[1]}${nl}`;
    }
    const cut = p.indexOf(',');
    if (cut > 0 && chance(r, 0.05)) s += `data: ${p.slice(0, cut)}${nl}data:${p.slice(cut)}${nl}${nl}`;
    else s += `data:${chance(r, 0.8) ? ' ' : ''}${p}${nl}${nl}`;
  }
  return s;
}

/** Run the text through a reader in the given byte splits; count fast-path hits. */
function read(format: WireFormat, bytes: Buffer, cuts: number[], fast: boolean): { events: StreamEvent[]; hits: number } {
  const adapter = createAdapter(format) as FastAdapter;
  let hits = 0;
  if (!fast) (adapter as { pushRaw?: unknown }).pushRaw = undefined;
  else {
    const orig = adapter.pushRaw!.bind(adapter);
    adapter.pushRaw = (d, out) => {
      // Try the fast path on every payload here (no back-off after misses: that is tested below).
      (adapter as unknown as { rawSkip: number }).rawSkip = 0;
      const ok = orig(d, out);
      if (ok) hits++;
      return ok;
    };
  }
  const reader = createStreamReader(format, { adapter });
  const events: StreamEvent[] = [];
  let at = 0;
  for (const c of [...cuts, bytes.length]) {
    events.push(...reader.write(bytes.subarray(at, c)));
    at = c;
  }
  events.push(...reader.end());
  return { events, hits };
}

const STREAMS: [WireFormat, (r: Rnd) => string[]][] = [
  ['anthropic', anthropicStream],
  ['openai-chat', chatStream],
  ['openai-responses', responsesStream],
  ['dynamo', chatStream],
  ['anthropic', steadyStream('anthropic')],
  ['openai-chat', steadyStream('openai-chat')],
  ['openai-responses', steadyStream('openai-responses')],
];

describe('fast path = slow path (seeded differential)', () => {
  for (const [format, gen] of STREAMS) {
    const steady = gen.name === '';
    it(`${format}${steady ? ' (steady shape)' : ''}: 150 random streams, random splits`, () => {
      let hits = 0;
      let payloads = 0;
      for (let seed = 1; seed <= 150; seed++) {
        const r = prng(seed * 7919 + format.length);
        const ps = gen(r);
        payloads += ps.length;
        const bytes = Buffer.from(sse(r, ps, format));
        const cuts: number[] = [];
        for (let at = 0; at < bytes.length; ) {
          at += 1 + Math.floor(r() * (chance(r, 0.5) ? 8 : 400));
          if (at < bytes.length) cuts.push(at);
        }
        const slow = read(format, bytes, cuts, false);
        const fast = read(format, bytes, cuts, true);
        expect({ seed, events: fast.events }).toEqual({ seed, events: slow.events });
        hits += fast.hits;
      }
      if (process.env.SKIM_STATS) process.stdout.write(`${format}: fast path ${hits} of ${payloads} payloads\n`);
      // Share of all payloads (starts, stops, tool deltas, odd and broken ones included).
      if (format === 'dynamo') expect(hits).toBe(0);
      else expect(hits / payloads).toBeGreaterThan(steady ? 0.5 : 0.05);
    });
  }

  it('a run of argument deltas backs off the fast path (same events, few tries), and text takes it again', () => {
    const args = Array.from({ length: 400 }, (_, i) => `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"${i === 0 ? '{\\"a\\":\\"' : 'x'}"}}`);
    const ps = [
      '{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}}',
      ...args,
      '{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"\\"}"}}',
      '{"type":"content_block_stop","index":0}',
      '{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}',
      ...Array.from({ length: 200 }, () => '{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"w "}}'),
    ];
    const bytes = Buffer.from(ps.map((p) => `data: ${p}\n\n`).join(''));
    const adapter = createAdapter('anthropic') as FastAdapter;
    let tries = 0;
    let hits = 0;
    const orig = adapter.pushRaw!.bind(adapter);
    const proto = Object.getPrototypeOf(adapter) as { onRaw: (d: string, out: unknown) => boolean };
    const onRaw = proto.onRaw;
    (adapter as unknown as { onRaw: typeof onRaw }).onRaw = function (this: unknown, d, out) {
      tries++;
      return onRaw.call(this, d, out);
    };
    adapter.pushRaw = (d, out) => {
      const ok = orig(d, out);
      if (ok) hits++;
      return ok;
    };
    const reader = createStreamReader('anthropic', { adapter });
    const events = [...reader.write(bytes), ...reader.end()];
    expect(events).toEqual(read('anthropic', bytes, [], false).events);
    expect(tries - hits).toBeLessThan(20); // misses: 404 non-text payloads, tried ~12 times
    expect(hits).toBeGreaterThan(150); // of 200 text deltas
  });

  it('the fast path takes the plain delta of every format', () => {
    const cases: [WireFormat, string[], StreamEvent[]][] = [
      [
        'anthropic',
        ['{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}', '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\\"b\\u00e9\\ud83d\\ude00"}}'],
        [{ type: 'text.delta', text: 'a"bé😀' }],
      ],
      ['openai-chat', ['{"id":"c","choices":[]}', '{"id":"c","choices":[{"index":0,"delta":{"reasoning_content":"t","content":"x\\ny"},"finish_reason":null}]}'], [{ type: 'message.start', id: 'c' }, { type: 'thinking.delta', text: 't' }, { type: 'text.delta', text: 'x\ny' }]],
      ['openai-responses', ['{"type":"response.reasoning_text.delta","output_index":1,"delta":"r","logprobs":[]}'], [{ type: 'thinking.delta', text: 'r' }]],
    ];
    for (const [format, ps, want] of cases) {
      const bytes = Buffer.from(ps.map((p) => `data: ${p}\n\n`).join(''));
      const fast = read(format, bytes, [], true);
      expect(fast.hits).toBe(1);
      // (No terminal event in these two-payload streams: the stream_truncated error at the end is not the point here.)
      expect(fast.events.filter((e) => e.type !== 'stream.end' && e.type !== 'warning' && e.type !== 'stream.error')).toEqual(want);
    }
  });
});

describe('Skim', () => {
  it('accepts exactly the JSON values JSON.parse accepts (skip)', () => {
    const r = prng(42);
    const samples = ['0', '-0', '1.5e+3', '01', '1.', '.5', '-', '1e', 'tru', 'true', 'null', 'nul', '"\\u12G4"', '"\\u00e9"', '"a\u0001"', '[1,]', '[,1]', '[]', '{}', '{"a":1,}', '{"a" 1}', '{"a":[{"b":{}}]}', '"\\x"', '[[[[]]]]', '{"a":1}x'];
    for (let i = 0; i < 300; i++) samples.push(mutate(r, ser(r, pick<J>(r, [o(['a', [1, 'x', null]], ['b', o(['c', randText(r)])]), [randText(r), 1.25, false], randText(r)]))));
    for (const s of samples) {
      let ok: boolean;
      try {
        JSON.parse(s);
        ok = true;
      } catch {
        ok = false;
      }
      const k = new Skim().reset(s);
      expect({ s, ok: k.skip() && k.atEnd() }).toEqual({ s, ok });
    }
  });

  it('decodes strings exactly as JSON.parse does', () => {
    const r = prng(7);
    for (let i = 0; i < 2000; i++) {
      const text = randText(r) + randText(r);
      const l = lit(r, text);
      const k = new Skim().reset(l);
      expect(k.str()).toBe(true);
      expect(k.value()).toBe(JSON.parse(l));
      expect(unescape(l, 1, l.length - 1)).toBe(text);
    }
  });
});
