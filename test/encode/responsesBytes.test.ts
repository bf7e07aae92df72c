/**
 * The Responses SSE encoder's exact bytes for one stream with awkward text: quotes, backslashes,
 * control characters, U+2028/U+2029, `</script>`, a surrogate pair split across two deltas (each
 * delta escapes its half as `\udXXX`; the `.done` events and `response.completed` carry the joined
 * character), lone surrogates, a reasoning item with a signature. Pinned as literal frames (random
 * ids masked) so a faster encoder can prove the wire did not move: the OpenAI SDK and Codex parse it.
 */
import { ResponsesSseEncoder, toResponsesBody } from '../../src/encode/responsesSse';
import type { OutputEvent } from '../../src/release/output';

const EVENTS: OutputEvent[] = [
  { type: 'message.start', usage: { promptTokens: 12 } },
  { type: 'thinking', text: 'think "a" \\ b' },
  { type: 'thinking', text: '\ud83d' },
  { type: 'thinking', text: '\ude00 done' },
  { type: 'thinking.signature', signature: 'sig\\"1' },
  { type: 'text', text: 'He said "hi" \\o/ ' },
  { type: 'text', text: 'tab\there\nnew\u0000nul\u001f\u007f ' },
  { type: 'text', text: 'sep\u2028par\u2029 </script> ' },
  { type: 'text', text: 'pair \ud83d' },
  { type: 'text', text: '\ude00 lone \udc00 and \ud800' },
  { type: 'text', text: 'x' },
  { type: 'usage', usage: { outputTokens: 9 } },
  { type: 'end', finish: 'stop', released: 0 },
];

const mask = (s: string): string => s.replace(/\b(resp_|msg_|rs_)[0-9A-Za-z]{24}\b/g, '$1ID');

const EXPECTED: string[] = [
    "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_ID\",\"object\":\"response\",\"created_at\":1700000000,\"status\":\"in_progress\",\"error\":null,\"incomplete_details\":null,\"model\":\"gpt-\\\"m\\\"\",\"output\":[],\"parallel_tool_calls\":true,\"tool_choice\":\"auto\",\"tools\":[],\"usage\":null},\"sequence_number\":0}\n\n",
    "event: response.in_progress\ndata: {\"type\":\"response.in_progress\",\"response\":{\"id\":\"resp_ID\",\"object\":\"response\",\"created_at\":1700000000,\"status\":\"in_progress\",\"error\":null,\"incomplete_details\":null,\"model\":\"gpt-\\\"m\\\"\",\"output\":[],\"parallel_tool_calls\":true,\"tool_choice\":\"auto\",\"tools\":[],\"usage\":null},\"sequence_number\":1}\n\n",
    "event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"type\":\"reasoning\",\"id\":\"rs_ID\",\"summary\":[]},\"sequence_number\":2}\n\n",
    "event: response.reasoning_summary_part.added\ndata: {\"type\":\"response.reasoning_summary_part.added\",\"item_id\":\"rs_ID\",\"output_index\":0,\"summary_index\":0,\"part\":{\"type\":\"summary_text\",\"text\":\"\"},\"sequence_number\":3}\n\n",
    "event: response.reasoning_summary_text.delta\ndata: {\"type\":\"response.reasoning_summary_text.delta\",\"item_id\":\"rs_ID\",\"output_index\":0,\"summary_index\":0,\"delta\":\"think \\\"a\\\" \\\\ b\",\"sequence_number\":4}\n\n",
    "event: response.reasoning_summary_text.delta\ndata: {\"type\":\"response.reasoning_summary_text.delta\",\"item_id\":\"rs_ID\",\"output_index\":0,\"summary_index\":0,\"delta\":\"\\ud83d\",\"sequence_number\":5}\n\n",
    "event: response.reasoning_summary_text.delta\ndata: {\"type\":\"response.reasoning_summary_text.delta\",\"item_id\":\"rs_ID\",\"output_index\":0,\"summary_index\":0,\"delta\":\"\\ude00 done\",\"sequence_number\":6}\n\n",
    "event: response.reasoning_summary_text.done\ndata: {\"type\":\"response.reasoning_summary_text.done\",\"item_id\":\"rs_ID\",\"output_index\":0,\"summary_index\":0,\"text\":\"think \\\"a\\\" \\\\ b\ud83d\ude00 done\",\"sequence_number\":7}\n\n",
    "event: response.reasoning_summary_part.done\ndata: {\"type\":\"response.reasoning_summary_part.done\",\"item_id\":\"rs_ID\",\"output_index\":0,\"summary_index\":0,\"part\":{\"type\":\"summary_text\",\"text\":\"think \\\"a\\\" \\\\ b\ud83d\ude00 done\"},\"sequence_number\":8}\n\n",
    "event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{\"type\":\"reasoning\",\"id\":\"rs_ID\",\"summary\":[{\"type\":\"summary_text\",\"text\":\"think \\\"a\\\" \\\\ b\ud83d\ude00 done\"}],\"encrypted_content\":\"sig\\\\\\\"1\"},\"sequence_number\":9}\n\n",
    "event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":1,\"item\":{\"type\":\"message\",\"id\":\"msg_ID\",\"role\":\"assistant\",\"status\":\"in_progress\",\"content\":[]},\"sequence_number\":10}\n\n",
    "event: response.content_part.added\ndata: {\"type\":\"response.content_part.added\",\"item_id\":\"msg_ID\",\"output_index\":1,\"content_index\":0,\"part\":{\"type\":\"output_text\",\"text\":\"\",\"annotations\":[],\"logprobs\":[]},\"sequence_number\":11}\n\n",
    "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"item_id\":\"msg_ID\",\"output_index\":1,\"content_index\":0,\"delta\":\"He said \\\"hi\\\" \\\\o/ \",\"logprobs\":[],\"sequence_number\":12}\n\n",
    "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"item_id\":\"msg_ID\",\"output_index\":1,\"content_index\":0,\"delta\":\"tab\\there\\nnew\\u0000nul\\u001f\u007f \",\"logprobs\":[],\"sequence_number\":13}\n\n",
    "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"item_id\":\"msg_ID\",\"output_index\":1,\"content_index\":0,\"delta\":\"sep\u2028par\u2029 </script> \",\"logprobs\":[],\"sequence_number\":14}\n\n",
    "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"item_id\":\"msg_ID\",\"output_index\":1,\"content_index\":0,\"delta\":\"pair \\ud83d\",\"logprobs\":[],\"sequence_number\":15}\n\n",
    "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"item_id\":\"msg_ID\",\"output_index\":1,\"content_index\":0,\"delta\":\"\\ude00 lone \\udc00 and \\ud800\",\"logprobs\":[],\"sequence_number\":16}\n\n",
    "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"item_id\":\"msg_ID\",\"output_index\":1,\"content_index\":0,\"delta\":\"x\",\"logprobs\":[],\"sequence_number\":17}\n\n",
    "event: response.output_text.done\ndata: {\"type\":\"response.output_text.done\",\"item_id\":\"msg_ID\",\"output_index\":1,\"content_index\":0,\"text\":\"He said \\\"hi\\\" \\\\o/ tab\\there\\nnew\\u0000nul\\u001f\u007f sep\u2028par\u2029 </script> pair \ud83d\ude00 lone \\udc00 and \\ud800x\",\"logprobs\":[],\"sequence_number\":18}\n\n",
    "event: response.content_part.done\ndata: {\"type\":\"response.content_part.done\",\"item_id\":\"msg_ID\",\"output_index\":1,\"content_index\":0,\"part\":{\"type\":\"output_text\",\"text\":\"He said \\\"hi\\\" \\\\o/ tab\\there\\nnew\\u0000nul\\u001f\u007f sep\u2028par\u2029 </script> pair \ud83d\ude00 lone \\udc00 and \\ud800x\",\"annotations\":[],\"logprobs\":[]},\"sequence_number\":19}\n\n",
    "event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"output_index\":1,\"item\":{\"type\":\"message\",\"id\":\"msg_ID\",\"role\":\"assistant\",\"status\":\"completed\",\"content\":[{\"type\":\"output_text\",\"text\":\"He said \\\"hi\\\" \\\\o/ tab\\there\\nnew\\u0000nul\\u001f\u007f sep\u2028par\u2029 </script> pair \ud83d\ude00 lone \\udc00 and \\ud800x\",\"annotations\":[],\"logprobs\":[]}]},\"sequence_number\":20}\n\n",
    "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_ID\",\"object\":\"response\",\"created_at\":1700000000,\"status\":\"completed\",\"error\":null,\"incomplete_details\":null,\"model\":\"gpt-\\\"m\\\"\",\"output\":[{\"type\":\"reasoning\",\"id\":\"rs_ID\",\"summary\":[{\"type\":\"summary_text\",\"text\":\"think \\\"a\\\" \\\\ b\ud83d\ude00 done\"}],\"encrypted_content\":\"sig\\\\\\\"1\"},{\"type\":\"message\",\"id\":\"msg_ID\",\"role\":\"assistant\",\"status\":\"completed\",\"content\":[{\"type\":\"output_text\",\"text\":\"He said \\\"hi\\\" \\\\o/ tab\\there\\nnew\\u0000nul\\u001f\u007f sep\u2028par\u2029 </script> pair \ud83d\ude00 lone \\udc00 and \\ud800x\",\"annotations\":[],\"logprobs\":[]}]}],\"parallel_tool_calls\":true,\"tool_choice\":\"auto\",\"tools\":[],\"usage\":{\"input_tokens\":12,\"input_tokens_details\":{\"cached_tokens\":0},\"output_tokens\":9,\"output_tokens_details\":{\"reasoning_tokens\":0},\"total_tokens\":21}},\"sequence_number\":21}\n\n",
];

test('responses SSE bytes for awkward text are pinned', () => {
  const enc = new ResponsesSseEncoder({ model: 'gpt-"m"', created: 1700000000, inputTokens: 3 });
  let s = enc.start();
  for (const e of EVENTS) s += enc.push(e);
  expect(mask(s).split(/(?<=\n\n)/)).toEqual(EXPECTED);
  expect(enc.push({ type: 'text', text: 'after the end' })).toBe('');
});

test('the same stream written in one push per event and in any split gives the same bytes', () => {
  // The text deltas of a message written one character at a time: the `.done` text is the same.
  const whole = new ResponsesSseEncoder({ model: 'm', created: 1 });
  const split = new ResponsesSseEncoder({ model: 'm', created: 1 });
  const text = 'a"\\\u2028\ud83d\ude00\u0001z';
  const a = whole.start() + whole.push({ type: 'text', text }) + whole.push({ type: 'end', finish: 'stop', released: 0 });
  let b = split.start();
  for (const ch of text.split('')) b += split.push({ type: 'text', text: ch });
  b += split.push({ type: 'end', finish: 'stop', released: 0 });
  // From the first `.done` on (sequence numbers differ: one delta frame vs eight).
  const tail = (s: string): string => mask(s.slice(s.indexOf('event: response.output_text.done'))).replace(/"sequence_number":\d+/g, '');
  expect(tail(b)).toBe(tail(a));
  expect(a).toContain('"text":"a\\"\\\\\u2028\ud83d\ude00\\u0001z"');
});

/** Ids are random per encoder: number them by first appearance. */
function sameIds(s: string): string {
  const seen = new Map<string, string>();
  return s.replace(/"(msg_|call_|fc_|resp_|rs_)[A-Za-z0-9]+"/g, (m) => {
    if (!seen.has(m)) seen.set(m, `"id${seen.size}"`);
    return seen.get(m)!;
  });
}

/** Drain an encoder that writes pieces; the pieces as written (as the gateway's sink takes them: `piece()`). */
function drained(enc: ResponsesSseEncoder, events: OutputEvent[]): (string | Buffer)[] {
  const out: (string | Buffer)[] = [enc.start()];
  for (const e of events) {
    out.push(enc.push(e));
    while (enc.pending) out.push(enc.piece());
  }
  return out;
}

/** The pieces as one string (a buffer piece is UTF-8). */
const joined = (pieces: (string | Buffer)[]): string => pieces.map((p) => (typeof p === 'string' ? p : p.toString('utf8'))).join('');

describe('closing frames of a long text, written in pieces', () => {
  const N = 100_000;
  // Every pair split across two deltas; then pairs nearly everywhere a piece could be cut, at both parities.
  const deltas: OutputEvent[] = Array.from({ length: N }, (_, i) => ({ type: 'text', text: i % 2 === 0 ? '\ud83d' : i % 1000 === 1 ? '\ude00"é\n' : '\ude00' }));
  const events: OutputEvent[] = [{ type: 'thinking', text: 'plan \ud83d' }, { type: 'thinking', text: '\ude00' }, ...deltas, { type: 'end', finish: 'stop', released: 0 }];

  test('the same bytes as one string; text pieces under 32 Ki chars, the long text as one buffer shared by its four frames', () => {
    const whole = new ResponsesSseEncoder({ model: 'm', created: 1 });
    const want = whole.start() + events.map((e) => whole.push(e)).join('');
    const enc = new ResponsesSseEncoder({ model: 'm', created: 1 });
    enc.enablePieces();
    const pieces = drained(enc, events);
    expect(pieces.length).toBeGreaterThan(N + 3);
    const got = joined(pieces);
    expect(sameIds(got)).toBe(sameIds(want));
    const closing = pieces.slice(N + 3);
    for (const p of closing) if (typeof p === 'string') expect(p.length).toBeLessThanOrEqual(32 * 1024);
    // The message's text (`.done`, `content_part.done`, `output_item.done`, `response.completed`): one buffer, UTF-8 once.
    const buffers = closing.filter((p): p is Buffer => typeof p !== 'string');
    expect(buffers).toHaveLength(4);
    for (const b of buffers) expect(b).toBe(buffers[0]);
    const text = deltas.map((d) => (d.type === 'text' ? d.text : '')).join('');
    expect(buffers[0]!.equals(Buffer.from(JSON.stringify(text).slice(1, -1)))).toBe(true);
    // A piece never ends between the halves of a pair (a socket would write U+FFFD for each half).
    expect(Buffer.concat(pieces.map((p) => (typeof p === 'string' ? Buffer.from(p) : p))).equals(Buffer.from(got))).toBe(true);
    expect(got).not.toContain('sluice-text');
    expect(enc.pending).toBe(false);
    expect(enc.piece()).toBe('');
  });

  test('more() hands out the same output as text', () => {
    const whole = new ResponsesSseEncoder({ model: 'm', created: 1 });
    const want = whole.start() + events.map((e) => whole.push(e)).join('');
    const enc = new ResponsesSseEncoder({ model: 'm', created: 1 });
    enc.enablePieces();
    let got = enc.start();
    for (const e of events) {
      got += enc.push(e);
      while (enc.pending) {
        const p = enc.more();
        expect(typeof p).toBe('string');
        got += p;
      }
    }
    expect(sameIds(got)).toBe(sameIds(want));
  });

  test('the text in response.completed is the text of the deltas', () => {
    const enc = new ResponsesSseEncoder({ model: 'm', created: 1 });
    enc.enablePieces();
    const got = joined(drained(enc, events));
    const completed = JSON.parse(/event: response.completed\ndata: (.*)\n\n$/.exec(got)![1]!) as { response: { output: { content?: { text: string }[]; summary?: { text: string }[] }[] } };
    const [reasoning, message] = completed.response.output;
    expect(reasoning!.summary![0]!.text).toBe('plan \ud83d\ude00');
    expect(message!.content![0]!.text).toBe(deltas.map((d) => (d.type === 'text' ? d.text : '')).join(''));
  });
});

test('a huge call after a text item: the queued frames carry the texts, not stand-ins (same bytes as one string)', () => {
  const args = JSON.stringify({ data: 'x'.repeat(300 * 1024) });
  const events: OutputEvent[] = [
    { type: 'text', text: 'before "\ud83d' },
    { type: 'text', text: '\ude00"' },
    { type: 'tool_use', index: 0, backendId: 'b', name: 'write', input: JSON.parse(args) as Record<string, unknown>, argsText: args, repaired: false },
    { type: 'text', text: 'after \\ \u2028' },
    { type: 'end', finish: 'tool_calls', released: 1 },
  ];
  const whole = new ResponsesSseEncoder({ model: 'm', created: 1 });
  const want = whole.start() + events.map((e) => whole.push(e)).join('');
  const enc = new ResponsesSseEncoder({ model: 'm', created: 1 });
  enc.enablePieces();
  const got = drained(enc, events).join('');
  expect(got).not.toContain('sluice-text');
  expect(sameIds(got)).toBe(sameIds(want));
  expect(want).toContain('"text":"before \\"\ud83d\ude00\\""');
});

test('the body builder: split pairs joined, lone surrogates kept', () => {
  const r = toResponsesBody([{ type: 'text', text: 'a\ud83d' }, { type: 'text', text: '\ude00b\ud800' }, { type: 'text', text: 'c' }, { type: 'end', finish: 'stop', released: 0 }], { model: 'm' });
  expect(r.ok).toBe(true);
  const output = (r.body as { output: { content: { text: string }[] }[] }).output;
  expect(output[0]!.content[0]!.text).toBe('a\ud83d\ude00b\ud800c');
});

describe('held closing pieces keep their place when more events come before the consumer drains', () => {
  const long: OutputEvent[] = Array.from({ length: 30_000 }, (_, i) => ({ type: 'text', text: `w${i} "\ud83d\ude00" ` }));
  const args = JSON.stringify({ data: 'y'.repeat(300 * 1024) });
  const call = (name: string, argsText: string): OutputEvent => ({ type: 'tool_use', index: 0, backendId: name, name, input: JSON.parse(argsText) as Record<string, unknown>, argsText, repaired: false });
  test.each([
    ['a call after a long text', [...long, call('read', '{"p":1}'), { type: 'end', finish: 'tool_calls', released: 1 }]],
    ['a huge call after a long text', [...long, call('write', args), { type: 'text', text: 'then' }, { type: 'end', finish: 'tool_calls', released: 1 }]],
    ['two long texts around a call', [...long, call('read', '{"p":1}'), ...long, { type: 'error', error: { type: 'api_error', message: 'cut' } }]],
  ] as [string, OutputEvent[]][])('%s: drained at the end = one string', (name, events) => {
    const whole = new ResponsesSseEncoder({ model: 'm', created: 1 });
    const want = whole.start() + events.map((e) => whole.push(e)).join('');
    const enc = new ResponsesSseEncoder({ model: 'm', created: 1 });
    enc.enablePieces();
    let got = enc.start();
    for (const e of events) got += enc.push(e);
    while (enc.pending) got += enc.more();
    expect(sameIds(got)).toBe(sameIds(want));
    // Drained as the sink does (`piece()`: a long text as its bytes), still in order.
    const bytes = new ResponsesSseEncoder({ model: 'm', created: 1 });
    bytes.enablePieces();
    const pieces: (string | Buffer)[] = [bytes.start()];
    for (const e of events) pieces.push(bytes.push(e));
    while (bytes.pending) pieces.push(bytes.piece());
    // (After a huge call the queue writes every frame as text: the objects carry their texts.)
    expect(pieces.some((p) => typeof p !== 'string')).toBe(!name.includes('huge'));
    expect(sameIds(joined(pieces))).toBe(sameIds(want));
  });
});

test.each([false, true])('a pair split where the kept text is cut into runs (every 256 deltas) is written whole (body: %s)', (body) => {
  // Delta 255 is a high surrogate: the first run ends between the halves of a pair.
  const deltas: OutputEvent[] = [{ type: 'text', text: 'x' }, ...Array.from({ length: 600 }, (_, i): OutputEvent => ({ type: 'text', text: i % 2 === 0 ? '\ud83d' : '\ude00' }))];
  const want = 'x' + '\ud83d\ude00'.repeat(300);
  const events: OutputEvent[] = [...deltas, { type: 'end', finish: 'stop', released: 0 }];
  if (body) {
    const r = toResponsesBody(events, { model: 'm' });
    expect((r.body as { output: { content: { text: string }[] }[] }).output[0]!.content[0]!.text).toBe(want);
    return;
  }
  const enc = new ResponsesSseEncoder({ model: 'm', created: 1 });
  const sse = enc.start() + events.map((e) => enc.push(e)).join('');
  const done = /event: response.output_text.done\ndata: (.*)\n\n/.exec(sse)![1]!;
  expect(done).toContain(`"text":"${want}"`); // raw pairs, no \ud83d escapes
  expect((JSON.parse(done) as { text: string }).text).toBe(want);
});
