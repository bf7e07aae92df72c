/**
 * The two tools the example agents give the model: both read-only, so sluice starts them while
 * the model is still streaming. Swap in your own (`kind: 'write'` tools wait for the stream to end).
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { defineTool } from 'sluice';
import { z } from 'zod';

export function workspaceTools(root: string) {
  /** Resolve a model-supplied path inside `root`, refusing anything that escapes it. */
  const inside = (p: string): string => {
    const full = path.resolve(root, p);
    if (full !== root && !full.startsWith(root + path.sep)) throw new Error(`${p} is outside the workspace`);
    return full;
  };
  return [
    defineTool({
      name: 'read_file',
      description: 'Read a UTF-8 text file of the workspace.',
      kind: 'read',
      input: z.object({ path: z.string() }),
      run: ({ path: p }, { signal }) => fs.readFile(inside(p), { encoding: 'utf8', signal }),
    }),
    defineTool({
      name: 'list_dir',
      description: 'List the entries of a workspace directory.',
      kind: 'read',
      input: z.object({ path: z.string().default('.') }),
      run: async ({ path: p }) => (await fs.readdir(inside(p))).sort().join('\n'),
    }),
  ];
}
