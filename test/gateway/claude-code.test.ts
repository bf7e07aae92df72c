/**
 * Opt-in: the real Claude Code CLI against the gateway, fully offline.
 *
 *     SLUICE_CLAUDE_CODE=1 npx jest test/gateway/claude-code.test.ts
 *
 * The scripted upstream plays a two-request turn: the model calls `Read` on a file in a scratch
 * workspace, Claude Code runs the real tool and sends the result back, the model answers. The
 * CLI binary is taken from `SLUICE_CLAUDE_BIN`, else `<SLUICE_CLAUDE_DIR or $TMPDIR/sluice-claude-code>
 * /node_modules/.bin/claude`; when missing it is installed there once with
 * `npm install --prefix <dir> @anthropic-ai/claude-code` (the only step that needs the network;
 * it is never added to this repository's dependencies).
 *
 * The malformed-call tests play a turn whose `Read` call is cut off while the backend still says
 * `tool_calls`: under the default (`pass`) Claude Code gets the call with the marker input, its own
 * input validation rejects it and the error goes back to the model in the next request; under
 * `drop` it gets the text marker and the turn ends with it.
 */
import { type ChildProcess, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { chatChunk, type RecordedRequest, type ScriptLine, turnScript } from '../../src/gateway/scripted';
import { rig, type Rig, runCli, spawnServe } from './helpers';

const enabled = process.env.SLUICE_CLAUDE_CODE === '1';
const d = enabled ? describe : describe.skip;
if (!enabled) process.stderr.write('[sluice tests] Claude Code test skipped (set SLUICE_CLAUDE_CODE=1 to run it)\n');

function claudeBin(): string {
  if (process.env.SLUICE_CLAUDE_BIN) return process.env.SLUICE_CLAUDE_BIN;
  const dir = process.env.SLUICE_CLAUDE_DIR ?? path.join(os.tmpdir(), 'sluice-claude-code');
  const bin = path.join(dir, 'node_modules', '.bin', 'claude');
  if (!fs.existsSync(bin)) {
    fs.mkdirSync(dir, { recursive: true });
    execFileSync('npm', ['install', '--prefix', dir, '--no-audit', '--no-fund', '@anthropic-ai/claude-code'], { stdio: 'inherit', timeout: 300_000 });
  }
  return bin;
}

interface ChatMsg {
  role: string;
  content?: unknown;
  tool_call_id?: string;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
}

function messagesOf(req: RecordedRequest): ChatMsg[] {
  return (req.body as { messages: ChatMsg[] }).messages;
}

d('Claude Code CLI through the gateway (offline)', () => {
  let r: Rig | undefined;
  let tmp: string | undefined;
  afterAll(async () => {
    await r?.close();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('a turn that reads a file and then answers', async () => {
    const bin = claudeBin();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-cc-'));
    const work = path.join(tmp, 'work');
    const home = path.join(tmp, 'home');
    fs.mkdirSync(work);
    fs.mkdirSync(home);
    const file = path.join(work, 'hello.txt');
    fs.writeFileSync(file, 'The secret word is pelican.\n');

    let toolIds = 0;
    r = await rig(
      {
        script: (req) => {
          const msgs = messagesOf(req);
          const tools = ((req.body as { tools?: { function: { name: string } }[] }).tools ?? []).map((t) => t.function.name);
          if (msgs.some((m) => m.role === 'tool')) return turnScript({ text: ['The secret word ', 'is pelican.'], stepMs: 2 });
          if (tools.includes('Read'))
            return turnScript({
              text: ['Reading the file.'],
              calls: [{ id: 'call_read', name: 'Read', args: ['{"file_path":', JSON.stringify(file), '}'] }],
              stepMs: 2,
            });
          return turnScript({ text: ['ok'] }); // any side request (titles, summaries)
        },
      },
      { idGenerator: (kind) => (kind === 'tool_use' ? `toolu_cc${++toolIds}` : `msg_cc${Date.now()}`) },
    );

    const t0 = Date.now();
    const { code, out } = await runClaude(bin, r.gw.url, work, home, 'Read hello.txt and tell me the secret word.');
    process.stderr.write(`[claude-code] exit ${code} in ${Date.now() - t0} ms, ${r.up.requests.length} upstream requests\n`);

    expect(code).toBe(0);
    const result = JSON.parse(out) as { is_error: boolean; result: string; num_turns: number };
    expect(result.is_error).toBe(false);
    expect(result.result).toContain('pelican');
    // The second model request carries the real Read result under the id the gateway minted.
    const followUp = r.up.requests.find((q) => messagesOf(q).some((m) => m.role === 'tool'));
    expect(followUp).toBeDefined();
    const msgs = messagesOf(followUp!);
    const call = msgs.find((m) => m.tool_calls)?.tool_calls?.[0];
    expect(call).toMatchObject({ id: 'toolu_cc1', function: { name: 'Read' } });
    expect(JSON.parse(call!.function.arguments)).toEqual({ file_path: file });
    const toolMsg = msgs.find((m) => m.role === 'tool')!;
    expect(toolMsg.tool_call_id).toBe('toolu_cc1');
    expect(String(toolMsg.content)).toContain('The secret word is pelican.');
  }, 400_000);
});

/** The environment for an offline Claude Code run against `gwUrl`. */
function claudeEnv(gwUrl: string, home: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: home,
    ANTHROPIC_BASE_URL: gwUrl,
    ANTHROPIC_API_KEY: 'sk-dummy-offline',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
  };
}

/** Run `claude -p PROMPT` (Read allowed) against a gateway; resolves the exit code and output. */
function runClaude(bin: string, gwUrl: string, work: string, home: string, prompt: string, format = 'json'): ReturnType<typeof runCli> {
  return runCli(bin, ['-p', prompt, '--allowedTools', 'Read', '--output-format', format, ...(format === 'stream-json' ? ['--verbose'] : [])], {
    cwd: work,
    env: claudeEnv(gwUrl, home),
    tag: 'claude-code',
  });
}

d('Claude Code and a malformed call (offline)', () => {
  let r: Rig | undefined;
  let tmp: string | undefined;
  afterEach(async () => {
    await r?.close();
    r = undefined;
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  const cut = (file: string): ScriptLine[] => [
    { t: 0, data: chatChunk({ content: 'Reading the file.' }) },
    { t: 2, data: chatChunk({ tool: { index: 0, id: 'call_cut', name: 'Read', args: `{"file_path": ${JSON.stringify(file).slice(0, -4)}` } }) },
    { t: 4, data: chatChunk({ finish: 'tool_calls' }) },
    { t: 4, data: chatChunk({ usage: { prompt_tokens: 10, completion_tokens: 5 } }) },
    { t: 4, data: '[DONE]' },
  ];

  for (const mode of ['pass', 'drop'] as const) {
    test(`--malformed-calls ${mode}: what Claude Code sees`, async () => {
      const bin = claudeBin();
      tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-cc-'));
      const work = path.join(tmp, 'work');
      const home = path.join(tmp, 'home');
      fs.mkdirSync(work);
      fs.mkdirSync(home);
      const file = path.join(work, 'hello.txt');
      fs.writeFileSync(file, 'The secret word is pelican.\n');
      r = await rig(
        {
          script: (req) => {
            const msgs = messagesOf(req);
            const tools = ((req.body as { tools?: { function: { name: string } }[] }).tools ?? []).map((t) => t.function.name);
            if (msgs.some((m) => m.role === 'tool')) return turnScript({ text: ['I see the call failed; stopping here.'], stepMs: 2 });
            if (tools.includes('Read')) return cut(file);
            return turnScript({ text: ['ok'] });
          },
        },
        { malformedCalls: mode },
      );
      const res = await runClaude(bin, r.gw.url, work, home, 'Read hello.txt and tell me the secret word.');
      expect(res.code).toBe(0);
      const result = JSON.parse(res.out) as { is_error: boolean; result: string };
      const followUp = r.up.requests.find((q) => messagesOf(q).some((m) => m.role === 'tool'));
      const warned = r.logs.filter((l) => l.msg === 'malformed_call');
      expect(warned).toEqual([expect.objectContaining({ level: 'warn', name: 'Read', action: mode })]);
      if (mode === 'pass') {
        // Claude Code's own input validation answered the model: the error is in the next request.
        expect(followUp).toBeDefined();
        const toolMsg = messagesOf(followUp!).find((m) => m.role === 'tool')!;
        process.stderr.write(`[claude-code] tool result for the marker call: ${String(toolMsg.content).slice(0, 300)}\n`);
        expect(String(toolMsg.content)).toMatch(/error/i);
        expect(result.result).toContain('stopping here');
      } else {
        expect(followUp).toBeUndefined();
        process.stderr.write(`[claude-code] result under drop: ${result.result.slice(0, 300)}\n`);
        expect(result.result).toContain('[sluice: dropped tool call "Read"');
      }
    }, 400_000);
  }
});

/** A two-attempt OpenAI Chat trace: two Read calls, then a 3 s hold before the finish; then the answer. */
function readTrace(files: string[]): string {
  const lines: unknown[] = [{ sluice: 'trace', format: 'openai-chat' }];
  let t = 0;
  const add = (data: unknown, dt = 20): void => {
    lines.push({ t, data });
    t += dt;
  };
  add(chatChunk({ content: 'Reading both files.' }));
  files.forEach((file, index) => {
    const args = JSON.stringify({ file_path: file });
    add(chatChunk({ tool: { index, id: `call_${index}`, name: 'Read', args: args.slice(0, 10) } }));
    add(chatChunk({ tool: { index, args: args.slice(10) } }), index === files.length - 1 ? 3000 : 20);
  });
  add(chatChunk({ finish: 'tool_calls' }));
  add(chatChunk({ usage: { prompt_tokens: 10, completion_tokens: 5 } }));
  add('[DONE]', 10);
  lines.push({ t, attempt: 2 });
  add(chatChunk({ content: 'The secret words are pelican and heron.' }));
  add(chatChunk({ finish: 'stop' }));
  add('[DONE]');
  return lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
}

d('Claude Code against sluice serve --upstream scripted: (offline, multi-call trace)', () => {
  let tmp: string | undefined;
  let gateway: ChildProcess | undefined;
  afterAll(() => {
    gateway?.kill('SIGTERM');
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('the first Read runs before the stream ends', async () => {
    const bin = claudeBin();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-cc-'));
    const work = path.join(tmp, 'work');
    const home = path.join(tmp, 'home');
    fs.mkdirSync(work);
    fs.mkdirSync(home);
    const files = [path.join(work, 'a.txt'), path.join(work, 'b.txt')];
    fs.writeFileSync(files[0]!, 'The first secret word is pelican.\n');
    fs.writeFileSync(files[1]!, 'The second secret word is heron.\n');
    const tracePath = path.join(tmp, 'read.trace.jsonl');
    fs.writeFileSync(tracePath, readTrace(files));
    const gw = await spawnServe(['--upstream', `scripted:${tracePath}`, '--port', '0']);
    gateway = gw.child;
    expect(gw.url).toBeDefined();
    const { code, lines: out } = await runClaude(bin, gw.url!, work, home, 'Read a.txt and b.txt and tell me the secret words.', 'stream-json');
    expect(code).toBe(0);
    // stream-json: a "user" message carrying the first Read's tool_result means the tool ran.
    const firstResult = out.find((l) => l.text.includes('"tool_result"') && l.text.includes('pelican'));
    expect(firstResult).toBeDefined();
    const modelEnds = gw.lines.filter((l) => l.text.includes('"msg":"request"') && l.text.includes('"toolUses":2'));
    expect(modelEnds.length).toBeGreaterThan(0);
    const headStartMs = modelEnds[0]!.at - firstResult!.at;
    process.stderr.write(`[claude-code] first Read result ${headStartMs} ms before the first stream ended\n`);
    expect(headStartMs).toBeGreaterThan(1000);
    const final = out.map((l) => l.text).find((t) => t.includes('"type":"result"'));
    expect(final).toContain('pelican');
  }, 400_000);
});

d('Claude Code through the gateway to an Anthropic backend: prompt caching survives', () => {
  let r: Rig | undefined;
  let tmp: string | undefined;
  afterAll(async () => {
    await r?.close();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('the cache_control breakpoints Claude Code sets reach the backend', async () => {
    const bin = claudeBin();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-cc-cache-'));
    const work = path.join(tmp, 'work');
    const home = path.join(tmp, 'home');
    fs.mkdirSync(work);
    fs.mkdirSync(home);
    const answer = [
      { type: 'message_start', message: { id: 'msg_up', type: 'message', role: 'assistant', model: 'up', content: [], stop_reason: null, usage: { input_tokens: 10, output_tokens: 1 } } },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'cached hello' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } },
      { type: 'message_stop' },
    ].map((data) => ({ t: 0, data }));
    r = await rig({ script: answer }, { upstreamFormat: 'anthropic' });
    const { code, out } = await runClaude(bin, r.gw.url, work, home, 'Say hello.');
    expect(code).toBe(0);
    expect((JSON.parse(out) as { result: string }).result).toContain('cached hello');
    // The main request (the one with tools): its breakpoints, as Claude Code placed them.
    const main = r.up.requests.find((q) => Array.isArray((q.body as { tools?: unknown[] }).tools) && (q.body as { tools: unknown[] }).tools.length > 0);
    expect(main).toBeDefined();
    const body = main!.body as { system?: unknown; messages: { content: unknown }[] };
    const marked = JSON.stringify(body).match(/"cache_control":\{[^}]*\}/g) ?? [];
    process.stderr.write(`[claude-code] ${marked.length} cache_control breakpoints reached the backend\n`);
    expect(marked.length).toBeGreaterThan(0);
    expect(Array.isArray(body.system)).toBe(true);
    expect(JSON.stringify(body.system)).toContain('cache_control');
  }, 400_000);
});
