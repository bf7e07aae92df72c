import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { analyzeTrace, markdownTable, run } from '../../src/cli/analyze';
import { synthesizeTrace } from '../../src/trace/synth';
import { CODING_TURN } from '../../scripts/make-examples';

async function cli(argv: string[]): Promise<{ code: number; out: string }> {
  const chunks: string[] = [];
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((c: string | Uint8Array) => {
    chunks.push(typeof c === 'string' ? c : Buffer.from(c).toString('utf8'));
    return true;
  });
  try {
    return { code: await run(argv), out: chunks.join('') };
  } finally {
    spy.mockRestore();
  }
}

describe('sluice analyze', () => {
  it('reports each call’s head start before the end of the stream and the time saved (coding turn)', async () => {
    for (const format of ['anthropic', 'openai-chat', 'openai-responses', 'gemini'] as const) {
      const a = await analyzeTrace(synthesizeTrace(format, CODING_TURN));
      expect(a.streamEndMs).toBe(5000);
      expect(a.calls.map((c) => c.headStartMs)).toEqual([4000, 3000, 2000, 1000]);
      expect(a.calls.map((c) => c.headStartShare)).toEqual([0.8, 0.6, 0.4, 0.2]);
      expect(a.postStreamMs).toBe(8500);
      expect(a.turnDoneMs).toBe(6500);
      expect(a.savedMs).toBe(2000);
      expect(a.tools).toBe('trace');
      expect(a.timing).toBe('timed');
      // Chunks after completion: later chunks exist for every call but the last one's are few.
      expect(a.calls[0]!.chunksAfter!).toBeGreaterThan(a.calls[3]!.chunksAfter!);
    }
  });

  it('assumes read-only tools of --tool-ms when the trace has no tool specs', async () => {
    const trace = synthesizeTrace('anthropic', { ...CODING_TURN, tools: undefined });
    const a = await analyzeTrace(trace, { toolMs: 500 });
    expect(a.tools).toBe('assumed read 500 ms');
    // Every call is a 500 ms read: the last one completes at 4,000 → done 4,500, but the stream ends at 5,000.
    expect(a.turnDoneMs).toBe(5000);
    expect(a.postStreamMs).toBe(5500);
    expect(a.savedMs).toBe(500);
  });

  it('reads directories, untimed recordings and Dynamo raw JSON; a bad input is a row, not a crash', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-analyze-'));
    try {
      const sse =
        'event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"x","usage":{"input_tokens":1,"output_tokens":1}}}\n\n' +
        'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"read_file","input":{}}}\n\n' +
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\\"path\\":\\"a\\"}"}}\n\n' +
        'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n' +
        'event: content_block_start\ndata: {"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}\n\n' +
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"done"}}\n\n' +
        'event: content_block_stop\ndata: {"type":"content_block_stop","index":1}\n\n' +
        'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}}\n\n' +
        'event: message_stop\ndata: {"type":"message_stop"}\n\n';
      fs.writeFileSync(path.join(dir, 'a.sse'), sse);
      fs.writeFileSync(path.join(dir, 'b.json'), JSON.stringify({ input_stream: [{ data: { choices: [{ index: 0, delta: { content: 'hi' } }] } }] }));
      fs.writeFileSync(path.join(dir, 'c.jsonl'), 'not json at all\n');
      fs.writeFileSync(path.join(dir, 'notes.md'), '# ignored');
      const { code, out } = await cli([dir, '--json', '--pace', '20']);
      // c.jsonl cannot be analyzed: its row says so, and the exit status is 1 (issue 11).
      expect(code).toBe(1);
      const rows = out.trim().split('\n').map((l) => JSON.parse(l) as { file: string; error?: string; calls: { headStartMs: number; chunksAfter: number; completeMs?: number }[]; timing: string });
      expect(rows.map((r) => path.basename(r.file))).toEqual(['a.sse', 'b.json', 'c.jsonl']);
      expect(rows[0]!.timing).toBe('paced 20 ms');
      // 9 payloads at t = 0, 20 … 160 ms. The call is complete when its JSON closes (3rd payload,
      // t = 40) or at its content_block_stop (t = 60), depending on the completion policy; either
      // way the head start runs to the last payload and counts the payloads after completion.
      const c0 = rows[0]!.calls[0]! as { headStartMs: number; chunksAfter: number; completeMs?: number };
      expect([40, 60]).toContain(c0.completeMs);
      expect(c0.headStartMs).toBe(160 - c0.completeMs!);
      expect(c0.chunksAfter).toBe((160 - c0.completeMs!) / 20);
      expect(rows[1]!.error).toBeUndefined();
      expect(rows[1]!.calls).toEqual([]);
      expect(rows[2]!.error).toMatch(/JSON|SSE|format/);
      const md = markdownTable(rows as never, dir);
      expect(md.split('\n')[2]).toMatch(/^\| `a.sse` \| anthropic \| 1 \|/);
      expect(md).toContain('cannot analyze');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('needs an input and rejects unknown options', async () => {
    await expect(cli([])).rejects.toThrow(/at least one/);
    await expect(cli(['x', '--nope'])).rejects.toThrow(/unknown option/);
    await expect(cli(['/definitely/not/here'])).rejects.toThrow(/no such file/);
  });
});
