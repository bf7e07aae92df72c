/**
 * The gateway's per-read batching (src/gateway/exchange/decode.ts): Node's HTTP client hands over
 * one `data` event per chunk of the backend's chunked body, hundreds per socket read on a token
 * flood; the decode stage decodes them together and the client gets one write per socket read —
 * with every text delta, in order, exactly as sent (escapes, non-BMP characters, U+2028), and the
 * end of the stream after the last of them (the backend's 'end' can come before the read's
 * microtask). Real gateway, real scripted upstream on 127.0.0.1; the gateway's writes are counted
 * with a spy on `http.ServerResponse.prototype.write` (requests to the upstream's own route excluded).
 */
import * as http from 'node:http';
import { chatChunk, type ScriptLine } from '../../src/gateway/scripted';
import { openaiClient, rawRequest, rig, type Rig } from './helpers';

const CHUNKS = 2000;
const AWKWARD = ['"q"', 'back\\slash', 'line\nbreak\t', '😀', '\u2028\u2029', 'ü', '\u0001', '</script>'];
const texts = Array.from({ length: CHUNKS }, (_, k) => (k % 7 === 0 ? AWKWARD[(k / 7) % AWKWARD.length]! : `w${k} `));

function flood(): ScriptLine[] {
  // Every line at t=0: the upstream writes them in one go, so they reach the gateway in a few socket reads.
  const lines: ScriptLine[] = [{ t: 0, data: chatChunk({ content: '' }) }];
  for (const s of texts) lines.push({ t: 0, data: chatChunk({ content: s }) });
  lines.push({ t: 0, data: chatChunk({ finish: 'stop' }) }, { t: 0, data: '[DONE]' });
  return lines;
}

const ROUTES = [
  {
    path: '/v1/messages',
    body: { model: 'm', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'hi' }] },
    texts: (frames: { event: string; data: unknown }[]) => frames.filter((f) => f.event === 'content_block_delta').map((f) => (f.data as { delta: { text: string } }).delta.text),
    last: (frames: { event: string; data: unknown }[]) => frames[frames.length - 1]!.event,
    end: 'message_stop',
  },
  {
    path: '/v1/responses',
    body: { model: 'm', stream: true, input: 'hi' },
    texts: (frames: { event: string; data: unknown }[]) => frames.filter((f) => f.event === 'response.output_text.delta').map((f) => (f.data as { delta: string }).delta),
    last: (frames: { event: string; data: unknown }[]) => frames[frames.length - 1]!.event,
    end: 'response.completed',
  },
  {
    path: '/v1/chat/completions',
    body: { model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] },
    texts: (frames: { event: string; data: unknown }[]) =>
      frames
        .map((f) => (f.data as { choices?: { delta?: { content?: string }; finish_reason: string | null }[] }).choices?.[0])
        .filter((c) => c !== undefined && c.finish_reason === null && typeof c.delta?.content === 'string' && c.delta.content.length > 0)
        .map((c) => c!.delta!.content!),
    last: (frames: { event: string; data: unknown }[]) => ((frames[frames.length - 1]!.data as { choices: { finish_reason: string }[] }).choices[0]!.finish_reason),
    end: 'stop',
  },
];

/** SSE text → frames, split on '\n' only (the frames carry U+2028 raw, which a regex `.` does not match); chat's `[DONE]` left out. */
function frames(text: string): { event: string; data: unknown }[] {
  const out: { event: string; data: unknown }[] = [];
  for (const f of text.split('\n\n')) {
    let event = '';
    let data: string | undefined;
    for (const line of f.split('\n')) {
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data = line.slice(6);
    }
    if (data !== undefined && data !== '[DONE]') out.push({ event, data: JSON.parse(data) as unknown });
  }
  return out;
}

describe('one client write per backend socket read', () => {
  let r: Rig | undefined;
  let writes = 0;
  let spy: jest.SpyInstance | undefined;
  beforeAll(async () => {
    r = await rig({ script: flood() });
    const write = http.ServerResponse.prototype.write;
    spy = jest.spyOn(http.ServerResponse.prototype, 'write').mockImplementation(function (this: http.ServerResponse, ...args: unknown[]) {
      if (!isUpstream(this)) writes++;
      return (write as (...a: unknown[]) => boolean).apply(this, args);
    });
  });
  afterAll(async () => {
    spy?.mockRestore();
    await r?.close();
  });
  /** The scripted upstream's responses (it serves /v1/chat/completions too): their writes are not counted. */
  const isUpstream = (res: http.ServerResponse): boolean => res.socket?.localPort === Number(new URL(r!.up.url).port);

  test.each(ROUTES)('$path: every delta exactly, in order, then the end; far fewer writes than chunks', async (route) => {
    writes = 0;
    const res = await rawRequest(r!.gw.url, { path: route.path, body: JSON.stringify(route.body) });
    expect(res.status).toBe(200);
    const fs = frames(res.text);
    expect(route.texts(fs)).toEqual(texts);
    expect(route.last(fs)).toBe(route.end);
    // One write per data event would be ~CHUNKS; per socket read it is a handful (commit + reads + end).
    expect(writes).toBeGreaterThan(0);
    expect(writes).toBeLessThan(CHUNKS / 10);
  });
});

describe('/v1/responses: a long text (over 32 Ki chars) read by the openai SDK', () => {
  // Its closing frames carry the item's text as one UTF-8 buffer written four times (src/encode/responsesSse.ts).
  const long = Array.from({ length: 12_000 }, (_, k) => (k % 5 === 0 ? AWKWARD[(k / 5) % AWKWARD.length]! : `w${k} `));
  const text = long.join('');
  let r: Rig | undefined;
  beforeAll(async () => {
    const lines: ScriptLine[] = [{ t: 0, data: chatChunk({ content: '' }) }];
    for (const s of long) lines.push({ t: 0, data: chatChunk({ content: s }) });
    lines.push({ t: 0, data: chatChunk({ finish: 'stop' }) }, { t: 0, data: '[DONE]' });
    r = await rig({ script: lines });
  });
  afterAll(async () => {
    await r?.close();
  });

  test('responses.stream(): every delta, the .done events and the final response carry the whole text', async () => {
    expect(JSON.stringify(text).length).toBeGreaterThan(2 * 32 * 1024);
    const stream = openaiClient(r!.gw.url).responses.stream({ model: 'm', input: 'hi' });
    const deltas: string[] = [];
    const done: string[] = [];
    for await (const ev of stream) {
      if (ev.type === 'response.output_text.delta') deltas.push(ev.delta);
      else if (ev.type === 'response.output_text.done') done.push(ev.text);
      else if (ev.type === 'response.content_part.done' && ev.part.type === 'output_text') done.push(ev.part.text);
      else if (ev.type === 'response.output_item.done' && ev.item.type === 'message') done.push(ev.item.content.map((c) => (c.type === 'output_text' ? c.text : '')).join(''));
    }
    expect(deltas).toEqual(long);
    expect(done).toEqual([text, text, text]);
    const final = await stream.finalResponse();
    expect(final.status).toBe('completed');
    expect(final.output_text).toBe(text);
  });
});
