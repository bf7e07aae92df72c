/**
 * Opt-in: the real Codex CLI (OpenAI Responses wire) against `sluice serve --upstream scripted:…`,
 * fully offline.
 *
 *     npm run test:codex        (SLUICE_CODEX=1 jest test/gateway/codex.test.ts)
 *
 * The gateway runs as a process serving a two-attempt trace (written here, OpenAI Chat format):
 * request 1 streams two `exec_command` calls (`cat hello.txt`, `ls -1`) and then stays open for
 * 3 s before it finishes; request 2 answers. Codex must start the first command before request 1's
 * stream ends (the gateway releases each call at its completion), read the real file, and answer.
 * The CLI binary is `SLUICE_CODEX_BIN`, else `<SLUICE_CODEX_DIR or $TMPDIR/sluice-codex>/node_modules/
 * .bin/codex`, installed there once with `npm install --prefix <dir> @openai/codex` (it brings its
 * native binary; the only step that needs the network; never added to this repository).
 *
 * The second test gives Codex an MCP server of our own (test/gateway/codex-mcp-server.cjs, stdio,
 * offline): Codex offers its tool inside a `namespace` group, the gateway flattens it for the
 * (in-process, scripted) chat backend, maps the backend's call back to `{name, namespace}`, Codex
 * runs the MCP tool, and the backend's second request must carry the tool's result.
 *
 * The last test runs `codex exec --output-schema`: Codex's `text.format` json_schema must reach the
 * chat backend as `response_format` and the JSON answer come back as Codex's final message.
 */
import { type ChildProcess, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startGateway } from '../../src/gateway/server';
import { Logger } from '../../src/gateway/log';
import { chatChunk, type RecordedRequest, startScriptedUpstream } from '../../src/gateway/scripted';
import { runCli, spawnServe } from './helpers';

const enabled = process.env.SLUICE_CODEX === '1';
const d = enabled ? describe : describe.skip;
if (!enabled) process.stderr.write('[sluice tests] Codex CLI test skipped (npm run test:codex to run it)\n');

function codexBin(): string {
  if (process.env.SLUICE_CODEX_BIN) return process.env.SLUICE_CODEX_BIN;
  const dir = process.env.SLUICE_CODEX_DIR ?? path.join(os.tmpdir(), 'sluice-codex');
  const bin = path.join(dir, 'node_modules', '.bin', 'codex');
  if (!fs.existsSync(bin)) {
    fs.mkdirSync(dir, { recursive: true });
    execFileSync('npm', ['install', '--prefix', dir, '--no-audit', '--no-fund', '@openai/codex'], { stdio: 'inherit', timeout: 300_000 });
  }
  return bin;
}

/** A two-attempt OpenAI Chat trace: two exec_command calls then a 3 s hold, then the answer. */
function codexTrace(): string {
  const chunk = (delta?: Record<string, unknown>, finish?: string, usage?: Record<string, number>): Record<string, unknown> => ({
    id: 'chatcmpl-trace',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'scripted',
    choices: delta || finish ? [{ index: 0, delta: delta ?? {}, finish_reason: finish ?? null }] : [],
    ...(usage ? { usage } : {}),
  });
  const lines: unknown[] = [{ sluice: 'trace', format: 'openai-chat' }];
  let t = 0;
  const add = (data: unknown, dt = 20): void => {
    lines.push({ t, data });
    t += dt;
  };
  add(chunk({ role: 'assistant', content: '' }));
  add(chunk({ content: 'Reading the file and listing the folder.' }));
  ['cat hello.txt', 'ls -1'].forEach((cmd, index) => {
    const args = JSON.stringify({ cmd });
    add(chunk({ tool_calls: [{ index, id: `call_${index}`, type: 'function', function: { name: 'exec_command', arguments: '' } }] }));
    add(chunk({ tool_calls: [{ index, function: { arguments: args.slice(0, 8) } }] }));
    add(chunk({ tool_calls: [{ index, function: { arguments: args.slice(8) } }] }), index === 1 ? 3000 : 20);
  });
  add(chunk(undefined, 'tool_calls'));
  add(chunk(undefined, undefined, { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 }));
  add('[DONE]', 10);
  lines.push({ t, attempt: 2 });
  add(chunk({ role: 'assistant', content: '' }));
  add(chunk({ content: 'The secret word is pelican.' }));
  add(chunk(undefined, 'stop'));
  add('[DONE]');
  return lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
}

d('Codex CLI through sluice serve --upstream scripted: (offline, Responses wire)', () => {
  let tmp: string | undefined;
  let gateway: ChildProcess | undefined;
  afterAll(() => {
    gateway?.kill('SIGTERM');
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('Codex starts the first command before the stream ends, reads the real file, and answers', async () => {
    const bin = codexBin();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-codex-'));
    const work = path.join(tmp, 'work');
    const home = path.join(tmp, 'home');
    fs.mkdirSync(work);
    fs.mkdirSync(path.join(home, '.codex'), { recursive: true });
    fs.writeFileSync(path.join(work, 'hello.txt'), 'The secret word is pelican.\n');
    const tracePath = path.join(tmp, 'codex.trace.jsonl');
    fs.writeFileSync(tracePath, codexTrace());

    // The gateway as a process, serving the trace.
    const gw = await spawnServe(['--upstream', `scripted:${tracePath}`, '--port', '0']);
    gateway = gw.child;
    expect(gw.url).toBeDefined();
    const url = gw.url!;
    fs.writeFileSync(
      path.join(home, '.codex', 'config.toml'),
      ['model = "m"', 'model_provider = "local"', '[model_providers.local]', 'name = "local"', `base_url = "${url}/v1"`, 'wire_api = "responses"', 'env_key = "LOCAL_KEY"', ''].join('\n'),
    );

    const { code, lines: out } = await runCli(bin, ['exec', '--json', '--skip-git-repo-check', 'Read hello.txt and tell me the secret word.'], {
      cwd: work,
      env: { PATH: process.env.PATH ?? '', HOME: home, LOCAL_KEY: 'offline-key' },
      tag: 'codex',
    });
    expect(code).toBe(0);

    const events = out.flatMap((l) => {
      try {
        return [{ at: l.at, ev: JSON.parse(l.text) as { type: string; item?: { type: string; command?: string; aggregated_output?: string; text?: string } } }];
      } catch {
        return [];
      }
    });
    const started = events.filter((e) => e.ev.type === 'item.started' && e.ev.item?.type === 'command_execution');
    // Both calls are released early and Codex runs them in parallel: their start order is a race.
    expect(started).toHaveLength(2);
    expect(started.map((e) => e.ev.item!.command)).toEqual(expect.arrayContaining([expect.stringContaining('cat hello.txt'), expect.stringContaining('ls -1')]));
    const read = events.find((e) => e.ev.type === 'item.completed' && e.ev.item?.command?.includes('cat hello.txt'));
    expect(read?.ev.item?.aggregated_output).toContain('pelican');
    const answer = events.filter((e) => e.ev.type === 'item.completed' && e.ev.item?.type === 'agent_message').pop();
    expect(answer?.ev.item?.text).toContain('pelican');
    // The gateway logs each request when its stream ends: the first command started before that.
    const firstEnd = gw.lines.find((l) => l.text.includes('"msg":"request"') && l.text.includes('/v1/responses'));
    expect(firstEnd).toBeDefined();
    const headStartMs = firstEnd!.at - started[0]!.at;
    process.stderr.write(`[codex] first command started ${headStartMs} ms before the first stream ended\n`);
    expect(headStartMs).toBeGreaterThan(1000);
  }, 400_000);
});

/**
 * Codex's home with a local provider at `url` and the word-book MCP server. `model` "m" is unknown
 * to Codex; a name it knows ("gpt-5.5") makes it defer MCP tools behind a client `tool_search`
 * and offer `apply_patch` as a freeform `custom` tool.
 */
function codexHome(tmp: string, url: string, model: string): string {
  const home = path.join(tmp, 'home');
  fs.mkdirSync(path.join(home, '.codex'), { recursive: true });
  const lines = [`model = "${model}"`, 'model_provider = "local"', '[model_providers.local]', 'name = "local"', `base_url = "${url}/v1"`, 'wire_api = "responses"', 'env_key = "LOCAL_KEY"'];
  // `required`: Codex waits for the server instead of leaving a still-starting one out of the
  // first request.
  lines.push('[mcp_servers.wordbook]', 'command = "node"', `args = [${JSON.stringify(path.join(__dirname, 'codex-mcp-server.cjs'))}]`, `cwd = ${JSON.stringify(path.resolve(__dirname, '../..'))}`, 'required = true');
  // Codex 0.171 defers MCP tools behind tool_search by default, which it offers only for models
  // it knows: with the model "m" they would not reach the model at all. Sent directly, they
  // arrive as a namespace group.
  if (model === 'm') lines.push('[features]', 'tool_search_always_defer_mcp_tools = false');
  fs.writeFileSync(path.join(home, '.codex', 'config.toml'), lines.join('\n') + '\n');
  return home;
}

/** The last tool message of a chat request (what the backend sees of a tool's result). */
function toolResult(req: RecordedRequest): string | undefined {
  const msgs = (req.body as { messages?: { role: string; content?: unknown }[] }).messages ?? [];
  const last = msgs[msgs.length - 1];
  return last?.role === 'tool' ? JSON.stringify(last.content) : undefined;
}

type CodexEvent = { type: string; item?: { type: string; server?: string; tool?: string; status?: string; text?: string; error?: unknown; changes?: unknown } };

function codexEvents(lines: { text: string }[]): CodexEvent[] {
  return lines.flatMap((l) => {
    try {
      return [JSON.parse(l.text) as CodexEvent];
    } catch {
      return [];
    }
  });
}

d('Codex CLI with an MCP server through the gateway (namespace tools)', () => {
  let tmp: string | undefined;
  afterAll(() => {
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('the namespaced MCP tool runs and its result reaches the model', async () => {
    const bin = codexBin();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-codex-mcp-'));
    const work = path.join(tmp, 'work');
    fs.mkdirSync(work);
    const up = await startScriptedUpstream({
      script: (req) => {
        const result = toolResult(req);
        if (result !== undefined) {
          const word = /albatross/.test(result) ? 'albatross' : 'nothing';
          return [{ t: 0, data: chatChunk({ content: `The word book says: ${word}.` }) }, { t: 5, data: chatChunk({ finish: 'stop' }) }, { t: 5, data: '[DONE]' }];
        }
        return [
          { t: 0, data: chatChunk({ content: 'Looking it up.' }) },
          { t: 5, data: chatChunk({ tool: { index: 0, id: 'call_up_1', name: 'mcp__wordbook__lookup_word', args: '{"key":"secret"}' } }) },
          { t: 10, data: chatChunk({ finish: 'tool_calls' }) },
          { t: 10, data: '[DONE]' },
        ];
      },
    });
    const gw = await startGateway({ upstream: up.url, logger: new Logger('warn', () => undefined), pingIntervalMs: 0 });
    try {
      const home = codexHome(tmp, gw.url, 'm');
      const { code, lines: out } = await runCli(bin, ['exec', '--json', '--skip-git-repo-check', 'Look up the secret word in the word book.'], {
        cwd: work,
        env: { PATH: process.env.PATH ?? '', HOME: home, LOCAL_KEY: 'offline-key' },
        tag: 'codex-mcp',
      });
      expect(code).toBe(0);
      // The backend was offered the flattened member and never a namespace group.
      const first = up.requests[0]!.body as { tools: { type: string; function: { name: string } }[] };
      expect(first.tools.map((t) => t.function.name)).toContain('mcp__wordbook__lookup_word');
      expect(first.tools.every((t) => t.type === 'function')).toBe(true);
      // Codex ran the MCP tool (its own event) and the backend's second request carried the result.
      const events = codexEvents(out);
      const mcpCall = events.find((e) => e.type === 'item.completed' && e.item?.type === 'mcp_tool_call');
      if (mcpCall?.item?.status !== 'completed') process.stderr.write(`[codex-mcp] MCP call: ${JSON.stringify(mcpCall?.item?.error ?? mcpCall?.item?.status)}\n`);
      expect(mcpCall?.item).toMatchObject({ server: 'wordbook', tool: 'lookup_word', status: 'completed' });
      expect(up.requests.map(toolResult).find((t) => t !== undefined)).toContain('the word for secret is albatross');
      const answer = events.filter((e) => e.type === 'item.completed' && e.item?.type === 'agent_message').pop();
      expect(answer?.item?.text).toBe('The word book says: albatross.');
    } finally {
      await gw.close();
      await up.close();
    }
  }, 300_000);
});

d('Codex CLI with a model it knows: tool_search, a deferred MCP tool and the freeform apply_patch', () => {
  let tmp: string | undefined;
  afterAll(() => {
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('search → load the namespace → call it → apply_patch writes a file → answer', async () => {
    const bin = codexBin();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-codex-search-'));
    const work = path.join(tmp, 'work');
    fs.mkdirSync(work);
    const call = (id: string, name: string, args: unknown) => [
      { t: 0, data: chatChunk({ tool: { index: 0, id, name, args: JSON.stringify(args) } }) },
      { t: 5, data: chatChunk({ finish: 'tool_calls' }) },
      { t: 5, data: '[DONE]' },
    ];
    const patch = '*** Begin Patch\n*** Add File: word.txt\n+albatross\n*** End Patch\n';
    const up = await startScriptedUpstream({
      script: (req) => {
        const result = toolResult(req);
        if (result === undefined) return call('call_s', 'tool_search', { query: 'word book lookup' });
        if (result.includes('loaded_tools')) return call('call_l', 'mcp__wordbook__lookup_word', { key: 'secret' });
        if (result.includes('albatross')) return call('call_p', 'apply_patch', { input: patch });
        return [{ t: 0, data: chatChunk({ content: 'Wrote the word to word.txt.' }) }, { t: 5, data: chatChunk({ finish: 'stop' }) }, { t: 5, data: '[DONE]' }];
      },
    });
    const gw = await startGateway({ upstream: up.url, logger: new Logger('warn', () => undefined), pingIntervalMs: 0 });
    try {
      const home = codexHome(tmp, gw.url, 'gpt-5.5');
      const { code, lines: out } = await runCli(bin, ['exec', '--json', '--skip-git-repo-check', '-s', 'workspace-write', 'Find the secret word in the word book and write it to word.txt.'], {
        cwd: work,
        env: { PATH: process.env.PATH ?? '', HOME: home, LOCAL_KEY: 'offline-key' },
        tag: 'codex-search',
      });
      expect(code).toBe(0);
      const names = (i: number) => (up.requests[i]!.body as { tools: { function: { name: string } }[] }).tools.map((t) => t.function.name);
      // The first request offers the search and apply_patch as functions, not the deferred MCP tool.
      expect(names(0)).toEqual(expect.arrayContaining(['tool_search', 'apply_patch']));
      expect(names(0)).not.toContain('mcp__wordbook__lookup_word');
      // After Codex's tool_search_output the loaded namespace is a function the backend can call.
      expect(names(1)).toContain('mcp__wordbook__lookup_word');
      const events = codexEvents(out);
      const mcpCall = events.find((e) => e.type === 'item.completed' && e.item?.type === 'mcp_tool_call');
      expect(mcpCall?.item).toMatchObject({ server: 'wordbook', tool: 'lookup_word', status: 'completed' });
      expect(fs.readFileSync(path.join(work, 'word.txt'), 'utf8').trim()).toBe('albatross');
      expect(up.requests).toHaveLength(4);
      const answer = events.filter((e) => e.type === 'item.completed' && e.item?.type === 'agent_message').pop();
      expect(answer?.item?.text).toBe('Wrote the word to word.txt.');
    } finally {
      await gw.close();
      await up.close();
    }
  }, 300_000);
});

d('Codex CLI exec --output-schema: the schema reaches a Chat backend as response_format', () => {
  let tmp: string | undefined;
  afterAll(() => {
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('the backend gets {type: json_schema, json_schema: {name, schema, strict}} and Codex prints the JSON answer', async () => {
    const bin = codexBin();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-codex-schema-'));
    const work = path.join(tmp, 'work');
    fs.mkdirSync(work);
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
    const schemaFile = path.join(tmp, 'schema.json');
    fs.writeFileSync(schemaFile, JSON.stringify(schema));
    const up = await startScriptedUpstream({ script: [{ t: 0, data: chatChunk({ content: '{"answer":"42"}' }) }, { t: 5, data: chatChunk({ finish: 'stop' }) }, { t: 5, data: '[DONE]' }] });
    const gw = await startGateway({ upstream: up.url, logger: new Logger('warn', () => undefined), pingIntervalMs: 0 });
    try {
      const home = codexHome(tmp, gw.url, 'm');
      const { code, lines: out } = await runCli(bin, ['exec', '--json', '--skip-git-repo-check', '--output-schema', schemaFile, 'What is the answer?'], {
        cwd: work,
        env: { PATH: process.env.PATH ?? '', HOME: home, LOCAL_KEY: 'offline-key' },
        tag: 'codex-schema',
      });
      expect(code).toBe(0);
      const sent = up.requests[0]!.body as { response_format?: { type: string; json_schema: { name: string; schema: unknown; strict?: boolean } } };
      expect(sent.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'codex_output_schema', schema, strict: true } });
      const answer = codexEvents(out).filter((e) => e.type === 'item.completed' && e.item?.type === 'agent_message').pop();
      expect(answer?.item?.text).toBe('{"answer":"42"}');
    } finally {
      await gw.close();
      await up.close();
    }
  }, 300_000);
});
