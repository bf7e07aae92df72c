/**
 * Real tools on a workspace directory for the journal tests and the crash child: `read_file`
 * (safe), `edit_file` (unsafe, writes a file; its reconcile hook checks whether the file already
 * has the text) and `bump` (unsafe, appends the call id to `counter.txt`: the proof that no
 * unsafe call ran twice). Every run appends `<tool> <call id>` to `runs.log`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { withDurability } from '../../src/engine/resume';
import { type AnyTool, defineTool } from '../../src/execute/tools';

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    });
  });

export function workspaceTools(dir: string, opts: { ms?: number } = {}): AnyTool[] {
  const ms = opts.ms ?? 10;
  const log = (tool: string, id: string) => fs.appendFileSync(path.join(dir, 'runs.log'), `${tool} ${id}\n`);
  const read = defineTool({
    name: 'read_file',
    kind: 'read',
    input: z.object({ path: z.string() }),
    run: async ({ path: p }, { signal, callId }) => {
      log('read_file', callId);
      await sleep(ms, signal);
      return fs.readFileSync(path.join(dir, p), 'utf8');
    },
  });
  const edit = withDurability(
    defineTool({
      name: 'edit_file',
      kind: 'edit',
      input: z.object({ path: z.string(), text: z.string() }),
      run: async ({ path: p, text }, { callId }) => {
        log('edit_file', callId);
        await sleep(ms);
        fs.writeFileSync(path.join(dir, p), text);
        await sleep(ms);
        return `wrote ${text.length} chars to ${p}`;
      },
    }),
    {
      reconcile: ({ input }) => {
        const file = path.join(dir, String(input.path));
        const has = fs.existsSync(file) && fs.readFileSync(file, 'utf8') === String(input.text);
        return has ? { status: 'done', content: `wrote ${String(input.text).length} chars to ${String(input.path)}` } : { status: 'not-done' };
      },
    },
  );
  const bump = defineTool({
    name: 'bump',
    kind: 'other',
    input: z.object({ label: z.string() }),
    run: async ({ label }, { callId }) => {
      log('bump', callId);
      await sleep(ms);
      fs.appendFileSync(path.join(dir, 'counter.txt'), `${callId}\n`);
      await sleep(ms);
      return `bumped ${label}`;
    },
  });
  return [read, edit, bump];
}

export function seedWorkspace(dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'a.txt'), 'alpha\n');
  fs.writeFileSync(path.join(dir, 'b.txt'), 'beta\n');
}

/** Lines of a workspace file (missing → []). */
export function lines(dir: string, file: string): string[] {
  const p = path.join(dir, file);
  return fs.existsSync(p) ? fs.readFileSync(p, 'utf8').split('\n').filter(Boolean) : [];
}

export interface ScriptCall {
  name: string;
  args: Record<string, unknown>;
}

/** The crash suite's turn: two safe reads, an edit, two bumps, a read after the edit. */
export const CRASH_TURN: ScriptCall[] = [
  { name: 'read_file', args: { path: 'a.txt' } },
  { name: 'read_file', args: { path: 'b.txt' } },
  { name: 'edit_file', args: { path: 'a.txt', text: 'alpha, edited\n' } },
  { name: 'bump', args: { label: 'first' } },
  { name: 'bump', args: { label: 'second' } },
  { name: 'read_file', args: { path: 'a.txt' } },
];

/** OpenAI-chat SDK chunks for `calls`, each written in two fragments, with `gapMs` between chunks. */
export async function* chatStream(calls: ScriptCall[], gapMs = 3): AsyncGenerator<unknown> {
  const base = { id: 'x', object: 'chat.completion.chunk', created: 0, model: 'm' };
  const chunk = (delta: unknown, finish_reason: string | null = null) => ({ ...base, choices: [{ index: 0, delta, finish_reason }] });
  yield chunk({ role: 'assistant', content: 'Let me look. ' });
  for (let i = 0; i < calls.length; i++) {
    const c = calls[i]!;
    const json = JSON.stringify(c.args);
    const mid = Math.floor(json.length / 2);
    await sleep(gapMs);
    yield chunk({ tool_calls: [{ index: i, id: `call_${i}`, type: 'function', function: { name: c.name, arguments: '' } }] });
    await sleep(gapMs);
    yield chunk({ tool_calls: [{ index: i, function: { arguments: json.slice(0, mid) } }] });
    await sleep(gapMs);
    yield chunk({ tool_calls: [{ index: i, function: { arguments: json.slice(mid) } }] });
  }
  await sleep(gapMs);
  yield chunk({}, 'tool_calls');
  yield '[DONE]';
}
