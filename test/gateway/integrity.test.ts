/**
 * Stream integrity on the gateway (SPEC §12, issue 28): a backend whose stream ends cleanly before
 * its finish reaches the client as the inbound API's error frame — Messages `event: error` with an
 * `api_error` saying the backend stream ended early, Chat an error chunk, Responses
 * `response.failed` — never a successful end; a unary request answers 502; a call released before
 * the cut stays released; counted in the metrics and in the `turn` log record's `backendEnd`.
 */
import { Logger, turnLogObserver } from '../../src/gateway/log';
import { chatChunk, type ScriptLine, type ScriptedUpstreamOptions } from '../../src/gateway/scripted';
import { rawRequest, READ_FILE_TOOL, READ_FILE_CHAT_TOOL, READ_FILE_RESPONSES_TOOL, type Rig, rig as baseRig, sseFrames } from './helpers';

/** The turn records of the current rig (the `turn` log observer writes them). */
let turns: Record<string, unknown>[] = [];
function rig(up: ScriptedUpstreamOptions): Promise<Rig> {
  turns = [];
  const logger = new Logger('info', (rec) => turns.push(rec));
  return baseRig(up, { observer: turnLogObserver(logger) });
}

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

/** A text delta, one complete call (released before the cut), a second call cut mid-argument, then a clean close. */
const CUT: ScriptLine[] = [
  { t: 0, data: chatChunk({ content: 'Reading.' }) },
  { t: 0, data: chatChunk({ tool: { index: 0, id: 'call_a', name: 'read_file', args: '{"path":"/a"}' } }) },
  { t: 0, data: chatChunk({ tool: { index: 1, id: 'call_b', name: 'read_file', args: '{"path":"/b' } }) },
];
/** Every call complete, no finish_reason, but `[DONE]`: still cut (`[DONE]` alone is not enough). */
const DONE_ONLY: ScriptLine[] = [
  { t: 0, data: chatChunk({ tool: { index: 0, id: 'call_a', name: 'read_file', args: '{"path":"/a"}' } }) },
  { t: 0, data: '[DONE]' },
];

const MESSAGES = { model: 'm', max_tokens: 100, messages: [{ role: 'user', content: 'go' }], tools: [READ_FILE_TOOL] };
const CHAT = { model: 'm', messages: [{ role: 'user', content: 'go' }], tools: [READ_FILE_CHAT_TOOL] };
const RESPONSES = { model: 'm', input: 'go', tools: [READ_FILE_RESPONSES_TOOL] };

function turnRecord(_rg: Rig): Record<string, unknown> | undefined {
  return turns.find((l) => l.msg === 'turn');
}

async function backendEnds(rg: Rig): Promise<string> {
  const m = await rg.gw.metrics?.registry.metrics();
  return (m ?? '').split('\n').filter((l) => l.startsWith('sluice_gateway_backend_stream_ends_total{')).join('\n');
}

describe.each([
  ['cut mid-argument', CUT],
  ['[DONE] without finish_reason', DONE_ONLY],
] as const)('a backend stream that closes cleanly before its finish (%s)', (_name, script) => {
  test('/v1/messages stream: the released call stays, then event: error (api_error, "backend stream ended early"), no message_stop', async () => {
    r = await rig({ script });
    const res = await rawRequest(r.gw.url, { path: '/v1/messages', body: JSON.stringify({ ...MESSAGES, stream: true }) });
    expect(res.status).toBe(200);
    const frames = sseFrames(res.text);
    const events = frames.map((f) => f.event);
    expect(events).not.toContain('message_stop');
    expect(events).not.toContain('message_delta');
    expect(events[events.length - 1]).toBe('error');
    expect(frames[frames.length - 1]!.data).toMatchObject({ type: 'error', error: { type: 'api_error', message: expect.stringContaining('the backend stream ended early') } });
    // The complete call was released before the cut and stays released.
    const started = frames.filter((f) => f.event === 'content_block_start').map((f) => (f.data as { content_block: { type: string; id?: string } }).content_block);
    expect(started.filter((b) => b.type === 'tool_use')).toHaveLength(1);
    expect(turnRecord(r)).toMatchObject({ backendEnd: 'truncated', status: 200 });
    expect(await backendEnds(r)).toContain('end="truncated"} 1');
  });

  test('/v1/chat/completions stream: an error chunk, no finish_reason chunk, no [DONE] success', async () => {
    r = await rig({ script });
    const res = await rawRequest(r.gw.url, { path: '/v1/chat/completions', body: JSON.stringify({ ...CHAT, stream: true }) });
    expect(res.status).toBe(200);
    const datas = res.text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6));
    const json = datas.filter((d) => d !== '[DONE]').map((d) => JSON.parse(d) as Record<string, unknown>);
    expect(json.some((c) => (c.choices as { finish_reason?: string | null }[] | undefined)?.some((ch) => ch.finish_reason))).toBe(false);
    const last = json[json.length - 1]!;
    expect(last).toMatchObject({ error: { message: expect.stringContaining('the backend stream ended early') } });
    expect(turnRecord(r)).toMatchObject({ backendEnd: 'truncated' });
  });

  test('/v1/responses stream: response.failed, never response.completed', async () => {
    r = await rig({ script });
    const res = await rawRequest(r.gw.url, { path: '/v1/responses', body: JSON.stringify({ ...RESPONSES, stream: true }) });
    expect(res.status).toBe(200);
    const events = sseFrames(res.text).map((f) => f.event);
    expect(events).not.toContain('response.completed');
    expect(events[events.length - 1]).toBe('response.failed');
    const failed = sseFrames(res.text).pop()!.data as { response: { error: { message: string } } };
    expect(failed.response.error.message).toContain('the backend stream ended early');
    expect(turnRecord(r)).toMatchObject({ backendEnd: 'truncated' });
  });

  test.each([
    ['/v1/messages', MESSAGES],
    ['/v1/chat/completions', CHAT],
    ['/v1/responses', RESPONSES],
  ] as const)('%s unary: 502', async (path, body) => {
    r = await rig({ script });
    const res = await rawRequest(r.gw.url, { path, body: JSON.stringify(body) });
    expect(res.status).toBe(502);
    expect(res.text).toContain('the backend stream ended early');
    expect(turnRecord(r)).toMatchObject({ backendEnd: 'truncated', status: 502 });
  });
});

describe('backendEnd on the turn record for the other endings', () => {
  test('a finished stream: finished', async () => {
    r = await rig({ script: [{ t: 0, data: chatChunk({ content: 'hi' }) }, { t: 0, data: chatChunk({ finish: 'stop' }) }] });
    const res = await rawRequest(r.gw.url, { path: '/v1/messages', body: JSON.stringify({ ...MESSAGES, stream: true }) });
    expect(sseFrames(res.text).map((f) => f.event)).toContain('message_stop');
    expect(turnRecord(r)).toMatchObject({ backendEnd: 'finished' });
    expect(await backendEnds(r)).toContain('end="finished"} 1');
  });

  test('a reset mid-stream: error', async () => {
    r = await rig({ script: [{ t: 0, data: chatChunk({ content: 'hi' }) }, { t: 100, reset: true }] });
    await rawRequest(r.gw.url, { path: '/v1/messages', body: JSON.stringify({ ...MESSAGES, stream: true }) });
    expect(turnRecord(r)).toMatchObject({ backendEnd: 'error' });
  });
});
