/**
 * `--parser <family>`: a backend without a server-side tool parser streams raw model text; the
 * gateway parses tool-call markup with src/parsers and releases each call at its closing marker.
 */
import { loadTextAdapterFactory } from '../../src/gateway/server';
import { startGateway } from '../../src/gateway/server';
import { Logger } from '../../src/gateway/log';
import { chatChunk, Gate, type ScriptLine } from '../../src/gateway/scripted';
import { Collector, READ_FILE_TOOL, rig, type Rig, toolBlocks } from './helpers';

const factory = loadTextAdapterFactory();
const d = factory ? describe : describe.skip;
if (!factory) process.stderr.write('[sluice tests] src/parsers createTextAdapter not available: gateway --parser tests SKIPPED\n');

d('gateway with --parser hermes', () => {
  let r: Rig | undefined;
  afterEach(async () => {
    await r?.close();
    r = undefined;
  });

  test('the first call is released at its closing marker while the upstream is held', async () => {
    const gate = new Gate();
    const script: ScriptLine[] = [
      { t: 0, data: chatChunk({ content: 'Reading both.\n<tool_' }) },
      { t: 1, data: chatChunk({ content: 'call>\n{"name": "read_file", "arguments": {"path": ' }) },
      { t: 2, data: chatChunk({ content: '"/a"}}\n</tool_call>' }) },
      { t: 3, gate: true },
      { t: 3, data: chatChunk({ content: '\n<tool_call>\n{"name": "read_file", "arguments": {"path": "/b"}}\n</tool_call>' }) },
      { t: 4, data: chatChunk({ finish: 'stop' }) },
      { t: 4, data: '[DONE]' },
    ];
    r = await rig({ script, gate }, { format: 'text:hermes', textAdapter: factory! });
    const c = new Collector(await r.client.messages.create({ model: 'm', max_tokens: 64, messages: [{ role: 'user', content: 'go' }], tools: [READ_FILE_TOOL], stream: true }));
    await c.until((e) => e.type === 'content_block_stop' && e.index === 1);
    expect(gate.released).toBe(false);
    expect(toolBlocks(c.events).map((b) => JSON.parse(b.json))).toEqual([{ path: '/a' }]);
    gate.release();
    await c.done;
    expect(c.error).toBeUndefined();
    const blocks = toolBlocks(c.events);
    expect(blocks.map((b) => [b.name, JSON.parse(b.json)])).toEqual([
      ['read_file', { path: '/a' }],
      ['read_file', { path: '/b' }],
    ]);
    const text = c.events.flatMap((e) => (e.type === 'content_block_delta' && e.delta.type === 'text_delta' ? [e.delta.text] : [])).join('');
    expect(text).not.toContain('tool_call');
    const md = c.events.find((e) => e.type === 'message_delta');
    expect(md?.type === 'message_delta' && md.delta.stop_reason).toBe('tool_use');
  });

  test('an unknown family fails at start, not per request', async () => {
    await expect(startGateway({ upstream: 'http://127.0.0.1:9/v1', format: 'text:no-such-family', textAdapter: factory!, logger: new Logger('silent') })).rejects.toThrow();
  });
});
